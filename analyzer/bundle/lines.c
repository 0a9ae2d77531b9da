/* lines.c: the line splitter between a member's byte stream and a parser.
 * Lines that fit in the chunk are handed out in place, without copying. */
#include <string.h>

#include "bundle.h"

void iq_lines_init(struct iq_lines *l, size_t max)
{
	iq_buf_init(&l->buf);
	l->lineno = 0;
	l->max = max;
	l->dropping = 0;
	l->nuls = 0;
	l->cut_lines = 0;
	l->nul_bytes = 0;
	l->nul_lines = 0;
}

void iq_lines_release(struct iq_lines *l)
{
	iq_buf_release(&l->buf);
}

/* A run of this many NULs or more is a zeroed block; a NUL or a few
 * inside a line are bytes of that line, kept as they are. */
#define NUL_RUN 8

/* The end of the NUL run at s[i] (s[i] == 0): its first byte past. */
static size_t run_end(const char *s, size_t n, size_t i)
{
	while (i < n && s[i] == '\0')
		i++;
	return i;
}

/* Hands out a line with NUL runs in it: each piece of text between them
 * under the line's number, or the line as empty when it is NULs alone. */
static int emit_pieces(struct iq_lines *l, const char *s, size_t n, int truncated, iq_line_fn fn, void *u)
{
	int any = 0, dropped = 0;
	size_t i = 0, start = 0;
	while (i <= n) {
		size_t e = i < n && s[i] == '\0' ? run_end(s, n, i) : i;
		if (i < n && e - i < NUL_RUN) {
			i = e > i ? e : i + 1;
			continue;
		}
		/* a piece ends at a long run or at the end of the line */
		size_t len = i - start;
		if (len && s[start + len - 1] == '\r')
			len--;
		if (len) {
			int rc = fn(u, l->lineno, s + start, len, truncated);
			if (rc)
				return rc;
			any = 1;
		}
		if (i == n)
			break;
		l->nul_bytes += (long)(e - i);
		dropped = 1;
		start = i = e;
	}
	l->nul_lines += dropped;
	return any ? 0 : fn(u, l->lineno, s, 0, IQ_LINE_NUL);
}

static int emit(struct iq_lines *l, const char *s, size_t n, int truncated,
		iq_line_fn fn, void *u)
{
	l->lineno++;
	if (l->nuls && memchr(s, '\0', n))
		return emit_pieces(l, s, n, truncated, fn, u);
	if (n && s[n - 1] == '\r')
		n--;
	return fn(u, l->lineno, s, n, truncated);
}

int iq_lines_feed(struct iq_lines *l, const char *p, size_t n, iq_line_fn fn, void *u)
{
	/* one look per chunk keeps text without NULs on the fast path */
	if (!l->nuls && n && memchr(p, '\0', n))
		l->nuls = 1;
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;
		int rc = 0;
		if (l->dropping) {
			if (nl)
				l->dropping = 0;
		} else if (nl && l->buf.len == 0 && take <= l->max) {
			rc = emit(l, p, take, 0, fn, u);
		} else {
			size_t room = l->max > l->buf.len ? l->max - l->buf.len : 0;
			size_t add = take < room ? take : room;
			if (add && iq_buf_add(&l->buf, p, add))
				return IQ_ERR_NOMEM;
			if (take > add) {
				/* the line is over the cap: hand out its head now */
				l->cut_lines++;
				rc = emit(l, l->buf.p, l->buf.len, IQ_LINE_CUT, fn, u);
				iq_buf_reset(&l->buf);
				l->dropping = nl == NULL;
			} else if (nl) {
				rc = emit(l, l->buf.p, l->buf.len, 0, fn, u);
				iq_buf_reset(&l->buf);
			}
		}
		if (rc)
			return rc;
		if (!nl)
			break;
		take++;
		p += take;
		n -= take;
	}
	return 0;
}

int iq_lines_finish(struct iq_lines *l, iq_line_fn fn, void *u)
{
	int rc = 0;
	if (l->buf.len && !l->dropping)
		rc = emit(l, l->buf.p, l->buf.len, 0, fn, u);
	iq_buf_reset(&l->buf);
	l->dropping = 0;
	return rc;
}
