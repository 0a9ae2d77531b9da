/* k8s_events_table.c: Kubernetes events as kubectl prints them in tables:
 * `kubectl get events [-A] [-o wide]` (LAST SEEN TYPE REASON OBJECT
 * MESSAGE ...), the old LASTSEEN FIRSTSEEN COUNT NAME KIND ... printer, and
 * the Events block of `kubectl describe` (Type Reason Age From Message, and
 * the 2015-2017 FirstSeen LastSeen Count From SubObjectPath ... forms).
 *
 * Decisions: columns are found by the header's positions (kubectl aligns
 * with spaces); a row that does not fit them, and tab-separated tables,
 * are split on tabs or runs of two spaces. Ages are relative, so such
 * events have no time (ts_raw keeps the age); absolute first/last times
 * (2015 describe) are used. A blank line ends a table. The describe parser
 * runs this format over its Events block and names the object. */
#include <string.h>

#include "parse.h"

enum col {
	C_NS, C_LAST, C_FIRST, C_TYPE, C_REASON, C_OBJECT, C_SUBOBJ, C_SOURCE,
	C_MESSAGE, C_COUNT, C_NAME, C_KIND, C_AGE, NCOLIDS
};

#define MAX_COLS 16

struct evt {
	int have_header;
	int ncols;
	enum col id[MAX_COLS];
	size_t start[MAX_COLS];     /* byte offset of each column in the header */
	int has[NCOLIDS];
	char prefix;                /* a diff/quote mark before the table, or 0 */
	struct iq_buf text;         /* the record's summary */
};

static int is_sp(char c)
{
	return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Case-insensitive comparison of a slice with a lower-case literal. */
static int eq_ci(const char *s, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	if (l != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (lower(s[i]) != lit[i])
			return 0;
	return 1;
}

static struct iq_str trim(const char *s, size_t n)
{
	while (n && is_sp(*s)) {
		s++;
		n--;
	}
	while (n && is_sp(s[n - 1]))
		n--;
	return iq_str_make(s, n);
}

static int str_eq(struct iq_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* The column a header word names; -1 when none. */
static int col_of(const char *s, size_t n)
{
	static const struct { const char *w; enum col c; } names[] = {
		{"namespace", C_NS}, {"last seen", C_LAST}, {"lastseen", C_LAST},
		{"first seen", C_FIRST}, {"firstseen", C_FIRST}, {"type", C_TYPE},
		{"reason", C_REASON}, {"object", C_OBJECT}, {"subobject", C_SUBOBJ},
		{"subobjectpath", C_SUBOBJ}, {"source", C_SOURCE}, {"from", C_SOURCE},
		{"message", C_MESSAGE}, {"count", C_COUNT}, {"name", C_NAME},
		{"kind", C_KIND}, {"age", C_AGE},
	};
	for (size_t i = 0; i < IQ_ARRAY_LEN(names); i++)
		if (eq_ci(s, n, names[i].w))
			return (int)names[i].c;
	return -1;
}

/* Reads a header line into p (when it is one): every word a known column,
 * REASON and MESSAGE among them. A leading '+', '>' or '|' (a diff or a
 * quote around the paste) is remembered and stripped from the rows.
 * Returns 1 for a header, else 0 (p unchanged). */
static int read_header(struct evt *p, const char *s, size_t n)
{
	struct evt h;
	memset(&h, 0, sizeof h);
	size_t i = 0;
	while (i < n && is_sp(s[i]))
		i++;
	if (i < n && (s[i] == '+' || s[i] == '>' || s[i] == '|') && i + 1 < n && is_sp(s[i + 1])) {
		h.prefix = s[i];
		i++;
	}
	while (i < n) {
		while (i < n && is_sp(s[i]))
			i++;
		if (i >= n)
			break;
		size_t b = i;
		while (i < n && !is_sp(s[i]))
			i++;
		size_t e = i;
		/* "LAST SEEN" and "FIRST SEEN" are one column */
		if (i + 5 <= n && s[i] == ' ' && eq_ci(s + i + 1, 4, "seen") &&
		    (i + 5 == n || is_sp(s[i + 5])) &&
		    (eq_ci(s + b, e - b, "last") || eq_ci(s + b, e - b, "first"))) {
			e = i + 5;
			i = e;
		}
		int c = col_of(s + b, e - b);
		if (c < 0 || h.ncols >= MAX_COLS || h.has[c])
			return 0;
		h.id[h.ncols] = (enum col)c;
		h.start[h.ncols] = b;
		h.has[c] = 1;
		h.ncols++;
	}
	if (!h.has[C_REASON] || !h.has[C_MESSAGE] || h.ncols < 3)
		return 0;
	memcpy(p->id, h.id, sizeof h.id);
	memcpy(p->start, h.start, sizeof h.start);
	memcpy(p->has, h.has, sizeof h.has);
	p->ncols = h.ncols;
	p->prefix = h.prefix;
	p->have_header = 1;
	return 1;
}

/* Cells by the header's positions: every column must begin after a space
 * (or past the end of a short row). Returns 0, or -1 when the row does not
 * line up with the header. */
static int split_aligned(const struct evt *p, const char *s, size_t n, struct iq_str *cell)
{
	for (int k = 0; k < p->ncols; k++) {
		size_t b = p->start[k];
		size_t e = k + 1 < p->ncols ? p->start[k + 1] : n;
		if (b >= n) {
			cell[p->id[k]] = IQ_STR_NULL;
			continue;
		}
		if (e > n)
			e = n;
		if (k > 0 && !is_sp(s[b - 1]))
			return -1;
		/* the next column must not start inside this cell's last word */
		if (k + 1 < p->ncols && e < n && !is_sp(s[e - 1]) && !is_sp(s[e]))
			return -1;
		cell[p->id[k]] = trim(s + b, e - b);
	}
	/* the leading columns are never empty */
	if (!cell[p->id[0]].n)
		return -1;
	return 0;
}

/* Cells separated by tabs or runs of two or more spaces. The message takes
 * the rest of the line when it is the last column; an empty SUBOBJECT (the
 * usual case) may be missing. Returns 0 or -1. */
static int split_loose(const struct evt *p, const char *s, size_t n, struct iq_str *cell)
{
	struct iq_str c[MAX_COLS];
	int nc = 0;
	size_t i = 0;
	while (i < n && is_sp(s[i]))
		i++;
	int msg_last = p->id[p->ncols - 1] == C_MESSAGE;
	while (i < n) {
		if (nc == p->ncols - 1 && msg_last) {
			c[nc++] = trim(s + i, n - i);
			break;
		}
		if (nc >= MAX_COLS)
			return -1;
		size_t b = i;
		while (i < n && !(s[i] == '\t' || (s[i] == ' ' && i + 1 < n && s[i + 1] == ' ')))
			i++;
		/* 2016 rows: "Warning FailedSync" with one space between */
		const char *sp = memchr(s + b, ' ', i - b);
		if (p->has[C_TYPE] && sp && ((sp - (s + b) == 6 && memcmp(s + b, "Normal", 6) == 0) ||
					     (sp - (s + b) == 7 && memcmp(s + b, "Warning", 7) == 0)))
			i = (size_t)(sp - s);
		c[nc++] = iq_str_make(s + b, i - b);
		while (i < n && is_sp(s[i]))
			i++;
	}
	int skip_sub = -1;
	if (nc == p->ncols - 1 && p->has[C_SUBOBJ]) {
		for (int k = 0; k < p->ncols; k++)
			if (p->id[k] == C_SUBOBJ)
				skip_sub = k;
	} else if (nc != p->ncols) {
		return -1;
	}
	for (int k = 0, j = 0; k < p->ncols; k++) {
		if (k == skip_sub) {
			cell[p->id[k]] = IQ_STR_NULL;
			continue;
		}
		cell[p->id[k]] = c[j++];
	}
	return 0;
}

/* "4m25s (x157 over 38m)" or "1h (x3 from 1h)": the count; 0 when none. */
static long count_in_age(struct iq_str a)
{
	const char *x = iq_memmem(a.p, a.n, "(x", 2);
	if (!x)
		return 0;
	size_t i = (size_t)(x - a.p) + 2;
	long v = 0;
	size_t d0 = i;
	while (i < a.n && is_digit(a.p[i]) && v < 100000000)
		v = v * 10 + (a.p[i++] - '0');
	return i > d0 && i < a.n && a.p[i] == ' ' ? v : 0;
}

static long count_of(struct iq_str c)
{
	long v = 0;
	if (!c.n)
		return 0;
	for (size_t i = 0; i < c.n; i++) {
		if (!is_digit(c.p[i]) || v >= 100000000)
			return 0;
		v = v * 10 + (c.p[i] - '0');
	}
	return v;
}

/* "Tue, 07 Jul 2015 12:53:51 -0700" (RFC 1123 with a numeric zone, as
 * kubectl prints it; "UTC"/"GMT" accepted) or RFC 3339. IQ_TIME_NONE when
 * it is neither (ages, "<unknown>") or names another zone. */
static int64_t abs_time(struct iq_str t)
{
	int64_t out;
	size_t used;
	if (t.n >= 20 && is_digit(t.p[0]) && iq_time_parse_iso(t.p, t.n, &out, &used) == 1 &&
	    used == t.n)
		return out;
	return iq_time_parse_rfc1123(t.p, t.n);
}

/* "kubelet, node-1", "{kubelet 10.0.0.1}", "{scheduler }", "kubelet". */
static void split_source(struct iq_str f, struct iq_str *comp, struct iq_str *host)
{
	if (f.n >= 2 && f.p[0] == '{' && f.p[f.n - 1] == '}')
		f = trim(f.p + 1, f.n - 2);
	size_t i = 0;
	while (i < f.n && f.p[i] != ',' && f.p[i] != ' ')
		i++;
	*comp = iq_str_make(f.p, i);
	*host = i < f.n ? trim(f.p + i + 1, f.n - i - 1) : IQ_STR_NULL;
}

/* The API kind of kubectl's lower-case resource name ("pod" -> "Pod"). */
static struct iq_str kind_name(struct iq_str k)
{
	static const char *const kinds[] = {
		"Pod", "Node", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job",
		"CronJob", "Service", "Endpoints", "Namespace", "PersistentVolumeClaim",
		"PersistentVolume", "HorizontalPodAutoscaler", "ReplicationController",
		"ConfigMap", "Secret", "Ingress", "PodDisruptionBudget", "Lease",
	};
	for (size_t i = 0; i < IQ_ARRAY_LEN(kinds); i++) {
		if (k.n != strlen(kinds[i]))
			continue;
		size_t j = 0;
		while (j < k.n && lower(k.p[j]) == lower(kinds[i][j]))
			j++;
		if (j == k.n)
			return iq_str_make(kinds[i], k.n);
	}
	return k;
}

/* "spec.containers{vllm}" -> "vllm". */
static struct iq_str field_container(struct iq_str fp)
{
	if (fp.n < 3 || fp.p[fp.n - 1] != '}')
		return IQ_STR_NULL;
	const char *b = memchr(fp.p, '{', fp.n);
	if (!b)
		return IQ_STR_NULL;
	size_t o = (size_t)(b - fp.p) + 1;
	return iq_str_make(fp.p + o, fp.n - 1 - o);
}

static int add_oneline(struct iq_buf *b, struct iq_str s)
{
	for (size_t i = 0; i < s.n; i++)
		if (iq_buf_addc(b, s.p[i] == '\n' || s.p[i] == '\r' ? ' ' : s.p[i]))
			return IQ_ERR_NOMEM;
	return 0;
}

/* "Warning BackOff pod/vllm-0: Back-off ...", the same summary as
 * k8s-events-json writes. */
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
			rc |= iq_buf_addc(b, lower(e->object_kind.p[i]));
		rc |= iq_buf_addc(b, '/') | add_oneline(b, e->object_name);
	}
	while (b->len && b->p[b->len - 1] == ' ')
		b->p[--b->len] = '\0';
	if (e->message.n)
		rc |= iq_buf_add(b, ": ", b->len ? 2 : 0) | add_oneline(b, e->message);
	return rc ? IQ_ERR_NOMEM : 0;
}

/* One row's cells into an event record. Returns 1 when the cells are not
 * an event (no reason), else 0 or the sink's error. */
static int emit(struct evt *p, const struct iq_parse_ctx *ctx, long lineno, struct iq_str *cell)
{
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_EVENT);
	struct iq_event *e = &r.u.event;
	e->type = cell[C_TYPE];
	e->reason = cell[C_REASON];
	e->message = cell[C_MESSAGE];
	if (!e->reason.n || memchr(e->reason.p, ' ', e->reason.n) ||
	    (e->type.n && memchr(e->type.p, ' ', e->type.n)))
		return 1;
	e->object_ns = str_eq(cell[C_NS], "<none>") ? IQ_STR_NULL : cell[C_NS];
	struct iq_str obj = cell[C_OBJECT];
	const char *sl = obj.n ? memchr(obj.p, '/', obj.n) : NULL;
	if (sl) {
		e->object_kind = kind_name(iq_str_make(obj.p, (size_t)(sl - obj.p)));
		e->object_name = iq_str_make(sl + 1, obj.n - (size_t)(sl - obj.p) - 1);
	} else if (obj.n) {
		e->object_name = obj;
	} else if (p->has[C_KIND]) {
		/* the old printer: NAME is the object's, KIND beside it */
		e->object_kind = cell[C_KIND];
		e->object_name = cell[C_NAME];
	}
	split_source(cell[C_SOURCE], &e->source, &e->host);
	long cnt = count_of(cell[C_COUNT]);
	if (!cnt)
		cnt = count_in_age(cell[C_AGE]);
	if (!cnt)
		cnt = count_in_age(cell[C_LAST]);
	e->count = cnt ? cnt : 1;
	struct iq_str last = cell[C_LAST].n ? cell[C_LAST] : cell[C_AGE];
	r.ts = e->last_ts = abs_time(last);
	e->first_ts = abs_time(cell[C_FIRST]);
	if (e->first_ts == IQ_TIME_NONE)
		e->first_ts = e->last_ts;
	r.ts_how = r.ts == IQ_TIME_NONE ? IQ_TS_NONE : IQ_TS_EXPLICIT;
	r.ts_raw = last;
	r.severity = e->type;
	r.id.ns = e->object_ns;
	r.id.node = e->host;
	if (str_eq(e->object_kind, "Pod")) {
		r.id.pod = e->object_name;
		r.id.container = field_container(cell[C_SUBOBJ]);
	} else if (str_eq(e->object_kind, "Node") && !r.id.node.n) {
		r.id.node = e->object_name;
	} else if (!e->object_kind.n) {
		r.id.container = field_container(cell[C_SUBOBJ]);
	}
	if (summary(&p->text, e))
		return IQ_ERR_NOMEM;
	r.text = iq_str_make(p->text.p, p->text.len);
	r.line = lineno;
	/* the text is a restatement: the quote is the row as written, from
	 * its first cell to its last (all slices of the line) */
	const char *qb = NULL, *qe = NULL;
	for (int i = 0; i < NCOLIDS; i++) {
		if (!cell[i].n)
			continue;
		if (!qb || cell[i].p < qb)
			qb = cell[i].p;
		if (!qe || cell[i].p + cell[i].n > qe)
			qe = cell[i].p + cell[i].n;
	}
	if (qb)
		r.quote[r.nquotes++] = (struct iq_quote){lineno, iq_str_make(qb, (size_t)(qe - qb)), "message"};
	return ctx->sink.record(ctx->sink.u, &r);
}

/* A line of dashes under the header ("----  ------  ----"). */
static int is_rule(const char *s, size_t n)
{
	int dash = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '-')
			dash = 1;
		else if (!is_sp(s[i]) && !(s[i] == '+' || s[i] == '>' || s[i] == '|'))
			return 0;
	}
	return dash;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct evt *p = st;
	struct iq_str t = trim(s, n);
	if (!t.n) {
		p->have_header = 0;   /* a blank line ends the table */
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	if (read_header(p, s, n)) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "header", s, n);
		return 0;
	}
	struct iq_str u = t;
	if (u.n && (u.p[0] == '+' || u.p[0] == '>' || u.p[0] == '|'))
		u = trim(u.p + 1, u.n - 1);
	if (u.n >= 7 && eq_ci(u.p, 7, "events:")) {
		/* the Events block of a describe: "Events:  <none>" when empty */
		p->have_header = 0;
		ctx->sink.skip(ctx->sink.u, lineno, 1,
			       trim(u.p + 7, u.n - 7).n ? "no events" : "header", s, n);
		return 0;
	}
	if (p->have_header && is_rule(s, n)) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "header", s, n);
		return 0;
	}
	if (!p->have_header) {
		ctx->sink.skip(ctx->sink.u, lineno, 1,
			       iq_memmem(s, n, "No resources found", 18) ? "no events" : "not in a table",
			       s, n);
		return 0;
	}
	/* strip the diff/quote mark the header had */
	const char *row = s;
	size_t rn = n;
	struct iq_str cell[NCOLIDS];
	for (int k = 0; k < NCOLIDS; k++)
		cell[k] = IQ_STR_NULL;
	int ok = split_aligned(p, row, rn, cell);
	if (ok < 0) {
		size_t i = 0;
		while (i < rn && is_sp(row[i]))
			i++;
		if (p->prefix && i < rn && row[i] == p->prefix) {
			row += i + 1;
			rn -= i + 1;
		}
		for (int k = 0; k < NCOLIDS; k++)
			cell[k] = IQ_STR_NULL;
		ok = split_loose(p, row, rn, cell);
	}
	int rc = ok < 0 ? 1 : emit(p, ctx, lineno, cell);
	if (rc == 1) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "malformed event row", s, n);
		return 0;
	}
	return rc;
}

/* Scores: a table header among the first lines, with a row under it. */
static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	struct evt h;
	memset(&h, 0, sizeof h);
	size_t pos = 0;
	int lines = 0, header_at = -1, rows = 0;
	while (pos < n && lines < 8) {
		const char *nl = memchr(head + pos, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - (head + pos)) : n - pos;
		const char *s = head + pos;
		pos += len + 1;
		if (len && s[len - 1] == '\r')
			len--;
		if (!trim(s, len).n)
			continue;
		lines++;
		if (header_at < 0) {
			if (read_header(&h, s, len))
				header_at = lines;
		} else if (!is_rule(s, len)) {
			rows++;
		}
	}
	if (header_at < 0)
		return 0;
	/* a `kubectl describe` puts its Events table last: that is k8s-describe's */
	if (header_at > 3)
		return 0;
	snprintf(why, whysz, "kubectl events table header (%s)%s",
		 h.has[C_OBJECT] ? "LAST SEEN ... OBJECT" : h.has[C_AGE] ? "Type Reason Age From" :
		 "old columns", rows ? "" : " without rows");
	return rows ? 85 : 60;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct evt *p = st;
	iq_buf_init(&p->text);
	return 0;
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct evt *p = st;
	iq_buf_release(&p->text);
	return 0;
}

const struct iq_format iq_format_k8s_events_table = {
	.name = "k8s-events-table",
	.desc = "kubectl get events / describe Events tables (relative ages, old and tab-separated forms)",
	.sniff = sniff,
	.state_size = sizeof(struct evt),
	.begin = begin,
	.line = line,
	.end = end,
};
