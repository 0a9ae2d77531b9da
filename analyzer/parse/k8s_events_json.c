/* k8s_events_json.c: `kubectl get events -o json` (a List or EventList of
 * core/v1 or events.k8s.io/v1 Events), a bare array of Events, one Event,
 * one Event per line, or watch events ({"type":"ADDED","object":{Event}},
 * one per line: the API's watch stream, `kubectl get events -w -o json
 * --output-watch-events`). A string-aware depth tracker finds each event
 * object in the stream; only that object's bytes are given to jansson. */
#include <ctype.h>
#include <jansson.h>
#include <string.h>

#include "locate.h"
#include "parse.h"

#define MAX_ITEM_BYTES (16u << 20)
#define MAX_ITEM_DEPTH 128    /* below an item's own braces */

struct events {
	/* the tracker */
	long depth;             /* open braces/brackets */
	long items_depth;       /* depth at which a '{' opens an item; -1 none */
	int in_str, esc;
	int key_len;            /* of the current string at depth 1, capped */
	char key[8];
	int key_items;          /* last string at depth 1 was "items" */
	int want_items;         /* ... and a ':' followed it */
	int ndjson;             /* a top-level object opened and closed on one line */
	/* the item being read */
	int open;
	long base;              /* items_depth when it opened */
	long line;              /* where its '{' is */
	size_t col;             /* column of that '{' */
	int too_big, too_deep, broken;
	struct iq_buf buf;
	/* accounting: lines before acct are in a record or skipped */
	long acct;
	long last;              /* last line seen */
	struct iq_buf text;     /* the record's summary */
};

/* "kind": "<value>" occurrences in head, with any spacing. Returns 1 when
 * one of them has the value v. */
static int has_kind(const char *head, size_t n, const char *v)
{
	size_t vn = strlen(v);
	const char *p = head, *e = head + n;
	while ((p = iq_memmem(p, (size_t)(e - p), "\"kind\"", 6)) != NULL) {
		p += 6;
		const char *q = p;
		while (q < e && isspace((unsigned char)*q))
			q++;
		if (q >= e || *q != ':')
			continue;
		q++;
		while (q < e && isspace((unsigned char)*q))
			q++;
		if ((size_t)(e - q) > vn + 1 && q[0] == '"' && memcmp(q + 1, v, vn) == 0 &&
		    q[vn + 1] == '"')
			return 1;
	}
	return 0;
}

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t i = 0;
	while (i < n && isspace((unsigned char)head[i]))
		i++;
	if (i >= n || (head[i] != '{' && head[i] != '['))
		return 0;
	static const char dj[] = "{\"log\":";
	if (n - i >= sizeof dj - 1 && memcmp(head + i, dj, sizeof dj - 1) == 0)
		return 0;   /* a docker json-file log */
	int obj = iq_memmem(head, n, "\"involvedObject\"", 16) != NULL ||
		  iq_memmem(head, n, "\"regarding\"", 11) != NULL;
	int reason = iq_memmem(head, n, "\"reason\"", 8) != NULL;
	int ev = has_kind(head, n, "Event");
	int list = has_kind(head, n, "List") || has_kind(head, n, "EventList");
	if (obj && reason && (ev || list)) {
		snprintf(why, whysz, "JSON %s with event keys (involvedObject/regarding, reason)",
			 list ? "List" : "Event");
		return 95;
	}
	if (obj && reason) {
		/* events.k8s.io items without kind, e.g. jq -c '.items[]' */
		snprintf(why, whysz, "JSON objects with event keys (involvedObject/regarding, reason)");
		return 80;
	}
	if (ev) {
		snprintf(why, whysz, "JSON with \"kind\": \"Event\"");
		return 70;
	}
	return 0;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct events *p = st;
	iq_buf_init(&p->buf);
	iq_buf_init(&p->text);
	p->acct = 1;
	return 0;
}

/* Accounts for the lines before l that no item claimed. */
static void envelope_until(struct events *p, const struct iq_parse_ctx *ctx, long l)
{
	if (p->acct < l)
		ctx->sink.skip(ctx->sink.u, p->acct, l - p->acct, "json envelope", NULL, 0);
	if (p->acct < l)
		p->acct = l;
}

/* Accounts for lines first..lastl as skipped with reason. */
static void skip_lines(struct events *p, const struct iq_parse_ctx *ctx, long first,
		       long lastl, const char *reason)
{
	envelope_until(p, ctx, first);
	if (p->acct <= lastl) {
		ctx->sink.skip(ctx->sink.u, p->acct, lastl - p->acct + 1, reason, NULL, 0);
		p->acct = lastl + 1;
	}
}

static struct iq_str jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (json_is_string(v))
		return iq_str_make(json_string_value(v), json_string_length(v));
	return IQ_STR_NULL;
}

static struct iq_str jstr2(json_t *o, const char *k1, const char *k2)
{
	struct iq_str s = jstr(o, k1);
	return s.n ? s : jstr(o, k2);
}

static long jcount(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) && json_integer_value(v) > 0 &&
		json_integer_value(v) <= 0x7fffffff ? (long)json_integer_value(v) : 0;
}

static int str_eq(struct iq_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* A timestamp field: its UTC time (IQ_TIME_NONE when absent or not one). */
static int64_t jtime(json_t *o, const char *k, struct iq_str *raw, int *zone)
{
	struct iq_str s = jstr(o, k);
	int64_t t;
	size_t used;
	int z;
	if (!s.n || (z = iq_time_parse_iso(s.p, s.n, &t, &used)) < 0)
		return IQ_TIME_NONE;
	if (raw)
		*raw = s;
	if (zone)
		*zone = z;
	return t;
}

/* The container named by a fieldPath such as "spec.containers{vllm}". */
static struct iq_str field_container(struct iq_str fp)
{
	static const char *pre[] = {"spec.containers{", "spec.initContainers{",
				    "spec.ephemeralContainers{"};
	for (size_t i = 0; i < IQ_ARRAY_LEN(pre); i++) {
		size_t pn = strlen(pre[i]);
		if (fp.n > pn + 1 && memcmp(fp.p, pre[i], pn) == 0 && fp.p[fp.n - 1] == '}')
			return iq_str_make(fp.p + pn, fp.n - pn - 1);
	}
	return IQ_STR_NULL;
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

/* "Warning BackOff pod/vllm-0: Back-off restarting ..." */
static int summary(struct iq_buf *b, const struct iq_event *e)
{
	iq_buf_reset(b);
	int rc = 0;
	if (e->type.n)
		rc |= add_oneline(b, e->type) | iq_buf_addc(b, ' ');
	if (e->reason.n)
		rc |= add_oneline(b, e->reason) | iq_buf_addc(b, ' ');
	if (e->object_kind.n || e->object_name.n) {
		for (size_t i = 0; i < e->object_kind.n; i++)
			rc |= iq_buf_addc(b, (char)tolower((unsigned char)e->object_kind.p[i]));
		rc |= iq_buf_addc(b, '/') | add_oneline(b, e->object_name);
	}
	while (b->len && b->p[b->len - 1] == ' ')
		b->p[--b->len] = '\0';
	if (e->message.n)
		rc |= iq_buf_add(b, ": ", b->len ? 2 : 0) | add_oneline(b, e->message);
	return rc ? IQ_ERR_NOMEM : 0;
}

/* One Event object, core/v1 or events.k8s.io/v1 (or a watch event holding
 * one), into a record. Returns 1 when o is not an event, 2 for a watch
 * bookmark or deletion, else 0 or the sink's error. */
static int emit(struct events *p, const struct iq_parse_ctx *ctx, json_t *o, long first,
		long lastl)
{
	/* a watch event ({"type":"MODIFIED","object":{Event}}: the API's watch
	 * stream, kubectl get events -w --output-watch-events): its object */
	json_t *wobj = json_object_get(o, "object");
	struct iq_str wtype = jstr(o, "type");
	int watch = 0;
	if (json_is_object(wobj) && wtype.n && !json_object_get(o, "involvedObject") &&
	    !json_object_get(o, "regarding")) {
		/* a bookmark carries only a resourceVersion; a deleted event
		 * (its TTL ran out) was already read when it was added */
		if (str_eq(wtype, "BOOKMARK") || str_eq(wtype, "DELETED"))
			return 2;
		o = wobj;
		watch = 1;
	}
	json_t *obj = json_object_get(o, "involvedObject");
	if (!json_is_object(obj))
		obj = json_object_get(o, "regarding");
	struct iq_str kind = jstr(o, "kind");
	if (!json_is_object(obj) && !str_eq(kind, "Event"))
		return 1;
	json_t *meta = json_object_get(o, "metadata");
	json_t *series = json_object_get(o, "series");
	json_t *src = json_object_get(o, "source");
	if (!json_is_object(src))
		src = json_object_get(o, "deprecatedSource");

	struct iq_record r;
	iq_record_init(&r, IQ_KIND_EVENT);
	struct iq_event *e = &r.u.event;
	e->type = jstr(o, "type");
	e->reason = jstr(o, "reason");
	e->message = jstr2(o, "message", "note");
	e->object_kind = jstr(obj, "kind");
	e->object_name = jstr(obj, "name");
	e->object_ns = jstr(obj, "namespace");
	if (!e->object_ns.n && !str_eq(e->object_kind, "Node"))
		e->object_ns = jstr(meta, "namespace");
	e->source = jstr(src, "component");
	if (!e->source.n)
		e->source = jstr2(o, "reportingComponent", "reportingController");
	e->host = jstr(src, "host");
	/* the kubelet reports as its node */
	if (!e->host.n && str_eq(jstr2(o, "reportingComponent", "reportingController"), "kubelet"))
		e->host = jstr(o, "reportingInstance");
	long cnt = jcount(series, "count");
	if (!cnt)
		cnt = jcount(o, "count");
	if (!cnt)
		cnt = jcount(o, "deprecatedCount");
	e->count = cnt ? cnt : 1;

	/* Last seen: the latest of the times the event carries (kubectl sorts
	 * by series.lastObservedTime, lastTimestamp, eventTime); first seen:
	 * the earliest of eventTime and firstTimestamp. */
	struct { const char *k; int in_series; } cand[] = {
		{"lastTimestamp", 0}, {"deprecatedLastTimestamp", 0},
		{"lastObservedTime", 1}, {"eventTime", 0},
		{"firstTimestamp", 0}, {"deprecatedFirstTimestamp", 0},
	};
	int64_t first_ts = IQ_TIME_NONE;
	for (size_t i = 0; i < IQ_ARRAY_LEN(cand); i++) {
		struct iq_str raw;
		int z = 0;
		int64_t t = jtime(cand[i].in_series ? series : o, cand[i].k, &raw, &z);
		if (t == IQ_TIME_NONE)
			continue;
		if (r.ts == IQ_TIME_NONE || t > r.ts) {
			r.ts = t;
			r.ts_raw = raw;
			r.ts_how = z ? IQ_TS_EXPLICIT : iq_time_local(&r.ts);
		}
		if (i >= 3 && (first_ts == IQ_TIME_NONE || t < first_ts))
			first_ts = t;
	}
	if (r.ts == IQ_TIME_NONE) {
		struct iq_str raw;
		int z = 0;
		r.ts = jtime(meta, "creationTimestamp", &raw, &z);
		if (r.ts != IQ_TIME_NONE) {
			r.ts_raw = raw;
			r.ts_how = z ? IQ_TS_EXPLICIT : iq_time_local(&r.ts);
		}
	}
	e->last_ts = r.ts;
	e->first_ts = first_ts != IQ_TIME_NONE ? first_ts : r.ts;
	{
		struct iq_str raw;
		int z = 0;
		e->created_ts = jtime(meta, "creationTimestamp", &raw, &z);
		if (e->created_ts != IQ_TIME_NONE && !z)
			e->created_ts = IQ_TIME_NONE;  /* a zone-less copy says nothing of clocks */
	}

	r.severity = e->type;
	r.id.ns = e->object_ns;
	r.id.node = e->host;
	if (str_eq(e->object_kind, "Pod")) {
		r.id.pod = e->object_name;
		r.id.pod_uid = jstr(obj, "uid");
		r.id.container = field_container(jstr(obj, "fieldPath"));
	} else if (str_eq(e->object_kind, "Node") && !r.id.node.n) {
		r.id.node = e->object_name;
	}
	if (summary(&p->text, e))
		return IQ_ERR_NOMEM;
	r.text = iq_str_make(p->text.p, p->text.len);
	/* the text is a restatement: evidence quotes the object's own lines */
	static const char *const qk[][2] = {{"message", "message"}, {"note", "message"}, {"reason", "reason"}};
	for (size_t k = 0; k < IQ_ARRAY_LEN(qk) && r.nquotes < IQ_MAX_QUOTES; k++) {
		/* in a watch event, the members of its object */
		struct iq_jpath path[2] = {{"object", 0}, {qk[k][0], 0}};
		size_t b, en;
		if (r.nquotes && strcmp(r.quote[r.nquotes - 1].what, qk[k][1]) == 0)
			continue;
		if (iq_json_locate(p->buf.p, p->buf.len, path + !watch, 1 + (size_t)watch, &b, &en) == 0)
			iq_quote_make(&r.quote[r.nquotes++], qk[k][1], p->buf.p, p->buf.len, first, b, en);
	}

	envelope_until(p, ctx, first);
	r.line = first;
	r.nlines = lastl - first + 1;
	if (p->acct <= lastl)
		p->acct = lastl + 1;
	return ctx->sink.record(ctx->sink.u, &r);
}

/* The item that opened at p->line closed on line lastl: parse and emit it,
 * or account for its lines with the reason it was dropped. */
static int finish_item(struct events *p, const struct iq_parse_ctx *ctx, long lastl)
{
	int rc = 0;
	p->open = 0;
	if (p->too_big) {
		skip_lines(p, ctx, p->line, lastl, "event json too large");
	} else if (p->too_deep || p->broken) {
		skip_lines(p, ctx, p->line, lastl, "malformed event json");
	} else {
		json_error_t err;
		json_t *o = json_loadb(p->buf.p, p->buf.len, 0, &err);
		if (!json_is_object(o)) {
			skip_lines(p, ctx, p->line, lastl, "malformed event json");
		} else {
			rc = emit(p, ctx, o, p->line, lastl);
			if (rc == 2) {
				rc = 0;
				skip_lines(p, ctx, p->line, lastl, "watch bookmark or deletion");
			} else if (rc == 1) {
				rc = 0;
				/* a List whose items were not an array, or another object */
				skip_lines(p, ctx, p->line, lastl,
					   json_object_get(o, "items") ? "json envelope" : "not an event");
			}
		}
		json_decref(o);
	}
	iq_buf_reset(&p->buf);
	if (p->buf.cap > (1u << 20))
		iq_buf_release(&p->buf);
	return rc;
}

/* Drops the open item as malformed (one-per-line input resumes with a new
 * object) and resets the tracker to where the item began. */
static void abort_item(struct events *p, const struct iq_parse_ctx *ctx, long lastl)
{
	p->broken = 1;
	finish_item(p, ctx, lastl);
	p->depth = p->base;
	p->in_str = p->esc = 0;
	p->want_items = p->key_items = 0;
}

static int add_seg(struct events *p, const char *s, size_t n)
{
	if (p->too_big || p->too_deep || p->broken)
		return 0;
	if (p->buf.len + n + 1 > MAX_ITEM_BYTES) {
		p->too_big = 1;
		iq_buf_release(&p->buf);
		return 0;
	}
	return iq_buf_add(&p->buf, s, n);
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct events *p = st;
	int rc;
	p->last = lineno;
	/* one event per line resumes after a broken one */
	if (p->ndjson && p->open && p->base == 0 && n && s[0] == '{' && p->col == 0)
		abort_item(p, ctx, lineno - 1);
	size_t seg = 0;   /* where the open item's bytes on this line start */
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (p->in_str) {
			if (p->esc) {
				p->esc = 0;
			} else if (ch == '\\') {
				p->esc = 1;
			} else if (ch == '"') {
				p->in_str = 0;
				p->key_items = p->key_len == 5 && memcmp(p->key, "items", 5) == 0;
			} else if (p->depth == 1 && p->key_len < (int)sizeof p->key) {
				p->key[p->key_len++] = ch;
			}
			continue;
		}
		switch (ch) {
		case '"':
			p->in_str = 1;
			p->key_len = 0;
			p->want_items = 0;
			break;
		case ':':
			if (p->depth == 1)
				p->want_items = p->key_items;
			p->key_items = 0;
			break;
		case '{':
		case '[':
			if (ch == '[' && p->depth == 1 && p->want_items && p->open && p->base == 0) {
				/* the top-level object is a List: its items are the records */
				p->open = 0;
				iq_buf_reset(&p->buf);
				p->items_depth = 2;
			} else if (ch == '[' && p->depth == 0 && !p->open && p->items_depth == 0) {
				p->items_depth = 1;          /* a bare array of events */
			} else if (ch == '{' && !p->open && p->depth == p->items_depth) {
				p->open = 1;
				p->base = p->depth;
				p->line = lineno;
				p->col = i;
				p->too_big = p->too_deep = p->broken = 0;
				iq_buf_reset(&p->buf);
				seg = i;
			}
			p->want_items = p->key_items = 0;
			p->depth++;
			if (p->open && p->depth - p->base > MAX_ITEM_DEPTH && !p->too_deep) {
				p->too_deep = 1;
				iq_buf_release(&p->buf);
			}
			break;
		case '}':
		case ']':
			p->want_items = p->key_items = 0;
			if (p->depth == 0)
				break;              /* stray: ignore */
			p->depth--;
			if (p->open && p->depth == p->base) {
				if ((rc = add_seg(p, s + seg, i + 1 - seg)))
					return rc;
				if (p->base == 0)
					p->ndjson = p->line == lineno && p->col == 0;
				if ((rc = finish_item(p, ctx, lineno)))
					return rc;
			} else if (!p->open && p->items_depth > 0 && p->depth < p->items_depth) {
				p->items_depth = -1;        /* the items array closed */
			}
			if (p->depth == 0)
				p->items_depth = 0;         /* ready for the next document */
			break;
		default:
			if (ch != ' ' && ch != '\t' && ch != ',' && ch != '\r' && ch != '\n')
				p->want_items = p->key_items = 0;
			break;
		}
	}
	/* JSON strings do not span lines: the item is broken, but its braces
	 * still tell where it ends */
	if (p->in_str || p->esc) {
		p->in_str = p->esc = 0;
		if (p->open && !p->broken) {
			p->broken = 1;
			iq_buf_release(&p->buf);
		}
	}
	if (p->open) {
		if ((rc = add_seg(p, s + seg, n - seg)) || (rc = add_seg(p, "\n", 1)))
			return rc;
	}
	return 0;
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct events *p = st;
	if (p->open) {
		p->open = 0;
		skip_lines(p, ctx, p->line, p->last, "truncated event json");
	}
	envelope_until(p, ctx, p->last + 1);
	iq_buf_release(&p->buf);
	iq_buf_release(&p->text);
	return 0;
}

const struct iq_format iq_format_k8s_events_json = {
	.name = "k8s-events-json",
	.desc = "Kubernetes events as JSON (kubectl get events -o json; core/v1 and events.k8s.io/v1)",
	.sniff = sniff,
	.state_size = sizeof(struct events),
	.begin = begin,
	.line = line,
	.end = end,
};
