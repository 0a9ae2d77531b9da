/* apache_error.c: Apache httpd error logs, one IQ_KIND_LOG record per
 * entry: 2.2's "[Wed Oct 11 14:32:52 2000] [error] [client 127.0.0.1]
 * msg" and 2.4's default ErrorLogFormat "[Fri Sep 09 10:42:29.902022
 * 2011] [core:error] [pid 35708:tid 4328636416] [client 72.15.99.187:80]
 * AH00128: msg". Its ctime date looks like dmesg -T's; the level bracket
 * after it tells them apart (kernel.c leaves these lines alone).
 *
 * Decisions: the date has no zone (UTC, or the --tz zone); severity is the
 * level without its module ("error" of "core:error"); the text is what
 * follows the level and the "[pid ...]" bracket, the client bracket kept.
 * A line without the prefix (a child's stderr, a stack trace) is a record
 * of its own with the time of the entry before it (inherited). */
#include <string.h>

#include "parse.h"

struct apache {
	int64_t prev_ts;        /* the last entry's time, for inheriting */
};

/* The entry prefix at s: date, level, an optional pid bracket. Fills ts,
 * ts_raw, severity and the offset of the message; 0 or -1. */
static int prefix(const char *s, size_t n, struct iq_record *r, size_t *msg)
{
	if (n < 30 || s[0] != '[')
		return -1;
	int64_t t;
	size_t used = iq_parse_ctime(s + 1, n - 1, &t);
	if (!used || 1 + used + 2 >= n || s[1 + used] != ']' || s[2 + used] != ' ' ||
	    s[3 + used] != '[')
		return -1;
	size_t lb = 4 + used, le = lb;
	while (le < n && le - lb < 40 && s[le] != ']' && s[le] != ' ')
		le++;
	if (le >= n || s[le] != ']' || le == lb)
		return -1;
	const char *colon = memchr(s + lb, ':', le - lb);
	size_t vb = colon ? (size_t)(colon - s) + 1 : lb;
	static const char *const lv[] = {"emerg", "alert", "crit", "error", "warn", "notice",
					 "info", "debug", "trace1", "trace2", "trace3", "trace4",
					 "trace5", "trace6", "trace7", "trace8"};
	size_t k = 0;
	while (k < IQ_ARRAY_LEN(lv) && !(strlen(lv[k]) == le - vb && memcmp(lv[k], s + vb, le - vb) == 0))
		k++;
	if (k == IQ_ARRAY_LEN(lv))
		return -1;
	size_t i = le + 1;
	if (n - i > 6 && memcmp(s + i, " [pid ", 6) == 0) {
		const char *e = memchr(s + i + 6, ']', n - i - 6);
		if (e)
			i = (size_t)(e - s) + 1;
	}
	while (i < n && s[i] == ' ')
		i++;
	r->ts = t;
	r->ts_how = iq_time_local(&r->ts);
	r->ts_raw = iq_str_make(s + 1, used);
	r->severity = iq_str_make(s + vb, le - vb);
	*msg = i;
	return 0;
}

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	int lines = 0, hits = 0;
	size_t pos = 0;
	struct iq_str l;
	while (lines < 20 && iq_head_line(head, n, &pos, lines == 0, &l)) {
		if (l.n == 0)
			continue;
		lines++;
		struct iq_record r;
		size_t msg;
		iq_record_init(&r, IQ_KIND_LOG);
		hits += prefix(l.p, l.n, &r, &msg) == 0;
	}
	if (hits == 0 || hits * 2 < lines)
		return 0;
	snprintf(why, whysz, "Apache httpd error log entries ([date] [level]): %d of %d", hits, lines);
	return 88;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct apache *p = st;
	p->prev_ts = IQ_TIME_NONE;
	return 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct apache *p = st;
	size_t b = 0;
	while (b < n && (s[b] == ' ' || s[b] == '\t'))
		b++;
	if (b == n) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	struct iq_record r;
	size_t msg = 0;
	iq_record_init(&r, IQ_KIND_LOG);
	if (prefix(s, n, &r, &msg) == 0) {
		p->prev_ts = r.ts;
	} else if (p->prev_ts != IQ_TIME_NONE) {
		r.ts = p->prev_ts;
		r.ts_how = IQ_TS_INHERITED;
	}
	r.line = lineno;
	r.text = iq_str_make(s + msg, n - msg);
	return ctx->sink.record(ctx->sink.u, &r);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(st);
	IQ_UNUSED(ctx);
	return 0;
}

const struct iq_format iq_format_apache_error = {
	.name = "apache-error",
	.desc = "Apache httpd error log (2.2 and 2.4 ErrorLogFormat)",
	.sniff = sniff,
	.state_size = sizeof(struct apache),
	.begin = begin,
	.line = line,
	.end = end,
};
