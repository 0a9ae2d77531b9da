/* envoy.c: Envoy's default text access log and Istio's default (Envoy's
 * fields with extra ones inserted after %RESPONSE_FLAGS% and appended after
 * %UPSTREAM_HOST%): one IQ_KIND_HTTP record per line, read by a
 * hand-written scanner whose record strings all point into the line.
 *
 * Decisions: Envoy stamps %START_TIME%, when the request began; the record's
 * time is start + %DURATION%, when the client saw the response, like the
 * other access logs (ts_raw keeps the start as written; a "-" duration
 * leaves the start). parse.h has no response-flags field, so
 * %RESPONSE_FLAGS% ("UH", "UF,URX", ...) goes into severity ("-" none).
 * client is the first X-Forwarded-For address, else Istio's
 * %DOWNSTREAM_REMOTE_ADDRESS% without its port. The upstream is
 * %UPSTREAM_HOST% with X-Envoy-Upstream-Service-Time; its status is the
 * response code only when Istio's %RESPONSE_CODE_DETAILS% says
 * "via_upstream". upstream_name is Istio's %UPSTREAM_CLUSTER%. A line cut
 * before its "[start]" (it opens with the request) is still a record, with
 * no time. JSON-encoded access logs are not read here. */
#include <string.h>

#include "parse.h"

/* A run of malformed or blank lines is reported as one skip. */
struct envoy {
	long skip_first, skip_count;
	const char *skip_reason;
	struct iq_buf skip_text;      /* first line of the run, cut */
};

struct cur {
	const char *s;
	size_t n, i;
};

static void skip_sp(struct cur *c)
{
	while (c->i < c->n && c->s[c->i] == ' ')
		c->i++;
}

/* A bare token: up to the next space or the end of the line. */
static struct iq_str token(struct cur *c)
{
	skip_sp(c);
	size_t b = c->i;
	while (c->i < c->n && c->s[c->i] != ' ')
		c->i++;
	return iq_str_make(c->s + b, c->i - b);
}

static int at_quote(struct cur *c)
{
	skip_sp(c);
	return c->i < c->n && c->s[c->i] == '"';
}

/* A quoted field at the cursor: its body as written. Envoy does not escape
 * quotes inside values, so only a quote followed by a space or the line end
 * closes the field. Returns -1 when there is none or it is unterminated
 * (the cursor does not move then). */
static int quoted(struct cur *c, struct iq_str *out)
{
	if (!at_quote(c))
		return -1;
	size_t b = c->i + 1, i = b;
	for (;;) {
		const char *q = i < c->n ? memchr(c->s + i, '"', c->n - i) : NULL;
		if (!q)
			return -1;
		size_t k = (size_t)(q - c->s);
		if (k + 1 == c->n || c->s[k + 1] == ' ') {
			*out = iq_str_make(c->s + b, k - b);
			c->i = k + 1;
			return 0;
		}
		i = k + 1;
	}
}

/* A quoted field, or a bare token (custom formats drop the quotes). */
static struct iq_str field(struct cur *c)
{
	struct iq_str v;
	if (quoted(c, &v) == 0)
		return v;
	return token(c);
}

static int is_dash(struct iq_str v)
{
	return v.n == 1 && v.p[0] == '-';
}

static struct iq_str or_empty(struct iq_str v)
{
	return is_dash(v) ? IQ_STR_NULL : v;
}

/* Non-negative decimal integer filling v; -1 otherwise. */
static int64_t num(struct iq_str v)
{
	if (v.n == 0 || v.n > 18)
		return -1;
	int64_t x = 0;
	for (size_t i = 0; i < v.n; i++) {
		if (v.p[i] < '0' || v.p[i] > '9')
			return -1;
		x = x * 10 + (v.p[i] - '0');
	}
	return x;
}

static int str_eq(struct iq_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* "10.0.0.1:80" or "[fd00::1]:80" without its port. */
static struct iq_str host_of(struct iq_str a)
{
	size_t k = a.n;
	while (k > 0 && a.p[k - 1] >= '0' && a.p[k - 1] <= '9')
		k--;
	if (k == a.n || k < 2 || a.p[k - 1] != ':')
		return a;
	k--;
	if (a.p[0] == '[' && a.p[k - 1] == ']')
		return iq_str_make(a.p + 1, k - 2);
	if (memchr(a.p, ':', k))
		return a;              /* bare IPv6 without a port */
	return iq_str_make(a.p, k);
}

/* "METHOD path PROTO" into method, path, proto; "- - -" (a TCP stream or
 * no request) fills nothing. Returns -1 when rq is not one of these. */
static int request(struct iq_str rq, struct iq_http *h)
{
	size_t m = 0;
	while (m < rq.n && m <= 20 && ((rq.p[m] >= 'A' && rq.p[m] <= 'Z') || rq.p[m] == '-'))
		m++;
	if (m == 0 || m > 20 || m >= rq.n || rq.p[m] != ' ')
		return -1;
	const char *rest = rq.p + m + 1;
	size_t rn = rq.n - m - 1, sp = rn;
	while (sp > 0 && rest[sp - 1] != ' ')
		sp--;
	if (sp < 2)
		return -1;
	struct iq_str method = iq_str_make(rq.p, m);
	struct iq_str path = iq_str_make(rest, sp - 1);
	struct iq_str proto = iq_str_make(rest + sp, rn - sp);
	h->method = or_empty(method);
	h->path = or_empty(path);
	h->proto = or_empty(proto);
	return 0;
}

/* Response flags: "-" or a comma list of upper-case codes ("UF,URX"),
 * or CamelCase names from %RESPONSE_FLAGS_LONG%. */
static int is_flags(struct iq_str v)
{
	if (is_dash(v))
		return 1;
	if (v.n == 0 || v.n > 128 || v.p[0] < 'A' || v.p[0] > 'Z')
		return 0;
	for (size_t i = 0; i < v.n; i++) {
		char ch = v.p[i];
		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == ','))
			return 0;
	}
	return 1;
}

/* Parses one line into r. Returns 0, or -1 when it is not an Envoy/Istio
 * access log line. */
static int parse_line(const char *s, size_t n, struct iq_record *r)
{
	struct cur c = {s, n, 0};
	struct iq_http *h = &r->u.http;
	int64_t start = IQ_TIME_NONE;
	skip_sp(&c);
	if (c.i < n && s[c.i] == '[') {
		const char *e = memchr(s + c.i, ']', n - c.i);
		size_t used;
		if (!e)
			return -1;
		struct iq_str raw = iq_str_make(s + c.i + 1, (size_t)(e - s) - c.i - 1);
		int z = iq_time_parse_iso(raw.p, raw.n, &start, &used);
		if (z < 0 || used != raw.n)
			return -1;
		r->ts_raw = raw;
		r->ts_how = z ? IQ_TS_EXPLICIT : iq_time_local(&start);
		c.i = (size_t)(e - s) + 1;
	}
	struct iq_str rq;
	if (quoted(&c, &rq) != 0 || request(rq, h) != 0)
		return -1;
	struct iq_str code = token(&c), flags = token(&c);
	int64_t status = num(code);
	if (status < 0 || status > 999 || !is_flags(flags))
		return -1;
	h->status = (int)status;
	r->severity = or_empty(flags);
	/* Istio's %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS%
	 * "%UPSTREAM_TRANSPORT_FAILURE_REASON%" (older Istio: quoted mixer
	 * status) sit before %BYTES_RECEIVED%, the first number */
	struct iq_str details = IQ_STR_NULL;
	struct iq_str rx = field(&c);
	for (int k = 0; k < 4 && num(rx) < 0; k++) {
		if (k == 0)
			details = rx;
		rx = field(&c);
	}
	struct iq_str tx = token(&c), dur = token(&c), ust = token(&c);
	if (num(rx) < 0 || (num(tx) < 0 && !is_dash(tx)) ||
	    (num(dur) < 0 && !is_dash(dur)) || (num(ust) < 0 && !is_dash(ust)))
		return -1;
	h->bytes_sent = num(tx);
	int64_t ms = num(dur);
	if (ms >= 0)
		h->duration_s = (double)ms / 1e3;
	if (start != IQ_TIME_NONE)
		r->ts = start + (ms > 0 ? ms * 1000000 : 0);
	r->text = iq_str_make(s, n);

	struct iq_str xff, ua, id, auth, up;
	if (quoted(&c, &xff) != 0)
		return 0;
	const char *comma = memchr(xff.p, ',', xff.n);
	if (comma)
		xff.n = (size_t)(comma - xff.p);
	h->client = or_empty(xff);
	if (quoted(&c, &ua) != 0)
		return 0;
	h->user_agent = or_empty(ua);
	if (quoted(&c, &id) != 0)
		return 0;
	h->request_id = or_empty(id);
	if (quoted(&c, &auth) != 0)
		return 0;
	h->host = or_empty(auth);
	if (quoted(&c, &up) != 0)
		return 0;
	if (!is_dash(up) || num(ust) >= 0) {
		h->n_upstreams = 1;
		h->upstream_addr[0] = or_empty(up);
		if (num(ust) >= 0)
			h->upstream_time_s[0] = (double)num(ust) / 1e3;
		if (str_eq(details, "via_upstream"))
			h->upstream_status[0] = h->status;
	}
	/* Istio: %UPSTREAM_CLUSTER% %UPSTREAM_LOCAL_ADDRESS%
	 * %DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_REMOTE_ADDRESS% ... */
	h->upstream_name = or_empty(token(&c));
	token(&c);
	token(&c);
	struct iq_str remote = token(&c);
	if (!h->client.n && remote.n && !is_dash(remote))
		h->client = host_of(remote);
	return 0;
}

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	int checked = 0, ok = 0, timed = 0;
	size_t i = 0;
	while (i < n && checked < 20) {
		const char *nl = memchr(head + i, '\n', n - i);
		size_t e = nl ? (size_t)(nl - head) : n;
		if (!nl && checked > 0)
			break;           /* a last line cut by the head */
		size_t len = e - i;
		if (len && head[e - 1] == '\r')
			len--;
		if (len) {
			struct iq_record r;
			iq_record_init(&r, IQ_KIND_HTTP);
			checked++;
			if (parse_line(head + i, len, &r) == 0) {
				ok++;
				timed += r.ts != IQ_TIME_NONE;
			}
		}
		i = e + 1;
	}
	if (ok == 0)
		return 0;
	snprintf(why, whysz, "%d of %d lines are Envoy/Istio access log lines (%d with a [start time])",
		 ok, checked, timed);
	if (ok * 2 <= checked)
		return 40;
	return timed ? 90 : 70;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct envoy *p = st;
	iq_buf_init(&p->skip_text);
	return 0;
}

static void flush_skip(struct envoy *p, const struct iq_parse_ctx *ctx)
{
	if (!p->skip_count)
		return;
	ctx->sink.skip(ctx->sink.u, p->skip_first, p->skip_count, p->skip_reason,
		       p->skip_text.p, p->skip_text.len);
	p->skip_count = 0;
}

static void skip(struct envoy *p, const struct iq_parse_ctx *ctx, long lineno,
		 const char *reason, const char *s, size_t n)
{
	if (p->skip_count && p->skip_reason == reason &&
	    p->skip_first + p->skip_count == lineno) {
		p->skip_count++;
		return;
	}
	flush_skip(p, ctx);
	p->skip_first = lineno;
	p->skip_count = 1;
	p->skip_reason = reason;
	iq_buf_reset(&p->skip_text);
	/* the example is only for display: keep it short, drop it on ENOMEM */
	iq_buf_add(&p->skip_text, s, n < 512 ? n : 512);
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct envoy *p = st;
	size_t k = 0;
	while (k < n && (s[k] == ' ' || s[k] == '\t'))
		k++;
	if (k == n) {
		skip(p, ctx, lineno, "blank", s, n);
		return 0;
	}
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_HTTP);
	if (parse_line(s, n, &r) != 0) {
		skip(p, ctx, lineno, "malformed access log line", s, n);
		return 0;
	}
	flush_skip(p, ctx);
	r.line = lineno;
	return ctx->sink.record(ctx->sink.u, &r);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct envoy *p = st;
	flush_skip(p, ctx);
	iq_buf_release(&p->skip_text);
	return 0;
}

const struct iq_format iq_format_envoy = {
	.name = "envoy",
	.desc = "Envoy / Istio default text access log",
	.sniff = sniff,
	.state_size = sizeof(struct envoy),
	.begin = begin,
	.line = line,
	.end = end,
};
