/* jsonobjs.h: for the parsers of JSON logs: a stream of JSON objects,
 * one per line, pretty-printed over many lines, or the items of a
 * top-level array, cut out of the file as its lines arrive (a string-aware
 * brace tracker; only one object is buffered, at most 16 MiB) and handed
 * to the format as a parsed object with the lines it spans. Lines outside
 * objects are accounted for as blank, "json envelope" or "not json"; runs of
 * them are reported as one skip. */
#ifndef IQ_JSONOBJS_H
#define IQ_JSONOBJS_H

#include <jansson.h>

#include "parse.h"

/* Emits the record(s) of object o, which spans lines first..last (line is
 * the whole line when the object is alone on it, else empty). Returns 0, 1
 * when o is not the format's (its lines are skipped as not_ours), or a
 * negative iq_err. o is borrowed. */
typedef int (*iq_jsobj_fn)(void *owner, const struct iq_parse_ctx *ctx, json_t *o, long first,
			   long last, struct iq_str line);

struct iq_jsobjs {
	iq_jsobj_fn emit;
	void *owner;
	const char *not_ours;   /* skip reason for objects emit refuses */
	/* the tracker */
	long depth;             /* open braces/brackets */
	int in_str, esc;
	int array;              /* a top-level '[' is open: its objects are items */
	/* the object being read */
	int open, broken, too_big;
	long base;              /* depth at which its '{' opened */
	long first;             /* line of that '{' */
	int col0;               /* ... at column 0 */
	struct iq_buf buf;      /* its bytes, when it spans lines */
	long last;              /* last line seen */
	long done;              /* last line a record or skip accounted for */
	/* a run of skipped single lines is reported as one skip */
	long skip_first, skip_count;
	const char *skip_reason;
	struct iq_buf skip_text;
	/* during emit: the object's text, its lines joined by '\n' from its
	 * '{' on line first (for quotes, iq_quote_member) */
	struct iq_str raw;
};

/* Clears j for a new file; not_ours must be a string literal. */
void iq_jsobjs_init(struct iq_jsobjs *j, iq_jsobj_fn emit, void *owner, const char *not_ours);
/* Feeds one line; returns 0 or emit's error. */
int iq_jsobjs_line(struct iq_jsobjs *j, const struct iq_parse_ctx *ctx, long lineno,
		   const char *s, size_t n);
/* Accounts for an object left open (truncated) and what is pending; frees. */
void iq_jsobjs_end(struct iq_jsobjs *j, const struct iq_parse_ctx *ctx);

#endif
