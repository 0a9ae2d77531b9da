/* walk.c: the bundle walker. Turns a directory, an archive, a compressed
 * file or a plain file into a sequence of members, each a stream of
 * decompressed bytes, opening archives and compressed streams nested inside
 * archive entries with libarchive readers stacked on the parent entry's data.
 * Nothing is written to disk and every buffer has a fixed size. The zip-bomb
 * guard: max_member_bytes bounds each member handed out; max_total_bytes
 * bounds every decompressed byte read, those of nested archives and those
 * of members skipped behind a compression filter included. */
/* realpath() is POSIX.1-2008 base, but glibc declares it for XSI only. */
#define _XOPEN_SOURCE 700
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/iqtime.h"
#include "bundle.h"

#define PEEK_MAX 512                 /* enough for tar's "ustar" at 257 */
#define BLOCK (64 * 1024)            /* read size from files and parents */
#define DEFAULT_DEPTH 8
#define DEFAULT_MEMBER_BYTES ((int64_t)8 << 30)
#define DEFAULT_TOTAL_BYTES ((int64_t)64 << 30)
#define MAX_HEADER_FAILS 16          /* ARCHIVE_FAILED headers in a row */

/* A bundle read from a pipe (stdin), which cannot seek back: the bytes
 * read while the walker decides what it is are kept, so that the reader
 * it picks reads them again from the start. */
struct pipe_src {
	int fd;
	unsigned char *keep; /* bytes read while keeping */
	size_t nkeep, cap;
	size_t pos;          /* the next kept byte to hand out */
	int keeping;
	int64_t got;         /* bytes read from fd, for the progress */
	unsigned char buf[64 * 1024]; /* libarchive's reads */
};

static ssize_t fd_read_all(int fd, void *buf, size_t n)
{
	ssize_t r;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

static ssize_t pipe_read(void *u, void *out, size_t n)
{
	struct pipe_src *p = u;
	if (p->pos < p->nkeep) {
		size_t k = p->nkeep - p->pos < n ? p->nkeep - p->pos : n;
		memcpy(out, p->keep + p->pos, k);
		p->pos += k;
		return (ssize_t)k;
	}
	if (!p->keeping && p->keep) {
		free(p->keep);
		p->keep = NULL;
		p->nkeep = p->pos = p->cap = 0;
	}
	ssize_t r = fd_read_all(p->fd, out, n);
	if (r > 0) {
		p->got += r;
		if (p->keeping) {
			if (p->nkeep + (size_t)r > p->cap) {
				p->cap = (p->nkeep + (size_t)r) * 2;
				p->keep = iq_xrealloc(p->keep, p->cap);
			}
			memcpy(p->keep + p->nkeep, out, (size_t)r);
			p->nkeep += (size_t)r;
			p->pos = p->nkeep;
		}
	}
	return r;
}

static la_ssize_t pipe_la_read(struct archive *a, void *cd, const void **out)
{
	struct pipe_src *p = cd;
	ssize_t r = pipe_read(p, p->buf, sizeof p->buf);
	if (r < 0) {
		archive_set_error(a, errno, "read error: %s", strerror(errno));
		return ARCHIVE_FATAL;
	}
	*out = p->buf;
	return r;
}

static ssize_t fd_read(void *u, void *buf, size_t n)
{
	return fd_read_all(*(int *)u, buf, n);
}

/* One walk: options with defaults filled in, the byte budget, the result. */
struct walk {
	const struct iq_walk_opts *o;
	iq_member_fn fn;
	int max_depth;
	int64_t max_member;
	int64_t max_total;
	int64_t total;      /* decompressed bytes handed out, at every level */
	int total_over;     /* max_total was reached; reported once */
	int stop;           /* fn said stop, or the total budget is spent */
	int ret;            /* fn's non-zero result */
	unsigned char *scratch; /* BLOCK bytes for skipping, made when needed */
	struct archive *gz_a;   /* the reader fed by struct gunzip, if any */
	struct gunzip *gz;      /* and that gunzip */
	/* progress: the file of the bundle being read (a bundle file, or a
	 * file of a bundle directory), the bytes of those before it, the
	 * bundle's size (-1 unknown), and w->total when last told */
	int outer_fd;
	struct pipe_src *outer_pipe; /* or the pipe it is */
	int64_t outer_base, outer_total, noted;
};

enum { ST_OPEN, ST_END, ST_OVER, ST_ERR };

/* The bytes of one file: a member handed to fn, or the data an archive
 * nested in an entry is read from. Either the current entry of a, or fd. */
struct stream {
	struct walk *w;
	struct archive *a;
	int fd;
	struct pipe_src *pipe; /* fd is a pipe: read through this */
	const char *path;   /* borrowed from whoever made the stream */
	int64_t size;
	int64_t mtime;
	int depth;
	unsigned char peek[PEEK_MAX];
	size_t plen, poff;  /* peeked bytes, and how many were handed out */
	int64_t got;        /* bytes handed out, the peek included */
	/* the entry's current data block from libarchive, and where its bytes
	 * (blk_off) and ours (out_off) are in the entry */
	const unsigned char *blk;
	size_t blk_len;
	int64_t blk_off, out_off;
	int state;
	struct iq_diag err; /* what broke, in state ST_ERR */
};

/* A libarchive reader's view of its parent stream. */
struct nest {
	struct stream *parent;
	unsigned char buf[BLOCK];
};

static void walk_stream(struct walk *w, struct stream *s, int inner_depth);
static void problem(struct walk *w, int kind, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A bundle file that is a gzip-compressed tar is inflated here, with
 * ISA-L, and libarchive reads the plain tar from gz_read: ISA-L inflates
 * twice as fast as zlib, and that stream is the one every byte of a
 * .tar.gz bundle goes through, on the walker's thread. Concatenated
 * members are read one after the other; what follows the last one when it
 * is not gzip is ignored, as libarchive does. Errors say what libarchive
 * says of the same damage. */
struct gunzip {
	ssize_t (*read)(void *src, void *buf, size_t n); /* the compressed bytes */
	void *src;
	int eof;             /* read() returned 0 */
	int done;            /* the last member has ended */
	const char *err;     /* an error to report once the bytes before it are out */
	int err_told;        /* libarchive was given it */
	struct inflate_state st;
	unsigned char in[BLOCK];
	unsigned char out[4 * BLOCK];
	size_t ready;        /* bytes of out inflated before libarchive asked */
};

static ssize_t gz_more_input(struct gunzip *g, const char **err)
{
	/* keep what is left unread in front */
	size_t left = g->st.avail_in;
	if (left == sizeof g->in) {
		*err = "gzip decompression failed"; /* a header longer than BLOCK */
		return -1;
	}
	if (left && g->st.next_in != g->in)
		memmove(g->in, g->st.next_in, left);
	ssize_t r = g->read(g->src, g->in + left, sizeof g->in - left);
	if (r < 0) {
		*err = strerror(errno);
		return -1;
	}
	if (r == 0)
		g->eof = 1;
	g->st.next_in = g->in;
	g->st.avail_in = (uint32_t)(left + (size_t)r);
	return r;
}

/* More input in the middle of a member: there must be some. */
static int gz_need_input(struct gunzip *g, const char **err)
{
	if (g->eof) {
		*err = "truncated gzip input";
		return -1;
	}
	return gz_more_input(g, err) < 0 ? -1 : 0;
}

static ssize_t gz_inflate_some(struct gunzip *g, unsigned char *out, size_t cap, const char **err);

/* Inflates up to cap bytes into out: the count, 0 at the end, -1 with *err
 * set. The bytes inflated before an error are handed out first. */
static ssize_t gz_inflate(struct gunzip *g, unsigned char *out, size_t cap, const char **err)
{
	if (g->err) {
		*err = g->err;
		return -1;
	}
	ssize_t r = gz_inflate_some(g, out, cap, err);
	if (r < 0 && g->st.avail_out < cap) {
		g->err = *err;
		return (ssize_t)(cap - g->st.avail_out);
	}
	return r;
}

static ssize_t gz_inflate_some(struct gunzip *g, unsigned char *out, size_t cap, const char **err)
{
	g->st.next_out = out;
	g->st.avail_out = (uint32_t)cap;
	while (g->st.avail_out && !g->done) {
		if (g->st.block_state == ISAL_BLOCK_FINISH) {
			/* a member ended: another one, or the end */
			while (g->st.avail_in < 2 && !g->eof)
				if (gz_more_input(g, err) < 0)
					return -1;
			if (g->st.avail_in < 2 || g->st.next_in[0] != 0x1f || g->st.next_in[1] != 0x8b) {
				g->done = 1;
				break;
			}
			uint8_t *in = g->st.next_in, *o = g->st.next_out;
			uint32_t ain = g->st.avail_in, aout = g->st.avail_out;
			isal_inflate_reset(&g->st);
			g->st.crc_flag = ISAL_GZIP;
			g->st.next_in = in;
			g->st.avail_in = ain;
			g->st.next_out = o;
			g->st.avail_out = aout;
		}
		/* With no input left, inflate still runs once: ISA-L may hold
		 * output it decoded earlier (its own buffer, bits read ahead),
		 * and a stream cut here must hand out every byte before the cut. */
		if (!g->st.avail_in && !g->st.next_in) {
			if (gz_need_input(g, err) < 0)
				return -1;
			continue;
		}
		uint32_t before_in = g->st.avail_in, before_out = g->st.avail_out;
		int r = isal_inflate(&g->st);
		if (r < 0) {
			*err = r == ISAL_INCORRECT_CHECKSUM ? "gzip checksum mismatch" : "gzip decompression failed";
			return -1;
		}
		/* input left that inflate would not take: it waits for more
		 * (a header or trailer cut by the read) */
		if (g->st.avail_in == before_in && g->st.avail_out == before_out &&
		    g->st.block_state != ISAL_BLOCK_FINISH && gz_need_input(g, err) < 0)
			return -1;
	}
	return (ssize_t)(cap - g->st.avail_out);
}

static la_ssize_t gz_read(struct archive *a, void *cd, const void **out)
{
	struct gunzip *g = cd;
	const char *err = NULL;
	*out = g->out;
	if (g->ready) {
		size_t n = g->ready;
		g->ready = 0;
		return (la_ssize_t)n;
	}
	ssize_t r = gz_inflate(g, g->out, sizeof g->out, &err);
	if (r < 0) {
		g->err_told = 1;
		archive_set_error(a, EIO, "%s", err);
		return ARCHIVE_FATAL;
	}
	return r;
}

/* A gunzip of the bytes read gives (from the start of the file) when they
 * are a gzip stream whose first bytes inflate to a tar header; NULL
 * otherwise (the caller goes back to the start and libarchive reads the
 * file itself). */
static struct gunzip *gz_open_tar(ssize_t (*rd)(void *src, void *buf, size_t n), void *src,
				  const unsigned char *peek, size_t plen)
{
	if (plen < 3 || peek[0] != 0x1f || peek[1] != 0x8b || peek[2] != 8)
		return NULL;
	struct gunzip *g = iq_xcalloc(1, sizeof *g);
	g->read = rd;
	g->src = src;
	isal_inflate_init(&g->st);
	g->st.crc_flag = ISAL_GZIP;
	const char *err = NULL;
	size_t got = 0;
	while (got < PEEK_MAX) {
		ssize_t r = gz_inflate(g, g->out + got, PEEK_MAX - got, &err);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got >= 262 && memcmp(g->out + 257, "ustar", 5) == 0) {
		g->ready = got;
		return g;
	}
	free(g);
	return NULL;
}

/* libarchive stops at the tar's end-of-archive blocks, before the gzip
 * trailer, so a damaged stream that still inflated to something tar-like
 * would go unnoticed. The rest is inflated (the tar's padding: at most a
 * MiB is looked at) and the checksum checked. */
static void gz_finish(struct walk *w, struct gunzip *g, const char *path)
{
	const char *err = NULL;
	unsigned char *buf = w->scratch ? w->scratch : (w->scratch = iq_xmalloc(BLOCK));
	ssize_t r = 1;
	for (int i = 0; i < 16 && r > 0; i++)
		r = gz_inflate(g, buf, BLOCK, &err);
	if (r < 0)
		problem(w, IQ_PROBLEM_LOST, path, "%s: the archive is damaged, what was read from it may be garbled", err);
}

/* Whether a's data passes through a decompressor (libarchive's or ours),
 * so that skipping means inflating. */
static int filtered(const struct walk *w, struct archive *a)
{
	return archive_filter_count(a) > 1 || a == w->gz_a;
}


/* Drops the line ends some libarchive messages carry. */
static void trim_end(char *msg)
{
	size_t n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r' || msg[n - 1] == ' '))
		msg[--n] = '\0';
}

static void problem(struct walk *w, int kind, const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	if (!w->o || !w->o->problem)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	trim_end(msg);
	w->o->problem(path, msg, kind, w->o->u);
}

/* Tells opts->progress how far the bundle is read: where the file being
 * read is, after the bytes of the files before it. */
static void tell_progress(struct walk *w)
{
	if (!w->o || !w->o->progress)
		return;
	off_t pos = w->outer_pipe ? (off_t)w->outer_pipe->got
		: w->outer_fd >= 0 ? lseek(w->outer_fd, 0, SEEK_CUR) : 0;
	w->noted = w->total;
	w->o->progress(w->outer_base + (pos > 0 ? (int64_t)pos : 0), w->outer_total, w->o->u);
}

/* Counts n decompressed bytes read; tells the progress every MiB. */
static void count_bytes(struct walk *w, int64_t n)
{
	w->total += n;
	if (w->total - w->noted >= (1 << 20))
		tell_progress(w);
}

static const char *arc_error(struct archive *a)
{
	const char *s = archive_error_string(a);
	return s ? s : "unknown archive error";
}

/* a + sep + b in a new string; caller frees. */
static char *join(const char *a, const char *sep, const char *b)
{
	size_t na = strlen(a), ns = strlen(sep), nb = strlen(b);
	char *p = iq_xmalloc(na + ns + nb + 1);
	memcpy(p, a, na);
	memcpy(p + na, sep, ns);
	memcpy(p + na + ns, b, nb + 1);
	return p;
}

static void stream_init(struct stream *s, struct walk *w, const char *path)
{
	memset(s, 0, sizeof *s);
	s->w = w;
	s->fd = -1;
	s->path = path;
	s->size = -1;
	s->mtime = IQ_TIME_NONE;
	s->state = ST_OPEN;
}

/* Up to n bytes of the archive entry s reads, block by block. Not
 * archive_read_data(): when a block after the first fails (a truncated
 * archive), that drops the bytes it had already copied, so an entry cut
 * in the middle would lose up to a whole read before the cut. The holes
 * of a sparse entry read as zeros, as there. */
static ssize_t entry_read(struct stream *s, void *buf, size_t n)
{
	while (!s->blk_len) {
		const void *b;
		size_t len;
		la_int64_t off;
		int r = archive_read_data_block(s->a, &b, &len, &off);
		if (r == ARCHIVE_EOF)
			return 0;
		/* a warning too, as archive_read_data() has it: a zip entry
		 * whose size or CRC is wrong ends with one */
		if (r < ARCHIVE_OK || off < s->out_off) {
			s->state = ST_ERR;
			iq_diag_set(&s->err, IQ_ERR_INPUT, "%s",
				    r < ARCHIVE_OK ? arc_error(s->a) : "sparse blocks out of order");
			trim_end(s->err.msg);
			return IQ_ERR_INPUT;
		}
		s->blk = b;
		s->blk_len = len;
		s->blk_off = off;
	}
	size_t k;
	if (s->blk_off > s->out_off) {
		k = (uint64_t)(s->blk_off - s->out_off) < n ? (size_t)(s->blk_off - s->out_off) : n;
		memset(buf, 0, k);
	} else {
		k = s->blk_len < n ? s->blk_len : n;
		memcpy(buf, s->blk, k);
		s->blk += k;
		s->blk_len -= k;
		s->blk_off += (int64_t)k;
	}
	s->out_off += (int64_t)k;
	return (ssize_t)k;
}

/* Reads from the source without accounting: the count, 0 at the end, or
 * IQ_ERR_INPUT with the stream in ST_ERR. */
static ssize_t source_read(struct stream *s, void *buf, size_t n)
{
	if (s->a)
		return entry_read(s, buf, n);
	ssize_t r = s->pipe ? pipe_read(s->pipe, buf, n) : fd_read_all(s->fd, buf, n);
	if (r >= 0)
		return r;
	s->state = ST_ERR;
	return iq_diag_set(&s->err, IQ_ERR_INPUT, "read error: %s", strerror(errno));
}

/* Reads the first bytes into s->peek; they are handed out first later. A
 * read error is kept in s for after the peeked bytes. */
static void fill_peek(struct stream *s)
{
	while (s->plen < sizeof s->peek && s->state == ST_OPEN) {
		ssize_t r = source_read(s, s->peek + s->plen, sizeof s->peek - s->plen);
		if (r == 0)
			s->state = ST_END;
		else if (r > 0)
			s->plen += (size_t)r;
	}
}

/* The total budget is spent: stops the walk, saying so once. */
static void total_over(struct walk *w, const char *path)
{
	if (w->total_over)
		return;
	w->total_over = 1;
	w->stop = 1;
	problem(w, IQ_PROBLEM_CUT, path, "decompressed size of the bundle over the limit of %lld bytes: rest of the bundle not read"
		" (--max-bundle-bytes raises it)", (long long)w->max_total);
}

/* The budget is spent: finds out whether the stream has more bytes, and if
 * so reports the limit and stops the stream there. */
static ssize_t over_limit(struct stream *s, int64_t member_room, struct iq_diag *d)
{
	struct walk *w = s->w;
	unsigned char c;
	if (s->poff == s->plen) {
		ssize_t r;
		if (s->state == ST_END)
			return 0;
		if (s->state == ST_ERR)
			return iq_diag_set(d, IQ_ERR_INPUT, "%s", s->err.msg);
		r = source_read(s, &c, 1);
		if (r < 0)
			return iq_diag_set(d, IQ_ERR_INPUT, "%s", s->err.msg);
		if (r == 0) {
			s->state = ST_END;
			return 0;
		}
	}
	s->state = ST_OVER;
	if (member_room <= 0)
		problem(w, IQ_PROBLEM_CUT, s->path, "decompressed size over the limit of %lld bytes: rest not read"
			" (--max-member-bytes raises it)", (long long)w->max_member);
	else
		total_over(w, s->path);
	return 0;
}

/* Hands out up to n bytes of s (the peek first), within the budgets: the
 * count, 0 at the end or at a limit, or IQ_ERR_INPUT. A member handed to fn
 * has max_member; the data of a nested archive (pull) only counts towards
 * max_total, which is what bounds the work of skipping inside nested
 * archives: a nested archive is a container, and its members have their own
 * limit. */
static ssize_t stream_read(struct stream *s, void *buf, size_t n, int pull,
			   struct iq_diag *d)
{
	struct walk *w = s->w;
	int64_t member_room = pull ? INT64_MAX : w->max_member - s->got;
	int64_t total_room = w->max_total - w->total;
	int64_t room = member_room < total_room ? member_room : total_room;
	ssize_t r;

	if (n == 0 || s->state == ST_OVER)
		return 0;
	if (room <= 0)
		return over_limit(s, member_room, d);
	if ((uint64_t)n > (uint64_t)room)
		n = (size_t)room;
	if (n > SSIZE_MAX)
		n = SSIZE_MAX;
	if (s->poff < s->plen) {
		r = (ssize_t)(s->plen - s->poff < n ? s->plen - s->poff : n);
		memcpy(buf, s->peek + s->poff, (size_t)r);
		s->poff += (size_t)r;
	} else if (s->state == ST_ERR) {
		return iq_diag_set(d, IQ_ERR_INPUT, "%s", s->err.msg);
	} else if (s->state == ST_END) {
		return 0;
	} else {
		r = source_read(s, buf, n);
		if (r < 0)
			return iq_diag_set(d, IQ_ERR_INPUT, "%s", s->err.msg);
		if (r == 0) {
			s->state = ST_END;
			return 0;
		}
	}
	s->got += r;
	count_bytes(w, r);
	return r;
}

ssize_t iq_member_read(struct iq_member *m, void *buf, size_t n, struct iq_diag *d)
{
	return stream_read(m->impl, buf, n, 0, d);
}

int iq_member_cut(const struct iq_member *m)
{
	const struct stream *s = m->impl;
	return s->state == ST_OVER;
}

static la_ssize_t nest_read(struct archive *a, void *cd, const void **out)
{
	struct nest *n = cd;
	struct iq_diag d;
	ssize_t r = stream_read(n->parent, n->buf, sizeof n->buf, 1, &d);
	if (r < 0) {
		archive_set_error(a, EIO, "%s", d.msg);
		return ARCHIVE_FATAL;
	}
	*out = n->buf;
	return r;
}

/* Whether the first bytes of a file say it is compressed or an archive.
 * A false positive costs nothing: the raw format then hands the bytes on
 * unchanged. A plain file must never reach a reader with the raw format
 * enabled, since raw accepts anything. */
static int nested_magic(const unsigned char *p, size_t n)
{
	static const struct {
		size_t off, len;
		const char *m;
	} magic[] = {
		{0, 2, "\x1f\x8b"},                     /* gzip */
		{0, 2, "\x1f\x9d"},                     /* compress */
		{0, 6, "\xfd" "7zXZ\x00"},              /* xz */
		{0, 4, "\x28\xb5\x2f\xfd"},             /* zstd */
		{0, 4, "\x04\x22\x4d\x18"},             /* lz4 */
		{0, 4, "LZIP"},                         /* lzip */
		{0, 4, "PK\x03\x04"},                   /* zip */
		{0, 4, "PK\x05\x06"},                   /* empty zip */
		{0, 6, "7z\xbc\xaf\x27\x1c"},           /* 7z */
		{0, 6, "Rar!\x1a\x07"},                 /* rar, rar5 */
		{0, 5, "07070"},                        /* cpio odc, newc */
		{0, 8, "!<arch>\n"},                    /* ar */
		{0, 4, "xar!"},                         /* xar */
		{257, 5, "ustar"},                      /* tar: posix and gnu */
	};
	for (size_t i = 0; i < IQ_ARRAY_LEN(magic); i++)
		if (n >= magic[i].off + magic[i].len &&
		    memcmp(p + magic[i].off, magic[i].m, magic[i].len) == 0)
			return 1;
	/* bzip2: "BZh", a level, then a block or an end-of-stream magic */
	if (n >= 10 && memcmp(p, "BZh", 3) == 0 && p[3] >= '1' && p[3] <= '9' &&
	    (memcmp(p + 4, "\x31\x41\x59\x26\x53\x59", 6) == 0 ||
	     memcmp(p + 4, "\x17\x72\x45\x38\x50\x90", 6) == 0))
		return 1;
	return 0;
}

/* A reader for any archive or compressed stream, and the raw format for a
 * compressed single file. Filters and formats are listed one by one rather
 * than "all": no filter that runs an external program (lrzip, lzop, grzip);
 * neither uu nor mtree, whose bidders read text and could take a log for an
 * archive; no iso9660, whose bidder reads 48 KiB ahead, so that a truncated
 * compressed member shorter than that would fail before a byte of it is
 * read. */
static struct archive *reader_new(void)
{
	struct archive *a = archive_read_new();
	if (!a)
		return NULL;
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_lzma(a);
	archive_read_support_filter_lzip(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_lz4(a);
	archive_read_support_filter_compress(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_cpio(a);
	archive_read_support_format_zip(a);
	archive_read_support_format_7zip(a);
	archive_read_support_format_rar(a);
	archive_read_support_format_rar5(a);
	archive_read_support_format_ar(a);
	archive_read_support_format_xar(a);
	archive_read_support_format_cab(a);
	archive_read_support_format_lha(a);
	archive_read_support_format_empty(a);
	archive_read_support_format_raw(a);
	return a;
}

static int64_t entry_mtime(struct archive_entry *e)
{
	int64_t t;
	if (!archive_entry_mtime_is_set(e))
		return IQ_TIME_NONE;
	t = (int64_t)archive_entry_mtime(e);
	if (t > INT64_MAX / IQ_NS_PER_SEC - 1 || t < INT64_MIN / IQ_NS_PER_SEC + 1)
		return IQ_TIME_NONE;
	return t * IQ_NS_PER_SEC + archive_entry_mtime_nsec(e);
}

static const char *entry_name(struct archive_entry *e)
{
	const char *s = archive_entry_pathname(e);
	if (!s)
		s = archive_entry_pathname_utf8(e);
	return s ? s : "";
}

/* Calls fn for s; records a non-zero result. */
static void deliver(struct walk *w, struct stream *s)
{
	struct iq_member m;
	int r;
	m.path = s->path;
	m.size = s->size;
	m.mtime = s->mtime;
	m.depth = s->depth;
	m.impl = s;
	r = w->fn(&m, w->o ? w->o->u : NULL);
	if (r) {
		w->ret = r;
		w->stop = 1;
	}
}

/* Skips the rest of a's current entry, named path. Behind a compression
 * filter skipping means decompressing, and a bomb skipped would cost hours:
 * those bytes are read here and counted against max_total instead. Without
 * a filter libarchive skips cheaply (it seeks, or a zip entry's compressed
 * bytes are passed over). */
static void skip_entry(struct walk *w, struct archive *a, const char *path)
{
	if (!filtered(w, a)) {
		if (archive_read_data_skip(a) < ARCHIVE_WARN)
			problem(w, IQ_PROBLEM_LOST, path, "%s", arc_error(a));
		return;
	}
	if (!w->scratch)
		w->scratch = iq_xmalloc(BLOCK);
	for (;;) {
		int64_t room = w->max_total - w->total;
		la_ssize_t r;
		if (room <= 0) {
			total_over(w, path);
			return;
		}
		r = archive_read_data(a, w->scratch, room < BLOCK ? (size_t)room : BLOCK);
		if (r <= 0)
			return; /* an error shows again at the next header */
		count_bytes(w, r);
	}
}

/* Whether a's entries are stored as they are (tar, cpio, ar without a
 * compression filter), so that none can be bigger than the archive. */
static int stores_plain(const struct walk *w, struct archive *a)
{
	int f = archive_format(a) & ARCHIVE_FORMAT_BASE_MASK;
	return !filtered(w, a) &&
	       (f == ARCHIVE_FORMAT_TAR || f == ARCHIVE_FORMAT_CPIO || f == ARCHIVE_FORMAT_AR);
}

/* One entry of an archive whose entries are at depth. */
static void walk_entry(struct walk *w, struct archive *a, struct archive_entry *e,
		       const struct stream *cont, int depth)
{
	char *path = join(cont->path, "!", entry_name(e));
	const char *hl = archive_entry_hardlink(e);
	const char *sl = archive_entry_symlink(e);
	mode_t type = archive_entry_filetype(e);
	int has_data = archive_entry_size_is_set(e) && archive_entry_size(e) > 0;

	if (hl && !has_data) {
		problem(w, IQ_PROBLEM_SKIPPED, path, "hard link to %s not followed", hl);
	} else if (type == AE_IFLNK) {
		problem(w, IQ_PROBLEM_SKIPPED, path, "symbolic link to %s not followed", sl ? sl : "?");
	} else if (type == AE_IFDIR) {
		/* its files are entries of their own */
	} else if (type != AE_IFREG && type != 0) {
		problem(w, IQ_PROBLEM_SKIPPED, path, "special file (device, fifo or socket) not read");
	} else {
		struct stream s;
		stream_init(&s, w, path);
		s.a = a;
		s.depth = depth;
		s.size = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
		/* An uncompressed archive cannot hold a member bigger than
		 * itself: a header that says so is damaged, and skipping over
		 * the claim would end the archive silently. */
		if (stores_plain(w, a) && cont->size >= 0 && s.size > cont->size)
			problem(w, IQ_PROBLEM_LOST, path, "header claims %lld bytes, more than the %lld bytes of the archive:"
				" a damaged or truncated archive", (long long)s.size,
				(long long)cont->size);
		s.mtime = entry_mtime(e);
		walk_stream(w, &s, depth + 1);
		if (!w->stop)
			skip_entry(w, a, path);
	}
	free(path);
}

/* Walks the archive read by a, whose bytes are those of cont; its entries
 * are at depth. A compressed single file (raw format) is one member named
 * and dated like cont. Returns the entries read, or -1 when the archive
 * failed before its first entry. */
static int walk_archive(struct walk *w, struct archive *a, struct stream *cont, int depth)
{
	int entries = 0;
	int first = 1;
	int fails = 0;
	char last[256] = "";  /* the last entry, to say where a cut archive ends */

	while (!w->stop) {
		struct archive_entry *e;
		int r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF) {
			if (first && archive_format(a) == ARCHIVE_FORMAT_EMPTY) {
				/* a compressed empty file */
				struct stream s;
				stream_init(&s, w, cont->path);
				s.state = ST_END;
				s.size = cont->size;
				s.mtime = cont->mtime;
				s.depth = cont->depth;
				deliver(w, &s);
			} else if (first && !w->stop) {
				/* tar takes zero blocks for its end: a compressed
				 * file of zeros looks like an empty tar */
				problem(w, IQ_PROBLEM_SKIPPED, cont->path, "no entries: an empty archive, or data that starts with zero bytes");
			}
			break;
		}
		if (r < ARCHIVE_WARN || r == ARCHIVE_RETRY) {
			if (w->stop)
				break;
			/* the parent's own read error, or our gunzip's, says more
			 * than libarchive's "truncated" */
			const char *why = cont->state == ST_ERR ? cont->err.msg
				: a == w->gz_a && w->gz && w->gz->err ? w->gz->err : arc_error(a);
			if (r == ARCHIVE_FATAL && !first)
				problem(w, IQ_PROBLEM_LOST, cont->path, "%s at byte %lld of the archive's data, in or after"
					" member %s: the members before it were read, any after it are"
					" missing", why, (long long)archive_filter_bytes(a, -1), last);
			else
				problem(w, IQ_PROBLEM_LOST, cont->path, "%s", why);
			if (r == ARCHIVE_FATAL || ++fails >= MAX_HEADER_FAILS)
				return first ? -1 : entries;
			continue;
		}
		entries++;
		/* ARCHIVE_WARN: a name not convertible to the locale and such;
		 * entry_name() falls back to the stored UTF-8 */
		fails = 0;
		first = 0;
		snprintf(last, sizeof last, "%s", entry_name(e));
		if (archive_format(a) == ARCHIVE_FORMAT_RAW) {
			struct stream s;
			stream_init(&s, w, cont->path);
			s.a = a;
			s.size = cont->size;
			s.mtime = cont->mtime;
			s.depth = cont->depth;
			deliver(w, &s);
			continue;
		}
		walk_entry(w, a, e, cont, depth);
	}
	return entries;
}

/* Reads s: when its first bytes say archive or compressed, walks it as an
 * archive whose entries are at inner_depth, else hands it to fn. The caller
 * skips what is left of s afterwards. */
static void walk_stream(struct walk *w, struct stream *s, int inner_depth)
{
	struct archive *a = NULL;
	struct nest *n = NULL;
	struct gunzip *g = NULL;
	int r;

	fill_peek(s);
	if (!nested_magic(s->peek, s->plen)) {
		if (s->pipe) {
			/* handed out from the peek: not again from what was kept */
			s->pipe->keeping = 0;
			s->pipe->pos = s->pipe->nkeep;
		}
		deliver(w, s);
		goto out;
	}
	if (inner_depth > w->max_depth) {
		problem(w, IQ_PROBLEM_CUT, s->path, "nested deeper than %d archives: not opened", w->max_depth);
		goto out;
	}
	a = reader_new();
	if (!a) {
		problem(w, IQ_PROBLEM_LOST, s->path, "out of memory: not opened");
		goto out;
	}
	if (s->pipe) {
		/* a pipe: read again from the start, what was kept first; the
		 * formats that seek (zip's central directory, 7z's header)
		 * are read as far as they stream */
		s->pipe->pos = 0;
		g = gz_open_tar(pipe_read, s->pipe, s->peek, s->plen);
		if (g) {
			r = archive_read_open(a, g, NULL, gz_read, NULL);
			w->gz_a = a;
			w->gz = g;
		} else {
			s->pipe->pos = 0;
			r = archive_read_open(a, s->pipe, NULL, pipe_la_read, NULL);
		}
		s->pipe->keeping = 0;
	} else if (!s->a) {
		/* a file: libarchive reads it itself, seeking where the format
		 * wants to (zip's central directory, 7z's header) */
		if (lseek(s->fd, 0, SEEK_SET) != 0) {
			problem(w, IQ_PROBLEM_LOST, s->path, "cannot seek: %s", strerror(errno));
			goto out;
		}
		g = gz_open_tar(fd_read, &s->fd, s->peek, s->plen);
		if (g) {
			r = archive_read_open(a, g, NULL, gz_read, NULL);
			w->gz_a = a;
			w->gz = g;
		} else if (lseek(s->fd, 0, SEEK_SET) != 0) {
			problem(w, IQ_PROBLEM_LOST, s->path, "cannot seek: %s", strerror(errno));
			goto out;
		} else {
			r = archive_read_open_fd(a, s->fd, BLOCK);
		}
	} else {
		n = iq_xmalloc(sizeof *n);
		n->parent = s;
		r = archive_read_open(a, n, NULL, nest_read, NULL);
	}
	if (r < ARCHIVE_WARN) {
		if (!w->stop)
			problem(w, IQ_PROBLEM_LOST, s->path, "%s",
				s->state == ST_ERR ? s->err.msg : arc_error(a));
		goto out;
	}
	if (walk_archive(w, a, s, inner_depth) < 0 && !s->a && !s->pipe && !w->stop &&
	    s->plen >= 4 && memcmp(s->peek, "PK\x03\x04", 4) == 0) {
		/* A zip whose central directory is damaged: its entries
		 * still have their local headers, which the streaming zip
		 * reader follows from the start. */
		archive_read_free(a);
		a = archive_read_new();
		if (!a || lseek(s->fd, 0, SEEK_SET) != 0)
			goto out;
		archive_read_support_format_zip_streamable(a);
		if (archive_read_open_fd(a, s->fd, BLOCK) < ARCHIVE_WARN) {
			problem(w, IQ_PROBLEM_LOST, s->path, "%s", arc_error(a));
			goto out;
		}
		problem(w, IQ_PROBLEM_LOST, s->path, "central directory unreadable: entries read from their local headers");
		walk_archive(w, a, s, inner_depth);
	}
	if (g && !w->stop && !g->err_told)
		gz_finish(w, g, s->path);
out:
	if (a)
		archive_read_free(a);
	if (w->gz_a == a) {
		w->gz_a = NULL;
		w->gz = NULL;
	}
	free(n);
	free(g);
}

/* A regular file opened as fd (the caller closes it), named path, at depth
 * 0; an archive in it has its entries at inner_depth. */
static void walk_file(struct walk *w, int fd, const char *path, const struct stat *st,
		      int inner_depth)
{
	struct stream s;
	stream_init(&s, w, path);
	s.fd = fd;
	s.size = st->st_size;
	s.mtime = (int64_t)st->st_mtim.tv_sec * IQ_NS_PER_SEC + st->st_mtim.tv_nsec;
	w->outer_fd = fd;
	walk_stream(w, &s, inner_depth);
	w->outer_fd = -1;
	w->outer_base += st->st_size;
	tell_progress(w);
}

/* The bundle on stdin when it is a pipe, named path: streamed, as far as
 * each format can be without seeking. */
static void walk_pipe(struct walk *w, int fd, const char *path)
{
	struct pipe_src *p = iq_xcalloc(1, sizeof *p);
	struct stream s;
	p->fd = fd;
	p->keeping = 1;
	stream_init(&s, w, path);
	s.fd = fd;
	s.pipe = p;
	w->outer_pipe = p;
	walk_stream(w, &s, 0);
	tell_progress(w);
	w->outer_pipe = NULL;
	free(p->keep);
	free(p);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walks directory fs (its members named mp/...) in sorted name order,
 * depth first. Nothing that goes wrong inside stops the walk. */
static void walk_dir(struct walk *w, const char *fs, const char *mp)
{
	DIR *dir = opendir(fs);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (!dir) {
		problem(w, IQ_PROBLEM_LOST, mp, "cannot open directory: %s", strerror(errno));
		return;
	}
	for (;;) {
		errno = 0;
		de = readdir(dir);
		if (!de)
			break;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			names = iq_xrealloc(names, cap * sizeof *names);
		}
		names[n++] = iq_xstrdup(de->d_name);
	}
	if (errno)
		problem(w, IQ_PROBLEM_LOST, mp, "cannot read directory: %s", strerror(errno));
	closedir(dir);
	if (n)
		qsort(names, n, sizeof *names, cmp_name);

	for (size_t i = 0; i < n; i++) {
		char *cfs = join(fs, "/", names[i]);
		char *cmp = join(mp, "/", names[i]);
		struct stat st;
		if (w->stop) {
			/* fall through to free */
		} else if (lstat(cfs, &st) != 0) {
			problem(w, IQ_PROBLEM_LOST, cmp, "cannot stat: %s", strerror(errno));
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t tn = readlink(cfs, target, sizeof target - 1);
			target[tn < 0 ? 0 : tn] = '\0';
			problem(w, IQ_PROBLEM_SKIPPED, cmp, "symbolic link to %s not followed", tn < 0 ? "?" : target);
		} else if (S_ISDIR(st.st_mode)) {
			walk_dir(w, cfs, cmp);
		} else if (!S_ISREG(st.st_mode)) {
			problem(w, IQ_PROBLEM_SKIPPED, cmp, "special file (device, fifo or socket) not read");
		} else {
			int fd = open(cfs, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0) {
				problem(w, IQ_PROBLEM_LOST, cmp, "cannot open: %s", strerror(errno));
			} else {
				if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
					walk_file(w, fd, cmp, &st, 1);
				else
					problem(w, IQ_PROBLEM_LOST, cmp, "changed while read: not read");
				close(fd);
			}
		}
		free(cfs);
		free(cmp);
		free(names[i]);
	}
	free(names);
}

/* The last component of path, trailing slashes ignored; "." and ".." are
 * resolved to the directory's real name. Caller frees. */
static char *bundle_name(const char *path)
{
	size_t end = strlen(path);
	size_t start;
	char *name;
	while (end > 1 && path[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	name = iq_xstrndup(path + start, end - start);
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "/") == 0) {
		char *real = realpath(path, NULL);
		if (real) {
			char *slash = strrchr(real, '/');
			free(name);
			name = iq_xstrdup(slash && slash[1] ? slash + 1 : real);
			free(real);
		}
	}
	return name;
}

int iq_bundle_walk(const char *path, const struct iq_walk_opts *opts,
		   iq_member_fn fn, struct iq_diag *d)
{
	struct walk w;
	struct stat st;
	char *name = NULL;
	int fd = -1;
	int ret = 0;

	memset(&w, 0, sizeof w);
	w.o = opts;
	w.fn = fn;
	w.max_depth = opts && opts->max_depth > 0 ? opts->max_depth : DEFAULT_DEPTH;
	w.max_member = opts && opts->max_member_bytes > 0 ? opts->max_member_bytes
							   : DEFAULT_MEMBER_BYTES;
	w.max_total = opts && opts->max_total_bytes > 0 ? opts->max_total_bytes
							 : DEFAULT_TOTAL_BYTES;
	w.outer_fd = -1;
	w.outer_total = -1;

	if (strcmp(path, "-") == 0) {
		/* stdin: a file redirected is read as a file, a pipe streamed */
		if (fstat(STDIN_FILENO, &st) != 0) {
			ret = iq_diag_set(d, IQ_ERR_INPUT, "cannot read stdin: %s", strerror(errno));
		} else if (S_ISREG(st.st_mode)) {
			w.outer_total = st.st_size;
			walk_file(&w, STDIN_FILENO, "stdin", &st, 0);
			ret = w.ret;
		} else {
			walk_pipe(&w, STDIN_FILENO, "stdin");
			ret = w.ret;
		}
		goto out;
	}
	if (stat(path, &st) != 0) {
		ret = iq_diag_set(d, IQ_ERR_INPUT, "cannot open '%s': %s", path, strerror(errno));
		goto out;
	}
	if (opts && opts->path_as_given) {
		size_t end = strlen(path);
		while (end > 1 && path[end - 1] == '/')
			end--;
		name = iq_xstrndup(path, end);
	} else {
		name = bundle_name(path);
	}
	if (S_ISDIR(st.st_mode)) {
		DIR *dir = opendir(path);
		if (!dir) {
			ret = iq_diag_set(d, IQ_ERR_INPUT, "cannot open '%s': %s", path,
					  strerror(errno));
			goto out;
		}
		closedir(dir);
		walk_dir(&w, path, name);
	} else if (S_ISREG(st.st_mode)) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) != 0) {
			ret = iq_diag_set(d, IQ_ERR_INPUT, "cannot open '%s': %s", path,
					  strerror(errno));
			goto out;
		}
		w.outer_total = st.st_size;
		walk_file(&w, fd, name, &st, 0);
	} else {
		ret = iq_diag_set(d, IQ_ERR_INPUT,
				  "cannot read '%s': not a directory or a regular file", path);
		goto out;
	}
	ret = w.ret;
out:
	if (fd >= 0)
		close(fd);
	free(w.scratch);
	free(name);
	return ret;
}
