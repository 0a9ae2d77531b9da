/* k8s_describe.c: `kubectl describe pod` text: one pod record per
 * container (Name/Namespace/Node/IP/Status with the container's State,
 * Last State, Ready and Restart Count), and the Events block at the end,
 * read by the k8s-events-table format with the described pod as object.
 *
 * Decisions: containers are found by indentation (a "<name>:" line two
 * columns in, under Containers: or Init Containers:); State/Last State
 * details are the deeper-indented lines under them. A State: line outside
 * a container (an excerpt) opens an unnamed one. A container's record
 * spans its lines and the pod lines before it not yet in a record; other
 * sections (Conditions, Volumes, ...) are skipped. Describe output has no
 * capture time, so records have none; Started/Finished (RFC 1123) fill the
 * pod fields. Concatenated describes start anew at each top-level Name:. */
#include <stdlib.h>
#include <string.h>

#include "parse.h"

extern const struct iq_format iq_format_k8s_events_table;

/* A value kept in one of the parser's buffers. */
struct part {
	size_t off, n;
};

enum section { SEC_NONE, SEC_CONTAINERS, SEC_OTHER, SEC_EVENTS };
enum block { BL_NONE, BL_STATE, BL_LAST, BL_OTHER };

struct ctr {
	int open;
	long last;                  /* the container's last line */
	size_t indent;              /* of its header line */
	struct part name, id, image, state, reason, last_reason;
	int restart, ready, exit_code, last_exit;
	int64_t started, finished, lstarted, lfinished;
	enum block block;
	size_t block_indent;
	/* the lines that say it, for the record's quotes: line numbers and
	 * the trimmed lines, kept in cbuf */
	long reason_line, last_reason_line, state_line, ready_line;
	struct part reason_q, last_reason_q, state_q, ready_q;
};

struct desc {
	struct iq_buf pod;          /* the pod's values */
	struct part name, ns, node, ip, phase;
	struct iq_buf cbuf;         /* the open container's values */
	struct ctr c;
	enum section sec;
	const char *obj_kind;       /* "Node" for a describe node, else NULL */
	long acct;
	long last;                  /* the last line seen */
	long cur;                   /* the line being read, and its text */
	struct iq_str cur_text;
	struct iq_buf text;
	/* the Events block, run through k8s-events-table */
	void *ev;
	int ev_begun;
	struct iq_parse_ctx sub;
	const struct iq_parse_ctx *outer;
	struct iq_buf evtext;
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

static int key_is(struct iq_str k, const char *lit)
{
	size_t n = strlen(lit);
	return k.n == n && memcmp(k.p, lit, n) == 0;
}

static struct iq_str get(const struct iq_buf *b, struct part x)
{
	return x.n ? iq_str_make(b->p + x.off, x.n) : IQ_STR_NULL;
}

/* Copies v into b (lower-cased when low is set); the part of it. */
static int keep(struct iq_buf *b, struct iq_str v, int low, struct part *out)
{
	out->off = b->len;
	out->n = v.n;
	if (!low)
		return iq_buf_add(b, v.p, v.n);
	for (size_t i = 0; i < v.n; i++)
		if (iq_buf_addc(b, lower(v.p[i])))
			return IQ_ERR_NOMEM;
	return 0;
}

/* "Mon, 30 Nov 2026 14:12:03 +0000": kubectl's RFC 1123 (iqtime.c);
 * IQ_TIME_NONE for other text and Go's zero time. */
static int64_t rfc1123(struct iq_str t)
{
	return iq_time_parse_rfc1123(t.p, t.n);
}

static int int_of(struct iq_str v)
{
	int x = 0;
	size_t i = 0;
	int neg = v.n && v.p[0] == '-';
	if (neg)
		i = 1;
	if (i >= v.n)
		return -1;
	for (; i < v.n; i++) {
		if (!is_digit(v.p[i]) || x > 100000000)
			return -1;
		x = x * 10 + (v.p[i] - '0');
	}
	return neg ? -1 : x;
}

/* "pod ns/name container c: waiting CrashLoopBackOff, last terminated
 * Error exit 1, restarts 7, not ready" */
static int summary(struct desc *p, const struct iq_pod *pod)
{
	struct iq_buf *b = &p->text;
	iq_buf_reset(b);
	int rc = 0;
	if (pod->name.n) {
		rc |= iq_buf_adds(b, "pod ");
		if (pod->ns.n)
			rc |= iq_buf_add(b, pod->ns.p, pod->ns.n) | iq_buf_addc(b, '/');
		rc |= iq_buf_add(b, pod->name.p, pod->name.n) | iq_buf_addc(b, ' ');
	}
	rc |= iq_buf_adds(b, "container");
	if (pod->container.n)
		rc |= iq_buf_addc(b, ' ') | iq_buf_add(b, pod->container.p, pod->container.n);
	rc |= iq_buf_addc(b, ':');
	if (pod->state.n)
		rc |= iq_buf_addc(b, ' ') | iq_buf_add(b, pod->state.p, pod->state.n);
	if (pod->reason.n)
		rc |= iq_buf_addc(b, ' ') | iq_buf_add(b, pod->reason.p, pod->reason.n);
	if (pod->exit_code >= 0)
		rc |= iq_buf_printf(b, " exit %d", pod->exit_code);
	if (pod->last_reason.n || pod->last_exit_code >= 0) {
		rc |= iq_buf_adds(b, ", last terminated");
		if (pod->last_reason.n)
			rc |= iq_buf_addc(b, ' ') | iq_buf_add(b, pod->last_reason.p, pod->last_reason.n);
		if (pod->last_exit_code >= 0)
			rc |= iq_buf_printf(b, " exit %d", pod->last_exit_code);
	}
	if (pod->restart_count >= 0)
		rc |= iq_buf_printf(b, ", restarts %d", pod->restart_count);
	if (pod->ready >= 0)
		rc |= iq_buf_adds(b, pod->ready ? ", ready" : ", not ready");
	return rc ? IQ_ERR_NOMEM : 0;
}

/* Accounts for lines acct..l-1 (pod lines no record took) as skipped. */
static void skip_until(struct desc *p, const struct iq_parse_ctx *ctx, long l, const char *why)
{
	if (p->acct < l)
		ctx->sink.skip(ctx->sink.u, p->acct, l - p->acct, why, NULL, 0);
	if (p->acct < l)
		p->acct = l;
}

static void ctr_reset(struct desc *p)
{
	memset(&p->c, 0, sizeof p->c);
	p->c.restart = p->c.ready = p->c.exit_code = p->c.last_exit = -1;
	p->c.started = p->c.finished = p->c.lstarted = p->c.lfinished = IQ_TIME_NONE;
	iq_buf_reset(&p->cbuf);
}

/* Emits the open container's record over lines acct..c.last. */
static int flush_ctr(struct desc *p, const struct iq_parse_ctx *ctx)
{
	if (!p->c.open)
		return 0;
	p->c.open = 0;
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_POD);
	struct iq_pod *pod = &r.u.pod;
	pod->ns = get(&p->pod, p->ns);
	pod->name = get(&p->pod, p->name);
	pod->node = get(&p->pod, p->node);
	pod->pod_ip = get(&p->pod, p->ip);
	pod->phase = get(&p->pod, p->phase);
	pod->container = get(&p->cbuf, p->c.name);
	pod->container_id = get(&p->cbuf, p->c.id);
	pod->image = get(&p->cbuf, p->c.image);
	pod->restart_count = p->c.restart;
	pod->ready = p->c.ready;
	pod->state = get(&p->cbuf, p->c.state);
	pod->reason = get(&p->cbuf, p->c.reason);
	pod->exit_code = p->c.exit_code;
	pod->started_at = p->c.started;
	pod->finished_at = p->c.finished;
	pod->last_reason = get(&p->cbuf, p->c.last_reason);
	pod->last_exit_code = p->c.last_exit;
	pod->last_started_at = p->c.lstarted;
	pod->last_finished_at = p->c.lfinished;
	r.id.ns = pod->ns;
	r.id.pod = pod->name;
	r.id.node = pod->node;
	r.id.container = pod->container;
	r.id.container_id = pod->container_id;
	if (summary(p, pod))
		return IQ_ERR_NOMEM;
	r.text = iq_str_make(p->text.p, p->text.len);
	r.line = p->acct;
	r.nlines = p->c.last - p->acct + 1;
	/* quotes: how the last instance ended, the state (and why), ready */
	const struct { long line; struct part q; const char *what; } qs[] = {
		{p->c.last_reason_line, p->c.last_reason_q, "last_reason"},
		{p->c.reason_line, p->c.reason_q, "reason"},
		{p->c.reason_line ? 0 : p->c.state_line, p->c.state_q, "state"},
		{p->c.ready_line, p->c.ready_q, "ready"},
	};
	for (size_t i = 0; i < IQ_ARRAY_LEN(qs) && r.nquotes < IQ_MAX_QUOTES; i++)
		if (qs[i].line > 0 && qs[i].q.n)
			r.quote[r.nquotes++] = (struct iq_quote){qs[i].line, get(&p->cbuf, qs[i].q), qs[i].what};
	p->acct = p->c.last + 1;
	return ctx->sink.record(ctx->sink.u, &r);
}

/* The events parser's records, with the described pod as their object. */
static int ev_record(void *u, const struct iq_record *in)
{
	struct desc *p = u;
	struct iq_record r = *in;
	struct iq_event *e = &r.u.event;
	struct iq_str name = get(&p->pod, p->name), ns = get(&p->pod, p->ns);
	int node = p->obj_kind != NULL;
	if (name.n && !e->object_name.n && (node || ns.n)) {
		e->object_kind = node ? IQ_STR_LIT("Node") : IQ_STR_LIT("Pod");
		e->object_name = name;
		if (node) {
			if (!r.id.node.n)
				r.id.node = name;
		} else {
			e->object_ns = ns;
			r.id.pod = name;
			r.id.ns = ns;
		}
		/* "Type Reason pod/name: message", as the events formats write */
		struct iq_buf *b = &p->evtext;
		iq_buf_reset(b);
		int rc = 0;
		if (e->type.n)
			rc |= iq_buf_add(b, e->type.p, e->type.n) | iq_buf_addc(b, ' ');
		rc |= iq_buf_add(b, e->reason.p, e->reason.n) |
		      iq_buf_adds(b, node ? " node/" : " pod/") | iq_buf_add(b, name.p, name.n);
		if (e->message.n)
			rc |= iq_buf_adds(b, ": ") | iq_buf_add(b, e->message.p, e->message.n);
		if (rc)
			return IQ_ERR_NOMEM;
		r.text = iq_str_make(b->p, b->len);
	}
	return p->outer->sink.record(p->outer->sink.u, &r);
}

static void ev_skip(void *u, long first, long count, const char *reason, const char *text,
		    size_t n)
{
	struct desc *p = u;
	p->outer->sink.skip(p->outer->sink.u, first, count, reason, text, n);
}

/* Hands a line of the Events block to k8s-events-table. */
static int ev_line(struct desc *p, const struct iq_parse_ctx *ctx, long lineno,
		   const char *s, size_t n)
{
	p->outer = ctx;
	if (!p->ev_begun) {
		p->sub = *ctx;
		p->sub.sink.record = ev_record;
		p->sub.sink.skip = ev_skip;
		p->sub.sink.u = p;
		int rc = iq_format_k8s_events_table.begin(p->ev, &p->sub);
		if (rc)
			return rc;
		p->ev_begun = 1;
	}
	p->acct = lineno + 1;
	return iq_format_k8s_events_table.line(p->ev, &p->sub, lineno, s, n);
}

/* Splits "  Key:   value" into its indentation, key and value. Returns 0,
 * or -1 when the line is not key: value (a key is words, digits, spaces,
 * '-', '.', '_' and '/', and its ':' is followed by a space, tab or the
 * end). */
static int key_value(const char *s, size_t n, size_t *indent, struct iq_str *k,
		     struct iq_str *v)
{
	size_t i = 0;
	while (i < n && is_sp(s[i]))
		i++;
	*indent = i;
	size_t b = i;
	while (i < n && s[i] != ':') {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == ' ' ||
		      c == '-' || c == '.' || c == '_' || c == '/' || c == '(' || c == ')'))
			return -1;
		i++;
	}
	if (i >= n || i == b || (i + 1 < n && !is_sp(s[i + 1])))
		return -1;
	*k = trim(s + b, i - b);
	*v = trim(s + i + 1, n - i - 1);
	return k->n ? 0 : -1;
}

/* A pod-level field (Name, Namespace, Node, IP, Status). */
static int pod_field(struct desc *p, struct iq_str k, struct iq_str v)
{
	if (v.n && v.p[0] == '<')
		v = IQ_STR_NULL;    /* "<none>" */
	if (key_is(k, "Name"))
		return keep(&p->pod, v, 0, &p->name);
	if (key_is(k, "Namespace"))
		return keep(&p->pod, v, 0, &p->ns);
	if (key_is(k, "Node")) {
		const char *sl = memchr(v.p ? v.p : "", '/', v.n);
		if (sl)
			v.n = (size_t)(sl - v.p);
		return keep(&p->pod, v, 0, &p->node);
	}
	if (key_is(k, "IP"))
		return keep(&p->pod, v, 0, &p->ip);
	if (key_is(k, "Status"))
		return keep(&p->pod, v, 0, &p->phase);
	if (key_is(k, "Roles") || key_is(k, "Unschedulable") || key_is(k, "Taints"))
		p->obj_kind = "Node";
	return 0;
}

/* A line inside a container: its fields and the State/Last State blocks. */
static int ctr_field(struct desc *p, size_t indent, struct iq_str k, struct iq_str v)
{
	struct ctr *c = &p->c;
	if (c->block != BL_NONE && indent <= c->block_indent)
		c->block = BL_NONE;
	if (c->block == BL_STATE || c->block == BL_LAST) {
		int last = c->block == BL_LAST;
		if (key_is(k, "Reason")) {
			*(last ? &c->last_reason_line : &c->reason_line) = p->cur;
			int rc = keep(&p->cbuf, p->cur_text, 0, last ? &c->last_reason_q : &c->reason_q);
			return rc ? rc : keep(&p->cbuf, v, 0, last ? &c->last_reason : &c->reason);
		}
		if (key_is(k, "Exit Code")) {
			*(last ? &c->last_exit : &c->exit_code) = int_of(v);
		} else if (key_is(k, "Started")) {
			*(last ? &c->lstarted : &c->started) = rfc1123(v);
		} else if (key_is(k, "Finished")) {
			*(last ? &c->lfinished : &c->finished) = rfc1123(v);
		}
		return 0;
	}
	if (c->block == BL_OTHER)
		return 0;   /* Limits, Environment, Mounts, ... */
	if (key_is(k, "State")) {
		c->block = BL_STATE;
		c->block_indent = indent;
		c->state_line = p->cur;
		int rc = keep(&p->cbuf, p->cur_text, 0, &c->state_q);
		return rc ? rc : keep(&p->cbuf, v, 1, &c->state);
	}
	if (key_is(k, "Last State") || key_is(k, "Last Termination State")) {
		c->block = BL_LAST;
		c->block_indent = indent;
		return 0;
	}
	if (key_is(k, "Container ID"))
		return keep(&p->cbuf, v, 0, &c->id);
	if (key_is(k, "Image"))
		return keep(&p->cbuf, v, 0, &c->image);
	if (key_is(k, "Ready")) {
		c->ready = key_is(v, "True") ? 1 : key_is(v, "False") ? 0 : -1;
		c->ready_line = p->cur;
		return keep(&p->cbuf, p->cur_text, 0, &c->ready_q);
	} else if (key_is(k, "Restart Count")) {
		c->restart = int_of(v);
	} else if (!v.n) {
		c->block = BL_OTHER;
		c->block_indent = indent;
	}
	return 0;
}

static int open_ctr(struct desc *p, struct iq_str name, size_t indent)
{
	ctr_reset(p);
	p->c.open = 1;
	p->c.indent = indent;
	return keep(&p->cbuf, name, 0, &p->c.name);
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct desc *p = st;
	int rc;
	size_t indent;
	p->last = lineno;
	struct iq_str k, v;
	p->cur = lineno;
	p->cur_text = trim(s, n);
	int kv = key_value(s, n, &indent, &k, &v) == 0;
	int top_name = kv && indent == 0 && key_is(k, "Name");
	if (p->sec == SEC_EVENTS) {
		if (!top_name)
			return ev_line(p, ctx, lineno, s, n);
		p->sec = SEC_NONE;
	}
	if (!trim(s, n).n) {
		if ((rc = flush_ctr(p, ctx)))
			return rc;
		skip_until(p, ctx, lineno, "describe section");
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		p->acct = lineno + 1;
		return 0;
	}
	if (top_name) {
		/* a new pod: what is left of the one before is done */
		if ((rc = flush_ctr(p, ctx)))
			return rc;
		skip_until(p, ctx, lineno, "describe section");
		iq_buf_reset(&p->pod);
		p->name = p->ns = p->node = p->ip = p->phase = (struct part){0, 0};
		p->obj_kind = NULL;
		p->sec = SEC_NONE;
	}
	if (kv && indent == 0) {
		if (key_is(k, "Events")) {
			if ((rc = flush_ctr(p, ctx)))
				return rc;
			skip_until(p, ctx, lineno, "describe section");
			p->sec = SEC_EVENTS;
			p->acct = lineno + 1;
			return ev_line(p, ctx, lineno, s, n);
		}
		if (!v.n && (key_is(k, "Containers") || key_is(k, "Init Containers"))) {
			if ((rc = flush_ctr(p, ctx)))
				return rc;
			p->sec = SEC_CONTAINERS;
			return 0;   /* the next container's record takes it */
		}
		if (p->sec == SEC_NONE)
			return pod_field(p, k, v);
		/* Conditions, Volumes, QoS Class, ... after the containers */
		if ((rc = flush_ctr(p, ctx)))
			return rc;
		p->sec = SEC_OTHER;
		skip_until(p, ctx, lineno + 1, "describe section");
		return 0;
	}
	if (indent == 0 || p->sec == SEC_OTHER) {
		/* a continued top-level value (Labels, Annotations) or a section */
		if (p->c.open && indent == 0) {
			if ((rc = flush_ctr(p, ctx)))
				return rc;
			p->sec = SEC_OTHER;
		}
		if (p->sec == SEC_OTHER)
			skip_until(p, ctx, lineno + 1, "describe section");
		return 0;
	}
	/* indented lines */
	if (kv && !v.n && p->sec == SEC_CONTAINERS && (!p->c.open || indent <= p->c.indent)) {
		if ((rc = flush_ctr(p, ctx)))
			return rc;
		if ((rc = open_ctr(p, k, indent)))
			return rc;
		p->c.last = lineno;
		return 0;
	}
	if (!p->c.open && kv && (key_is(k, "State") || key_is(k, "Last State") ||
				 key_is(k, "Restart Count"))) {
		/* an excerpt: container fields without their header */
		if ((rc = open_ctr(p, IQ_STR_NULL, indent > 2 ? indent - 2 : 0)))
			return rc;
	}
	if (p->c.open) {
		p->c.last = lineno;
		if (kv && (rc = ctr_field(p, indent, k, v)))
			return rc;
	}
	return 0;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct desc *p = st;
	iq_buf_init(&p->pod);
	iq_buf_init(&p->cbuf);
	iq_buf_init(&p->text);
	iq_buf_init(&p->evtext);
	ctr_reset(p);
	p->acct = 1;
	p->ev = iq_xcalloc(1, iq_format_k8s_events_table.state_size);
	return 0;
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct desc *p = st;
	int rc = flush_ctr(p, ctx);
	if (!rc)
		skip_until(p, ctx, p->last + 1, "describe section");
	if (p->ev_begun) {
		int rc2 = iq_format_k8s_events_table.end(p->ev, &p->sub);
		if (!rc)
			rc = rc2;
	}
	free(p->ev);
	iq_buf_release(&p->pod);
	iq_buf_release(&p->cbuf);
	iq_buf_release(&p->text);
	iq_buf_release(&p->evtext);
	return rc;
}

/* Scores: "Name:" at the left margin with other describe fields (a pod's
 * Namespace/Containers/State, a node's Roles), or container State lines
 * of an excerpt. */
static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t pos = 0;
	int lines = 0, name = 0, pod = 0, node = 0, state = 0, other = 0;
	while (pos < n && lines < 60) {
		const char *nl = memchr(head + pos, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - (head + pos)) : n - pos;
		const char *s = head + pos;
		pos += len + 1;
		if (len && s[len - 1] == '\r')
			len--;
		if (!trim(s, len).n)
			continue;
		lines++;
		size_t ind;
		struct iq_str k, v;
		if (key_value(s, len, &ind, &k, &v))
			continue;
		if (ind == 0 && key_is(k, "Name") && v.n)
			name++;
		else if (ind == 0 && (key_is(k, "Namespace") || (key_is(k, "Containers") && !v.n)))
			pod++;
		else if (ind == 0 && (key_is(k, "Roles") || key_is(k, "Taints")))
			node++;
		else if (ind > 0 && (key_is(k, "State") || key_is(k, "Last State") ||
				     key_is(k, "Restart Count")))
			state++;
		else if (ind == 0 && (key_is(k, "Node") || key_is(k, "Status") || key_is(k, "IP") ||
				      key_is(k, "Labels") || key_is(k, "Events")))
			other++;
	}
	if (name && (pod || node) && (state || other)) {
		snprintf(why, whysz, "kubectl describe %s (Name:, %s)", node && !pod ? "node" : "pod",
			 node && !pod ? "Roles:" : "Namespace:/Containers:");
		return 90;
	}
	if (state >= 2 && (name || other || state >= 3)) {
		snprintf(why, whysz, "kubectl describe container fields (State:, Restart Count:)");
		return 70;
	}
	return 0;
}

const struct iq_format iq_format_k8s_describe = {
	.name = "k8s-describe",
	.desc = "kubectl describe pod/node: container states and the Events block",
	.sniff = sniff,
	.state_size = sizeof(struct desc),
	.begin = begin,
	.line = line,
	.end = end,
};
