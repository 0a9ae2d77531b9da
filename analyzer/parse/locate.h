/* locate.h: the line and verbatim text of a member of a JSON or YAML
 * object, for the quotes of structured records (locate.c). */
#ifndef IQ_LOCATE_H
#define IQ_LOCATE_H

#include "parse.h"

/* One step of a path: a member's key, or (key NULL) an array index. */
struct iq_jpath {
	const char *key;
	long index;
};

/* Finds the member at path[0..len) in the JSON object s[0..n): *beg is
 * where it starts (its key's opening quote, or an element's first byte),
 * *end just past its value. Tolerant: it finds, it does not validate.
 * Returns 0, or -1 when there is no such member. */
int iq_json_locate(const char *s, size_t n, const struct iq_jpath *path, size_t len, size_t *beg,
		   size_t *end);

/* The same in a block-style YAML document s[0..n) (kubectl -o yaml):
 * *beg is the member's key (or an element's "-"), *end its line's end. */
int iq_yaml_locate(const char *s, size_t n, const struct iq_jpath *path, size_t len, size_t *beg,
		   size_t *end);

/* Fills q: the line of s[beg] (the object's first line being first_line,
 * its lines joined by '\n'), and s[beg..end) cut at that line's end, as
 * the verbatim text; what names the field (a literal). */
void iq_quote_make(struct iq_quote *q, const char *what, const char *s, size_t n, long first_line, size_t beg,
		   size_t end);

/* Quotes the member at path[0..len) of a JSON object whose text raw
 * starts on line first (its lines joined by '\n'): 1 with q filled, 0
 * when the member is not written there. */
int iq_quote_member(struct iq_quote *q, const char *what, struct iq_str raw, long first,
		    const struct iq_jpath *path, size_t len);

#endif
