/* bundle.h: reading an incident bundle: a directory, an archive (tar, tgz,
 * zip, tar.zst, tar.xz, ...), a single compressed file, archives nested in
 * archives, and compressed members. Nothing is extracted to disk; each
 * regular file is handed to a callback as a stream of its decompressed
 * bytes, under a stable path. */
#ifndef IQ_BUNDLE_H
#define IQ_BUNDLE_H

#include <stdint.h>
#include <sys/types.h>

#include "../core/iq.h"

/* One file of the bundle, valid during the callback only. */
struct iq_member {
	/* Stable path: "<bundle name>!<entry>" for archives, one more "!" per
	 * nested archive ("b.tgz!nodes/a.tar.gz!var/log/kern.log"), and
	 * "<dir name>/<relative path>" for directories (the bundle's path as
	 * given instead of its name with iq_walk_opts.path_as_given). A compressed member
	 * keeps its name ("app.log.1.gz") while its bytes are decompressed. */
	const char *path;
	int64_t size;        /* bytes as stored in the archive, -1 unknown */
	int64_t mtime;       /* UTC ns of the last write, IQ_TIME_NONE unknown */
	int depth;           /* 0 for members of the outer bundle */
	void *impl;
};

/* Reads up to n decompressed bytes of m into buf. Returns the count, 0 at
 * the end, or a negative iq_err with d->msg saying what broke (a corrupt
 * or truncated member); bytes already returned stay valid. */
ssize_t iq_member_read(struct iq_member *m, void *buf, size_t n, struct iq_diag *d);

/* Whether a read of m stopped at a size limit (--max-member-bytes or
 * --max-bundle-bytes) rather than at the member's end; the walker has
 * reported the limit as a problem of m. */
int iq_member_cut(const struct iq_member *m);

/* Called for each regular file; a non-zero return stops the walk and is
 * returned by iq_bundle_walk. */
typedef int (*iq_member_fn)(struct iq_member *m, void *u);

/* What a problem cost the reading of the bundle. */
enum iq_problem_kind {
	IQ_PROBLEM_SKIPPED = 0, /* nothing of its data: a link not followed, a special file */
	IQ_PROBLEM_LOST,        /* bytes that could not be read: damaged, truncated, unreadable */
	IQ_PROBLEM_CUT,         /* bytes left unread at a limit (size, nesting depth) */
};

/* Called for what cannot be read: a corrupt archive, a symlink not
 * followed, a member over the size limit. path is the member (or bundle)
 * path; msg says what and why; kind is an iq_problem_kind. */
typedef void (*iq_problem_fn)(const char *path, const char *msg, int kind, void *u);

struct iq_walk_opts {
	int max_depth;            /* nested archives followed; default 8 */
	int64_t max_member_bytes; /* decompressed bytes per member; 0 = 8 GiB */
	int64_t max_total_bytes;  /* decompressed bytes in all; 0 = 64 GiB */
	iq_problem_fn problem;    /* may be NULL */
	/* Called every MiB or so with the bytes read of the bundle as stored
	 * (compressed), and its size (-1 unknown: a directory, a pipe); for a
	 * progress line. May be NULL. */
	void (*progress)(int64_t read, int64_t total, void *u);
	void *u;                  /* passed to the callbacks */
	/* Members' paths begin with the bundle's path as given (trailing
	 * slashes dropped) rather than its last component: `inquest sniff`
	 * tells two files named "messages" apart. */
	int path_as_given;
};

/* Walks the bundle at path ("-": stdin, named "stdin"; a pipe is streamed,
 * so a zip whose entries only its central directory describes is read as
 * far as its local headers go), calling fn for every regular file inside,
 * in archive order (directories in sorted name order). Returns 0 when the
 * bundle was walked (problems inside it go to opts->problem), IQ_ERR_INPUT
 * with d->msg when path cannot be opened or is neither a directory, an
 * archive nor a compressed file, or fn's non-zero result. */
int iq_bundle_walk(const char *path, const struct iq_walk_opts *opts,
		   iq_member_fn fn, struct iq_diag *d);

/* Splits a byte stream into lines. Feed it chunks; it calls fn for each
 * line (line end and a CR before it removed) with its 1-based number. A
 * line longer than max is cut: fn gets the first max bytes and truncated
 * set (IQ_LINE_CUT), the rest of that line is dropped. Runs of 8 NUL bytes
 * or more (the zeroed blocks a crash leaves in a file) are dropped and counted:
 * the text between them goes to fn piece by piece under the line's one
 * number, and a line of NULs alone once with n 0 and IQ_LINE_NUL. */
#define IQ_LINE_CUT 1
#define IQ_LINE_NUL 2
struct iq_lines {
	struct iq_buf buf;
	long lineno;
	size_t max;
	int dropping;     /* inside the rest of a cut line */
	int nuls;         /* a NUL was seen: lines are looked into */
	long cut_lines;   /* lines that were cut */
	long nul_bytes;   /* NUL bytes dropped */
	long nul_lines;   /* lines that held some */
};

typedef int (*iq_line_fn)(void *u, long lineno, const char *s, size_t n, int truncated);

void iq_lines_init(struct iq_lines *l, size_t max);
void iq_lines_release(struct iq_lines *l);
/* Each returns 0 or fn's non-zero result. iq_lines_finish delivers a last
 * line without line end. */
int iq_lines_feed(struct iq_lines *l, const char *p, size_t n, iq_line_fn fn, void *u);
int iq_lines_finish(struct iq_lines *l, iq_line_fn fn, void *u);

#endif
