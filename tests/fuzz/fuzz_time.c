/* fuzz_time.c: libFuzzer target of timestamp parsing: iq_time_parse_iso on
 * the raw bytes, iq_time_parse_arg and iq_month_from_abbr on a
 * NUL-terminated copy, the round trip of what they accept through
 * iq_time_fmt_ms, and the year rule's bound (iq_years). */
#include <string.h>

#include "../../analyzer/core/iq.h"
#include "../../analyzer/core/iqtime.h"
#include "fuzz.h"

/* t rounded down to the millisecond, as iq_time_fmt_ms writes it. */
static int64_t floor_ms(int64_t t)
{
	int64_t ms = 1000000;
	int64_t r = t % ms;
	return r < 0 ? t - r - ms : t - r;
}

/* A time a parser returned must survive being written and read back. */
static void round_trip(int64_t t)
{
	char out[IQ_TIME_BUF];
	int y, mon, day, h, mi, s;
	long ns;
	int64_t back;

	FUZZ_CHECK(t != IQ_TIME_NONE);
	iq_time_split(t, &y, &mon, &day, &h, &mi, &s, &ns);
	FUZZ_CHECK(mon >= 1 && mon <= 12 && day >= 1 && day <= 31);
	FUZZ_CHECK(h >= 0 && h < 24 && mi >= 0 && mi < 60 && s >= 0 && s < 60);
	FUZZ_CHECK(ns >= 0 && ns < IQ_NS_PER_SEC);
	FUZZ_CHECK(iq_time_make(y, mon, day, h, mi, s, ns) == t ||
		   y < IQ_YEAR_MIN || y > IQ_YEAR_MAX);
	iq_time_fmt_ms(t, out);
	FUZZ_CHECK(strlen(out) == 24);
	/* a zone offset may move a time just outside the years accepted */
	if (y < IQ_YEAR_MIN || y > IQ_YEAR_MAX)
		return;
	FUZZ_CHECK(iq_time_parse_arg(out, &back) == 0);
	FUZZ_CHECK(back == floor_ms(t));
	/* a yearless date is never placed after the file's date t */
	struct iq_years ys;
	iq_years_init(&ys, t);
	for (int m = 1; m <= 12; m++) {
		struct iq_yearless d = {m, day, h, mi, s, ns};
		int64_t p = iq_years_place(&ys, &d);
		FUZZ_CHECK(p == IQ_TIME_NONE || p <= t + IQ_YEAR_GRACE);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	int64_t t;
	size_t used = (size_t)-1;
	char out[IQ_TIME_BUF];

	int rc = iq_time_parse_iso(p, size, &t, &used);
	FUZZ_CHECK(rc >= -1 && rc <= 1);
	if (rc >= 0) {
		FUZZ_CHECK(used >= 1 && used <= size);
		round_trip(t);
		/* what was consumed parses alone to the same time */
		int64_t t2;
		size_t used2;
		FUZZ_CHECK(iq_time_parse_iso(p, used, &t2, &used2) == rc);
		FUZZ_CHECK(t2 == t && used2 == used);
	}

	char *s = iq_xstrndup(p, size);
	if (iq_time_parse_arg(s, &t) == 0)
		round_trip(t);
	int mon = iq_month_from_abbr(s);
	FUZZ_CHECK(mon >= 0 && mon <= 12);
	free(s);

	/* any int64 splits and formats without overflow */
	if (size >= 8) {
		memcpy(&t, p, sizeof t);
		iq_time_fmt_ms(t, out);
		FUZZ_CHECK(strlen(out) < IQ_TIME_BUF);
	}
	return 0;
}
