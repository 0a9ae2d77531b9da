/* html.c: postmortem.html, the postmortem as one self-contained page:
 * the Markdown that md.c wrote, turned into HTML by a reader of exactly
 * the Markdown md.c writes (headings, paragraphs, lists, task items,
 * quotes, GFM tables, fenced code, code spans, strong, emphasis, links to
 * #anchors, our evidence anchors), with the SVG charts inline and no
 * Mermaid. Nothing from a bundle can become markup: md.c escaped it, and
 * here every character is escaped again for HTML except the few
 * constructs above; a Content-Security-Policy forbids scripts and any
 * request the page could make. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"

struct html {
	FILE *out;
	const char *charts_dir;
	int in_table;          /* '\|' in a code span is '|' (GFM tables) */
};

static void esc_char(FILE *out, char c)
{
	switch (c) {
	case '<': fputs("&lt;", out); break;
	case '>': fputs("&gt;", out); break;
	case '&': fputs("&amp;", out); break;
	case '"': fputs("&quot;", out); break;
	case '\'': fputs("&#39;", out); break;
	default: fputc(c, out);
	}
}

static void esc_n(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		esc_char(out, s[i]);
}

static int is_punct(char c)
{
	return c && strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) != NULL;
}

/* An entity md.c writes (&lt; &gt; &amp; &quot; &#39;, or any named or
 * numeric one): its length, else 0. */
static size_t entity_len(const char *s, size_t n)
{
	size_t i = 1;
	if (n < 3 || s[0] != '&')
		return 0;
	if (s[1] == '#') {
		for (i = 2; i < n && i < 10 && isdigit((unsigned char)s[i]); i++)
			;
		return i > 2 && i < n && s[i] == ';' ? i + 1 : 0;
	}
	for (; i < n && i < 12 && isalpha((unsigned char)s[i]); i++)
		;
	return i > 1 && i < n && s[i] == ';' ? i + 1 : 0;
}

static void inline_md(struct html *h, const char *s, size_t n);

/* A code span's content: literal, one space stripped at each end when
 * both have one, '\|' as '|' inside a table. */
static void code_span(struct html *h, const char *s, size_t n)
{
	if (n >= 2 && s[0] == ' ' && s[n - 1] == ' ' && strspn(s, " ") < n) {
		s++;
		n -= 2;
	}
	fputs("<code>", h->out);
	for (size_t i = 0; i < n; i++) {
		if (h->in_table && s[i] == '\\' && i + 1 < n && s[i + 1] == '|')
			continue;
		esc_char(h->out, s[i]);
	}
	fputs("</code>", h->out);
}

/* Inserts the chart charts/NAME.svg (written by charts.c) inline. */
static void svg_inline(struct html *h, const char *src, size_t n, const char *alt, size_t an)
{
	char name[80];
	const char *slash = memchr(src, '/', n);
	const char *base = slash ? slash + 1 : src;
	size_t bn = n - (size_t)(base - src);
	int ok = h->charts_dir && bn > 4 && bn < sizeof name && memcmp(base + bn - 4, ".svg", 4) == 0;
	for (size_t i = 0; ok && i < bn - 4; i++)
		ok = islower((unsigned char)base[i]) || isdigit((unsigned char)base[i]) || base[i] == '-';
	char *svg = NULL;
	if (ok) {
		snprintf(name, sizeof name, "%.*s", (int)bn, base);
		size_t pl = strlen(h->charts_dir) + bn + 2;
		char *path = iq_xmalloc(pl);
		snprintf(path, pl, "%s/%s", h->charts_dir, name);
		FILE *f = fopen(path, "rb");
		free(path);
		if (f) {
			struct iq_buf b;
			iq_buf_init(&b);
			char tmp[8192];
			size_t r;
			while ((r = fread(tmp, 1, sizeof tmp, f)) > 0)
				iq_buf_add(&b, tmp, r);
			fclose(f);
			svg = b.p;
		}
	}
	fputs("<figure>", h->out);
	const char *start = svg ? strstr(svg, "<svg") : NULL;
	if (start) {
		/* the file's XML declaration has no place inside HTML */
		fputs(start, h->out);
	} else {
		fputs("<p class=\"missing\">", h->out);
		esc_n(h->out, alt, an);
		fputs("</p>", h->out);
	}
	fputs("<figcaption>", h->out);
	inline_md(h, alt, an);
	fputs("</figcaption></figure>", h->out);
	free(svg);
}

/* Finds the closing delimiter d (run of len k) from s[i]; returns its
 * index or (size_t)-1. */
static size_t find_run(const char *s, size_t n, size_t i, char d, size_t k)
{
	while (i < n) {
		if (s[i] == '\\' && d != '`') {
			i += 2;
			continue;
		}
		if (s[i] == d) {
			size_t j = i;
			while (j < n && s[j] == d)
				j++;
			if (j - i == k)
				return i;
			i = j;
			continue;
		}
		i++;
	}
	return (size_t)-1;
}

static void inline_md(struct html *h, const char *s, size_t n)
{
	FILE *out = h->out;
	for (size_t i = 0; i < n;) {
		char c = s[i];
		if (c == '\\' && i + 1 < n && is_punct(s[i + 1])) {
			esc_char(out, s[i + 1]);
			i += 2;
			continue;
		}
		if (c == '&') {
			size_t el = entity_len(s + i, n - i);
			if (el) {
				fwrite(s + i, 1, el, out);
				i += el;
			} else {
				fputs("&amp;", out);
				i++;
			}
			continue;
		}
		if (c == '`') {
			size_t k = 0;
			while (i + k < n && s[i + k] == '`')
				k++;
			size_t e = find_run(s, n, i + k, '`', k);
			if (e != (size_t)-1) {
				code_span(h, s + i + k, e - i - k);
				i = e + k;
			} else {
				esc_n(out, s + i, k);
				i += k;
			}
			continue;
		}
		if (c == '*' && i + 1 < n && s[i + 1] == '*') {
			size_t e = find_run(s, n, i + 2, '*', 2);
			if (e != (size_t)-1 && e > i + 2) {
				fputs("<strong>", out);
				inline_md(h, s + i + 2, e - i - 2);
				fputs("</strong>", out);
				i = e + 2;
				continue;
			}
		}
		if (c == '_' && i + 1 < n && s[i + 1] != ' ' && (i == 0 || s[i - 1] == ' ' || is_punct(s[i - 1]))) {
			/* emphasis: a closer not after a space, before an end, a space or punctuation */
			size_t e = i + 1;
			while ((e = find_run(s, n, e, '_', 1)) != (size_t)-1) {
				if (s[e - 1] != ' ' && (e + 1 == n || s[e + 1] == ' ' || is_punct(s[e + 1])))
					break;
				e++;
			}
			if (e != (size_t)-1) {
				fputs("<em>", out);
				inline_md(h, s + i + 1, e - i - 1);
				fputs("</em>", out);
				i = e + 1;
				continue;
			}
		}
		if ((c == '[' || (c == '!' && i + 1 < n && s[i + 1] == '['))) {
			/* [text](#anchor), and ![alt](charts/x.svg) of our charts */
			size_t t0 = i + (c == '!' ? 2 : 1);
			size_t t1 = find_run(s, n, t0, ']', 1);
			if (t1 != (size_t)-1 && t1 + 1 < n && s[t1 + 1] == '(') {
				const char *cp = memchr(s + t1 + 2, ')', n - t1 - 2);
				if (cp) {
					const char *href = s + t1 + 2;
					size_t hn = (size_t)(cp - href);
					int anchor = hn > 1 && href[0] == '#' && strspn(href + 1, "abcdefghijklmnopqrstuvwxyz0123456789-") >= hn - 1;
					if (c == '!') {
						svg_inline(h, href, hn, s + t0, t1 - t0);
						i = (size_t)(cp - s) + 1;
						continue;
					}
					if (anchor) {
						fputs("<a href=\"", out);
						esc_n(out, href, hn);
						fputs("\">", out);
						inline_md(h, s + t0, t1 - t0);
						fputs("</a>", out);
						i = (size_t)(cp - s) + 1;
						continue;
					}
				}
			}
		}
		if (c == '<') {
			/* the evidence table's anchors, <a id="e12"></a>, are ours */
			static const char pre[] = "<a id=\"e";
			if (n - i > sizeof pre && memcmp(s + i, pre, sizeof pre - 1) == 0) {
				size_t d = i + sizeof pre - 1, k = d;
				while (k < n && isdigit((unsigned char)s[k]))
					k++;
				if (k > d && n - k >= 6 && memcmp(s + k, "\"></a>", 6) == 0) {
					fwrite(s + i, 1, k + 6 - i, out);
					i = k + 6;
					continue;
				}
			}
		}
		esc_char(out, c);
		i++;
	}
}

/* Splits a table row into cells on '|' not escaped, not in a code span. */
static size_t cells(const char *s, size_t n, const char **cs, size_t *cn, size_t max)
{
	size_t k = 0, i = 0;
	while (i < n && s[i] == ' ')
		i++;
	if (i < n && s[i] == '|')
		i++;
	size_t start = i;
	int code = 0;
	for (; i <= n && k < max; i++) {
		if (i < n && s[i] == '\\') {
			i++;
			continue;
		}
		if (i < n && s[i] == '`')
			code = !code;
		if (i == n || (s[i] == '|' && !code)) {
			size_t a = start, b = i;
			while (a < b && s[a] == ' ')
				a++;
			while (b > a && s[b - 1] == ' ')
				b--;
			if (i < n || b > a) {
				cs[k] = s + a;
				cn[k++] = b - a;
			}
			start = i + 1;
		}
	}
	return k;
}

#define MAXCOLS 16

static void table(struct html *h, const char **lines, const size_t *lens, size_t nl)
{
	const char *cs[MAXCOLS];
	size_t cn[MAXCOLS];
	char align[MAXCOLS] = {0};
	size_t na = nl > 1 ? cells(lines[1], lens[1], cs, cn, MAXCOLS) : 0;
	for (size_t k = 0; k < na; k++)
		align[k] = cn[k] && cs[k][cn[k] - 1] == ':' ? 'r' : 0;
	h->in_table = 1;
	fputs("<table>\n", h->out);
	for (size_t r = 0; r < nl; r++) {
		if (r == 1)
			continue;
		size_t k = cells(lines[r], lens[r], cs, cn, MAXCOLS);
		fputs(r == 0 ? "<thead><tr>" : "<tr>", h->out);
		for (size_t c = 0; c < k; c++) {
			const char *tag = r == 0 ? "th" : "td";
			fprintf(h->out, "<%s%s>", tag, align[c] == 'r' ? " class=\"num\"" : "");
			inline_md(h, cs[c], cn[c]);
			fprintf(h->out, "</%s>", tag);
		}
		fputs(r == 0 ? "</tr></thead>\n<tbody>\n" : "</tr>\n", h->out);
	}
	fputs("</tbody></table>\n", h->out);
	h->in_table = 0;
}

/* A heading's id: its words, lower case, joined by '-'. */
static void slug(FILE *out, const char *s, size_t n)
{
	int dash = 0, any = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (isalnum(c)) {
			if (dash && any)
				fputc('-', out);
			fputc(tolower(c), out);
			dash = 0;
			any = 1;
		} else if (c < 0x80) {
			dash = 1;
		}
	}
}

static const char style[] =
	"body{font-family:system-ui,-apple-system,'DejaVu Sans',Helvetica,Arial,sans-serif;max-width:1180px;"
	"margin:2em auto;padding:0 1em;line-height:1.45;color:#1b1b1b}"
	"h1{font-size:1.7em;border-bottom:2px solid #ddd;padding-bottom:.3em}"
	"h2{margin-top:1.8em;border-bottom:1px solid #e5e5e5;padding-bottom:.2em}"
	"table{border-collapse:collapse;margin:1em 0;font-size:.92em;display:block;overflow-x:auto}"
	"th,td{border:1px solid #d0d7de;padding:.3em .6em;vertical-align:top;text-align:left}"
	"td.num,th.num{text-align:right}thead th{background:#f3f5f7}"
	"code{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:.9em;background:#f3f5f7;"
	"padding:.05em .3em;border-radius:3px;overflow-wrap:anywhere}"
	"pre{background:#f3f5f7;padding:.8em;overflow-x:auto}pre code{background:none;padding:0}"
	"blockquote{margin:1em 0;padding:.2em 1em;border-left:4px solid #d0d7de;color:#444;overflow-wrap:anywhere}"
	"figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}"
	"figcaption{font-size:.9em;color:#555}li.task{list-style:none}"
	":target{background:#fff6bf}";

int iq_render_html(const char *md, size_t n, const char *lang, const char *charts_dir, FILE *out)
{
	struct html h = {out, charts_dir, 0};
	/* the title: the first heading's text */
	const char *t = n > 2 && md[0] == '#' ? md + 2 : "";
	size_t tn = *t ? strcspn(t, "\n") : 0;
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"%s\">\n<head>\n<meta charset=\"utf-8\">\n"
		     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		     "style-src 'unsafe-inline'\">\n<meta name=\"viewport\" content=\"width=device-width\">\n<title>",
		lang && strcmp(lang, "tr") == 0 ? "tr" : "en");
	for (size_t i = 0; i < tn; i++) {
		/* the title's own text, its escapes undone */
		if (t[i] == '\\' && i + 1 < tn && is_punct(t[i + 1]))
			i++;
		if (t[i] != '`')
			esc_char(out, t[i]);
	}
	fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n", style);
	const char *p = md, *end = md + n;
	const char **tl = NULL;
	size_t *tlen = NULL, tcap = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *next = nl ? nl + 1 : end;
		if (len == 0) {
			p = next;
			continue;
		}
		if (len >= 3 && memcmp(p, "```", 3) == 0) {
			/* a fence: Mermaid is drawn as SVG already; the rest as code */
			int mermaid = len >= 10 && memcmp(p + 3, "mermaid", 7) == 0;
			const char *q = next;
			if (!mermaid)
				fputs("<pre><code>", out);
			while (q < end) {
				const char *qn = memchr(q, '\n', (size_t)(end - q));
				size_t ql = qn ? (size_t)(qn - q) : (size_t)(end - q);
				if (ql >= 3 && memcmp(q, "```", 3) == 0) {
					q = qn ? qn + 1 : end;
					break;
				}
				if (!mermaid) {
					esc_n(out, q, ql);
					fputc('\n', out);
				}
				q = qn ? qn + 1 : end;
			}
			if (!mermaid)
				fputs("</code></pre>\n", out);
			p = q;
			continue;
		}
		if (p[0] == '#') {
			size_t lv = strspn(p, "#");
			if (lv <= 6 && lv < len && p[lv] == ' ') {
				fprintf(out, "<h%zu id=\"", lv);
				slug(out, p + lv + 1, len - lv - 1);
				fputs("\">", out);
				inline_md(&h, p + lv + 1, len - lv - 1);
				fprintf(out, "</h%zu>\n", lv);
				p = next;
				continue;
			}
		}
		if (p[0] == '|') {
			size_t k = 0;
			const char *q = p;
			while (q < end && *q == '|') {
				const char *qn = memchr(q, '\n', (size_t)(end - q));
				if (k == tcap) {
					tcap = tcap ? tcap * 2 : 64;
					tl = iq_xrealloc(tl, tcap * sizeof *tl);
					tlen = iq_xrealloc(tlen, tcap * sizeof *tlen);
				}
				tl[k] = q;
				tlen[k++] = qn ? (size_t)(qn - q) : (size_t)(end - q);
				q = qn ? qn + 1 : end;
			}
			table(&h, tl, tlen, k);
			p = q;
			continue;
		}
		if (len >= 2 && p[0] == '-' && p[1] == ' ') {
			fputs("<ul>\n", out);
			while (end - p >= 2 && p[0] == '-' && p[1] == ' ') {
				const char *qn = memchr(p, '\n', (size_t)(end - p));
				size_t ql = qn ? (size_t)(qn - p) : (size_t)(end - p);
				if (ql >= 6 && memcmp(p, "- [ ] ", 6) == 0) {
					fputs("<li class=\"task\"><input type=\"checkbox\" disabled> ", out);
					inline_md(&h, p + 6, ql - 6);
				} else {
					fputs("<li>", out);
					inline_md(&h, p + 2, ql - 2);
				}
				fputs("</li>\n", out);
				p = qn ? qn + 1 : end;
			}
			fputs("</ul>\n", out);
			continue;
		}
		if (p[0] == '>') {
			fputs("<blockquote><p>", out);
			while (p < end && p[0] == '>') {
				const char *qn = memchr(p, '\n', (size_t)(end - p));
				size_t ql = qn ? (size_t)(qn - p) : (size_t)(end - p);
				size_t skip = ql > 1 && p[1] == ' ' ? 2 : 1;
				if (ql <= skip)
					fputs("</p><p>", out);
				else
					inline_md(&h, p + skip, ql - skip), fputc('\n', out);
				p = qn ? qn + 1 : end;
			}
			fputs("</p></blockquote>\n", out);
			continue;
		}
		if (len > 4 && p[0] == '!' && p[1] == '[' && p[len - 1] == ')') {
			/* a chart alone in its paragraph: a figure, not inside a <p> */
			inline_md(&h, p, len);
			fputc('\n', out);
			p = next;
			continue;
		}
		/* a paragraph: lines up to a blank one or another block */
		fputs("<p>", out);
		int first = 1;
		while (p < end && *p != '\n' && *p != '|' && *p != '#' && *p != '>' &&
		       !(end - p >= 3 && memcmp(p, "```", 3) == 0) && !(end - p >= 2 && p[0] == '-' && p[1] == ' ')) {
			const char *qn = memchr(p, '\n', (size_t)(end - p));
			size_t ql = qn ? (size_t)(qn - p) : (size_t)(end - p);
			if (!first)
				fputc('\n', out);
			inline_md(&h, p, ql);
			first = 0;
			p = qn ? qn + 1 : end;
		}
		fputs("</p>\n", out);
	}
	free(tl);
	free(tlen);
	fputs("</body>\n</html>\n", out);
	return ferror(out) ? IQ_ERR_INPUT : 0;
}
