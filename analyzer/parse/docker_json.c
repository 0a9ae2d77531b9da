/* docker_json.c: the Docker json-file log driver: one JSON object a line
 * ({"log":…,"stream":…,"attrs":…,"time":…}), the `log` string decoded,
 * and chunks of a line longer than 16 KiB (a `log` without its trailing
 * "\n") re-joined per stream. */
#include <string.h>

#include "parse.h"
#include "inner.h"
#include "traceback.h"

/* Where a stream's chunks gather until one ends with "\n". */
struct chunks {
	struct iq_buf text;     /* decoded log so far */
	struct iq_buf ts_raw;   /* the first chunk's time, as written */
	struct iq_buf name;     /* stream name (slot OTHER only) */
	struct iq_buf raw0;     /* the first chunk's log value as written (escaped) */
	int nchunks;
	int64_t ts;
	enum iq_ts_how how;
	long line, nlines;
	int pending;
};

enum { STDOUT, STDERR, OTHER, NSLOTS };

struct djson {
	struct chunks slot[NSLOTS];
	struct iq_tb tb[OTHER];    /* Python tracebacks joined on stdout, stderr */
	struct iq_inner inner;     /* a proxy's access log inside */
};

/* The string values of one line's object; raw (still escaped) slices. */
struct fields {
	struct iq_str log, stream, time;
	int has_log, has_stream, has_time;
};

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
		i++;
	return i;
}

/* At s[*i] == '"': stores the body up to the closing quote (escapes kept)
 * in *out and moves *i past the quote. -1 when the string is unterminated. */
static int scan_string(const char *s, size_t n, size_t *i, struct iq_str *out)
{
	size_t body = *i + 1, j = body;
	for (;;) {
		const char *q = j < n ? memchr(s + j, '"', n - j) : NULL;
		if (!q)
			return -1;
		size_t k = (size_t)(q - s), bs = 0;
		while (k - bs > body && s[k - 1 - bs] == '\\')
			bs++;
		if (bs % 2 == 0) {
			*out = iq_str_make(s + body, k - body);
			*i = k + 1;
			return 0;
		}
		j = k + 1;
	}
}

/* Skips one JSON value of any kind at s[*i] (objects and arrays by
 * bracket depth, strings aware). Tolerant: it finds ends, it does not
 * validate. -1 when no value ends before n. */
static int skip_value(const char *s, size_t n, size_t *i)
{
	struct iq_str tmp;
	size_t j = *i;
	if (j >= n)
		return -1;
	if (s[j] == '"')
		return scan_string(s, n, i, &tmp);
	if (s[j] == '{' || s[j] == '[') {
		int depth = 0;
		while (j < n) {
			char c = s[j];
			if (c == '"') {
				if (scan_string(s, n, &j, &tmp))
					return -1;
				continue;
			}
			if (c == '{' || c == '[')
				depth++;
			else if (c == '}' || c == ']')
				depth--;
			j++;
			if (depth == 0) {
				*i = j;
				return 0;
			}
		}
		return -1;
	}
	size_t start = j;
	while (j < n && !strchr(",}] \t\r\n", s[j]))
		j++;
	if (j == start)
		return -1;
	*i = j;
	return 0;
}

static int key_is(struct iq_str k, const char *lit)
{
	size_t l = strlen(lit);
	return k.n == l && memcmp(k.p, lit, l) == 0;
}

/* Reads one line as a flat JSON object and picks the string values of
 * log, stream and time, in any key order (Docker writes log, stream,
 * attrs, time). Returns 0, or -1 when the line is not one JSON object. */
static int scan_object(const char *s, size_t n, struct fields *f)
{
	memset(f, 0, sizeof *f);
	size_t i = skip_ws(s, n, 0);
	if (i >= n || s[i] != '{')
		return -1;
	i = skip_ws(s, n, i + 1);
	if (i < n && s[i] == '}')
		return skip_ws(s, n, i + 1) == n ? 0 : -1;
	for (;;) {
		struct iq_str key, val;
		if (i >= n || s[i] != '"' || scan_string(s, n, &i, &key))
			return -1;
		i = skip_ws(s, n, i);
		if (i >= n || s[i] != ':')
			return -1;
		i = skip_ws(s, n, i + 1);
		if (i < n && s[i] == '"') {
			if (scan_string(s, n, &i, &val))
				return -1;
			if (key_is(key, "log")) {
				f->log = val;
				f->has_log = 1;
			} else if (key_is(key, "stream")) {
				f->stream = val;
				f->has_stream = 1;
			} else if (key_is(key, "time")) {
				f->time = val;
				f->has_time = 1;
			}
		} else if (skip_value(s, n, &i)) {
			return -1;
		}
		i = skip_ws(s, n, i);
		if (i < n && s[i] == ',') {
			i = skip_ws(s, n, i + 1);
			continue;
		}
		if (i < n && s[i] == '}')
			return skip_ws(s, n, i + 1) == n ? 0 : -1;
		return -1;
	}
}

/* Where a stream's logical lines go: its traceback joiner, then emit(). */
struct out {
	const struct iq_parse_ctx *ctx;
	struct iq_str stream;
	struct iq_inner *inner;
};

static int emit(void *u, const struct iq_tb_line *l)
{
	const struct out *o = u;
	int in = iq_inner_offer(o->inner, o->ctx, l->line, l->nlines, l->ts, o->stream, l->text);
	if (in)
		return in < 0 ? in : 0;
	struct iq_record r;
	iq_tb_record(&r, l);
	r.stream = o->stream;
	return o->ctx->sink.record(o->ctx->sink.u, &r);
}

/* Hands a slot's gathered chunks to its joiner (stdout, stderr) or out
 * as a record (other stream names), and empties the slot. */
static int flush(struct djson *d, int slot, const struct iq_parse_ctx *ctx)
{
	struct chunks *c = &d->slot[slot];
	if (!c->pending)
		return 0;
	c->pending = 0;
	struct out o = {ctx, slot == STDOUT ? IQ_STR_LIT("stdout") :
			     slot == STDERR ? IQ_STR_LIT("stderr") : iq_str_make(c->name.p, c->name.len),
			 &d->inner};
	struct iq_tb_line l = {
		.line = c->line, .nlines = c->nlines, .ts = c->ts, .how = c->how,
		.ts_raw = iq_str_make(c->ts_raw.p, c->ts_raw.len),
		.text = iq_str_make(c->text.p, c->text.len),
	};
	/* a joined line, or one its writer escaped more than quotes and
	 * control characters (moby's \u003c for '<'): what stands at the
	 * line is the log value as written */
	if (c->nchunks > 1 || !iq_json_plain_in(c->text.p, c->text.len, c->raw0.p, c->raw0.len))
		l.quote = iq_str_make(c->raw0.p, c->raw0.len);
	return slot == OTHER ? emit(&o, &l) : iq_tb_feed(&d->tb[slot], &l, emit, &o);
}

/* 80..90 when the first non-empty line of head is a json-file record. */
static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t i = 0;
	if (n >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	i = skip_ws(head, n, i);
	if (i >= n || head[i] != '{')
		return 0;
	const char *nl = memchr(head + i, '\n', n - i);
	size_t len = nl ? (size_t)(nl - head) - i : n - i;
	struct fields f;
	if (scan_object(head + i, len, &f) == 0) {
		int64_t t;
		size_t used = 0;
		if (!f.has_log || !f.has_time ||
		    iq_time_parse_iso_any(f.time.p, f.time.n, &t, &used) < 0 || used != f.time.n)
			return 0;
		snprintf(why, whysz, "first line is a docker json-file record: %.*s%s%.*s",
			 (int)(f.time.n < 40 ? f.time.n : 40), f.time.p, f.has_stream ? " " : "",
			 (int)(f.stream.n < 16 ? f.stream.n : 16), f.stream.n ? f.stream.p : "");
		return 90;
	}
	/* A first line longer than the head is cut: trust its opening. */
	static const char open[] = "{\"log\":\"";
	if (!nl && len >= sizeof open - 1 && memcmp(head + i, open, sizeof open - 1) == 0) {
		snprintf(why, whysz, "first line opens like a docker json-file record (cut by the head)");
		return 80;
	}
	return 0;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	struct djson *d = st;
	iq_inner_init(&d->inner, ctx);
	for (int k = 0; k < NSLOTS; k++) {
		iq_buf_init(&d->slot[k].text);
		iq_buf_init(&d->slot[k].ts_raw);
		iq_buf_init(&d->slot[k].name);
		iq_buf_init(&d->slot[k].raw0);
	}
	for (int k = 0; k < OTHER; k++)
		iq_tb_init(&d->tb[k]);
	return 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct djson *d = st;
	if (lineno == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
		s += 3;
		n -= 3;
	}
	if (skip_ws(s, n, 0) == n) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	struct fields f;
	if (scan_object(s, n, &f) || !f.has_log || !f.has_time) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "malformed docker json", s, n);
		return 0;
	}
	int k = OTHER;
	if (key_is(f.stream, "stdout"))
		k = STDOUT;
	else if (key_is(f.stream, "stderr"))
		k = STDERR;
	struct chunks *c = &d->slot[k];
	int rc;
	/* One slot holds every other stream name; a new name ends the old. */
	if (k == OTHER && c->pending &&
	    (c->name.len != f.stream.n ||
	     (f.stream.n && memcmp(c->name.p, f.stream.p, f.stream.n) != 0)) &&
	    (rc = flush(d, k, ctx)) != 0)
		return rc;
	if (!c->pending) {
		iq_buf_reset(&c->text);
		iq_buf_reset(&c->ts_raw);
		if (iq_buf_add(&c->ts_raw, f.time.p, f.time.n))
			return IQ_ERR_NOMEM;
		if (k == OTHER) {
			iq_buf_reset(&c->name);
			if (iq_buf_add(&c->name, f.stream.p, f.stream.n))
				return IQ_ERR_NOMEM;
		}
		/* A time that does not read leaves the record timeless, not lost. */
		size_t used = 0;
		int z = iq_time_parse_iso_any(f.time.p, f.time.n, &c->ts, &used);
		if (z < 0 || used != f.time.n || c->ts == IQ_TIME_NONE) {
			c->ts = IQ_TIME_NONE;
			c->how = IQ_TS_NONE;
		} else {
			c->how = z ? IQ_TS_EXPLICIT : iq_time_local(&c->ts);
		}
		c->line = lineno;
		c->nlines = 0;
		c->pending = 1;
		c->nchunks = 0;
		/* what the line holds, escaped, for evidence (400 bytes do) */
		iq_buf_reset(&c->raw0);
		if (iq_buf_add(&c->raw0, f.log.p, f.log.n < 400 ? f.log.n : 400))
			return IQ_ERR_NOMEM;
	}
	c->nchunks++;
	c->nlines = lineno - c->line + 1;  /* the span, other streams' lines included */
	if (iq_json_unescape(&c->text, f.log.p, f.log.n))
		return IQ_ERR_NOMEM;
	if (c->text.len == 0 || c->text.p[c->text.len - 1] != '\n') {
		/* A 16 KiB chunk: the rest follows on this stream. Output that
		 * never ends a line (progress bars) is cut into capped records. */
		return c->text.len >= IQ_MAX_LINE ? flush(d, k, ctx) : 0;
	}
	c->text.len--;
	if (c->text.len && c->text.p[c->text.len - 1] == '\r')
		c->text.len--;
	c->text.p[c->text.len] = '\0';
	return flush(d, k, ctx);
}

/* Flushes what is left unterminated, oldest first, then frees. */
static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct djson *d = st;
	int rc = 0;
	for (;;) {
		int first = -1;
		for (int k = 0; k < NSLOTS; k++)
			if (d->slot[k].pending && (first < 0 || d->slot[k].line < d->slot[first].line))
				first = k;
		if (first < 0)
			break;
		int r = rc ? 0 : flush(d, first, ctx);
		d->slot[first].pending = 0;
		if (!rc)
			rc = r;
	}
	int first = iq_tb_pending_line(&d->tb[STDOUT]) < iq_tb_pending_line(&d->tb[STDERR]) ? STDOUT : STDERR;
	struct out o1 = {ctx, first == STDOUT ? IQ_STR_LIT("stdout") : IQ_STR_LIT("stderr"), &d->inner};
	struct out o2 = {ctx, first == STDOUT ? IQ_STR_LIT("stderr") : IQ_STR_LIT("stdout"), &d->inner};
	if (!rc)
		rc = iq_tb_flush(&d->tb[first], emit, &o1);
	if (!rc)
		rc = iq_tb_flush(&d->tb[!first], emit, &o2);
	int irc = iq_inner_end(&d->inner, ctx);
	if (!rc)
		rc = irc;
	for (int k = 0; k < OTHER; k++)
		iq_tb_release(&d->tb[k]);
	for (int k = 0; k < NSLOTS; k++) {
		iq_buf_release(&d->slot[k].text);
		iq_buf_release(&d->slot[k].ts_raw);
		iq_buf_release(&d->slot[k].name);
		iq_buf_release(&d->slot[k].raw0);
	}
	return rc;
}

const struct iq_format iq_format_docker_json = {
	.name = "docker-json",
	.desc = "Docker json-file log driver (one JSON object a line, 16 KiB chunks re-joined)",
	.sniff = sniff,
	.state_size = sizeof(struct djson),
	.begin = begin,
	.line = line,
	.end = end,
};
