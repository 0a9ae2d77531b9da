/* envoy.c: placeholder until the envoy parser lands; recognises nothing. */
#include "parse.h"

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path); IQ_UNUSED(head); IQ_UNUSED(n); IQ_UNUSED(why); IQ_UNUSED(whysz);
	return 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	IQ_UNUSED(st); IQ_UNUSED(s); IQ_UNUSED(n);
	ctx->sink.skip(ctx->sink.u, lineno, 1, "not implemented", NULL, 0);
	return 0;
}

static int begin(void *st, const struct iq_parse_ctx *ctx) { IQ_UNUSED(st); IQ_UNUSED(ctx); return 0; }
static int end(void *st, const struct iq_parse_ctx *ctx) { IQ_UNUSED(st); IQ_UNUSED(ctx); return 0; }

const struct iq_format iq_format_envoy = {
	.name = "envoy", .desc = "envoy (not implemented)", .sniff = sniff,
	.state_size = 1, .begin = begin, .line = line, .end = end,
};
