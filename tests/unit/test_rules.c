/* test_rules.c: rule-pack loading errors with positions, matching with
 * typed captures, kinds filtering, the packs' own test runner, shared
 * signals and references, exceptions, the JSON position scanner, lint
 * (positions, unknown keys, read-only SQL) and the verdict language. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "../../analyzer/rules/rules_int.h"

static int load(struct iq_ruleset *rs, const char *text, struct iq_diag *d)
{
	return iq_rules_load_text(rs, "t.json", text, strlen(text), d);
}

static void test_json_syntax_error_has_line_and_column(void **state)
{
	(void)state;
	struct iq_ruleset rs;
	struct iq_diag d;
	iq_rules_init(&rs);
	assert_int_equal(load(&rs, "{\n  \"id\": \"x\",\n  \"signals\": [,]\n}", &d), IQ_ERR_RULES);
	assert_memory_equal(d.msg, "t.json:3:", 9);
	iq_rules_release(&rs);
}

static void test_invalid_regex_names_signal_and_offset(void **state)
{
	(void)state;
	struct iq_ruleset rs;
	struct iq_diag d;
	iq_rules_init(&rs);
	assert_int_equal(load(&rs, "{\"id\":\"p\",\"signals\":[{\"id\":\"s\",\"patterns\":[\"ab(c\"]}]}", &d),
			 IQ_ERR_RULES);
	assert_non_null(strstr(d.msg, "invalid regex in signal 's'"));
	assert_non_null(strstr(d.msg, "at offset 4"));
	assert_non_null(strstr(d.msg, "missing closing parenthesis"));
	iq_rules_release(&rs);
}

struct hit {
	int n;
	char signal[64];
	char caps[512];
};

static int on_hit(void *u, const char *pack, const char *signal, const char *caps)
{
	(void)pack;
	struct hit *h = u;
	h->n++;
	snprintf(h->signal, sizeof h->signal, "%s", signal);
	snprintf(h->caps, sizeof h->caps, "%s", caps);
	return 0;
}

static void test_match_with_typed_captures_and_kinds(void **state)
{
	(void)state;
	struct iq_ruleset rs;
	struct iq_diag d;
	iq_rules_init(&rs);
	assert_int_equal(load(&rs,
			      "{\"id\":\"p\",\"signals\":[{\"id\":\"oom\",\"kinds\":[\"log\"],"
			      "\"patterns\":[\"allocate (?<tried>[\\\\d.]+ [KMG]iB) on GPU (?<gpu>\\\\d+) (?<who>\\\\w+)\"],"
			      "\"fields\":{\"tried\":\"size\",\"gpu\":\"int\",\"who\":\"text\"}}]}",
			      &d), 0);
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_LOG);
	r.text = IQ_STR_LIT("x: allocate 2.00 GiB on GPU 3 \"me\"");
	struct hit h = {0};
	/* the quote before "me" keeps \w+ from matching: no hit */
	assert_int_equal(iq_rules_match(&rs, &r, on_hit, &h), 0);
	assert_int_equal(h.n, 0);
	r.text = IQ_STR_LIT("x: allocate 2.00 GiB on GPU 3 me");
	assert_int_equal(iq_rules_match(&rs, &r, on_hit, &h), 0);
	assert_int_equal(h.n, 1);
	assert_string_equal(h.signal, "oom");
	assert_string_equal(h.caps, "{\"gpu\":3,\"tried\":\"2.00 GiB\",\"tried_bytes\":2147483648,\"who\":\"me\"}");
	/* an http record is not a log: the signal does not apply */
	iq_record_init(&r, IQ_KIND_HTTP);
	r.text = IQ_STR_LIT("x: allocate 2.00 GiB on GPU 3 me");
	assert_int_equal(iq_rules_match(&rs, &r, on_hit, &h), 0);
	assert_int_equal(h.n, 1);
	iq_rules_release(&rs);
}

/* A mark (*MARK:key=value) on the path that matched becomes a text
 * field; a named group of the same name that captured wins; the marks
 * leave the prefilter its literals (one per alternative). */
static void test_mark_names_the_matched_alternative(void **state)
{
	(void)state;
	struct iq_ruleset rs;
	struct iq_diag d;
	iq_rules_init(&rs);
	assert_int_equal(load(&rs,
			      "{\"id\":\"p\",\"signals\":[{\"id\":\"oom\",\"kinds\":[\"log\"],"
			      "\"patterns\":[\"(*MARK:framework=tensorflow)OOM when allocating|"
			      "(*MARK:framework=pytorch)CUDA out of memory\","
			      "\"(?:(?<framework>xla)|on GPU)(*MARK:framework=jax) ran out\","
			      "\"(*MARK:Bad Key=x)RESOURCE_EXHAUSTED\"]}]}",
			      &d), 0);
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_LOG);
	struct {
		const char *text, *caps;
	} cases[] = {
		{"ResourceExhaustedError: OOM when allocating tensor", "{\"framework\":\"tensorflow\"}"},
		{"RuntimeError: CUDA out of memory. Tried", "{\"framework\":\"pytorch\"}"},
		{"xla ran out", "{\"framework\":\"xla\"}"},
		{"on GPU ran out", "{\"framework\":\"jax\"}"},
		{"RESOURCE_EXHAUSTED: x", "{}"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct hit h = {0};
		r.text = (struct iq_str){cases[i].text, strlen(cases[i].text)};
		assert_int_equal(iq_rules_match(&rs, &r, on_hit, &h), 0);
		assert_int_equal(h.n, 1);
		assert_string_equal(h.caps, cases[i].caps);
	}
	assert_int_equal(rs.npacks, 1);
	const struct iq_signal *s = &rs.packs[0]->sig[0];
	assert_int_equal(s->lits[0].nalt, 2);
	assert_string_equal(s->lits[0].lit[0], "oom when allocating");
	assert_string_equal(s->lits[0].lit[1], "cuda out of memory");
	assert_int_equal(s->lits[1].nalt, 1);
	iq_rules_release(&rs);
}

/* Watched literals come back per record from the literal pass: case
 * folded, whether or not a signal matched, one a signal shares as well;
 * they make no signal match; -1 for a kind no signal looks at. */
static void test_watched_literals_reported_per_record(void **state)
{
	(void)state;
	/* "error" twice: a repeat is the same literal, counted once */
	static const char *const words[] = {"error", "timed out", "allocate", "error"};
	struct iq_ruleset rs;
	struct iq_diag d;
	iq_rules_init(&rs);
	assert_int_equal(load(&rs,
			      "{\"id\":\"p\",\"signals\":[{\"id\":\"oom\",\"kinds\":[\"log\"],"
			      "\"patterns\":[\"allocate (?<tried>[\\\\d.]+ GiB)\"]}]}",
			      &d), 0);
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_LOG);
	r.text = IQ_STR_LIT("x: allocate 2.00 GiB");
	struct hit h = {0};
	assert_int_equal(iq_rules_watched(&rs), -1); /* nothing watched yet */
	/* after a first match: the prefilter is built again with them */
	assert_int_equal(iq_rules_match(&rs, &r, on_hit, &h), 0);
	iq_rules_watch(&rs, words, 4);
	struct {
		const char *text;
		long want;
		int hits;
	} cases[] = {
		{"x: allocate 2.00 GiB", 4, 1},
		{"upstream Timed Out after an ERROR", 11, 0},
		{"ERRO: nothing here", 0, 0},
		{"errors: allocate 3 GiB, timed out", 15, 1},
		{"", 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		h.n = 0;
		r.text = (struct iq_str){cases[i].text, strlen(cases[i].text)};
		assert_int_equal(iq_rules_match(&rs, &r, on_hit, &h), 0);
		assert_int_equal(iq_rules_watched(&rs), cases[i].want);
		assert_int_equal(h.n, cases[i].hits);
	}
	/* no signal looks at http records: their text is not scanned */
	iq_record_init(&r, IQ_KIND_HTTP);
	r.text = IQ_STR_LIT("error");
	assert_int_equal(iq_rules_match(&rs, &r, on_hit, &h), 0);
	assert_int_equal(iq_rules_watched(&rs), -1);
	iq_rules_release(&rs);
}

static void test_pack_test_cases_count_failures(void **state)
{
	(void)state;
	struct iq_ruleset rs;
	struct iq_diag d;
	iq_rules_init(&rs);
	assert_int_equal(load(&rs,
			      "{\"id\":\"p\",\"signals\":[{\"id\":\"s\",\"patterns\":[\"(?<n>\\\\d+) apples\"],"
			      "\"fields\":{\"n\":\"int\"},\"tests\":{\"match\":[{\"text\":\"3 apples\",\"captures\":{\"n\":3}},"
			      "{\"text\":\"4 apples\",\"captures\":{\"n\":5}},\"pears\"],\"no_match\":[\"9 pears\",\"1 apples\"]}}]}",
			      &d), 0);
	long passed = 0, failed = 0;
	FILE *out = fopen("/dev/null", "w");
	iq_rules_test(&rs, out, &passed, &failed);
	fclose(out);
	assert_int_equal(passed, 2);
	assert_int_equal(failed, 3);
	iq_rules_release(&rs);
}

static void test_builtin_pack_loads_and_passes(void **state)
{
	(void)state;
	struct iq_ruleset rs;
	struct iq_diag d;
	iq_rules_init(&rs);
	assert_int_equal(iq_rules_load_builtin(&rs, &d), 0);
	assert_non_null(iq_rules_find(&rs, "gpu-oom-cascade"));
	long passed = 0, failed = 0;
	iq_rules_test(&rs, stderr, &passed, &failed);
	assert_true(passed > 50);
	assert_int_equal(failed, 0);
	iq_rules_release(&rs);
}

/* Lints text; returns what lint printed (caller frees). */
static char *lint(struct iq_ruleset *rs, const char *text, long *errors)
{
	char *out = NULL;
	size_t n = 0;
	long warnings = 0;
	FILE *f = open_memstream(&out, &n);
	*errors = 0;
	iq_rules_lint_text(rs, "t.json", text, strlen(text), f, errors, &warnings);
	fclose(f);
	return out;
}

static const char shared_pack[] =
	"{\"id\":\"common\",\"kind\":\"shared\",\"signals\":["
	"{\"id\":\"oom\",\"patterns\":[\"out of memory: (?<n>\\\\d+)\"],\"fields\":{\"n\":\"int\"}}]}";

static void test_json_pos_finds_values_and_keys(void **state)
{
	(void)state;
	const char *t = "{\n  \"a\": [1, {\"b\": \"x\"}],\n  \"c\\u0065\": {\"d\": \"é\", \"e\": 2}\n}";
	int line, col;
	assert_int_equal(iq_json_pos(t, strlen(t), "a[1].b", 0, &line, &col), 0);
	assert_int_equal(line, 2);
	assert_int_equal(col, 18);
	assert_int_equal(iq_json_pos(t, strlen(t), "a[1].b", 1, &line, &col), 0);
	assert_int_equal(col, 13);
	/* columns count characters: the é before "e" is one column */
	assert_int_equal(iq_json_pos(t, strlen(t), "a[0]", 0, &line, &col), 0);
	assert_int_equal(col, 9);
	assert_int_equal(iq_json_pos(t, strlen(t), "a[5]", 0, &line, &col), -1);
	assert_int_equal(iq_json_pos(t, strlen(t), "zz", 0, &line, &col), -1);
}

static void test_bad_regex_reports_file_line_col(void **state)
{
	(void)state;
	const char *text = "{\n"
			   "  \"id\": \"p\",\n"
			   "  \"signals\": [\n"
			   "    {\"id\": \"s\", \"title\": {\"en\": \"S\", \"tr\": \"S\"},\n"
			   "     \"patterns\": [\"ok\", \"ab(c\"]}\n"
			   "  ]\n"
			   "}\n";
	struct iq_ruleset rs;
	struct iq_diag d;
	long errors;
	iq_rules_init(&rs);
	/* loading: the first error, at the pattern string */
	assert_int_equal(load(&rs, text, &d), IQ_ERR_RULES);
	assert_memory_equal(d.msg, "t.json:5:25: error: invalid regex in signal 's' (pattern 2) at offset 4",
			    strlen("t.json:5:25: error: invalid regex in signal 's' (pattern 2) at offset 4"));
	/* lint: the same place, and the caret under PCRE2's offset */
	char *out = lint(&rs, text, &errors);
	assert_true(errors >= 1);
	assert_non_null(strstr(out, "t.json:5:25: error: invalid regex in signal 's' (pattern 2) at offset 4: missing closing parenthesis\n  ab(c\n      ^\n"));
	free(out);
	iq_rules_release(&rs);
}

static void test_unknown_key_reported_at_key(void **state)
{
	(void)state;
	const char *text = "{\"id\": \"p\", \"version\": \"1\", \"title\": {\"en\": \"P\", \"tr\": \"P\"},\n"
			   " \"definition\": {\"en\": \"D\", \"tr\": \"D\"},\n"
			   " \"signals\": [{\"id\": \"s\", \"title\": {\"en\": \"S\"}, \"patterns\": [\"x\"],\n"
			   "   \"serverity\": \"critical\"}]}";
	struct iq_ruleset rs;
	long errors;
	iq_rules_init(&rs);
	char *out = lint(&rs, text, &errors);
	assert_non_null(strstr(out, "t.json:4:4: error: unknown key 'serverity' in signals entry 's'"));
	assert_non_null(strstr(out, "missing translation: signals entry 's''s \"title\" has no \"tr\" text"));
	free(out);
	iq_rules_release(&rs);
}

struct hits {
	int n;
	char log[256];
};

static int on_hits(void *u, const char *pack, const char *signal, const char *caps)
{
	struct hits *h = u;
	size_t l = strlen(h->log);
	snprintf(h->log + l, sizeof h->log - l, "%s/%s%s;", pack, signal, caps);
	h->n++;
	return 0;
}

static void test_ref_matched_once_reported_per_pack(void **state)
{
	(void)state;
	struct iq_ruleset rs;
	struct iq_diag d;
	iq_rules_init(&rs);
	/* a ref to a shared pack that is not loaded is an error */
	assert_int_equal(load(&rs, "{\"id\":\"a\",\"signals\":[{\"ref\":\"common/oom\"}]}", &d), IQ_ERR_RULES);
	assert_non_null(strstr(d.msg, "t.json:1:29: error: dangling ref 'common/oom'"));
	assert_int_equal(load(&rs, shared_pack, &d), 0);
	assert_int_equal(rs.npacks, 0);
	assert_int_equal(rs.nshared, 1);
	assert_int_equal(load(&rs, "{\"id\":\"a\",\"signals\":[{\"ref\":\"common/oom\"}]}", &d), 0);
	assert_int_equal(load(&rs, "{\"id\":\"b\",\"signals\":[],\"boundaries\":[{\"ref\":\"common/oom\",\"id\":\"gpu\","
			      "\"exceptions\":[\"benign\"]}]}", &d), 0);
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_LOG);
	r.text = IQ_STR_LIT("out of memory: 12");
	struct hits h = {0};
	assert_int_equal(iq_rules_match(&rs, &r, on_hits, &h), 0);
	assert_string_equal(h.log, "a/oom{\"n\":12};b/gpu{\"n\":12};");
	/* the ref's own exception cancels it in pack b only */
	memset(&h, 0, sizeof h);
	r.text = IQ_STR_LIT("out of memory: 3 benign");
	assert_int_equal(iq_rules_match(&rs, &r, on_hits, &h), 0);
	assert_string_equal(h.log, "a/oom{\"n\":3};");
	/* replacing the shared pack re-points the refs */
	assert_int_equal(load(&rs, "{\"id\":\"common\",\"kind\":\"shared\",\"signals\":[{\"id\":\"oom\",\"patterns\":[\"OOM\"]}]}", &d), 0);
	memset(&h, 0, sizeof h);
	r.text = IQ_STR_LIT("OOM");
	assert_int_equal(iq_rules_match(&rs, &r, on_hits, &h), 0);
	assert_int_equal(h.n, 2);
	assert_int_equal(iq_pack_section_count(iq_rules_find(&rs, "b"), IQ_SEC_BOUNDARIES), 1);
	assert_string_equal(iq_signal_ref(iq_pack_section_signal(iq_rules_find(&rs, "b"), IQ_SEC_BOUNDARIES, 0)),
			    "common/oom");
	iq_rules_release(&rs);
}

static void test_exception_cancels_signal_and_tests_cover_it(void **state)
{
	(void)state;
	struct iq_ruleset rs;
	struct iq_diag d;
	iq_rules_init(&rs);
	assert_int_equal(load(&rs,
			      "{\"id\":\"p\",\"signals\":[{\"id\":\"kill\",\"kinds\":[\"pod\",\"log\"],"
			      "\"patterns\":[\"[Ee]xit [Cc]ode: 137\"],"
			      "\"exceptions\":[{\"pattern\":\"Reason: Error\"}],"
			      "\"tests\":{\"match\":[\"Exit Code: 137\",{\"text\":\"exit code: 137\",\"kind\":\"pod\"}],"
			      "\"no_match\":[\"Reason: Error Exit Code: 137\",{\"text\":\"Exit Code: 137\",\"kind\":\"http\"}]}}]}",
			      &d), 0);
	long passed = 0, failed = 0;
	iq_rules_test(&rs, stderr, &passed, &failed);
	assert_int_equal(passed, 4);
	assert_int_equal(failed, 0);
	iq_rules_release(&rs);
}

static void test_failure_output_is_a_diff_with_position(void **state)
{
	(void)state;
	struct iq_ruleset rs;
	struct iq_diag d;
	iq_rules_init(&rs);
	assert_int_equal(load(&rs,
			      "{\"id\":\"p\",\"signals\":[{\"id\":\"s\",\"patterns\":[\"(?<n>\\\\d+) apples\"],\n"
			      "\"fields\":{\"n\":\"int\"},\"tests\":{\"match\":[{\"text\":\"4 apples\",\"captures\":{\"n\":5}}]}}]}",
			      &d), 0);
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	long passed = 0, failed = 0;
	iq_rules_test(&rs, f, &passed, &failed);
	fclose(f);
	assert_int_equal(failed, 1);
	assert_non_null(strstr(out, "t.json:2:40: FAIL p/s match case 1: captures differ\n"));
	assert_non_null(strstr(out, "  - n: 5\n  + n: 4\n"));
	free(out);
	iq_rules_release(&rs);
}

static void test_question_sql_must_be_read_only(void **state)
{
	(void)state;
	struct iq_ruleset rs;
	long errors;
	iq_rules_init(&rs);
	char *out = lint(&rs,
			 "{\"id\":\"p\",\"version\":\"1\",\"title\":{\"en\":\"P\",\"tr\":\"P\"},\"definition\":{\"en\":\"D\",\"tr\":\"D\"},"
			 "\"signals\":[],\"verdicts\":[{\"verdict\":\"not_detected\",\"when\":\"always\"}],\"questions\":["
			 "{\"id\":\"w\",\"question\":{\"en\":\"q\",\"tr\":\"q\"},\"answer\":{\"en\":\"a\",\"tr\":\"a\"},\"sql\":\"DELETE FROM records\"},"
			 "{\"id\":\"x\",\"question\":{\"en\":\"q\",\"tr\":\"q\"},\"answer\":{\"en\":\"a\",\"tr\":\"a\"},\"sql\":\"ATTACH 'x.db' AS x\"},"
			 "{\"id\":\"r\",\"question\":{\"en\":\"q\",\"tr\":\"q\"},\"answer\":{\"en\":\"{n} {m}\",\"tr\":\"{n}\"},"
			 "\"sql\":\"SELECT count(*) AS n FROM signal_matches WHERE pack = :pack AND json_extract(captures, '$.a') > 1\"}]}",
			 &errors);
	assert_int_equal(errors, 3);
	assert_non_null(strstr(out, "question SQL must be read-only"));
	assert_non_null(strstr(out, "placeholder {m} is not a column"));
	free(out);
	/* the guard a detector installs refuses writes at prepare time */
	sqlite3 *db;
	sqlite3_stmt *st = NULL;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(a)", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(iq_rules_sql_guard(db), 0);
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO t VALUES (1)", -1, &st, NULL), SQLITE_AUTH);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT a FROM t", -1, &st, NULL), SQLITE_OK);
	sqlite3_finalize(st);
	/* functions that reach outside the database are refused too */
	assert_int_not_equal(sqlite3_prepare_v2(db, "SELECT load_extension('./x.so')", -1, &st, NULL),
			     SQLITE_OK);
	assert_non_null(strstr(sqlite3_errmsg(db), "not authorized"));
	sqlite3_close(db);
	iq_rules_release(&rs);

	/* loading refuses such a pack (not only lint), at the statement that
	 * is refused, a later statement of the text included */
	static const char *const bad[] = {
		"DELETE FROM records",
		"ATTACH 'x.db' AS x",
		"SELECT load_extension('./x.so')",
		"SELECT 1; UPDATE files SET status = 'x'",
		"PRAGMA writable_schema = 1",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[512];
		struct iq_diag d;
		snprintf(text, sizeof text,
			 "{\"id\":\"p\",\"signals\":[],\n\"questions\":[{\"id\":\"w\",\"sql\":\"%s\"}]}", bad[i]);
		iq_rules_init(&rs);
		assert_int_equal(load(&rs, text, &d), IQ_ERR_RULES);
		assert_int_equal(rs.npacks, 0);
		assert_non_null(strstr(d.msg, "t.json:2:30: error: question SQL must be read-only"));
		iq_rules_release(&rs);
	}
	iq_rules_init(&rs);
	struct iq_diag d;
	assert_int_equal(load(&rs, "{\"id\":\"p\",\"signals\":[],\"questions\":[{\"id\":\"r\","
			      "\"sql\":\"SELECT count(*) FROM records; SELECT 2\"}]}", &d), 0);
	assert_int_equal(rs.npacks, 1);
	iq_rules_release(&rs);
}

static int term(void *u, const char *what, const char *id)
{
	(void)u;
	return (strcmp(what, "signal") == 0 && strcmp(id, "cuda-oom") == 0) ||
	       (strcmp(what, "missing") == 0 && strcmp(id, "gpu") == 0);
}

static void test_verdict_language(void **state)
{
	(void)state;
	assert_int_equal(iq_rules_when_eval("signal:cuda-oom and not boundary:host-oom", term, NULL), 1);
	assert_int_equal(iq_rules_when_eval("signal:cascade or (missing:gpu and signal:cuda-oom)", term, NULL), 1);
	assert_int_equal(iq_rules_when_eval("signal:cascade", term, NULL), 0);
	assert_int_equal(iq_rules_when_eval("always", term, NULL), 1);
	assert_int_equal(iq_rules_when_eval("signal:cuda-oom and", term, NULL), IQ_ERR_RULES);
	assert_int_equal(iq_rules_when_eval("bogus:x", term, NULL), IQ_ERR_RULES);
	assert_int_equal(iq_rules_when_eval("(signal:cuda-oom", term, NULL), IQ_ERR_RULES);
}

static void test_shipped_packs_lint_clean_and_detectors_known(void **state)
{
	(void)state;
	struct iq_ruleset rs;
	long errors = 0, warnings = 0;
	iq_rules_init(&rs);
	FILE *devnull = fopen("/dev/null", "w");
	assert_int_equal(iq_rules_lint_builtin(&rs, stderr, &errors, &warnings), 0);
	fclose(devnull);
	assert_int_equal(errors, 0);
	const struct iq_pack *p = iq_rules_find(&rs, "gpu-oom-cascade");
	assert_non_null(p);
	const struct iq_signal *s = iq_pack_find_signal(p, "lb-5xx-surge");
	assert_non_null(s);
	assert_string_equal(iq_signal_detector(s), "surge");
	double st[4];
	/* every 5xx counts: the pack sets no statuses list */
	assert_int_equal(iq_signal_param_list(s, "statuses", st, 4), 0);
	double mc = 0;
	assert_int_equal(iq_signal_param(s, "min_count", &mc), 0);
	assert_true(mc == 5);
	assert_non_null(iq_detector_params("ingress-flood"));
	assert_null(iq_detector_params("spike"));
	assert_string_equal(iq_pack_verdict(p, term, NULL), "oom_no_cascade");
	assert_int_equal(iq_pack_item_count(p, "questions"), 6);
	iq_rules_release(&rs);
}

/* What iq_rules_limit_hits reported, one "file:line:col pack/signal N
 * first|msg" per hit. */
struct limits {
	int n;
	char log[1024];
};

static void on_limit(void *u, const struct iq_limit_hit *lh)
{
	struct limits *l = u;
	size_t len = strlen(l->log);
	snprintf(l->log + len, sizeof l->log - len, "%s:%d:%d %s/%s %ld %s|%s\n", lh->file, lh->line,
		 lh->col, lh->pack, lh->signal, lh->lines, lh->first, lh->msg);
	l->n++;
}

static void test_pcre2_limit_hits_counted_per_signal(void **state)
{
	(void)state;
	struct iq_ruleset rs;
	struct iq_diag d;
	iq_rules_init(&rs);
	assert_int_equal(load(&rs,
			      "{\"id\":\"p\",\"signals\":[\n"
			      "{\"id\":\"ok\",\"patterns\":[\"hello\"]},\n"
			      "{\"id\":\"bt\",\"patterns\":[\"zzz\",\n"
			      "    \"(a+)+$\", \"(a|aa)+$\"]},\n"
			      "{\"id\":\"ex\",\"patterns\":[\"a\"],\"exceptions\":[\"(a+)+$\"]}]}",
			      &d), 0);
	/* a shared signal that backtracks, referenced by two packs */
	assert_int_equal(load(&rs, "{\"id\":\"common\",\"kind\":\"shared\",\"signals\":"
			      "[{\"id\":\"oom\",\"patterns\":[\"(a|aa)+$\"]}]}", &d), 0);
	assert_int_equal(load(&rs, "{\"id\":\"q\",\"signals\":[{\"ref\":\"common/oom\"}]}", &d), 0);
	assert_int_equal(load(&rs, "{\"id\":\"r\",\"signals\":[{\"ref\":\"common/oom\"}]}", &d), 0);
	char bad[5003];
	memset(bad, 'a', 5001);
	bad[5001] = 'b';
	bad[5002] = '\0';
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_LOG);
	iq_rules_set_source(&rs, "b.tgz!app.log");
	struct hits h = {0};
	long lines[] = {3, 5, 7};
	const char *texts[] = {bad, "hello aaab", bad};
	for (int i = 0; i < 3; i++) {
		r.line = lines[i];
		r.text = iq_str_make(texts[i], strlen(texts[i]));
		assert_int_equal(iq_rules_match(&rs, &r, on_hits, &h), 0);
	}
	/* the undecided exception does not cancel "ex"; "bt" and the shared
	 * signal never match */
	assert_string_equal(h.log, "p/ex{};p/ok{};p/ex{};p/ex{};");
	iq_rules_set_source(&rs, NULL);
	struct limits l = {0};
	assert_int_equal(iq_rules_limit_hits(&rs, on_limit, &l, 0), 3);
	assert_string_equal(l.log,
			    /* once per record, both limits named, the first regex placed */
			    "t.json:4:5 p/bt 2 b.tgz!app.log:3|signal 'bt': PCRE2 match and depth limits hit"
			    " on 2 lines (first: b.tgz!app.log:3)\n"
			    "t.json:5:43 p/ex 2 b.tgz!app.log:3|signal 'ex': PCRE2 match limit hit on 2 lines"
			    " (first: b.tgz!app.log:3)\n"
			    /* counted once per record on the shared signal, not per pack;
			     * the JIT runs out of stack, the interpreter into the depth limit */
			    "t.json:1:67 common/oom 2 b.tgz!app.log:3|signal 'oom': PCRE2 depth limit hit on 2"
			    " lines (first: b.tgz!app.log:3)\n");
	/* reset: counted afresh, and a record without a source says no file */
	assert_int_equal(iq_rules_limit_hits(&rs, NULL, NULL, 1), 3);
	assert_int_equal(iq_rules_limit_hits(&rs, NULL, NULL, 0), 0);
	r.line = 9;
	r.text = iq_str_make(bad, strlen(bad));
	memset(&h, 0, sizeof h);
	assert_int_equal(iq_rules_match(&rs, &r, on_hits, &h), 0);
	memset(&l, 0, sizeof l);
	assert_int_equal(iq_rules_limit_hits(&rs, on_limit, &l, 1), 3);
	assert_non_null(strstr(l.log, "p/bt 1 |signal 'bt': PCRE2 match and depth limits hit on 1 line\n"));
	iq_rules_release(&rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_syntax_error_has_line_and_column),
		cmocka_unit_test(test_invalid_regex_names_signal_and_offset),
		cmocka_unit_test(test_match_with_typed_captures_and_kinds),
		cmocka_unit_test(test_watched_literals_reported_per_record),
		cmocka_unit_test(test_pack_test_cases_count_failures),
		cmocka_unit_test(test_builtin_pack_loads_and_passes),
		cmocka_unit_test(test_json_pos_finds_values_and_keys),
		cmocka_unit_test(test_bad_regex_reports_file_line_col),
		cmocka_unit_test(test_unknown_key_reported_at_key),
		cmocka_unit_test(test_ref_matched_once_reported_per_pack),
		cmocka_unit_test(test_exception_cancels_signal_and_tests_cover_it),
		cmocka_unit_test(test_failure_output_is_a_diff_with_position),
		cmocka_unit_test(test_question_sql_must_be_read_only),
		cmocka_unit_test(test_verdict_language),
		cmocka_unit_test(test_shipped_packs_lint_clean_and_detectors_known),
		cmocka_unit_test(test_pcre2_limit_hits_counted_per_signal),
		cmocka_unit_test(test_mark_names_the_matched_alternative),
	};
	return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
