/* inner.c: load-balancer access logs that arrive as a container's log. An
 * ingress-nginx, Envoy, HAProxy or Traefik controller writes its access
 * log to stdout, so a bundle often holds it only as that pod's CRI or
 * Docker json-file log. The container-log formats offer each logical
 * line's content here; once a line of it reads as one of those access-log
 * formats, that format's parser reads every later line, and the lines it
 * turns into requests become http records (at the wrapper's file line,
 * with the access log's own time) instead of log lines. */
#include <stdlib.h>
#include <string.h>

#include "inner.h"

/* The access-log formats a controller may write to stdout. */
static const char *const candidates[] = {"ingress-nginx", "envoy", "haproxy", "traefik-json"};

/* Lines looked at before giving up on a container that writes none. */
#define MAX_UNDECIDED 400

static int has(struct iq_str s, const char *lit)
{
	size_t l = strlen(lit);
	return s.n >= l && iq_memmem(s.p, s.n, lit, l) != NULL;
}

/* Is the file a proxy's own log: a pod, namespace or container of an
 * ingress controller, gateway or load balancer? A mesh's sidecar in a
 * serving pod (istio-proxy, linkerd-proxy) logs the pod's own requests a
 * second time and is not one. */
static int proxy_container(const struct iq_ident *id)
{
	static const char *const names[] = {"ingress", "gateway", "haproxy", "traefik", "envoy",
					    "nginx", "loadbalancer", "load-balancer", "contour"};
	int sidecar = has(id->container, "istio-proxy") || has(id->container, "linkerd-proxy");
	for (size_t i = 0; i < IQ_ARRAY_LEN(names); i++) {
		if (has(id->pod, names[i]) || has(id->ns, names[i]))
			return 1;
		if (!sidecar && has(id->container, names[i]))
			return 1;
	}
	return 0;
}

static int inner_record(void *u, const struct iq_record *r)
{
	struct iq_inner *in = u;
	if (r->kind != IQ_KIND_HTTP)
		return 0;  /* the outer format keeps the line as a log line */
	struct iq_record c = *r;
	c.line = in->line;
	c.nlines = in->nlines;
	c.first_line = 0;
	c.stream = in->stream;
	/* The runtime stamped the line as the proxy wrote it, on the same
	 * (the proxy's node's) clock as the access log's own time, which most
	 * proxies cut to the second: the finer stamp, when it is that moment. */
	if (in->ts != IQ_TIME_NONE && c.ts != IQ_TIME_NONE && in->ts >= c.ts &&
	    in->ts - c.ts < IQ_NS_PER_SEC && c.ts % IQ_NS_PER_SEC == 0)
		c.ts = in->ts;
	in->consumed = 1;
	return in->outer->sink.record(in->outer->sink.u, &c);
}

static void inner_skip(void *u, long first_line, long count, const char *reason, const char *text, size_t n)
{
	/* the outer format keeps the line as a log line */
	IQ_UNUSED(u);
	IQ_UNUSED(first_line);
	IQ_UNUSED(count);
	IQ_UNUSED(reason);
	IQ_UNUSED(text);
	IQ_UNUSED(n);
}

void iq_inner_init(struct iq_inner *in, const struct iq_parse_ctx *ctx)
{
	memset(in, 0, sizeof *in);
	in->state = proxy_container(&ctx->file_id) ? 0 : -1;
}

/* Starts format f on the inner context. */
static int start(struct iq_inner *in, const struct iq_format *f, const struct iq_parse_ctx *ctx)
{
	in->f = f;
	in->st = iq_xcalloc(1, f->state_size ? f->state_size : 1);
	in->ictx = *ctx;
	in->ictx.sink.record = inner_record;
	in->ictx.sink.skip = inner_skip;
	in->ictx.sink.u = in;
	in->state = 1;
	return f->begin ? f->begin(in->st, &in->ictx) : 0;
}

int iq_inner_offer(struct iq_inner *in, const struct iq_parse_ctx *ctx, long line, long nlines,
		   int64_t ts, struct iq_str stream, struct iq_str text)
{
	if (in->state < 0 || text.n < 16)
		return 0;
	if (in->state == 0) {
		/* sniff the content: a single line that one of them reads */
		char why[256];
		const struct iq_format *best = NULL;
		int score = 0;
		for (size_t i = 0; i < IQ_ARRAY_LEN(candidates); i++) {
			const struct iq_format *f = iq_format_find(candidates[i]);
			int sc = f && f->sniff ? f->sniff(ctx->path, text.p, text.n, why, sizeof why) : 0;
			if (sc > score) {
				score = sc;
				best = f;
			}
		}
		if (score < 50) {
			if (++in->seen >= MAX_UNDECIDED)
				in->state = -1;
			return 0;
		}
		int rc = start(in, best, ctx);
		if (rc)
			return rc;
	}
	in->outer = ctx;
	in->line = line;
	in->nlines = nlines > 0 ? nlines : 1;
	in->ts = ts;
	in->stream = stream;
	in->consumed = 0;
	int rc = in->f->line(in->st, &in->ictx, line, text.p, text.n);
	if (rc < 0)
		return rc;
	return in->consumed;
}

int iq_inner_end(struct iq_inner *in, const struct iq_parse_ctx *ctx)
{
	int rc = 0;
	if (in->state == 1) {
		in->outer = ctx;  /* a record still pending lands at the last line offered */
		in->ts = IQ_TIME_NONE;
		in->consumed = 0;
		if (in->f->end)
			rc = in->f->end(in->st, &in->ictx);
	}
	free(in->st);
	in->st = NULL;
	in->state = -1;
	return rc;
}

const char *iq_inner_format(const struct iq_inner *in)
{
	return in->state == 1 ? in->f->name : NULL;
}
