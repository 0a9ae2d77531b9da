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
	} else if ((z = iq_json_line_time(s, n, &l.ts, &l.ts_raw)) >= 0) {
		/* a structured log line keeps its whole text */
		l.how = z ? IQ_TS_EXPLICIT : iq_time_local(&l.ts);
		used = 0;
	} else {
		used = 0;
		l.ts = IQ_TIME_NONE;
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
