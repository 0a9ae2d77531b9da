/* buf.c: the growable byte buffer and the allocation helpers. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "iq.h"

void iq_buf_init(struct iq_buf *b)
{
	b->p = NULL;
	b->len = 0;
	b->cap = 0;
}

void iq_buf_release(struct iq_buf *b)
{
	free(b->p);
	iq_buf_init(b);
}

void iq_buf_reset(struct iq_buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
}

int iq_buf_reserve(struct iq_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	if (need < b->len)
		return IQ_ERR_NOMEM;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return IQ_ERR_NOMEM;
		cap *= 2;
	}
	char *p = realloc(b->p, cap);
	if (!p)
		return IQ_ERR_NOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

int iq_buf_add(struct iq_buf *b, const void *p, size_t n)
{
	if (iq_buf_reserve(b, n))
		return IQ_ERR_NOMEM;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int iq_buf_addc(struct iq_buf *b, char c)
{
	return iq_buf_add(b, &c, 1);
}

int iq_buf_adds(struct iq_buf *b, const char *s)
{
	return iq_buf_add(b, s, strlen(s));
}

int iq_buf_printf(struct iq_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || iq_buf_reserve(b, (size_t)n))
		return IQ_ERR_NOMEM;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void *iq_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fputs("inquest: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *iq_xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p) {
		fputs("inquest: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *iq_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fputs("inquest: out of memory\n", stderr);
		abort();
	}
	return q;
}

char *iq_xstrndup(const char *s, size_t n)
{
	char *p = iq_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *iq_xstrdup(const char *s)
{
	return iq_xstrndup(s, strlen(s));
}

const void *iq_memmem(const void *hay, size_t hn, const void *needle, size_t nn)
{
	const unsigned char *h = hay;
	const unsigned char *n = needle;
	if (nn == 0)
		return hay;
	while (hn >= nn) {
		const unsigned char *p = memchr(h, n[0], hn - nn + 1);
		if (!p)
			return NULL;
		if (memcmp(p, n, nn) == 0)
			return p;
		hn -= (size_t)(p - h) + 1;
		h = p + 1;
	}
	return NULL;
}
