/* k8s_pods.c: `kubectl get pods -o json|yaml` (a List of Pods or one Pod):
 * one pod record per container status and config records from the pods'
 * containers. Also home of the Kubernetes object reader that k8s_manifest.c
 * shares: it streams JSON or YAML one object (list item, document) at a time
 * and knows the line where each object of an array inside it starts. */
#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "parse.h"

#include "k8s_doc.h"
#include "locate.h"

#define MAX_ITEM_BYTES (16u << 20)
#define MAX_DEPTH 128          /* nesting below an object's own braces */
#define MARK_DEPTH 16          /* levels whose paths are tracked */
#define KEY_MAX 40
#define PATH_MAX_ 96

struct mark {
	char path[PATH_MAX_];
	size_t index;
	long line;
};

/* One open container below the current object (JSON tracker and YAML). */
struct frame {
	int is_array;
	int bad;                 /* path too long: never matches */
	size_t count;            /* elements so far (arrays) */
	char path[PATH_MAX_];
	char key[KEY_MAX];       /* pending key (objects) */
	int key_len;             /* -1: too long */
};

enum { MODE_NONE, MODE_JSON, MODE_YAML };
enum { Y_DOC, Y_ITEMS_START, Y_ITEMS };

struct iq_k8s_reader {
	int (*item)(void *u, const struct iq_parse_ctx *ctx, json_t *obj);
	void *u;
	int mode;
	long acct;               /* lines before acct are accounted for */
	long last;               /* last line seen */
	long skip_first, skip_n; /* skipped lines not yet sent */
	const char *skip_reason;
	/* the current object */
	long item_first, item_last;
	struct mark *marks;
	size_t nmarks, capmarks;
	struct frame frames[MARK_DEPTH];
	/* JSON tracker (as in k8s_events_json.c, plus key paths) */
	long depth, items_depth, base;
	int in_str, esc, str_len;    /* str_len -1: too long */
	char str[KEY_MAX];
	int key_items, want_items, ndjson;
	int open, too_big, too_deep, broken;
	long line;
	size_t col;
	struct iq_buf buf;
	/* YAML chunker */
	int ystate, yindent, ylist, yopen, ytoo_big;
	long yfirst;
	struct iq_buf ybuf;
	/* YAML builder */
	struct ynode {
		json_t *node;
		int is_seq, is_items, key_set;
		char *key;
		size_t keylen;
	} *ystack;
	/* config records */
	struct iq_buf key, val, text;
};

static const char *structure(const struct iq_k8s_reader *rd)
{
	return rd->mode == MODE_YAML ? "yaml structure" : "json envelope";
}

/* Sends the pending run of skipped lines. */
static void skip_flush(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx)
{
	if (rd->skip_n)
		ctx->sink.skip(ctx->sink.u, rd->skip_first, rd->skip_n, rd->skip_reason, NULL, 0);
	rd->skip_n = 0;
}

/* Accounts for the lines from rd->acct up to l (exclusive) as skipped with
 * reason; runs with the same reason are sent as one. */
static void account_until(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, long l,
			  const char *reason)
{
	if (rd->acct >= l)
		return;
	if (rd->skip_n && (rd->skip_reason != reason || rd->skip_first + rd->skip_n != rd->acct))
		skip_flush(rd, ctx);
	if (!rd->skip_n) {
		rd->skip_first = rd->acct;
		rd->skip_reason = reason;
	}
	rd->skip_n += l - rd->acct;
	rd->acct = l;
}

struct iq_k8s_reader *iq_k8s_reader_new(int (*item)(void *u, const struct iq_parse_ctx *ctx,
						    json_t *obj),
					 void *u)
{
	struct iq_k8s_reader *rd = iq_xcalloc(1, sizeof *rd);
	rd->item = item;
	rd->u = u;
	rd->acct = 1;
	iq_buf_init(&rd->buf);
	iq_buf_init(&rd->ybuf);
	iq_buf_init(&rd->key);
	iq_buf_init(&rd->val);
	iq_buf_init(&rd->text);
	return rd;
}

void iq_k8s_reader_free(struct iq_k8s_reader *rd)
{
	if (!rd)
		return;
	iq_buf_release(&rd->buf);
	iq_buf_release(&rd->ybuf);
	iq_buf_release(&rd->key);
	iq_buf_release(&rd->val);
	iq_buf_release(&rd->text);
	free(rd->marks);
	free(rd->ystack);
	free(rd);
}

long iq_k8s_item_line(const struct iq_k8s_reader *rd)
{
	return rd->item_first;
}

long iq_k8s_line_of(const struct iq_k8s_reader *rd, const char *path, size_t index)
{
	for (size_t i = 0; i < rd->nmarks; i++)
		if (rd->marks[i].index == index && strcmp(rd->marks[i].path, path) == 0)
			return rd->marks[i].line;
	return rd->item_first;
}

/* Finds path[0..len) in the object's text s[0..n): as YAML when the
 * reader reads YAML (a flow-style document like "--- {...}" as JSON too),
 * else as JSON. */
static int locate_in(const struct iq_k8s_reader *rd, const char *s, size_t n, const struct iq_jpath *path,
		     size_t len, size_t *beg, size_t *end)
{
	if (rd->mode != MODE_YAML)
		return iq_json_locate(s, n, path, len, beg, end);
	if (iq_yaml_locate(s, n, path, len, beg, end) == 0)
		return 0;
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '-' || s[i] == '\n'))
		i++;
	if (i < n && s[i] == '{' && iq_json_locate(s + i, n - i, path, len, beg, end) == 0) {
		*beg += i;
		*end += i;
		return 0;
	}
	return -1;
}

int iq_k8s_quote(const struct iq_k8s_reader *rd, struct iq_quote *q, const char *what,
		 const struct iq_jpath *path, size_t len)
{
	const struct iq_buf *b = rd->mode == MODE_YAML ? &rd->ybuf : &rd->buf;
	long first = rd->mode == MODE_YAML ? rd->yfirst : rd->line;
	size_t beg, end;
	if (!b->p || !b->len)
		return 0;
	/* the member, else the deepest of its parents written on a line of its
	 * own ("resource: {name: cpu, ...}" holds what a flow style puts inline) */
	for (size_t l = len; l >= 2 && l <= len; l--) {
		if (locate_in(rd, b->p, b->len, path, l, &beg, &end) == 0) {
			iq_quote_make(q, what, b->p, b->len, first, beg, end);
			return q->text.n > 0;
		}
	}
	return 0;
}

int iq_k8s_quote_find(const struct iq_k8s_reader *rd, struct iq_quote *q, const char *what,
		      struct iq_str needle, long from_line)
{
	const struct iq_buf *b = rd->mode == MODE_YAML ? &rd->ybuf : &rd->buf;
	long first = rd->mode == MODE_YAML ? rd->yfirst : rd->line;
	if (!b->p || !b->len || !needle.n)
		return 0;
	size_t at = 0;
	for (long l = first; l < from_line && at < b->len; l++) {
		const char *nl = memchr(b->p + at, '\n', b->len - at);
		at = nl ? (size_t)(nl - b->p) + 1 : b->len;
	}
	const char *hit = iq_memmem(b->p + at, b->len - at, needle.p, needle.n);
	if (!hit)
		return 0;
	/* the whole line it is on, without its indentation */
	size_t beg = (size_t)(hit - b->p);
	while (beg > 0 && b->p[beg - 1] != '\n')
		beg--;
	while (beg < b->len && (b->p[beg] == ' ' || b->p[beg] == '\t'))
		beg++;
	iq_quote_make(q, what, b->p, b->len, first, beg, b->len);
	return q->text.n > 0;
}

int iq_k8s_record(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, struct iq_record *r)
{
	account_until(rd, ctx, r->line, structure(rd));
	skip_flush(rd, ctx);
	if (rd->acct <= r->line)
		rd->acct = r->line + 1;
	return ctx->sink.record(ctx->sink.u, r);
}

void iq_k8s_item_skip(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, const char *reason)
{
	account_until(rd, ctx, rd->item_first, structure(rd));
	account_until(rd, ctx, rd->item_last + 1, reason);
}

static void add_mark(struct iq_k8s_reader *rd, const struct frame *arr, long line)
{
	if (arr->bad)
		return;
	if (rd->nmarks == rd->capmarks) {
		rd->capmarks = rd->capmarks ? rd->capmarks * 2 : 32;
		rd->marks = iq_xrealloc(rd->marks, rd->capmarks * sizeof *rd->marks);
	}
	struct mark *m = &rd->marks[rd->nmarks++];
	memcpy(m->path, arr->path, sizeof m->path);
	m->index = arr->count;
	m->line = line;
}

/* Opens frames[lvl] below frames[lvl - 1] (lvl 0: the object itself). */
static void open_frame(struct iq_k8s_reader *rd, int lvl, int is_array, long line)
{
	if (lvl >= MARK_DEPTH)
		return;
	struct frame *f = &rd->frames[lvl];
	memset(f, 0, sizeof *f);
	f->is_array = is_array;
	if (lvl == 0)
		return;
	struct frame *up = &rd->frames[lvl - 1];
	f->bad = up->bad;
	if (up->is_array) {
		if (!is_array)
			add_mark(rd, up, line);
		up->count++;
		memcpy(f->path, up->path, sizeof f->path);
	} else if (!f->bad) {
		size_t pl = strlen(up->path);
		if (up->key_len < 0 || pl + 1 + (size_t)up->key_len + 1 > sizeof f->path) {
			f->bad = 1;
		} else {
			memcpy(f->path, up->path, pl);
			if (pl)
				f->path[pl++] = '.';
			memcpy(f->path + pl, up->key, (size_t)up->key_len);
			f->path[pl + (size_t)up->key_len] = '\0';
		}
	}
}

static void set_key(struct frame *f, const char *s, size_t n)
{
	if (n >= KEY_MAX) {
		f->key_len = -1;
		return;
	}
	memcpy(f->key, s, n);
	f->key_len = (int)n;
}

static void new_item(struct iq_k8s_reader *rd, long first)
{
	rd->nmarks = 0;
	rd->item_first = rd->item_last = first;
}

/* ---- JSON: a string-aware depth tracker finds each object; jansson
 * parses only that object's bytes. ---- */

static int json_item(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, long lastl)
{
	int rc = 0;
	rd->open = 0;
	rd->item_last = lastl;
	if (rd->too_big) {
		iq_k8s_item_skip(rd, ctx, "object too large");
	} else if (rd->too_deep || rd->broken) {
		iq_k8s_item_skip(rd, ctx, "malformed json");
	} else {
		json_error_t err;
		json_t *o = json_loadb(rd->buf.p, rd->buf.len, 0, &err);
		if (!json_is_object(o)) {
			iq_k8s_item_skip(rd, ctx, "malformed json");
		} else {
			rc = rd->item(rd->u, ctx, o);
			if (!rc)
				account_until(rd, ctx, lastl + 1, structure(rd));
		}
		json_decref(o);
	}
	iq_buf_reset(&rd->buf);
	if (rd->buf.cap > (1u << 20))
		iq_buf_release(&rd->buf);
	return rc;
}

static void json_abort(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, long lastl)
{
	rd->broken = 1;
	json_item(rd, ctx, lastl);
	rd->depth = rd->base;
	rd->in_str = rd->esc = 0;
	rd->want_items = rd->key_items = 0;
}

static int json_add(struct iq_k8s_reader *rd, const char *s, size_t n)
{
	if (rd->too_big || rd->too_deep || rd->broken)
		return 0;
	if (rd->buf.len + n + 1 > MAX_ITEM_BYTES) {
		rd->too_big = 1;
		iq_buf_release(&rd->buf);
		return 0;
	}
	return iq_buf_add(&rd->buf, s, n);
}

static int json_line(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, long lineno,
		     const char *s, size_t n)
{
	int rc;
	if (rd->ndjson && rd->open && rd->base == 0 && n && s[0] == '{' && rd->col == 0)
		json_abort(rd, ctx, lineno - 1);
	size_t seg = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		long lvl = rd->open ? rd->depth - rd->base - 1 : -1;   /* frame of ch */
		if (rd->in_str) {
			if (rd->esc) {
				rd->esc = 0;
				if (rd->str_len >= 0)
					rd->str_len = -1;       /* keys with escapes are not ours */
			} else if (ch == '\\') {
				rd->esc = 1;
			} else if (ch == '"') {
				rd->in_str = 0;
				rd->key_items = rd->str_len == 5 && memcmp(rd->str, "items", 5) == 0;
			} else if (rd->str_len >= 0) {
				if (rd->str_len < KEY_MAX)
					rd->str[rd->str_len++] = ch;
				else
					rd->str_len = -1;
			}
			continue;
		}
		switch (ch) {
		case '"':
			rd->in_str = 1;
			rd->str_len = 0;
			rd->want_items = 0;
			break;
		case ':':
			if (rd->depth == 1)
				rd->want_items = rd->key_items;
			rd->key_items = 0;
			if (lvl >= 0 && lvl < MARK_DEPTH && !rd->frames[lvl].is_array) {
				if (rd->str_len < 0 || rd->str_len >= KEY_MAX)
					rd->frames[lvl].key_len = -1;
				else
					set_key(&rd->frames[lvl], rd->str, (size_t)rd->str_len);
			}
			break;
		case '{':
		case '[':
			if (ch == '[' && rd->depth == 1 && rd->want_items && rd->open && rd->base == 0) {
				/* the top-level object is a List: its items are the objects */
				rd->open = 0;
				iq_buf_reset(&rd->buf);
				rd->items_depth = 2;
			} else if (ch == '[' && rd->depth == 0 && !rd->open && rd->items_depth == 0) {
				rd->items_depth = 1;          /* a bare array */
			} else if (ch == '{' && !rd->open && rd->depth == rd->items_depth) {
				rd->open = 1;
				rd->base = rd->depth;
				rd->line = lineno;
				rd->col = i;
				rd->too_big = rd->too_deep = rd->broken = 0;
				iq_buf_reset(&rd->buf);
				seg = i;
				new_item(rd, lineno);
				open_frame(rd, 0, 0, lineno);
			} else if (rd->open) {
				open_frame(rd, (int)(rd->depth - rd->base), ch == '[', lineno);
			}
			rd->want_items = rd->key_items = 0;
			rd->depth++;
			if (rd->open && rd->depth - rd->base > MAX_DEPTH && !rd->too_deep) {
				rd->too_deep = 1;
				iq_buf_release(&rd->buf);
			}
			break;
		case '}':
		case ']':
			rd->want_items = rd->key_items = 0;
			if (rd->depth == 0)
				break;
			rd->depth--;
			if (rd->open && rd->depth == rd->base) {
				if ((rc = json_add(rd, s + seg, i + 1 - seg)))
					return rc;
				if (rd->base == 0)
					rd->ndjson = rd->line == lineno && rd->col == 0;
				if ((rc = json_item(rd, ctx, lineno)))
					return rc;
			} else if (!rd->open && rd->items_depth > 0 && rd->depth < rd->items_depth) {
				rd->items_depth = -1;
			}
			if (rd->depth == 0)
				rd->items_depth = 0;
			break;
		default:
			if (ch != ' ' && ch != '\t' && ch != ',' && ch != '\r' && ch != '\n')
				rd->want_items = rd->key_items = 0;
			break;
		}
	}
	/* JSON strings do not span lines: the object is broken, but its braces
	 * still tell where it ends */
	if (rd->in_str || rd->esc) {
		rd->in_str = rd->esc = 0;
		if (rd->open && !rd->broken) {
			rd->broken = 1;
			iq_buf_release(&rd->buf);
		}
	}
	/* lines outside objects are accounted lazily, before the next record */
	if (rd->open) {
		if ((rc = json_add(rd, s + seg, n - seg)) || (rc = json_add(rd, "\n", 1)))
			return rc;
	}
	return 0;
}

/* ---- YAML: lines are cut into chunks (a document, or one item of a
 * block-style List); libyaml parses a chunk into jansson values, one
 * object at a time, with the line of every object in an array. ---- */

/* A plain YAML scalar as JSON: null, a boolean, or the text as written
 * (numbers stay strings; readers accept both). */
static json_t *yaml_scalar(const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag) {
		if (n == 0 || (n == 1 && v[0] == '~') ||
		    (n == 4 && (!memcmp(v, "null", 4) || !memcmp(v, "Null", 4) || !memcmp(v, "NULL", 4))))
			return json_null();
		if (n == 4 && (!memcmp(v, "true", 4) || !memcmp(v, "True", 4) || !memcmp(v, "TRUE", 4)))
			return json_true();
		if (n == 5 && (!memcmp(v, "false", 5) || !memcmp(v, "False", 5) || !memcmp(v, "FALSE", 5)))
			return json_false();
	}
	json_t *s = json_stringn(v, n);
	return s ? s : json_null();
}

/* Adds node to the container on top of the stack (depth d > 0). */
static void yaml_attach(struct iq_k8s_reader *rd, int d, json_t *node)
{
	struct ynode *up = &rd->ystack[d - 1];
	if (up->is_seq) {
		json_array_append_new(up->node, node);
	} else if (!up->key_set) {
		if (json_is_string(node)) {
			free(up->key);
			up->keylen = json_string_length(node);
			up->key = iq_xstrndup(json_string_value(node), up->keylen);
		} else {
			free(up->key);
			up->key = NULL;      /* a key that is not a string: drop the value */
		}
		up->key_set = 1;
		json_decref(node);
	} else {
		if (up->key)
			json_object_setn_new(up->node, up->key, up->keylen, node);
		else
			json_decref(node);
		free(up->key);
		up->key = NULL;
		up->key_set = 0;
	}
}

/* Parses the buffered chunk (lines rd->yfirst..lastl). */
static int yaml_chunk(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, long lastl)
{
	int rc = 0, d = 0, failed = 0;
	int item_d = -1;          /* stack level of the current object, -1 none */
	long base = rd->yfirst;
	rd->yopen = 0;
	if (rd->ytoo_big) {
		rd->ytoo_big = 0;
		account_until(rd, ctx, rd->yfirst, "yaml structure");
		account_until(rd, ctx, lastl + 1, "object too large");
		iq_buf_release(&rd->ybuf);
		return 0;
	}
	if (!rd->ystack)
		rd->ystack = iq_xcalloc(MAX_DEPTH + 2, sizeof *rd->ystack);
	yaml_parser_t parser;
	yaml_event_t ev;
	if (!yaml_parser_initialize(&parser))
		return IQ_ERR_NOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)rd->ybuf.p, rd->ybuf.len);
	for (int done = 0; !done && !rc;) {
		if (!yaml_parser_parse(&parser, &ev)) {
			failed = 1;
			break;
		}
		long line = base + (long)ev.start_mark.line;
		long eline = base + (long)ev.end_mark.line;
		json_t *node = NULL;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT:
			node = ev.type == YAML_SCALAR_EVENT ? yaml_scalar(&ev) : json_null();
			if (item_d >= 0) {
				long lvl = d - 1 - item_d;
				if (lvl >= 0 && lvl < MARK_DEPTH && rd->frames[lvl].is_array)
					rd->frames[lvl].count++;
				if (lvl >= 0 && lvl < MARK_DEPTH && !rd->frames[lvl].is_array &&
				    !rd->ystack[d - 1].key_set && json_is_string(node))
					set_key(&rd->frames[lvl], json_string_value(node),
						json_string_length(node));
				/* a plain scalar ends on its own line; a block scalar's
				 * end mark is the start of the line after it */
				long el = ev.end_mark.column == 0 && eline > line ? eline - 1 : eline;
				if (el > rd->item_last)
					rd->item_last = el;
			}
			if (d > 0)
				yaml_attach(rd, d, node);
			else
				json_decref(node);
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT: {
			int seq = ev.type == YAML_SEQUENCE_START_EVENT;
			if (d >= MAX_DEPTH + 1) {
				failed = 1;
				done = 1;
				break;
			}
			struct ynode *y = &rd->ystack[d];
			memset(y, 0, sizeof *y);
			y->node = seq ? json_array() : json_object();
			y->is_seq = seq;
			if (d == 0 && seq) {
				y->is_items = 1;     /* a top-level sequence: its objects */
			} else if (d == 1 && seq && !rd->ystack[0].is_seq && rd->ystack[0].key_set &&
				   rd->ystack[0].key && rd->ystack[0].keylen == 5 &&
				   memcmp(rd->ystack[0].key, "items", 5) == 0) {
				y->is_items = 1;     /* a List's items */
			}
			if (!seq && (d == 0 || rd->ystack[d - 1].is_items)) {
				item_d = d;
				new_item(rd, line);
				open_frame(rd, 0, 0, line);
			} else if (item_d >= 0) {
				open_frame(rd, d - item_d, seq, line);
			}
			d++;
			break;
		}
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT: {
			if (d == 0)
				break;
			d--;
			struct ynode *y = &rd->ystack[d];
			free(y->key);
			y->key = NULL;
			if (item_d >= 0 && eline > rd->item_last &&
			    (ev.start_mark.index != ev.end_mark.index))
				rd->item_last = eline;   /* a flow collection's closing bracket */
			if (d == item_d) {
				/* an object ends (a List's envelope never gets here:
				 * its items reset item_d) */
				item_d = -1;
				if (rd->item_last > lastl)
					rd->item_last = lastl;
				rc = rd->item(rd->u, ctx, y->node);
				if (!rc)
					account_until(rd, ctx, rd->item_last + 1, "yaml structure");
				json_decref(y->node);
			} else if (d > 0 && !rd->ystack[d - 1].is_items) {
				yaml_attach(rd, d, y->node);
			} else {
				json_decref(y->node);
			}
			y->node = NULL;
			break;
		}
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	/* what a failure or an error left open */
	while (d > 0) {
		d--;
		free(rd->ystack[d].key);
		rd->ystack[d].key = NULL;
		json_decref(rd->ystack[d].node);
		rd->ystack[d].node = NULL;
	}
	if (failed && !rc) {
		/* the objects before the error stand; the rest is malformed */
		account_until(rd, ctx, lastl + 1, "malformed yaml");
	} else if (!rc) {
		account_until(rd, ctx, lastl + 1, "yaml structure");
	}
	yaml_parser_delete(&parser);
	iq_buf_reset(&rd->ybuf);
	if (rd->ybuf.cap > (1u << 20))
		iq_buf_release(&rd->ybuf);
	return rc;
}

static int yaml_flush(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, long lastl)
{
	return rd->yopen ? yaml_chunk(rd, ctx, lastl) : 0;
}

static int yaml_add(struct iq_k8s_reader *rd, long lineno, const char *s, size_t n)
{
	if (!rd->yopen) {
		rd->yopen = 1;
		rd->yfirst = lineno;
		rd->ytoo_big = 0;
		iq_buf_reset(&rd->ybuf);
	}
	if (rd->ytoo_big)
		return 0;
	if (rd->ybuf.len + n + 2 > MAX_ITEM_BYTES) {
		rd->ytoo_big = 1;
		iq_buf_release(&rd->ybuf);
		return 0;
	}
	if (iq_buf_add(&rd->ybuf, s, n) || iq_buf_addc(&rd->ybuf, '\n'))
		return IQ_ERR_NOMEM;
	return 0;
}

static size_t indent_of(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && s[i] == ' ')
		i++;
	return i;
}

/* A line that is only blanks or a comment. */
static int yaml_blank(const char *s, size_t n)
{
	size_t i = indent_of(s, n);
	while (i < n && s[i] == '\t')
		i++;
	return i >= n || s[i] == '#';
}

/* "-" or "- ..." at column i. */
static int yaml_dash(const char *s, size_t n, size_t i)
{
	return i < n && s[i] == '-' && (i + 1 == n || s[i + 1] == ' ');
}

/* s is a top-level key line "word:" with nothing (or a comment) after. */
static int yaml_key_only(const char *s, size_t n, const char *key)
{
	size_t k = strlen(key);
	if (n < k + 1 || memcmp(s, key, k) != 0 || s[k] != ':')
		return 0;
	return yaml_blank(s + k + 1, n - k - 1);
}

static int yaml_line(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, long lineno,
		     const char *s, size_t n)
{
	int rc;
	/* document markers */
	if (n >= 3 && (!memcmp(s, "---", 3) || !memcmp(s, "...", 3)) &&
	    (n == 3 || s[3] == ' ' || s[3] == '\t')) {
		if ((rc = yaml_flush(rd, ctx, lineno - 1)))
			return rc;
		rd->ystate = Y_DOC;
		rd->ylist = 0;
		if (s[0] == '-' && !yaml_blank(s + 3, n - 3))
			return yaml_add(rd, lineno, s, n);    /* "--- {...}" */
		account_until(rd, ctx, lineno + 1, "yaml structure");
		return 0;
	}
	if (rd->ystate == Y_ITEMS) {
		size_t ind = indent_of(s, n);
		/* a tab-indented line is invalid YAML: let libyaml say so */
		if (yaml_blank(s, n) || ind > (size_t)rd->yindent || (ind < n && s[ind] == '\t'))
			return yaml_add(rd, lineno, s, n);
		if (ind == (size_t)rd->yindent && yaml_dash(s, n, ind)) {
			if ((rc = yaml_flush(rd, ctx, lineno - 1)))
				return rc;
			return yaml_add(rd, lineno, s, n);
		}
		/* the items ended: the rest of the document is the List's */
		if ((rc = yaml_flush(rd, ctx, lineno - 1)))
			return rc;
		rd->ystate = Y_DOC;
	}
	if (rd->ystate == Y_ITEMS_START) {
		size_t ind = indent_of(s, n);
		if (yaml_blank(s, n)) {
			account_until(rd, ctx, lineno + 1, "yaml structure");
			return 0;
		}
		if (yaml_dash(s, n, ind)) {
			rd->ystate = Y_ITEMS;
			rd->yindent = (int)ind;
			return yaml_add(rd, lineno, s, n);
		}
		rd->ystate = Y_DOC;
	}
	/* Y_DOC */
	if (rd->ylist || (!rd->yopen && (yaml_blank(s, n) || (n && s[0] == '%')))) {
		if (!rd->yopen)
			account_until(rd, ctx, lineno + 1, "yaml structure");
		else
			return yaml_add(rd, lineno, s, n);
		return 0;
	}
	if (yaml_key_only(s, n, "items")) {
		/* a block-style List: what was buffered is its envelope */
		rd->yopen = 0;
		iq_buf_reset(&rd->ybuf);
		rd->ylist = 1;
		rd->ystate = Y_ITEMS_START;
		account_until(rd, ctx, lineno + 1, "yaml structure");
		return 0;
	}
	if (!rd->yopen && yaml_dash(s, n, 0)) {
		/* a document that is a sequence: one chunk per element */
		rd->ylist = 1;
		rd->ystate = Y_ITEMS;
		rd->yindent = 0;
	}
	return yaml_add(rd, lineno, s, n);
}

int iq_k8s_reader_line(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, long lineno,
		       const char *s, size_t n)
{
	rd->last = lineno;
	if (rd->mode == MODE_NONE) {
		size_t i = 0;
		if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
			i = 3;
		while (i < n && isspace((unsigned char)s[i]))
			i++;
		if (i >= n) {
			account_until(rd, ctx, lineno + 1, "blank");
			return 0;
		}
		rd->mode = s[i] == '{' || s[i] == '[' ? MODE_JSON : MODE_YAML;
		if (i && rd->mode == MODE_JSON) {
			s += i;    /* a BOM: columns only matter for NDJSON */
			n -= i;
		}
	}
	if (rd->mode == MODE_JSON)
		return json_line(rd, ctx, lineno, s, n);
	/* a BOM on the first line */
	if (lineno == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
		s += 3;
		n -= 3;
	}
	return yaml_line(rd, ctx, lineno, s, n);
}

int iq_k8s_reader_end(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx)
{
	int rc = 0;
	if (rd->mode == MODE_JSON && rd->open) {
		rd->open = 0;
		rd->item_first = rd->line;
		rd->item_last = rd->last;
		iq_k8s_item_skip(rd, ctx, "truncated json");
	} else if (rd->mode == MODE_YAML) {
		rc = yaml_flush(rd, ctx, rd->last);
	}
	account_until(rd, ctx, rd->last + 1, structure(rd));
	skip_flush(rd, ctx);
	return rc;
}

/* ---- Reading values ---- */

static struct iq_str jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (json_is_string(v))
		return iq_str_make(json_string_value(v), json_string_length(v));
	return IQ_STR_NULL;
}

/* An integer field written as a number or a string of digits; def when
 * absent or not one. */
static long jint(json_t *o, const char *k, long def)
{
	json_t *v = json_object_get(o, k);
	if (json_is_integer(v))
		return json_integer_value(v) >= -0x7fffffff && json_integer_value(v) <= 0x7fffffff ?
			(long)json_integer_value(v) : def;
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v), i = s[0] == '-' ? 1 : 0;
		if (n == i || n > 10)
			return def;
		for (size_t j = i; j < n; j++)
			if (!isdigit((unsigned char)s[j]))
				return def;
		long x = strtol(s, NULL, 10);
		return x >= -0x7fffffff && x <= 0x7fffffff ? x : def;
	}
	return def;
}

static int jbool(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (json_is_boolean(v))
		return json_is_true(v);
	if (json_is_string(v)) {
		if (!strcmp(json_string_value(v), "true"))
			return 1;
		if (!strcmp(json_string_value(v), "false"))
			return 0;
	}
	return -1;
}

/* A scalar as written (JSON numbers and booleans as their text) into b;
 * 0 when v is not a scalar. */
static int scalar_text(struct iq_buf *b, json_t *v)
{
	iq_buf_reset(b);
	if (json_is_string(v))
		return iq_buf_add(b, json_string_value(v), json_string_length(v)) ? -1 : 1;
	if (json_is_integer(v))
		return iq_buf_printf(b, "%lld", (long long)json_integer_value(v)) ? -1 : 1;
	if (json_is_real(v))
		return iq_buf_printf(b, "%.15g", json_real_value(v)) ? -1 : 1;
	if (json_is_boolean(v))
		return iq_buf_adds(b, json_is_true(v) ? "true" : "false") ? -1 : 1;
	return 0;
}

static int str_eq(struct iq_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* ---- Container config ---- */

/* Sends one config record: key and value are copied into the reader's
 * buffers first when they are not there already. */
/* A config record at line (the container's) whose setting is written as
 * raw (an argument, an env var's name, a limit's key): the record quotes
 * the first line after line holding raw. */
/* A setting of the container at line; its quote is the first line at or
 * after from that holds raw. */
static int config_record_at(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, long line, long from,
			    struct iq_str scope, const struct iq_ident *id, struct iq_str key,
			    struct iq_str val, const char *source, struct iq_str raw)
{
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_CONFIG);
	r.line = line;
	r.nquotes = iq_k8s_quote_find(rd, &r.quote[0], "setting", raw, from);
	if (id)
		r.id = *id;
	r.u.config.scope = scope;
	r.u.config.key = key;
	r.u.config.value = val;
	r.u.config.source = iq_str_make(source, strlen(source));
	iq_buf_reset(&rd->text);
	if (iq_buf_add(&rd->text, key.p, key.n) || iq_buf_addc(&rd->text, '=') ||
	    iq_buf_add(&rd->text, val.p, val.n))
		return IQ_ERR_NOMEM;
	for (size_t i = 0; i < rd->text.len; i++)
		if (rd->text.p[i] == '\n' || rd->text.p[i] == '\r')
			rd->text.p[i] = ' ';
	r.text = iq_str_make(rd->text.p, rd->text.len);
	return iq_k8s_record(rd, ctx, &r);
}

static int config_record(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, long line,
			 struct iq_str scope, const struct iq_ident *id, struct iq_str key,
			 struct iq_str val, const char *source, struct iq_str raw)
{
	return config_record_at(rd, ctx, line, line, scope, id, key, val, source, raw);
}

/* The readiness probe's timing: how long after the engine listens the
 * kubelet can mark the pod Ready (the recovery question bounds readiness
 * with it when no kubelet line or Ready condition says when). */
static int probe_config(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, json_t *c, long line,
			struct iq_str scope, const struct iq_ident *id)
{
	static const struct { const char *field, *key; } pf[] = {
		{"periodSeconds", "readiness_period_s"},
		{"initialDelaySeconds", "readiness_initial_delay_s"},
	};
	json_t *rp = json_object_get(c, "readinessProbe");
	if (!json_is_object(rp))
		return 0;
	struct iq_quote at;
	long from = iq_k8s_quote_find(rd, &at, "setting", IQ_STR_LIT("readinessProbe"), line) ? at.line : line;
	int rc = 0;
	for (size_t i = 0; !rc && i < IQ_ARRAY_LEN(pf); i++) {
		json_t *v = json_object_get(rp, pf[i].field);
		int have = scalar_text(&rd->val, v);
		if (have < 0)
			return IQ_ERR_NOMEM;
		/* whole seconds, as a number or (YAML) its digits */
		size_t k = 0;
		while (k < rd->val.len && rd->val.p[k] >= '0' && rd->val.p[k] <= '9')
			k++;
		if (!have || !rd->val.len || k != rd->val.len)
			continue;
		rc = config_record_at(rd, ctx, line, from, scope, id, iq_str_make(pf[i].key, strlen(pf[i].key)),
				      iq_str_make(rd->val.p, rd->val.len), "readinessProbe",
				      iq_str_make(pf[i].field, strlen(pf[i].field)));
	}
	return rc;
}

/* Flags that take no value: the next word is theirs only when it is a
 * boolean. */
static int bool_flag(const char *k, size_t n)
{
	static const char *const names[] = {
		"enable_prefix_caching", "no_enable_prefix_caching", "trust_remote_code",
		"enforce_eager", "disable_log_requests", "disable_log_stats",
		"enable_chunked_prefill", "no_enable_chunked_prefill", "disable_custom_all_reduce",
		"enable_lora", "disable_sliding_window", "disable_frontend_multiprocessing",
		"enable_auto_tool_choice", "disable_custom_kernels", "sharded", "quantize_kv",
	};
	for (size_t i = 0; i < IQ_ARRAY_LEN(names); i++)
		if (strlen(names[i]) == n && memcmp(names[i], k, n) == 0)
			return 1;
	return 0;
}

static int is_bool_word(const char *s, size_t n)
{
	static const char *const w[] = {"true", "false", "True", "False", "1", "0"};
	for (size_t i = 0; i < IQ_ARRAY_LEN(w); i++)
		if (strlen(w[i]) == n && memcmp(w[i], s, n) == 0)
			return 1;
	return 0;
}

/* The words of a command line: the elements of command and args, and a
 * shell string ("python -m vllm... --max-num-seqs 256") split at blanks. */
struct words {
	struct iq_str w[512];
	size_t n;
};

static void add_words(struct words *ws, const char *s, size_t n)
{
	int split = 0;
	/* an element holding a whole command line */
	for (size_t i = 0; i + 2 < n; i++)
		if ((s[i] == ' ' || s[i] == '\t' || s[i] == '\n') && s[i + 1] == '-' && s[i + 2] == '-')
			split = 1;
	if (!split) {
		if (ws->n < IQ_ARRAY_LEN(ws->w))
			ws->w[ws->n++] = iq_str_make(s, n);
		return;
	}
	for (size_t i = 0; i < n;) {
		while (i < n && isspace((unsigned char)s[i]))
			i++;
		size_t j = i;
		while (j < n && !isspace((unsigned char)s[j]) && s[j] != ';' && s[j] != '&' && s[j] != '|')
			j++;
		if (j > i && ws->n < IQ_ARRAY_LEN(ws->w)) {
			/* drop the quotes of '--x=1' and "--x" */
			const char *p = s + i;
			size_t m = j - i;
			if (m >= 2 && (p[0] == '\'' || p[0] == '"') && p[m - 1] == p[0]) {
				p++;
				m -= 2;
			}
			ws->w[ws->n++] = iq_str_make(p, m);
		}
		i = j < n && !isspace((unsigned char)s[j]) ? j + 1 : j;
	}
}

static void collect_words(struct words *ws, json_t *arr)
{
	size_t i;
	json_t *v;
	if (!json_is_array(arr))
		return;
	json_array_foreach(arr, i, v) {
		if (json_is_string(v))
			add_words(ws, json_string_value(v), json_string_length(v));
	}
}

static int norm_key(struct iq_buf *b, const char *s, size_t n, int dashes)
{
	iq_buf_reset(b);
	size_t i = 0;
	if (dashes)
		while (i < n && s[i] == '-')
			i++;
	for (; i < n; i++) {
		char c = s[i] == '-' ? '_' : (char)tolower((unsigned char)s[i]);
		if (iq_buf_addc(b, c))
			return IQ_ERR_NOMEM;
	}
	return 0;
}

static int args_config(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, json_t *c,
		       long line, struct iq_str scope, const struct iq_ident *id)
{
	struct words *ws = iq_xmalloc(sizeof *ws);
	int rc = 0;
	ws->n = 0;
	collect_words(ws, json_object_get(c, "command"));
	collect_words(ws, json_object_get(c, "args"));
	for (size_t i = 0; i < ws->n && !rc; i++) {
		struct iq_str w = ws->w[i];
		if (w.n < 3 || w.p[0] != '-' || w.p[1] != '-' || w.p[2] == '-' || w.p[2] == '=')
			continue;
		const char *eq = memchr(w.p, '=', w.n);
		size_t kn = eq ? (size_t)(eq - w.p) : w.n;
		if ((rc = norm_key(&rd->key, w.p, kn, 1)))
			break;
		struct iq_str val;
		if (eq) {
			val = iq_str_make(eq + 1, w.n - kn - 1);
		} else if (i + 1 < ws->n && !(ws->w[i + 1].n >= 2 && ws->w[i + 1].p[0] == '-' &&
					      ws->w[i + 1].p[1] == '-') &&
			   (!bool_flag(rd->key.p, rd->key.len) ||
			    is_bool_word(ws->w[i + 1].p, ws->w[i + 1].n))) {
			val = ws->w[++i];
		} else {
			val = IQ_STR_LIT("true");
		}
		rc = config_record(rd, ctx, line, scope, id, iq_str_make(rd->key.p, rd->key.len), val,
				   "container-args", w);
	}
	free(ws);
	return rc;
}

/* "configMapKeyRef:vllm-env/VLLM_MAX_NUM_SEQS" for an env var's valueFrom. */
static int value_from(struct iq_buf *b, json_t *vf)
{
	static const char *const refs[] = {"configMapKeyRef", "secretKeyRef"};
	iq_buf_reset(b);
	for (size_t i = 0; i < IQ_ARRAY_LEN(refs); i++) {
		json_t *r = json_object_get(vf, refs[i]);
		if (json_is_object(r)) {
			struct iq_str nm = jstr(r, "name"), k = jstr(r, "key");
			return iq_buf_printf(b, "%s:%.*s/%.*s", refs[i], (int)nm.n, nm.p ? nm.p : "",
					     (int)k.n, k.p ? k.p : "");
		}
	}
	json_t *r = json_object_get(vf, "fieldRef");
	if (json_is_object(r)) {
		struct iq_str fp = jstr(r, "fieldPath");
		return iq_buf_printf(b, "fieldRef:%.*s", (int)fp.n, fp.p ? fp.p : "");
	}
	r = json_object_get(vf, "resourceFieldRef");
	if (json_is_object(r)) {
		struct iq_str res = jstr(r, "resource");
		return iq_buf_printf(b, "resourceFieldRef:%.*s", (int)res.n, res.p ? res.p : "");
	}
	return 0;
}

int iq_k8s_container_config(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, json_t *c,
			    long line, struct iq_str scope, const struct iq_ident *id)
{
	int rc = args_config(rd, ctx, c, line, scope, id);
	size_t i;
	json_t *v;
	json_t *env = json_object_get(c, "env");
	if (json_is_array(env)) {
		json_array_foreach(env, i, v) {
			if (rc)
				break;
			struct iq_str nm = jstr(v, "name");
			if (!nm.n)
				continue;
			if ((rc = norm_key(&rd->key, nm.p, nm.n, 0)))
				break;
			json_t *val = json_object_get(v, "value");
			int have = scalar_text(&rd->val, val);
			if (have < 0 || (!have && value_from(&rd->val, json_object_get(v, "valueFrom")))) {
				rc = IQ_ERR_NOMEM;
				break;
			}
			rc = config_record(rd, ctx, line, scope, id, iq_str_make(rd->key.p, rd->key.len),
					   iq_str_make(rd->val.p, rd->val.len), "env", nm);
		}
	}
	json_t *lim = json_object_get(json_object_get(c, "resources"), "limits");
	if (json_is_object(lim)) {
		const char *k;
		json_object_foreach(lim, k, v) {
			if (rc)
				break;
			int have = scalar_text(&rd->val, v);
			if (have < 0) {
				rc = IQ_ERR_NOMEM;
				break;
			}
			if (!have)
				continue;
			rc = config_record(rd, ctx, line, scope, id, iq_str_make(k, strlen(k)),
					   iq_str_make(rd->val.p, rd->val.len), "resources", iq_str_make(k, strlen(k)));
		}
	}
	if (!rc)
		rc = probe_config(rd, ctx, c, line, scope, id);
	return rc;
}

/* ---- ConfigMaps: settings files kept in data ---- */

#define CM_MAX_DEPTH 8
#define CM_MAX_LEAVES 512

/* The YAML (or JSON, which YAML reads) document text of a data value as
 * jansson values, or NULL when it is not one mapping. Scalars stay text. */
static json_t *cm_parse(const char *text, size_t n)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	json_t *stack[CM_MAX_DEPTH + 1];
	char *keys[CM_MAX_DEPTH + 1];
	int key_set[CM_MAX_DEPTH + 1];
	int d = 0, ok = 1, done = 0;
	json_t *root = NULL;
	if (!yaml_parser_initialize(&parser))
		return NULL;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, n);
	while (ok && !done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			ok = 0;
			break;
		}
		json_t *node = NULL;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			done = 1;
			break;
		case YAML_SCALAR_EVENT:
			node = json_stringn((const char *)ev.data.scalar.value, ev.data.scalar.length);
			if (!node)
				node = json_null();
			break;
		case YAML_ALIAS_EVENT:
			node = json_null();
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (d >= CM_MAX_DEPTH) {
				ok = 0;
				break;
			}
			stack[d] = ev.type == YAML_MAPPING_START_EVENT ? json_object() : json_array();
			keys[d] = NULL;
			key_set[d] = 0;
			d++;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			if (d == 0) {
				ok = 0;
				break;
			}
			d--;
			free(keys[d]);
			node = stack[d];
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		if (!node)
			continue;
		if (d == 0) {
			if (!json_is_object(node)) {
				json_decref(node);   /* a scalar or a list: not a settings file */
				ok = 0;
				continue;
			}
			root = node;
			done = 1;
		} else if (json_is_array(stack[d - 1])) {
			json_array_append_new(stack[d - 1], node);
		} else if (!key_set[d - 1]) {
			free(keys[d - 1]);
			keys[d - 1] = json_is_string(node) ? iq_xstrdup(json_string_value(node)) : NULL;
			key_set[d - 1] = 1;
			json_decref(node);
		} else {
			if (keys[d - 1])
				json_object_set_new(stack[d - 1], keys[d - 1], node);
			else
				json_decref(node);
			free(keys[d - 1]);
			keys[d - 1] = NULL;
			key_set[d - 1] = 0;
		}
	}
	while (d > 0) {
		d--;
		free(keys[d]);
		json_decref(stack[d]);
	}
	yaml_parser_delete(&parser);
	if (!ok && root) {
		json_decref(root);
		root = NULL;
	}
	return root;
}

struct cm_walk {
	struct iq_k8s_reader *rd;
	const struct iq_parse_ctx *ctx;
	long line, from;
	struct iq_str scope;
	const struct iq_ident *id;
	int leaves;
};

static int cm_leaves(struct cm_walk *w, json_t *o, int depth)
{
	const char *k;
	json_t *v;
	int rc = 0;
	json_object_foreach(o, k, v) {
		if (rc || w->leaves >= CM_MAX_LEAVES)
			break;
		if (json_is_object(v)) {
			if (depth < CM_MAX_DEPTH)
				rc = cm_leaves(w, v, depth + 1);
			continue;
		}
		if (!json_is_string(v))
			continue;
		w->leaves++;
		if ((rc = norm_key(&w->rd->key, k, strlen(k), 0)))
			break;
		iq_buf_reset(&w->rd->val);
		if (iq_buf_add(&w->rd->val, json_string_value(v), json_string_length(v)))
			return IQ_ERR_NOMEM;
		rc = config_record_at(w->rd, w->ctx, w->line, w->from, w->scope, w->id,
				      iq_str_make(w->rd->key.p, w->rd->key.len),
				      iq_str_make(w->rd->val.p, w->rd->val.len), "configmap", iq_str_make(k, strlen(k)));
	}
	return rc;
}

int iq_k8s_configmap_config(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, json_t *o,
			    long line, struct iq_str scope, const struct iq_ident *id)
{
	json_t *data = json_object_get(o, "data");
	const char *k;
	json_t *v;
	int rc = 0;
	json_object_foreach(data, k, v) {
		if (rc)
			break;
		if (!json_is_string(v))
			continue;
		const char *t = json_string_value(v);
		size_t n = json_string_length(v);
		struct iq_quote at;
		long from = iq_k8s_quote_find(rd, &at, "setting", iq_str_make(k, strlen(k)), line) ? at.line : line;
		/* a settings file: a mapping written over several lines */
		json_t *doc = memchr(t, '\n', n) && memchr(t, ':', n) ? cm_parse(t, n) : NULL;
		if (doc) {
			struct cm_walk w = {rd, ctx, line, from, scope, id, 0};
			rc = cm_leaves(&w, doc, 0);
			json_decref(doc);
			continue;
		}
		if ((rc = norm_key(&rd->key, k, strlen(k), 0)))
			break;
		iq_buf_reset(&rd->val);
		if (iq_buf_add(&rd->val, t, n))
			return IQ_ERR_NOMEM;
		for (size_t i = 0; i < rd->val.len; i++)
			if (rd->val.p[i] == '\n' || rd->val.p[i] == '\r')
				rd->val.p[i] = ' ';
		rc = config_record_at(rd, ctx, line, from, scope, id, iq_str_make(rd->key.p, rd->key.len),
				      iq_str_make(rd->val.p, rd->val.len), "configmap", iq_str_make(k, strlen(k)));
	}
	return rc;
}

/* ---- Sniffing ---- */

static unsigned kind_flag(const char *v, size_t n)
{
	static const char *const wl[] = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
					 "ReplicationController", "PodTemplate", "Job", "CronJob"};
	if (n == 3 && !memcmp(v, "Pod", 3))
		return IQ_K8S_POD;
	if (n == 5 && !memcmp(v, "Event", 5))
		return IQ_K8S_EVENT;
	if (n == 23 && !memcmp(v, "HorizontalPodAutoscaler", 23))
		return IQ_K8S_HPA;
	if (n == 9 && !memcmp(v, "ConfigMap", 9))
		return IQ_K8S_CONFIGMAP;
	if (n >= 4 && !memcmp(v + n - 4, "List", 4))
		return IQ_K8S_LIST;
	for (size_t i = 0; i < IQ_ARRAY_LEN(wl); i++)
		if (strlen(wl[i]) == n && !memcmp(wl[i], v, n))
			return IQ_K8S_WORKLOAD;
	return IQ_K8S_OTHER;
}

static int key_is(const char *k, size_t kn, const char *lit)
{
	return kn == strlen(lit) && memcmp(k, lit, kn) == 0;
}

static unsigned status_key(const char *k, size_t kn)
{
	if (key_is(k, kn, "containerStatuses") || key_is(k, kn, "initContainerStatuses") ||
	    key_is(k, kn, "podIP") || key_is(k, kn, "phase"))
		return IQ_K8S_STATUS;
	if (key_is(k, kn, "involvedObject") || key_is(k, kn, "regarding"))
		return IQ_K8S_INVOLVED;
	return 0;
}

static unsigned json_kinds(const char *h, size_t n)
{
	unsigned f = IQ_K8S_JSON;
	int depth = 0, in_items = 0, root_array = 0;
	int items_depth = -1;
	const char *str = NULL;
	size_t slen = 0;
	int want_value = 0, kind_key = 0, apiver_key = 0, value_depth = 0;
	int key_items = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = h[i];
		if (ch == '"') {
			size_t j = i + 1;
			while (j < n && h[j] != '"')
				j += h[j] == '\\' ? 2 : 1;
			if (j >= n)
				break;
			str = h + i + 1;
			slen = j - i - 1;
			i = j;
			if (want_value) {
				if (kind_key)
					f |= kind_flag(str, slen);
				if (apiver_key)
					f |= IQ_K8S_APIVER;
				want_value = kind_key = apiver_key = 0;
			} else {
				/* a key if a ':' follows */
				size_t k = j + 1;
				while (k < n && isspace((unsigned char)h[k]))
					k++;
				if (k < n && h[k] == ':') {
					/* object level: the document, an item of a
					 * List or of a top-level array */
					int obj = depth == 1 || (depth == 3 && in_items) ||
						  (depth == 2 && root_array);
					kind_key = obj && key_is(str, slen, "kind");
					apiver_key = obj && key_is(str, slen, "apiVersion");
					key_items = depth == 1 && key_is(str, slen, "items");
					f |= status_key(str, slen);
					value_depth = depth;
					want_value = 1;
					i = k;
				}
			}
			continue;
		}
		switch (ch) {
		case '{':
		case '[':
			if (depth == 0 && ch == '[')
				root_array = 1;
			if (ch == '[' && want_value && key_items && value_depth == 1) {
				in_items = 1;
				items_depth = depth + 1;
			}
			depth++;
			want_value = kind_key = apiver_key = key_items = 0;
			break;
		case '}':
		case ']':
			if (depth > 0)
				depth--;
			if (in_items && depth < items_depth)
				in_items = 0;
			want_value = 0;
			break;
		case ',':
			want_value = 0;
			break;
		default:
			break;
		}
	}
	return f;
}

static unsigned yaml_kinds(const char *h, size_t n)
{
	unsigned f = IQ_K8S_YAML;
	int items = 0;   /* a List's items (or a top-level sequence) are open */
	for (size_t i = 0; i < n;) {
		const char *s = h + i;
		const char *nl = memchr(s, '\n', n - i);
		size_t len = nl ? (size_t)(nl - s) : n - i;
		i += len + 1;
		if (len && s[len - 1] == '\r')
			len--;
		if (yaml_blank(s, len))
			continue;
		size_t ind = indent_of(s, len), k = ind;
		int obj;
		if (yaml_dash(s, len, 0) && ind == 0) {
			items = 1;
			k = 2;
			obj = 1;
		} else if (ind == 0) {
			obj = 1;
			if (yaml_key_only(s, len, "items"))
				items = 1;
			else if (!(len >= 3 && s[0] == '-'))
				items = 0;
		} else {
			obj = ind == 2 && items;
		}
		/* the key of this line */
		size_t e = k;
		while (e < len && (isalnum((unsigned char)s[e]) || s[e] == '_'))
			e++;
		if (e >= len || s[e] != ':' || e == k)
			continue;
		f |= status_key(s + k, e - k);
		if (!obj)
			continue;
		size_t v = e + 1;
		while (v < len && s[v] == ' ')
			v++;
		size_t ve = v;
		if (ve < len && (s[ve] == '"' || s[ve] == '\'')) {
			char q = s[ve];
			v++;
			ve++;
			while (ve < len && s[ve] != q)
				ve++;
		} else {
			while (ve < len && !isspace((unsigned char)s[ve]) && s[ve] != '#')
				ve++;
		}
		if (key_is(s + k, e - k, "kind") && ve > v)
			f |= kind_flag(s + v, ve - v);
		if (key_is(s + k, e - k, "apiVersion") && ve > v)
			f |= IQ_K8S_APIVER;
	}
	return f;
}

unsigned iq_k8s_head_kinds(const char *head, size_t n)
{
	size_t i = 0;
	if (n >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	while (i < n && isspace((unsigned char)head[i]))
		i++;
	if (i >= n)
		return 0;
	if (head[i] == '{' || head[i] == '[') {
		static const char dj[] = "{\"log\":";
		if (n - i >= sizeof dj - 1 && memcmp(head + i, dj, sizeof dj - 1) == 0)
			return 0;
		return json_kinds(head + i, n - i);
	}
	/* YAML starts with a key, a document marker, a directive, a comment
	 * or a sequence */
	if (!(isalpha((unsigned char)head[i]) || head[i] == '-' || head[i] == '#' || head[i] == '%'))
		return 0;
	return yaml_kinds(head + i, n - i);
}

/* ---- The k8s-pods format ---- */

struct pods {
	struct iq_k8s_reader *rd;
	struct iq_buf text;
};

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	unsigned f = iq_k8s_head_kinds(head, n);
	const char *lang = f & IQ_K8S_JSON ? "JSON" : "YAML";
	if (!(f & IQ_K8S_APIVER) || (f & (IQ_K8S_EVENT | IQ_K8S_INVOLVED)) || !(f & IQ_K8S_POD))
		return 0;
	if (f & IQ_K8S_STATUS) {
		snprintf(why, whysz, "%s with kind Pod%s and pod status (containerStatuses/podIP/phase)",
			 lang, f & IQ_K8S_LIST ? " in a List" : "");
		return 92;
	}
	snprintf(why, whysz, "%s with kind Pod but no status in the first bytes", lang);
	return 55;
}

static int add_oneline(struct iq_buf *b, struct iq_str s)
{
	int rc = 0;
	for (size_t i = 0; i < s.n; i++)
		rc |= iq_buf_addc(b, s.p[i] == '\n' || s.p[i] == '\r' ? ' ' : s.p[i]);
	return rc;
}

/* "inference/vllm-0 vllm: waiting CrashLoopBackOff, not ready, restarts 3,
 * last terminated Error exit 1 at 2024-05-01T12:00:03Z" */
static int pod_text(struct iq_buf *b, const struct iq_pod *p, struct iq_str last_fin)
{
	int rc = 0;
	iq_buf_reset(b);
	if (p->ns.n)
		rc |= add_oneline(b, p->ns) | iq_buf_addc(b, '/');
	rc |= add_oneline(b, p->name) | iq_buf_addc(b, ' ') | add_oneline(b, p->container);
	rc |= iq_buf_adds(b, ": ") | add_oneline(b, p->state.n ? p->state : IQ_STR_LIT("unknown"));
	if (p->reason.n)
		rc |= iq_buf_addc(b, ' ') | add_oneline(b, p->reason);
	if (p->exit_code >= 0)
		rc |= iq_buf_printf(b, " exit %d", p->exit_code);
	if (p->ready >= 0)
		rc |= iq_buf_adds(b, p->ready ? ", ready" : ", not ready");
	if (p->restart_count >= 0)
		rc |= iq_buf_printf(b, ", restarts %d", p->restart_count);
	if (p->last_reason.n || p->last_exit_code >= 0) {
		rc |= iq_buf_adds(b, ", last terminated");
		if (p->last_reason.n)
			rc |= iq_buf_addc(b, ' ') | add_oneline(b, p->last_reason);
		if (p->last_exit_code >= 0)
			rc |= iq_buf_printf(b, " exit %d", p->last_exit_code);
		if (last_fin.n)
			rc |= iq_buf_adds(b, " at ") | add_oneline(b, last_fin);
	}
	return rc ? IQ_ERR_NOMEM : 0;
}

static int64_t jtime(json_t *o, const char *k, struct iq_str *raw, int *zone)
{
	struct iq_str s = jstr(o, k);
	int64_t t;
	size_t used;
	int z;
	if (!s.n || (z = iq_time_parse_iso(s.p, s.n, &t, &used)) < 0)
		return IQ_TIME_NONE;
	if (raw)
		*raw = s;
	if (zone)
		*zone = z;
	return t;
}

/* The record of one container status cs of pod o. */
/* Quotes of container status idx of status.<arr>: the lines that say how
 * its last instance ended, its state (and why) and whether it is ready. */
static void status_quotes(struct pods *p, struct iq_record *r, const char *arr, size_t idx,
			  const char *state, int has_reason, int has_last)
{
	struct iq_jpath path[6] = {{"status", 0}, {arr, 0}, {NULL, (long)idx}};
	if (has_last) {
		path[3] = (struct iq_jpath){"lastState", 0};
		path[4] = (struct iq_jpath){"terminated", 0};
		path[5] = (struct iq_jpath){"reason", 0};
		r->nquotes += iq_k8s_quote(p->rd, &r->quote[r->nquotes], "last_reason", path, 6);
	}
	if (state) {
		path[3] = (struct iq_jpath){"state", 0};
		path[4] = (struct iq_jpath){state, 0};
		path[5] = (struct iq_jpath){"reason", 0};
		r->nquotes += iq_k8s_quote(p->rd, &r->quote[r->nquotes], has_reason ? "reason" : "state", path,
					   has_reason ? 6 : 5);
	}
	path[3] = (struct iq_jpath){"ready", 0};
	r->nquotes += iq_k8s_quote(p->rd, &r->quote[r->nquotes], "ready", path, 4);
}

static int status_record(struct pods *p, const struct iq_parse_ctx *ctx, json_t *o, json_t *cs,
			 long line, const char *arr, size_t idx)
{
	json_t *meta = json_object_get(o, "metadata");
	json_t *spec = json_object_get(o, "spec");
	json_t *status = json_object_get(o, "status");
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_POD);
	struct iq_pod *pd = &r.u.pod;
	pd->ns = jstr(meta, "namespace");
	pd->name = jstr(meta, "name");
	pd->uid = jstr(meta, "uid");
	pd->node = jstr(spec, "nodeName");
	pd->pod_ip = jstr(status, "podIP");
	pd->phase = jstr(status, "phase");
	pd->container = jstr(cs, "name");
	pd->container_id = jstr(cs, "containerID");
	pd->image = jstr(cs, "image");
	pd->restart_count = (int)jint(cs, "restartCount", -1);
	if (pd->restart_count < 0)
		pd->restart_count = -1;
	pd->ready = jbool(cs, "ready");

	static const char *const states[] = {"running", "waiting", "terminated"};
	json_t *state = json_object_get(cs, "state");
	json_t *cur = NULL;
	for (size_t i = 0; i < IQ_ARRAY_LEN(states); i++) {
		json_t *s = json_object_get(state, states[i]);
		if (json_is_object(s)) {
			pd->state = iq_str_make(states[i], strlen(states[i]));
			cur = s;
			break;
		}
	}
	if (cur) {
		struct iq_str raw_s = IQ_STR_NULL, raw_f = IQ_STR_NULL;
		int zs = 0, zf = 0;
		pd->reason = jstr(cur, "reason");
		pd->exit_code = (int)jint(cur, "exitCode", -1);
		pd->started_at = jtime(cur, "startedAt", &raw_s, &zs);
		pd->finished_at = jtime(cur, "finishedAt", &raw_f, &zf);
		/* the latest of the state's times */
		if (pd->finished_at != IQ_TIME_NONE &&
		    (pd->started_at == IQ_TIME_NONE || pd->finished_at >= pd->started_at)) {
			r.ts = pd->finished_at;
			r.ts_raw = raw_f;
			r.ts_how = zf ? IQ_TS_EXPLICIT : iq_time_local(&r.ts);
		} else if (pd->started_at != IQ_TIME_NONE) {
			r.ts = pd->started_at;
			r.ts_raw = raw_s;
			r.ts_how = zs ? IQ_TS_EXPLICIT : iq_time_local(&r.ts);
		}
	}
	struct iq_str last_fin = IQ_STR_NULL;
	json_t *last = json_object_get(json_object_get(cs, "lastState"), "terminated");
	if (json_is_object(last)) {
		pd->last_reason = jstr(last, "reason");
		pd->last_exit_code = (int)jint(last, "exitCode", -1);
		pd->last_started_at = jtime(last, "startedAt", NULL, NULL);
		pd->last_finished_at = jtime(last, "finishedAt", &last_fin, NULL);
	}
	/* the pod's Ready condition, when True: since when */
	json_t *conds = json_object_get(status, "conditions");
	size_t ready_idx = 0;
	int has_ready = 0;
	for (size_t i = 0; i < json_array_size(conds); i++) {
		json_t *c = json_array_get(conds, i);
		struct iq_str ty = jstr(c, "type"), st = jstr(c, "status");
		if (ty.n == 5 && memcmp(ty.p, "Ready", 5) == 0 && st.n == 4 && memcmp(st.p, "True", 4) == 0 &&
		    (pd->ready_since = jtime(c, "lastTransitionTime", NULL, NULL)) != IQ_TIME_NONE) {
			ready_idx = i;
			has_ready = 1;
			break;
		}
	}
	if (pd->exit_code < -1)
		pd->exit_code = -1;
	if (pd->last_exit_code < -1)
		pd->last_exit_code = -1;
	r.id.ns = pd->ns;
	r.id.pod = pd->name;
	r.id.container = pd->container;
	r.id.node = pd->node;
	r.id.pod_uid = pd->uid;
	if (pod_text(&p->text, pd, last_fin))
		return IQ_ERR_NOMEM;
	r.text = iq_str_make(p->text.p, p->text.len);
	r.line = line;
	status_quotes(p, &r, arr, idx, cur ? pd->state.p : NULL, pd->reason.n > 0, pd->last_reason.n > 0);
	if (has_ready) {
		struct iq_jpath path[4] = {{"status", 0}, {"conditions", 0}, {NULL, (long)ready_idx},
					   {"lastTransitionTime", 0}};
		r.nquotes += iq_k8s_quote(p->rd, &r.quote[r.nquotes], "ready_since", path, 4);
	}
	return iq_k8s_record(p->rd, ctx, &r);
}

struct unit {
	long line;
	int what;        /* 0 spec container, 1 init status, 2 status */
	size_t idx;
};

static int unit_cmp(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->what != y->what)
		return x->what - y->what;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static const char *const unit_path[] = {"spec.containers", "status.initContainerStatuses",
					"status.containerStatuses"};

static int pod_item(void *u, const struct iq_parse_ctx *ctx, json_t *o)
{
	struct pods *p = u;
	struct iq_str kind = jstr(o, "kind");
	json_t *spec = json_object_get(o, "spec");
	json_t *status = json_object_get(o, "status");
	if (!str_eq(kind, "Pod") && (kind.n || !json_is_object(status))) {
		iq_k8s_item_skip(p->rd, ctx, "not a pod");
		return 0;
	}
	json_t *arrs[3] = {json_object_get(spec, "containers"),
			   json_object_get(status, "initContainerStatuses"),
			   json_object_get(status, "containerStatuses")};
	size_t nu = 0;
	for (int w = 0; w < 3; w++)
		nu += json_is_array(arrs[w]) ? json_array_size(arrs[w]) : 0;
	struct unit *us = iq_xmalloc((nu ? nu : 1) * sizeof *us);
	nu = 0;
	for (int w = 0; w < 3; w++) {
		if (!json_is_array(arrs[w]))
			continue;
		for (size_t i = 0; i < json_array_size(arrs[w]); i++) {
			if (!json_is_object(json_array_get(arrs[w], i)))
				continue;
			us[nu].line = iq_k8s_line_of(p->rd, unit_path[w], i);
			us[nu].what = w;
			us[nu].idx = i;
			nu++;
		}
	}
	qsort(us, nu, sizeof *us, unit_cmp);
	json_t *meta = json_object_get(o, "metadata");
	struct iq_ident id = {.restart = -1};
	id.ns = jstr(meta, "namespace");
	id.pod = jstr(meta, "name");
	id.pod_uid = jstr(meta, "uid");
	id.node = jstr(spec, "nodeName");
	int rc = 0;
	for (size_t k = 0; k < nu && !rc; k++) {
		json_t *c = json_array_get(arrs[us[k].what], us[k].idx);
		if (us[k].what == 0) {
			id.container = jstr(c, "name");
			rc = iq_k8s_container_config(p->rd, ctx, c, us[k].line, id.pod, &id);
		} else {
			rc = status_record(p, ctx, o, c, us[k].line,
					   us[k].what == 1 ? "initContainerStatuses" : "containerStatuses", us[k].idx);
		}
	}
	free(us);
	return rc;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct pods *p = st;
	iq_buf_init(&p->text);
	p->rd = iq_k8s_reader_new(pod_item, p);
	return 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct pods *p = st;
	return iq_k8s_reader_line(p->rd, ctx, lineno, s, n);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct pods *p = st;
	int rc = p->rd ? iq_k8s_reader_end(p->rd, ctx) : 0;
	iq_k8s_reader_free(p->rd);
	p->rd = NULL;
	iq_buf_release(&p->text);
	return rc;
}

const struct iq_format iq_format_k8s_pods = {
	.name = "k8s-pods",
	.desc = "Kubernetes pods with status (kubectl get pods -o json|yaml): container states",
	.sniff = sniff,
	.state_size = sizeof(struct pods),
	.begin = begin,
	.line = line,
	.end = end,
};
