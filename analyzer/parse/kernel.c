/* kernel.c: kernel logs, one record per message line: raw dmesg
 * ("[ 8523.347322] msg"), dmesg -T, -d ("[ 1.234567 <  0.000123>]"), -x
 * ("kern  :warn  : ", "local2:notice: "), --time-format iso and several
 * --time-format stamps on a line, printk levels ("<4>"), syslog files
 * (kern.log, messages: BSD dates in any of a few locales, RFC 3339 with a
 * host or a ChromeOS severity, RFC 5424 with or without PRI) and
 * journalctl -k short/short-iso. OOM-killer blocks stay one record per
 * line; grouping is a later stage.
 *
 * Decisions: a syslog date has no year; it gets one by the year rule
 * (iq_parse_yearless: read forwards, the text's years first, never after
 * the file's date; journalctl's "end at" bounds it); with none the record
 * has no wall time (boot_relative when it has a "[uptime]", else none). A
 * wall time on a dmesg line wins over its uptime, which stays boot_s. A
 * line with no known prefix is a continuation of the pending record when it is
 * indented (journalctl indents those to the message column, which is cut
 * off), else a record of its own whose time is inherited from the record
 * before; lines before the file's first entry (a header, the tail of a
 * record rotated away) take that first entry's time, inherited. Lines
 * from other programs in a syslog file are records too, facility = the
 * program. Journal markers ("-- Reboot --") are skipped. */
#include <string.h>

#include "parse.h"

/* A part of the pending line: an offset into the copy, or a literal. */
struct part {
	size_t off, n;
	const char *lit;
};

struct kern {
	struct iq_buf buf;      /* the pending record's line + continuations */
	int pending;
	long line, nlines;
	size_t msg_col;         /* where the message starts in the first line */
	struct part host, fac, sev, ts_raw, text;
	int64_t ts;
	enum iq_ts_how how;
	double boot_s;
	int64_t prev_ts;        /* the last record's wall time, for inheriting */
	/* lines before the file's first entry (a header, the tail of a record
	 * rotated away), held to be given that entry's time: each a long
	 * line number, an int (LEAD_*) and a size_t length, then the bytes */
	int started;            /* the first entry has been seen */
	struct iq_buf lead;
	int nlead;
};

enum { LEAD_TEXT, LEAD_BLANK, LEAD_MARKER };
#define MAX_LEAD 64

/* What one line's prefixes say; slices point into the line. */
struct kline {
	int prefixed;           /* some known prefix was found */
	int dmesg;              /* a dmesg form: [uptime], -T, iso, -x, <N> */
	int syslog;             /* a syslog source ("host prog[pid]:") */
	int yearless;           /* a syslog date: mon..ns hold it */
	int mon, day, h, mi, sec;
	long ns;
	int64_t ts;
	enum iq_ts_how how;
	double boot_s;
	struct iq_str host, fac, sev, ts_raw;
	const char *fac_lit, *sev_lit;
	size_t text;            /* offset of the message */
};

static const char *const sev_names[] = {
	"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

/* Reads exactly k digits at s[*i]; -1 when they are not all there. */
static int digits(const char *s, size_t n, size_t *i, int k)
{
	int v = 0;
	for (int j = 0; j < k; j++, (*i)++) {
		if (*i >= n || !is_digit(s[*i]))
			return -1;
		v = v * 10 + (s[*i] - '0');
	}
	return v;
}

/* "hh:mm:ss" at s[*i]; 0 or -1. */
static int clock_of(const char *s, size_t n, size_t *i, int *h, int *mi, int *sec)
{
	*h = digits(s, n, i, 2);
	if (*h < 0 || *h > 23 || *i >= n || s[(*i)++] != ':')
		return -1;
	*mi = digits(s, n, i, 2);
	if (*mi < 0 || *mi > 59 || *i >= n || s[(*i)++] != ':')
		return -1;
	*sec = digits(s, n, i, 2);
	if (*sec < 0 || *sec > 60)
		return -1;
	if (*sec == 60)
		*sec = 59;
	return 0;
}

/* Years whose nanoseconds fit an int64_t. */
static int year_ok(int y)
{
	return y >= 1678 && y <= 2261;
}

/* iq_time_parse_iso for a year in range (garbage must not overflow). */
static int parse_iso(const char *s, size_t n, int64_t *out, size_t *used)
{
	size_t i = 0;
	if (!year_ok(digits(s, n, &i, 4)))
		return -1;
	return iq_time_parse_iso(s, n, out, used);
}

/* A day of month: " 7", "07" or "7" at s[*i]; -1 when none. */
static int day_of(const char *s, size_t n, size_t *i)
{
	if (*i < n && s[*i] == ' ') {
		(*i)++;
		return digits(s, n, i, 1);
	}
	if (*i + 1 < n && is_digit(s[*i]) && is_digit(s[*i + 1]))
		return digits(s, n, i, 2);
	return digits(s, n, i, 1);
}

/* dmesg -d's " <    0.000123>" before the closing ']' at s[*j]: skipped. */
static void delta_of(const char *s, size_t n, size_t *j)
{
	size_t k = *j;
	if (k + 1 >= n || s[k] != ' ' || s[k + 1] != '<')
		return;
	for (k += 2; k < n && (s[k] == ' ' || is_digit(s[k]) || s[k] == '.'); k++)
		;
	if (k < n && s[k] == '>')
		*j = k + 1;
}

/* "[ 8523.347322]" at s[*i] (spaces after '[' optional), or dmesg -d's
 * "[ 8523.347322 <    0.000123>]": seconds since boot, exact to the
 * microsecond. Advances *i past ']'; 0 or -1. */
static int boot_stamp(const char *s, size_t n, size_t *i, double *out, struct iq_str *raw)
{
	size_t j = *i;
	if (j >= n || s[j] != '[')
		return -1;
	j++;
	while (j < n && s[j] == ' ')
		j++;
	size_t b = j;
	int64_t ip = 0, fp = 0, scale = 1;
	while (j < n && is_digit(s[j]) && j - b < 12)
		ip = ip * 10 + (s[j++] - '0');
	if (j == b || j >= n || s[j] != '.')
		return -1;
	j++;
	size_t f = j;
	while (j < n && is_digit(s[j]) && j - f < 9) {
		fp = fp * 10 + (s[j++] - '0');
		scale *= 10;
	}
	size_t e = j;
	delta_of(s, n, &j);
	if (j == f || j >= n || s[j] != ']')
		return -1;
	*out = ((double)ip * (double)scale + (double)fp) / (double)scale;
	*raw = iq_str_make(s + b, e - b);
	*i = j + 1;
	return 0;
}

/* "[<    0.000123>]" (dmesg --time-format delta): the time since the
 * message before, which says nothing of when. */
static int delta_stamp(const char *s, size_t n, size_t *i)
{
	size_t k = *i + 2;
	if (k >= n || s[*i] != '[' || s[*i + 1] != '<')
		return -1;
	while (k < n && (s[k] == ' ' || is_digit(s[k]) || s[k] == '.'))
		k++;
	if (k + 1 >= n || s[k] != '>' || s[k + 1] != ']')
		return -1;
	*i = k + 2;
	return 0;
}

/* "[Tue May  7 12:00:00 2024]" (dmesg -T, no zone), with -d's delta
 * inside. */
static int ctime_stamp(const char *s, size_t n, size_t *i, int64_t *out, struct iq_str *raw)
{
	size_t j = *i;
	if (j >= n || s[j] != '[')
		return -1;
	size_t used = iq_parse_ctime(s + j + 1, n - j - 1, out);
	if (!used)
		return -1;
	j += 1 + used;
	size_t e = j;
	delta_of(s, n, &j);
	if (j >= n || s[j] != ']')
		return -1;
	*raw = iq_str_make(s + *i + 1, e - *i - 1);
	*i = j + 1;
	return 0;
}

/* After a "[ctime]" stamp at s[i]: " [error]" or " [core:error]", an
 * Apache httpd error log's level (apache_error.c), which no kernel
 * message starts with. */
static int apache_level(const char *s, size_t n, size_t i)
{
	static const char *const lv[] = {"emerg", "alert", "crit", "error", "warn",
					 "notice", "info", "debug", "trace"};
	if (i + 2 >= n || s[i] != ' ' || s[i + 1] != '[')
		return 0;
	size_t j = i + 2, e = j;
	while (e < n && e - j < 40 && s[e] != ']' && s[e] != ' ')
		e++;
	if (e >= n || s[e] != ']')
		return 0;
	const char *c = memchr(s + j, ':', e - j);
	if (c)
		j = (size_t)(c - s) + 1;
	size_t l = e - j;
	if (l > 5 && memcmp(s + j, "trace", 5) == 0 && l == 6 && s[j + 5] >= '1' && s[j + 5] <= '8')
		return 1;
	for (size_t k = 0; k < IQ_ARRAY_LEN(lv); k++)
		if (strlen(lv[k]) == l && memcmp(s + j, lv[k], l) == 0)
			return 1;
	return 0;
}

/* "May  7 12:00:00[.123456]", another locale's "août 19 11:08:37" or
 * journald's CJK "5月 07 12:00:00": a syslog date without a year. */
static int syslog_date(const char *s, size_t n, size_t *i, struct kline *k)
{
	size_t j = *i, ml = 0;
	int mon = 0;
	if (n - j >= 4 && s[j] >= 'A' && s[j] <= 'Z' && (mon = iq_month_from_abbr(s + j)) &&
	    s[j + 3] == ' ') {
		j += 4;
	} else if (n - j >= 4 && !is_digit(s[j]) && (mon = iq_month_word(s + j, n - j, &ml)) != 0) {
		/* journalctl or a syslog daemon in another locale: "août 19" */
		j += ml + 1;
	} else {
		size_t d0 = j;
		while (j < n && is_digit(s[j]) && j - d0 < 2)
			mon = mon * 10 + (s[j++] - '0');
		/* U+6708 (month) in UTF-8 */
		if (j == d0 || mon < 1 || mon > 12 || n - j < 4 || memcmp(s + j, "\xe6\x9c\x88 ", 4))
			return -1;
		j += 4;
	}
	int day = day_of(s, n, &j);
	if (day < 1 || day > 31 || j >= n || s[j++] != ' ')
		return -1;
	if (clock_of(s, n, &j, &k->h, &k->mi, &k->sec))
		return -1;
	long ns = 0;
	if (j + 1 < n && s[j] == '.' && is_digit(s[j + 1])) {
		long scale = 100000000L;
		for (j++; j < n && is_digit(s[j]); j++) {
			ns += (s[j] - '0') * scale;
			scale /= 10;
		}
	}
	/* "Nov 18 01:15:43: --- last message repeated 5 times ---": a BSD
	 * syslogd's own line, with a colon after the time and no source */
	size_t e = j;
	if (j < n && s[j] == ':' && (j + 1 == n || s[j + 1] == ' '))
		j++;
	else if (j < n && s[j] != ' ')
		return -1;
	k->mon = mon;
	k->day = day;
	k->ns = ns;
	k->yearless = 1;
	k->ts_raw = iq_str_make(s + *i, e - *i);
	*i = j;
	return 0;
}

/* A token of non-space bytes at s[*i]; its length. */
static size_t token(const char *s, size_t n, size_t i)
{
	size_t j = i;
	while (j < n && s[j] != ' ' && s[j] != '\t')
		j++;
	return j - i;
}

/* "prog[pid]: " or "prog: " at s[*i]: the program name. */
static int program(const char *s, size_t n, size_t *i, struct iq_str *prog)
{
	size_t j = *i;
	while (j < n && s[j] != ':' && s[j] != '[' && s[j] != ' ')
		j++;
	if (j == *i)
		return -1;
	struct iq_str name = iq_str_make(s + *i, j - *i);
	if (j < n && s[j] == '[') {
		j++;
		size_t d0 = j;
		while (j < n && is_digit(s[j]))
			j++;
		if (j == d0 || j >= n || s[j] != ']')
			return -1;
		j++;
	}
	if (j >= n || s[j] != ':' || (j + 1 < n && s[j + 1] != ' '))
		return -1;
	*prog = name;
	*i = j + 1;
	return 0;
}

/* After a syslog time: " host prog[pid]: ", or " prog[pid]: " when
 * hostless is set (some syslog daemons leave the host out). */
static int syslog_source(const char *s, size_t n, size_t *i, struct kline *k, int hostless)
{
	size_t j = *i;
	if (j >= n || s[j] != ' ')
		return -1;
	j++;
	size_t hl = token(s, n, j);
	size_t p = j + hl + 1;
	if (hl && p <= n && s[j + hl - 1] != ':' && program(s, n, &p, &k->fac) == 0) {
		k->host = iq_str_make(s + j, hl);
		k->syslog = 1;
		*i = p;
		return 0;
	}
	p = j;
	if (hostless && program(s, n, &p, &k->fac) == 0) {
		k->syslog = 1;
		*i = p;
		return 0;
	}
	return -1;
}

/* Skips one separator space. */
static size_t one_space(const char *s, size_t n, size_t i)
{
	return i < n && s[i] == ' ' ? i + 1 : i;
}

/* "kern  :warn  : " (dmesg -x): facility and level names. */
static int decode_prefix(const char *s, size_t n, size_t *i, struct kline *k)
{
	size_t j = *i, a = j;
	/* facilities: kern, daemon, authpriv, local0..local7, ... */
	while (j < n && (is_lower(s[j]) || (j > a && is_digit(s[j]))))
		j++;
	size_t an = j - a;
	while (j < n && s[j] == ' ')
		j++;
	if (an == 0 || j >= n || s[j++] != ':')
		return -1;
	size_t b = j;
	while (j < n && is_lower(s[j]))
		j++;
	size_t bn = j - b;
	while (j < n && s[j] == ' ')
		j++;
	if (bn == 0 || j >= n || s[j++] != ':' || j >= n || s[j] != ' ')
		return -1;
	if (an == 4 && memcmp(s + a, "kern", 4) == 0)
		k->fac_lit = "kernel";
	else
		k->fac = iq_str_make(s + a, an);
	k->sev = iq_str_make(s + b, bn);
	*i = j + 1;
	return 0;
}

/* RFC 5424 after the TIMESTAMP, at the space before HOST: HOST APP PROCID
 * MSGID SD, then the message. */
static int rfc5424_fields(const char *s, size_t n, size_t *i, struct kline *k)
{
	size_t j = *i;
	struct iq_str f[4];
	for (int t = 0; t < 4; t++) {
		if (j >= n || s[j] != ' ')
			return -1;
		j++;
		size_t l = token(s, n, j);
		if (!l)
			return -1;
		f[t] = iq_str_make(s + j, l);
		j += l;
	}
	if (j >= n || s[j] != ' ')
		return -1;
	j++;
	if (j < n && s[j] == '-') {
		j++;
	} else {
		if (j >= n || s[j] != '[')
			return -1;
		while (j < n && s[j] == '[') {
			while (j < n && !(s[j] == ']' && s[j - 1] != '\\'))
				j++;
			if (j >= n)
				return -1;
			j++;
		}
	}
	if (j < n && s[j] != ' ')
		return -1;
	if (!(f[0].n == 1 && f[0].p[0] == '-'))
		k->host = f[0];
	if (!(f[1].n == 1 && f[1].p[0] == '-'))
		k->fac = f[1];
	k->syslog = 1;
	j = one_space(s, n, j);
	if (n - j >= 3 && memcmp(s + j, "\xef\xbb\xbf", 3) == 0)
		j += 3;
	*i = j;
	return 0;
}

/* RFC 5424 after "<PRI>1 " (or a bare "1 "): TIMESTAMP HOST APP PROCID
 * MSGID SD MSG. */
static int rfc5424(const char *s, size_t n, size_t *i, struct kline *k)
{
	size_t j = *i;
	if (j < n && s[j] == '-') {
		j++;
	} else {
		size_t used;
		int z = parse_iso(s + j, n - j, &k->ts, &used);
		if (z < 0)
			return -1;
		k->how = z ? IQ_TS_EXPLICIT : iq_time_local(&k->ts);
		k->ts_raw = iq_str_make(s + j, used);
		j += used;
	}
	return rfc5424_fields(s, n, &j, k) == 0 ? (*i = j, 0) : -1;
}

/* After a syslog source: an optional "[ 8523.347322]" uptime (kern.log
 * with printk time on). */
static void source_boot(const char *s, size_t n, size_t *i, struct kline *k)
{
	if (*i < n && s[*i] == ' ') {
		size_t p = *i + 1;
		struct iq_str raw;
		if (boot_stamp(s, n, &p, &k->boot_s, &raw) == 0)
			*i = p;
	}
}

/* The severity words of RFC 3339 syslog that writes the level in place
 * of the host (ChromeOS: "%TIMESTAMP% %syslogseverity-text:::uppercase%
 * %syslogtag%%msg%"). */
static int syslog_level_word(struct iq_str h)
{
	static const char *const w[] = {"EMERG", "ALERT", "CRIT", "ERR", "ERROR",
					"WARNING", "WARN", "NOTICE", "INFO", "DEBUG"};
	for (size_t i = 0; i < IQ_ARRAY_LEN(w); i++)
		if (strlen(w[i]) == h.n && memcmp(w[i], h.p, h.n) == 0)
			return 1;
	return 0;
}

/* "2025-01-21T04:41:44,283302+00:00" at s[i] (dmesg --time-format iso:
 * a comma, six digits and a numeric zone, unlike the comma-millisecond
 * times of Java and Python loggers). */
static int dmesg_iso(const char *s, size_t n, size_t i, int64_t *t, size_t *used)
{
	if (n - i < 32 || s[i + 19] != ',' || parse_iso(s + i, n - i, t, used) != 1 ||
	    *used != 32 || (s[i + 26] != '+' && s[i + 26] != '-'))
		return -1;
	return 0;
}

/* The stamps of a dmesg line at s[*i], in any order and one or two
 * (dmesg prints each --time-format asked for): "[uptime]" (-d's delta
 * inside), "[ctime]" (-T), "[<delta>]", the iso form. A wall time wins
 * for ts, an uptime gives boot_s. 0 when one was read. */
static int dmesg_stamps(const char *s, size_t n, size_t *i, struct kline *k)
{
	int got = 0;
	for (int round = 0; round < 2 && *i < n; round++) {
		size_t j = *i, used;
		double b;
		int64_t t;
		struct iq_str raw;
		if (s[j] == '[' && boot_stamp(s, n, &j, &b, &raw) == 0) {
			k->boot_s = b;
			if (k->ts == IQ_TIME_NONE) {
				k->how = IQ_TS_BOOT_RELATIVE;
				k->ts_raw = raw;
			}
		} else if (s[j] == '[' && ctime_stamp(s, n, &j, &t, &raw) == 0) {
			if (apache_level(s, n, j))
				break;
			if (k->ts == IQ_TIME_NONE) {
				k->ts = t;
				k->how = iq_time_local(&k->ts);
				k->ts_raw = raw;
			}
		} else if (s[j] == '[' && delta_stamp(s, n, &j) == 0) {
			/* no time of its own */
		} else if (is_digit(s[j]) && dmesg_iso(s, n, j, &t, &used) == 0) {
			if (k->ts == IQ_TIME_NONE) {
				k->ts = t;
				k->how = IQ_TS_EXPLICIT;
				k->ts_raw = iq_str_make(s + j, used);
			}
			j += used;
		} else {
			break;
		}
		got = 1;
		*i = j;
		if (*i < n && s[*i] == ' ')
			(*i)++;
	}
	/* PRINTK_CALLER's "[   T3919] " or "[    C2] " after the time */
	if (got && *i + 3 < n && s[*i] == '[') {
		size_t j = *i + 1;
		while (j < n && s[j] == ' ')
			j++;
		size_t d = j + 1;
		if (j < n && (s[j] == 'T' || s[j] == 'C')) {
			for (j = d; j < n && is_digit(s[j]); j++)
				;
			if (j > d && j + 1 < n && s[j] == ']' && s[j + 1] == ' ')
				*i = j + 2;
		}
	}
	if (got && *i > 0 && s[*i - 1] == ' ')
		(*i)--;
	return got ? 0 : -1;
}

/* After an RFC 3339 time at s[*i]: a syslog source "host prog[pid]: ",
 * a level in the host's place ("INFO prog[pid]: "), or the RFC 5424
 * fields without PRI and version ("host app procid msgid SD"). */
static int iso_source(const char *s, size_t n, size_t *i, struct kline *k)
{
	size_t p = *i;
	if (syslog_source(s, n, &p, k, 0) == 0) {
		if (syslog_level_word(k->host)) {
			k->sev = k->host;
			k->host = IQ_STR_NULL;
		}
		*i = p;
		return 0;
	}
	p = *i;
	struct kline f = *k;
	if (rfc5424_fields(s, n, &p, &f) == 0) {
		*k = f;
		*i = p;
		return 0;
	}
	return -1;
}

/* Reads the prefixes of a line into k; k->text is where the message
 * starts (the line itself when nothing was recognised). */
static void read_prefixes(const char *s, size_t n, struct kline *k)
{
	size_t i = 0;
	memset(k, 0, sizeof *k);
	k->ts = IQ_TIME_NONE;
	k->boot_s = NAN;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	/* "<N>": printk level (dmesg -r) or syslog PRI (RFC 5424) */
	if (i < n && s[i] == '<') {
		size_t j = i + 1;
		int pri = 0;
		while (j < n && is_digit(s[j]) && j - i <= 3)
			pri = pri * 10 + (s[j++] - '0');
		if (j > i + 1 && j < n && s[j] == '>' && pri <= 191) {
			k->sev_lit = sev_names[pri & 7];
			k->prefixed = k->dmesg = 1;
			i = j + 1;
			size_t p = i + 2;
			if (n - i >= 2 && s[i] == '1' && s[i + 1] == ' ' && rfc5424(s, n, &p, k) == 0) {
				k->text = p;
				return;
			}
			k->ts = IQ_TIME_NONE;
			k->how = IQ_TS_NONE;
			k->ts_raw = IQ_STR_NULL;
		}
	} else if (n - i > 3 && s[i] == '1' && s[i + 1] == ' ' && is_digit(s[i + 2])) {
		/* RFC 5424 written to a file without its PRI: "1 2003-10-11T..." */
		size_t p = i + 2;
		if (rfc5424(s, n, &p, k) == 0) {
			k->prefixed = 1;
			k->text = p;
			return;
		}
		k->ts = IQ_TIME_NONE;
		k->how = IQ_TS_NONE;
		k->ts_raw = IQ_STR_NULL;
		k->host = k->fac = IQ_STR_NULL;
		k->syslog = 0;
	}
	if (i < n && is_lower(s[i]) && decode_prefix(s, n, &i, k) == 0)
		k->prefixed = k->dmesg = 1;
	size_t used;
	int z;
	if (i < n && dmesg_stamps(s, n, &i, k) == 0) {
		k->prefixed = k->dmesg = 1;
	} else if (i < n && is_digit(s[i]) &&
		   (z = parse_iso(s + i, n - i, &k->ts, &used)) >= 0) {
		k->how = z ? IQ_TS_EXPLICIT : iq_time_local(&k->ts);
		k->ts_raw = iq_str_make(s + i, used);
		k->prefixed = 1;
		i += used;
		if (iso_source(s, n, &i, k) == 0)
			source_boot(s, n, &i, k);
	} else if (i < n && syslog_date(s, n, &i, k) == 0) {
		k->prefixed = 1;
		if (syslog_source(s, n, &i, k, 1) == 0) {
			source_boot(s, n, &i, k);
		} else if (i + 1 < n && s[i] == ' ') {
			/* sysklogd: "host last message repeated 2 times" */
			size_t hl = token(s, n, i + 1);
			static const char rep[] = " last message repeated ";
			if (hl && s[i + 1] != '-' && n - (i + 1 + hl) > sizeof rep - 1 &&
			    memcmp(s + i + 1 + hl, rep, sizeof rep - 1) == 0) {
				k->host = iq_str_make(s + i + 1, hl);
				i += 1 + hl;
			}
		}
	}
	if (!k->prefixed) {
		k->text = 0;
		return;
	}
	/* the ring buffer is the kernel's, unless dmesg -x said otherwise */
	if (k->dmesg && !k->syslog && !k->fac.n)
		k->fac_lit = "kernel";
	k->text = one_space(s, n, i);
}

static struct iq_str part_str(const struct kern *p, const struct part *x)
{
	if (x->lit)
		return iq_str_make(x->lit, strlen(x->lit));
	return iq_str_make(p->buf.p + x->off, x->n);
}

static struct part part_of(const char *base, struct iq_str v, const char *lit)
{
	struct part x = {0, 0, lit};
	if (!lit && v.n) {
		x.off = (size_t)(v.p - base);
		x.n = v.n;
	}
	return x;
}

static int flush(struct kern *p, const struct iq_parse_ctx *ctx)
{
	if (!p->pending)
		return 0;
	p->pending = 0;
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_KERNEL);
	r.line = p->line;
	r.nlines = p->nlines;
	r.ts = p->ts;
	r.ts_how = p->how;
	r.ts_raw = part_str(p, &p->ts_raw);
	r.severity = part_str(p, &p->sev);
	r.text = iq_str_make(p->buf.p + p->text.off, p->buf.len - p->text.off);
	r.u.kernel.host = part_str(p, &p->host);
	r.u.kernel.facility = part_str(p, &p->fac);
	r.u.kernel.boot_s = p->boot_s;
	return ctx->sink.record(ctx->sink.u, &r);
}

/* "-- Logs begin at Tue 2024-05-07 10:00:00 UTC, end at Tue 2024-05-07
 * 12:00:00 UTC. --", "-- Journal begins at ..., ends at ... --",
 * "-- Reboot --", "-- Boot <id> --", "-- No entries --": 1 for a marker,
 * with the end time (the journal's last entry: no entry lies after it)
 * in *end when it gives one. */
static int journal_marker(const char *s, size_t n, int64_t *end)
{
	*end = IQ_TIME_NONE;
	if (n < 5 || memcmp(s, "-- ", 3) != 0 || memcmp(s + n - 2, "--", 2) != 0)
		return 0;
	static const char *const ends[] = {"ends at ", "end at "};
	for (size_t e = 0; e < IQ_ARRAY_LEN(ends); e++) {
		const char *a = iq_memmem(s, n, ends[e], strlen(ends[e]));
		if (!a)
			continue;
		size_t i = (size_t)(a - s) + strlen(ends[e]);
		i += token(s, n, i) + 1; /* the weekday */
		int64_t t;
		if (i < n && parse_iso(s + i, n - i, &t, NULL) >= 0)
			*end = t;
		break;
	}
	return 1;
}

/* The date of a syslog line as a yearless date. */
static struct iq_yearless yearless_of(const struct kline *k)
{
	struct iq_yearless d = {k->mon, k->day, k->h, k->mi, k->sec, k->ns};
	return d;
}

/* What a line says of dates (the format's dates hook; line() places
 * them the same way). */
static enum iq_dates dates(const char *s, size_t n, struct iq_yearless *d, int64_t *t)
{
	if (journal_marker(s, n, t))
		return *t != IQ_TIME_NONE ? IQ_DATES_LIMIT : IQ_DATES_NONE;
	struct kline k;
	read_prefixes(s, n, &k);
	if (k.yearless) {
		*d = yearless_of(&k);
		return IQ_DATES_YEARLESS;
	}
	if (k.ts != IQ_TIME_NONE) {
		*t = k.ts;
		return IQ_DATES_YEAR;
	}
	return IQ_DATES_NONE;
}

static int hold_lead(struct kern *p, long lineno, int what, const char *s, size_t n)
{
	if (iq_buf_add(&p->lead, &lineno, sizeof lineno) || iq_buf_add(&p->lead, &what, sizeof what) ||
	    iq_buf_add(&p->lead, &n, sizeof n) || iq_buf_add(&p->lead, s, n))
		return IQ_ERR_NOMEM;
	p->nlead++;
	return 0;
}

/* The held leading lines, in order, with time t (the first entry's,
 * inherited; IQ_TIME_NONE for none). */
static int release_lead(struct kern *p, const struct iq_parse_ctx *ctx, int64_t t)
{
	int rc = 0;
	p->started = 1;
	for (size_t off = 0; off < p->lead.len && !rc;) {
		long lineno;
		int what;
		size_t n;
		memcpy(&lineno, p->lead.p + off, sizeof lineno);
		memcpy(&what, p->lead.p + off + sizeof lineno, sizeof what);
		memcpy(&n, p->lead.p + off + sizeof lineno + sizeof what, sizeof n);
		const char *s = p->lead.p + off + sizeof lineno + sizeof what + sizeof n;
		off += sizeof lineno + sizeof what + sizeof n + n;
		if (what == LEAD_BLANK) {
			ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		} else if (what == LEAD_MARKER) {
			ctx->sink.skip(ctx->sink.u, lineno, 1, "journal marker", s, n);
		} else {
			struct iq_record r;
			iq_record_init(&r, IQ_KIND_KERNEL);
			r.line = lineno;
			r.text = iq_str_make(s, n);
			if (t != IQ_TIME_NONE) {
				r.ts = t;
				r.ts_how = IQ_TS_INHERITED;
			}
			rc = ctx->sink.record(ctx->sink.u, &r);
		}
	}
	iq_buf_release(&p->lead);
	p->nlead = 0;
	return rc;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct kern *p = st;
	if (!p->started && p->nlead >= MAX_LEAD) {
		int rc = release_lead(p, ctx, IQ_TIME_NONE);
		if (rc)
			return rc;
	}
	size_t b = 0;
	while (b < n && (s[b] == ' ' || s[b] == '\t'))
		b++;
	int rc;
	/* a skipped line ends the pending record: output stays in line order */
	if (b == n) {
		if (!p->started)
			return hold_lead(p, lineno, LEAD_BLANK, s, 0);
		if ((rc = flush(p, ctx)) != 0)
			return rc;
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	int64_t end;
	if (journal_marker(s, n, &end)) {
		iq_parse_year_limit(ctx, end);
		if (!p->started)
			return hold_lead(p, lineno, LEAD_MARKER, s, n);
		if ((rc = flush(p, ctx)) != 0)
			return rc;
		ctx->sink.skip(ctx->sink.u, lineno, 1, "journal marker", s, n);
		return 0;
	}
	struct kline k;
	read_prefixes(s, n, &k);
	if (!p->started && !k.prefixed)
		return hold_lead(p, lineno, LEAD_TEXT, s, n);
	if (!k.prefixed && b > 0 && p->pending) {
		/* journalctl indents continuation lines to the message column */
		size_t cut = b < p->msg_col ? b : p->msg_col;
		if (iq_buf_addc(&p->buf, '\n') || iq_buf_add(&p->buf, s + cut, n - cut))
			return IQ_ERR_NOMEM;
		p->nlines++;
		return 0;
	}
	rc = flush(p, ctx);
	if (rc)
		return rc;
	if (k.yearless) {
		struct iq_yearless d = yearless_of(&k);
		int64_t t = iq_parse_yearless(ctx, &d);
		if (t != IQ_TIME_NONE) {
			k.ts = iq_time_from_local(t);
			k.how = IQ_TS_YEAR_INFERRED;
		} else {
			k.how = isnan(k.boot_s) ? IQ_TS_NONE : IQ_TS_BOOT_RELATIVE;
		}
	} else if (k.ts != IQ_TIME_NONE) {
		iq_parse_year_seen(ctx, k.ts);
	}
	if (!k.prefixed && p->prev_ts != IQ_TIME_NONE) {
		k.ts = p->prev_ts;
		k.how = IQ_TS_INHERITED;
	}
	if (!p->started && (rc = release_lead(p, ctx, k.ts)) != 0)
		return rc;
	iq_buf_reset(&p->buf);
	if (iq_buf_add(&p->buf, s, n))
		return IQ_ERR_NOMEM;
	p->host = part_of(s, k.host, NULL);
	p->fac = part_of(s, k.fac, k.fac.n ? NULL : k.fac_lit);
	p->sev = part_of(s, k.sev, k.sev.n ? NULL : k.sev_lit);
	p->ts_raw = part_of(s, k.ts_raw, NULL);
	p->text.off = k.text;
	p->msg_col = k.text;
	p->ts = k.ts;
	p->how = k.ts == IQ_TIME_NONE && k.how != IQ_TS_BOOT_RELATIVE ? IQ_TS_NONE : k.how;
	p->boot_s = k.boot_s;
	p->line = lineno;
	p->nlines = 1;
	p->pending = 1;
	if (k.ts != IQ_TIME_NONE)
		p->prev_ts = k.ts;
	return 0;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct kern *p = st;
	iq_buf_init(&p->buf);
	iq_buf_init(&p->lead);
	p->prev_ts = IQ_TIME_NONE;
	return 0;
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct kern *p = st;
	int rc = flush(p, ctx);
	if (!p->started) {
		int rc2 = release_lead(p, ctx, IQ_TIME_NONE);
		if (!rc)
			rc = rc2;
	}
	iq_buf_release(&p->buf);
	iq_buf_release(&p->lead);
	return rc;
}

/* Shapes for sniffing. */
enum shape { SH_NONE, SH_DMESG, SH_SYSLOG_KERNEL, SH_SYSLOG_OTHER };

static int is_level_word(struct iq_str h)
{
	static const char *const w[] = {"TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR",
					"CRITICAL", "FATAL", "stdout", "stderr"};
	for (size_t i = 0; i < IQ_ARRAY_LEN(w); i++)
		if (strlen(w[i]) == h.n && memcmp(w[i], h.p, h.n) == 0)
			return 1;
	return 0;
}

static enum shape shape_of(const char *s, size_t n)
{
	struct kline k;
	read_prefixes(s, n, &k);
	if (k.syslog) {
		if (is_level_word(k.host) || is_level_word(k.fac))
			return SH_NONE;
		if (k.fac.n == 6 && memcmp(k.fac.p, "kernel", 6) == 0)
			return SH_SYSLOG_KERNEL;
		return SH_SYSLOG_OTHER;
	}
	if (k.dmesg)
		return SH_DMESG;
	/* a syslog date without a source: syslogd's own lines ("--- last
	 * message repeated 5 times ---"), a program writing no tag */
	return k.yearless ? SH_SYSLOG_OTHER : SH_NONE;
}

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t pos = 0;
	int lines = 0, dm = 0, sk = 0, so = 0;
	struct iq_str l;
	while (lines < 12 && iq_head_line(head, n, &pos, lines == 0, &l)) {
		const char *s = l.p;
		size_t len = l.n;
		if (len == 0 || (len >= 3 && memcmp(s, "-- ", 3) == 0))
			continue;
		/* continuation lines (dmesg and journalctl indent them) */
		if (lines > 0 && (s[0] == ' ' || s[0] == '\t'))
			continue;
		lines++;
		switch (shape_of(s, len)) {
		case SH_DMESG: dm++; break;
		case SH_SYSLOG_KERNEL: sk++; break;
		case SH_SYSLOG_OTHER: so++; break;
		case SH_NONE: break;
		}
	}
	int need = lines == 1 ? 1 : 2;
	/* most of the lines must have the shape, not just a couple */
	if (dm >= need && dm * 2 >= lines) {
		snprintf(why, whysz, "dmesg lines ([uptime], -T or iso prefix): %d of %d", dm, lines);
		return 90;
	}
	if (sk >= 1 && sk + so >= need && (sk + so) * 2 >= lines) {
		snprintf(why, whysz, "syslog/journal lines with 'kernel:' entries: %d of %d", sk, lines);
		return 85;
	}
	if (so >= need && so * 2 >= lines) {
		snprintf(why, whysz, "syslog/journal lines but no 'kernel:' entry among the first %d", lines);
		return 40;
	}
	return 0;
}

const struct iq_format iq_format_kernel = {
	.name = "kernel",
	.desc = "kernel log: dmesg (raw, -T, iso, -x), kern.log/syslog, journalctl -k",
	.sniff = sniff,
	.state_size = sizeof(struct kern),
	.begin = begin,
	.line = line,
	.end = end,
	.dates = dates,
};
