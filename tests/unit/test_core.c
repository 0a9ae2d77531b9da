/* test_core.c: time parsing and formatting, year inference, the default
 * zone of zone-less times (--tz), display escaping, buffers. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../analyzer/core/iq.h"
#include "../../analyzer/core/iqtime.h"

static int64_t iso(const char *s, int *zoned, size_t *used)
{
	int64_t t = 0;
	*zoned = iq_time_parse_iso(s, strlen(s), &t, used);
	return t;
}

static void test_iso_zulu_and_fractions(void **state)
{
	(void)state;
	int z;
	size_t used;
	char b[IQ_TIME_BUF];
	int64_t t = iso("2024-05-01T12:00:00.123456789Z rest", &z, &used);
	assert_int_equal(z, 1);
	assert_int_equal(used, 30);
	assert_int_equal(t % IQ_NS_PER_SEC, 123456789);
	assert_string_equal(iq_time_fmt_ms(t, b), "2024-05-01T12:00:00.123Z");
	t = iso("2024-05-01T12:00:00Z", &z, &used);
	assert_int_equal(t, 1714564800LL * IQ_NS_PER_SEC);
	t = iso("2024-05-01T12:00:00.5Z", &z, &used);
	assert_int_equal(t, 1714564800LL * IQ_NS_PER_SEC + 500000000);
}

static void test_iso_any_keeps_far_years_without_time(void **state)
{
	(void)state;
	int64_t t = 0;
	size_t used = 0;
	const char *s = "2262-04-12T00:00:00.5+03:00 x";
	assert_int_equal(iq_time_parse_iso(s, strlen(s), &t, &used), -1);
	assert_int_equal(iq_time_parse_iso_any(s, strlen(s), &t, &used), 1);
	assert_true(t == IQ_TIME_NONE);
	assert_int_equal(used, 27);
	s = "0001-01-01T00:00:00Z";
	assert_int_equal(iq_time_parse_iso_any(s, strlen(s), &t, &used), 1);
	assert_true(t == IQ_TIME_NONE);
	s = "2024-05-01 12:00:00";   /* in range: the same as iq_time_parse_iso */
	assert_int_equal(iq_time_parse_iso_any(s, strlen(s), &t, &used), 0);
	assert_int_equal(t, 1714564800LL * IQ_NS_PER_SEC);
	s = "2262-13-01T00:00:00Z";  /* malformed stays malformed */
	assert_int_equal(iq_time_parse_iso_any(s, strlen(s), &t, &used), -1);
}

static int64_t wall(const char *s)
{
	int64_t t = 0;
	size_t used;
	assert_true(iq_time_parse_iso(s, strlen(s), &t, &used) == 0);
	return t;
}

static void test_default_zone_fixed_offsets(void **state)
{
	(void)state;
	struct iq_diag d;
	int64_t w = wall("2024-05-01T12:00:00");
	assert_int_equal(iq_time_from_local(w), w);   /* UTC unless told */
	int64_t t = w;
	assert_int_equal(iq_time_local(&t), IQ_TS_ASSUMED_UTC);
	assert_int_equal(t, w);
	assert_int_equal(iq_time_set_default_zone("+03:00", &d), 0);
	assert_string_equal(iq_time_default_zone(), "+03:00");
	assert_int_equal(iq_time_from_local(w), w - 3 * 3600 * IQ_NS_PER_SEC);
	t = w;
	assert_int_equal(iq_time_local(&t), IQ_TS_ASSUMED_ZONE);
	assert_int_equal(t, w - 3 * 3600 * IQ_NS_PER_SEC);
	assert_int_equal(iq_time_set_default_zone("-0530", &d), 0);
	assert_string_equal(iq_time_default_zone(), "-05:30");
	assert_int_equal(iq_time_from_local(w), w + (5 * 3600 + 1800) * IQ_NS_PER_SEC);
	assert_int_equal(iq_time_set_default_zone("UTC+3", &d), 0);
	assert_string_equal(iq_time_default_zone(), "+03:00");
	assert_true(iq_time_from_local(IQ_TIME_NONE) == IQ_TIME_NONE);
	/* bad specs are refused, naming the spec, and change nothing */
	assert_int_equal(iq_time_set_default_zone("+25:00", &d), IQ_ERR_USAGE);
	assert_non_null(strstr(d.msg, "'+25:00'"));
	assert_int_equal(iq_time_set_default_zone("Mars/Olympus_Mons", &d), IQ_ERR_USAGE);
	assert_int_equal(iq_time_set_default_zone("../../etc/passwd", &d), IQ_ERR_USAGE);
	assert_int_equal(iq_time_set_default_zone("/etc/localtime", &d), IQ_ERR_USAGE);
	assert_string_equal(iq_time_default_zone(), "+03:00");
	assert_int_equal(iq_time_set_default_zone(NULL, &d), 0);
	assert_string_equal(iq_time_default_zone(), "UTC");
	assert_int_equal(iq_time_from_local(w), w);
}

static void test_default_zone_named_follows_dst(void **state)
{
	(void)state;
	struct iq_diag d;
	FILE *f = fopen("/usr/share/zoneinfo/Europe/Berlin", "rb");
	if (!f && !getenv("TZDIR"))
		skip();   /* no tzdata on this machine */
	if (f)
		fclose(f);
	setenv("TZ", "UTC", 1);
	assert_int_equal(iq_time_set_default_zone("Europe/Berlin", &d), 0);
	assert_string_equal(iq_time_default_zone(), "Europe/Berlin");
	int64_t h = 3600 * IQ_NS_PER_SEC;
	/* CET in winter, CEST in summer, either side of 2024-03-31 02:00 */
	assert_int_equal(iq_time_from_local(wall("2024-01-15T12:00:00")), wall("2024-01-15T11:00:00"));
	assert_int_equal(iq_time_from_local(wall("2024-07-01T12:00:00.250")), wall("2024-07-01T10:00:00.250"));
	assert_int_equal(iq_time_from_local(wall("2024-03-31T01:59:59")), wall("2024-03-31T00:59:59"));
	assert_int_equal(iq_time_from_local(wall("2024-03-31T03:00:00")), wall("2024-03-31T01:00:00"));
	/* cached quarter hours give the same answers the second time */
	assert_int_equal(iq_time_from_local(wall("2024-07-01T12:14:59")), wall("2024-07-01T12:14:59") - 2 * h);
	assert_int_equal(iq_time_from_local(wall("2024-01-15T12:00:00")), wall("2024-01-15T11:00:00"));
	/* Istanbul: +03 all year since 2016, +02/+03 before */
	assert_int_equal(iq_time_set_default_zone("Europe/Istanbul", &d), 0);
	assert_int_equal(iq_time_from_local(wall("2024-01-15T12:00:00")), wall("2024-01-15T09:00:00"));
	assert_int_equal(iq_time_from_local(wall("2015-01-15T12:00:00")), wall("2015-01-15T10:00:00"));
	/* New York, far future: the zone's rule, not a table that ends */
	assert_int_equal(iq_time_set_default_zone("America/New_York", &d), 0);
	assert_int_equal(iq_time_from_local(wall("2061-07-04T09:00:00")), wall("2061-07-04T13:00:00"));
	/* the process's own TZ is left as it was */
	assert_string_equal(getenv("TZ"), "UTC");
	assert_int_equal(iq_time_set_default_zone("UTC", &d), 0);
}

static void test_rfc1123_as_kubectl_prints_it(void **state)
{
	(void)state;
	const char *a = "Mon, 30 Nov 2026 14:12:03 +0000";
	assert_int_equal(iq_time_parse_rfc1123(a, strlen(a)), wall("2026-11-30T14:12:03"));
	const char *b = "Tue, 07 Jul 2015 12:53:51 -0700";
	assert_int_equal(iq_time_parse_rfc1123(b, strlen(b)), wall("2015-07-07T19:53:51"));
	const char *c = "Tue, 07 Jul 2015 12:53:51 GMT";
	assert_int_equal(iq_time_parse_rfc1123(c, strlen(c)), wall("2015-07-07T12:53:51"));
	static const char *const bad[] = {
		"Mon, 01 Jan 0001 00:00:00 +0000",   /* Go's zero time */
		"Mon, 31 Feb 2026 14:12:03 +0000", "Mon, 30 Nov 2026 14:12:03 CET",
		"Mon, 30 Nov 2026 14:12:03", "30 Nov 2026 14:12:03 +0000", "Mon, 30 Xyz 2026 14:12:03 +0000",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_true(iq_time_parse_rfc1123(bad[i], strlen(bad[i])) == IQ_TIME_NONE);
}

static void test_iso_offsets_convert_to_utc(void **state)
{
	(void)state;
	int z;
	size_t used;
	/* CRI-O: 9 digits and +HH:MM; 14:00 at +02:00 is 12:00 UTC */
	int64_t t = iso("2024-05-01T14:00:00.000000001+02:00", &z, &used);
	assert_int_equal(z, 1);
	assert_int_equal(t, 1714564800LL * IQ_NS_PER_SEC + 1);
	t = iso("2024-05-01T07:30:00-0430", &z, &used);
	assert_int_equal(t, 1714564800LL * IQ_NS_PER_SEC);
	/* no zone: taken as UTC, reported as such */
	t = iso("2024-05-01 12:00:00,250", &z, &used);
	assert_int_equal(z, 0);
	assert_int_equal(t, 1714564800LL * IQ_NS_PER_SEC + 250000000);
}

static void test_iso_rejects_garbage(void **state)
{
	(void)state;
	int64_t t;
	assert_int_equal(iq_time_parse_iso("2024-13-01T00:00:00Z", 20, &t, NULL), -1);
	assert_int_equal(iq_time_parse_iso("2023-02-29T00:00:00Z", 20, &t, NULL), -1);
	assert_int_equal(iq_time_parse_iso("2024-02-29T00:00:00Z", 20, &t, NULL), 1);
	assert_int_equal(iq_time_parse_iso("2024-05-01", 10, &t, NULL), -1);
	assert_int_equal(iq_time_parse_iso("hello", 5, &t, NULL), -1);
	assert_int_equal(iq_time_parse_iso("2024-05-01T12:0", 15, &t, NULL), -1);
}

static void test_split_round_trips(void **state)
{
	(void)state;
	int y, mo, d, h, mi, s;
	long ns;
	int64_t t = iq_time_make(1969, 12, 31, 23, 59, 59, 999000000);
	iq_time_split(t, &y, &mo, &d, &h, &mi, &s, &ns);
	assert_int_equal(y, 1969);
	assert_int_equal(mo, 12);
	assert_int_equal(d, 31);
	assert_int_equal(s, 59);
	assert_int_equal(ns, 999000000);
	t = iq_time_make(2261, 12, 31, 0, 0, 0, 0);
	iq_time_split(t, &y, &mo, &d, NULL, NULL, NULL, NULL);
	assert_int_equal(y, 2261);
	assert_int_equal(mo, 12);
	assert_int_equal(d, 31);
	/* beyond int64 nanoseconds: no time rather than a wrapped one */
	assert_true(iq_time_make(2262, 4, 12, 0, 0, 0, 0) == IQ_TIME_NONE);
	assert_true(iq_time_make(1500, 1, 1, 0, 0, 0, 0) == IQ_TIME_NONE);
	int64_t x;
	assert_int_equal(iq_time_parse_iso("9999-12-31T23:59:59Z", 20, &x, NULL), -1);
}

static int64_t at(int y, int mo, int d, int h)
{
	return iq_time_make(y, mo, d, h, 0, 0, 0);
}

static struct iq_yearless md(int mo, int d, int h)
{
	struct iq_yearless v = {mo, d, h, 0, 0, 0};
	return v;
}

/* The year rule of core/iqtime.h, case by case. */
static void test_year_never_after_the_file_date(void **state)
{
	(void)state;
	struct iq_years y;
	struct iq_yearless d = md(12, 10, 8);
	iq_years_init(&y, at(2026, 12, 4, 0));
	assert_true(iq_years_place(&y, &d) == at(2025, 12, 10, 8));
	/* within a day of the file's date: a zone's worth, same year */
	iq_years_init(&y, at(2026, 12, 4, 0));
	d = md(12, 4, 20);
	assert_true(iq_years_place(&y, &d) == at(2026, 12, 4, 20));
	/* no file date, no year in the text: no time */
	iq_years_init(&y, IQ_TIME_NONE);
	assert_true(iq_years_place(&y, &d) == IQ_TIME_NONE);
	/* Feb 29 lies in the latest leap year before the date */
	iq_years_init(&y, at(2026, 3, 1, 0));
	d = md(2, 29, 1);
	assert_true(iq_years_place(&y, &d) == at(2024, 2, 29, 1));
}

static void test_year_run_across_new_year_read_forwards(void **state)
{
	(void)state;
	struct iq_yearless run[] = {md(12, 3, 1), md(12, 31, 23), md(1, 1, 0), md(1, 3, 5)};
	int64_t dates[][4] = {
		/* file dated 2026-12-04: the run ended before, in January 2026 */
		{at(2025, 12, 3, 1), at(2025, 12, 31, 23), at(2026, 1, 1, 0), at(2026, 1, 3, 5)},
		/* file dated 2027-01-05: December 2026 to January 2027 */
		{at(2026, 12, 3, 1), at(2026, 12, 31, 23), at(2027, 1, 1, 0), at(2027, 1, 3, 5)},
	};
	int64_t limits[] = {at(2026, 12, 4, 0), at(2027, 1, 5, 0)};
	for (int c = 0; c < 2; c++) {
		struct iq_years_scan sc;
		memset(&sc, 0, sizeof sc);
		for (int i = 0; i < 4; i++)
			iq_years_scan_add(&sc, &run[i]);
		struct iq_years y;
		iq_years_init(&y, limits[c]);
		y.first_year = iq_years_scan_first(&sc, limits[c]);
		for (int i = 0; i < 4; i++)
			assert_true(iq_years_place(&y, &run[i]) == dates[c][i]);
	}
	/* without the look-ahead, the run still reads forwards but may not
	 * pass the file's date: January falls back into its year */
	struct iq_years y;
	iq_years_init(&y, at(2026, 12, 4, 0));
	assert_true(iq_years_place(&y, &run[0]) == at(2026, 12, 3, 1));
	assert_true(iq_years_place(&y, &run[2]) == at(2026, 1, 1, 0));
	/* lines a little out of order are not a New Year */
	iq_years_init(&y, at(2026, 6, 1, 0));
	struct iq_yearless a = md(5, 2, 10), b = md(5, 2, 9);
	assert_true(iq_years_place(&y, &a) == at(2026, 5, 2, 10));
	assert_true(iq_years_place(&y, &b) == at(2026, 5, 2, 9));
}

static void test_year_written_in_the_text_wins(void **state)
{
	(void)state;
	struct iq_years y;
	/* a glog header of 2019 in a file dated 2026 */
	iq_years_init(&y, at(2026, 12, 4, 0));
	iq_years_seen(&y, at(2019, 7, 18, 6));
	struct iq_yearless d = md(12, 31, 23), j = md(1, 2, 3);
	assert_true(iq_years_place(&y, &d) == at(2019, 12, 31, 23));
	assert_true(iq_years_place(&y, &j) == at(2020, 1, 2, 3));
	/* dates before the first year written: the run ends at or before it */
	struct iq_years_scan sc;
	memset(&sc, 0, sizeof sc);
	struct iq_yearless dec = md(12, 30, 0);
	iq_years_scan_add(&sc, &dec);
	iq_years_scan_add(&sc, &j);
	assert_int_equal(iq_years_scan_first(&sc, at(2019, 1, 5, 0)), 2018);
	/* a text running past the file's date voids the date */
	iq_years_init(&y, at(2026, 1, 1, 0));
	iq_years_seen(&y, at(2030, 3, 1, 0));
	d = md(3, 2, 0);
	assert_true(iq_years_place(&y, &d) == at(2030, 3, 2, 0));
	/* an end the text gives replaces the file's date */
	iq_years_init(&y, at(2026, 12, 4, 0));
	iq_years_limit(&y, at(2024, 5, 7, 12));
	d = md(5, 7, 11);
	assert_true(iq_years_place(&y, &d) == at(2024, 5, 7, 11));
	assert_int_equal(iq_years_scan_first(&sc, IQ_TIME_NONE), 0);
}

static void test_escape_display_neutralises_terminal_codes(void **state)
{
	(void)state;
	char out[64];
	iq_escape_display(out, sizeof out, "a\x1b[31mb\tc\n\\", 11);
	assert_string_equal(out, "a\\x1b[31mb\\tc\\n\\\\");
	iq_escape_display(out, sizeof out, "caf\xc3\xa9 \xff", 7);
	assert_string_equal(out, "caf\xc3\xa9 \\xff");
	/* C1 control U+009B (CSI) is escaped too */
	iq_escape_display(out, sizeof out, "\xc2\x9b", 2);
	assert_string_equal(out, "\\x9b");
	/* never overflows */
	iq_escape_display(out, 4, "abcdef", 6);
	assert_string_equal(out, "abc");
}

static void test_buf_grows_and_stays_terminated(void **state)
{
	(void)state;
	struct iq_buf b;
	iq_buf_init(&b);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(iq_buf_printf(&b, "%d,", i), 0);
	assert_int_equal(strlen(b.p), b.len);
	assert_memory_equal(b.p, "0,1,2,", 6);
	iq_buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.p, "");
	iq_buf_release(&b);
	const char *hay = "abcabd";
	assert_ptr_equal(iq_memmem(hay, 6, "abd", 3), hay + 3);
	assert_null(iq_memmem(hay, 6, "abe", 3));
	assert_null(iq_memmem(hay, 2, "abc", 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iso_zulu_and_fractions),
		cmocka_unit_test(test_iso_offsets_convert_to_utc),
		cmocka_unit_test(test_iso_any_keeps_far_years_without_time),
		cmocka_unit_test(test_default_zone_fixed_offsets),
		cmocka_unit_test(test_rfc1123_as_kubectl_prints_it),
		cmocka_unit_test(test_default_zone_named_follows_dst),
		cmocka_unit_test(test_iso_rejects_garbage),
		cmocka_unit_test(test_split_round_trips),
		cmocka_unit_test(test_year_never_after_the_file_date),
		cmocka_unit_test(test_year_run_across_new_year_read_forwards),
		cmocka_unit_test(test_year_written_in_the_text_wins),
		cmocka_unit_test(test_escape_display_neutralises_terminal_codes),
		cmocka_unit_test(test_buf_grows_and_stays_terminated),
	};
	return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
