/* cri.c: the CRI log format containerd and CRI-O write under /var/log/pods:
 * "<RFC 3339 time> <stdout|stderr> <P|F>[:tags] <raw content>", with the
 * P chunks of a long or unterminated line re-joined per stream. */
#include <string.h>

#include "parse.h"
#include "inner.h"
#include "traceback.h"

/* Where a stream's P chunks gather until its F. */
struct chunks {
	struct iq_buf text;
	struct iq_buf ts_raw;   /* the first chunk's time, as written */
	int64_t ts;
	long line, nlines;
	int pending;
	size_t first_len;       /* the first chunk's bytes: what stands at line */
	int nchunks;
};

enum { STDOUT, STDERR, NSLOTS };

struct cri {
	struct chunks slot[NSLOTS];
	struct iq_tb tb[NSLOTS];   /* Python tracebacks joined per stream */
	struct iq_inner inner;     /* a proxy's access log inside */
};

/* One line taken apart; slices point into the line. */
struct cri_line {
	struct iq_str ts_raw, content;
	int64_t ts;
	int stream;     /* STDOUT or STDERR */
	int partial;    /* first tag is P */
};

/* Splits s as the kubelet does: time, stream, tags on single spaces, the
 * rest is content. The time must carry a zone (containerd: Z or ±hh:mm,
 * CRI-O: ±hh:mm), the stream is stdout or stderr, the first ':'-separated
 * tag is P or F; later tags are ignored. A line that ends right after the
 * tags (trailing space trimmed) has empty content. Returns 0 or -1. */
static int split(const char *s, size_t n, struct cri_line *l)
{
	const char *sp = memchr(s, ' ', n);
	if (!sp)
		return -1;
	size_t tl = (size_t)(sp - s), used = 0;
	/* a year past 2261 (a clock gone wrong) keeps the line, without time */
	if (iq_time_parse_iso_any(s, tl, &l->ts, &used) != 1 || used != tl || tl < 20 || s[10] != 'T')
		return -1;
	l->ts_raw = iq_str_make(s, tl);
	size_t i = tl + 1;
	if (n - i >= 7 && memcmp(s + i, "stdout ", 7) == 0)
		l->stream = STDOUT;
	else if (n - i >= 7 && memcmp(s + i, "stderr ", 7) == 0)
		l->stream = STDERR;
	else
		return -1;
	i += 7;
	const char *te = memchr(s + i, ' ', n - i);
	size_t tagsl = te ? (size_t)(te - (s + i)) : n - i;
	if (tagsl == 0 || (s[i] != 'P' && s[i] != 'F') || (tagsl > 1 && s[i + 1] != ':'))
		return -1;
	l->partial = s[i] == 'P';
	i += tagsl;
	if (i < n)
		i++;  /* the space before the content */
	l->content = iq_str_make(s + i, n - i);
	return 0;
}

/* Where a stream's logical lines go: its traceback joiner, then emit(). */
struct out {
	const struct iq_parse_ctx *ctx;
	int slot;
	struct iq_inner *inner;
};

static int emit(void *u, const struct iq_tb_line *l)
{
	const struct out *o = u;
	struct iq_str stream = o->slot == STDOUT ? IQ_STR_LIT("stdout") : IQ_STR_LIT("stderr");
	int in = iq_inner_offer(o->inner, o->ctx, l->line, l->nlines, l->ts, stream, l->text);
	if (in)
		return in < 0 ? in : 0;
	struct iq_record r;
	iq_tb_record(&r, l);
	r.ts_how = l->ts == IQ_TIME_NONE ? IQ_TS_NONE : IQ_TS_EXPLICIT;
	r.stream = stream;
	return o->ctx->sink.record(o->ctx->sink.u, &r);
}

/* Hands a stream's gathered P..F chunks to its joiner. */
static int feed_chunks(struct cri *cr, int slot, const struct iq_parse_ctx *ctx)
{
	struct chunks *c = &cr->slot[slot];
	if (!c->pending)
		return 0;
	c->pending = 0;
	struct out o = {ctx, slot, &cr->inner};
	struct iq_tb_line l = {
		.line = c->line, .nlines = c->nlines, .ts = c->ts,
		.ts_raw = iq_str_make(c->ts_raw.p, c->ts_raw.len),
		.text = iq_str_make(c->text.p, c->text.len),
		/* a joined line: only its first chunk stands at its line */
		.quote = c->nchunks > 1 ? iq_str_make(c->text.p, c->first_len) : IQ_STR_NULL,
	};
	return iq_tb_feed(&cr->tb[slot], &l, emit, &o);
}

/* 90 when the first non-empty line of head is a CRI record, 50 when one of
 * the next few is (a damaged first line). */
static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t i = 0;
	if (n >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	int seen = 0;
	while (i < n && seen < 5) {
		const char *nl = memchr(head + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - head) - i : n - i;
		const char *s = head + i;
		i += len + 1;
		if (len && s[len - 1] == '\r')
			len--;
		if (len == 0)
			continue;
		seen++;
		struct cri_line l;
		if (split(s, len, &l) != 0)
			continue;
		snprintf(why, whysz, "%s is a CRI record: %.*s %s %c",
			 seen == 1 ? "first line" : "an early line",
			 (int)(l.ts_raw.n < 40 ? l.ts_raw.n : 40), l.ts_raw.p,
			 l.stream == STDOUT ? "stdout" : "stderr", l.partial ? 'P' : 'F');
		return seen == 1 ? 90 : 50;
	}
	return 0;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	struct cri *c = st;
	iq_inner_init(&c->inner, ctx);
	for (int k = 0; k < NSLOTS; k++) {
		iq_buf_init(&c->slot[k].text);
		iq_buf_init(&c->slot[k].ts_raw);
		iq_tb_init(&c->tb[k]);
	}
	return 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct cri *cr = st;
	if (lineno == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
		s += 3;
		n -= 3;
	}
	if (n == 0) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	struct cri_line l;
	if (split(s, n, &l) != 0) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "malformed cri line", s, n);
		return 0;
	}
	struct chunks *c = &cr->slot[l.stream];
	if (!c->pending && !l.partial) {  /* the common case: no copy */
		struct out o = {ctx, l.stream, &cr->inner};
		struct iq_tb_line tl = {.line = lineno, .nlines = 1, .ts = l.ts,
					.ts_raw = l.ts_raw, .text = l.content};
		return iq_tb_feed(&cr->tb[l.stream], &tl, emit, &o);
	}
	if (!c->pending) {
		iq_buf_reset(&c->text);
		iq_buf_reset(&c->ts_raw);
		if (iq_buf_add(&c->ts_raw, l.ts_raw.p, l.ts_raw.n))
			return IQ_ERR_NOMEM;
		c->ts = l.ts;
		c->line = lineno;
		c->nlines = 0;
		c->pending = 1;
		c->nchunks = 0;
		c->first_len = l.content.n;
	}
	c->nchunks++;
	c->nlines = lineno - c->line + 1;  /* the span, other stream's lines included */
	if (iq_buf_add(&c->text, l.content.p, l.content.n))
		return IQ_ERR_NOMEM;
	/* Output that never ends a line is cut into capped records. */
	return l.partial && c->text.len < IQ_MAX_LINE ? 0 : feed_chunks(cr, l.stream, ctx);
}

/* A P left at the end is a complete, unterminated line; then the pending
 * tracebacks: each oldest first. Then frees. */
static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct cri *cr = st;
	struct chunks *o = &cr->slot[STDOUT], *e = &cr->slot[STDERR];
	int first = o->pending && (!e->pending || o->line < e->line) ? STDOUT : STDERR;
	int rc = feed_chunks(cr, first, ctx);
	if (!rc)
		rc = feed_chunks(cr, !first, ctx);
	first = iq_tb_pending_line(&cr->tb[STDOUT]) < iq_tb_pending_line(&cr->tb[STDERR]) ? STDOUT : STDERR;
	struct out o1 = {ctx, first, &cr->inner}, o2 = {ctx, !first, &cr->inner};
	if (!rc)
		rc = iq_tb_flush(&cr->tb[first], emit, &o1);
	if (!rc)
		rc = iq_tb_flush(&cr->tb[!first], emit, &o2);
	int irc = iq_inner_end(&cr->inner, ctx);
	if (!rc)
		rc = irc;
	for (int k = 0; k < NSLOTS; k++) {
		iq_buf_release(&cr->slot[k].text);
		iq_buf_release(&cr->slot[k].ts_raw);
		iq_tb_release(&cr->tb[k]);
	}
	return rc;
}

const struct iq_format iq_format_cri = {
	.name = "cri",
	.desc = "CRI log lines of containerd / CRI-O (time stream P|F content, P chunks re-joined)",
	.sniff = sniff,
	.state_size = sizeof(struct cri),
	.begin = begin,
	.line = line,
	.end = end,
};
