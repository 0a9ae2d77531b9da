/* journald_json.c: `journalctl -o json` (one entry a line, every value a
 * string, a byte array for binary data, an array for repeated fields).
 * _TRANSPORT=kernel entries are kernel records carrying seconds since boot
 * (the boot-time anchor for dmesg); the others are log records.
 *
 * Decisions: the time is __REALTIME_TIMESTAMP (µs since the epoch, UTC).
 * A kernel entry's boot_s is the kernel's own _SOURCE_MONOTONIC_TIMESTAMP
 * (what dmesg prints) when present, and its time is moved back by the
 * delay before journald read it, so that time - boot_s is the boot time
 * either way; else __MONOTONIC_TIMESTAMP. Severity is PRIORITY's syslog
 * name, or the letter of a klog header that opens the message (kubelet's
 * stderr is all PRIORITY 6). Docker's journald driver: CONTAINER_NAME
 * (k8s_<container>_<pod>_<ns>_<uid>_<n> under dockershim) gives the
 * identity, and CONTAINER_PARTIAL_MESSAGE chunks are joined with the
 * container's next entries when they follow each other (the first chunk's
 * time and fields stand for the message). */
#include <jansson.h>
#include <string.h>

#include "locate.h"
#include "parse.h"

#define MAX_JOIN_LINES 1000
#define MAX_JOIN_BYTES (1u << 20)

struct jj {
	struct iq_buf msg;      /* the message (decoded, joined chunks) */
	struct iq_buf quote;    /* the first line's MESSAGE member as written */
	json_t *pending;        /* the entry whose partial message is open */
	long line, nlines;
};

static const char *const prio_names[] = {
	"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
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

/* A decimal string of microseconds; -1 when it is not one, or not a time
 * inquest can hold. */
static int64_t micros(struct iq_str s)
{
	if (!s.n || s.n > 18)
		return -1;
	int64_t v = 0;
	for (size_t i = 0; i < s.n; i++) {
		if (!is_digit(s.p[i]))
			return -1;
		v = v * 10 + (s.p[i] - '0');
	}
	/* past 2262 the time in ns does not fit an int64 */
	return v <= INT64_MAX / 1000 ? v : -1;
}

/* Appends a field's value to b: a string, a byte array (binary data), or
 * an array of those (a repeated field, joined by newlines). null (a value
 * over journalctl's size limit) adds nothing. Returns 0 or IQ_ERR_NOMEM. */
static int add_field(struct iq_buf *b, json_t *v, int depth)
{
	if (json_is_string(v))
		return iq_buf_add(b, json_string_value(v), json_string_length(v));
	if (!json_is_array(v) || depth > 1)
		return 0;
	size_t i;
	json_t *e;
	int bytes = json_array_size(v) > 0;
	json_array_foreach(v, i, e) {
		if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > 255)
			bytes = 0;
	}
	json_array_foreach(v, i, e) {
		int rc;
		if (bytes)
			rc = iq_buf_addc(b, (char)json_integer_value(e));
		else
			rc = (i ? iq_buf_addc(b, '\n') : 0) || add_field(b, e, depth + 1);
		if (rc)
			return IQ_ERR_NOMEM;
	}
	return 0;
}

/* The letter of a klog header ("E0501 12:00:03.000001 ...") opening s. */
static struct iq_str klog_letter(const char *s, size_t n)
{
	if (n >= 22 && memchr("IWEF", s[0], 4) && is_digit(s[1]) && is_digit(s[2]) &&
	    is_digit(s[3]) && is_digit(s[4]) && s[5] == ' ' && is_digit(s[6]) && s[8] == ':' &&
	    s[11] == ':' && s[14] == '.')
		return iq_str_make(s, 1);
	return IQ_STR_NULL;
}

/* dockershim's container name k8s_<container>_<pod>_<ns>_<uid>_<attempt>
 * into the identity; other names are the container's. */
static void container_name(struct iq_str cn, struct iq_ident *id)
{
	if (cn.n > 1 && cn.p[0] == '/')
		cn = iq_str_make(cn.p + 1, cn.n - 1);
	struct iq_str f[6];
	int nf = 0;
	size_t b = 0;
	for (size_t i = 0; i <= cn.n && nf < 6; i++) {
		if (i == cn.n || cn.p[i] == '_') {
			f[nf++] = iq_str_make(cn.p + b, i - b);
			b = i + 1;
		}
	}
	if (nf == 6 && b > cn.n && str_eq(f[0], "k8s")) {
		id->container = f[1];
		id->pod = f[2];
		id->ns = f[3];
		id->pod_uid = f[4];
		int r = 0, ok = f[5].n > 0 && f[5].n < 7;
		for (size_t i = 0; ok && i < f[5].n; i++) {
			if (!is_digit(f[5].p[i]))
				ok = 0;
			else
				r = r * 10 + (f[5].p[i] - '0');
		}
		if (ok)
			id->restart = r;
		return;
	}
	id->container = cn;
}

/* Emits the entry o whose message is in p->msg, over lines
 * p->line .. p->line + p->nlines - 1. */
static int emit(struct jj *p, const struct iq_parse_ctx *ctx, json_t *o)
{
	struct iq_str transport = jstr(o, "_TRANSPORT");
	int kernel = str_eq(transport, "kernel");
	struct iq_record r;
	iq_record_init(&r, kernel ? IQ_KIND_KERNEL : IQ_KIND_LOG);
	r.line = p->line;
	r.nlines = p->nlines;
	r.text = iq_str_make(p->msg.p, p->msg.len);
	/* the message decoded (escapes, a byte array, joined chunks) is not
	 * what the line holds: evidence quotes the member as written */
	if (p->quote.len && (p->nlines > 1 || !iq_json_plain_in(p->msg.p, p->msg.len, p->quote.p, p->quote.len)))
		r.quote[r.nquotes++] = (struct iq_quote){p->line, iq_str_make(p->quote.p, p->quote.len), "message"};
	struct iq_str rt = jstr(o, "__REALTIME_TIMESTAMP");
	int64_t us = micros(rt);
	if (us >= 0) {
		r.ts = us * 1000;
		r.ts_how = IQ_TS_EXPLICIT;
		r.ts_raw = rt;
	}
	struct iq_str pr = jstr(o, "PRIORITY");
	if (pr.n == 1 && pr.p[0] >= '0' && pr.p[0] <= '7')
		r.severity = iq_str_make(prio_names[pr.p[0] - '0'], strlen(prio_names[pr.p[0] - '0']));
	struct iq_str kl = klog_letter(r.text.p, r.text.n);
	if (kl.n && !kernel)
		r.severity = kl;
	r.id.node = jstr(o, "_HOSTNAME");
	if (kernel) {
		struct iq_kernel *k = &r.u.kernel;
		k->host = r.id.node;
		k->facility = jstr(o, "SYSLOG_IDENTIFIER");
		if (!k->facility.n)
			k->facility = IQ_STR_LIT("kernel");
		int64_t mono = micros(jstr(o, "__MONOTONIC_TIMESTAMP"));
		int64_t src = micros(jstr(o, "_SOURCE_MONOTONIC_TIMESTAMP"));
		if (src >= 0 && mono >= src) {
			k->boot_s = (double)src / 1e6;
			if (r.ts != IQ_TIME_NONE)
				r.ts -= (mono - src) * 1000;
		} else if (mono >= 0) {
			k->boot_s = (double)mono / 1e6;
		}
	}
	struct iq_str cn = jstr(o, "CONTAINER_NAME");
	if (cn.n)
		container_name(cn, &r.id);
	r.id.container_id = jstr(o, "CONTAINER_ID_FULL");
	if (!r.id.container_id.n)
		r.id.container_id = jstr(o, "CONTAINER_ID");
	return ctx->sink.record(ctx->sink.u, &r);
}

static int flush(struct jj *p, const struct iq_parse_ctx *ctx)
{
	if (!p->pending)
		return 0;
	int rc = emit(p, ctx, p->pending);
	json_decref(p->pending);
	p->pending = NULL;
	return rc;
}

static int same_container(json_t *a, json_t *b)
{
	struct iq_str x = jstr(a, "CONTAINER_ID"), y = jstr(b, "CONTAINER_ID");
	return x.n && x.n == y.n && memcmp(x.p, y.p, x.n) == 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct jj *p = st;
	int rc;
	size_t b = 0;
	while (b < n && (s[b] == ' ' || s[b] == '\t'))
		b++;
	if (b == n) {
		if ((rc = flush(p, ctx)))
			return rc;
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	json_t *o = json_loadb(s, n, 0, NULL);
	if (!json_is_object(o)) {
		int valid = o != NULL;
		json_decref(o);
		if ((rc = flush(p, ctx)))
			return rc;
		ctx->sink.skip(ctx->sink.u, lineno, 1, valid ? "not a journal entry" : "malformed JSON",
			       s, n);
		return 0;
	}
	if (!json_object_get(o, "MESSAGE") && !json_object_get(o, "__REALTIME_TIMESTAMP")) {
		json_decref(o);
		if ((rc = flush(p, ctx)))
			return rc;
		ctx->sink.skip(ctx->sink.u, lineno, 1, "not a journal entry", s, n);
		return 0;
	}
	/* the next chunk of an open partial message */
	if (p->pending && same_container(p->pending, o) && p->line + p->nlines == lineno &&
	    p->nlines < MAX_JOIN_LINES && p->msg.len < MAX_JOIN_BYTES) {
		if (add_field(&p->msg, json_object_get(o, "MESSAGE"), 0)) {
			json_decref(o);
			return IQ_ERR_NOMEM;
		}
		p->nlines++;
		if (str_eq(jstr(o, "CONTAINER_PARTIAL_MESSAGE"), "true")) {
			json_decref(o);
			return 0;
		}
		json_decref(o);     /* the first chunk's time and fields stand */
		return flush(p, ctx);
	}
	if ((rc = flush(p, ctx))) {
		json_decref(o);
		return rc;
	}
	iq_buf_reset(&p->msg);
	if (add_field(&p->msg, json_object_get(o, "MESSAGE"), 0)) {
		json_decref(o);
		return IQ_ERR_NOMEM;
	}
	iq_buf_reset(&p->quote);
	{
		const struct iq_jpath mp[] = {{"MESSAGE", 0}};
		struct iq_quote q;
		if (iq_quote_member(&q, "message", iq_str_make(s, n), lineno, mp, 1) &&
		    iq_buf_add(&p->quote, q.text.p, q.text.n < 400 ? q.text.n : 400)) {
			json_decref(o);
			return IQ_ERR_NOMEM;
		}
	}
	p->line = lineno;
	p->nlines = 1;
	p->pending = o;
	if (str_eq(jstr(o, "CONTAINER_PARTIAL_MESSAGE"), "true") && jstr(o, "CONTAINER_ID").n)
		return 0;
	return flush(p, ctx);
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct jj *p = st;
	iq_buf_init(&p->msg);
	iq_buf_init(&p->quote);
	return 0;
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct jj *p = st;
	int rc = flush(p, ctx);
	iq_buf_release(&p->msg);
	iq_buf_release(&p->quote);
	return rc;
}

/* 95 when the first entries are JSON objects with journal fields. */
static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t i = 0;
	while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
		i++;
	if (i >= n || head[i] != '{')
		return 0;
	const char *nl = memchr(head + i, '\n', n - i);
	size_t len = nl ? (size_t)(nl - (head + i)) : n - i;
	const char *s = head + i;
	int rt = iq_memmem(s, len, "\"__REALTIME_TIMESTAMP\"", 22) != NULL;
	int cur = iq_memmem(s, len, "\"__CURSOR\"", 10) != NULL;
	int msg = iq_memmem(s, len, "\"MESSAGE\"", 9) != NULL;
	int other = iq_memmem(s, len, "\"_HOSTNAME\"", 11) || iq_memmem(s, len, "\"PRIORITY\"", 10) ||
		    iq_memmem(s, len, "\"_BOOT_ID\"", 10) || iq_memmem(s, len, "\"SYSLOG_IDENTIFIER\"", 19);
	if ((rt || cur) && (msg || other)) {
		snprintf(why, whysz, "JSON lines with journal fields (__REALTIME_TIMESTAMP, MESSAGE)");
		return 95;
	}
	if (msg && other) {
		snprintf(why, whysz, "JSON lines with journal fields (MESSAGE, _HOSTNAME/PRIORITY)");
		return 80;
	}
	return 0;
}

const struct iq_format iq_format_journald_json = {
	.name = "journald-json",
	.desc = "journalctl -o json (kernel entries with boot-relative time, docker journald driver)",
	.sniff = sniff,
	.state_size = sizeof(struct jj),
	.begin = begin,
	.line = line,
	.end = end,
};
