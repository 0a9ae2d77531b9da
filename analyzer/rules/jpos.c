/* jpos.c: where a value sits in a JSON text. jansson gives positions only
 * for syntax errors; semantic errors in a rule pack (a bad regex, an unknown
 * key) need the line and column of a value, so this small scanner walks the
 * raw text along a path such as signals[2].patterns[0]. */
#include <stdlib.h>
#include <string.h>

#include "rules_int.h"

struct scan {
	const char *s;
	size_t n, i;
};

static void ws(struct scan *sc)
{
	while (sc->i < sc->n && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' ||
				 sc->s[sc->i] == '\n' || sc->s[sc->i] == '\r'))
		sc->i++;
}

/* Skips a string starting at its quote; -1 if unterminated. */
static int skip_string(struct scan *sc)
{
	if (sc->i >= sc->n || sc->s[sc->i] != '"')
		return -1;
	for (sc->i++; sc->i < sc->n; sc->i++) {
		if (sc->s[sc->i] == '\\')
			sc->i++;
		else if (sc->s[sc->i] == '"') {
			sc->i++;
			return 0;
		}
	}
	return -1;
}

/* Skips any value; -1 on malformed text. Depth-limited. */
static int skip_value(struct scan *sc, int depth)
{
	ws(sc);
	if (sc->i >= sc->n || depth > 256)
		return -1;
	char c = sc->s[sc->i];
	if (c == '"')
		return skip_string(sc);
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		sc->i++;
		ws(sc);
		if (sc->i < sc->n && sc->s[sc->i] == close) {
			sc->i++;
			return 0;
		}
		for (;;) {
			if (c == '{') {
				ws(sc);
				if (skip_string(sc))
					return -1;
				ws(sc);
				if (sc->i >= sc->n || sc->s[sc->i] != ':')
					return -1;
				sc->i++;
			}
			if (skip_value(sc, depth + 1))
				return -1;
			ws(sc);
			if (sc->i >= sc->n)
				return -1;
			if (sc->s[sc->i] == ',') {
				sc->i++;
				continue;
			}
			if (sc->s[sc->i] == close) {
				sc->i++;
				return 0;
			}
			return -1;
		}
	}
	while (sc->i < sc->n && !strchr(",}] \t\r\n", sc->s[sc->i]))
		sc->i++;
	return 0;
}

/* Does the string at sc->i (its quote) spell key (length kn)? Handles the
 * escapes a key may plausibly hold. */
static int key_is(const struct scan *sc, const char *key, size_t kn)
{
	size_t i = sc->i + 1, k = 0;
	while (i < sc->n && sc->s[i] != '"') {
		char c = sc->s[i];
		if (c == '\\' && i + 1 < sc->n) {
			c = sc->s[++i];
			if (c == 'n')
				c = '\n';
			else if (c == 't')
				c = '\t';
		}
		if (k >= kn || key[k] != c)
			return 0;
		k++;
		i++;
	}
	return k == kn;
}

/* Walks path from the value at sc->i; leaves sc->i at the target. */
static int walk(struct scan *sc, const char *path, int key, int depth)
{
	ws(sc);
	if (!*path || depth > 256)
		return *path ? -1 : 0;
	if (*path == '.')
		path++;
	if (sc->i >= sc->n)
		return -1;
	if (*path == '[') {
		char *end;
		unsigned long idx = strtoul(path + 1, &end, 10);
		if (*end != ']' || sc->s[sc->i] != '[')
			return -1;
		path = end + 1;
		sc->i++;
		for (unsigned long k = 0;; k++) {
			ws(sc);
			if (sc->i >= sc->n || sc->s[sc->i] == ']')
				return -1;
			if (k == idx)
				return walk(sc, path, key, depth + 1);
			if (skip_value(sc, depth + 1))
				return -1;
			ws(sc);
			if (sc->i >= sc->n || sc->s[sc->i] != ',')
				return -1;
			sc->i++;
		}
	}
	size_t kn = strcspn(path, ".[");
	if (sc->s[sc->i] != '{')
		return -1;
	sc->i++;
	for (;;) {
		ws(sc);
		if (sc->i >= sc->n || sc->s[sc->i] != '"')
			return -1;
		size_t at = sc->i;
		int hit = key_is(sc, path, kn);
		if (skip_string(sc))
			return -1;
		if (hit && key && !path[kn]) {
			sc->i = at;
			return 0;
		}
		ws(sc);
		if (sc->i >= sc->n || sc->s[sc->i] != ':')
			return -1;
		sc->i++;
		if (hit)
			return walk(sc, path + kn, key, depth + 1);
		if (skip_value(sc, depth + 1))
			return -1;
		ws(sc);
		if (sc->i >= sc->n || sc->s[sc->i] != ',')
			return -1;
		sc->i++;
	}
}

int iq_json_pos(const char *text, size_t n, const char *path, int key, int *line, int *col)
{
	struct scan sc = {text, n, 0};
	*line = 1;
	*col = 1;
	if (!text || walk(&sc, path ? path : "", key, 0))
		return -1;
	ws(&sc);
	for (size_t i = 0; i < sc.i && i < n; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '\n') {
			(*line)++;
			*col = 1;
		} else if ((c & 0xC0) != 0x80) {
			(*col)++;
		}
	}
	return 0;
}
