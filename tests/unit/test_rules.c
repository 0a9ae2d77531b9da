/* test_rules.c: rule-pack loading errors with positions, matching with
 * typed captures, kinds filtering, and the packs' own test runner. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../analyzer/rules/rules.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_syntax_error_has_line_and_column),
		cmocka_unit_test(test_invalid_regex_names_signal_and_offset),
		cmocka_unit_test(test_match_with_typed_captures_and_kinds),
		cmocka_unit_test(test_pack_test_cases_count_failures),
		cmocka_unit_test(test_builtin_pack_loads_and_passes),
	};
	return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
