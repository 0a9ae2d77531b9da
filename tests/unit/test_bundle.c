/* test_bundle.c: the bundle walker over archives, nested archives,
 * compressed files, plain files and directories that each test builds in a
 * temporary directory with libarchive's write API. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../analyzer/bundle/bundle.h"
#include "../../analyzer/core/iqtime.h"

/* ---- scratch directory ---- */

static char tmpdir[64];

static char *tpath(const char *name)
{
	static char buf[8][512];
	static int i;
	char *p = buf[i++ % 8];
	snprintf(p, sizeof buf[0], "%s/%s", tmpdir, name);
	return p;
}

static void rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d)) != NULL) {
			char sub[1024];
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
			rm_rf(sub);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/iq-test-bundle-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	rm_rf(tmpdir);
	return 0;
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	if (n)
		assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* ---- building archives in memory ---- */

struct ent {
	const char *name;
	const void *data;   /* NULL with len 0: empty file */
	size_t len;
	mode_t type;        /* 0: regular file */
	const char *link;   /* symlink target, or hardlink target with type 1 */
	time_t mtime;
};

#define HARDLINK ((mode_t)1)

struct blob {
	unsigned char *p;
	size_t n;
};

enum fmt { F_TAR, F_ZIP, F_RAW, F_7Z, F_CPIO };

/* An archive of format f with filter (ARCHIVE_FILTER_*) of the entries;
 * the test is skipped when libarchive cannot write the filter. */
static struct blob build(enum fmt f, int filter, const struct ent *e, size_t n)
{
	struct archive *a = archive_write_new();
	struct blob b;
	size_t cap = 1 << 20, used = 0;
	for (size_t i = 0; i < n; i++)
		cap += e[i].len * 2;
	b.p = malloc(cap);
	assert_non_null(b.p);
	switch (f) {
	case F_TAR: assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK); break;
	case F_ZIP: assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK); break;
	case F_RAW: assert_int_equal(archive_write_set_format_raw(a), ARCHIVE_OK); break;
	case F_7Z: assert_int_equal(archive_write_set_format_7zip(a), ARCHIVE_OK); break;
	case F_CPIO: assert_int_equal(archive_write_set_format_cpio_newc(a), ARCHIVE_OK); break;
	}
	if (filter != ARCHIVE_FILTER_NONE &&
	    archive_write_add_filter(a, filter) != ARCHIVE_OK) {
		const char *why = archive_error_string(a);
		archive_write_free(a);
		free(b.p);
		print_message("libarchive cannot write filter %d (%s): skipped\n", filter,
			      why ? why : "?");
		skip();
	}
	/* deterministic, and no padding to 10 KiB blocks */
	archive_write_set_bytes_per_block(a, 512);
	assert_int_equal(archive_write_open_memory(a, b.p, cap, &used), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *ae = archive_entry_new();
		archive_entry_set_pathname(ae, e[i].name);
		archive_entry_set_mtime(ae, e[i].mtime ? e[i].mtime : 1700000000, 0);
		archive_entry_set_perm(ae, 0644);
		if (e[i].type == HARDLINK) {
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_hardlink(ae, e[i].link);
			archive_entry_set_size(ae, 0);
		} else if (e[i].type == AE_IFLNK) {
			archive_entry_set_filetype(ae, AE_IFLNK);
			archive_entry_set_symlink(ae, e[i].link);
		} else if (e[i].type == AE_IFDIR) {
			archive_entry_set_filetype(ae, AE_IFDIR);
			archive_entry_set_perm(ae, 0755);
		} else {
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_size(ae, (la_int64_t)e[i].len);
		}
		assert_int_equal(archive_write_header(a, ae), ARCHIVE_OK);
		if (e[i].len)
			assert_int_equal(archive_write_data(a, e[i].data, e[i].len),
					 (la_ssize_t)e[i].len);
		archive_entry_free(ae);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	b.n = used;
	return b;
}

static struct ent blob_ent(const char *name, struct blob b)
{
	struct ent e = {name, b.p, b.n, 0, NULL, 0};
	return e;
}

#define ENT(name, s) {(name), (s), sizeof(s) - 1, 0, NULL, 0}

/* A gzip stream of s. */
static struct blob gz_of(const void *p, size_t n)
{
	struct ent e = {"data", p, n, 0, NULL, 0};
	return build(F_RAW, ARCHIVE_FILTER_GZIP, &e, 1);
}

static void save(const char *name, struct blob b)
{
	write_file(tpath(name), b.p, b.n);
	free(b.p);
}

/* Bytes that do not compress. */
static unsigned char *noise(size_t n)
{
	unsigned char *p = malloc(n);
	uint32_t x = 12345;
	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (unsigned char)(x >> 16);
	}
	return p;
}

/* ---- a walk's record ---- */

#define MAXREC 64

struct got {
	char *path;
	int depth;
	int64_t size, mtime;
	struct iq_buf data;
	int err;            /* iq_member_read's error, 0 for none */
	char msg[1024];
};

struct rec {
	struct got m[MAXREC];
	int n;
	char *ppath[MAXREC];
	char *pmsg[MAXREC];
	int pkind[MAXREC];  /* enum iq_problem_kind */
	int np;
	size_t chunk;       /* read size; 0: 7 bytes, to exercise the peek */
	long read_max;      /* read at most this many bytes; -1: all */
	int stop_at;        /* return 7 from the member with this 1-based index */
};

static int on_member(struct iq_member *m, void *u)
{
	struct rec *r = u;
	struct got *g;
	char buf[70000];
	size_t chunk = r->chunk ? r->chunk : 7;
	struct iq_diag d;
	ssize_t k;
	assert_true(r->n < MAXREC);
	g = &r->m[r->n++];
	g->path = strdup(m->path);
	g->depth = m->depth;
	g->size = m->size;
	g->mtime = m->mtime;
	iq_buf_init(&g->data);
	while (r->read_max < 0 || (long)g->data.len < r->read_max) {
		size_t want = chunk;
		if (r->read_max >= 0 && want > (size_t)r->read_max - g->data.len)
			want = (size_t)r->read_max - g->data.len;
		k = iq_member_read(m, buf, want, &d);
		if (k < 0) {
			g->err = (int)k;
			snprintf(g->msg, sizeof g->msg, "%s", d.msg);
			break;
		}
		if (k == 0)
			break;
		assert_true((size_t)k <= want);
		assert_int_equal(iq_buf_add(&g->data, buf, (size_t)k), 0);
	}
	if (r->stop_at == r->n)
		return 7;
	return 0;
}

static void on_problem(const char *path, const char *msg, int kind, void *u)
{
	struct rec *r = u;
	assert_true(r->np < MAXREC);
	r->ppath[r->np] = strdup(path);
	r->pmsg[r->np] = strdup(msg);
	r->pkind[r->np] = kind;
	r->np++;
}

static void rec_init(struct rec *r)
{
	memset(r, 0, sizeof *r);
	r->read_max = -1;
}

static void rec_release(struct rec *r)
{
	for (int i = 0; i < r->n; i++) {
		free(r->m[i].path);
		iq_buf_release(&r->m[i].data);
	}
	for (int i = 0; i < r->np; i++) {
		free(r->ppath[i]);
		free(r->pmsg[i]);
	}
}

static int walk(const char *path, struct rec *r, struct iq_walk_opts *o, struct iq_diag *d)
{
	struct iq_walk_opts def = {0};
	if (!o)
		o = &def;
	o->problem = on_problem;
	o->u = r;
	return iq_bundle_walk(path, o, on_member, d);
}

static void expect_member(const struct rec *r, int i, const char *path, int depth,
			  const char *data)
{
	assert_true(i < r->n);
	assert_string_equal(r->m[i].path, path);
	assert_int_equal(r->m[i].depth, depth);
	assert_int_equal(r->m[i].err, 0);
	if (data) {
		assert_int_equal(r->m[i].data.len, strlen(data));
		assert_memory_equal(r->m[i].data.p, data, strlen(data));
	}
}

/* The index of the problem about path whose message contains sub, or -1. */
static int find_problem(const struct rec *r, const char *path, const char *sub)
{
	for (int i = 0; i < r->np; i++)
		if (strcmp(r->ppath[i], path) == 0 && strstr(r->pmsg[i], sub))
			return i;
	return -1;
}

/* ---- fixtures ---- */

/* outer.tar.gz: logs/a.txt, inner1.tar.gz (b.txt, inner2.tar (c.log.gz,
 * d.txt)), z.txt */
static void make_nested(const char *name)
{
	struct blob cgz = gz_of("charlie\n", 8);
	struct ent in2[] = {blob_ent("c.log.gz", cgz), ENT("d.txt", "delta\n")};
	struct blob tar2 = build(F_TAR, ARCHIVE_FILTER_NONE, in2, 2);
	struct ent in1[] = {ENT("b.txt", "bravo\n"), blob_ent("inner2.tar", tar2)};
	struct blob tgz1 = build(F_TAR, ARCHIVE_FILTER_GZIP, in1, 2);
	struct ent out[] = {
		{"logs", NULL, 0, AE_IFDIR, NULL, 0},
		{"logs/a.txt", "alpha\n", 6, 0, NULL, 1600000000},
		blob_ent("inner1.tar.gz", tgz1),
		ENT("z.txt", "zulu\n"),
	};
	save(name, build(F_TAR, ARCHIVE_FILTER_GZIP, out, 4));
	free(cgz.p);
	free(tar2.p);
	free(tgz1.p);
}

/* ---- tests ---- */

static void test_nested_three_deep(void **state)
{
	struct rec r;
	struct iq_diag d;
	(void)state;
	make_nested("outer.tar.gz");
	rec_init(&r);
	assert_int_equal(walk(tpath("outer.tar.gz"), &r, NULL, &d), 0);
	assert_int_equal(r.np, 0);
	assert_int_equal(r.n, 5);
	expect_member(&r, 0, "outer.tar.gz!logs/a.txt", 0, "alpha\n");
	expect_member(&r, 1, "outer.tar.gz!inner1.tar.gz!b.txt", 1, "bravo\n");
	expect_member(&r, 2, "outer.tar.gz!inner1.tar.gz!inner2.tar!c.log.gz", 2, "charlie\n");
	expect_member(&r, 3, "outer.tar.gz!inner1.tar.gz!inner2.tar!d.txt", 2, "delta\n");
	expect_member(&r, 4, "outer.tar.gz!z.txt", 0, "zulu\n");
	assert_int_equal(r.m[0].mtime, 1600000000 * IQ_NS_PER_SEC);
	assert_int_equal(r.m[0].size, 6);
	/* a compressed member: its stored (compressed) size, its entry's time */
	assert_true(r.m[2].size > 8);
	assert_int_equal(r.m[2].mtime, 1700000000 * IQ_NS_PER_SEC);
	rec_release(&r);
}

static void test_unread_members_are_skipped(void **state)
{
	static const long reads[] = {0, 1, 3};
	(void)state;
	make_nested("skip.tar.gz");
	for (size_t k = 0; k < sizeof reads / sizeof reads[0]; k++) {
		struct rec r;
		struct iq_diag d;
		rec_init(&r);
		r.read_max = reads[k];
		assert_int_equal(walk(tpath("skip.tar.gz"), &r, NULL, &d), 0);
		assert_int_equal(r.np, 0);
		assert_int_equal(r.n, 5);
		assert_string_equal(r.m[2].path, "skip.tar.gz!inner1.tar.gz!inner2.tar!c.log.gz");
		assert_string_equal(r.m[4].path, "skip.tar.gz!z.txt");
		assert_int_equal(r.m[4].data.len, reads[k]);
		assert_memory_equal(r.m[4].data.p, "zulu\n", (size_t)reads[k]);
		rec_release(&r);
	}
}

static void test_large_reads_across_nesting(void **state)
{
	struct rec r;
	struct iq_diag d;
	(void)state;
	make_nested("big-chunks.tar.gz");
	rec_init(&r);
	r.chunk = 65536;
	assert_int_equal(walk(tpath("big-chunks.tar.gz"), &r, NULL, &d), 0);
	assert_int_equal(r.n, 5);
	expect_member(&r, 2, "big-chunks.tar.gz!inner1.tar.gz!inner2.tar!c.log.gz", 2,
		      "charlie\n");
	rec_release(&r);
}

static void test_max_depth_stops_nesting(void **state)
{
	struct rec r;
	struct iq_diag d;
	struct iq_walk_opts o = {.max_depth = 2};
	(void)state;
	make_nested("deep.tar.gz");
	rec_init(&r);
	assert_int_equal(walk(tpath("deep.tar.gz"), &r, &o, &d), 0);
	assert_int_equal(r.n, 4);
	expect_member(&r, 1, "deep.tar.gz!inner1.tar.gz!b.txt", 1, "bravo\n");
	expect_member(&r, 2, "deep.tar.gz!inner1.tar.gz!inner2.tar!d.txt", 2, "delta\n");
	assert_int_equal(r.np, 1);
	assert_string_equal(r.ppath[0], "deep.tar.gz!inner1.tar.gz!inner2.tar!c.log.gz");
	assert_string_equal(r.pmsg[0], "nested deeper than 2 archives: not opened");
	assert_int_equal(r.pkind[0], IQ_PROBLEM_CUT);
	rec_release(&r);
}

static void test_zip_top_level_and_nested(void **state)
{
	struct rec r;
	struct iq_diag d;
	struct blob g = gz_of("gzipped\n", 8);
	struct ent ze[] = {ENT("a.txt", "in zip\n"), ENT("dir/b.txt", "bee\n"),
			   blob_ent("c.log.gz", g)};
	struct blob zip = build(F_ZIP, ARCHIVE_FILTER_NONE, ze, 3);
	struct ent te[] = {blob_ent("in.zip", zip), ENT("after.txt", "after\n")};
	(void)state;
	save("t.tgz", build(F_TAR, ARCHIVE_FILTER_GZIP, te, 2));
	save("b.zip", zip);
	free(g.p);

	rec_init(&r);
	assert_int_equal(walk(tpath("b.zip"), &r, NULL, &d), 0);
	assert_int_equal(r.np, 0);
	assert_int_equal(r.n, 3);
	expect_member(&r, 0, "b.zip!a.txt", 0, "in zip\n");
	expect_member(&r, 1, "b.zip!dir/b.txt", 0, "bee\n");
	expect_member(&r, 2, "b.zip!c.log.gz", 0, "gzipped\n");
	rec_release(&r);

	/* a zip inside a tgz is read as a stream, without seeking */
	rec_init(&r);
	assert_int_equal(walk(tpath("t.tgz"), &r, NULL, &d), 0);
	assert_int_equal(r.np, 0);
	assert_int_equal(r.n, 4);
	expect_member(&r, 0, "t.tgz!in.zip!a.txt", 1, "in zip\n");
	expect_member(&r, 1, "t.tgz!in.zip!dir/b.txt", 1, "bee\n");
	expect_member(&r, 2, "t.tgz!in.zip!c.log.gz", 1, "gzipped\n");
	expect_member(&r, 3, "t.tgz!after.txt", 0, "after\n");
	rec_release(&r);
}

/* A tar with filter, a compressed member inside, read at the top level. */
static void check_filter(int filter, const char *name)
{
	struct rec r;
	struct iq_diag d;
	char exp[64];
	struct blob g = gz_of("inner gz\n", 9);
	struct ent e[] = {ENT("var/log/syslog", "sys\n"), blob_ent("var/log/app.log.1.gz", g)};
	struct blob b = build(F_TAR, filter, e, 2);
	free(g.p);
	save(name, b);
	rec_init(&r);
	assert_int_equal(walk(tpath(name), &r, NULL, &d), 0);
	assert_int_equal(r.np, 0);
	assert_int_equal(r.n, 2);
	snprintf(exp, sizeof exp, "%s!var/log/syslog", name);
	expect_member(&r, 0, exp, 0, "sys\n");
	snprintf(exp, sizeof exp, "%s!var/log/app.log.1.gz", name);
	expect_member(&r, 1, exp, 0, "inner gz\n");
	rec_release(&r);
}

static void test_tar_zst(void **state)
{
	(void)state;
	check_filter(ARCHIVE_FILTER_ZSTD, "b.tar.zst");
}

static void test_tar_xz(void **state)
{
	(void)state;
	check_filter(ARCHIVE_FILTER_XZ, "b.tar.xz");
}

static void test_tar_bz2(void **state)
{
	(void)state;
	check_filter(ARCHIVE_FILTER_BZIP2, "b.tar.bz2");
}

static void test_plain_tar(void **state)
{
	(void)state;
	check_filter(ARCHIVE_FILTER_NONE, "b.tar");
}

static void test_7z_and_cpio(void **state)
{
	struct rec r;
	struct iq_diag d;
	struct ent e[] = {ENT("x/seven.txt", "seven\n"), ENT("y.txt", "why\n")};
	(void)state;
	save("s.7z", build(F_7Z, ARCHIVE_FILTER_NONE, e, 2));
	save("s.cpio.gz", build(F_CPIO, ARCHIVE_FILTER_GZIP, e, 2));
	rec_init(&r);
	assert_int_equal(walk(tpath("s.7z"), &r, NULL, &d), 0);
	assert_int_equal(r.np, 0);
	assert_int_equal(r.n, 2);
	expect_member(&r, 0, "s.7z!x/seven.txt", 0, "seven\n");
	expect_member(&r, 1, "s.7z!y.txt", 0, "why\n");
	rec_release(&r);
	rec_init(&r);
	assert_int_equal(walk(tpath("s.cpio.gz"), &r, NULL, &d), 0);
	assert_int_equal(r.np, 0);
	assert_int_equal(r.n, 2);
	expect_member(&r, 0, "s.cpio.gz!x/seven.txt", 0, "seven\n");
	expect_member(&r, 1, "s.cpio.gz!y.txt", 0, "why\n");
	rec_release(&r);
}

static void test_single_gz_file(void **state)
{
	struct rec r;
	struct iq_diag d;
	struct blob g = gz_of("line one\nline two\n", 18);
	size_t stored = g.n;
	(void)state;
	save("kern.log.gz", g);
	rec_init(&r);
	assert_int_equal(walk(tpath("kern.log.gz"), &r, NULL, &d), 0);
	assert_int_equal(r.np, 0);
	assert_int_equal(r.n, 1);
	expect_member(&r, 0, "kern.log.gz", 0, "line one\nline two\n");
	assert_int_equal(r.m[0].size, stored);
	assert_true(r.m[0].mtime != IQ_TIME_NONE);
	rec_release(&r);
}

static void test_plain_and_empty_file(void **state)
{
	struct rec r;
	struct iq_diag d;
	(void)state;
	write_file(tpath("kern.log"), "[    0.000000] Linux version\n", 29);
	write_file(tpath("empty.log"), NULL, 0);
	rec_init(&r);
	assert_int_equal(walk(tpath("kern.log"), &r, NULL, &d), 0);
	assert_int_equal(r.np, 0);
	assert_int_equal(r.n, 1);
	expect_member(&r, 0, "kern.log", 0, "[    0.000000] Linux version\n");
	assert_int_equal(r.m[0].size, 29);
	rec_release(&r);
	rec_init(&r);
	assert_int_equal(walk(tpath("empty.log"), &r, NULL, &d), 0);
	assert_int_equal(r.n, 1);
	expect_member(&r, 0, "empty.log", 0, "");
	assert_int_equal(r.m[0].size, 0);
	rec_release(&r);
}

static void test_directory_sorted_links_not_followed(void **state)
{
	struct rec r;
	struct iq_diag d;
	struct ent te[] = {ENT("x.txt", "ex\n")};
	(void)state;
	assert_int_equal(mkdir(tpath("bundle"), 0755), 0);
	assert_int_equal(mkdir(tpath("bundle/sub"), 0755), 0);
	write_file(tpath("bundle/b.txt"), "b\n", 2);
	write_file(tpath("bundle/a.txt"), "a\n", 2);
	write_file(tpath("bundle/sub.txt"), "s\n", 2);
	write_file(tpath("bundle/sub/z.txt"), "z\n", 2);
	write_file(tpath("outside.txt"), "secret\n", 7);
	save("bundle/c.tar.gz", build(F_TAR, ARCHIVE_FILTER_GZIP, te, 1));
	assert_int_equal(symlink("../outside.txt", tpath("bundle/link")), 0);
	assert_int_equal(symlink("..", tpath("bundle/sub/up")), 0);
	assert_int_equal(mkfifo(tpath("bundle/sub/fifo"), 0644), 0);

	rec_init(&r);
	/* a trailing slash does not change the name */
	assert_int_equal(walk(tpath("bundle/"), &r, NULL, &d), 0);
	assert_int_equal(r.n, 5);
	expect_member(&r, 0, "bundle/a.txt", 0, "a\n");
	expect_member(&r, 1, "bundle/b.txt", 0, "b\n");
	expect_member(&r, 2, "bundle/c.tar.gz!x.txt", 1, "ex\n");
	expect_member(&r, 3, "bundle/sub/z.txt", 0, "z\n");
	expect_member(&r, 4, "bundle/sub.txt", 0, "s\n");
	assert_int_equal(r.np, 3);
	assert_string_equal(r.ppath[0], "bundle/link");
	assert_string_equal(r.pmsg[0], "symbolic link to ../outside.txt not followed");
	assert_int_equal(r.pkind[0], IQ_PROBLEM_SKIPPED);
	assert_int_equal(r.pkind[1], IQ_PROBLEM_SKIPPED); /* the fifo */
	assert_string_equal(r.ppath[1], "bundle/sub/fifo");
	assert_string_equal(r.ppath[2], "bundle/sub/up");
	rec_release(&r);
}

static void test_unreadable_file_in_directory(void **state)
{
	struct rec r;
	struct iq_diag d;
	(void)state;
	if (geteuid() == 0) {
		print_message("running as root: permissions are not enforced: skipped\n");
		skip();
	}
	assert_int_equal(mkdir(tpath("perm"), 0755), 0);
	write_file(tpath("perm/a.txt"), "a\n", 2);
	write_file(tpath("perm/b.txt"), "b\n", 2);
	assert_int_equal(chmod(tpath("perm/a.txt"), 0), 0);
	rec_init(&r);
	assert_int_equal(walk(tpath("perm"), &r, NULL, &d), 0);
	assert_int_equal(r.n, 1);
	expect_member(&r, 0, "perm/b.txt", 0, "b\n");
	assert_int_equal(r.np, 1);
	assert_true(find_problem(&r, "perm/a.txt", "cannot open") >= 0);
	rec_release(&r);
}

static void test_truncated_tar_gz(void **state)
{
	struct rec r;
	struct iq_diag d;
	unsigned char *big = noise(200000);
	struct ent e[] = {ENT("a.txt", "first\n"), {"big.bin", big, 200000, 0, NULL, 0},
			  ENT("c.txt", "never\n")};
	struct blob b = build(F_TAR, ARCHIVE_FILTER_GZIP, e, 3);
	(void)state;
	b.n = b.n * 6 / 10;
	save("trunc.tar.gz", b);
	rec_init(&r);
	assert_int_equal(walk(tpath("trunc.tar.gz"), &r, NULL, &d), 0);
	assert_int_equal(r.n, 2);
	expect_member(&r, 0, "trunc.tar.gz!a.txt", 0, "first\n");
	/* the member the archive broke in: its bytes up to there, then the error */
	assert_string_equal(r.m[1].path, "trunc.tar.gz!big.bin");
	assert_int_equal(r.m[1].err, IQ_ERR_INPUT);
	assert_true(r.m[1].msg[0] != '\0');
	assert_true(r.m[1].data.len > 0 && r.m[1].data.len < 200000);
	assert_memory_equal(r.m[1].data.p, big, r.m[1].data.len);
	assert_true(r.np >= 1);
	assert_string_equal(r.ppath[r.np - 1], "trunc.tar.gz");
	assert_int_equal(r.pkind[r.np - 1], IQ_PROBLEM_LOST);
	assert_true(r.pmsg[r.np - 1][0] != '\0');
	rec_release(&r);

	/* unread, the broken member is skipped and the archive still reported */
	rec_init(&r);
	r.read_max = 0;
	assert_int_equal(walk(tpath("trunc.tar.gz"), &r, NULL, &d), 0);
	assert_int_equal(r.n, 2);
	assert_true(find_problem(&r, "trunc.tar.gz", "") >= 0);
	rec_release(&r);
	free(big);
}

/* Every byte a gzip stream cut short still inflates to: ISA-L given all
 * of it at once, then asked again with no input left. */
static size_t inflatable(const unsigned char *p, size_t n, unsigned char *out, size_t cap)
{
	struct inflate_state st;
	isal_inflate_init(&st);
	st.crc_flag = ISAL_GZIP;
	st.next_in = (uint8_t *)p;
	st.avail_in = (uint32_t)n;
	st.next_out = out;
	st.avail_out = (uint32_t)cap;
	uint32_t before;
	do {
		before = st.avail_out;
		isal_inflate(&st);
	} while (st.avail_out != before);
	return cap - st.avail_out;
}

/* A small .tar.gz cut in its third member (head -c of a bundle): the two
 * members before the cut are whole, without an error, and the third has
 * every byte before the cut. ISA-L held back output when its input ran
 * out, and archive_read_data() dropped the bytes of its last block on the
 * error, so nothing at all was read of such a bundle. */
static void test_truncated_small_tar_gz_keeps_members(void **state)
{
	struct rec r;
	struct iq_diag d;
	static char a[1024], b[2048], c[60000];
	for (size_t i = 0; i < sizeof a; i++)
		a[i] = i % 64 == 63 ? '\n' : 'a' + (char)(i % 26);
	for (size_t i = 0; i < sizeof b; i++)
		b[i] = i % 80 == 79 ? '\n' : 'A' + (char)(i % 23);
	/* lines that deflate poorly enough that the cut lands inside c */
	unsigned x = 12345;
	for (size_t i = 0; i < sizeof c; i++) {
		x = x * 1103515245u + 12345u;
		c[i] = i % 100 == 99 ? '\n' : (char)('0' + (x >> 16) % 40);
	}
	struct ent e[] = {{"a.txt", a, sizeof a, 0, NULL, 0}, {"b.txt", b, sizeof b, 0, NULL, 0},
			  {"c.log", c, sizeof c, 0, NULL, 0}};
	struct blob t = build(F_TAR, ARCHIVE_FILTER_GZIP, e, 3);
	(void)state;
	t.n /= 2;
	unsigned char *out = malloc(1 << 20);
	assert_non_null(out);
	size_t full = inflatable(t.p, t.n, out, 1 << 20);
	free(out);
	/* a.txt, b.txt and c.log's header come first: 512 + 1024 + 512 + 2048 + 512 */
	assert_true(full > 4608 && full < 4608 + sizeof c);
	save("small.tar.gz", t);
	rec_init(&r);
	r.chunk = 65536;
	assert_int_equal(walk(tpath("small.tar.gz"), &r, NULL, &d), 0);
	assert_int_equal(r.n, 3);
	expect_member(&r, 0, "small.tar.gz!a.txt", 0, NULL);
	assert_int_equal(r.m[0].err, 0);
	assert_int_equal(r.m[0].data.len, sizeof a);
	assert_memory_equal(r.m[0].data.p, a, sizeof a);
	assert_int_equal(r.m[1].err, 0);
	assert_int_equal(r.m[1].data.len, sizeof b);
	assert_memory_equal(r.m[1].data.p, b, sizeof b);
	assert_string_equal(r.m[2].path, "small.tar.gz!c.log");
	assert_int_equal(r.m[2].err, IQ_ERR_INPUT);
	assert_string_equal(r.m[2].msg, "truncated gzip input");
	assert_int_equal(r.m[2].data.len, full - 4608);
	assert_memory_equal(r.m[2].data.p, c, r.m[2].data.len);
	rec_release(&r);
}

static void test_truncated_nested_member(void **state)
{
	struct rec r;
	struct iq_diag d;
	unsigned char *big = noise(400000);
	struct blob g = gz_of(big, 400000);
	struct ent e[] = {ENT("a.txt", "first\n"), blob_ent("app.log.gz", g),
			  ENT("c.txt", "still here\n")};
	(void)state;
	g.n /= 2;
	e[1] = blob_ent("app.log.gz", g);
	save("tn.tar", build(F_TAR, ARCHIVE_FILTER_NONE, e, 3));
	free(g.p);
	rec_init(&r);
	assert_int_equal(walk(tpath("tn.tar"), &r, NULL, &d), 0);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.m[1].path, "tn.tar!app.log.gz");
	assert_int_equal(r.m[1].err, IQ_ERR_INPUT);
	assert_string_equal(r.m[1].msg, "truncated gzip input");
	/* libarchive's gzip filter loses the output block the input ended in */
	assert_true(r.m[1].data.len > 100000 && r.m[1].data.len < 400000);
	assert_memory_equal(r.m[1].data.p, big, r.m[1].data.len);
	/* the outer archive is intact: the next member is read */
	expect_member(&r, 2, "tn.tar!c.txt", 0, "still here\n");
	rec_release(&r);
	free(big);
}

static void test_missing_path(void **state)
{
	struct rec r;
	struct iq_diag d;
	char exp[600];
	(void)state;
	rec_init(&r);
	assert_int_equal(walk(tpath("no-such-bundle.tgz"), &r, NULL, &d), IQ_ERR_INPUT);
	snprintf(exp, sizeof exp, "cannot open '%s': No such file or directory",
		 tpath("no-such-bundle.tgz"));
	assert_string_equal(d.msg, exp);
	assert_int_equal(r.n, 0);
	rec_release(&r);
}

static void test_member_over_limit(void **state)
{
	struct rec r;
	struct iq_diag d;
	unsigned char *big = noise(5000);
	struct iq_walk_opts o = {.max_member_bytes = 1000};
	struct blob g = gz_of(big, 5000);
	struct ent e[] = {{"big.txt", big, 5000, 0, NULL, 0},
			  {"exact.txt", big, 1000, 0, NULL, 0},
			  blob_ent("bomb.log.gz", g),
			  ENT("small.txt", "small\n")};
	(void)state;
	save("lim.tar.gz", build(F_TAR, ARCHIVE_FILTER_GZIP, e, 4));
	free(g.p);
	rec_init(&r);
	assert_int_equal(walk(tpath("lim.tar.gz"), &r, &o, &d), 0);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.m[0].data.len, 1000);
	assert_memory_equal(r.m[0].data.p, big, 1000);
	assert_int_equal(r.m[1].data.len, 1000);
	assert_int_equal(r.m[2].data.len, 1000);
	assert_memory_equal(r.m[2].data.p, big, 1000);
	expect_member(&r, 3, "lim.tar.gz!small.txt", 0, "small\n");
	assert_int_equal(r.np, 2);
	assert_string_equal(r.ppath[0], "lim.tar.gz!big.txt");
	assert_int_equal(r.pkind[0], IQ_PROBLEM_CUT);
	assert_string_equal(r.pmsg[0],
			    "decompressed size over the limit of 1000 bytes: rest not read"
			    " (--max-member-bytes raises it)");
	assert_string_equal(r.ppath[1], "lim.tar.gz!bomb.log.gz");
	assert_string_equal(r.pmsg[1],
			    "decompressed size over the limit of 1000 bytes: rest not read"
			    " (--max-member-bytes raises it)");
	rec_release(&r);
	free(big);
}

static void test_total_limit_stops_walk(void **state)
{
	struct rec r;
	struct iq_diag d;
	unsigned char *big = noise(1000);
	struct iq_walk_opts o = {.max_total_bytes = 1500};
	struct ent e[] = {{"1.txt", big, 1000, 0, NULL, 0}, {"2.txt", big, 1000, 0, NULL, 0},
			  {"3.txt", big, 1000, 0, NULL, 0}};
	(void)state;
	save("tot.tar", build(F_TAR, ARCHIVE_FILTER_NONE, e, 3));
	rec_init(&r);
	assert_int_equal(walk(tpath("tot.tar"), &r, &o, &d), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.m[0].data.len, 1000);
	assert_int_equal(r.m[1].data.len, 500);
	assert_int_equal(r.np, 1);
	assert_string_equal(r.ppath[0], "tot.tar!2.txt");
	assert_int_equal(r.pkind[0], IQ_PROBLEM_CUT);
	assert_non_null(strstr(r.pmsg[0], "over the limit of 1500 bytes"));
	rec_release(&r);
	free(big);
}

static void test_skipped_bomb_counts_towards_total(void **state)
{
	enum { ZN = 8 << 20 };
	unsigned char *zeros = calloc(1, ZN);
	struct ent e[] = {{"zeros.bin", zeros, ZN, 0, NULL, 0}, ENT("after.txt", "after\n")};
	struct blob tgz = build(F_TAR, ARCHIVE_FILTER_GZIP, e, 2);
	struct ent outer[] = {blob_ent("in.tar.gz", tgz)};
	(void)state;
	save("nest-bomb.tar", build(F_TAR, ARCHIVE_FILTER_NONE, outer, 1));
	save("bomb.tar.gz", tgz);
	free(zeros);
	for (int k = 0; k < 2; k++) {
		struct rec r;
		struct iq_diag d;
		struct iq_walk_opts o = {.max_total_bytes = 100000};
		const char *name = k ? "nest-bomb.tar" : "bomb.tar.gz";
		const char *member = k ? "nest-bomb.tar!in.tar.gz!zeros.bin" : "bomb.tar.gz!zeros.bin";
		rec_init(&r);
		r.read_max = 0; /* fn reads nothing: the walker skips it all */
		assert_int_equal(walk(tpath(name), &r, &o, &d), 0);
		assert_int_equal(r.n, 1);
		assert_string_equal(r.m[0].path, member);
		assert_int_equal(r.np, 1);
		assert_string_equal(r.ppath[0], member);
		assert_non_null(strstr(r.pmsg[0], "over the limit of 100000 bytes: rest of the bundle not read"));
		rec_release(&r);
	}
}

static void test_links_and_odd_names_in_archive(void **state)
{
	struct rec r;
	struct iq_diag d;
	struct ent e[] = {
		ENT("var/log/pods/x/0.log", "pod line\n"),
		{"var/log/containers/x.log", NULL, 0, AE_IFLNK, "../pods/x/0.log", 0},
		{"hard.log", NULL, 0, HARDLINK, "var/log/pods/x/0.log", 0},
		ENT("../up.txt", "up\n"),
		ENT("/abs.txt", "abs\n"),
		ENT("ctl\x1b[31m.txt", "ctl\n"),
	};
	(void)state;
	save("links.tar", build(F_TAR, ARCHIVE_FILTER_NONE, e, 6));
	rec_init(&r);
	assert_int_equal(walk(tpath("links.tar"), &r, NULL, &d), 0);
	assert_int_equal(r.n, 4);
	expect_member(&r, 0, "links.tar!var/log/pods/x/0.log", 0, "pod line\n");
	expect_member(&r, 1, "links.tar!../up.txt", 0, "up\n");
	expect_member(&r, 2, "links.tar!/abs.txt", 0, "abs\n");
	expect_member(&r, 3, "links.tar!ctl\x1b[31m.txt", 0, "ctl\n");
	assert_int_equal(r.np, 2);
	assert_string_equal(r.ppath[0], "links.tar!var/log/containers/x.log");
	assert_string_equal(r.pmsg[0], "symbolic link to ../pods/x/0.log not followed");
	assert_string_equal(r.ppath[1], "links.tar!hard.log");
	assert_string_equal(r.pmsg[1], "hard link to var/log/pods/x/0.log not followed");
	rec_release(&r);
}

static void test_false_magic_read_as_is(void **state)
{
	struct rec r;
	struct iq_diag d;
	struct ent e[] = {ENT("fake.gz", "\x1f\x8bnot gzip at all\n"),
			  ENT("BZh.txt", "BZh9 is how bzip2 starts\n")};
	(void)state;
	save("fake.tar", build(F_TAR, ARCHIVE_FILTER_NONE, e, 2));
	rec_init(&r);
	assert_int_equal(walk(tpath("fake.tar"), &r, NULL, &d), 0);
	assert_int_equal(r.np, 0);
	assert_int_equal(r.n, 2);
	expect_member(&r, 0, "fake.tar!fake.gz", 0, "\x1f\x8bnot gzip at all\n");
	expect_member(&r, 1, "fake.tar!BZh.txt", 0, "BZh9 is how bzip2 starts\n");
	rec_release(&r);
}

static void test_empty_compressed_member(void **state)
{
	struct rec r;
	struct iq_diag d;
	struct blob g = gz_of("", 0);
	struct ent e[] = {blob_ent("empty.log.gz", g), ENT("empty.txt", "")};
	(void)state;
	save("e.tar", build(F_TAR, ARCHIVE_FILTER_NONE, e, 2));
	free(g.p);
	rec_init(&r);
	assert_int_equal(walk(tpath("e.tar"), &r, NULL, &d), 0);
	assert_int_equal(r.np, 0);
	assert_int_equal(r.n, 2);
	expect_member(&r, 0, "e.tar!empty.log.gz", 0, "");
	expect_member(&r, 1, "e.tar!empty.txt", 0, "");
	rec_release(&r);
}

static void test_compressed_zeros_reported(void **state)
{
	struct rec r;
	struct iq_diag d;
	unsigned char *zeros = calloc(1, 4096);
	struct blob g = gz_of(zeros, 4096);
	struct ent e[] = {blob_ent("zeros.gz", g), ENT("next.txt", "next\n")};
	(void)state;
	save("z.tar", build(F_TAR, ARCHIVE_FILTER_NONE, e, 2));
	free(g.p);
	free(zeros);
	rec_init(&r);
	assert_int_equal(walk(tpath("z.tar"), &r, NULL, &d), 0);
	/* read as an empty tar by libarchive: not silently dropped */
	assert_int_equal(r.n, 1);
	expect_member(&r, 0, "z.tar!next.txt", 0, "next\n");
	assert_int_equal(r.np, 1);
	assert_true(find_problem(&r, "z.tar!zeros.gz", "no entries") >= 0);
	rec_release(&r);
}

static void test_callback_result_stops_walk(void **state)
{
	struct rec r;
	struct iq_diag d;
	(void)state;
	make_nested("stop.tar.gz");
	rec_init(&r);
	r.stop_at = 2;
	assert_int_equal(walk(tpath("stop.tar.gz"), &r, NULL, &d), 7);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.np, 0);
	rec_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nested_three_deep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unread_members_are_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_reads_across_nesting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_depth_stops_nesting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zip_top_level_and_nested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tar_zst, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tar_xz, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tar_bz2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plain_tar, setup, teardown),
		cmocka_unit_test_setup_teardown(test_7z_and_cpio, setup, teardown),
		cmocka_unit_test_setup_teardown(test_single_gz_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plain_and_empty_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_sorted_links_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_file_in_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_tar_gz, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_small_tar_gz_keeps_members, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_nested_member, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_member_over_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_total_limit_stops_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_skipped_bomb_counts_towards_total, setup, teardown),
		cmocka_unit_test_setup_teardown(test_links_and_odd_names_in_archive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_false_magic_read_as_is, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_compressed_member, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compressed_zeros_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_result_stops_walk, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
