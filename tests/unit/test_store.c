/* test_store.c: the database writer: schema version, typed rows, no
 * duplicates on re-ingest, and recovery of a file an interrupted run left
 * half-read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../analyzer/store/store.h"

static char dir[64];
static char dbpath[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/iq-store-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(dbpath, sizeof dbpath, "%s/t.db", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd);
}

static long count(struct iq_store *s, const char *sql)
{
	sqlite3_stmt *q;
	long n = -1;
	if (sqlite3_prepare_v2(iq_store_db(s), sql, -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

static int64_t add_file(struct iq_store *s, const char *path, int *already)
{
	struct iq_ident id;
	memset(&id, 0, sizeof id);
	id.restart = -1;
	id.node = IQ_STR_LIT("node-a");
	int64_t fid = 0;
	assert_int_equal(iq_store_file_begin(s, path, "b.tgz", "ingress-nginx", "test", IQ_TIME_NONE,
					     &id, &fid, already), 0);
	return fid;
}

static void add_http(struct iq_store *s, int64_t fid)
{
	struct iq_ident fidn;
	memset(&fidn, 0, sizeof fidn);
	fidn.node = IQ_STR_LIT("node-a");
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_HTTP);
	r.line = 7;
	r.ts = 1000;
	r.ts_how = IQ_TS_EXPLICIT;
	r.text = IQ_STR_LIT("GET / 502");
	r.u.http.status = 502;
	r.u.http.n_upstreams = 2;
	r.u.http.upstream_addr[0] = IQ_STR_LIT("10.0.0.1:8000");
	r.u.http.upstream_status[0] = 502;
	r.u.http.upstream_addr[1] = IQ_STR_LIT("10.0.0.2:8000");
	r.u.http.upstream_status[1] = 200;
	int64_t rid;
	assert_int_equal(iq_store_record(s, fid, &fidn, &r, &rid), 0);
	assert_int_equal(iq_store_match(s, rid, "p", "lb-5xx", "{}"), 0);
	assert_int_equal(iq_store_flush(s), 0); /* r dies here */
}

/* Records are held back and written many to a statement: 203 of them
 * (more than the 64 held back, not a multiple of 32), every third an HTTP
 * request with 1..3 upstream attempts, must come out as if written one by
 * one: consecutive ids, every column, every typed row. */
static void test_many_records_in_one_batch(void **state)
{
	(void)state;
	struct iq_store *s;
	struct iq_diag d;
	int already;
	char many[160];
	snprintf(many, sizeof many, "%s/many.db", dir);
	assert_int_equal(iq_store_open(many, 0, &s, &d), 0);
	int64_t fid = add_file(s, "b.tgz!lb/many.log", &already);
	struct iq_ident fidn;
	memset(&fidn, 0, sizeof fidn);
	fidn.node = IQ_STR_LIT("node-a");
	fidn.pod = IQ_STR_LIT("pod-a");
	enum { N = 203 };
	static struct iq_record r[N];
	static char text[N][32];
	int64_t first = 0, prev = 0;
	for (int i = 0; i < N; i++) {
		int http = i % 3 == 0;
		iq_record_init(&r[i], http ? IQ_KIND_HTTP : IQ_KIND_LOG);
		r[i].line = i + 1;
		r[i].nlines = 1;
		r[i].ts = 1000 + i;
		r[i].ts_how = IQ_TS_EXPLICIT;
		snprintf(text[i], sizeof text[i], "line %d", i + 1);
		r[i].text = (struct iq_str){text[i], strlen(text[i])};
		if (i == 5)
			r[i].id.pod = IQ_STR_LIT("pod-b");
		if (http) {
			r[i].u.http.status = 500 + i % 4;
			r[i].u.http.n_upstreams = 1 + (i / 3) % 3;
			for (int k = 0; k < r[i].u.http.n_upstreams; k++) {
				r[i].u.http.upstream_addr[k] = IQ_STR_LIT("10.0.0.9:80");
				r[i].u.http.upstream_status[k] = 200 + k;
			}
		}
		int64_t rid;
		assert_int_equal(iq_store_record(s, fid, &fidn, &r[i], &rid), 0);
		if (i == 0)
			first = rid;
		else
			assert_int_equal(rid, prev + 1);
		prev = rid;
		if (i % 10 == 0)
			assert_int_equal(iq_store_match(s, rid, "p", "sig", NULL), 0);
	}
	struct iq_file_stats st = {.lines_read = N, .lines_parsed = N, .records = N};
	assert_int_equal(iq_store_file_end(s, fid, &st, 10, "done", NULL), 0);
	assert_int_equal(iq_store_finish(s), 0);
	assert_int_equal(count(s, "SELECT count(*) FROM records WHERE file_id IS NOT NULL"), N);
	assert_int_equal(count(s, "SELECT count(*) FROM records WHERE text = 'line ' || line"
				  " AND ts = 999 + line AND node = 'node-a' AND nlines = 1"), N);
	assert_int_equal(count(s, "SELECT count(*) FROM records WHERE pod = 'pod-b' AND line = 6"), 1);
	assert_int_equal(count(s, "SELECT count(*) FROM records WHERE pod = 'pod-a'"), N - 1);
	assert_int_equal(count(s, "SELECT max(id) - min(id) + 1 FROM records"), N);
	assert_int_equal(count(s, "SELECT min(id) FROM records"), first);
	assert_int_equal(count(s, "SELECT last_record - first_record + 1 FROM files"), N);
	assert_int_equal(count(s, "SELECT count(*) FROM http_requests h JOIN records r"
				  " ON r.id = h.record_id WHERE h.status = 500 + (r.line - 1) % 4"
				  " AND r.kind = 'http' AND h.ts = r.ts"), 68);
	/* request j = i / 3 (0..67) has 1 + j % 3 attempts: 22 * 6 + 1 + 2 */
	assert_int_equal(count(s, "SELECT count(*) FROM http_upstreams"), 135);
	assert_int_equal(count(s, "SELECT count(*) FROM http_upstreams WHERE attempt = 2"
				  " AND status = 202 AND addr = '10.0.0.9:80'"), 22);
	assert_int_equal(count(s, "SELECT count(*) FROM signal_matches"), 21);
	assert_int_equal(count(s, "SELECT count(*) FROM signal_matches m LEFT JOIN records r"
				  " ON r.id = m.record_id WHERE r.id IS NULL"), 0);
	iq_store_close(s);
}

static void test_typed_rows_and_no_duplicates(void **state)
{
	(void)state;
	struct iq_store *s;
	struct iq_diag d;
	int already;
	assert_int_equal(iq_store_open(dbpath, 0, &s, &d), 0);
	int64_t fid = add_file(s, "b.tgz!lb/access.log", &already);
	assert_int_equal(already, 0);
	add_http(s, fid);
	struct iq_file_stats st = {.lines_read = 1, .lines_parsed = 1, .records = 1};
	assert_int_equal(iq_store_file_end(s, fid, &st, 10, "done", NULL), 0);
	assert_int_equal(iq_store_finish(s), 0);
	assert_int_equal(count(s, "SELECT count(*) FROM http_upstreams WHERE status = 502 AND attempt = 0"), 1);
	assert_int_equal(count(s, "SELECT count(*) FROM records WHERE node = 'node-a' AND line = 7"), 1);
	assert_int_equal(count(s, "PRAGMA user_version"), IQ_SCHEMA_VERSION);
	iq_store_close(s);

	assert_int_equal(iq_store_open(dbpath, 0, &s, &d), 0);
	add_file(s, "b.tgz!lb/access.log", &already);
	assert_int_equal(already, 1);
	assert_int_equal(iq_store_finish(s), 0);
	assert_int_equal(count(s, "SELECT count(*) FROM records"), 1);
	iq_store_close(s);
}

static void test_half_read_file_is_read_again(void **state)
{
	(void)state;
	struct iq_store *s;
	struct iq_diag d;
	int already;
	assert_int_equal(iq_store_open(dbpath, 0, &s, &d), 0);
	int64_t fid = add_file(s, "b.tgz!lb/half.log", &already);
	add_http(s, fid);
	/* no file_end: as if the run was killed after a commit */
	assert_int_equal(iq_store_finish(s), 0);
	iq_store_close(s);
	assert_int_equal(iq_store_open(dbpath, 0, &s, &d), 0);
	assert_int_equal(count(s, "SELECT count(*) FROM files WHERE status = 'reading'"), 1);
	fid = add_file(s, "b.tgz!lb/half.log", &already);
	assert_int_equal(already, 0);
	assert_int_equal(count(s, "SELECT count(*) FROM files WHERE path = 'b.tgz!lb/half.log'"), 1);
	assert_int_equal(count(s, "SELECT count(*) FROM records r JOIN files f ON f.id = r.file_id"
				  " WHERE f.path = 'b.tgz!lb/half.log'"), 0);
	assert_int_equal(count(s, "SELECT count(*) FROM http_upstreams u LEFT JOIN records r"
				  " ON r.id = u.record_id WHERE r.id IS NULL"), 0);
	iq_store_close(s);
}

static void test_readonly_refuses_other_versions(void **state)
{
	(void)state;
	struct iq_store *s;
	struct iq_diag d;
	char other[160];
	snprintf(other, sizeof other, "%s/other.db", dir);
	sqlite3 *h;
	assert_int_equal(sqlite3_open(other, &h), SQLITE_OK);
	sqlite3_exec(h, "PRAGMA user_version=99; CREATE TABLE x(a);", NULL, NULL, NULL);
	sqlite3_close(h);
	assert_int_equal(iq_store_open(other, 1, &s, &d), IQ_ERR_INPUT);
	assert_non_null(strstr(d.msg, "schema version 99"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_typed_rows_and_no_duplicates),
		cmocka_unit_test(test_many_records_in_one_batch),
		cmocka_unit_test(test_half_read_file_is_read_again),
		cmocka_unit_test(test_readonly_refuses_other_versions),
	};
	return cmocka_run_group_tests_name("store", tests, setup, teardown);
}
