/* triton_config.c: a Triton model's config.pbtxt (protobuf text format):
 * the settings that bound GPU memory and batching become IQ_KIND_CONFIG
 * records (source "triton-config") scoped to the model.
 *
 * Decisions: keys are name, platform, backend, max_batch_size;
 * dynamic_batching ("present") with max_queue_delay_microseconds,
 * preferred_batch_size, preserve_ordering, priority_levels,
 * default_priority_level and its queue policy's max_queue_size,
 * default_timeout_microseconds, timeout_action, allow_timeout_override;
 * instance_group's count/kind/gpus as instance_count/instance_kind/
 * instance_gpus; and each `parameters` entry with a string_value (the
 * TensorRT-LLM backend's kv_cache_free_gpu_mem_fraction, ...) as its own
 * key, its record spanning the entry's lines. A list value is written
 * comma-joined ("4,8"). The scope is the top-level name, else the model
 * directory of a <model>/config.pbtxt path; records wait for the end of
 * the file for it. Tensor specs and other settings are skipped. */
#include <stdlib.h>
#include <string.h>

#include "parse.h"

#define MAX_DEPTH 32
#define MAX_ITEMS 4096          /* records/skips held back for the scope */
#define NAME_MAX_LEN 64

struct frame {
	char name[NAME_MAX_LEN];   /* the field it opened ("" for a list element) */
	int list;                  /* '[' */
	int scalars;               /* a list of scalars (its items in p->list) */
	long line;
};

/* A record or a skip, held until the scope is known. */
struct item {
	long line, n;
	const char *reason;        /* NULL: a record */
	size_t k_off, k_len, v_off, v_len, t_off, t_len;
	long q_line;               /* the line it quotes (0 none), its text in arena */
	size_t q_off, q_len;
};

struct triton {
	long skipped_to;           /* the last line a skip emitted has counted */
	struct frame st[MAX_DEPTH];
	int depth;                 /* may exceed MAX_DEPTH: frames past it are nameless */
	char field[NAME_MAX_LEN];  /* the field name waiting for its value */
	int has_field, colon;
	struct iq_buf list;        /* items of the open scalar list */
	long list_line;
	/* the parameters entry being read */
	int pdepth;                /* its frame's depth + 1; 0 none */
	long pline;
	struct iq_buf pkey, pval;
	int have_pval;
	/* this line */
	int line_records, line_fields, line_values, line_tokens, line_punct, line_bad, line_comment;
	const char *line_reason;
	long covered;              /* lines up to this are in a parameter record */
	long last;                 /* the last line read */
	/* held output */
	struct item *items;
	size_t nitems, cap;
	struct iq_buf arena;
	struct iq_str scope;       /* into arena (name) or ctx->path */
	size_t scope_off;
	int have_name;
	/* the line being read, and where a parameters entry's key was */
	long cur;
	struct iq_str cur_text;
	long pkey_line;
	struct iq_buf pkey_text;
};

static int is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_ident(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9') || c == '.';
}

static int eq(const char *a, const char *lit)
{
	return strcmp(a, lit) == 0;
}

/* Settings that mark a config.pbtxt at a line start. */
static const char *const openers[] = {
	"platform: \"", "backend: \"", "max_batch_size:", "input [", "output [",
	"instance_group [", "dynamic_batching {", "dynamic_batching:", "parameters {",
	"parameters:", "sequence_batching {", "model_warmup [", "version_policy:",
};

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	size_t pos = 0;
	unsigned hit = 0;
	int kinds = 0, lines = 0;
	while (pos < n && lines < 200) {
		const char *nl = memchr(head + pos, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - (head + pos)) : n - pos;
		const char *s = head + pos;
		pos += len + 1;
		lines++;
		for (size_t k = 0; k < IQ_ARRAY_LEN(openers); k++) {
			size_t ol = strlen(openers[k]);
			if (len >= ol && memcmp(s, openers[k], ol) == 0 && !(hit & (1u << k))) {
				hit |= 1u << k;
				kinds++;
			}
		}
	}
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path;
	int named = base && strcmp(base, "config.pbtxt") == 0;
	int score = 0;
	if (kinds && named)
		score = 95;
	else if (kinds >= 2)
		score = 90;
	else if (kinds == 1 && !(hit & 4))
		score = 60;     /* one pbtxt-only opener */
	else if (kinds == 1)
		score = 30;     /* max_batch_size: alone could be YAML */
	if (score)
		snprintf(why, whysz, "Triton config.pbtxt settings at line starts (%d kinds)%s", kinds,
			 named ? ", named config.pbtxt" : "");
	return score;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	struct triton *p = st;
	iq_buf_init(&p->list);
	iq_buf_init(&p->pkey);
	iq_buf_init(&p->pkey_text);
	iq_buf_init(&p->pval);
	iq_buf_init(&p->arena);
	/* <repo>/<model>/config.pbtxt: the model directory names the model */
	const char *path = ctx->path ? ctx->path : "";
	const char *slash = strrchr(path, '/');
	if (slash && strcmp(slash + 1, "config.pbtxt") == 0) {
		const char *b = slash;
		while (b > path && b[-1] != '/')
			b--;
		p->scope = iq_str_make(b, (size_t)(slash - b));
	}
	return 0;
}

static struct iq_str arena_str(const struct triton *p, size_t off, size_t n)
{
	return iq_str_make(p->arena.p ? p->arena.p + off : "", n);
}

/* Emits the held items in line order (records and skips). */
static int flush_items(struct triton *p, const struct iq_parse_ctx *ctx)
{
	struct iq_str scope = p->have_name ? arena_str(p, p->scope_off, p->scope.n) : p->scope;
	int rc = 0;
	for (size_t i = 0; i < p->nitems && !rc; i++) {
		/* items arrive nearly in order: emit the earliest line first */
		size_t best = i;
		for (size_t j = i + 1; j < p->nitems; j++)
			if (p->items[j].line < p->items[best].line)
				best = j;
		struct item it = p->items[best];
		memmove(&p->items[i + 1], &p->items[i], (best - i) * sizeof it);
		p->items[i] = it;
		if (it.reason) {
			/* skips are emitted in line order: a line an earlier one
			 * has counted (a broken entry inside a broken line's
			 * span) is not counted twice */
			long first = it.line > p->skipped_to ? it.line : p->skipped_to + 1;
			long last = it.line + it.n - 1;
			if (first <= last)
				ctx->sink.skip(ctx->sink.u, first, last - first + 1, it.reason, NULL, 0);
			if (last > p->skipped_to)
				p->skipped_to = last;
			continue;
		}
		struct iq_record r;
		iq_record_init(&r, IQ_KIND_CONFIG);
		r.line = it.line;
		r.nlines = it.n;
		r.u.config.scope = scope;
		r.u.config.key = arena_str(p, it.k_off, it.k_len);
		r.u.config.value = arena_str(p, it.v_off, it.v_len);
		r.u.config.source = IQ_STR_LIT("triton-config");
		r.text = arena_str(p, it.t_off, it.t_len);
		if (it.q_line)
			r.quote[r.nquotes++] = (struct iq_quote){it.q_line, arena_str(p, it.q_off, it.q_len), "setting"};
		rc = ctx->sink.record(ctx->sink.u, &r);
	}
	p->nitems = 0;
	if (p->have_name) {
		/* keep the name for later items */
		size_t n = p->scope.n;
		memmove(p->arena.p, p->arena.p + p->scope_off, n);
		p->arena.len = n;
		p->scope_off = 0;
	} else {
		iq_buf_reset(&p->arena);
	}
	return rc;
}

static int hold(struct triton *p, const struct iq_parse_ctx *ctx, struct item it)
{
	int rc;
	if (p->nitems == MAX_ITEMS && (rc = flush_items(p, ctx)))
		return rc;
	if (p->nitems == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 64;
		struct item *ni = realloc(p->items, nc * sizeof *ni);
		if (!ni)
			return IQ_ERR_NOMEM;
		p->items = ni;
		p->cap = nc;
	}
	p->items[p->nitems++] = it;
	return 0;
}

static void skip_held(struct triton *p, const struct iq_parse_ctx *ctx, long first, long n,
		      const char *reason, int *rc)
{
	struct item it = {.line = first, .n = n, .reason = reason};
	if (!*rc)
		*rc = hold(p, ctx, it);
}

/* A record key=value over lines first..first+n-1. The key is normalised
 * (lower case, '-' as '_'). */
static int add_record(struct triton *p, const struct iq_parse_ctx *ctx, const char *key,
		      size_t kn, const char *val, size_t vn, long first, long n)
{
	struct item it = {.line = first, .n = n};
	it.k_off = p->arena.len;
	for (size_t i = 0; i < kn; i++) {
		char c = key[i];
		c = c == '-' ? '_' : (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
		if (iq_buf_addc(&p->arena, c))
			return IQ_ERR_NOMEM;
	}
	it.k_len = kn;
	it.v_off = p->arena.len;
	if (iq_buf_add(&p->arena, val, vn))
		return IQ_ERR_NOMEM;
	it.v_len = vn;
	/* the text: "key: value" */
	it.t_off = p->arena.len;
	if (iq_buf_reserve(&p->arena, kn + 2 + vn) ||   /* the copy below reads the arena */
	    iq_buf_add(&p->arena, p->arena.p + it.k_off, kn) || iq_buf_add(&p->arena, ": ", 2) ||
	    iq_buf_add(&p->arena, val, vn))
		return IQ_ERR_NOMEM;
	it.t_len = p->arena.len - it.t_off;
	/* the quote: the line it starts on when that is this one, a
	 * parameters entry's key line */
	const char *qs = NULL;
	size_t qn = 0;
	if (first == p->cur) {
		it.q_line = p->cur;
		qs = p->cur_text.p;
		qn = p->cur_text.n;
	} else if (first == p->pline && p->pkey_line) {
		it.q_line = p->pkey_line;
		qs = p->pkey_text.p;
		qn = p->pkey_text.len;
	}
	it.q_off = p->arena.len;
	if (qn && iq_buf_add(&p->arena, qs, qn))
		return IQ_ERR_NOMEM;
	it.q_len = qn;
	if (!qn)
		it.q_line = 0;
	p->line_records++;
	return hold(p, ctx, it);
}

/* The root field of the current position ("" at the top level). */
static const char *root(const struct triton *p)
{
	return p->depth > 0 ? p->st[0].name : "";
}

static const char *const batching_keys[] = {
	"max_queue_delay_microseconds", "preferred_batch_size", "preserve_ordering",
	"priority_levels", "default_priority_level", "max_queue_size",
	"default_timeout_microseconds", "timeout_action", "allow_timeout_override",
};

/* field = value (a scalar, or a list comma-joined) at line l. */
static int on_value(struct triton *p, const struct iq_parse_ctx *ctx, const char *field,
		    const char *v, size_t vn, long l)
{
	const char *r = root(p);
	p->line_fields++;
	if (p->depth == 0) {
		if (eq(field, "name") && !p->have_name) {
			/* the scope: kept at the arena's start across flushes */
			p->scope_off = p->arena.len;
			if (iq_buf_add(&p->arena, v, vn))
				return IQ_ERR_NOMEM;
			p->scope = iq_str_make(NULL, vn);
			p->have_name = 1;
		}
		if (eq(field, "name") || eq(field, "platform") || eq(field, "backend") ||
		    eq(field, "max_batch_size"))
			return add_record(p, ctx, field, strlen(field), v, vn, l, 1);
		return 0;
	}
	if (eq(r, "dynamic_batching")) {
		/* priority_queue_policy's per-level copies are not the defaults */
		for (int d = 1; d < p->depth && d < MAX_DEPTH; d++)
			if (eq(p->st[d].name, "priority_queue_policy"))
				return 0;
		for (size_t k = 0; k < IQ_ARRAY_LEN(batching_keys); k++)
			if (eq(field, batching_keys[k]))
				return add_record(p, ctx, field, strlen(field), v, vn, l, 1);
		return 0;
	}
	if (eq(r, "instance_group")) {
		static const struct { const char *f, *k; } ig[] = {
			{"count", "instance_count"}, {"kind", "instance_kind"}, {"gpus", "instance_gpus"},
		};
		for (size_t k = 0; k < IQ_ARRAY_LEN(ig); k++)
			if (eq(field, ig[k].f))
				return add_record(p, ctx, ig[k].k, strlen(ig[k].k), v, vn, l, 1);
		return 0;
	}
	if (p->pdepth && p->depth == p->pdepth && eq(field, "key")) {
		iq_buf_reset(&p->pkey);
		/* the entry's record quotes its key's line */
		p->pkey_line = p->cur;
		iq_buf_reset(&p->pkey_text);
		if (iq_buf_add(&p->pkey_text, p->cur_text.p, p->cur_text.n))
			return IQ_ERR_NOMEM;
		return iq_buf_add(&p->pkey, v, vn);
	}
	if (p->pdepth && p->depth == p->pdepth + 1 && eq(field, "string_value") &&
	    p->depth <= MAX_DEPTH && eq(p->st[p->depth - 1].name, "value")) {
		iq_buf_reset(&p->pval);
		p->have_pval = 1;
		return iq_buf_add(&p->pval, v, vn);
	}
	return 0;
}

static int push(struct triton *p, const char *name, int list, long l)
{
	if (p->depth < MAX_DEPTH) {
		struct frame *f = &p->st[p->depth];
		snprintf(f->name, sizeof f->name, "%s", name);
		f->list = list;
		f->scalars = 0;
		f->line = l;
	}
	p->depth++;
	return 0;
}

/* Opens a message for the waiting field (or a list element). */
static int open_msg(struct triton *p, const struct iq_parse_ctx *ctx, long l)
{
	const char *name = p->has_field ? p->field : "";
	int rc = 0;
	if (p->depth == 0 && eq(name, "dynamic_batching"))
		rc = add_record(p, ctx, "dynamic_batching", 16, "present", 7, l, 1);
	/* a parameters entry: `parameters { ... }` or an element of `parameters [` */
	if (!p->pdepth && ((p->depth == 0 && eq(name, "parameters")) ||
			   (p->depth == 1 && eq(p->st[0].name, "parameters") && p->st[0].list))) {
		p->pdepth = p->depth + 1;
		p->pline = l;
		p->have_pval = 0;
		iq_buf_reset(&p->pkey);
	}
	if (p->depth > 0 && p->depth <= MAX_DEPTH && p->st[p->depth - 1].list)
		name = "";
	push(p, name, 0, l);
	p->has_field = p->colon = 0;
	return rc;
}

static int close_frame(struct triton *p, const struct iq_parse_ctx *ctx, long l)
{
	int rc = 0;
	if (p->depth == 0) {
		p->line_bad++;
		return 0;
	}
	if (p->depth <= MAX_DEPTH) {
		struct frame *f = &p->st[p->depth - 1];
		if (f->list && f->scalars) {
			p->depth--;
			rc = on_value(p, ctx, f->name, p->list.p ? p->list.p : "", p->list.len,
				      p->list_line);
			p->depth++;
		}
	}
	if (p->pdepth && p->depth == p->pdepth) {
		/* the parameters entry ends: one record over its lines */
		p->pdepth = 0;
		if (p->pkey.len && p->have_pval) {
			rc = add_record(p, ctx, p->pkey.p, p->pkey.len, p->pval.p ? p->pval.p : "",
					p->pval.len, p->pline, l - p->pline + 1);
			p->covered = l;
		} else {
			/* lines an earlier entry already claimed are not skipped
			 * twice ("parameters{]parameters{]" on one line) */
			long first = p->covered >= p->pline ? p->covered + 1 : p->pline;
			if (first <= l)
				skip_held(p, ctx, first, l - first + 1, "parameter without value", &rc);
			p->covered = l;
		}
	}
	p->depth--;
	return rc;
}

/* A scalar token (number, enum, bool, string body). */
static int scalar(struct triton *p, const struct iq_parse_ctx *ctx, const char *v, size_t vn,
		  long l)
{
	p->line_values++;
	if (p->depth > 0 && p->depth <= MAX_DEPTH && p->st[p->depth - 1].list) {
		struct frame *f = &p->st[p->depth - 1];
		if (!f->scalars) {
			f->scalars = 1;
			iq_buf_reset(&p->list);
			p->list_line = f->line;
		} else if (iq_buf_addc(&p->list, ',')) {
			return IQ_ERR_NOMEM;
		}
		return iq_buf_add(&p->list, v, vn);
	}
	if (!p->has_field) {
		p->line_bad++;
		return 0;
	}
	char field[NAME_MAX_LEN];
	memcpy(field, p->field, sizeof field);
	p->has_field = p->colon = 0;
	return on_value(p, ctx, field, v, vn, l);
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct triton *p = st;
	int rc = 0;
	p->line_records = p->line_fields = p->line_values = p->line_tokens = p->line_punct = 0;
	p->line_bad = p->line_comment = 0;
	p->last = lineno;
	p->line_reason = NULL;
	/* the line as written, trimmed: what a record of it quotes */
	{
		size_t b = 0, e = n;
		while (b < e && (s[b] == ' ' || s[b] == '\t'))
			b++;
		while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r'))
			e--;
		p->cur = lineno;
		p->cur_text = iq_str_make(s + b, e - b);
	}
	int in_spec = eq(root(p), "input") || eq(root(p), "output");
	for (size_t i = 0; i < n && !rc;) {
		char c = s[i];
		if (c == ' ' || c == '\t' || c == ',' || c == ';') {
			i++;
			continue;
		}
		p->line_tokens++;
		if (c == '#') {
			p->line_comment = 1;
			p->line_tokens--;
			break;
		}
		if (is_ident_start(c)) {
			size_t b = i;
			while (i < n && is_ident(s[i]))
				i++;
			if (p->colon || (p->depth > 0 && p->depth <= MAX_DEPTH &&
					 p->st[p->depth - 1].list)) {
				rc = scalar(p, ctx, s + b, i - b, lineno);
			} else {
				size_t k = i - b < NAME_MAX_LEN - 1 ? i - b : NAME_MAX_LEN - 1;
				memcpy(p->field, s + b, k);
				p->field[k] = '\0';
				p->has_field = 1;
				if (!in_spec && p->depth == 0)
					in_spec = eq(p->field, "input") || eq(p->field, "output");
			}
			continue;
		}
		if (c == '"' || c == '\'') {
			size_t b = ++i;
			while (i < n && s[i] != c) {
				if (s[i] == '\\')
					i++;
				i++;
			}
			if (i >= n) {
				p->line_bad++;   /* strings do not span lines */
				break;
			}
			rc = scalar(p, ctx, s + b, i - b, lineno);
			i++;
			continue;
		}
		if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') {
			size_t b = i;
			while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != ',' && s[i] != ']' &&
			       s[i] != '}' && s[i] != '#' && s[i] != ';')
				i++;
			rc = scalar(p, ctx, s + b, i - b, lineno);
			continue;
		}
		i++;
		switch (c) {
		case ':':
			if (p->has_field)
				p->colon = 1;
			else
				p->line_bad++;
			break;
		case '{':
		case '<':
			p->line_tokens--;
			p->line_punct++;
			rc = open_msg(p, ctx, lineno);
			break;
		case '}':
		case '>':
			p->line_tokens--;
			p->line_punct++;
			rc = close_frame(p, ctx, lineno);
			break;
		case '[':
			p->line_tokens--;
			p->line_punct++;
			if (p->depth > 0 && p->depth <= MAX_DEPTH && p->st[p->depth - 1].list)
				p->line_bad++;   /* lists do not nest */
			push(p, p->has_field ? p->field : "", 1, lineno);
			p->has_field = p->colon = 0;
			break;
		case ']':
			p->line_tokens--;
			p->line_punct++;
			rc = close_frame(p, ctx, lineno);
			break;
		default:
			p->line_bad++;
			break;
		}
	}
	if (rc)
		return rc;
	if (p->line_bad)
		p->has_field = p->colon = 0;   /* no value carries over a broken line */
	/* what the line was, when no record claimed it */
	if (p->line_records || p->covered >= lineno || p->pdepth)
		return 0;
	const char *reason;
	if (p->line_bad)
		reason = "malformed";
	else if (p->line_tokens == 0 && p->line_punct == 0)
		reason = p->line_comment ? "comment" : "blank";
	else if (in_spec)
		reason = "tensor spec";
	else if (p->line_values == 0)
		reason = "structure";
	else
		reason = "setting not used";
	skip_held(p, ctx, lineno, 1, reason, &rc);
	return rc;
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct triton *p = st;
	int rc = 0;
	if (p->pdepth) {
		/* an entry cut by the end of the file */
		long first = p->covered >= p->pline ? p->covered + 1 : p->pline;
		if (first <= p->last)
			skip_held(p, ctx, first, p->last - first + 1, "truncated parameter", &rc);
	}
	int rc2 = flush_items(p, ctx);
	free(p->items);
	iq_buf_release(&p->list);
	iq_buf_release(&p->pkey);
	iq_buf_release(&p->pkey_text);
	iq_buf_release(&p->pval);
	iq_buf_release(&p->arena);
	return rc ? rc : rc2;
}

const struct iq_format iq_format_triton_config = {
	.name = "triton-config",
	.desc = "Triton model config.pbtxt: batching, instance groups, TensorRT-LLM parameters",
	.sniff = sniff,
	.state_size = sizeof(struct triton),
	.begin = begin,
	.line = line,
	.end = end,
};
