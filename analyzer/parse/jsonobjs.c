/* jsonobjs.c: the JSON object stream shared by the JSON log parsers
 * (jsonobjs.h). */
#include <string.h>

#include "jsonobjs.h"

#define MAX_ITEM_BYTES (16u << 20)

void iq_jsobjs_init(struct iq_jsobjs *j, iq_jsobj_fn emit, void *owner, const char *not_ours)
{
	memset(j, 0, sizeof *j);
	j->emit = emit;
	j->owner = owner;
	j->not_ours = not_ours;
	iq_buf_init(&j->buf);
	iq_buf_init(&j->skip_text);
}

static void flush_skip(struct iq_jsobjs *p, const struct iq_parse_ctx *ctx)
{
	if (!p->skip_count)
		return;
	ctx->sink.skip(ctx->sink.u, p->skip_first, p->skip_count, p->skip_reason,
		       p->skip_text.p, p->skip_text.len);
	p->skip_count = 0;
}

/* Accounts for one line outside any object. */
static void skip_one(struct iq_jsobjs *p, const struct iq_parse_ctx *ctx, long lineno,
		     const char *reason, const char *s, size_t n)
{
	if (lineno <= p->done)
		return; /* the end of an object already accounted for it */
	if (p->skip_count && p->skip_reason == reason &&
	    p->skip_first + p->skip_count == lineno) {
		p->skip_count++;
		return;
	}
	flush_skip(p, ctx);
	p->skip_first = lineno;
	p->skip_count = 1;
	p->skip_reason = reason;
	iq_buf_reset(&p->skip_text);
	/* the example is only for display: keep it short, drop it on ENOMEM */
	iq_buf_add(&p->skip_text, s, n < 512 ? n : 512);
}

/* Accounts for an object's lines first..lastl. */
static void skip_range(struct iq_jsobjs *p, const struct iq_parse_ctx *ctx, long first,
		       long lastl, const char *reason)
{
	flush_skip(p, ctx);
	/* an object can start on the line where the one before it ended:
	 * that line is accounted for once */
	if (first <= p->done)
		first = p->done + 1;
	if (lastl < first)
		return;
	ctx->sink.skip(ctx->sink.u, first, lastl - first + 1, reason, NULL, 0);
	p->done = lastl;
}

/* The object that opened on p->first closed on lastl with its last bytes
 * seg (the whole object when it fits one line, then whole says whether it
 * fills the line): parse and emit it, or account for its lines. */
static int finish_item(struct iq_jsobjs *p, const struct iq_parse_ctx *ctx, long lastl,
		       struct iq_str seg, int whole)
{
	int rc = 0;
	int one = p->first == lastl;
	p->open = 0;
	if (!p->broken && !p->too_big && !one) {
		if (p->buf.len + seg.n + 1 > MAX_ITEM_BYTES)
			p->too_big = 1;
		else if ((rc = iq_buf_add(&p->buf, seg.p, seg.n)))
			return rc;
	}
	if (p->too_big) {
		skip_range(p, ctx, p->first, lastl, "json object too large");
	} else if (p->broken) {
		skip_range(p, ctx, p->first, lastl, "malformed json");
	} else {
		json_error_t err;
		json_t *o = one ? json_loadb(seg.p, seg.n, 0, &err)
				: json_loadb(p->buf.p, p->buf.len, 0, &err);
		if (!json_is_object(o)) {
			skip_range(p, ctx, p->first, lastl, "malformed json");
		} else {
			flush_skip(p, ctx);
			p->raw = one ? seg : iq_str_make(p->buf.p, p->buf.len);
			rc = p->emit(p->owner, ctx, o, p->first, lastl, one && whole ? seg : IQ_STR_NULL);
			p->raw = IQ_STR_NULL;
			if (rc == 0 && lastl > p->done)
				p->done = lastl;
			if (rc == 1) {
				rc = 0;
				skip_range(p, ctx, p->first, lastl, p->not_ours);
			}
		}
		json_decref(o);
	}
	iq_buf_reset(&p->buf);
	if (p->buf.cap > (1u << 20))
		iq_buf_release(&p->buf);
	return rc;
}

static void add_seg(struct iq_jsobjs *p, const char *s, size_t n)
{
	if (p->broken || p->too_big)
		return;
	if (p->buf.len + n + 1 > MAX_ITEM_BYTES) {
		p->too_big = 1;
		iq_buf_release(&p->buf);
		return;
	}
	if (iq_buf_add(&p->buf, s, n))
		p->broken = 1;     /* out of memory: drop this object only */
}

int iq_jsobjs_line(struct iq_jsobjs *p, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	int rc;
	p->last = lineno;
	/* one object per line resumes after a truncated one */
	if (p->open && p->base == 0 && p->col0 && n && s[0] == '{') {
		skip_range(p, ctx, p->first, lineno - 1, "truncated json object");
		p->open = 0;
		p->depth = 0;
		p->in_str = p->esc = 0;
		iq_buf_reset(&p->buf);
	}
	/* an object at column 0 starts at the top level: stray brackets
	 * before it (a cut array, garbage) no longer count */
	if (!p->open && n && s[0] == '{' && p->depth) {
		p->depth = 0;
		p->array = 0;
		p->in_str = p->esc = 0;
	}
	int touched = p->open, garbage = 0, blank = 1;
	size_t seg = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (ch != ' ' && ch != '\t')
			blank = 0;
		if (p->in_str) {
			if (p->esc)
				p->esc = 0;
			else if (ch == '\\')
				p->esc = 1;
			else if (ch == '"')
				p->in_str = 0;
			continue;
		}
		switch (ch) {
		case '"':
			p->in_str = 1;
			garbage |= !p->open;
			break;
		case '{':
			if (!p->open && p->depth == (p->array ? 1 : 0)) {
				p->open = 1;
				p->broken = p->too_big = 0;
				p->base = p->depth;
				p->first = lineno;
				p->col0 = i == 0;
				iq_buf_reset(&p->buf);
				seg = i;
				touched = 1;
			} else {
				garbage |= !p->open;
			}
			p->depth++;
			break;
		case '[':
			if (!p->open && p->depth == 0 && !p->array)
				p->array = 1;
			else
				garbage |= !p->open;
			p->depth++;
			break;
		case '}':
		case ']':
			if (p->depth == 0) {
				garbage = 1;       /* stray */
				break;
			}
			p->depth--;
			if (p->open && p->depth == p->base) {
				if (ch != '}')
					p->broken = 1;
				size_t b = p->first == lineno ? seg : 0;
				size_t k = i + 1;
				while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == ','))
					k++;
				int whole = b == 0 && k == n;
				if ((rc = finish_item(p, ctx, lineno, iq_str_make(s + b, i + 1 - b), whole)))
					return rc;
			} else if (!p->open && p->array && p->depth == 0) {
				p->array = 0;
			}
			break;
		case ' ':
		case '\t':
		case ',':
			break;
		default:
			garbage |= !p->open;
			break;
		}
	}
	/* JSON strings do not span lines: the object is broken, but its
	 * braces still tell where it ends */
	if (p->in_str || p->esc) {
		p->in_str = p->esc = 0;
		if (p->open)
			p->broken = 1;
	}
	if (p->open) {
		size_t b = p->first == lineno ? seg : 0;
		add_seg(p, s + b, n - b);
		add_seg(p, "\n", 1);
	}
	if (!touched)
		skip_one(p, ctx, lineno, blank ? "blank" : garbage ? "not json" : "json envelope", s, n);
	return 0;
}

void iq_jsobjs_end(struct iq_jsobjs *p, const struct iq_parse_ctx *ctx)
{
	if (p->open) {
		p->open = 0;
		skip_range(p, ctx, p->first, p->last, "truncated json object");
	}
	flush_skip(p, ctx);
	iq_buf_release(&p->buf);
	iq_buf_release(&p->skip_text);
}
