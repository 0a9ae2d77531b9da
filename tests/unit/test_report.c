/* test_report.c: the report's escaping (Markdown, XML) and the masking of
 * log lines into templates for the unexplained-errors appendix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../analyzer/report/report.h"

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
	/* the terminal escape becomes visible text, never a control byte */
	assert_string_equal(md("a\033[31mb", 100), "a\\\\x1b\\[31mb");
	assert_string_equal(md("tab\there", 100), "tab\\\\there");
	assert_string_equal(md("c:\\dir", 100), "c:\\\\\\\\dir");
	for (const char *p = md("\x01\x02\x7f", 100); *p; p++)
		assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
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
	assert_string_equal(b.p, "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;\\x01");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_md_escapes_table_and_html_specials),
		cmocka_unit_test(test_md_escapes_controls_and_backslashes),
		cmocka_unit_test(test_md_cuts_at_newline_and_length),
		cmocka_unit_test(test_xml_escapes_markup_and_quotes),
		cmocka_unit_test(test_mask_numbers_and_times),
		cmocka_unit_test(test_mask_ids_addresses_and_strings),
		cmocka_unit_test(test_mask_same_template_for_variants),
		cmocka_unit_test(test_mask_is_bounded_and_squeezes_blanks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
