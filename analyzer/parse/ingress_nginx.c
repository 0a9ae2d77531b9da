/* ingress_nginx.c: the ingress-nginx controller access log (default
 * log-format-upstream) and plain nginx `combined`/common lines, which are
 * its prefix: one IQ_KIND_HTTP record per line, read by a hand-written
 * scanner whose record strings all point into the line. */
#include <string.h>

#include "parse.h"

/* A run of malformed or blank lines is reported as one skip. */
struct nginx {
	long skip_first, skip_count;
	const char *skip_reason;
	struct iq_buf skip_text;      /* first line of the run, cut */
};

/* Cursor over one line. */
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
	size_t b = c->i;
	while (c->i < c->n && c->s[c->i] != ' ')
		c->i++;
	return iq_str_make(c->s + b, c->i - b);
}

/* A quoted field at the cursor ('"' there): its body, escapes as written.
 * A backslash escapes the next byte (nginx writes \xXX, escape=json \"), and
 * only a quote followed by a space or the line end closes the field, so a
 * raw quote from escape=none does not. Returns -1 when unterminated. */
static int quoted(struct cur *c, struct iq_str *out)
{
	size_t b = c->i + 1, i = b;
	for (;;) {
		const char *q = memchr(c->s + i, '"', c->n - i);
		if (!q)
			return -1;
		size_t k = (size_t)(q - c->s);
		/* an odd run of backslashes before the quote escapes it */
		size_t bs = 0;
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

/* A quoted field, or a bare token where a proxy wrote one unquoted. */
static struct iq_str field(struct cur *c)
{
	struct iq_str v;
	if (c->i < c->n && c->s[c->i] == '"' && quoted(c, &v) == 0)
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

/* Seconds such as "60.015", "0", ".5"; NAN when v is not one. One
 * division of exact integers, so "2.315" reads as the double nearest it. */
static double secs(struct iq_str v)
{
	static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
				       1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
	int64_t m = 0;
	int digits = 0, frac = 0, dot = 0;
	for (size_t i = 0; i < v.n; i++) {
		char ch = v.p[i];
		if (ch >= '0' && ch <= '9') {
			if (++digits > 18)
				return NAN;
			m = m * 10 + (ch - '0');
			frac += dot;
		} else if (ch == '.' && !dot) {
			dot = 1;
		} else {
			return NAN;
		}
	}
	return digits ? (double)m / pow10[frac] : NAN;
}

static int status_of(struct iq_str v)
{
	int64_t x = num(v);
	return v.n == 3 && x >= 100 ? (int)x : 0;
}

/* "$request": "GET /v1/completions HTTP/1.1" into method, path, proto.
 * Anything else (TLS bytes, "-", a scanner's junk) fills nothing. */
static void request(struct iq_str rq, struct iq_http *h)
{
	size_t m = 0;
	while (m < rq.n && m <= 20 && rq.p[m] >= 'A' && rq.p[m] <= 'Z')
		m++;
	if (m == 0 || m > 20 || m >= rq.n || rq.p[m] != ' ')
		return;
	h->method = iq_str_make(rq.p, m);
	const char *rest = rq.p + m + 1;
	size_t rn = rq.n - m - 1;
	size_t sp = rn;
	while (sp > 0 && rest[sp - 1] != ' ')
		sp--;
	if (sp > 1 && rn - sp > 5 && memcmp(rest + sp, "HTTP/", 5) == 0) {
		h->path = iq_str_make(rest, sp - 1);
		h->proto = iq_str_make(rest + sp, rn - sp);
	} else {
		h->path = iq_str_make(rest, rn);
	}
}

/* One list of the upstream tail: "a, b : c" (", " between retries, " : "
 * across internal redirects). Fills up to IQ_MAX_UPSTREAMS items; returns
 * the number of items, 0 at the line end. */
static int list(struct cur *c, struct iq_str *item)
{
	int k = 0;
	skip_sp(c);
	while (c->i < c->n) {
		struct iq_str t = token(c);
		int more = 0;
		if (t.n > 1 && t.p[t.n - 1] == ',') {
			t.n--;
			more = 1;
		}
		if (k < IQ_MAX_UPSTREAMS)
			item[k] = t;
		k++;
		skip_sp(c);
		if (!more && c->i < c->n && c->s[c->i] == ':' &&
		    (c->i + 1 == c->n || c->s[c->i + 1] == ' ')) {
			c->i++;
			skip_sp(c);
			more = 1;
		}
		if (!more)
			break;
	}
	return k;
}

/* The ingress-nginx tail after the user agent: $request_length
 * $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name]
 * $upstream_addr $upstream_response_length $upstream_response_time
 * $upstream_status $req_id. The bracketed names are optional (older
 * controllers), so is $req_id. Returns 1 when the tail was there. */
static int tail(struct cur *c, struct iq_http *h)
{
	skip_sp(c);
	struct iq_str rl = token(c);
	skip_sp(c);
	struct iq_str rt = token(c);
	double t = secs(rt);
	if ((num(rl) < 0 && !is_dash(rl)) || (isnan(t) && !is_dash(rt)))
		return 0;
	h->duration_s = t;
	skip_sp(c);
	for (int b = 0; b < 2 && c->i < c->n && c->s[c->i] == '['; b++) {
		const char *e = memchr(c->s + c->i, ']', c->n - c->i);
		if (!e)
			return 1;
		if (b == 0)
			h->upstream_name = or_empty(iq_str_make(c->s + c->i + 1,
							(size_t)(e - c->s) - c->i - 1));
		c->i = (size_t)(e - c->s) + 1;
		skip_sp(c);
	}
	struct iq_str addr[IQ_MAX_UPSTREAMS], len[IQ_MAX_UPSTREAMS];
	struct iq_str tm[IQ_MAX_UPSTREAMS], st[IQ_MAX_UPSTREAMS];
	int na = list(c, addr);
	int nl = list(c, len);
	int nt = list(c, tm);
	int ns = list(c, st);
	struct iq_str id[IQ_MAX_UPSTREAMS];
	if (list(c, id) == 1)
		h->request_id = or_empty(id[0]);
	IQ_UNUSED(nl);
	int n = na;
	if (nt > n)
		n = nt;
	if (ns > n)
		n = ns;
	if (n > IQ_MAX_UPSTREAMS)
		n = IQ_MAX_UPSTREAMS;
	int known = 0;
	for (int i = 0; i < n; i++) {
		if (i < na && !is_dash(addr[i])) {
			h->upstream_addr[i] = addr[i];
			known = 1;
		}
		if (i < ns && (h->upstream_status[i] = status_of(st[i])))
			known = 1;
		if (i < nt && !isnan(h->upstream_time_s[i] = secs(tm[i])))
			known = 1;
	}
	/* "- - - -": no upstream was contacted */
	h->n_upstreams = known ? n : 0;
	return 1;
}

/* Parses one access log line into r (kind HTTP, strings into s). Returns
 * 0, or -1 when the line is not one; *has_tail tells whether the
 * ingress-nginx tail followed the combined fields. */
static int parse_line(const char *s, size_t n, struct iq_record *r, int *has_tail)
{
	struct cur c = {s, n, 0};
	struct iq_http *h = &r->u.http;
	*has_tail = 0;
	struct iq_str addr = token(&c);
	if (addr.n == 0 || c.i >= n)
		return -1;
	skip_sp(&c);
	if (c.i + 1 >= n || s[c.i] != '-' || s[c.i + 1] != ' ')
		return -1;
	c.i++;
	skip_sp(&c);
	h->client = addr;
	/* older controllers: "%v - [$the_real_ip] - $remote_user [..." */
	if (c.i < n && s[c.i] == '[') {
		const char *e = memchr(s + c.i, ']', n - c.i);
		if (!e)
			return -1;
		struct iq_str real = iq_str_make(s + c.i + 1, (size_t)(e - s) - c.i - 1);
		c.i = (size_t)(e - s) + 1;
		skip_sp(&c);
		if (c.i + 1 >= n || s[c.i] != '-' || s[c.i + 1] != ' ')
			return -1;
		c.i++;
		skip_sp(&c);
		/* $proxy_add_x_forwarded_for: the client is the first */
		const char *comma = memchr(real.p, ',', real.n);
		if (comma)
			real.n = (size_t)(comma - real.p);
		if (real.n && !is_dash(real))
			h->client = real;
	}
	if (token(&c).n == 0)  /* $remote_user */
		return -1;
	skip_sp(&c);
	if (c.i + 28 > n || s[c.i] != '[' || s[c.i + 27] != ']' ||
	    iq_parse_clf(s + c.i + 1, n - c.i - 1, &r->ts) != 0)
		return -1;
	r->ts_how = IQ_TS_EXPLICIT;
	r->ts_raw = iq_str_make(s + c.i + 1, 26);
	c.i += 28;
	skip_sp(&c);
	struct iq_str rq;
	if (c.i >= n || s[c.i] != '"' || quoted(&c, &rq) != 0)
		return -1;
	request(rq, h);
	skip_sp(&c);
	struct iq_str status = token(&c);
	if (status.n == 0)
		return -1;
	h->status = status_of(status);
	skip_sp(&c);
	h->bytes_sent = num(token(&c));
	skip_sp(&c);
	field(&c);                           /* $http_referer */
	skip_sp(&c);
	h->user_agent = or_empty(field(&c));
	*has_tail = tail(&c, h);
	r->text = iq_str_make(s, n);
	return 0;
}

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	int checked = 0, ok = 0, tails = 0;
	size_t i = 0;
	while (i < n && checked < 20) {
		const char *nl = memchr(head + i, '\n', n - i);
		size_t e = nl ? (size_t)(nl - head) : n;
		/* a last line without its end may be cut: judge it only alone */
		if (!nl && checked > 0)
			break;
		size_t len = e - i;
		if (len && head[e - 1] == '\r')
			len--;
		if (len) {
			struct iq_record r;
			int t;
			iq_record_init(&r, IQ_KIND_HTTP);
			checked++;
			if (parse_line(head + i, len, &r, &t) == 0) {
				ok++;
				tails += t;
			}
		}
		i = e + 1;
	}
	if (ok == 0)
		return 0;
	snprintf(why, whysz, "%d of %d lines are nginx access log lines, %d with the ingress-nginx upstream tail",
		 ok, checked, tails);
	if (ok * 2 <= checked)
		return 40;
	return tails * 2 > ok ? 90 : 80;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct nginx *p = st;
	iq_buf_init(&p->skip_text);
	return 0;
}

static void flush_skip(struct nginx *p, const struct iq_parse_ctx *ctx)
{
	if (!p->skip_count)
		return;
	ctx->sink.skip(ctx->sink.u, p->skip_first, p->skip_count, p->skip_reason,
		       p->skip_text.p, p->skip_text.len);
	p->skip_count = 0;
}

static void skip(struct nginx *p, const struct iq_parse_ctx *ctx, long lineno,
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
	struct nginx *p = st;
	size_t k = 0;
	while (k < n && (s[k] == ' ' || s[k] == '\t'))
		k++;
	if (k == n) {
		skip(p, ctx, lineno, "blank", s, n);
		return 0;
	}
	struct iq_record r;
	int t;
	iq_record_init(&r, IQ_KIND_HTTP);
	if (parse_line(s, n, &r, &t) != 0) {
		skip(p, ctx, lineno, "malformed access log line", s, n);
		return 0;
	}
	flush_skip(p, ctx);
	r.line = lineno;
	return ctx->sink.record(ctx->sink.u, &r);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct nginx *p = st;
	flush_skip(p, ctx);
	iq_buf_release(&p->skip_text);
	return 0;
}

const struct iq_format iq_format_ingress_nginx = {
	.name = "ingress-nginx",
	.desc = "ingress-nginx controller access log (log-format-upstream) and nginx combined",
	.sniff = sniff,
	.state_size = sizeof(struct nginx),
	.begin = begin,
	.line = line,
	.end = end,
};
