/* inner.h: access-log lines inside a container log's wrapper (inner.c),
 * for the container-log formats (cri, docker-json, plain). */
#ifndef IQ_INNER_H
#define IQ_INNER_H

#include "parse.h"

/* Per file; fields are private to inner.c. */
struct iq_inner {
	int state;                      /* 0 undecided, 1 reading f, -1 never */
	const struct iq_format *f;
	void *st;
	long seen;
	struct iq_parse_ctx ictx;       /* f's context: its sink comes here */
	const struct iq_parse_ctx *outer;
	long line, nlines;
	int64_t ts;
	struct iq_str stream;
	int consumed;
};

/* Readies in for the file ctx describes: only a proxy's container (an
 * ingress controller, gateway or load balancer by its pod, namespace or
 * container name) is looked into. */
void iq_inner_init(struct iq_inner *in, const struct iq_parse_ctx *ctx);

/* Offers one logical line (its first file line, span, the wrapper's time
 * or IQ_TIME_NONE, stream and content): 1 when it was an access-log line and its http record went to
 * ctx's sink, 0 when the line is the caller's to emit, or a negative
 * iq_err from the sink. */
int iq_inner_offer(struct iq_inner *in, const struct iq_parse_ctx *ctx, long line, long nlines,
		   int64_t ts, struct iq_str stream, struct iq_str text);

/* Ends the inner format (if one was found) and frees. 0 or its error. */
int iq_inner_end(struct iq_inner *in, const struct iq_parse_ctx *ctx);

/* The access-log format found inside, or NULL. */
const char *iq_inner_format(const struct iq_inner *in);

#endif
