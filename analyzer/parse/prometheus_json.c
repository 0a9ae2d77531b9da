/* prometheus_json.c: Prometheus HTTP API query results (`query_range`
 * matrix, `query` vector) as saved from /api/v1/query*: one IQ_KIND_GPU
 * record per sample of a DCGM GPU series, one IQ_KIND_LOG record per
 * sample of a serving engine's queue or KV-cache series (vLLM in all its
 * metric spellings, SGLang, TGI: engine_stats.c), its text in the wording
 * of vLLM V1's periodic line ("Waiting: 23 reqs"). A string-aware depth tracker
 * finds each series object of data.result in the stream; only that
 * object's bytes go to jansson, so memory is bounded per series.
 *
 * Decisions: a record fills the one field its series is about (FB_USED ->
 * mem_used_mib, FB_FREE, FB_TOTAL, GPU_UTIL, MEM_COPY_UTIL, GPU_TEMP,
 * POWER_USAGE); joining the series of one GPU and time is left to SQL.
 * A record's line is its sample's '[' and covers the lines up to the next
 * sample (several samples on one line each claim that line; the driver
 * counts it once). Series of other metrics, or without __name__, are
 * skipped "metric not used"; the envelope "json envelope". */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "engine_stats.h"
#include "parse.h"

#define MAX_SERIES_BYTES (32u << 20)
#define MAX_SERIES_DEPTH 64

enum met {
	M_FB_USED,
	M_FB_FREE,
	M_FB_TOTAL,
	M_GPU_UTIL,
	M_MEM_COPY_UTIL,
	M_GPU_TEMP,
	M_POWER,
	M_COUNT
};

static const char *const met_names[M_COUNT] = {
	"DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_TOTAL",
	"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_GPU_TEMP",
	"DCGM_FI_DEV_POWER_USAGE",
};

struct pjson {
	/* the tracker */
	long depth;
	int in_str, esc;
	char str[8];            /* the current/last string's first bytes */
	int str_len;            /* capped at sizeof str + 1 */
	int after_str;          /* the last token was a string */
	char key[8];            /* the key whose ':' was just seen */
	int key_len;
	long result_depth;      /* depth at which '{' opens a series; 0 none */
	/* the series being read */
	int open;
	long base;              /* depth before its '{' */
	long line;              /* line of its '{' */
	int in_values;          /* inside its "values" array */
	int too_big, too_deep, broken;
	struct iq_buf buf;
	long *slines;           /* line of each sample's '[' */
	size_t *soffs;          /* ... and its offset in buf */
	size_t ns, scap;
	/* accounting: lines before acct are in a record or skipped */
	long acct;
	long last;
	struct iq_buf text, name;
};

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t i = 0;
	while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
		i++;
	if (i >= n || head[i] != '{' || !iq_memmem(head, n, "\"status\"", 8))
		return 0;
	if (iq_memmem(head, n, "\"resultType\"", 12)) {
		snprintf(why, whysz, "Prometheus HTTP API result (\"status\", \"resultType\")");
		return 90;
	}
	if (iq_memmem(head, n, "\"errorType\"", 11)) {
		snprintf(why, whysz, "Prometheus HTTP API error (\"status\", \"errorType\")");
		return 70;
	}
	return 0;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct pjson *p = st;
	iq_buf_init(&p->buf);
	iq_buf_init(&p->text);
	iq_buf_init(&p->name);
	p->acct = 1;
	return 0;
}

/* Accounts for the lines before l that nothing claimed. */
static void envelope_until(struct pjson *p, const struct iq_parse_ctx *ctx, long l)
{
	if (p->acct < l) {
		ctx->sink.skip(ctx->sink.u, p->acct, l - p->acct, "json envelope", NULL, 0);
		p->acct = l;
	}
}

/* The quote of sample i: its "[time, "value"]" as written when it is on
 * one line; else the line of its value (a pretty-printed pair). */
static void sample_quote(const struct pjson *p, size_t i, struct iq_record *r)
{
	if (i >= p->ns || p->soffs[i] >= p->buf.len || p->buf.p[p->soffs[i]] != '[')
		return;
	const char *b = p->buf.p + p->soffs[i], *e = b, *lim = p->buf.p + p->buf.len;
	long line = p->slines[i];
	while (e < lim && *e != ']' && *e != '\n')
		e++;
	if (e < lim && *e == '\n') {
		/* the value: the string after the pair's comma, on its own line */
		const char *v = memchr(b, ',', (size_t)(lim - b));
		if (!v)
			return;
		for (const char *c = b; c < v; c++)
			line += *c == '\n';
		for (v++; v < lim && (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r'); v++)
			line += *v == '\n';
		b = v;
		for (e = b; e < lim && *e != '\n' && *e != ']'; e++)
			;
		while (e > b && (e[-1] == ' ' || e[-1] == '\r'))
			e--;
		if (e > b)
			r->quote[r->nquotes++] = (struct iq_quote){line, iq_str_make(b, (size_t)(e - b)), "sample"};
		return;
	}
	if (e < lim && *e == ']')
		r->quote[r->nquotes++] = (struct iq_quote){line, iq_str_make(b, (size_t)(e + 1 - b)), "sample"};
}

/* Accounts for lines first..lastl (those not yet accounted) as skipped. */
static void skip_lines(struct pjson *p, const struct iq_parse_ctx *ctx, long first, long lastl,
		       const char *reason)
{
	envelope_until(p, ctx, first);
	if (p->acct <= lastl) {
		ctx->sink.skip(ctx->sink.u, p->acct, lastl - p->acct + 1, reason, NULL, 0);
		p->acct = lastl + 1;
	}
}

static struct iq_str label(json_t *m, const char *const *names)
{
	for (; *names; names++) {
		json_t *v = json_object_get(m, *names);
		if (json_is_string(v) && json_string_length(v))
			return iq_str_make(json_string_value(v), json_string_length(v));
	}
	return IQ_STR_NULL;
}

#define LABELS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A value string: NaN/Inf and DCGM blank sentinels are unknown (NAN).
 * -1 when not a number. */
static int parse_value(const char *s, double *out)
{
	char *end;
	if (!*s)
		return -1;
	double v = strtod(s, &end);
	if (*end)
		return -1;
	if (isnan(v) || isinf(v) || v >= 9.2233720368547748e18 ||
	    (v >= 2147483632.0 && v <= 2147483647.0) ||
	    (v >= 140737488355328.0 && v < 140737488355344.0))
		v = NAN;
	*out = v;
	return 0;
}

/* A sample time (float seconds) to UTC ns at ms precision, and its
 * spelling into raw. -1 when not a plausible time. */
static int sample_time(json_t *t, int64_t *out, char *raw, size_t rawsz)
{
	if (json_is_integer(t)) {
		json_int_t s = json_integer_value(t);
		if (s < 0 || s > 9000000000LL)
			return -1;
		*out = (int64_t)s * IQ_NS_PER_SEC;
		snprintf(raw, rawsz, "%lld", (long long)s);
		return 0;
	}
	if (!json_is_real(t))
		return -1;
	double s = json_real_value(t);
	if (!(s >= 0 && s <= 9e9))
		return -1;
	int64_t ms = (int64_t)(s * 1000.0 + 0.5);
	*out = ms * 1000000;
	int k = snprintf(raw, rawsz, "%lld.%03lld", (long long)(ms / 1000), (long long)(ms % 1000));
	while (k > 0 && raw[k - 1] == '0')
		raw[--k] = '\0';
	if (k > 0 && raw[k - 1] == '.')
		raw[--k] = '\0';
	return 0;
}

/* The lines sample i covers: from its '[' to the line before the next
 * sample's (at least its own), the last one to the series' end. */
static void sample_span(const struct pjson *p, size_t i, long lastl, long *first, long *cnt)
{
	if (p->ns != 0 && i < p->ns) {
		*first = p->slines[i];
		long next = i + 1 < p->ns ? p->slines[i + 1] : lastl + 1;
		*cnt = next > *first ? next - *first : 1;
	} else {
		*first = p->line;
		*cnt = lastl - p->line + 1;
	}
}

/* A log record for one sample (value v, already scaled) of an engine
 * series with labels m: "vllm metrics engine 0 model M: Waiting: 23
 * reqs". The text lives in p->text. */
static int engine_record(struct pjson *p, json_t *m, const char *engine, enum iq_es es, double v,
			 struct iq_record *r)
{
	iq_record_init(r, IQ_KIND_LOG);
	struct iq_es_values vals;
	iq_es_init(&vals);
	vals.v[es] = v;
	struct iq_str eng = label(m, LABELS("engine"));
	struct iq_str model = label(m, LABELS("model_name"));
	iq_buf_reset(&p->text);
	int rc = iq_buf_adds(&p->text, engine) | iq_buf_adds(&p->text, " metrics");
	if (eng.n)
		rc |= iq_buf_adds(&p->text, " engine ") | iq_buf_add(&p->text, eng.p, eng.n);
	if (model.n)
		rc |= iq_buf_adds(&p->text, " model ") | iq_buf_add(&p->text, model.p, model.n);
	rc |= iq_buf_adds(&p->text, ": ");
	if (rc || iq_es_render(&p->text, &vals))
		return IQ_ERR_NOMEM;
	r->text = iq_str_make(p->text.p, p->text.len);
	return 0;
}

/* One series object into records. */
static int emit_series(struct pjson *p, const struct iq_parse_ctx *ctx, json_t *o, long lastl)
{
	json_t *m = json_object_get(o, "metric");
	const char *name = json_string_value(json_object_get(m, "__name__"));
	int met = -1;
	for (int k = 0; name && k < M_COUNT; k++)
		if (strcmp(name, met_names[k]) == 0)
			met = k;
	enum iq_es es = IQ_ES_COUNT;
	double scale = 1;
	const char *engine = NULL;
	if (met < 0 && name && !iq_es_of_metric(name, strlen(name), &es, &scale, &engine))
		es = IQ_ES_COUNT;
	json_t *vals = json_object_get(o, "values");
	json_t *one = json_object_get(o, "value");
	if ((met < 0 && es == IQ_ES_COUNT) || (!json_is_array(vals) && !json_is_array(one))) {
		skip_lines(p, ctx, p->line, lastl, met < 0 ? "metric not used" : "series without values");
		return 0;
	}
	size_t nv = json_is_array(vals) ? json_array_size(vals) : 1;
	/* the sample lines found are trusted when they match the values */
	if (p->ns != nv)
		p->ns = 0;
	long f0, c0;
	sample_span(p, 0, lastl, &f0, &c0);
	if (nv == 0) {
		skip_lines(p, ctx, p->line, lastl, "series without values");
		return 0;
	}
	if (f0 > p->line)
		skip_lines(p, ctx, p->line, f0 - 1, "series labels");

	struct iq_str idx = label(m, LABELS("gpu"));
	struct iq_str uuid = label(m, LABELS("UUID"));
	struct iq_str model = label(m, LABELS("modelName"));
	struct iq_str gi = label(m, LABELS("GPU_I_ID"));
	struct iq_str prof = label(m, LABELS("GPU_I_PROFILE"));
	int rc = 0;
	iq_buf_reset(&p->name);
	if (gi.n) {
		if (model.n)
			rc |= iq_buf_add(&p->name, model.p, model.n) | iq_buf_addc(&p->name, ' ');
		rc |= iq_buf_adds(&p->name, "MIG ");
		if (prof.n)
			rc |= iq_buf_add(&p->name, prof.p, prof.n) | iq_buf_addc(&p->name, ' ');
		rc |= iq_buf_adds(&p->name, "GI ") | iq_buf_add(&p->name, gi.p, gi.n);
	}
	if (rc)
		return IQ_ERR_NOMEM;
	int index = -1;
	if (idx.n && idx.n <= 5) {
		int v = 0;
		size_t k = 0;
		while (k < idx.n && idx.p[k] >= '0' && idx.p[k] <= '9')
			v = v * 10 + (idx.p[k++] - '0');
		if (k == idx.n)
			index = v;
	}
	for (size_t i = 0; i < nv; i++) {
		json_t *pair = json_is_array(vals) ? json_array_get(vals, i) : one;
		long first, cnt;
		sample_span(p, i, lastl, &first, &cnt);
		if (i + 1 == nv && first + cnt - 1 < lastl)
			cnt = lastl - first + 1;
		int64_t t;
		char raw[40];
		double v;
		const char *vs = json_string_value(json_array_get(pair, 1));
		if (json_array_size(pair) != 2 || !vs ||
		    sample_time(json_array_get(pair, 0), &t, raw, sizeof raw) != 0 ||
		    parse_value(vs, &v) != 0) {
			skip_lines(p, ctx, first, first + cnt - 1, "malformed sample");
			continue;
		}
		if (isnan(v)) {
			/* NaN, Inf or a DCGM blank: a sample that says nothing */
			skip_lines(p, ctx, first, first + cnt - 1, "no value");
			continue;
		}
		struct iq_record r;
		if (met < 0) {
			rc = engine_record(p, m, engine, es, v * scale, &r);
			if (rc)
				return rc;
		} else {
			iq_record_init(&r, IQ_KIND_GPU);
		}
		r.line = first;
		r.nlines = cnt;
		sample_quote(p, i, &r);
		r.ts = t;
		r.ts_how = IQ_TS_EXPLICIT;
		r.ts_raw = iq_str_make(raw, strlen(raw));
		r.id.node = label(m, LABELS("Hostname", "hostname"));
		r.id.pod = label(m, LABELS("exported_pod", "pod", "pod_name"));
		r.id.ns = label(m, LABELS("exported_namespace", "namespace", "pod_namespace"));
		r.id.container = label(m, LABELS("exported_container", "container", "container_name"));
		if (met < 0) {
			envelope_until(p, ctx, first);
			if (p->acct < first + cnt)
				p->acct = first + cnt;
			if ((rc = ctx->sink.record(ctx->sink.u, &r)))
				return rc;
			continue;
		}
		struct iq_gpu *g = &r.u.gpu;
		g->index = index;
		g->uuid = uuid;
		g->pci_bus = label(m, LABELS("pci_bus_id"));
		g->name = gi.n ? iq_str_make(p->name.p, p->name.len) : model;
		double *field[M_COUNT] = {
			&g->mem_used_mib, &g->mem_free_mib, &g->mem_total_mib, &g->util_gpu_pct,
			&g->util_mem_pct, &g->temp_c, &g->power_w,
		};
		*field[met] = v;
		iq_buf_reset(&p->text);
		rc = iq_buf_adds(&p->text, name);
		if (idx.n)
			rc |= iq_buf_adds(&p->text, " gpu ") | iq_buf_add(&p->text, idx.p, idx.n);
		if (uuid.n)
			rc |= iq_buf_addc(&p->text, ' ') | iq_buf_add(&p->text, uuid.p, uuid.n);
		if (gi.n)
			rc |= iq_buf_adds(&p->text, " GI ") | iq_buf_add(&p->text, gi.p, gi.n);
		rc |= iq_buf_printf(&p->text, " = %s", vs);
		if (rc)
			return IQ_ERR_NOMEM;
		r.text = iq_str_make(p->text.p, p->text.len);
		envelope_until(p, ctx, first);
		if (p->acct < first + cnt)
			p->acct = first + cnt;
		if ((rc = ctx->sink.record(ctx->sink.u, &r)))
			return rc;
	}
	return 0;
}

/* The series that opened at p->line closed on line lastl. */
static int finish_series(struct pjson *p, const struct iq_parse_ctx *ctx, long lastl)
{
	int rc = 0;
	p->open = 0;
	p->in_values = 0;
	if (p->too_big) {
		skip_lines(p, ctx, p->line, lastl, "series json too large");
	} else if (p->too_deep || p->broken) {
		skip_lines(p, ctx, p->line, lastl, "malformed series json");
	} else {
		json_error_t err;
		json_t *o = json_loadb(p->buf.p ? p->buf.p : "", p->buf.len, 0, &err);
		if (!json_is_object(o))
			skip_lines(p, ctx, p->line, lastl, "malformed series json");
		else
			rc = emit_series(p, ctx, o, lastl);
		json_decref(o);
	}
	iq_buf_reset(&p->buf);
	if (p->buf.cap > (1u << 20))
		iq_buf_release(&p->buf);
	p->ns = 0;
	return rc;
}

static int add_seg(struct pjson *p, const char *s, size_t n)
{
	if (p->too_big || p->too_deep || p->broken)
		return 0;
	if (p->buf.len + n + 1 > MAX_SERIES_BYTES) {
		p->too_big = 1;
		iq_buf_release(&p->buf);
		return 0;
	}
	return iq_buf_add(&p->buf, s, n);
}

/* Notes a sample's '[' at line lineno, off bytes into the series' buf. */
static int push_sample_line(struct pjson *p, long lineno, size_t off)
{
	if (p->ns == p->scap) {
		size_t nc = p->scap ? p->scap * 2 : 64;
		p->slines = iq_xrealloc(p->slines, nc * sizeof *p->slines);
		p->soffs = iq_xrealloc(p->soffs, nc * sizeof *p->soffs);
		p->scap = nc;
	}
	p->soffs[p->ns] = off;
	p->slines[p->ns++] = lineno;
	return 0;
}


static int key_is(const struct pjson *p, const char *k)
{
	size_t n = strlen(k);
	return (size_t)p->key_len == n && memcmp(p->key, k, n) == 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct pjson *p = st;
	int rc;
	p->last = lineno;
	size_t seg = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (p->in_str) {
			if (p->esc) {
				p->esc = 0;
			} else if (ch == '\\') {
				p->esc = 1;
			} else if (ch == '"') {
				p->in_str = 0;
				p->after_str = 1;
			} else if (p->str_len <= (int)sizeof p->str) {
				if (p->str_len < (int)sizeof p->str)
					p->str[p->str_len] = ch;
				p->str_len++;
			}
			continue;
		}
		switch (ch) {
		case '"':
			p->in_str = 1;
			p->str_len = 0;
			p->key_len = 0;
			break;
		case ':':
			p->key_len = 0;
			if (p->after_str && p->str_len <= (int)sizeof p->key) {
				memcpy(p->key, p->str, (size_t)p->str_len);
				p->key_len = p->str_len;
			}
			p->after_str = 0;
			break;
		case '{':
		case '[':
			if (ch == '[' && !p->open && key_is(p, "result")) {
				p->result_depth = p->depth + 1;
			} else if (ch == '{' && !p->open && p->result_depth && p->depth == p->result_depth) {
				p->open = 1;
				p->base = p->depth;
				p->line = lineno;
				p->too_big = p->too_deep = p->broken = 0;
				p->ns = 0;
				iq_buf_reset(&p->buf);
				seg = i;
			} else if (ch == '[' && p->open && p->depth == p->base + 1) {
				if (key_is(p, "values"))
					p->in_values = 1;
				else if (key_is(p, "value") && (rc = push_sample_line(p, lineno, p->buf.len + i - seg)))
					return rc;
			} else if (ch == '[' && p->open && p->in_values && p->depth == p->base + 2) {
				if ((rc = push_sample_line(p, lineno, p->buf.len + i - seg)))
					return rc;
			}
			p->key_len = 0;
			p->after_str = 0;
			p->depth++;
			if (p->open && p->depth - p->base > MAX_SERIES_DEPTH && !p->too_deep) {
				p->too_deep = 1;
				iq_buf_release(&p->buf);
			}
			break;
		case '}':
		case ']':
			p->key_len = 0;
			p->after_str = 0;
			if (p->depth == 0)
				break;   /* stray: ignore */
			p->depth--;
			if (p->open && p->depth == p->base + 1)
				p->in_values = 0;
			if (p->open && p->depth == p->base) {
				if ((rc = add_seg(p, s + seg, i + 1 - seg)))
					return rc;
				if ((rc = finish_series(p, ctx, lineno)))
					return rc;
			} else if (!p->open && p->result_depth && p->depth < p->result_depth) {
				p->result_depth = 0;   /* the result array closed */
			}
			break;
		default:
			if (ch != ' ' && ch != '\t' && ch != ',' && ch != '\r') {
				p->key_len = 0;
				p->after_str = 0;
			}
			break;
		}
	}
	/* JSON strings do not span lines: the series is broken, but its
	 * brackets still tell where it ends */
	if (p->in_str || p->esc) {
		p->in_str = p->esc = 0;
		if (p->open && !p->broken) {
			p->broken = 1;
			iq_buf_release(&p->buf);
		}
	}
	if (p->open && ((rc = add_seg(p, s + seg, n - seg)) || (rc = add_seg(p, "\n", 1))))
		return rc;
	return 0;
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct pjson *p = st;
	if (p->open) {
		p->open = 0;
		skip_lines(p, ctx, p->line, p->last, "truncated series json");
	}
	envelope_until(p, ctx, p->last + 1);
	iq_buf_release(&p->buf);
	iq_buf_release(&p->text);
	iq_buf_release(&p->name);
	free(p->slines);
	free(p->soffs);
	return 0;
}

const struct iq_format iq_format_prometheus_json = {
	.name = "prometheus-json",
	.desc = "Prometheus HTTP API query/query_range JSON: one record per DCGM or serving-engine sample",
	.sniff = sniff,
	.state_size = sizeof(struct pjson),
	.begin = begin,
	.line = line,
	.end = end,
};
