/* locate.c: where in a structured record's own text a value is written,
 * so that evidence quotes the line that says it (a JSON event's "message",
 * a container status's "reason") instead of a restatement. The parsers of
 * JSON and YAML objects keep the object's bytes (its lines joined by '\n')
 * while they emit its records; these functions find a member by its path
 * in them and cut the quote out of its line. */
#include <string.h>

#include "locate.h"

static size_t ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
		i++;
	return i;
}

/* At s[i] == '"': the index past the closing quote, or n. */
static size_t str_end(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return n;
}

/* The index past the JSON value at s[i], or n when it does not end. */
static size_t value_end(const char *s, size_t n, size_t i)
{
	if (i >= n)
		return n;
	if (s[i] == '"')
		return str_end(s, n, i);
	if (s[i] == '{' || s[i] == '[') {
		long depth = 0;
		while (i < n) {
			char c = s[i];
			if (c == '"') {
				i = str_end(s, n, i);
				continue;
			}
			if (c == '{' || c == '[')
				depth++;
			else if ((c == '}' || c == ']') && --depth == 0)
				return i + 1;
			i++;
		}
		return n;
	}
	while (i < n && !strchr(",}] \t\r\n", s[i]))
		i++;
	return i;
}

int iq_json_locate(const char *s, size_t n, const struct iq_jpath *path, size_t len, size_t *beg,
		   size_t *end)
{
	size_t i = ws(s, n, 0);
	size_t mbeg = i;   /* where the member (key or element) being followed starts */
	for (size_t d = 0; d < len; d++) {
		if (i >= n)
			return -1;
		if (path[d].key) {
			if (s[i] != '{')
				return -1;
			i = ws(s, n, i + 1);
			size_t kl = strlen(path[d].key);
			for (;;) {
				if (i >= n || s[i] != '"')
					return -1;
				size_t ke = str_end(s, n, i);
				int hit = ke - i == kl + 2 && memcmp(s + i + 1, path[d].key, kl) == 0;
				size_t kb = i;
				i = ws(s, n, ke);
				if (i >= n || s[i] != ':')
					return -1;
				i = ws(s, n, i + 1);
				if (hit) {
					mbeg = kb;
					break;
				}
				i = ws(s, n, value_end(s, n, i));
				if (i >= n || s[i] != ',')
					return -1;
				i = ws(s, n, i + 1);
			}
		} else {
			if (s[i] != '[')
				return -1;
			i = ws(s, n, i + 1);
			for (long k = 0;; k++) {
				if (i >= n || s[i] == ']')
					return -1;
				if (k == path[d].index) {
					mbeg = i;
					break;
				}
				i = ws(s, n, value_end(s, n, i));
				if (i >= n || s[i] != ',')
					return -1;
				i = ws(s, n, i + 1);
			}
		}
	}
	size_t e = value_end(s, n, i);
	if (e > n || e <= i)
		return -1;
	*beg = mbeg;
	*end = e;
	return 0;
}

static size_t line_end(const char *s, size_t n, size_t i)
{
	const char *nl = i < n ? memchr(s + i, '\n', n - i) : NULL;
	return nl ? (size_t)(nl - s) : n;
}

static size_t line_start(const char *s, size_t i)
{
	while (i > 0 && s[i - 1] != '\n')
		i--;
	return i;
}

/* Does text at s[b..e) begin with key (plain or quoted) and ':' ending
 * there or followed by a space? */
static int yaml_key(const char *s, size_t b, size_t e, const char *key)
{
	size_t kl = strlen(key), q = b < e && (s[b] == '"' || s[b] == '\'') ? 1 : 0;
	size_t k = b + q + kl + q;
	if (k >= e || memcmp(s + b + q, key, kl) != 0 || (q && s[k - 1] != s[b]))
		return 0;
	return s[k] == ':' && (k + 1 == e || s[k + 1] == ' ');
}

/* A block of a YAML document: its entries start at column col, the first
 * at offset at (which may be inside a line, after a "- "). */
struct yscope {
	size_t at, col;
};

/* The next entry's start after the line of offset i that is in the
 * scope (column == sc->col), or n when the scope ends first. */
static size_t next_entry(const char *s, size_t n, const struct yscope *sc, size_t i)
{
	for (size_t at = line_end(s, n, i); at < n;) {
		at++;
		size_t le = line_end(s, n, at), b = at;
		while (b < le && s[b] == ' ')
			b++;
		if (b == le || s[b] == '#') {
			at = le;
			continue;
		}
		if (b - at < sc->col)
			return n;
		if (b - at == sc->col)
			return b;
		at = le;
	}
	return n;
}

/* The block under the entry at offset e (its value, on the following
 * lines): the first non-blank line's indentation, deeper than the entry,
 * or as deep for a sequence written at its key's column. */
static int child_scope(const char *s, size_t n, size_t e, size_t ecol, struct yscope *out)
{
	for (size_t at = line_end(s, n, e); at < n;) {
		at++;
		size_t le = line_end(s, n, at), b = at;
		while (b < le && s[b] == ' ')
			b++;
		if (b == le || s[b] == '#') {
			at = le;
			continue;
		}
		if (b - at > ecol || (b - at == ecol && s[b] == '-')) {
			out->at = b;
			out->col = b - at;
			return 0;
		}
		return -1;
	}
	return -1;
}

int iq_yaml_locate(const char *s, size_t n, const struct iq_jpath *path, size_t len, size_t *beg,
		   size_t *end)
{
	struct yscope sc;
	size_t b = 0;
	while (b < n && (s[b] == ' ' || s[b] == '\n' || s[b] == '\r'))
		b++;
	/* one element of a List ("- apiVersion: v1"): the mapping after it */
	if (b + 1 < n && s[b] == '-' && s[b + 1] == ' ') {
		b++;
		while (b < n && s[b] == ' ')
			b++;
	}
	sc.at = b;
	sc.col = b - line_start(s, b);
	size_t hit = n;
	for (size_t d = 0; d < len; d++) {
		hit = n;
		if (path[d].key) {
			for (size_t e = sc.at; e < n; e = next_entry(s, n, &sc, e)) {
				if (s[e] == '-')
					continue;  /* a sequence written at its key's column */
				if (yaml_key(s, e, line_end(s, n, e), path[d].key)) {
					hit = e;
					break;
				}
			}
		} else {
			long k = 0;
			for (size_t e = sc.at; e < n; e = next_entry(s, n, &sc, e)) {
				if (s[e] != '-')
					return -1;
				if (k++ == path[d].index) {
					hit = e;
					break;
				}
			}
		}
		if (hit == n)
			return -1;
		if (d + 1 == len)
			break;
		if (!path[d].key) {
			/* the element: its first entry follows the "- " */
			size_t t = hit + 1, le = line_end(s, n, hit);
			while (t < le && s[t] == ' ')
				t++;
			if (t < le) {
				sc.at = t;
				sc.col = t - line_start(s, t);
				continue;
			}
		}
		if (child_scope(s, n, hit, hit - line_start(s, hit), &sc))
			return -1;
	}
	*beg = hit;
	*end = line_end(s, n, hit);
	return 0;
}

int iq_quote_member(struct iq_quote *q, const char *what, struct iq_str raw, long first,
		    const struct iq_jpath *path, size_t len)
{
	size_t b, e;
	if (!raw.n || iq_json_locate(raw.p, raw.n, path, len, &b, &e))
		return 0;
	iq_quote_make(q, what, raw.p, raw.n, first, b, e);
	return q->text.n > 0;
}

void iq_quote_make(struct iq_quote *q, const char *what, const char *s, size_t n, long first_line, size_t beg,
		   size_t end)
{
	long line = first_line;
	for (size_t i = 0; i < beg && i < n; i++)
		line += s[i] == '\n';
	size_t le = line_end(s, n, beg);
	if (end > le)
		end = le;
	/* a member that ends the line takes its comma along no further */
	while (end > beg && (s[end - 1] == ' ' || s[end - 1] == '\r'))
		end--;
	q->line = line;
	q->text = iq_str_make(s + beg, end - beg);
	q->what = what;
}
