/* traefik_json.c: Traefik's JSON access log (`accessLog.format: json`): one
 * IQ_KIND_HTTP record per object, whether one object a line or
 * pretty-printed over several; Traefik's own JSON log lines in the same
 * stream ({"level":..,"msg":..,"time":..}) are IQ_KIND_LOG records. A
 * string-aware brace tracker finds each object; only its bytes go to
 * jansson (the line itself when it fits on one).
 *
 * Decisions: the record's time is StartUTC + Duration, when the client saw
 * the response, like the other access logs (ts_raw keeps StartUTC as
 * written; without StartUTC, StartLocal, then "time"). Durations are Go
 * time.Duration integers (ns). status is DownstreamStatus (OriginStatus
 * when absent); the upstream is ServiceAddr (else ServiceURL's host) with
 * OriginStatus and OriginDuration, none without an address; upstream_name is ServiceName, else
 * RouterName; severity is the logger's "level". text is the line when the
 * object fills one, else a one-line summary. */
#include <jansson.h>
#include <string.h>

#include "jsonobjs.h"
#include "locate.h"


struct traefik {
	struct iq_jsobjs js;
	struct iq_buf text;     /* a multi-line record's summary */
};

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t i = 0;
	while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
		i++;
	static const char dj[] = "{\"log\":";
	if (n - i >= sizeof dj - 1 && memcmp(head + i, dj, sizeof dj - 1) == 0)
		return 0;   /* a docker json-file log */
	/* most early lines must look like JSON (not a CRI or syslog prefix,
	 * not a text log with one JSON line in it) */
	int jsonish = 0, lines = 0;
	for (size_t j = 0; j < n && lines < 20;) {
		while (j < n && (head[j] == ' ' || head[j] == '\t'))
			j++;
		const char *nl = memchr(head + j, '\n', n - j);
		size_t e = nl ? (size_t)(nl - head) : n;
		if (e > j && head[j] != '\r') {
			lines++;
			jsonish += head[j] && strchr("{}[]\"", head[j]) != NULL;
		}
		j = e + 1;
	}
	int opens = jsonish * 2 > lines;
	if (!opens || !iq_memmem(head, n, "\"RequestMethod\"", 15))
		return 0;
	if (!iq_memmem(head, n, "\"DownstreamStatus\"", 18) &&
	    !iq_memmem(head, n, "\"OriginStatus\"", 14) && !iq_memmem(head, n, "\"RouterName\"", 12))
		return 0;
	snprintf(why, whysz, "JSON objects with Traefik access log keys (RequestMethod, DownstreamStatus)");
	return 90;
}

static int emit_obj(void *owner, const struct iq_parse_ctx *ctx, json_t *o, long first, long last,
		    struct iq_str line);

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct traefik *p = st;
	iq_jsobjs_init(&p->js, emit_obj, p, "not a traefik access log entry");
	iq_buf_init(&p->text);
	return 0;
}

static struct iq_str jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (json_is_string(v))
		return iq_str_make(json_string_value(v), json_string_length(v));
	return IQ_STR_NULL;
}

/* A number, or NAN when k is absent or not one. */
static double jnum(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static int is_dash(struct iq_str v)
{
	return v.n == 1 && v.p[0] == '-';
}

static struct iq_str or_empty(struct iq_str v)
{
	return is_dash(v) ? IQ_STR_NULL : v;
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

/* The authority of "http://10.244.3.17:8000/x", or the string itself. */
static struct iq_str url_host(struct iq_str u)
{
	const char *ss = u.n > 3 ? iq_memmem(u.p, u.n, "://", 3) : NULL;
	if (!ss)
		return u;
	const char *b = ss + 3, *e = u.p + u.n, *q = b;
	while (q < e && *q != '/' && *q != '?')
		q++;
	return iq_str_make(b, (size_t)(q - b));
}

/* A time field: 0 with *t, *raw and *how set, -1 when absent or not one. */
static int jtime(json_t *o, const char *k, int64_t *t, struct iq_str *raw, enum iq_ts_how *how)
{
	struct iq_str s = jstr(o, k);
	size_t used;
	int z;
	if (!s.n || (z = iq_time_parse_iso(s.p, s.n, t, &used)) < 0)
		return -1;
	*raw = s;
	*how = z ? IQ_TS_EXPLICIT : iq_time_local(t);
	return 0;
}

static int add_oneline(struct iq_buf *b, struct iq_str s)
{
	for (size_t i = 0; i < s.n; i++) {
		char ch = s.p[i] == '\n' || s.p[i] == '\r' ? ' ' : s.p[i];
		if (iq_buf_addc(b, ch))
			return IQ_ERR_NOMEM;
	}
	return 0;
}

/* `"GET /path HTTP/1.1" 502 11 router service` for an object over lines. */
static int summary(struct iq_buf *b, const struct iq_http *h)
{
	int rc = 0;
	iq_buf_reset(b);
	rc |= iq_buf_addc(b, '"') | add_oneline(b, h->method) | iq_buf_addc(b, ' ');
	rc |= add_oneline(b, h->path) | iq_buf_addc(b, ' ') | add_oneline(b, h->proto);
	rc |= iq_buf_printf(b, "\" %d ", h->status);
	rc |= h->bytes_sent >= 0 ? iq_buf_printf(b, "%lld", (long long)h->bytes_sent)
				 : iq_buf_addc(b, '-');
	if (h->upstream_name.n)
		rc |= iq_buf_addc(b, ' ') | add_oneline(b, h->upstream_name);
	if (h->n_upstreams && h->upstream_addr[0].n)
		rc |= iq_buf_addc(b, ' ') | add_oneline(b, h->upstream_addr[0]);
	return rc ? IQ_ERR_NOMEM : 0;
}

/* One object into a record. line is the object's text when it fills one
 * line, else empty. Returns 1 when o is neither an access log entry nor a
 * log message, else 0 or the sink's error. */
static int emit(struct traefik *p, const struct iq_parse_ctx *ctx, json_t *o, long first,
		long lastl, struct iq_str line)
{
	struct iq_record r;
	int64_t t;
	struct iq_str raw;
	enum iq_ts_how how;
	struct iq_str method = jstr(o, "RequestMethod");
	json_t *ds = json_object_get(o, "DownstreamStatus");
	if (!method.n && !json_is_number(ds)) {
		struct iq_str msg = jstr(o, "msg");
		if (!msg.n && !json_object_get(o, "msg"))
			return 1;
		iq_record_init(&r, IQ_KIND_LOG);
		r.severity = jstr(o, "level");
		if (jtime(o, "time", &t, &raw, &how) == 0) {
			r.ts = t;
			r.ts_raw = raw;
			r.ts_how = how;
		}
		if (line.n) {
			r.text = line;
		} else {
			iq_buf_reset(&p->text);
			if (add_oneline(&p->text, msg))
				return IQ_ERR_NOMEM;
			r.text = iq_str_make(p->text.p, p->text.len);
		}
		r.line = first;
		r.nlines = lastl - first + 1;
		return ctx->sink.record(ctx->sink.u, &r);
	}
	iq_record_init(&r, IQ_KIND_HTTP);
	struct iq_http *h = &r.u.http;
	h->client = or_empty(jstr(o, "ClientHost"));
	if (!h->client.n)
		h->client = host_of(or_empty(jstr(o, "ClientAddr")));
	h->method = method;
	h->path = jstr(o, "RequestPath");
	h->proto = jstr(o, "RequestProtocol");
	h->host = or_empty(jstr(o, "RequestHost"));
	if (!h->host.n)
		h->host = or_empty(jstr(o, "RequestAddr"));
	h->user_agent = jstr(o, "request_User-Agent");
	h->request_id = jstr(o, "request_X-Request-Id");
	double st = jnum(o, "DownstreamStatus"), ost = jnum(o, "OriginStatus");
	if (isnan(st))
		st = ost;
	h->status = st >= 100 && st <= 999 ? (int)st : 0;
	double size = jnum(o, "DownstreamContentSize");
	h->bytes_sent = size >= 0 && size < 9e18 ? (int64_t)size : -1;
	double dur = jnum(o, "Duration"), odur = jnum(o, "OriginDuration");
	if (dur >= 0)
		h->duration_s = dur / 1e9;
	struct iq_str up = or_empty(jstr(o, "ServiceAddr"));
	json_t *surl = json_object_get(o, "ServiceURL");
	if (!up.n && json_is_string(surl))
		up = url_host(jstr(o, "ServiceURL"));
	if (!up.n && json_is_object(surl))
		up = jstr(surl, "Host");
	/* an internal service (ping@internal, api@internal) has no address:
	 * no upstream then, whatever OriginStatus says */
	if (up.n) {
		h->n_upstreams = 1;
		h->upstream_addr[0] = up;
		h->upstream_status[0] = ost >= 100 && ost <= 999 ? (int)ost : 0;
		if (odur >= 0)
			h->upstream_time_s[0] = odur / 1e9;
	}
	h->upstream_name = jstr(o, "ServiceName");
	if (!h->upstream_name.n)
		h->upstream_name = jstr(o, "RouterName");
	r.severity = jstr(o, "level");
	if (jtime(o, "StartUTC", &t, &raw, &how) == 0 ||
	    jtime(o, "StartLocal", &t, &raw, &how) == 0) {
		r.ts = t + (dur > 0 && dur < 1e15 ? (int64_t)dur : 0);
		r.ts_raw = raw;
		r.ts_how = how;
	} else if (jtime(o, "time", &t, &raw, &how) == 0) {
		r.ts = t;              /* written when the request ended */
		r.ts_raw = raw;
		r.ts_how = how;
	}
	if (line.n) {
		r.text = line;
	} else {
		if (summary(&p->text, h))
			return IQ_ERR_NOMEM;
		r.text = iq_str_make(p->text.p, p->text.len);
		const struct iq_jpath rp[] = {{"RequestPath", 0}}, dp[] = {{"request_path", 0}};
		r.nquotes = iq_quote_member(&r.quote[0], "request", p->js.raw, first, rp, 1) ||
			    iq_quote_member(&r.quote[0], "request", p->js.raw, first, dp, 1);
	}
	r.line = first;
	r.nlines = lastl - first + 1;
	return ctx->sink.record(ctx->sink.u, &r);
}

static int emit_obj(void *owner, const struct iq_parse_ctx *ctx, json_t *o, long first, long last,
		    struct iq_str line)
{
	return emit(owner, ctx, o, first, last, line);
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct traefik *p = st;
	return iq_jsobjs_line(&p->js, ctx, lineno, s, n);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct traefik *p = st;
	iq_jsobjs_end(&p->js, ctx);
	iq_buf_release(&p->text);
	return 0;
}

const struct iq_format iq_format_traefik_json = {
	.name = "traefik-json",
	.desc = "Traefik JSON access log (one object a line or pretty-printed)",
	.sniff = sniff,
	.state_size = sizeof(struct traefik),
	.begin = begin,
	.line = line,
	.end = end,
};
