/* klog.c: logs in klog/glog text ("I0501 12:00:00.123456    1234
 * file.go:42] msg", unstructured or structured key="value" with key=<
 * multi-line blocks), klog JSON ({"ts":1714564800.123,"msg":...}), and the
 * same lines inside journald short/short-iso output ("May 01 12:00:00 node
 * kubelet[1234]: I0501 ...") or after a kubectl --timestamps prefix.
 *
 * Decisions: a journald or RFC 3339 prefix gives the time (the journal's
 * clock is the one the node's other lines use); else the klog header does.
 * A date without a year takes it from ctx->mtime, else from a journalctl
 * "-- ... end at <time> --" header, else from the last earlier line that
 * carried a year (as kernel.c does); with none the record has no time.
 * Lines without a known prefix continue the pending record (key=< blocks,
 * Go panics, journalctl's indented continuations); journald entries that
 * continue an open key=< block of the same program join it too. kernel:
 * lines of a journal are kernel records. Identity comes from the record's
 * key/value pairs: pod="ns/name", pod=<name>, podName, namespace,
 * container/containerName, podUID, or "pod=name_ns(uid)" in a message. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "locate.h"
#include "parse.h"

#define MAX_JOIN_LINES 1000
#define MAX_JOIN_BYTES (1u << 20)

/* A slice of the pending record's meta buffer. */
struct part {
	size_t off, n;
};

struct klog {
	struct iq_buf text;     /* pending record: message and continuations */
	struct iq_buf meta;     /* its ts_raw, severity, host, program */
	int pending;
	long line, nlines;
	int64_t ts;
	enum iq_ts_how how;
	struct part ts_raw, sev, host, prog;
	int kernel;             /* a kernel: line of a journal */
	double boot_s;
	int block;              /* a key=< value is open */
	int64_t prev_ts;        /* the last record's time, for inheriting */
	int header;             /* lines of a glog file header still to come */
	struct iq_buf jtext;    /* a JSON record's text */
};

/* What one line's prefixes say; slices point into the line. */
struct kline {
	int kind;               /* K_NONE, K_KLOG, K_JOURNAL */
	int yearless;           /* mon..ns hold a date without a year */
	int mon, day, h, mi, sec;
	long ns;
	int year;               /* a klog header's year (glog's year in prefix), 0 none */
	int64_t ts;             /* a time with a year */
	int zoned;
	struct iq_str ts_raw, host, prog, sev;
	size_t msg;             /* where the message starts */
	int klog;               /* the message has a klog header */
	double boot_s;
};

enum { K_NONE, K_KLOG, K_JOURNAL };

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

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

/* ".123456" at s[*i]: nanoseconds (up to 9 digits read); 0 when absent. */
static long fraction(const char *s, size_t n, size_t *i)
{
	long ns = 0, scale = 100000000L;
	if (*i + 1 < n && s[*i] == '.' && is_digit(s[*i + 1])) {
		for ((*i)++; *i < n && is_digit(s[*i]); (*i)++) {
			ns += (s[*i] - '0') * scale;
			scale /= 10;
		}
	}
	return ns;
}

static int days_in(int y, int m)
{
	static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 29;
	return dm[m - 1];
}

/* The klog header "Lmmdd hh:mm:ss.uuuuuu threadid file:line] " at s[i].
 * Fills the date into k, the letter into k->sev and the raw time; returns
 * the offset of the message, or 0 when s[i] does not start a header. */
static size_t klog_header(const char *s, size_t n, size_t i, struct kline *k)
{
	if (n - i < 22 || !memchr("IWEF", s[i], 4))
		return 0;
	size_t j = i + 1, t0 = j;
	/* glog with --log_year_in_prefix: "I20190718 06:07:40.123456 ..." */
	int year = 0;
	if (n - j > 9 && is_digit(s[j + 4]) && is_digit(s[j + 7]) && s[j + 8] == ' ')
		year = digits(s, n, &j, 4);
	int mon = digits(s, n, &j, 2), day = digits(s, n, &j, 2);
	if (mon < 1 || mon > 12 || day < 1 || day > 31 || j >= n || s[j++] != ' ')
		return 0;
	int h, mi, sec;
	if (clock_of(s, n, &j, &h, &mi, &sec))
		return 0;
	long ns = fraction(s, n, &j);
	size_t t1 = j;
	if (j >= n || s[j] != ' ')
		return 0;
	while (j < n && s[j] == ' ')
		j++;
	size_t d0 = j;
	while (j < n && is_digit(s[j]))
		j++;
	if (j == d0 || j >= n || s[j] != ' ')
		return 0;
	j++;
	/* file:line] */
	size_t f0 = j;
	while (j < n && s[j] != ']' && s[j] != ' ')
		j++;
	if (j >= n || s[j] != ']' || j == f0 || !memchr(s + f0, ':', j - f0))
		return 0;
	j++;
	if (j < n && s[j] == ' ')
		j++;
	if (year && (year < IQ_YEAR_MIN || year > IQ_YEAR_MAX || day > days_in(year, mon)))
		return 0;
	k->mon = mon;
	k->day = day;
	k->h = h;
	k->mi = mi;
	k->sec = sec;
	k->ns = ns;
	k->year = year;
	k->sev = iq_str_make(s + i, 1);
	k->ts_raw = iq_str_make(s + t0, t1 - t0);
	k->klog = 1;
	return j;
}

/* "Mmm dd hh:mm:ss[.frac]" (journalctl short, short-precise). */
static int short_date(const char *s, size_t n, size_t *i, struct kline *k)
{
	size_t j = *i;
	if (n - j < 15 || !(s[j] >= 'A' && s[j] <= 'Z') || s[j + 3] != ' ')
		return -1;
	int mon = iq_month_from_abbr(s + j);
	if (!mon)
		return -1;
	j += 4;
	if (s[j] == ' ')
		j++;
	int day = is_digit(s[j + 1]) ? digits(s, n, &j, 2) : digits(s, n, &j, 1);
	if (day < 1 || day > 31 || j >= n || s[j++] != ' ')
		return -1;
	if (clock_of(s, n, &j, &k->h, &k->mi, &k->sec))
		return -1;
	k->ns = fraction(s, n, &j);
	if (j >= n || s[j] != ' ')
		return -1;
	k->mon = mon;
	k->day = day;
	k->yearless = 1;
	k->ts_raw = iq_str_make(s + *i, j - *i);
	*i = j;
	return 0;
}

/* An RFC 3339 time at s[*i] whose year fits; 1 zoned, 0 not, -1 none. */
static int iso_date(const char *s, size_t n, size_t *i, struct kline *k)
{
	size_t j = *i, used;
	int y = digits(s, n, &j, 4);
	if (y < IQ_YEAR_MIN || y > IQ_YEAR_MAX || j >= n || s[j] != '-')
		return -1;
	int z = iq_time_parse_iso(s + *i, n - *i, &k->ts, &used);
	if (z < 0 || *i + used >= n || s[*i + used] != ' ')
		return -1;
	k->zoned = z;
	k->ts_raw = iq_str_make(s + *i, used);
	*i += used;
	return z;
}

/* " host prog[pid]: " or " prog[pid]: " at s[*i] (journald source). */
static int source(const char *s, size_t n, size_t *i, struct kline *k)
{
	size_t j = *i;
	if (j >= n || s[j] != ' ')
		return -1;
	j++;
	size_t h0 = j;
	while (j < n && s[j] != ' ')
		j++;
	if (j == h0 || j >= n)
		return -1;
	struct iq_str host = iq_str_make(s + h0, j - h0);
	j++;
	size_t p0 = j;
	while (j < n && s[j] != ':' && s[j] != '[' && s[j] != ' ')
		j++;
	if (j == p0)
		return -1;
	struct iq_str prog = iq_str_make(s + p0, j - p0);
	if (j < n && s[j] == '[') {
		size_t d0 = ++j;
		while (j < n && is_digit(s[j]))
			j++;
		if (j == d0 || j >= n || s[j] != ']')
			return -1;
		j++;
	}
	if (j >= n || s[j] != ':' || (j + 1 < n && s[j + 1] != ' '))
		return -1;
	j++;
	if (j < n)
		j++;
	k->host = host;
	k->prog = prog;
	*i = j;
	return 0;
}

/* "[ 8523.347322] " at s[*i] (a kernel line's uptime). */
static void uptime(const char *s, size_t n, size_t *i, struct kline *k)
{
	size_t j = *i;
	if (j >= n || s[j] != '[')
		return;
	j++;
	while (j < n && s[j] == ' ')
		j++;
	size_t b = j;
	int64_t ip = 0, fp = 0, scale = 1;
	while (j < n && is_digit(s[j]) && j - b < 12)
		ip = ip * 10 + (s[j++] - '0');
	if (j == b || j >= n || s[j] != '.')
		return;
	size_t f0 = ++j;
	while (j < n && is_digit(s[j]) && j - f0 < 9) {
		fp = fp * 10 + (s[j++] - '0');
		scale *= 10;
	}
	if (j == f0 || j >= n || s[j] != ']')
		return;
	/* as kernel.c computes it, so both give the same double */
	k->boot_s = ((double)ip * (double)scale + (double)fp) / (double)scale;
	j++;
	if (j < n && s[j] == ' ')
		j++;
	*i = j;
}

/* Reads the prefixes of a line into k. */
static void read_prefixes(const char *s, size_t n, struct kline *k)
{
	memset(k, 0, sizeof *k);
	k->ts = IQ_TIME_NONE;
	k->boot_s = NAN;
	size_t i = 0, m;
	if ((m = klog_header(s, n, 0, k)) != 0) {
		k->kind = K_KLOG;
		k->msg = m;
		return;
	}
	struct kline d = *k;
	if (short_date(s, n, &i, &d) == 0 || (i = 0, iso_date(s, n, &i, &d) >= 0)) {
		size_t after = i;
		if (source(s, n, &i, &d) == 0) {
			*k = d;
			k->kind = K_JOURNAL;
			k->msg = i;
			if (k->prog.n == 6 && memcmp(k->prog.p, "kernel", 6) == 0)
				uptime(s, n, &k->msg, k);
			else if ((m = klog_header(s, n, i, &d)) != 0) {
				k->klog = 1;
				k->sev = d.sev;
				k->msg = m;
			}
			return;
		}
		/* kubectl logs --timestamps / must-gather: "<RFC 3339> I0501 ..." */
		if (!d.yearless && (m = klog_header(s, n, after + 1, &d)) != 0) {
			*k = d;
			k->yearless = 0;
			k->ts_raw = iq_str_make(s, after);
			k->kind = K_KLOG;
			k->msg = m;
		}
	}
}

static struct iq_str mget(const struct klog *p, struct part x)
{
	return x.n ? iq_str_make(p->meta.p + x.off, x.n) : IQ_STR_NULL;
}

static int mkeep(struct klog *p, struct iq_str v, struct part *out)
{
	out->off = p->meta.len;
	out->n = v.n;
	return iq_buf_add(&p->meta, v.p, v.n);
}

static int str_eq(struct iq_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* "name_ns(uid)" (the kubelet's format.Pod) into the identity. */
static void pod_triplet(struct iq_str v, struct iq_ident *id)
{
	const char *us = memchr(v.p, '_', v.n);
	const char *lp = memchr(v.p, '(', v.n);
	if (!us || (lp && lp < us))
		return;
	id->pod = iq_str_make(v.p, (size_t)(us - v.p));
	size_t nsb = (size_t)(us - v.p) + 1;
	size_t nse = lp ? (size_t)(lp - v.p) : v.n;
	id->ns = iq_str_make(v.p + nsb, nse - nsb);
	if (lp) {
		const char *rp = memchr(lp, ')', v.n - (size_t)(lp - v.p));
		if (rp)
			id->pod_uid = iq_str_make(lp + 1, (size_t)(rp - lp) - 1);
	}
}

/* A pod value: "ns/name", "name_ns(uid)" or "name". */
static void pod_value(struct iq_str v, struct iq_ident *id)
{
	const char *sl = memchr(v.p, '/', v.n);
	if (sl) {
		id->ns = iq_str_make(v.p, (size_t)(sl - v.p));
		id->pod = iq_str_make(sl + 1, v.n - (size_t)(sl - v.p) - 1);
	} else if (memchr(v.p, '_', v.n) && memchr(v.p, '(', v.n)) {
		pod_triplet(v, id);
	} else {
		id->pod = v;
	}
}

static int key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '.';
}

/* The top-level key=value pairs of a structured message (quoted strings
 * and key=< blocks skipped as values) into the identity. */
static void top_pairs(const char *s, size_t n, struct iq_ident *id)
{
	size_t i = 0;
	while (i < n) {
		if (s[i] == '"') {
			for (i++; i < n && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			i++;
			continue;
		}
		if (!key_char(s[i]) || (i > 0 && s[i - 1] != ' ' && s[i - 1] != '\n' && s[i - 1] != '\t')) {
			i++;
			continue;
		}
		size_t k0 = i;
		while (i < n && key_char(s[i]))
			i++;
		if (i >= n || s[i] != '=') {
			continue;
		}
		struct iq_str key = iq_str_make(s + k0, i - k0);
		i++;
		struct iq_str v;
		if (i < n && s[i] == '"') {
			size_t v0 = ++i;
			while (i < n && s[i] != '"')
				i += s[i] == '\\' ? 2 : 1;
			if (i > n)
				i = n;
			v = iq_str_make(s + v0, i - v0);
			i++;
		} else if (i < n && s[i] == '<' && (i + 1 == n || s[i + 1] == '\n')) {
			const char *e = iq_memmem(s + i, n - i, "\n >", 3);
			i = e ? (size_t)(e - s) + 3 : n;
			continue;
		} else {
			size_t v0 = i;
			while (i < n && s[i] != ' ' && s[i] != '\n')
				i++;
			v = iq_str_make(s + v0, i - v0);
		}
		if (!v.n || v.p[0] == '<')
			continue;
		if (str_eq(key, "pod") || str_eq(key, "pod.name"))
			pod_value(v, id);
		else if (str_eq(key, "podName") && !id->pod.n)
			id->pod = v;
		else if ((str_eq(key, "namespace") || str_eq(key, "podNamespace") ||
			  str_eq(key, "pod.namespace")) && !id->ns.n)
			id->ns = v;
		else if (str_eq(key, "containerName") || (str_eq(key, "container") && !id->container.n))
			id->container = v;
		else if (str_eq(key, "podUID") || str_eq(key, "pod_uid"))
			id->pod_uid = v;
	}
}

/* "key=value" anywhere (inside messages and quoted errors too): the value
 * up to a space, quote, backslash or the end. */
static struct iq_str loose_value(const char *s, size_t n, const char *key)
{
	size_t kl = strlen(key);
	const char *p = s, *e = s + n;
	while ((p = iq_memmem(p, (size_t)(e - p), key, kl)) != NULL) {
		if (p > s && p[-1] != ' ' && p[-1] != '\t') {
			p += kl;
			continue;
		}
		const char *v = p + kl, *q = v;
		while (q < e && *q != ' ' && *q != '"' && *q != '\\' && *q != '\n')
			q++;
		if (q > v)
			return iq_str_make(v, (size_t)(q - v));
		p = v;
	}
	return IQ_STR_NULL;
}

static void ident_of(const char *s, size_t n, struct iq_ident *id)
{
	top_pairs(s, n, id);
	if (!id->pod.n) {
		struct iq_str v = loose_value(s, n, "pod=");
		if (v.n)
			pod_value(v, id);
	}
	if (!id->pod.n) {
		/* "Error syncing pod <uid> ("name_ns(uid)"), skipping" (old kubelet) */
		const char *q = iq_memmem(s, n, "(\"", 2);
		if (q && iq_memmem(s, (size_t)(q - s), "pod", 3)) {
			const char *e = iq_memmem(q + 2, n - (size_t)(q + 2 - s), "\")", 2);
			if (e)
				pod_triplet(iq_str_make(q + 2, (size_t)(e - q - 2)), id);
		}
	}
	if (!id->container.n)
		id->container = loose_value(s, n, "container=");
}

static int flush(struct klog *p, const struct iq_parse_ctx *ctx)
{
	if (!p->pending)
		return 0;
	p->pending = 0;
	struct iq_record r;
	iq_record_init(&r, p->kernel ? IQ_KIND_KERNEL : IQ_KIND_LOG);
	r.line = p->line;
	r.nlines = p->nlines;
	r.ts = p->ts;
	r.ts_how = p->how;
	r.ts_raw = mget(p, p->ts_raw);
	r.severity = mget(p, p->sev);
	r.text = iq_str_make(p->text.p, p->text.len);
	r.id.node = mget(p, p->host);
	if (p->kernel) {
		r.u.kernel.host = r.id.node;
		r.u.kernel.facility = IQ_STR_LIT("kernel");
		r.u.kernel.boot_s = p->boot_s;
	} else {
		ident_of(r.text.p, r.text.n, &r.id);
	}
	return ctx->sink.record(ctx->sink.u, &r);
}

/* Notes whether the text just added leaves a key=< block open. */
static void track_block(struct klog *p, const char *s, size_t n)
{
	if (n >= 2 && s[0] == ' ' && s[1] == '>')
		p->block = 0;
	if (n >= 2 && s[n - 2] == '=' && s[n - 1] == '<')
		p->block = 1;
}

static int append(struct klog *p, const char *s, size_t n)
{
	if (iq_buf_addc(&p->text, '\n') || iq_buf_add(&p->text, s, n))
		return IQ_ERR_NOMEM;
	p->nlines++;
	track_block(p, s, n);
	return 0;
}

/* "-- Logs begin at ..., end at Tue 2024-05-07 12:00:00 UTC. --" and the
 * other journalctl markers: 1 for a marker, with its end time (no entry
 * lies after it) in *end when it gives one. */
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
		while (i < n && s[i] != ' ')
			i++;   /* the weekday */
		i++;
		size_t j = i;
		int64_t t;
		if (i < n && digits(s, n, &j, 4) >= IQ_YEAR_MIN && j <= n &&
		    iq_time_parse_iso(s + i, n - i, &t, NULL) >= 0)
			*end = t;
		break;
	}
	return 1;
}

/* glog's file header (logging.cc, LogFileObject::Write):
 *   Log file created at: 2019/07/18 06:07:40[ UTC]
 *   Running on machine: <host>
 *   [Application fingerprint: <text>]
 *   [Running duration (h:mm:ss): 0:00:00]
 *   Log line format: [IWEF]mmdd hh:mm:ss.uuuuuu threadid file:line] msg
 * The first line's time (local unless "UTC"): 1 and *t, else 0. */
static int glog_created(const char *s, size_t n, int64_t *t)
{
	static const char pre[] = "Log file created at: ";
	size_t pl = sizeof pre - 1;
	if (n < pl + 19 || memcmp(s, pre, pl) != 0)
		return 0;
	char tmp[20];
	memcpy(tmp, s + pl, 19);
	if (tmp[4] != '/' || tmp[7] != '/')
		return 0;
	tmp[4] = tmp[7] = '-';
	size_t used;
	*t = IQ_TIME_NONE;
	size_t j = 0;
	if (digits(tmp, 19, &j, 4) < IQ_YEAR_MIN || iq_time_parse_iso(tmp, 19, t, &used) != 0 ||
	    used != 19)
		return 0;
	if (!(n - pl - 19 >= 4 && memcmp(s + pl + 19, " UTC", 4) == 0))
		iq_time_local(t);
	return 1;
}

/* A line of glog's header after its first one. */
static int glog_header_line(const char *s, size_t n)
{
	static const char *const keys[] = {"Running on machine: ", "Application fingerprint: ",
					   "Running duration (h:mm:ss): ", "Log line format: ",
					   "Binary: "};
	for (size_t i = 0; i < IQ_ARRAY_LEN(keys); i++) {
		size_t l = strlen(keys[i]);
		if (n >= l && memcmp(s, keys[i], l) == 0)
			return 1;
	}
	return 0;
}

/* Seconds since the epoch as written ("1714564800.123456") in ns. */
static int64_t epoch_ns(const char *s, size_t n, size_t *used)
{
	size_t i = 0;
	int64_t sec = 0;
	while (i < n && is_digit(s[i]) && i < 11)
		sec = sec * 10 + (s[i++] - '0');
	if (i == 0 || (i < n && is_digit(s[i])))
		return IQ_TIME_NONE;
	long ns = fraction(s, n, &i);
	if (i < n && (s[i] == 'e' || s[i] == 'E'))
		return IQ_TIME_NONE;
	*used = i;
	/* 11 digits of seconds reach past what int64 nanoseconds hold */
	if (sec > INT64_MAX / IQ_NS_PER_SEC - 1)
		return IQ_TIME_NONE;
	return sec * IQ_NS_PER_SEC + ns;
}

/* Appends a JSON value the way klog writes it: strings quoted, others as
 * compact JSON. */
static int add_value(struct iq_buf *b, json_t *v)
{
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		int rc = iq_buf_addc(b, '"');
		for (size_t i = 0; i < n && !rc; i++) {
			if (s[i] == '"' || s[i] == '\\')
				rc = iq_buf_addc(b, '\\');
			if (!rc)
				rc = iq_buf_addc(b, s[i]);
		}
		return rc ? rc : iq_buf_addc(b, '"');
	}
	char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
	if (!d)
		return IQ_ERR_NOMEM;
	int rc = iq_buf_adds(b, d);
	free(d);
	return rc;
}

static struct iq_str jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (json_is_string(v))
		return iq_str_make(json_string_value(v), json_string_length(v));
	return IQ_STR_NULL;
}

/* A klog JSON line: {"ts":<epoch s>,"msg":...,"v":N,"err":...,k:v...}.
 * Returns 1 when s is not one, else 0 or the sink's error. */
static int json_line(struct klog *p, const struct iq_parse_ctx *ctx, long lineno, const char *s,
		     size_t n)
{
	const char *t = iq_memmem(s, n, "\"ts\":", 5);
	if (!t)
		return 1;
	size_t to = (size_t)(t - s) + 5, used = 0;
	while (to < n && s[to] == ' ')
		to++;
	int64_t ts = epoch_ns(s + to, n - to, &used);
	json_t *o = json_loadb(s, n, 0, NULL);
	json_t *msg = json_object_get(o, "msg");
	if (!json_is_object(o) || !json_is_number(json_object_get(o, "ts")) || !json_is_string(msg)) {
		json_decref(o);
		if (o || s[1] != '"')
			return 1;
		/* a klog JSON line cut short (the file's end, a crash) */
		int rc = flush(p, ctx);
		ctx->sink.skip(ctx->sink.u, lineno, 1, "malformed klog json", s, n);
		return rc;
	}
	int rc = flush(p, ctx);
	if (rc) {
		json_decref(o);
		return rc;
	}
	struct iq_buf *b = &p->jtext;
	iq_buf_reset(b);
	rc |= iq_buf_add(b, json_string_value(msg), json_string_length(msg));
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v) {
		if (!strcmp(key, "ts") || !strcmp(key, "msg") || !strcmp(key, "v") ||
		    !strcmp(key, "caller") || !strcmp(key, "level") || !strcmp(key, "logger"))
			continue;
		rc |= iq_buf_addc(b, ' ') | iq_buf_adds(b, key) | iq_buf_addc(b, '=') | add_value(b, v);
	}
	if (rc) {
		json_decref(o);
		return IQ_ERR_NOMEM;
	}
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_LOG);
	r.line = lineno;
	if (ts != IQ_TIME_NONE) {
		r.ts = ts;
		r.ts_how = IQ_TS_EXPLICIT;
		r.ts_raw = iq_str_make(s + to, used);
		p->prev_ts = ts;
		iq_parse_year_seen(ctx, ts);
	}
	/* klog JSON has no level: errors carry "err" and no "v" */
	r.severity = jstr(o, "level");
	if (!r.severity.n)
		r.severity = json_object_get(o, "err") && !json_object_get(o, "v") ?
			IQ_STR_LIT("E") : IQ_STR_LIT("I");
	r.text = iq_str_make(b->p, b->len);
	/* the text is msg and the other fields restated: the line holds msg */
	const struct iq_jpath mp[] = {{"msg", 0}};
	r.nquotes = iq_quote_member(&r.quote[0], "message", iq_str_make(s, n), lineno, mp, 1);
	json_t *pod = json_object_get(o, "pod");
	if (json_is_object(pod)) {
		r.id.pod = jstr(pod, "name");
		r.id.ns = jstr(pod, "namespace");
	} else if (json_is_string(pod)) {
		pod_value(jstr(o, "pod"), &r.id);
	}
	if (!r.id.pod.n)
		r.id.pod = jstr(o, "podName");
	if (!r.id.ns.n)
		r.id.ns = jstr(o, "namespace");
	r.id.container = jstr(o, "containerName");
	if (!r.id.container.n)
		r.id.container = jstr(o, "container");
	r.id.pod_uid = jstr(o, "podUID");
	if (!r.id.pod.n)
		ident_of(r.text.p, r.text.n, &r.id);
	rc = ctx->sink.record(ctx->sink.u, &r);
	json_decref(o);
	return rc;
}

/* What a line's prefixes say of dates: a yearless klog/journal date, or
 * a time with its year (zoned or wall clock, as written). */
static enum iq_dates dates_of(const struct kline *k, struct iq_yearless *d, int64_t *t)
{
	if (k->yearless || (k->kind == K_KLOG && k->ts == IQ_TIME_NONE && k->klog)) {
		*d = (struct iq_yearless){k->mon, k->day, k->h, k->mi, k->sec, k->ns};
		if (!k->year)
			return IQ_DATES_YEARLESS;
		*t = iq_yearless_in(d, k->year);
		return *t != IQ_TIME_NONE ? IQ_DATES_YEAR : IQ_DATES_NONE;
	}
	if (k->ts != IQ_TIME_NONE) {
		*t = k->ts;
		return IQ_DATES_YEAR;
	}
	return IQ_DATES_NONE;
}

/* The format's dates hook: what line() will place, read the same way. */
static enum iq_dates dates(const char *s, size_t n, struct iq_yearless *d, int64_t *t)
{
	if (journal_marker(s, n, t))
		return *t != IQ_TIME_NONE ? IQ_DATES_LIMIT : IQ_DATES_NONE;
	if (glog_created(s, n, t))
		return IQ_DATES_YEAR;
	if (n && s[0] == '{') {
		const char *q = iq_memmem(s, n, "\"ts\":", 5);
		if (!q)
			return IQ_DATES_NONE;
		size_t to = (size_t)(q - s) + 5, used;
		while (to < n && s[to] == ' ')
			to++;
		*t = epoch_ns(s + to, n - to, &used);
		return *t != IQ_TIME_NONE ? IQ_DATES_YEAR : IQ_DATES_NONE;
	}
	struct kline k;
	read_prefixes(s, n, &k);
	return dates_of(&k, d, t);
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct klog *p = st;
	int rc;
	size_t b = 0;
	while (b < n && (s[b] == ' ' || s[b] == '\t'))
		b++;
	if (b == n) {
		if ((rc = flush(p, ctx)))
			return rc;
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	int64_t mark;
	if (journal_marker(s, n, &mark)) {
		iq_parse_year_limit(ctx, mark);
		if ((rc = flush(p, ctx)))
			return rc;
		ctx->sink.skip(ctx->sink.u, lineno, 1, "journal marker", s, n);
		return 0;
	}
	int created = glog_created(s, n, &mark);
	if (created || (p->header > 0 && glog_header_line(s, n))) {
		if (created) {
			p->header = 5;
			iq_parse_year_seen(ctx, mark);
		} else {
			p->header--;
		}
		if ((rc = flush(p, ctx)))
			return rc;
		ctx->sink.skip(ctx->sink.u, lineno, 1, "glog header", s, n);
		return 0;
	}
	p->header = 0;
	if (s[0] == '{' && (rc = json_line(p, ctx, lineno, s, n)) != 1)
		return rc;
	struct kline k;
	read_prefixes(s, n, &k);
	int room = p->nlines < MAX_JOIN_LINES && p->text.len < MAX_JOIN_BYTES;
	if (k.kind == K_NONE && p->pending && room)
		return append(p, s, n);
	/* a journal entry that continues an open key=< block of its program */
	struct iq_str prog = mget(p, p->prog);
	if (k.kind == K_JOURNAL && !k.klog && p->pending && p->block && room && prog.n &&
	    prog.n == k.prog.n && memcmp(prog.p, k.prog.p, k.prog.n) == 0)
		return append(p, s + k.msg, n - k.msg);
	if ((rc = flush(p, ctx)))
		return rc;
	int64_t ts = IQ_TIME_NONE;
	enum iq_ts_how how = IQ_TS_NONE;
	struct iq_yearless d;
	int64_t t;
	enum iq_dates kd = dates_of(&k, &d, &t);
	if (kd == IQ_DATES_YEARLESS) {
		t = iq_parse_yearless(ctx, &d);
		if (t != IQ_TIME_NONE) {
			ts = iq_time_from_local(t);
			how = IQ_TS_YEAR_INFERRED;
		}
	} else if (kd == IQ_DATES_YEAR) {
		ts = t;
		how = k.zoned ? IQ_TS_EXPLICIT : iq_time_local(&ts);
		iq_parse_year_seen(ctx, ts);
	} else if (k.kind == K_NONE && p->prev_ts != IQ_TIME_NONE) {
		ts = p->prev_ts;
		how = IQ_TS_INHERITED;
	}
	iq_buf_reset(&p->text);
	iq_buf_reset(&p->meta);
	if (iq_buf_add(&p->text, s + k.msg, n - k.msg) || mkeep(p, k.ts_raw, &p->ts_raw) ||
	    mkeep(p, k.sev, &p->sev) || mkeep(p, k.host, &p->host) || mkeep(p, k.prog, &p->prog))
		return IQ_ERR_NOMEM;
	p->kernel = k.kind == K_JOURNAL && str_eq(k.prog, "kernel");
	p->boot_s = k.boot_s;
	p->ts = ts;
	p->how = how;
	p->line = lineno;
	p->nlines = 1;
	p->pending = 1;
	p->block = 0;
	track_block(p, s + k.msg, n - k.msg);
	if (ts != IQ_TIME_NONE)
		p->prev_ts = ts;
	return 0;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct klog *p = st;
	iq_buf_init(&p->text);
	iq_buf_init(&p->meta);
	iq_buf_init(&p->jtext);
	p->prev_ts = IQ_TIME_NONE;
	return 0;
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct klog *p = st;
	int rc = flush(p, ctx);
	iq_buf_release(&p->text);
	iq_buf_release(&p->meta);
	iq_buf_release(&p->jtext);
	return rc;
}

/* Scores: most lines klog (text or JSON) -> 85; most lines journal entries
 * carrying klog -> 88 (above kernel's 85 for a journal with some kernel:
 * lines); a journal with some klog entries and no kernel: line -> 45
 * (above kernel's 40 for journals of other programs). */
static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t pos = 0;
	int lines = 0, kl = 0, js = 0, jk = 0, jo = 0, jkern = 0;
	struct iq_str kprog = IQ_STR_NULL;   /* the first program seen writing klog */
	/* a journal's entries by program, to count a klog writer's other lines */
	struct { struct iq_str prog; int klog; } ent[20];
	int nent = 0;
	int glog = 0;            /* lines of a glog file header */
	struct iq_str l;
	while (lines < 20 && iq_head_line(head, n, &pos, lines == 0, &l)) {
		const char *s = l.p;
		size_t len = l.n;
		if (len == 0 || (len >= 3 && memcmp(s, "-- ", 3) == 0))
			continue;
		int64_t created;
		if ((lines == 0 && glog_created(s, len, &created)) || (glog && glog_header_line(s, len))) {
			glog++;
			continue;
		}
		if (s[0] == ' ' || s[0] == '\t')
			continue;   /* continuation lines */
		lines++;
		struct kline k;
		read_prefixes(s, len, &k);
		if (k.kind == K_KLOG) {
			kl++;
		} else if (k.kind == K_JOURNAL && str_eq(k.prog, "kernel")) {
			jkern++;
		} else if (k.kind == K_JOURNAL) {
			if (k.klog && !kprog.n)
				kprog = k.prog;
			ent[nent].prog = k.prog;
			ent[nent++].klog = k.klog;
		} else if (s[0] == '{' && iq_memmem(s, len, "\"msg\":", 6)) {
			const char *t = iq_memmem(s, len, "\"ts\":", 5);
			if (t && (size_t)(t - s) + 5 < len && is_digit(t[5]))
				js++;
		}
	}
	/* journal entries of the program that writes klog (its key=< block
	 * lines are entries too), and of the others */
	for (int e = 0; e < nent; e++) {
		if (ent[e].klog || (kprog.n && ent[e].prog.n == kprog.n &&
				    memcmp(ent[e].prog.p, kprog.p, kprog.n) == 0))
			jk++;
		else
			jo++;
	}
	int need = lines == 1 ? 1 : 2;
	if (glog >= 2 && (kl >= 1 || lines == 0)) {
		snprintf(why, whysz, "glog file header (Log file created at ..., Log line format) "
			 "and %d klog header lines", kl);
		return 90;
	}
	if (kl + js >= need && (kl + js) * 2 >= lines) {
		snprintf(why, whysz, "klog %s lines: %d of %d", kl >= js ? "header" : "JSON",
			 kl + js, lines);
		return 85;
	}
	if (jk >= need && jk * 2 >= lines) {
		snprintf(why, whysz, "journal entries carrying klog: %d of %d", jk, lines);
		return 88;
	}
	if (jk >= 1 && jkern == 0 && (jk + jo) * 2 >= lines) {
		snprintf(why, whysz, "journal with klog entries (%d of %d) and no kernel: line",
			 jk, lines);
		return 45;
	}
	return 0;
}

const struct iq_format iq_format_klog = {
	.name = "klog",
	.desc = "klog/glog text and JSON (kubelet, control plane, Triton), also inside journalctl output",
	.sniff = sniff,
	.state_size = sizeof(struct klog),
	.begin = begin,
	.line = line,
	.end = end,
	.dates = dates,
};
