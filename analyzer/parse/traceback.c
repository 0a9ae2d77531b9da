/* traceback.c: one record per Python traceback in a stream of log lines.
 * Python prints "Traceback (most recent call last):", indented frames, the
 * exception line, and for chained exceptions a blank line, "During handling
 * of the above exception ..." or "The above exception was the direct cause
 * ...", a blank line and the next traceback. Wrappers such as vLLM's
 * process tags and logger head repeat on every line; a continuation must
 * carry the start line's wrapper. Lines of other processes (other tags) may
 * interleave without ending the traceback. */
#include <limits.h>
#include <string.h>

#include "traceback.h"

enum {
	TB_NONE = 0,
	TB_FRAMES,     /* after the header: frames until the exception line */
	TB_AFTER_EXC,  /* after the exception line: a chain or the end */
	TB_CHAIN,      /* after a chain marker: blank lines, then a header */
};

/* Lines of other processes tolerated in a row inside a traceback. */
#define MAX_FOREIGN 64

static const char header[] = "Traceback (most recent call last):";

void iq_tb_record(struct iq_record *r, const struct iq_tb_line *l)
{
	iq_record_init(r, IQ_KIND_LOG);
	r->line = l->line;
	r->nlines = l->nlines;
	r->first_line = l->first_line;
	r->ts = l->ts;
	r->ts_how = l->how;
	r->ts_raw = l->ts_raw;
	r->text = l->text;
	r->severity = iq_log_severity(l->text.p, l->text.n);
	if (l->quote.n)
		r->quote[r->nquotes++] = (struct iq_quote){l->line, l->quote, "text"};
	else if (l->first_line && l->first_line != l->line) {
		/* a traceback placed at its exception line: that line is what
		 * evidence cites, alone, not the span that ends there */
		size_t n = 0;
		while (n < l->text.n && l->text.p[n] != '\n')
			n++;
		r->quote[r->nquotes++] = (struct iq_quote){l->line, iq_str_make(l->text.p, n), "text"};
	}
}

void iq_tb_init(struct iq_tb *tb)
{
	memset(tb, 0, sizeof *tb);
	iq_buf_init(&tb->text);
	iq_buf_init(&tb->ts_raw);
	iq_buf_init(&tb->tags);
	iq_buf_init(&tb->prefix);
	iq_buf_init(&tb->held_text);
	iq_buf_init(&tb->held_ts_raw);
	iq_buf_init(&tb->cite_ts_raw);
	iq_buf_init(&tb->quote);
	iq_buf_init(&tb->cite_quote);
	iq_buf_init(&tb->out);
}

void iq_tb_release(struct iq_tb *tb)
{
	iq_buf_release(&tb->text);
	iq_buf_release(&tb->ts_raw);
	iq_buf_release(&tb->tags);
	iq_buf_release(&tb->prefix);
	iq_buf_release(&tb->held_text);
	iq_buf_release(&tb->held_ts_raw);
	iq_buf_release(&tb->cite_ts_raw);
	iq_buf_release(&tb->quote);
	iq_buf_release(&tb->cite_quote);
	iq_buf_release(&tb->out);
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "dd-dd dd:dd:dd " at s[i]: the vLLM time without year. */
static int vllm_time(const char *s, size_t n, size_t i)
{
	static const char shape[] = "00-00 00:00:00 ";
	if (n - i < sizeof shape - 1)
		return 0;
	for (size_t k = 0; k < sizeof shape - 1; k++) {
		if (shape[k] == '0' ? !is_digit(s[i + k]) : s[i + k] != shape[k])
			return 0;
	}
	return 1;
}

size_t iq_tb_wrapper_len(const char *s, size_t n, size_t *tags_len)
{
	size_t i = 0;
	for (int k = 0; k < 4 && i < n; k++) {
		if (s[i] == '(') {
			size_t lim = n - i < 160 ? n - i : 160;
			const char *e = memchr(s + i, ')', lim);
			if (!e || (size_t)(e - s) + 1 >= n || e[1] != ' ' ||
			    !iq_memmem(s + i, (size_t)(e - (s + i)), "pid=", 4))
				break;
			i = (size_t)(e - s) + 2;
		} else if (n - i > 7 && memcmp(s + i, "[rank", 5) == 0 && is_digit(s[i + 5])) {
			size_t j = i + 5;
			while (j < n && is_digit(s[j]))
				j++;
			if (n - j < 2 || s[j] != ']' || s[j + 1] != ':')
				break;
			j += 2;
			if (j < n && s[j] == ' ')
				j++;
			i = j;
		} else {
			break;
		}
	}
	if (tags_len)
		*tags_len = i;
	static const char *const levels[] = {"DEBUG ", "INFO ", "WARNING ", "ERROR ", "CRITICAL "};
	for (size_t l = 0; l < IQ_ARRAY_LEN(levels); l++) {
		size_t ll = strlen(levels[l]);
		if (n - i <= ll || memcmp(s + i, levels[l], ll) != 0)
			continue;
		size_t j = i + ll;
		if (!vllm_time(s, n, j))
			return i;
		j += 15;
		/* "[file.py:N] " or the older "file.py:N] ": no space inside */
		size_t lim = n - j < 120 ? n - j : 120;
		for (size_t k = 0; k + 1 < lim; k++) {
			char c = s[j + k];
			if (c == ' ')
				return i;
			if (c == ']' && s[j + k + 1] == ' ')
				return j + k + 2;
		}
		if (lim >= 1 && j + lim == n && s[n - 1] == ']')
			return n;  /* a head with an empty message */
		return i;
	}
	return i;
}

/* What a line's message (after the wrapper) is, inside a traceback. */
enum body {
	B_BLANK,
	B_INDENT,     /* a frame, source line, caret line or indented message */
	B_HEADER,     /* "Traceback (most recent call last):" */
	B_CHAIN,      /* "During handling of ..." / "The above exception ..." */
	B_EXC,        /* "Name: message" or a bare exception name */
	B_HINT,       /* PyTorch's lines after a CUDA error message */
	B_OTHER,
};

static int starts(const char *s, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	return n >= l && memcmp(s, lit, l) == 0;
}

/* Names that open log lines ("INFO:     Shutting down", uvicorn's and
 * Python logging's "LEVEL:name:msg"), not exceptions. */
static int log_level_name(const char *s, size_t n)
{
	static const char *const levels[] = {"DEBUG", "INFO", "NOTICE", "WARN", "WARNING", "ERROR",
					     "CRITICAL", "FATAL", "TRACE"};
	for (size_t k = 0; k < IQ_ARRAY_LEN(levels); k++)
		if (strlen(levels[k]) == n && memcmp(s, levels[k], n) == 0)
			return 1;
	return 0;
}

/* A dotted Python name, with Ray's "(Cause)" suffix, then the end or
 * ": " and the message: Python prints "Name: message" with one space, so
 * a name followed by a run of spaces, or a log level's name, is a log
 * line of its own. */
static int exception_line(const char *s, size_t n)
{
	size_t i = 0;
	if (i >= n || !(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z')))
		return 0;
	while (i < n && (s[i] == '_' || s[i] == '.' || is_digit(s[i]) ||
			 (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z')))
		i++;
	if (log_level_name(s, i))
		return 0;
	if (i < n && s[i] == '(') {
		const char *e = memchr(s + i, ')', n - i);
		if (!e)
			return 0;
		i = (size_t)(e - s) + 1;
	}
	if (i == n)
		return 1;
	if (s[i] != ':')
		return 0;
	/* "Name:" alone, or "Name: message" */
	return i + 1 == n || (s[i + 1] == ' ' && (i + 2 == n || s[i + 2] != ' '));
}

static enum body classify(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == n)
		return B_BLANK;
	if (i > 0)
		return B_INDENT;
	if (starts(s, n, header))
		return B_HEADER;
	if (starts(s, n, "During handling of the above exception") ||
	    starts(s, n, "The above exception was the direct cause"))
		return B_CHAIN;
	if (starts(s, n, "CUDA kernel errors might be asynchronously reported") ||
	    starts(s, n, "the stacktrace below might be incorrect") ||
	    starts(s, n, "For debugging consider passing CUDA_LAUNCH_BLOCKING") ||
	    starts(s, n, "Compile with `TORCH_USE_CUDA_DSA`"))
		return B_HINT;
	if (exception_line(s, n))
		return B_EXC;
	return B_OTHER;
}

static int copy_line(struct iq_buf *text, struct iq_buf *ts_raw, const struct iq_tb_line *l)
{
	iq_buf_reset(text);
	iq_buf_reset(ts_raw);
	if (iq_buf_add(text, l->text.p, l->text.n) || iq_buf_add(ts_raw, l->ts_raw.p, l->ts_raw.n))
		return IQ_ERR_NOMEM;
	return 0;
}

static int start(struct iq_tb *tb, const struct iq_tb_line *l)
{
	size_t tl;
	size_t wl = iq_tb_wrapper_len(l->text.p, l->text.n, &tl);
	if (copy_line(&tb->text, &tb->ts_raw, l))
		return IQ_ERR_NOMEM;
	iq_buf_reset(&tb->tags);
	iq_buf_reset(&tb->prefix);
	if (iq_buf_add(&tb->tags, l->text.p, tl) || iq_buf_add(&tb->prefix, l->text.p, wl))
		return IQ_ERR_NOMEM;
	iq_buf_reset(&tb->quote);
	if (iq_buf_add(&tb->quote, l->quote.p, l->quote.n))
		return IQ_ERR_NOMEM;
	tb->ts = l->ts;
	tb->how = l->how;
	tb->line = l->line;
	tb->end = l->line + (l->nlines > 0 ? l->nlines : 1);
	tb->nparts = 1;
	tb->cite_line = 0;
	tb->foreign = 0;
	tb->state = TB_FRAMES;
	return 0;
}

/* Joins l to the pending record; 1 when a cap leaves no room (nothing
 * joined), 0 when joined, IQ_ERR_NOMEM. */
static int append(struct iq_tb *tb, const struct iq_tb_line *l)
{
	if (tb->nparts + 1 > IQ_TB_MAX_LINES || tb->text.len + 1 + l->text.n > IQ_TB_MAX_BYTES)
		return 1;
	if (iq_buf_addc(&tb->text, '\n') || iq_buf_add(&tb->text, l->text.p, l->text.n))
		return IQ_ERR_NOMEM;
	tb->nparts++;
	long e = l->line + (l->nlines > 0 ? l->nlines : 1);
	if (e > tb->end)
		tb->end = e;
	return 0;
}

/* Notes l, the first exception line, as the place of the record. */
static int cite(struct iq_tb *tb, const struct iq_tb_line *l)
{
	iq_buf_reset(&tb->cite_ts_raw);
	iq_buf_reset(&tb->cite_quote);
	if (iq_buf_add(&tb->cite_ts_raw, l->ts_raw.p, l->ts_raw.n) ||
	    iq_buf_add(&tb->cite_quote, l->quote.p, l->quote.n))
		return IQ_ERR_NOMEM;
	tb->cite_line = l->line;
	tb->cite_len = l->text.n;
	tb->cite_off = tb->text.len - l->text.n;  /* just appended */
	tb->cite_ts = l->ts;
	tb->cite_how = l->how;
	return 0;
}

int iq_tb_flush(struct iq_tb *tb, iq_tb_emit_fn emit, void *u)
{
	int rc = 0;
	if (tb->state != TB_NONE) {
		struct iq_tb_line r = {
			.line = tb->line,
			.nlines = tb->end - tb->line,
			.ts = tb->ts,
			.how = tb->how,
			.ts_raw = iq_str_make(tb->ts_raw.p, tb->ts_raw.len),
			.text = iq_str_make(tb->text.p, tb->text.len),
			.quote = iq_str_make(tb->quote.p, tb->quote.len),
		};
		if (tb->cite_line && tb->cite_line != tb->line) {
			/* the cited line, then the others: the traceback's text
			 * before it (ending in '\n') and after it (from '\n') */
			struct iq_buf *o = &tb->out;
			iq_buf_reset(o);
			size_t after = tb->cite_off + tb->cite_len;
			if (iq_buf_add(o, tb->text.p + tb->cite_off, tb->cite_len) ||
			    iq_buf_addc(o, '\n') ||
			    iq_buf_add(o, tb->text.p, tb->cite_off - 1) ||
			    iq_buf_add(o, tb->text.p + after, tb->text.len - after))
				return IQ_ERR_NOMEM;
			r.text = iq_str_make(o->p, o->len);
			r.first_line = tb->line;
			r.line = tb->cite_line;
			r.ts = tb->cite_ts;
			r.how = tb->cite_how;
			r.ts_raw = iq_str_make(tb->cite_ts_raw.p, tb->cite_ts_raw.len);
			r.quote = iq_str_make(tb->cite_quote.p, tb->cite_quote.len);
		}
		tb->state = TB_NONE;
		rc = emit(u, &r);
	}
	if (tb->has_held) {
		tb->has_held = 0;
		tb->held.text = iq_str_make(tb->held_text.p, tb->held_text.len);
		tb->held.ts_raw = iq_str_make(tb->held_ts_raw.p, tb->held_ts_raw.len);
		int rc2 = emit(u, &tb->held);
		if (!rc)
			rc = rc2;
	}
	return rc;
}

long iq_tb_pending_line(const struct iq_tb *tb)
{
	return tb->state != TB_NONE ? tb->line : LONG_MAX;
}

/* Joins the held blank line, then l. */
static int append_held(struct iq_tb *tb, const struct iq_tb_line *l)
{
	if (tb->has_held) {
		tb->held.text = iq_str_make(tb->held_text.p, tb->held_text.len);
		int rc = append(tb, &tb->held);
		if (rc)
			return rc;
		tb->has_held = 0;
	}
	return append(tb, l);
}

/* Does the line end with the traceback header? It may follow a message
 * ("EngineCore hit an exception: Traceback (most recent call last):"),
 * but the frames must follow on lines of their own: a header inside a
 * line (a JSON record's "exc_info":"Traceback ...\n  File ...") is the
 * whole traceback in one record already. */
static int header_ends(const char *s, size_t n)
{
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	return n >= sizeof header - 1 && memcmp(s + n - (sizeof header - 1), header, sizeof header - 1) == 0;
}

int iq_tb_feed(struct iq_tb *tb, const struct iq_tb_line *l, iq_tb_emit_fn emit, void *u)
{
	if (tb->state == TB_NONE)
		return header_ends(l->text.p, l->text.n) ? start(tb, l) : emit(u, l);
	const char *s = l->text.p;
	size_t n = l->text.n, tl;
	iq_tb_wrapper_len(s, n, &tl);
	if (tl != tb->tags.len || memcmp(s, tb->tags.p, tl) != 0) {
		/* another process writing to the same stream */
		if (++tb->foreign <= MAX_FOREIGN)
			return emit(u, l);
		int rc = iq_tb_flush(tb, emit, u);
		return rc ? rc : iq_tb_feed(tb, l, emit, u);
	}
	tb->foreign = 0;
	int rc = 1;  /* 1: l ends the traceback */
	if (n >= tb->prefix.len && memcmp(s, tb->prefix.p, tb->prefix.len) == 0) {
		enum body b = classify(s + tb->prefix.len, n - tb->prefix.len);
		switch (tb->state) {
		case TB_FRAMES:
			if (b == B_INDENT) {
				rc = append(tb, l);
			} else if (b == B_EXC) {
				rc = append(tb, l);
				if (rc == 0) {
					tb->state = TB_AFTER_EXC;
					if (!tb->cite_line && cite(tb, l))
						return IQ_ERR_NOMEM;
				}
			}
			break;
		case TB_AFTER_EXC:
			if (b == B_BLANK && !tb->has_held) {
				if (copy_line(&tb->held_text, &tb->held_ts_raw, l))
					return IQ_ERR_NOMEM;
				tb->held = *l;
				tb->held.quote = IQ_STR_NULL;
				tb->has_held = 1;
				rc = 0;
			} else if (b == B_CHAIN) {
				rc = append_held(tb, l);
				if (rc == 0)
					tb->state = TB_CHAIN;
			} else if ((b == B_INDENT || b == B_HINT) && !tb->has_held) {
				rc = append(tb, l);
			}
			break;
		case TB_CHAIN:
			if (b == B_BLANK) {
				rc = append(tb, l);
			} else if (b == B_HEADER) {
				rc = append(tb, l);
				if (rc == 0)
					tb->state = TB_FRAMES;
			}
			break;
		default:
			break;
		}
	}
	if (rc <= 0)
		return rc;
	rc = iq_tb_flush(tb, emit, u);
	return rc ? rc : iq_tb_feed(tb, l, emit, u);
}
