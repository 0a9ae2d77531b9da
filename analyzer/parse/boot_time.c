/* boot_time.c: files that say when a node booted: /proc/stat ("btime
 * <epoch>"), /proc/uptime ("350735.47 234388.90": seconds since boot when
 * the file was written, its mtime), `uptime` ("14:03:27 up 12 days,  3:14,  2 users,  load
 * average: ..."), `uptime -s` and `who -b` ("system boot  2024-05-01
 * 08:12"), and boot_time files holding an epoch or a date. Each becomes a
 * kernel record whose time and seconds-since-boot (boot_s) together give
 * the boot time, the anchor detect/boottime.c turns raw dmesg's seconds
 * since boot into wall time with.
 *
 * Decisions: a boot time is a record at that time with boot_s 0; an
 * `uptime` line is a record at its time of day with boot_s its uptime (to
 * the minute it prints), the date taken from the file's mtime (the day
 * before when the time of day lies after the mtime's); without an mtime it
 * has no time; a /proc/uptime line is a record at the file's mtime with
 * boot_s its first number (no time without an mtime: ±1 s, the mtime's
 * precision). Dates without a zone are UTC. /proc/stat's other lines are
 * skipped "proc stat counter", anything else "not a boot time". */
#include <string.h>

#include "parse.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static size_t skip_sp(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/* An unsigned decimal at s[*i] (at most 12 digits); -1 when none. */
static long long number(const char *s, size_t n, size_t *i)
{
	size_t b = *i;
	long long v = 0;
	while (*i < n && is_digit(s[*i]) && *i - b < 12)
		v = v * 10 + (s[(*i)++] - '0');
	return *i > b ? v : -1;
}

static int starts(const char *s, size_t n, size_t i, const char *lit)
{
	size_t l = strlen(lit);
	return n - i >= l && memcmp(s + i, lit, l) == 0;
}

/* "btime 1714550000" */
static int btime(const char *s, size_t n, int64_t *ts)
{
	if (!starts(s, n, 0, "btime "))
		return -1;
	size_t i = skip_sp(s, n, 6);
	long long v = number(s, n, &i);
	if (v < 0 || skip_sp(s, n, i) != n || v > 9000000000LL)
		return -1;
	*ts = (int64_t)v * IQ_NS_PER_SEC;
	return 0;
}

/* /proc/uptime: "350735.47 234388.90", seconds since boot and idle
 * seconds, each with two decimals; *up the first, in seconds. */
static int proc_uptime(const char *s, size_t n, double *up)
{
	size_t i = 0;
	double v[2];
	for (int k = 0; k < 2; k++) {
		if (k && (i >= n || s[i] != ' '))
			return -1;
		i += (size_t)k;
		long long w = number(s, n, &i);
		if (w < 0 || i + 3 > n || s[i] != '.' || !is_digit(s[i + 1]) || !is_digit(s[i + 2]))
			return -1;
		v[k] = (double)w + ((s[i + 1] - '0') * 10 + (s[i + 2] - '0')) / 100.0;
		i += 3;
	}
	if (i != n)
		return -1;
	*up = v[0];
	return 0;
}

/* The `uptime` line: *tod seconds into the day, *up seconds since boot. */
static int uptime_line(const char *s, size_t n, long *tod, long *up)
{
	size_t i = skip_sp(s, n, 0);
	long h, m, sec;
	if (n - i < 12 || !is_digit(s[i]) || !is_digit(s[i + 1]) || s[i + 2] != ':' ||
	    !is_digit(s[i + 3]) || !is_digit(s[i + 4]) || s[i + 5] != ':' || !is_digit(s[i + 6]) ||
	    !is_digit(s[i + 7]))
		return -1;
	h = (s[i] - '0') * 10 + (s[i + 1] - '0');
	m = (s[i + 3] - '0') * 10 + (s[i + 4] - '0');
	sec = (s[i + 6] - '0') * 10 + (s[i + 7] - '0');
	if (h > 23 || m > 59 || sec > 60)
		return -1;
	i = skip_sp(s, n, i + 8);
	if (!starts(s, n, i, "up "))
		return -1;
	i = skip_sp(s, n, i + 3);
	long total = 0;
	long long v = number(s, n, &i);
	if (v < 0)
		return -1;
	i = skip_sp(s, n, i);
	if (starts(s, n, i, "day")) {   /* "12 days, " */
		total += (long)v * 86400;
		while (i < n && s[i] != ',')
			i++;
		i = skip_sp(s, n, i + 1);
		v = number(s, n, &i);
		if (v < 0)
			return -1;
		i = skip_sp(s, n, i);
	}
	if (i < n && s[i] == ':') {     /* "3:14," hours and minutes */
		i++;
		long long mm = number(s, n, &i);
		if (mm < 0 || mm > 59)
			return -1;
		total += (long)v * 3600 + (long)mm * 60;
	} else if (starts(s, n, i, "min")) {
		total += (long)v * 60;
	} else if (starts(s, n, i, "sec")) {
		total += (long)v;
	} else if (!starts(s, n, i, "user")) {   /* "up 12 days,  2 users" */
		return -1;
	}
	if (!iq_memmem(s, n, "load average", 12))
		return -1;
	*tod = h * 3600 + m * 60 + (sec > 59 ? 59 : sec);
	*up = total;
	return 0;
}

/* A date on its own ("2024-05-01 08:12:44", an RFC 3339 time), after
 * `who -b`'s "system boot", or an epoch on its own. *zoned as
 * iq_time_parse_iso; epochs are UTC (1). */
static int boot_date(const char *s, size_t n, int64_t *ts, int *zoned, struct iq_str *raw)
{
	size_t i = skip_sp(s, n, 0);
	if (starts(s, n, i, "system boot"))
		i = skip_sp(s, n, i + 11);
	size_t e = n;
	while (e > i && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	if (e - i == 16 && s[i + 10] == ' ') {   /* who -b: no seconds */
		char tmp[24];
		memcpy(tmp, s + i, 16);
		memcpy(tmp + 16, ":00", 4);
		size_t used;
		int z = iq_time_parse_iso(tmp, 19, ts, &used);
		if (z < 0 || used != 19)
			return -1;
		*zoned = z;
		*raw = iq_str_make(s + i, 16);
		return 0;
	}
	size_t used = 0;
	int z = iq_time_parse_iso(s + i, e - i, ts, &used);
	*raw = iq_str_make(s + i, e - i);
	if (z >= 0 && used == e - i) {
		*zoned = z;
		return 0;
	}
	size_t j = i;
	long long v = number(s, e, &j);
	if (v >= 100000000LL && v <= 9000000000LL && j == e) {
		*ts = (int64_t)v * IQ_NS_PER_SEC;
		*zoned = 1;
		return 0;
	}
	return -1;
}

static int proc_stat_counter(const char *s, size_t n)
{
	static const char *const keys[] = {
		"cpu", "intr ", "ctxt ", "processes ", "procs_running ", "procs_blocked ",
		"softirq ", "page ", "swap ",
	};
	for (size_t k = 0; k < IQ_ARRAY_LEN(keys); k++)
		if (starts(s, n, 0, keys[k]))
			return 1;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;
	return b ? b + 1 : path ? path : "";
}

static int named_for_boot(const char *path)
{
	static const char *const names[] = {
		"boot_time", "boot-time", "boottime", "btime", "uptime", "uptime-s", "uptime_-s",
		"who_-b", "who-b", "boot_time.txt", "uptime.txt", "btime.txt",
	};
	const char *b = base_name(path);
	for (size_t k = 0; k < IQ_ARRAY_LEN(names); k++)
		if (strcmp(b, names[k]) == 0)
			return 1;
	return 0;
}

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	size_t pos = 0;
	int lines = 0, counters = 0, bt = 0, first = 1;
	while (pos < n && lines < 100) {
		const char *nl = memchr(head + pos, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - (head + pos)) : n - pos;
		const char *s = head + pos;
		pos += len + 1;
		if (len && s[len - 1] == '\r')
			len--;
		if (skip_sp(s, len, 0) == len)
			continue;
		lines++;
		int64_t t;
		long tod, up;
		double pup;
		int z;
		struct iq_str raw;
		if (btime(s, len, &t) == 0)
			bt = 1;
		else if (proc_stat_counter(s, len))
			counters++;
		else if (first && named_for_boot(path) && proc_uptime(s, len, &pup) == 0) {
			snprintf(why, whysz, "/proc/uptime (seconds since boot when the file was written)");
			return 90;
		} else if (first && uptime_line(s, len, &tod, &up) == 0) {
			snprintf(why, whysz, "uptime output (time of day, time since boot)");
			return 85;
		} else if (first && starts(s, len, skip_sp(s, len, 0), "system boot") &&
			   boot_date(s, len, &t, &z, &raw) == 0) {
			snprintf(why, whysz, "who -b output (system boot date)");
			return 85;
		} else if (first && named_for_boot(path) && boot_date(s, len, &t, &z, &raw) == 0) {
			snprintf(why, whysz, "a boot time file (%s) holding a date", base_name(path));
			return 90;
		}
		first = 0;
	}
	if (bt && counters) {
		snprintf(why, whysz, "/proc/stat with the boot time (btime)");
		return 90;
	}
	return 0;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(st);
	IQ_UNUSED(ctx);
	return 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	IQ_UNUSED(st);
	if (skip_sp(s, n, 0) == n) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_KERNEL);
	r.line = lineno;
	r.text = iq_str_make(s, n);
	r.u.kernel.facility = IQ_STR_LIT("boot-time");
	int64_t t;
	long tod, up;
	double pup;
	int z;
	if (btime(s, n, &t) == 0) {
		r.ts = t;
		r.ts_how = IQ_TS_EXPLICIT;
		r.ts_raw = iq_str_make(s + 6, n - 6);
		r.u.kernel.boot_s = 0;
	} else if (proc_uptime(s, n, &pup) == 0) {
		r.u.kernel.boot_s = pup;
		r.u.kernel.facility = IQ_STR_LIT("proc-uptime");
		if (ctx->mtime != IQ_TIME_NONE) {
			r.ts = ctx->mtime;
			r.ts_how = IQ_TS_EXPLICIT; /* an mtime is UTC */
		}
	} else if (uptime_line(s, n, &tod, &up) == 0) {
		r.u.kernel.boot_s = (double)up;
		r.ts_raw = iq_str_make(s + skip_sp(s, n, 0), 8);
		if (ctx->mtime != IQ_TIME_NONE) {
			int64_t day = ctx->mtime - ((ctx->mtime % (86400 * IQ_NS_PER_SEC)) +
						    86400 * IQ_NS_PER_SEC) % (86400 * IQ_NS_PER_SEC);
			r.ts = day + (int64_t)tod * IQ_NS_PER_SEC;
			if (r.ts > ctx->mtime + 3600 * IQ_NS_PER_SEC)
				r.ts -= 86400 * IQ_NS_PER_SEC;  /* written before midnight */
			r.ts = iq_time_from_local(r.ts);
			r.ts_how = IQ_TS_YEAR_INFERRED;
		}
	} else if (boot_date(s, n, &t, &z, &r.ts_raw) == 0) {
		r.ts = t;
		r.ts_how = z ? IQ_TS_EXPLICIT : iq_time_local(&r.ts);
		r.u.kernel.boot_s = 0;
	} else {
		ctx->sink.skip(ctx->sink.u, lineno, 1,
			       proc_stat_counter(s, n) ? "proc stat counter" : "not a boot time", s, n);
		return 0;
	}
	return ctx->sink.record(ctx->sink.u, &r);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(st);
	IQ_UNUSED(ctx);
	return 0;
}

const struct iq_format iq_format_boot_time = {
	.name = "boot-time",
	.desc = "when a node booted: /proc/stat btime, /proc/uptime, uptime, uptime -s, who -b, boot_time files",
	.sniff = sniff,
	.state_size = 0,
	.begin = begin,
	.line = line,
	.end = end,
};
