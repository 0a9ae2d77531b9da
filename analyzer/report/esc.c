/* esc.c: text from a bundle as inert text in the report's outputs. The
 * bytes are first made printable (invalid UTF-8 as U+FFFD, control
 * characters as their Unicode control pictures, so that no terminal or
 * browser acts on them), then escaped for where they go: Markdown inline
 * text, a Markdown code span, HTML and XML. */
#include <string.h>

#include "report_int.h"

int iq_text_clean(struct iq_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	int rc = 0;
	for (size_t i = 0; i < n && !rc;) {
		unsigned char c = u[i];
		size_t l = iq_utf8_len(u + i, n - i);
		if (c == '\t') {
			rc = iq_buf_addc(b, ' ');
		} else if (c < 0x20) {
			/* U+2400 + c: SYMBOL FOR NULL ... SYMBOL FOR UNIT SEPARATOR */
			char pic[3] = {(char)0xE2, (char)0x90, (char)(0x80 + c)};
			rc = iq_buf_add(b, pic, 3);
		} else if (c == 0x7F) {
			rc = iq_buf_adds(b, "\xE2\x90\xA1"); /* SYMBOL FOR DELETE */
		} else if (l == 0 || (c == 0xC2 && u[i + 1] < 0xA0)) {
			/* invalid UTF-8, or a C1 control (CSI and friends) */
			rc = iq_buf_adds(b, "\xEF\xBF\xBD");
			if (l == 0)
				l = 1;
		} else {
			rc = iq_buf_add(b, s + i, l);
		}
		i += l ? l : 1;
	}
	return rc;
}

/* The part of s shown: up to the first newline and at most max bytes, not
 * splitting a UTF-8 sequence; *cut says whether anything was left out. */
static size_t shown_len(const char *s, size_t n, size_t max, int *cut)
{
	const char *nl = memchr(s, '\n', n);
	size_t len = nl ? (size_t)(nl - s) : n;
	/* a CR before the newline (or a trailing one) says nothing */
	*cut = nl && nl + 1 < s + n;
	while (len > 0 && s[len - 1] == '\r')
		len--;
	if (len > max) {
		len = max;
		while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
			len--;
		*cut = 1;
	}
	return len;
}

static int ci_prefix(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((p[i] | 0x20) != w[i])
			return 0;
	return 1;
}

int iq_md_escape(struct iq_buf *b, const char *s, size_t n, size_t max)
{
	int cut;
	size_t len = shown_len(s, n, max, &cut);
	struct iq_buf c;
	iq_buf_init(&c);
	int rc = iq_text_clean(&c, s, len);
	const char *t = c.p ? c.p : "", *end = t + c.len;
	for (const char *p = t; p < end && !rc; p++) {
		switch (*p) {
		case '|': rc = iq_buf_adds(b, "\\|"); break;
		case '<': rc = iq_buf_adds(b, "&lt;"); break;
		case '>': rc = iq_buf_adds(b, "&gt;"); break;
		case '&': rc = iq_buf_adds(b, "&amp;"); break;
		case '\\': case '`': case '*': case '_': case '[': case ']': case '#': case '~':
		case '$': case '{': case '}':
			rc = iq_buf_addc(b, '\\');
			if (!rc)
				rc = iq_buf_addc(b, *p);
			break;
		case '-': case '+': case '=':
			/* would start a list or a heading underline at the start */
			if (p == t && (p + 1 == end || p[1] == ' ' || *p == '='))
				rc = iq_buf_addc(b, '\\');
			if (!rc)
				rc = iq_buf_addc(b, *p);
			break;
		case '.': case ')': {
			/* "12." at the start would start an ordered list */
			const char *d = p;
			while (d > t && d[-1] >= '0' && d[-1] <= '9')
				d--;
			if (d == t && p > t && (p + 1 == end || p[1] == ' '))
				rc = iq_buf_addc(b, '\\');
			if (!rc)
				rc = iq_buf_addc(b, *p);
			break;
		}
		case ':':
			/* "http://x" and "www.x" are links to GitHub's autolinker */
			if (end - p >= 3 && p[1] == '/' && p[2] == '/' &&
			    ((p - t >= 4 && ci_prefix(p - 4, end, "http")) ||
			     (p - t >= 5 && ci_prefix(p - 5, end, "https")) ||
			     (p - t >= 3 && ci_prefix(p - 3, end, "ftp"))))
				rc = iq_buf_addc(b, '\\');
			if (!rc)
				rc = iq_buf_addc(b, *p);
			break;
		default:
			if ((*p | 0x20) == 'w' && ci_prefix(p, end, "www.")) {
				rc = iq_buf_add(b, p, 3);
				if (!rc)
					rc = iq_buf_adds(b, "\\.");
				p += 3;
				break;
			}
			rc = iq_buf_addc(b, *p);
		}
	}
	iq_buf_release(&c);
	if (!rc && cut)
		rc = iq_buf_adds(b, " …");
	return rc;
}

int iq_md_code(struct iq_buf *b, const char *s, size_t n, size_t max, int in_table)
{
	int cut;
	size_t len = shown_len(s, n, max, &cut);
	struct iq_buf c;
	iq_buf_init(&c);
	int rc = iq_text_clean(&c, s, len);
	const char *t = c.p ? c.p : "";
	size_t tl = c.len;
	if (!tl && !rc)
		rc = iq_buf_addc(&c, ' '), t = c.p, tl = c.len;
	/* a fence one backtick longer than the longest run inside */
	size_t run = 0, longest = 0;
	for (size_t i = 0; i < tl; i++) {
		run = t[i] == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	/* CommonMark strips one space at each end when both ends have one,
	 * and a backtick at an end would join the fence */
	int pad = t[0] == '`' || t[tl - 1] == '`' || (t[0] == ' ' && t[tl - 1] == ' ' && tl > 1);
	for (size_t i = 0; i <= longest && !rc; i++)
		rc = iq_buf_addc(b, '`');
	if (pad && !rc)
		rc = iq_buf_addc(b, ' ');
	for (size_t i = 0; i < tl && !rc; i++)
		rc = in_table && t[i] == '|' ? iq_buf_adds(b, "\\|") : iq_buf_addc(b, t[i]);
	if (pad && !rc)
		rc = iq_buf_addc(b, ' ');
	for (size_t i = 0; i <= longest && !rc; i++)
		rc = iq_buf_addc(b, '`');
	iq_buf_release(&c);
	if (!rc && cut)
		rc = iq_buf_adds(b, " …");
	return rc;
}

int iq_xml_escape(struct iq_buf *b, const char *s, size_t n)
{
	struct iq_buf c;
	iq_buf_init(&c);
	int rc = iq_text_clean(&c, s, n);
	for (size_t i = 0; i < c.len && !rc; i++) {
		switch (c.p[i]) {
		case '<': rc = iq_buf_adds(b, "&lt;"); break;
		case '>': rc = iq_buf_adds(b, "&gt;"); break;
		case '&': rc = iq_buf_adds(b, "&amp;"); break;
		case '"': rc = iq_buf_adds(b, "&quot;"); break;
		case '\'': rc = iq_buf_adds(b, "&#39;"); break;
		default: rc = iq_buf_addc(b, c.p[i]);
		}
	}
	iq_buf_release(&c);
	return rc;
}
