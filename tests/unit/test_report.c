/* test_report.c: the report's escaping (Markdown, XML), the masking of
 * log lines into templates for the unexplained-errors appendix, and the
 * one read of the records behind it (the same rows as its SQL, the same
 * table from two threaded halves as from one read), and the limits
 * section with its Turkish arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../analyzer/report/report_int.h"

static char got[4096];

static const char *md(const char *s, size_t max)
{
	struct iq_buf b;
	iq_buf_init(&b);
	assert_int_equal(iq_md_escape(&b, s, strlen(s), max), 0);
	snprintf(got, sizeof got, "%s", b.p ? b.p : "");
	iq_buf_release(&b);
	return got;
}

static const char *mask(const char *s)
{
	iq_tpl_mask(s, strlen(s), got, sizeof got);
	return got;
}

static void test_md_escapes_table_and_html_specials(void **state)
{
	(void)state;
	assert_string_equal(md("a|b", 100), "a\\|b");
	assert_string_equal(md("<script>&x", 100), "&lt;script&gt;&amp;x");
	assert_string_equal(md("`code` *b* _i_ [l](u) #h ~s~ $m$", 100),
			    "\\`code\\` \\*b\\* \\_i\\_ \\[l\\](u) \\#h \\~s\\~ \\$m\\$");
	assert_string_equal(md("- item", 100), "\\- item");
	assert_string_equal(md("a - b", 100), "a - b");
}

static void test_md_escapes_controls_and_backslashes(void **state)
{
	(void)state;
	/* a terminal escape becomes its control picture, never a control byte;
	 * a backslash is escaped once, so that it renders as one */
	assert_string_equal(md("a\033[31mb", 100), "a\xe2\x90\x9b" "\\[31mb");
	assert_string_equal(md("tab\there", 100), "tab here");
	assert_string_equal(md("c:\\dir", 100), "c:\\\\dir");
	assert_string_equal(md("\xc2\x9b" "2J \xff", 100), "\xef\xbf\xbd" "2J \xef\xbf\xbd");
	for (const char *p = md("\x01\x02\x7f", 100); *p; p++)
		assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
}

static void test_md_breaks_links_and_block_starts(void **state)
{
	(void)state;
	assert_string_equal(md("see http://x.io/a and HTTPS://y", 100), "see http\\://x.io/a and HTTPS\\://y");
	assert_string_equal(md("www.evil.example", 100), "www\\.evil.example");
	assert_string_equal(md("[x](javascript:alert(1))", 100), "\\[x\\](javascript:alert(1))");
	assert_string_equal(md("12. not a list", 100), "12\\. not a list");
	assert_string_equal(md("<!-- c -->", 100), "&lt;!-- c --&gt;");
}

static const char *code(const char *s, int in_table)
{
	struct iq_buf b;
	iq_buf_init(&b);
	assert_int_equal(iq_md_code(&b, s, strlen(s), 100, in_table), 0);
	snprintf(got, sizeof got, "%s", b.p ? b.p : "");
	iq_buf_release(&b);
	return got;
}

static void test_md_code_spans_show_text_as_is(void **state)
{
	(void)state;
	/* no backslashes inside a code span: it would show them */
	assert_string_equal(code("assumed_utc", 0), "`assumed_utc`");
	assert_string_equal(code("a|b", 0), "`a|b`");
	assert_string_equal(code("a|b", 1), "`a\\|b`");
	/* a fence longer than the backticks inside, padded at a backtick */
	assert_string_equal(code("x `y` z", 0), "``x `y` z``");
	assert_string_equal(code("`", 0), "`` ` ``");
	assert_string_equal(code(" a ", 0), "`  a  `");
	assert_string_equal(code("", 0), "` `");
	assert_string_equal(code("a\033b\nsecond", 0), "`a\xe2\x90\x9b" "b` …");
}

static void test_md_cuts_at_newline_and_length(void **state)
{
	(void)state;
	assert_string_equal(md("first\nsecond", 100), "first …");
	assert_string_equal(md("abcdefgh", 4), "abcd …");
	/* a cut never splits a UTF-8 sequence */
	assert_string_equal(md("ab\xc3\xa7", 3), "ab …");
}

static void test_xml_escapes_markup_and_quotes(void **state)
{
	(void)state;
	struct iq_buf b;
	iq_buf_init(&b);
	const char *s = "<a href=\"x\">'&'</a>\x01";
	assert_int_equal(iq_xml_escape(&b, s, strlen(s)), 0);
	assert_string_equal(b.p, "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;\xe2\x90\x81");
	iq_buf_release(&b);
}

static void test_mask_numbers_and_times(void **state)
{
	(void)state;
	assert_string_equal(mask("retry 3 of 10 after 1.5s at 14:12:03"),
			    "retry <NUM> of <NUM> after <NUM>s at <NUM>");
	assert_string_equal(mask("pod vllm-0 on node gpu-node-12"), "pod vllm-<NUM> on node gpu-node-<NUM>");
	assert_string_equal(mask("1,234 requests"), "<NUM> requests");
}

static void test_mask_ids_addresses_and_strings(void **state)
{
	(void)state;
	assert_string_equal(mask("pod 7c1e4a52-3b9d-4f0e-a6d2-9e81c5f03b17 gone"), "pod <UUID> gone");
	assert_string_equal(mask("connect to 10.244.1.10:8000 refused"), "connect to <IP> refused");
	assert_string_equal(mask("ptr 0xdeadBEEF and id a83f0d6c"), "ptr <HEX> and id <HEX>");
	assert_string_equal(mask("word decade stays"), "word decade stays");
	assert_string_equal(mask("open /var/log/x.log failed"), "open <PATH> failed");
	assert_string_equal(mask("File \"/usr/lib/a.py\", line 3"), "File <STR>, line <NUM>");
	assert_string_equal(mask("it's 'quoted' here"), "it's <STR> here");
	assert_string_equal(mask("a / b"), "a / b");
}

static void test_mask_same_template_for_variants(void **state)
{
	(void)state;
	static char a[sizeof got];
	mask("[error] 35#35: *184076 upstream closed, client: 10.0.0.9, server: llm");
	snprintf(a, sizeof a, "%s", got);
	mask("[error] 38#38: *184143 upstream closed, client: 10.0.0.17, server: llm");
	assert_string_equal(a, got);
}

static void test_mask_is_bounded_and_squeezes_blanks(void **state)
{
	(void)state;
	char small[8];
	size_t n = iq_tpl_mask("abcdefghijklmnop", 16, small, sizeof small);
	assert_int_equal(n, 7);
	assert_string_equal(small, "abcdefg");
	assert_string_equal(mask("  a \t  b  "), "a b");
	assert_int_equal(iq_tpl_mask("x", 1, small, 0), 0);
	/* NUL bytes inside the text are blanks, not the end */
	assert_int_equal(iq_tpl_mask("a\0b", 3, small, sizeof small), 3);
	assert_string_equal(small, "a b");
}

/* ---- the one read of the records (templates.c) ---- */

static uint32_t rnd_state;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) % n;
}

/* A text with or without one of the appendix's words, in mixed case, at
 * a random place (block edges, the tail, after a NUL...). */
static size_t random_text(char *b, size_t cap)
{
	static const char *const words[] = {"error", "exception", "traceback", "fatal", "panic", "failed",
					    "refused", "timed out"};
	static const char *const near[] = {"erro", "errr", "exceptio", "trace back", "fata", "pani", "fail",
					   "refuse", "timed  out", "timedout", "tim ed", "e\xc3\xa9rror", "r"};
	static const char *const fill[] = {"server", "request", "retry", "alpha", "tiered", "fa", "re", "ex",
					   "panicky", " ", "\xc3\xa7", "0x1f", "10.0.0.1", "--", "pod-7"};
	size_t n = 0;
	size_t parts = rnd(12);
	int word_at = rnd(3) ? (int)rnd((uint32_t)parts + 1) : -1;
	for (size_t i = 0; i <= parts && n + 40 < cap; i++) {
		const char *w;
		char tmp[32];
		if ((int)i == word_at) {
			snprintf(tmp, sizeof tmp, "%s", words[rnd(IQ_ARRAY_LEN(words))]);
			for (char *c = tmp; *c; c++)
				if (rnd(2))
					*c = (char)toupper((unsigned char)*c);
			w = tmp;
		} else if (rnd(4) == 0) {
			w = near[rnd(IQ_ARRAY_LEN(near))];
		} else {
			w = fill[rnd(IQ_ARRAY_LEN(fill))];
		}
		size_t l = strlen(w);
		memcpy(b + n, w, l);
		n += l;
		if (rnd(10) == 0)
			b[n++] = '\0'; /* LIKE stops here */
		else if (rnd(2))
			b[n++] = ' ';
	}
	return n;
}

struct tpl_db {
	char path[64];
	struct iq_store *s;
};

/* A database of n records: random kinds, severities, time sources,
 * nodes and times, texts from text(i) (NULL: random_text; text may also
 * set the node, and its times are close together), and signal matches on
 * some. */
/* 1: the database has the summaries the ingest keeps (error_records,
 * time_sources); 0: it is one an older inquest wrote, without them. */
static int tpl_summaries;

static void tpl_db_make(struct tpl_db *t, const char *path, int n,
			size_t (*text)(int i, char *b, size_t cap, char *node))
{
	static const char *const kinds[] = {"log", "log", "log", "kernel", "event", "http", "pod", "gpu"};
	static const char *const sevs[] = {NULL, "INFO", "INFO", "ERROR", "WARN", "WARNING", "E", "W", "Warning",
					   "error", "CRITICAL", "FATAL", "Error", "warning", "fatal", "critical",
					   "F", "err", "crit", "Err", "ERRORS", "warn", "I", "", "C"};
	static const char *const hows[] = {"explicit", "explicit", "explicit", "year_inferred", "assumed_utc",
					   "inherited", "none"};
	struct iq_diag d = {{0}};
	/* a name of this process: other checkouts may run the same test at once */
	if (strcmp(path, ":memory:") != 0)
		snprintf(t->path, sizeof t->path, "%s.%ld", path, (long)getpid());
	else
		snprintf(t->path, sizeof t->path, "%s", path);
	path = t->path;
	if (strcmp(path, ":memory:") != 0)
		unlink(path);
	assert_int_equal(iq_store_open(path, 0, &t->s, &d), 0);
	sqlite3 *db = iq_store_db(t->s);
	assert_int_equal(sqlite3_exec(db, "BEGIN; INSERT INTO files(id, path, bundle) VALUES (1, 'b!a.log', 'b'),"
				      " (2, 'b!k.log', 'b')", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_stmt *q, *m;
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO records(id, file_id, line, nlines, ts, ts_how, kind,"
					    " node, severity, text) VALUES (?1, ?2, ?1, 1, ?3, ?4, ?5, ?6, ?7, ?8)",
					    -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO signal_matches VALUES (?1, 'p', 's', NULL)", -1, &m,
					    NULL), SQLITE_OK);
	char b[600];
	for (int i = 1; i <= n; i++) {
		char node[16];
		snprintf(node, sizeof node, "n%u", rnd(7));
		size_t len = text ? text(i, b, sizeof b, node) : random_text(b, sizeof b);
		sqlite3_bind_int(q, 1, i);
		sqlite3_bind_int(q, 2, 1 + (int)rnd(2));
		if (rnd(8))
			sqlite3_bind_int64(q, 3, (int64_t)1796047200000000000 +
					   (int64_t)rnd(text ? 40 : 100000) * 1000000000);
		else
			sqlite3_bind_null(q, 3);
		sqlite3_bind_text(q, 4, hows[rnd(IQ_ARRAY_LEN(hows))], -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 5, text ? "log" : kinds[rnd(IQ_ARRAY_LEN(kinds))], -1, SQLITE_STATIC);
		if (rnd(6))
			sqlite3_bind_text(q, 6, node, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(q, 6);
		const char *sev = sevs[rnd(IQ_ARRAY_LEN(sevs))];
		if (sev)
			sqlite3_bind_text(q, 7, sev, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(q, 7);
		sqlite3_bind_text(q, 8, b, (int)len, SQLITE_TRANSIENT);
		assert_int_equal(sqlite3_step(q), SQLITE_DONE);
		sqlite3_reset(q);
		if (rnd(20) == 0) {
			sqlite3_bind_int(m, 1, i);
			assert_int_equal(sqlite3_step(m), SQLITE_DONE);
			sqlite3_reset(m);
		}
	}
	sqlite3_finalize(q);
	sqlite3_finalize(m);
	assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	if (!tpl_summaries) {
		/* as an older inquest wrote it: the report reads every record */
		assert_int_equal(sqlite3_exec(db, "DELETE FROM meta WHERE key = 'summaries'", NULL, NULL, NULL),
				 SQLITE_OK);
		return;
	}
	/* the summaries as the ingest keeps them: iq_error_like on each
	 * record no signal tagged, and the records per time source */
	sqlite3_stmt *e;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT id, kind, severity, text FROM records WHERE id NOT IN"
					    " (SELECT record_id FROM signal_matches) ORDER BY id", -1, &q, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO error_records VALUES (?1)", -1, &e, NULL), SQLITE_OK);
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(q, 1);
		int text_kind = !strcmp(kind, "log") || !strcmp(kind, "kernel") || !strcmp(kind, "event");
		if (!iq_error_like(text_kind, (const char *)sqlite3_column_text(q, 2),
				   (size_t)sqlite3_column_bytes(q, 2), (const char *)sqlite3_column_text(q, 3),
				   (size_t)sqlite3_column_bytes(q, 3)))
			continue;
		sqlite3_bind_int64(e, 1, sqlite3_column_int64(q, 0));
		assert_int_equal(sqlite3_step(e), SQLITE_DONE);
		sqlite3_reset(e);
	}
	sqlite3_finalize(q);
	sqlite3_finalize(e);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO time_sources SELECT ts_how, count(*) FROM records"
				      " GROUP BY ts_how", NULL, NULL, NULL), SQLITE_OK);
}

static void tpl_db_close(struct tpl_db *t)
{
	iq_store_close(t->s);
	if (strcmp(t->path, ":memory:") != 0)
		unlink(t->path);
}

static int64_t scalar(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q;
	int64_t v = -1;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
	if (sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

/* The appendix of the database, in English, and every template the read
 * kept. Caller frees. */
static char *appendix(struct iq_store *s, long *kept)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	struct iq_tpl_scan *sc = iq_tpl_scan_start(s);
	struct iq_refs refs;
	iq_refs_init(&refs);
	iq_tpl_appendix(f, sc, "en", &refs);
	iq_refs_release(&refs);
	iq_tpl_dump(f, sc);
	*kept = iq_tpl_scan_records(sc, NULL);
	iq_tpl_scan_free(sc);
	fclose(f);
	return buf;
}

static void tpl_scan_keeps_what_the_sql_selects(int summaries)
{
	struct tpl_db t;
	tpl_summaries = summaries;
	rnd_state = 7;
	tpl_db_make(&t, "/tmp/iq-test-tpl-a.db", 20000, NULL);
	sqlite3 *db = iq_store_db(t.s);
	char sql[2048];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM (%s)", iq_tpl_sql);
	int64_t want = scalar(db, sql);
	assert_true(want > 1000 && want < 19000);
	struct iq_tpl_scan *sc = iq_tpl_scan_start(t.s);
	long overflow;
	assert_int_equal(iq_tpl_scan_records(sc, &overflow), want);
	/* and the time sources, as GROUP BY ts_how gives them */
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT ts_how, count(*) FROM records WHERE ts_how <> 'explicit'"
					    " GROUP BY ts_how ORDER BY ts_how", -1, &q, NULL), SQLITE_OK);
	size_t i = 0;
	const char *how;
	long long nh;
	while (sqlite3_step(q) == SQLITE_ROW) {
		assert_true(i < iq_tpl_scan_ts_how(sc, i, &how, &nh));
		assert_string_equal(how, (const char *)sqlite3_column_text(q, 0));
		assert_int_equal(nh, sqlite3_column_int64(q, 1));
		i++;
	}
	assert_int_equal(iq_tpl_scan_ts_how(sc, i, &how, &nh), i);
	assert_int_equal(i, 4);
	sqlite3_finalize(q);
	iq_tpl_scan_free(sc);
	tpl_db_close(&t);
}

/* The C filter the ingest applies keeps what the SQL selects, and the
 * report reads the same from the summaries as from every record. */
static void test_tpl_scan_keeps_what_the_sql_selects(void **state)
{
	(void)state;
	tpl_scan_keeps_what_the_sql_selects(0);
	tpl_scan_keeps_what_the_sql_selects(1);
}

/* "error in unit <letters>": one template per distinct word, many of
 * them (more than a table keeps); and 25 hot ones, which the appendix
 * shows, with times that tie (the example is the first of the earliest)
 * and up to four nodes in the first half, seven in the second. */
static int tpl_first_half;
static size_t many_templates(int i, char *b, size_t cap, char *node)
{
	int hot = rnd(3) == 0;
	int k = hot ? (int)rnd(25) : tpl_first_half ? (i <= 6000 ? i % 3000 : 1500 + i % 3000) : i % 5000;
	uint32_t h = (uint32_t)k;
	char w[8];
	size_t n = 0;
	do {
		w[n++] = (char)('a' + k % 26);
		k /= 26;
	} while (k && n < sizeof w - 1);
	w[n] = '\0';
	/* the first half: one to four nodes; the second: first those four
	 * (or fewer), then seven */
	if (hot)
		snprintf(node, 16, "n%u", i <= 6000 ? rnd(1 + h % 4) : i <= 9000 ? rnd(4) : rnd(7));
	return (size_t)snprintf(b, cap, "%s in %s %s", rnd(2) ? "error" : "Error", hot ? "hot" : "unit", w);
}

static void halves_as_one(int first_half, int n)
{
	tpl_first_half = first_half;
	struct tpl_db f, m;
	rnd_state = 11;
	tpl_db_make(&f, "/tmp/iq-test-tpl-b.db", n, many_templates);
	rnd_state = 11;
	tpl_db_make(&m, ":memory:", n, many_templates);
	long kf, km;
	/* the file is read in two halves by two threads, the memory database
	 * in one read: the same appendix */
	char *a = appendix(f.s, &kf), *b = appendix(m.s, &km);
	assert_int_equal(kf, km);
	/* and from the summaries, the same again */
	struct tpl_db g;
	tpl_summaries = 1;
	rnd_state = 11;
	tpl_db_make(&g, "/tmp/iq-test-tpl-c.db", n, many_templates);
	tpl_summaries = 0;
	long kg;
	char *c = appendix(g.s, &kg);
	assert_int_equal(kg, kf);
	assert_string_equal(c, a);
	free(c);
	tpl_db_close(&g);
	assert_int_equal(kf, scalar(iq_store_db(m.s), "SELECT count(*) FROM records r WHERE r.id NOT IN"
				     " (SELECT record_id FROM signal_matches)"));
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "more lines fell outside the first 4096 templates"));
	free(a);
	free(b);
	tpl_db_close(&f);
	tpl_db_close(&m);
}

static void test_tpl_scan_halves_merge_as_one_read(void **state)
{
	(void)state;
	halves_as_one(1, 12000); /* the second half's templates merged into the first's */
	halves_as_one(0, 30000); /* the second half overflows: read again into the first */
}

/* ---- the limits section (md.c) and its Turkish arithmetic (i18n.c) ---- */

static char *arith_tr(const char *json)
{
	json_t *o = json_loads(json, 0, NULL);
	assert_non_null(o);
	struct iq_buf b;
	iq_buf_init(&b);
	int rc = iq_limit_arith_tr(&b, o);
	snprintf(got, sizeof got, "%s", rc && b.p ? b.p : "(none)");
	iq_buf_release(&b);
	json_decref(o);
	return got;
}

static void test_limit_arith_tr_redoes_each_setting(void **state)
{
	(void)state;
	assert_string_equal(arith_tr("{\"setting\": \"--max-num-seqs\", \"value\": 40, \"inputs\":"
				     " {\"largest_completed\": 47, \"smallest_failed\": 45}}"),
			    "min(tamamlanan en büyük batch 47, başarısız olan en küçük batch 45 - 1) = 44; "
			    "8'in katına aşağı yuvarlandı: 40");
	assert_string_equal(arith_tr("{\"setting\": \"--max-num-seqs\", \"value\": 5, \"inputs\":"
				     " {\"largest_completed\": null, \"smallest_failed\": 6}}"),
			    "başarısız olan en küçük batch 6 - 1 = 5; 8'in katına aşağı yuvarlandı: 5");
	assert_string_equal(arith_tr("{\"setting\": \"--max-num-batched-tokens\", \"value\": 1536, \"inputs\":"
				     " {\"scheduled_tokens\": 8192, \"tried_bytes\": 1000, \"free_bytes\": 200}}"),
			    "başarısız adım 8192 token zamanladı ve 200 bayt boşken 1000 bayt ayırmaya çalıştı: "
			    "8192 x 200 / 1000 = 1638 token sığardı; 256'nın katına aşağı yuvarlandı: 1536");
	/* clamped to the current setting: said so */
	assert_string_equal(arith_tr("{\"setting\": \"--max-model-len\", \"value\": 4096, \"inputs\":"
				     " {\"capacity_tokens\": 100000, \"max_num_seqs\": 16}}"),
			    "max-model-len uzunluğunda 16 diziden oluşan tam bir batch KV cache'e sığar: "
			    "100000 / 16 = 6250; 1024'ün katına aşağı yuvarlandı: 4096 (mevcut ayar)");
	assert_string_equal(arith_tr("{\"setting\": \"--max-model-len\", \"value\": 768, \"inputs\":"
				     " {\"capacity_tokens\": 8000, \"max_num_seqs\": 8}}"),
			    "max-model-len uzunluğunda 8 diziden oluşan tam bir batch KV cache'e sığar: "
			    "8000 / 8 = 1000; 256'nın katına aşağı yuvarlandı: 768");
	assert_string_equal(arith_tr("{\"setting\": \"429-threshold\", \"value\": 240, \"inputs\":"
				     " {\"max_num_seqs\": 40, \"pods\": 3}}"),
			    "pod başına 40 çalışan ve bir o kadar bekleyen istekten sonra 429 döndürülür: "
			    "2 x 40 x 3 pod = 240, yük dengeleyicide uçuştaki istek");
	assert_string_equal(arith_tr("{\"setting\": \"--unknown\", \"value\": 1, \"inputs\": {}}"), "(none)");
	/* vision: images per prompt, and pixels per image */
	assert_string_equal(arith_tr("{\"setting\": \"--limit-mm-per-prompt\", \"value\": 8, \"inputs\":"
				     " {\"largest_completed\": 102, \"smallest_failed\": 140, \"failed_requests\": 12}}"),
			    "en az resimle ölen batch 140 resmi 12 istekte tutuyordu; min(tamamlanan en çok uçuştaki "
			    "resim 102, başarısız olan en az 140 - 1) = 102 resim bu 12 isteğe: 102 / 12 = 8 istem "
			    "başına resim");
	assert_string_equal(arith_tr("{\"setting\": \"--limit-mm-per-prompt\", \"value\": 4, \"inputs\":"
				     " {\"largest_completed\": null, \"smallest_failed\": 20, \"failed_requests\": 30}}"),
			    "en az resimle ölen batch 20 resmi 30 istekte tutuyordu; min(tamamlanan en çok uçuştaki "
			    "resim yok, başarısız olan en az 20 - 1) = 19 resim bu 30 isteğe: 19 / 30 = 0 istem başına "
			    "resim; en az 1");
	assert_string_equal(arith_tr("{\"setting\": \"max_pixels\", \"value\": 7074032, \"inputs\":"
				     " {\"largest_completed\": 679166152, \"smallest_failed\": 1230697928,"
				     " \"failed_requests\": 12, \"images_per_prompt\": 8}}"),
			    "her biri 8 resimli 12 istek, min(tamamlanan en çok uçuştaki piksel 679166152, başarısız "
			    "olan en az 1230697928 - 1) = 679166152 piksel içinde: 679166152 / (12 x 8) = 7074647 resim "
			    "başına piksel; tam 28 x 28 yamalara (784'ün katına) aşağı yuvarlandı: 7074032");
	/* the current max_pixels is lower: kept, and said so */
	assert_string_equal(arith_tr("{\"setting\": \"max_pixels\", \"value\": 1003520, \"inputs\":"
				     " {\"largest_completed\": 900000000, \"smallest_failed\": 800000000,"
				     " \"failed_requests\": 10, \"images_per_prompt\": 4}}"),
			    "her biri 4 resimli 10 istek, min(tamamlanan en çok uçuştaki piksel 900000000, başarısız "
			    "olan en az 800000000 - 1) = 799999999 piksel içinde: 799999999 / (10 x 4) = 19999999 resim "
			    "başına piksel; tam 28 x 28 yamalara (784'ün katına) aşağı yuvarlandı: 19999840; mevcut ayar "
			    "daha düşük ve kalıyor");
}

/* A findings document whose limits lack the KV cache and the crash dump:
 * one batch completed (on a pod whose name needs escaping), nothing failed. */
static const char limits_doc[] =
	"{\"bundle\": {\"paths\": [\"b.tgz\"], \"files\": 1},"
	" \"patterns\": [{\"id\": \"gpu-oom-cascade\", \"verdict\": \"oom_no_cascade\", \"confidence\": 0.9,"
	"  \"limits\": {\"window_s\": 300.0,"
	"   \"batch\": {\"largest_completed\": {\"value\": 47, \"pod\": \"vllm|0*\", \"time\": \"2026-01-02T03:04:05.006Z\","
	"     \"evidence\": [{\"file\": \"b.tgz!v.log\", \"line\": 12, \"text\": \"Running: 47 reqs\"}]},"
	"    \"smallest_failed\": null},"
	"   \"tokens_in_flight\": {\"largest_completed\": null, \"smallest_failed\": null},"
	"   \"kv_cache\": {\"capacity_tokens\": null, \"evidence\": []}, \"failed_step\": null,"
	"   \"proposals\": [{\"setting\": \"--max-num-seqs\", \"value\": 40, \"current\": \"256\","
	"     \"inputs\": {\"largest_completed\": 47, \"smallest_failed\": null},"
	"     \"arithmetic\": \"largest batch that completed: 47; rounded down to a multiple of 8: 40\","
	"     \"evidence\": [{\"file\": \"b.tgz!v.log\", \"line\": 12}]}],"
	"   \"not_computed\": ["
	"    {\"what\": \"batch.smallest_failed\", \"needs\": [\"crash-stats\"], \"reason\": \"r1\"},"
	"    {\"what\": \"tokens_in_flight.largest_completed\", \"needs\": [\"kv-cache\"], \"reason\": \"r2\"},"
	"    {\"what\": \"--max-model-len\", \"needs\": [\"kv-cache\"], \"reason\": \"r3\"},"
	"    {\"what\": \"--max-num-batched-tokens\", \"needs\": [\"failed-step\"], \"reason\": \"r4\"}]}}]}";

/* The postmortem of doc in lang, cut to its limits section. Caller frees. */
static char *limits_section(const char *doc_text, const char *lang, const char *head)
{
	json_t *doc = json_loads(doc_text, 0, NULL);
	assert_non_null(doc);
	struct iq_store *s;
	struct iq_diag d = {{0}};
	assert_int_equal(iq_store_open(":memory:", 0, &s, &d), 0);
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	struct iq_report_opts o = {lang, NULL, NULL, NULL, NULL};
	assert_int_equal(iq_render_postmortem(doc, s, &o, f), 0);
	fclose(f);
	iq_store_close(s);
	json_decref(doc);
	char *h = strstr(buf, head);
	assert_non_null(h);
	/* a section up to the next; the document's title, the whole of it */
	char *end = h[1] == ' ' ? NULL : strstr(h + 3, "\n## ");
	if (end)
		*end = '\0';
	char *sec = strdup(h);
	free(buf);
	return sec;
}

static void test_limits_section_says_what_could_not_be_computed(void **state)
{
	(void)state;
	char *m = limits_section(limits_doc, "en", "## Memory limits measured in the bundle");
	assert_non_null(strstr(m, "in the 300 s before its CUDA OOM death"));
	assert_non_null(strstr(m, "| batch (running requests) | **47** — vllm\\|0\\*, 2026-01-02T03:04:05.006Z, "
				  "[E1](#e1) | not computed: no crash dump with the scheduler's state of the step "
				  "that died |"));
	assert_non_null(strstr(m, "| tokens in flight (KV cache use × capacity) | not computed: no KV cache size line"));
	assert_non_null(strstr(m, "- **KV cache capacity:** not computed: no KV cache size line"));
	assert_null(strstr(m, "The step that failed"));
	assert_non_null(strstr(m, "| `--max-num-seqs` | 256 | **40** sequences | largest batch that completed: 47; "
				  "rounded down to a multiple of 8: 40 | [E1](#e1) |"));
	assert_non_null(strstr(m, "**Not computed, and why:**\n\n- `--max-model-len`: no KV cache size line (vLLM's "
				  "\"GPU KV cache size\" or \"\\# GPU blocks\").\n- `--max-num-batched-tokens`: no failed step"));
	assert_null(strstr(m, "r3")); /* the catalogue's words, not the English reason */
	free(m);
	m = limits_section(limits_doc, "tr", "## Paketin ölçtüğü bellek sınırları");
	assert_non_null(strstr(m, "hesaplanamadı: ölünen adımın zamanlayıcı durumunu veren bir çökme dökümü yok"));
	assert_non_null(strstr(m, "**Hesaplanamayanlar ve nedenleri:**\n\n- `--max-model-len`: KV cache boyutu satırı yok"));
	assert_non_null(strstr(m, "tamamlanan en büyük batch: 47; 8'in katına aşağı yuvarlandı: 40"));
	assert_null(strstr(m, "uçuştaki resim")); /* no vision rows without a request log */
	free(m);
	/* a GPU OOM without limits: one sentence, nothing proposed */
	m = limits_section("{\"patterns\": [{\"id\": \"gpu-oom-cascade\", \"verdict\": \"oom_no_cascade\","
			   " \"limits\": null}]}", "en", "## Memory limits measured in the bundle");
	assert_non_null(strstr(m, "No worker died of a CUDA OOM, so the bundle measured no memory limit"));
	assert_null(strstr(m, "Settings to propose"));
	free(m);
	/* no pattern holds: no limits section at all, what was checked instead */
	m = limits_section("{\"patterns\": [{\"id\": \"gpu-oom-cascade\", \"verdict\": \"not_detected\","
			   " \"limits\": null}]}", "en", "# Postmortem: no known incident pattern found");
	assert_null(strstr(m, "## Memory limits"));
	assert_non_null(strstr(m, "## What was checked"));
	free(m);
}

/* Vision limits: images that completed, none in flight at the death (so
 * nothing proposed), the current settings, a request id that needs
 * escaping. */
static const char vision_doc[] =
	"{\"patterns\": [{\"id\": \"gpu-oom-cascade\", \"verdict\": \"confirmed\","
	"  \"limits\": {\"window_s\": 600.0, \"batch\": {}, \"tokens_in_flight\": {}, \"kv_cache\": {},"
	"   \"proposals\": [],"
	"   \"vision\": {\"requests_logged\": 37,"
	"    \"images_in_flight\": {\"largest_completed\": {\"value\": 58, \"requests\": 9, \"pod\": \"vlm-1\","
	"      \"time\": \"2026-01-02T03:04:05.006Z\", \"evidence\": [{\"file\": \"b!v|1.log\", \"line\": 7}]},"
	"     \"smallest_failed\": null},"
	"    \"pixels_in_flight\": {\"largest_completed\": {\"value\": 412000000, \"requests\": 9, \"pod\": \"vlm-1\","
	"      \"time\": \"2026-01-02T03:04:05.006Z\", \"evidence\": []}, \"smallest_failed\": null},"
	"    \"current\": {\"limit_mm_per_prompt\": 16, \"max_pixels\": null, \"evidence\": []}},"
	"   \"not_computed\": ["
	"    {\"what\": \"--limit-mm-per-prompt\", \"needs\": [\"mm-failed\"], \"reason\": \"x\"},"
	"    {\"what\": \"max_pixels\", \"needs\": [\"mm-failed\"], \"reason\": \"x\"},"
	"    {\"what\": \"vision.images_in_flight.smallest_failed\", \"needs\": [\"mm-failed\"], \"reason\": \"x\"},"
	"    {\"what\": \"vision.pixels_in_flight.smallest_failed\", \"needs\": [\"mm-failed\"], \"reason\": \"x\"}]}}]}";

static void test_limits_section_renders_vision(void **state)
{
	(void)state;
	char *m = limits_section(vision_doc, "en", "## Memory limits measured in the bundle");
	assert_non_null(strstr(m, " For vision requests the batch is images: "));
	assert_non_null(strstr(m, "| images in flight (vision requests) | **58** in 9 requests — vlm-1, "
				  "2026-01-02T03:04:05.006Z, [E1](#e1) | not computed: no vision request was in "
				  "flight when a worker died |\n"));
	assert_non_null(strstr(m, "| pixels in flight (their width × height) | **412000000** in 9 requests — vlm-1, "
				  "2026-01-02T03:04:05.006Z, – | not computed: no vision request"));
	assert_non_null(strstr(m, "- **Vision requests:** 37 logged by the workers that died (admitted with their "
				  "images' sizes, then finished); set now: `--limit-mm-per-prompt image=16`, no max_pixels "
				  "found.\n"));
	assert_non_null(strstr(m, "The bundle gave nothing to compute a setting from."));
	assert_non_null(strstr(m, "- `--limit-mm-per-prompt`: no vision request was in flight when a worker died.\n"
				  "- `max_pixels` (`--mm-processor-kwargs`): no vision request was in flight"));
	free(m);
	m = limits_section(vision_doc, "tr", "## Paketin ölçtüğü bellek sınırları");
	assert_non_null(strstr(m, "| uçuştaki resim (görsel istekler) | **58** (9 istekte) — vlm-1, "));
	assert_non_null(strstr(m, "hesaplanamadı: bir worker öldüğünde uçuşta görsel istek yoktu |"));
	free(m);
}

/* story.c: the when language over a finding, paths and templates */
static const char story_doc[] =
	"{\"patterns\": [{\"id\": \"p\", \"verdict\": \"confirmed\","
	"  \"signals\": [{\"id\": \"cuda-oom\", \"present\": true}],"
	"  \"conditions\": [{\"id\": \"fragmentation\", \"present\": true}, {\"id\": \"x\", \"present\": null},"
	"   {\"id\": \"y\", \"present\": false}],"
	"  \"questions\": [{\"id\": \"paged-attention\", \"data\": {\"enabled\": true, \"n\": 3}}],"
	"  \"oom_events\": [{\"pod\": \"vllm|0\", \"tried_bytes\": 2147483648}, {\"pod\": \"vllm-1\"}, {\"pod\": \"vllm|0\"}]},"
	" {\"id\": \"q\", \"verdict\": \"not_detected\", \"signals\": [{\"id\": \"s\", \"count\": 7}]}]}";

static void test_story_when_reads_answers(void **state)
{
	(void)state;
	json_t *doc = json_loads(story_doc, 0, NULL);
	json_t *p = json_array_get(json_object_get(doc, "patterns"), 0);
	const char *w = "(condition:fragmentation or signal:cuda-oom) and data:paged-attention.enabled=false";
	assert_int_equal(iq_finding_when(doc, p, w, NULL), 0);
	assert_int_equal(iq_finding_when(doc, p, "data:paged-attention.enabled=true", NULL), 1);
	assert_int_equal(iq_finding_when(doc, p, "data:paged-attention.enabled", NULL), 1);
	assert_int_equal(iq_finding_when(doc, p, "data:paged-attention.n>=3 and data:paged-attention.n<4", NULL), 1);
	assert_int_equal(iq_finding_when(doc, p, "data:paged-attention.n>3", NULL), 0);
	assert_int_equal(iq_finding_when(doc, p, "data:paged-attention.missing", NULL), 0);
	assert_int_equal(iq_finding_when(doc, p, "condition:x=null and condition:y=false and not condition:y", NULL), 1);
	assert_int_equal(iq_finding_when(doc, p, "condition:fragmentation=false", NULL), 0);
	/* every term read is reported, with the value it read */
	json_t *terms = json_array();
	assert_int_equal(iq_finding_when(doc, p, "signal:cuda-oom and not data:paged-attention.enabled=false", terms), 1);
	char *t = json_dumps(terms, JSON_COMPACT);
	assert_string_equal(t, "[{\"term\":\"signal:cuda-oom\",\"value\":true,\"holds\":true},"
			       "{\"term\":\"data:paged-attention.enabled=false\",\"value\":true,\"holds\":false}]");
	free(t);
	json_decref(terms);
	json_decref(doc);
}

static void test_story_paths_and_templates(void **state)
{
	(void)state;
	json_t *doc = json_loads(story_doc, 0, NULL);
	json_t *p = json_array_get(json_object_get(doc, "patterns"), 0);
	json_t *v = iq_finding_path(doc, p, "oom_events.*.pod");
	char *t = json_dumps(v, JSON_COMPACT);
	assert_string_equal(t, "[\"vllm|0\",\"vllm-1\",\"vllm|0\"]");
	free(t);
	json_decref(v);
	v = iq_finding_path(doc, p, "@q.signals.s.count");
	assert_int_equal(json_integer_value(v), 7);
	json_decref(v);
	assert_null(iq_finding_path(doc, p, "conditions.nope.present"));
	/* the first template whose when holds and whose placeholders resolve,
	 * values escaped for Markdown; a list joined, each value once */
	json_t *tm = json_loads("[{\"when\": \"signal:nope\", \"en\": \"A\"},"
				" {\"en\": \"B {oom_events.0.pod} {cascade.pods}\"},"
				" {\"en\": \"C {oom_events.0.pod} {oom_events.0.tried_bytes|gib} {oom_events.*.pod|join}\", \"tr\": \"Ç\"}]",
				0, NULL);
	struct iq_buf b;
	iq_buf_init(&b);
	assert_int_equal(iq_report_text(&b, tm, doc, p, "en", 1), 1);
	assert_string_equal(b.p, "C vllm\\|0 2.00 GiB vllm\\|0, vllm-1");
	iq_buf_reset(&b);
	assert_int_equal(iq_report_text(&b, tm, doc, p, "tr", 0), 1);
	assert_string_equal(b.p, "Ç");
	iq_buf_release(&b);
	json_decref(tm);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_md_escapes_table_and_html_specials),
		cmocka_unit_test(test_md_escapes_controls_and_backslashes),
		cmocka_unit_test(test_md_breaks_links_and_block_starts),
		cmocka_unit_test(test_md_code_spans_show_text_as_is),
		cmocka_unit_test(test_md_cuts_at_newline_and_length),
		cmocka_unit_test(test_xml_escapes_markup_and_quotes),
		cmocka_unit_test(test_mask_numbers_and_times),
		cmocka_unit_test(test_mask_ids_addresses_and_strings),
		cmocka_unit_test(test_mask_same_template_for_variants),
		cmocka_unit_test(test_mask_is_bounded_and_squeezes_blanks),
		cmocka_unit_test(test_tpl_scan_keeps_what_the_sql_selects),
		cmocka_unit_test(test_tpl_scan_halves_merge_as_one_read),
		cmocka_unit_test(test_limit_arith_tr_redoes_each_setting),
		cmocka_unit_test(test_limits_section_says_what_could_not_be_computed),
		cmocka_unit_test(test_limits_section_renders_vision),
		cmocka_unit_test(test_story_when_reads_answers),
		cmocka_unit_test(test_story_paths_and_templates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
