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
	l->cut_lines = 0;
}

void iq_lines_release(struct iq_lines *l)
{
	iq_buf_release(&l->buf);
}

static int emit(struct iq_lines *l, const char *s, size_t n, int truncated,
		iq_line_fn fn, void *u)
{
	if (n && s[n - 1] == '\r')
		n--;
	l->lineno++;
	return fn(u, l->lineno, s, n, truncated);
}

int iq_lines_feed(struct iq_lines *l, const char *p, size_t n, iq_line_fn fn, void *u)
{
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
				rc = emit(l, l->buf.p, l->buf.len, 1, fn, u);
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
