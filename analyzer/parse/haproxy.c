/* haproxy.c: HAProxy logs: `option httplog` lines (1.4-1.8 Tq/Tw/Tc/Tr/Tt
 * and 2.x TR/Tw/Tc/Tr/Ta naming) and `option tcplog` lines, one
 * IQ_KIND_HTTP record each, behind an optional syslog header; HAProxy's
 * other syslog messages ("Server be/srv1 is DOWN ...", "backend be has no
 * server available!") are IQ_KIND_LOG records. Record strings point into
 * the line.
 *
 * Decisions: accept_date carries no zone (UTC, or the --tz zone); the record's time
 * is accept_date + Ta (Tt before 1.9), when the client saw the end, with
 * ts_raw the accept_date as written. parse.h has no termination-state
 * field, so the state ("SC--", "LR--", "--" in TCP mode) goes into
 * severity ("----" and "--" are normal and give none). HAProxy logs the
 * server's name, not its address: upstream_addr is that name, upstream_name
 * the backend, the upstream time Tr; "<NOSRV>" (also "**<NOSRV>**" pasted
 * from Markdown) means no upstream. client is the address without its
 * port. The syslog header's date has no year: message lines get it by the
 * year rule (iq_years), the access lines' accept_date being the year
 * written in the text. The header may lack the host (HAProxy's default
 * "local" format). Captured request/response headers ("{...}" blocks) are
 * skipped whole; a value that reads as a host or a user agent fills those.
 * Lines without a syslog header that are not access lines are malformed
 * (a wrapped line, a fragment). */
#include <string.h>

#include "parse.h"

struct haproxy {
	/* a run of malformed or blank lines is reported as one skip */
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

static struct iq_str token(struct cur *c)
{
	skip_sp(c);
	size_t b = c->i;
	while (c->i < c->n && c->s[c->i] != ' ')
		c->i++;
	return iq_str_make(c->s + b, c->i - b);
}

static int digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* Non-negative decimal integer filling v; -1 otherwise. */
static int64_t num(struct iq_str v)
{
	if (v.n == 0 || v.n > 18)
		return -1;
	int64_t x = 0;
	for (size_t i = 0; i < v.n; i++) {
		if (!digit(v.p[i]))
			return -1;
		x = x * 10 + (v.p[i] - '0');
	}
	return x;
}

static int two(const char *p, int *v)
{
	if (!digit(p[0]) || !digit(p[1]))
		return -1;
	*v = (p[0] - '0') * 10 + (p[1] - '0');
	return 0;
}

/* "[06/Feb/2009:12:14:14.655]" at p (n bytes available, fraction
 * optional): its time (no zone: UTC) and length with the brackets, or -1. */
static int accept_date(const char *p, size_t n, int64_t *out, size_t *len)
{
	int d, yh, yl, h, mi, s;
	if (n < 22 || p[0] != '[' || two(p + 1, &d) || p[3] != '/' || p[7] != '/' ||
	    two(p + 8, &yh) || two(p + 10, &yl) || p[12] != ':' || two(p + 13, &h) ||
	    p[15] != ':' || two(p + 16, &mi) || p[18] != ':' || two(p + 19, &s))
		return -1;
	int mon = iq_month_from_abbr(p + 4);
	if (!mon || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
		return -1;
	size_t i = 21;
	long ns = 0, scale = 100000000;
	if (i < n && p[i] == '.') {
		i++;
		size_t f = i;
		for (; i < n && digit(p[i]); i++) {
			ns += (p[i] - '0') * scale;
			scale /= 10;
			if (i - f >= 9)
				return -1;
		}
		if (i == f)
			return -1;
	}
	if (i >= n || p[i] != ']')
		return -1;
	*out = iq_time_make(yh * 100 + yl, mon, d, h, mi, s, ns);
	*len = i + 1;
	return *out == IQ_TIME_NONE ? -1 : 0;
}

/* "10.0.1.2:33317" or "[::1]:33317" without its port. */
static struct iq_str host_of(struct iq_str a)
{
	size_t k = a.n;
	while (k > 0 && digit(a.p[k - 1]))
		k--;
	if (k == a.n || k < 2 || a.p[k - 1] != ':')
		return a;
	k--;
	if (a.p[0] == '[' && a.p[k - 1] == ']')
		return iq_str_make(a.p + 1, k - 2);
	return iq_str_make(a.p, k);
}

/* "10/0/30/69/109" (a leading '+' with logasap): up to 5 timers in ms,
 * -1 for a phase that did not complete. Returns the count, 0 when v is not
 * a timer list. */
static int timers(struct iq_str v, long *t)
{
	int k = 0;
	size_t i = 0;
	while (i < v.n && k < 5) {
		int neg = 0;
		if (v.p[i] == '+')
			i++;
		if (i < v.n && v.p[i] == '-') {
			neg = 1;
			i++;
		}
		size_t b = i;
		long x = 0;
		while (i < v.n && digit(v.p[i]) && i - b < 12)
			x = x * 10 + (v.p[i++] - '0');
		if (i == b)
			return 0;
		t[k++] = neg ? -x : x;
		if (i == v.n)
			break;
		if (v.p[i++] != '/')
			return 0;
	}
	return i == v.n && (k == 3 || k == 5) ? k : 0;
}

/* The quoted request at the end of the line: "GET / HTTP/1.1" into method,
 * path, proto ("<BADREQ>" fills nothing). */
static void request(struct cur *c, struct iq_http *h)
{
	skip_sp(c);
	const char *q = c->i < c->n ? memchr(c->s + c->i, '"', c->n - c->i) : NULL;
	if (!q)
		return;
	const char *b = q + 1, *e = c->s + c->n;
	if (e > b && e[-1] == '"')
		e--;
	size_t rn = (size_t)(e - b), m = 0;
	while (m < rn && m <= 20 && b[m] >= 'A' && b[m] <= 'Z')
		m++;
	if (m == 0 || m > 20 || m >= rn || b[m] != ' ')
		return;
	h->method = iq_str_make(b, m);
	const char *rest = b + m + 1;
	size_t n = rn - m - 1, sp = n;
	while (sp > 0 && rest[sp - 1] != ' ')
		sp--;
	if (sp > 1 && n - sp > 5 && memcmp(rest + sp, "HTTP/", 5) == 0) {
		h->path = iq_str_make(rest, sp - 1);
		h->proto = iq_str_make(rest + sp, n - sp);
	} else {
		h->path = iq_str_make(rest, n);
	}
}

/* A captured header value that reads as a Host header: a name or
 * address with an optional port, no spaces. */
static int looks_host(struct iq_str v)
{
	int alpha = 0, dot = 0;
	if (!v.n || v.n > 255)
		return 0;
	for (size_t i = 0; i < v.n; i++) {
		char ch = v.p[i];
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))
			alpha = 1;
		else if (ch == '.')
			dot = 1;
		else if (!digit(ch) && ch != '-' && ch != ':' && ch != '_')
			return 0;
	}
	return alpha && dot;
}

/* A captured value that reads as a User-Agent: "product/version ...". */
static int looks_agent(struct iq_str v)
{
	size_t i = 0;
	while (i < v.n && ((v.p[i] >= 'a' && v.p[i] <= 'z') || (v.p[i] >= 'A' && v.p[i] <= 'Z') ||
			   digit(v.p[i]) || v.p[i] == '-' || v.p[i] == '_' || v.p[i] == '.'))
		i++;
	return i > 0 && i + 1 < v.n && v.p[i] == '/' && digit(v.p[i + 1]);
}

/* The "{...}" blocks of captured request and response headers ("capture
 * request header", values split by '|') before the request: skipped
 * whole, whatever they hold (spaces, quotes); the host and user agent
 * are taken from the request's when a value reads as one. */
static void captures(struct cur *c, struct iq_http *h)
{
	for (int block = 0; block < 2; block++) {
		skip_sp(c);
		if (c->i >= c->n || c->s[c->i] != '{')
			return;
		size_t b = c->i + 1, e = b;
		/* the block ends at a '}' followed by a space or the end */
		while (e < c->n && !(c->s[e] == '}' && (e + 1 == c->n || c->s[e + 1] == ' ')))
			e++;
		if (e >= c->n)
			return;
		for (size_t v = b; block == 0 && v <= e;) {
			const char *bar = memchr(c->s + v, '|', e - v);
			size_t ve = bar ? (size_t)(bar - c->s) : e;
			struct iq_str val = iq_str_make(c->s + v, ve - v);
			if (!h->host.n && looks_host(val))
				h->host = val;
			else if (!h->user_agent.n && looks_agent(val))
				h->user_agent = val;
			v = ve + 1;
		}
		c->i = e + 1;
	}
}

/* The access-log body at c ("client:port [accept_date] frontend
 * backend/server timers ..."). Returns 0 with r filled (time, http), or -1
 * when c is not at one. */
static int access(struct cur *c, struct iq_record *r)
{
	struct iq_http *h = &r->u.http;
	struct iq_str client = token(c);
	if (client.n < 3 || !memchr(client.p, ':', client.n))
		return -1;
	skip_sp(c);
	size_t dl;
	int64_t acc;
	if (accept_date(c->s + c->i, c->n - c->i, &acc, &dl) != 0)
		return -1;
	struct iq_str raw = iq_str_make(c->s + c->i + 1, dl - 2);
	c->i += dl;
	struct iq_str fe = token(c), bs = token(c), tv = token(c);
	const char *slash = bs.n ? memchr(bs.p, '/', bs.n) : NULL;
	long t[5];
	int nt = timers(tv, t);
	if (!fe.n || !slash || !nt)
		return -1;
	struct iq_str backend = iq_str_make(bs.p, (size_t)(slash - bs.p));
	struct iq_str server = iq_str_make(slash + 1, bs.n - backend.n - 1);
	long total = t[nt - 1], tr = nt == 5 ? t[3] : -1;
	int http = nt == 5;
	if (http) {
		struct iq_str st = token(c);
		int64_t x = num(st);
		if (x < 0 || x > 999)
			return -1;
		h->status = (int)x;
	}
	h->bytes_sent = num(token(c));
	if (http) {
		token(c);             /* captured request cookie */
		token(c);             /* captured response cookie */
	}
	struct iq_str term = token(c);
	if (http) {
		token(c);             /* actconn/feconn/beconn/srv_conn/retries */
		token(c);             /* srv_queue/backend_queue */
		captures(c, h);
	}
	int normal = term.n >= 2;
	for (size_t i = 0; i < term.n; i++)
		normal &= term.p[i] == '-';
	r->severity = normal ? IQ_STR_NULL : term;
	h->client = host_of(client);
	h->upstream_name = backend;
	if (server.n && !iq_memmem(server.p, server.n, "<NOSRV>", 7)) {
		h->n_upstreams = 1;
		h->upstream_addr[0] = server;
		if (tr >= 0)
			h->upstream_time_s[0] = (double)tr / 1e3;
	}
	if (total >= 0)
		h->duration_s = (double)total / 1e3;
	r->ts = acc + (total > 0 ? (int64_t)total * 1000000 : 0);
	r->ts_how = iq_time_local(&r->ts);
	r->ts_raw = raw;
	if (http)
		request(c, h);
	return 0;
}

/* A syslog tag "haproxy[812]:" or "haproxy:": a program name (no '/',
 * which tells it from an access line's client "10.0.0.1:4242") and an
 * optional [pid]. */
static int is_tag(struct iq_str t)
{
	size_t i = 0;
	while (i < t.n && t.p[i] != '[' && t.p[i] != ':' && t.p[i] != '/')
		i++;
	if (i == 0 || i >= t.n || t.p[i] == '/')
		return 0;
	if (digit(t.p[0]) && memchr(t.p, '.', i))
		return 0;   /* an IPv4 address */
	if (t.p[i] == '[') {
		size_t d = ++i;
		while (i < t.n && digit(t.p[i]))
			i++;
		if (i == d || i >= t.n || t.p[i] != ']')
			return 0;
		i++;
	}
	return i == t.n - 1 && t.p[i] == ':';
}

/* The program of a tag is_tag accepted: "haproxy" of "haproxy[812]:". */
static struct iq_str tag_name(struct iq_str t)
{
	const char *br = memchr(t.p, '[', t.n);
	return iq_str_make(t.p, br ? (size_t)(br - t.p) : t.n - 1);
}

/* What a syslog header says. */
struct sys {
	int mon, day, h, mi, s;   /* a BSD date; mon 0 for none */
	int64_t iso;
	int iso_zone;
	int dateless;             /* the tag alone, no date */
	struct iq_str raw;
	struct iq_str prog;
};

/* A syslog header at the line start: an optional "<134>" priority, then
 * "May  1 12:00:05 host " (BSD, no year) or an RFC 3339 time
 * "2024-05-01T12:00:05.123+00:00 host ", then the tag "haproxy[812]: " (any
 * program). Moves c past it and fills y (mon 0 for an ISO date, whose time
 * is in iso). -1 when absent. */
static int syslog_header(struct cur *c, struct sys *y)
{
	const char *p = c->s;
	size_t n = c->n, i = 0;
	memset(y, 0, sizeof *y);
	y->iso = IQ_TIME_NONE;
	if (n > 2 && p[0] == '<') {
		size_t k = 1;
		while (k < n && k < 5 && digit(p[k]))
			k++;
		if (k > 1 && k < n && p[k] == '>') {
			p += k + 1;
			n -= k + 1;
		}
	}
	if (n >= 16 && p[3] == ' ' && (p[4] == ' ' || digit(p[4])) && digit(p[5]) &&
	    p[6] == ' ' && p[9] == ':' && p[12] == ':' && p[15] == ' ' &&
	    (y->mon = iq_month_from_abbr(p)) != 0 && two(p + 7, &y->h) == 0 &&
	    two(p + 10, &y->mi) == 0 && two(p + 13, &y->s) == 0) {
		y->day = p[4] == ' ' ? p[5] - '0' : (p[4] - '0') * 10 + (p[5] - '0');
		if (y->day < 1 || y->day > 31 || y->h > 23 || y->mi > 59 || y->s > 60)
			return -1;
		y->raw = iq_str_make(p, 15);
		i = 16;
	} else {
		size_t used;
		int z = iq_time_parse_iso(p, n, &y->iso, &used);
		if (z >= 0 && used < n && p[used] == ' ') {
			y->iso_zone = z;
			y->raw = iq_str_make(p, used);
			i = used + 1;
		} else {
			/* the tag alone, as HAProxy's manual quotes its logs
			 * ("haproxy[674]: 127.0.0.1:33318 [15/Oct/2003...") */
			struct cur t = {p, n, 0};
			struct iq_str tag = token(&t);
			if (!is_tag(tag))
				return -1;
			y->dateless = 1;
			y->iso = IQ_TIME_NONE;
			c->i = (size_t)(p - c->s);
			token(c);
			y->prog = tag_name(tag);
			skip_sp(c);
			return 0;
		}
	}
	c->i = i + (size_t)(p - c->s);
	/* "host tag: " (rfc3164), or "tag: " alone (HAProxy's default "local"
	 * format strips the host) */
	size_t at = c->i;
	struct iq_str host = token(c), tag = token(c);
	if (host.n >= 2 && host.p[host.n - 1] == ':' && is_tag(host)) {
		tag = host;
		c->i = at;
		token(c);
	} else if (!host.n || tag.n < 2 || tag.p[tag.n - 1] != ':' || !is_tag(tag)) {
		return -1;
	}
	y->prog = tag_name(tag);
	skip_sp(c);
	return 0;
}

/* The kind of line: 1 access line, 2 syslog message line, 0 neither. */
static int parse_line(const char *s, size_t n, struct iq_record *r, struct sys *y)
{
	struct cur c = {s, n, 0};
	int hdr = syslog_header(&c, y) == 0;
	if (!hdr)
		c.i = 0;
	iq_record_init(r, IQ_KIND_HTTP);
	if (access(&c, r) == 0) {
		r->text = iq_str_make(s, n);
		return 1;
	}
	if (!hdr)
		return 0;
	iq_record_init(r, IQ_KIND_LOG);
	r->text = iq_str_make(s, n);
	return 2;
}

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	int checked = 0, acc = 0, tagged = 0;
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
			struct sys y;
			checked++;
			int k = parse_line(head + i, len, &r, &y);
			if (k == 1)
				acc++;
			else if (k == 2 && y.prog.n == 7 && memcmp(y.prog.p, "haproxy", 7) == 0)
				tagged++;
		}
		i = e + 1;
	}
	if (acc == 0 && tagged == 0)
		return 0;
	snprintf(why, whysz, "%d of %d lines are HAProxy access log lines, %d other haproxy[pid] messages",
		 acc, checked, tagged);
	if (acc && (acc + tagged) * 2 > checked)
		return 90;
	if (tagged * 2 > checked)
		return 60;       /* only HAProxy's own messages: above plain syslog */
	return acc ? 40 : 0;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct haproxy *p = st;
	iq_buf_init(&p->skip_text);
	return 0;
}

static void flush_skip(struct haproxy *p, const struct iq_parse_ctx *ctx)
{
	if (!p->skip_count)
		return;
	ctx->sink.skip(ctx->sink.u, p->skip_first, p->skip_count, p->skip_reason,
		       p->skip_text.p, p->skip_text.len);
	p->skip_count = 0;
}

static void skip(struct haproxy *p, const struct iq_parse_ctx *ctx, long lineno,
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

/* The time of a syslog header for a message line. */
static void header_time(const struct iq_parse_ctx *ctx, const struct sys *y, struct iq_record *r)
{
	r->ts_raw = y->raw;
	if (y->dateless)
		return;
	if (!y->mon) {
		r->ts = y->iso;
		r->ts_how = y->iso_zone ? IQ_TS_EXPLICIT : iq_time_local(&r->ts);
		iq_parse_year_seen(ctx, r->ts);
		return;
	}
	struct iq_yearless d = {y->mon, y->day, y->h, y->mi, y->s, 0};
	int64_t t = iq_parse_yearless(ctx, &d);
	if (t == IQ_TIME_NONE)
		return;
	r->ts = iq_time_from_local(t);
	r->ts_how = IQ_TS_YEAR_INFERRED;
}

/* The format's dates hook: an access line's accept_date and an ISO
 * header carry their year, a BSD header does not. */
static enum iq_dates dates(const char *s, size_t n, struct iq_yearless *d, int64_t *t)
{
	struct iq_record r;
	struct sys y;
	int kind = parse_line(s, n, &r, &y);
	if (kind == 1) {
		*t = r.ts;
		return IQ_DATES_YEAR;
	}
	if (kind != 2 || y.dateless)
		return IQ_DATES_NONE;
	if (!y.mon) {
		*t = y.iso;
		return IQ_DATES_YEAR;
	}
	*d = (struct iq_yearless){y.mon, y.day, y.h, y.mi, y.s, 0};
	return IQ_DATES_YEARLESS;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct haproxy *p = st;
	size_t k = 0;
	while (k < n && (s[k] == ' ' || s[k] == '\t'))
		k++;
	if (k == n) {
		skip(p, ctx, lineno, "blank", s, n);
		return 0;
	}
	struct iq_record r;
	struct sys y;
	int kind = parse_line(s, n, &r, &y);
	if (kind == 0) {
		skip(p, ctx, lineno, "malformed haproxy log line", s, n);
		return 0;
	}
	if (kind == 1)
		iq_parse_year_seen(ctx, r.ts);
	else
		header_time(ctx, &y, &r);
	flush_skip(p, ctx);
	r.line = lineno;
	return ctx->sink.record(ctx->sink.u, &r);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct haproxy *p = st;
	flush_skip(p, ctx);
	iq_buf_release(&p->skip_text);
	return 0;
}

const struct iq_format iq_format_haproxy = {
	.name = "haproxy",
	.desc = "HAProxy httplog/tcplog access log (with or without a syslog header)",
	.sniff = sniff,
	.state_size = sizeof(struct haproxy),
	.begin = begin,
	.line = line,
	.end = end,
	.dates = dates,
};
