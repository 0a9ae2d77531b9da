/* aws_alb.c: AWS Application Load Balancer access logs (and the classic
 * ELB lines, which lack the leading `type` field): one IQ_KIND_HTTP record
 * per line, read by a hand-written scanner whose record strings all point
 * into the line.
 *
 * Decisions: `time` is when the LB answered the client, so it is the
 * record's time as written. duration_s is the sum of the three processing
 * times; when one of them is -1 (no target answered) it is `time` minus
 * `request_creation_time` instead. The target is the one upstream attempt
 * (target_processing_time its time, target_status_code its status); `-`
 * means none. client is the address without its port, upstream_name the
 * target group's name, request_id the X-Amzn-Trace-Id. parse.h has no
 * field for the LB's own reason, so a set `error_reason`
 * ("TargetConnectionError", "LambdaInvalidResponse"...) goes into severity.
 * Fields after error_reason are ignored (AWS appends new ones). */
#include <string.h>

#include "parse.h"

/* A run of malformed or blank lines is reported as one skip. */
struct alb {
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

/* A quoted field at the cursor: its body as written. A backslash escapes
 * the next byte, and only a quote followed by a space or the line end
 * closes the field. Returns -1 when there is none or it is unterminated
 * (the cursor does not move then). */
static int quoted(struct cur *c, struct iq_str *out)
{
	skip_sp(c);
	if (c->i >= c->n || c->s[c->i] != '"')
		return -1;
	size_t b = c->i + 1, i = b;
	for (;;) {
		const char *q = i < c->n ? memchr(c->s + i, '"', c->n - i) : NULL;
		if (!q)
			return -1;
		size_t k = (size_t)(q - c->s), bs = 0;
		while (k - bs > b && c->s[k - bs - 1] == '\\')
			bs++;
		if (bs % 2 == 0 && (k + 1 == c->n || c->s[k + 1] == ' ')) {
			*out = iq_str_make(c->s + b, k - b);
			c->i = k + 1;
			return 0;
		}
		i = k + 1;
	}
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

/* Seconds such as "0.086" or "-1"; *out is NAN for -1 (the sentinel).
 * Returns -1 when v is neither. */
static int secs(struct iq_str v, double *out)
{
	static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
				       1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
	if (v.n == 2 && v.p[0] == '-' && v.p[1] == '1') {
		*out = NAN;
		return 0;
	}
	int64_t m = 0;
	int digits = 0, frac = 0, dot = 0;
	for (size_t i = 0; i < v.n; i++) {
		char ch = v.p[i];
		if (ch >= '0' && ch <= '9') {
			if (++digits > 18)
				return -1;
			m = m * 10 + (ch - '0');
			frac += dot;
		} else if (ch == '.' && !dot) {
			dot = 1;
		} else {
			return -1;
		}
	}
	if (!digits)
		return -1;
	*out = (double)m / pow10[frac];
	return 0;
}

/* "10.0.0.1:80" or "[fd00::1]:80" without its port: ALB always appends one,
 * so the last ':' starts it (also for bare IPv6 "2600:1f18::1:54321"). */
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
	return iq_str_make(a.p, k);
}

static int status_of(struct iq_str v)
{
	int64_t x = num(v);
	return v.n == 3 && x >= 100 ? (int)x : 0;
}

/* "GET https://host:443/path?q HTTP/1.1" into method, host, path, proto.
 * ALB writes "- - - " for a request it could not read: nothing then. */
static void request(struct iq_str rq, struct iq_http *h)
{
	size_t m = 0;
	while (m < rq.n && m <= 20 && rq.p[m] >= 'A' && rq.p[m] <= 'Z')
		m++;
	if (m == 0 || m > 20 || m >= rq.n || rq.p[m] != ' ')
		return;
	h->method = iq_str_make(rq.p, m);
	const char *u = rq.p + m + 1;
	size_t un = rq.n - m - 1, sp = un;
	while (sp > 0 && u[sp - 1] != ' ')
		sp--;
	if (sp > 1 && un - sp > 5 && memcmp(u + sp, "HTTP/", 5) == 0) {
		h->proto = iq_str_make(u + sp, un - sp);
		un = sp - 1;
	}
	const char *ss = un > 3 ? iq_memmem(u, un, "://", 3) : NULL;
	if (ss) {
		size_t a = (size_t)(ss - u) + 3, e = a;
		while (e < un && u[e] != '/' && u[e] != '?')
			e++;
		h->host = iq_str_make(u + a, e - a);
		h->path = e < un ? iq_str_make(u + e, un - e) : IQ_STR_LIT("/");
	} else {
		h->path = iq_str_make(u, un);
	}
}

/* "arn:aws:elasticloadbalancing:...:targetgroup/<name>/<id>" -> <name>. */
static struct iq_str target_group(struct iq_str arn)
{
	const char *tg = iq_memmem(arn.p, arn.n, ":targetgroup/", 13);
	if (!tg)
		return or_empty(arn);
	const char *b = tg + 13, *e = arn.p + arn.n;
	const char *sl = memchr(b, '/', (size_t)(e - b));
	return iq_str_make(b, (size_t)((sl ? sl : e) - b));
}

static int is_type(struct iq_str t)
{
	static const char *const types[] = {"http", "https", "h2", "grpc", "grpcs", "ws", "wss"};
	for (size_t i = 0; i < IQ_ARRAY_LEN(types); i++)
		if (t.n == strlen(types[i]) && memcmp(t.p, types[i], t.n) == 0)
			return 1;
	return 0;
}

/* One ISO time filling v (with its zone, as ALB writes it); -1 otherwise. */
static int iso(struct iq_str v, int64_t *t)
{
	size_t used;
	return v.n >= 20 && iq_time_parse_iso(v.p, v.n, t, &used) == 1 && used == v.n ? 0 : -1;
}

/* Parses one line into r. Returns 0, or -1 when it is not an ALB/ELB line
 * (one cut before its request still counts when the fields up to it are
 * there). */
static int parse_line(const char *s, size_t n, struct iq_record *r)
{
	struct cur c = {s, n, 0};
	struct iq_http *h = &r->u.http;
	struct iq_str t = token(&c);
	int classic = 0;
	if (!is_type(t)) {
		classic = 1;          /* classic ELB: no type, the time first */
		c.i = 0;
	}
	struct iq_str ts = token(&c);
	if (iso(ts, &r->ts) != 0)
		return -1;
	r->ts_how = IQ_TS_EXPLICIT;
	r->ts_raw = ts;
	struct iq_str elb = token(&c), client = token(&c), target = token(&c);
	if (!elb.n || !client.n || !target.n || is_dash(client))
		return -1;
	double tm[3];
	for (int k = 0; k < 3; k++)
		if (secs(token(&c), &tm[k]) != 0)
			return -1;
	struct iq_str st = token(&c), tst = token(&c);
	struct iq_str rx = token(&c), tx = token(&c);
	if (!status_of(st) && !is_dash(st))
		return -1;
	if (!status_of(tst) && !is_dash(tst))
		return -1;
	if ((num(rx) < 0 && !is_dash(rx)) || (num(tx) < 0 && !is_dash(tx)))
		return -1;
	struct iq_str rq;
	if (quoted(&c, &rq) != 0)
		return -1;
	h->client = host_of(client);
	h->status = status_of(st);
	h->bytes_sent = num(tx);
	request(rq, h);
	if (!is_dash(target) || status_of(tst)) {
		h->n_upstreams = 1;
		h->upstream_addr[0] = or_empty(target);
		h->upstream_status[0] = status_of(tst);
		h->upstream_time_s[0] = tm[1];
	}
	if (!isnan(tm[0]) && !isnan(tm[1]) && !isnan(tm[2]))
		h->duration_s = tm[0] + tm[1] + tm[2];
	r->text = iq_str_make(s, n);

	struct iq_str v;
	if (quoted(&c, &v) != 0)
		return 0;
	h->user_agent = or_empty(v);
	token(&c);                              /* ssl_cipher */
	token(&c);                              /* ssl_protocol */
	if (classic)
		return 0;
	h->upstream_name = target_group(token(&c));
	if (quoted(&c, &v) != 0)
		return 0;
	h->request_id = or_empty(v);
	if (quoted(&c, &v) != 0 || quoted(&c, &v) != 0)   /* domain, cert */
		return 0;
	token(&c);                              /* matched_rule_priority */
	struct iq_str cr = token(&c);           /* request_creation_time */
	int64_t created;
	if (isnan(h->duration_s) && iso(cr, &created) == 0 && created <= r->ts)
		h->duration_s = (double)(r->ts - created) / 1e9;
	if (quoted(&c, &v) != 0 || quoted(&c, &v) != 0)   /* actions, redirect */
		return 0;
	if (quoted(&c, &v) == 0)
		r->severity = or_empty(v);      /* error_reason */
	return 0;
}

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	int checked = 0, ok = 0;
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
			if (parse_line(head + i, len, &r) == 0)
				ok++;
		}
		i = e + 1;
	}
	if (ok == 0)
		return 0;
	snprintf(why, whysz, "%d of %d lines are AWS ALB/ELB access log lines", ok, checked);
	return ok * 2 <= checked ? 40 : 90;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct alb *p = st;
	iq_buf_init(&p->skip_text);
	return 0;
}

static void flush_skip(struct alb *p, const struct iq_parse_ctx *ctx)
{
	if (!p->skip_count)
		return;
	ctx->sink.skip(ctx->sink.u, p->skip_first, p->skip_count, p->skip_reason,
		       p->skip_text.p, p->skip_text.len);
	p->skip_count = 0;
}

static void skip(struct alb *p, const struct iq_parse_ctx *ctx, long lineno,
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
	struct alb *p = st;
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
	struct alb *p = st;
	flush_skip(p, ctx);
	iq_buf_release(&p->skip_text);
	return 0;
}

const struct iq_format iq_format_aws_alb = {
	.name = "aws-alb",
	.desc = "AWS Application Load Balancer access log (and classic ELB)",
	.sniff = sniff,
	.state_size = sizeof(struct alb),
	.begin = begin,
	.line = line,
	.end = end,
};
