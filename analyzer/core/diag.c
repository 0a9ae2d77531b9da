/* diag.c: error and warning messages, and escaping of bundle text for the
 * terminal. */
#include <stdarg.h>
#include <string.h>

#include "iq.h"

int iq_diag_set(struct iq_diag *d, int err, const char *fmt, ...)
{
	if (d) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(d->msg, sizeof d->msg, fmt, ap);
		va_end(ap);
	}
	return err;
}

void iq_errorf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("inquest: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void iq_warnf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("inquest: warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
size_t iq_utf8_len(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return 1;
	size_t len;
	unsigned min;
	unsigned cp;
	if ((s[0] & 0xE0) == 0xC0) {
		len = 2; min = 0x80; cp = s[0] & 0x1F;
	} else if ((s[0] & 0xF0) == 0xE0) {
		len = 3; min = 0x800; cp = s[0] & 0x0F;
	} else if ((s[0] & 0xF8) == 0xF0) {
		len = 4; min = 0x10000; cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

void iq_escape_display(char *out, size_t outsz, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	const unsigned char *u = (const unsigned char *)s;
	if (outsz == 0)
		return;
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		char tmp[5];
		const char *add = tmp;
		size_t alen;
		size_t ulen = iq_utf8_len(u + i, n - i);
		if (c == '\\') {
			add = "\\\\"; alen = 2; ulen = 1;
		} else if (c == '\t') {
			add = "\\t"; alen = 2; ulen = 1;
		} else if (c == '\n') {
			add = "\\n"; alen = 2; ulen = 1;
		} else if (c == '\r') {
			add = "\\r"; alen = 2; ulen = 1;
		} else if (c < 0x20 || c == 0x7F || ulen == 0) {
			tmp[0] = '\\'; tmp[1] = 'x'; tmp[2] = hex[c >> 4]; tmp[3] = hex[c & 15];
			alen = 4; ulen = 1;
		} else if (ulen == 2 && c == 0xC2 && u[i + 1] < 0xA0) {
			/* C1 control characters (U+0080..U+009F) can drive terminals. */
			tmp[0] = '\\'; tmp[1] = 'x'; tmp[2] = hex[u[i + 1] >> 4]; tmp[3] = hex[u[i + 1] & 15];
			alen = 4;
		} else {
			add = s + i; alen = ulen;
		}
		if (o + alen + 1 > outsz)
			break;
		memcpy(out + o, add, alen);
		o += alen;
		i += ulen;
	}
	out[o] = '\0';
}
