/* plain.c: the fallback for text no other format claims (kubectl logs
 * output, application logs): one record per line, with a leading ISO 8601
 * timestamp when there is one (`kubectl logs --timestamps`) or a JSON
 * line's time key (structured app logs), and Python
 * tracebacks joined into one record (traceback.c). */
#include <string.h>

#include "parse.h"
#include "inner.h"
#include "traceback.h"

struct plain {
	struct iq_tb tb;
	struct iq_inner inner;     /* `kubectl logs` of a proxy: its access log */
	const struct iq_parse_ctx *ctx;
};

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	IQ_UNUSED(head);
	if (n == 0)
		return 0;
	snprintf(why, whysz, "text that no specific format recognised");
	return 1;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	struct plain *p = st;
	iq_tb_init(&p->tb);
	iq_inner_init(&p->inner, ctx);
	p->ctx = ctx;
	return 0;
}

static int emit(void *u, const struct iq_tb_line *l)
{
	struct plain *p = u;
	const struct iq_parse_ctx *ctx = p->ctx;
	int in = iq_inner_offer(&p->inner, ctx, l->line, l->nlines, l->ts, IQ_STR_NULL, l->text);
	if (in)
		return in < 0 ? in : 0;
	struct iq_record r;
	iq_tb_record(&r, l);
	return ctx->sink.record(ctx->sink.u, &r);
}

/* Where a line's own text starts after what wraps it: ANSI escapes
 * (a terminal's colours, docker compose's "ESC[2K") and docker compose's
 * "service-1  | " prefix. */
static size_t unwrap(const char *s, size_t n)
{
	size_t i = 0;
	for (;;) {
		while (i + 2 < n && s[i] == '\x1b' && s[i + 1] == '[') {
			size_t j = i + 2;
			while (j < n && ((s[j] >= '0' && s[j] <= '9') || s[j] == ';'))
				j++;
			if (j >= n || !((s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= 'a' && s[j] <= 'z')))
				return i;
			i = j + 1;
		}
		/* compose: a service name, spaces, '|', a space */
		size_t j = i;
		while (j < n && j - i < 64 && (s[j] == '-' || s[j] == '_' || s[j] == '.' || (s[j] >= '0' && s[j] <= '9') ||
					       (s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z')))
			j++;
		size_t k = j;
		while (k < n && s[k] == ' ')
			k++;
		if (j > i && k > j && k + 1 < n && s[k] == '|' && s[k + 1] == ' ')
			i = k + 2;
		else
			return i;
	}
}

/* A time that opens the line inside brackets or quotes: "[2023-05-15
 * 18:19:32] local.ERROR", SGLang's "[2025-09-03 18:33:31 TP0] Decode",
 * "\"2014-06-15 01:04:52\"\t...". */
static int bracketed_time(const char *s, size_t n, int64_t *ts, struct iq_str *raw)
{
	if (n < 12 || (s[0] != '[' && s[0] != '"'))
		return -1;
	/* the Common Log Format's, as Tomcat-based access logs open with it:
	 * "[03/Oct/2022:09:00:01 +0000] admin GET ..." */
	if (s[0] == '[' && n >= 28 && s[27] == ']' && iq_parse_clf(s + 1, n - 1, ts) == 0) {
		*raw = iq_str_make(s + 1, 26);
		return 1;
	}
	size_t used = 0;
	int z = iq_time_parse_iso(s + 1, n - 1, ts, &used);
	if (z < 0)
		return -1;
	char close = s[0] == '[' ? ']' : '"';
	size_t e = 1 + used;
	/* "[<time> TP0]": a short tag may stand before the bracket closes */
	while (close == ']' && e < n && e < 1 + used + 24 && s[e] != ']')
		e++;
	if (e >= n || s[e] != close)
		return -1;
	*raw = iq_str_make(s + 1, used);
	return z;
}

/* The C library's ctime date opening the line, "Wed Aug 11 05:51:02 2021
 * [176] <notice> ..." (no zone). */
static int ctime_time(const char *s, size_t n, int64_t *ts, struct iq_str *raw)
{
	size_t used = iq_parse_ctime(s, n, ts);
	if (!used || (used < n && s[used] != ' '))
		return -1;
	*raw = iq_str_make(s, used);
	return 0;
}

/* logfmt's time key (logrus: time="2021-09-15T21:17:10.220731Z" level=...,
 * Grafana: logger=settings t=2025-04-24T19:51:48.52Z ...): time=, ts=, t=
 * or timestamp= at the start or after a space, within the line's first
 * 200 bytes, its value an ISO time, quoted or not. */
static int logfmt_time(const char *s, size_t n, int64_t *ts, struct iq_str *raw)
{
	static const char *const keys[] = {"time", "ts", "t", "timestamp"};
	size_t lim = n < 200 ? n : 200;
	for (const char *eq = memchr(s, '=', lim); eq; eq = memchr(eq + 1, '=', lim - (size_t)(eq + 1 - s))) {
		size_t at = (size_t)(eq - s), kb = at;
		while (kb > 0 && s[kb - 1] != ' ')
			kb--;
		int known = 0;
		for (size_t k = 0; k < IQ_ARRAY_LEN(keys) && !known; k++)
			known = strlen(keys[k]) == at - kb && memcmp(s + kb, keys[k], at - kb) == 0;
		if (!known)
			continue;
		size_t v = at + 1, used = 0;
		int q = v < n && s[v] == '"';
		int z = iq_time_parse_iso(s + v + q, n - v - q, ts, &used);
		size_t e = v + q + used;
		if (z < 0 || (q && (e >= n || s[e] != '"')) || (!q && e < n && s[e] != ' '))
			continue;
		*raw = iq_str_make(s + v + q, used);
		return z;
	}
	return -1;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct plain *p = st;
	if (n == 0) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	struct iq_tb_line l = {.line = lineno, .nlines = 1, .ts = IQ_TIME_NONE, .how = IQ_TS_NONE};
	size_t used = 0;
	int z = iq_time_parse_iso(s, n, &l.ts, &used);
	if (z >= 0) {
		l.how = z ? IQ_TS_EXPLICIT : iq_time_local(&l.ts);
		l.ts_raw = iq_str_make(s, used);
		while (used < n && s[used] == ' ')
			used++;
	} else {
		/* a time within the line: the line keeps its whole text */
		size_t o = unwrap(s, n);
		if ((o && (z = iq_time_parse_iso(s + o, n - o, &l.ts, &used)) >= 0))
			l.ts_raw = iq_str_make(s + o, used);
		else if ((z = iq_json_line_time(s + o, n - o, &l.ts, &l.ts_raw)) < 0 &&
			 (z = bracketed_time(s + o, n - o, &l.ts, &l.ts_raw)) < 0 &&
			 (z = ctime_time(s + o, n - o, &l.ts, &l.ts_raw)) < 0)
			z = logfmt_time(s + o, n - o, &l.ts, &l.ts_raw);
		if (z >= 0)
			l.how = z ? IQ_TS_EXPLICIT : iq_time_local(&l.ts);
		else
			l.ts = IQ_TIME_NONE;
		used = 0;
	}
	l.text = iq_str_make(s + used, n - used);
	p->ctx = ctx;
	return iq_tb_feed(&p->tb, &l, emit, p);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct plain *p = st;
	p->ctx = ctx;
	int rc = iq_tb_flush(&p->tb, emit, p);
	int irc = iq_inner_end(&p->inner, ctx);
	iq_tb_release(&p->tb);
	return rc ? rc : irc;
}

const struct iq_format iq_format_plain = {
	.name = "plain",
	.desc = "plain text log, one record per line (Python tracebacks joined)",
	.sniff = sniff,
	.state_size = sizeof(struct plain),
	.begin = begin,
	.line = line,
	.end = end,
};
