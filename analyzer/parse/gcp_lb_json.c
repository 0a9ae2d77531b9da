/* gcp_lb_json.c: Google Cloud Logging entries of HTTP requests: the
 * external HTTP(S)/Application Load Balancer's request log and Cloud Run's
 * (httpRequest, timestamp, jsonPayload.statusDetails, resource.labels), one
 * IQ_KIND_HTTP record per entry; entries without httpRequest that carry a
 * textPayload or jsonPayload.message (a container's output) are IQ_KIND_LOG
 * records. Entries come one a line (a log export), as a pretty-printed
 * array (`gcloud logging read --format=json`) or as one pretty-printed
 * object; a string-aware brace tracker finds each entry and only its bytes
 * go to jansson (the line itself when it fits on one).
 *
 * Decisions: `timestamp` is when the request arrived (Cloud Run's
 * receiveTimestamp trails it by the latency); the record's time is
 * timestamp + latency, when the client saw the response, like the other
 * access logs, with ts_raw the timestamp as written. parse.h has no field
 * for who produced the status, so jsonPayload.statusDetails
 * ("failed_to_connect_to_backend", ...) goes into severity, else the
 * entry's own severity. requestUrl gives host and path (with query).
 * serverIp is the one upstream (the backend the LB sent to; not for
 * cloud_run_revision, where it is Google's front end), with the status
 * when statusDetails is "response_sent_by_backend"; upstream_name is the
 * backend_service_name label (Cloud Run: service_name); request_id the
 * entry's trace. text is the line when the entry fills one, else a
 * one-line summary. */
#include <jansson.h>
#include <string.h>

#include "jsonobjs.h"
#include "locate.h"


struct gcp {
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
	if (!opens)
		return 0;
	if (iq_memmem(head, n, "\"httpRequest\"", 13) &&
	    (iq_memmem(head, n, "\"requestUrl\"", 12) || iq_memmem(head, n, "\"requestMethod\"", 15))) {
		snprintf(why, whysz, "Cloud Logging entries with httpRequest (requestUrl/requestMethod)");
		return 90;
	}
	if (iq_memmem(head, n, "\"logName\"", 9) && iq_memmem(head, n, "\"resource\"", 10) &&
	    iq_memmem(head, n, "\"timestamp\"", 11) && !iq_memmem(head, n, "\"involvedObject\"", 16)) {
		snprintf(why, whysz, "Cloud Logging entries (logName, resource, timestamp)");
		return 60;
	}
	return 0;
}

static int emit_obj(void *owner, const struct iq_parse_ctx *ctx, json_t *o, long first, long last,
		    struct iq_str line);

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct gcp *p = st;
	iq_jsobjs_init(&p->js, emit_obj, p, "not a request log entry");
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

static int str_eq(struct iq_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* A protobuf int64: a decimal string ("314") or a number; -1 otherwise. */
static int64_t jint64(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (json_is_integer(v))
		return json_integer_value(v) >= 0 ? (int64_t)json_integer_value(v) : -1;
	struct iq_str s = jstr(o, k);
	if (s.n == 0 || s.n > 18)
		return -1;
	int64_t x = 0;
	for (size_t i = 0; i < s.n; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return -1;
		x = x * 10 + (s.p[i] - '0');
	}
	return x;
}

/* A protobuf Duration "0.004211s" in seconds; NAN when it is not one. */
static double duration(struct iq_str v)
{
	static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
				       1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
	if (v.n < 2 || v.p[v.n - 1] != 's')
		return NAN;
	int64_t m = 0;
	int digits = 0, frac = 0, dot = 0;
	for (size_t i = 0; i + 1 < v.n; i++) {
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

/* "https://host/path?q" into host and path ("/" when the URL has none). */
static void url(struct iq_str u, struct iq_http *h)
{
	const char *ss = u.n > 3 ? iq_memmem(u.p, u.n, "://", 3) : NULL;
	if (!ss) {
		h->path = u;
		return;
	}
	const char *b = ss + 3, *e = u.p + u.n, *q = b;
	while (q < e && *q != '/' && *q != '?')
		q++;
	h->host = iq_str_make(b, (size_t)(q - b));
	h->path = q < e ? iq_str_make(q, (size_t)(e - q)) : IQ_STR_LIT("/");
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

/* "POST https://host/path 502 failed_to_connect_to_backend" for an entry
 * over several lines. */
static int summary(struct iq_buf *b, const struct iq_http *h, struct iq_str u,
		   struct iq_str details)
{
	int rc = 0;
	iq_buf_reset(b);
	rc |= add_oneline(b, h->method) | iq_buf_addc(b, ' ') | add_oneline(b, u);
	rc |= iq_buf_printf(b, " %d", h->status);
	if (details.n)
		rc |= iq_buf_addc(b, ' ') | add_oneline(b, details);
	return rc ? IQ_ERR_NOMEM : 0;
}

/* One LogEntry into a record. line is the entry's text when it fills one
 * line, else empty. Returns 1 when o is neither a request entry nor a
 * container's output, else 0 or the sink's error. */
static int emit(struct gcp *p, const struct iq_parse_ctx *ctx, json_t *o, long first,
		long lastl, struct iq_str line)
{
	struct iq_record r;
	json_t *hr = json_object_get(o, "httpRequest");
	json_t *payload = json_object_get(o, "jsonPayload");
	json_t *res = json_object_get(o, "resource");
	json_t *labels = json_object_get(res, "labels");
	struct iq_str ts = jstr(o, "timestamp");
	int64_t t = IQ_TIME_NONE;
	size_t used;
	int zone = ts.n ? iq_time_parse_iso(ts.p, ts.n, &t, &used) : -1;
	if (!json_is_object(hr)) {
		struct iq_str msg = jstr(o, "textPayload");
		if (!msg.n)
			msg = jstr(payload, "message");
		if (!msg.n)
			return 1;
		iq_record_init(&r, IQ_KIND_LOG);
		if (zone >= 0) {
			r.ts = t;
			r.ts_raw = ts;
			r.ts_how = zone ? IQ_TS_EXPLICIT : iq_time_local(&r.ts);
		}
		r.severity = jstr(o, "severity");
		if (line.n) {
			r.text = line;
		} else {
			iq_buf_reset(&p->text);
			if (add_oneline(&p->text, msg))
				return IQ_ERR_NOMEM;
			r.text = iq_str_make(p->text.p, p->text.len);
			const struct iq_jpath tp[] = {{"textPayload", 0}}, jp[] = {{"jsonPayload", 0}, {"message", 0}};
			r.nquotes = iq_quote_member(&r.quote[0], "message", p->js.raw, first, tp, 1) ||
				    iq_quote_member(&r.quote[0], "message", p->js.raw, first, jp, 2);
		}
		r.line = first;
		r.nlines = lastl - first + 1;
		return ctx->sink.record(ctx->sink.u, &r);
	}
	iq_record_init(&r, IQ_KIND_HTTP);
	struct iq_http *h = &r.u.http;
	struct iq_str u = jstr(hr, "requestUrl");
	url(u, h);
	h->method = jstr(hr, "requestMethod");
	h->proto = jstr(hr, "protocol");
	h->user_agent = jstr(hr, "userAgent");
	h->client = jstr(hr, "remoteIp");
	h->request_id = jstr(o, "trace");
	json_t *st = json_object_get(hr, "status");
	if (json_is_integer(st) && json_integer_value(st) >= 100 && json_integer_value(st) <= 999)
		h->status = (int)json_integer_value(st);
	h->bytes_sent = jint64(hr, "responseSize");
	h->duration_s = duration(jstr(hr, "latency"));
	struct iq_str details = jstr(payload, "statusDetails");
	r.severity = details.n ? details : jstr(o, "severity");
	h->upstream_name = jstr(labels, "backend_service_name");
	int run = str_eq(jstr(res, "type"), "cloud_run_revision");
	if (!h->upstream_name.n && run)
		h->upstream_name = jstr(labels, "service_name");
	struct iq_str server = jstr(hr, "serverIp");
	if (server.n && !run) {
		h->n_upstreams = 1;
		h->upstream_addr[0] = server;
		if (str_eq(details, "response_sent_by_backend"))
			h->upstream_status[0] = h->status;
	}
	if (zone >= 0) {
		double lat = h->duration_s;
		r.ts = t + (lat > 0 && lat < 1e6 ? (int64_t)(lat * 1e9 + 0.5) : 0);
		r.ts_raw = ts;
		r.ts_how = zone ? IQ_TS_EXPLICIT : iq_time_local(&r.ts);
	}
	if (line.n) {
		r.text = line;
	} else {
		if (summary(&p->text, h, u, details))
			return IQ_ERR_NOMEM;
		r.text = iq_str_make(p->text.p, p->text.len);
		const struct iq_jpath up[] = {{"httpRequest", 0}, {"requestUrl", 0}};
		r.nquotes = iq_quote_member(&r.quote[0], "request", p->js.raw, first, up, 2);
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
	struct gcp *p = st;
	return iq_jsobjs_line(&p->js, ctx, lineno, s, n);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct gcp *p = st;
	iq_jsobjs_end(&p->js, ctx);
	iq_buf_release(&p->text);
	return 0;
}

const struct iq_format iq_format_gcp_lb_json = {
	.name = "gcp-lb-json",
	.desc = "Google Cloud Logging request entries (HTTP(S) load balancer, Cloud Run)",
	.sniff = sniff,
	.state_size = sizeof(struct gcp),
	.begin = begin,
	.line = line,
	.end = end,
};
