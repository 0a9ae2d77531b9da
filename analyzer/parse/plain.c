/* plain.c: the fallback for text no other format claims (kubectl logs
 * output, application logs): one record per line, with a leading ISO 8601
 * timestamp when there is one, and Python tracebacks joined into the
 * record of the line that introduced them. */
#include <string.h>

#include "parse.h"

struct plain {
	struct iq_buf text;     /* pending record's text */
	struct iq_buf ts_raw;
	long line, nlines;
	int64_t ts;
	enum iq_ts_how how;
	int in_tb;              /* inside a traceback */
	int pending;
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
	IQ_UNUSED(ctx);
	struct plain *p = st;
	iq_buf_init(&p->text);
	iq_buf_init(&p->ts_raw);
	return 0;
}

static int flush(struct plain *p, const struct iq_parse_ctx *ctx)
{
	if (!p->pending)
		return 0;
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_LOG);
	r.line = p->line;
	r.nlines = p->nlines;
	r.ts = p->ts;
	r.ts_how = p->how;
	r.ts_raw = iq_str_make(p->ts_raw.p, p->ts_raw.len);
	r.text = iq_str_make(p->text.p, p->text.len);
	p->pending = 0;
	p->in_tb = 0;
	return ctx->sink.record(ctx->sink.u, &r);
}

/* A continuation of a traceback: indented frame lines, or the exception
 * line that ends it ("Name: message" after the frames). */
static int continues_tb(const struct plain *p, const char *s, size_t n)
{
	if (!p->in_tb || n == 0)
		return 0;
	if (s[0] == ' ' || s[0] == '\t')
		return 1;
	return 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct plain *p = st;
	if (n == 0) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	if (continues_tb(p, s, n)) {
		if (iq_buf_addc(&p->text, '\n') || iq_buf_add(&p->text, s, n))
			return IQ_ERR_NOMEM;
		p->nlines++;
		return 0;
	}
	if (p->in_tb && p->pending) {
		/* the exception line closes the traceback: part of the record */
		if (iq_buf_addc(&p->text, '\n') || iq_buf_add(&p->text, s, n))
			return IQ_ERR_NOMEM;
		p->nlines++;
		p->in_tb = 0;
		return flush(p, ctx);
	}
	int rc = flush(p, ctx);
	if (rc)
		return rc;
	int64_t ts;
	size_t used = 0;
	int z = iq_time_parse_iso(s, n, &ts, &used);
	iq_buf_reset(&p->text);
	iq_buf_reset(&p->ts_raw);
	if (z >= 0) {
		p->ts = ts;
		p->how = z ? IQ_TS_EXPLICIT : IQ_TS_ASSUMED_UTC;
		if (iq_buf_add(&p->ts_raw, s, used))
			return IQ_ERR_NOMEM;
		while (used < n && s[used] == ' ')
			used++;
	} else {
		used = 0;
		p->ts = IQ_TIME_NONE;
		p->how = IQ_TS_NONE;
	}
	if (iq_buf_add(&p->text, s + used, n - used))
		return IQ_ERR_NOMEM;
	p->line = lineno;
	p->nlines = 1;
	p->pending = 1;
	static const char tb[] = "Traceback (most recent call last):";
	p->in_tb = iq_memmem(s + used, n - used, tb, sizeof tb - 1) != NULL;
	return 0;
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct plain *p = st;
	int rc = flush(p, ctx);
	iq_buf_release(&p->text);
	iq_buf_release(&p->ts_raw);
	return rc;
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
