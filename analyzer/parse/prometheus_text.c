/* prometheus_text.c: the Prometheus text exposition format (0.0.4, and the
 * OpenMetrics spellings that matter), as scraped from dcgm-exporter or any
 * exporter, one scrape or several concatenated. The DCGM GPU metrics of
 * one scrape (or nvidia_gpu_exporter's nvidia_smi_* gauges of the same
 * fields) are grouped by GPU (or MIG instance) into one IQ_KIND_GPU
 * record per GPU per scrape; a serving engine's queue and KV-cache gauges
 * (vLLM in all its metric spellings, SGLang, TGI: engine_stats.c) into one
 * IQ_KIND_LOG record per engine per scrape, whose text says them as vLLM
 * V1's periodic line does ("Running: 20 reqs, Waiting: 23 reqs, GPU KV
 * cache usage: 98.4%"), the line the rule packs read.
 *
 * Decisions: a record's line is the first sample line of its GPU in that
 * scrape and nlines is the number of sample lines it consumed (they are
 * interleaved with other GPUs' lines, so nlines counts lines, it is not a
 * range). Samples of other metrics are skipped "metric not used", # HELP/
 * TYPE/UNIT/EOF lines "metadata". A scrape ends where a GPU's series
 * repeats; samples with timestamps are grouped by timestamp instead (ms in
 * 0.0.4; a timestamp with a fraction or below 1e11 is OpenMetrics seconds).
 * Without timestamps ts is none: the file's mtime is not a sample time. */
#include <stdlib.h>
#include <string.h>

#include "engine_stats.h"
#include "parse.h"

/* The DCGM fields a GPU record is made of. */
enum met {
	M_FB_USED,
	M_FB_FREE,
	M_FB_RESERVED,
	M_FB_TOTAL,
	M_GPU_UTIL,
	M_MEM_COPY_UTIL,
	M_GPU_TEMP,
	M_POWER,
	M_COUNT
};

static const char *const met_names[M_COUNT] = {
	"DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_RESERVED",
	"DCGM_FI_DEV_FB_TOTAL", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL",
	"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE",
};

/* The labels that say which GPU (and whose) a sample is about. */
enum lab {
	L_GPU,
	L_UUID,
	L_DEVICE,
	L_PCI,
	L_MODEL,
	L_HOST,
	L_POD,
	L_NS,
	L_CONTAINER,
	L_GI_ID,
	L_GI_PROFILE,
	L_MODEL_NAME,   /* a serving engine's model and engine index */
	L_ENGINE,
	L_INSTANCE,     /* the scrape target: tells engines apart */
	L_COUNT
};

/* Label spellings, best first within one lab: after a Prometheus scrape
 * with honor_labels false the exporter's own pod label is exported_pod
 * (pod is then the exporter's pod); pod_name etc. are old exporters'. */
static const struct {
	const char *name;
	enum lab l;
	int rank;
} labels[] = {
	{"gpu", L_GPU, 0}, {"UUID", L_UUID, 0}, {"uuid", L_UUID, 1}, {"device", L_DEVICE, 0},
	{"pci_bus_id", L_PCI, 0}, {"modelName", L_MODEL, 0},
	{"Hostname", L_HOST, 0}, {"hostname", L_HOST, 1},
	{"exported_pod", L_POD, 0}, {"pod", L_POD, 1}, {"pod_name", L_POD, 2},
	{"exported_namespace", L_NS, 0}, {"namespace", L_NS, 1}, {"pod_namespace", L_NS, 2},
	{"exported_container", L_CONTAINER, 0}, {"container", L_CONTAINER, 1},
	{"container_name", L_CONTAINER, 2},
	{"GPU_I_ID", L_GI_ID, 0}, {"GPU_I_PROFILE", L_GI_PROFILE, 0},
	{"model_name", L_MODEL_NAME, 0}, {"engine", L_ENGINE, 0}, {"instance", L_INSTANCE, 0},
};

/* What a group of samples is about: a GPU (DCGM) or a serving engine. */
enum fam { FAM_GPU, FAM_ENGINE };

#define MAX_GROUPS 1024   /* pending GPU groups; the oldest is flushed past it */
#define TS_RAW_MAX 40

/* One GPU's samples in one scrape (or at one timestamp). */
struct group {
	long first;             /* line of its first sample */
	int smi;                /* nvidia_gpu_exporter's metrics, not DCGM's */
	long nlines;            /* sample lines consumed */
	int64_t ts;             /* IQ_TIME_NONE: untimestamped scrape */
	char ts_raw[TS_RAW_MAX];
	size_t ts_raw_n;
	enum fam fam;
	unsigned seen;          /* bit per enum met, or per enum iq_es */
	double v[M_COUNT];
	struct iq_es_values es;
	const char *engine;     /* "vllm", "sglang", "tgi" */
	struct iq_buf key;      /* label values (unescaped), back to back */
	size_t len[L_COUNT];
	/* the sample line the record quotes (memory used first: enum met
	 * order), trimmed; qrank M_COUNT + 1 while there is none */
	struct iq_buf quote;
	long qline;
	int qrank;
};

/* A parsed sample line; slices point into the line. */
struct sample {
	struct iq_str name;
	struct iq_str lab[L_COUNT];   /* raw (escaped) values, non-empty only */
	int lab_rank[L_COUNT];
	double value;
	int has_ts;
	int64_t ts;
	struct iq_str ts_raw;
};

struct prom {
	struct group *g;        /* the pool: ng in use, cap allocated */
	size_t ng, cap;
	struct iq_buf key;      /* the current sample's key */
	size_t len[L_COUNT];
	struct iq_buf text;     /* a record's summary */
	struct iq_buf name;     /* a record's GPU name */
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static int is_name_char(char c)
{
	return is_name_start(c) || is_digit(c);
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && is_ws(s[i]))
		i++;
	return i;
}

static int str_is(struct iq_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* A quoted string at s[*i] (which is '"'): its body (escapes kept) and
 * *i past the closing quote. -1 when unterminated. */
static int quoted(const char *s, size_t n, size_t *i, struct iq_str *body)
{
	size_t b = *i + 1, k = b;
	while (k < n && s[k] != '"') {
		if (s[k] == '\\')
			k++;
		k++;
	}
	if (k >= n)
		return -1;
	*body = iq_str_make(s + b, k - b);
	*i = k + 1;
	return 0;
}

/* A Go float: NaN/Inf and the DCGM "blank / not supported" sentinels
 * become NAN (unknown). -1 when not a number. */
static int parse_value(struct iq_str t, double *out)
{
	char tmp[64];
	if (t.n == 0 || t.n >= sizeof tmp)
		return -1;
	memcpy(tmp, t.p, t.n);
	tmp[t.n] = '\0';
	char *end;
	double v = strtod(tmp, &end);
	if (end != tmp + t.n)
		return -1;
	/* DCGM blanks: int64 at/above 0x7ffffffffffffff0, int32
	 * 0x7ffffff0.., fp64 2^47.. (DCGM_FT_*_BLANK and its neighbours) */
	if (isnan(v) || isinf(v) || v >= 9.2233720368547748e18 ||
	    (v >= 2147483632.0 && v <= 2147483647.0) ||
	    (v >= 140737488355328.0 && v < 140737488355344.0))
		v = NAN;
	*out = v;
	return 0;
}

/* A sample timestamp: int64 ms (0.0.4) or seconds with a fraction
 * (OpenMetrics); an integer below 1e11 is taken as seconds too (as ms it
 * would be January 1970). -1 when not a timestamp. */
static int parse_ts(struct iq_str t, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	if (i < t.n && (t.p[i] == '-' || t.p[i] == '+'))
		neg = t.p[i++] == '-';
	int64_t ip = 0, frac = 0, scale = 1;
	size_t d0 = i;
	while (i < t.n && is_digit(t.p[i])) {
		if (ip > INT64_MAX / 10 - 10)
			return -1;
		ip = ip * 10 + (t.p[i++] - '0');
	}
	if (i == d0)
		return -1;
	int fraction = 0;
	if (i < t.n && t.p[i] == '.') {
		fraction = 1;
		i++;
		while (i < t.n && is_digit(t.p[i])) {
			if (scale < IQ_NS_PER_SEC) {
				frac = frac * 10 + (t.p[i] - '0');
				scale *= 10;
			}
			i++;
		}
	}
	if (i != t.n || neg)
		return -1;
	int64_t ns;
	if (fraction || ip < 100000000000LL) {
		if (ip > INT64_MAX / IQ_NS_PER_SEC - 1)
			return -1;
		ns = ip * IQ_NS_PER_SEC + frac * (IQ_NS_PER_SEC / scale);
	} else {
		if (ip > INT64_MAX / 1000000)
			return -1;
		ns = ip * 1000000;
	}
	*out = ns;
	return 0;
}

/* Which of our labels a label name is (-1 none); *rank its preference. */
static int lab_of(struct iq_str name, int *rank)
{
	for (size_t k = 0; k < IQ_ARRAY_LEN(labels); k++)
		if (str_is(name, labels[k].name)) {
			*rank = labels[k].rank;
			return (int)labels[k].l;
		}
	return -1;
}

/* Reads one sample line (leading blanks already skipped): name, labels,
 * value, optional timestamp, optional OpenMetrics exemplar. Returns 0, or
 * -1 when the line is not a sample. A quoted name inside the braces
 * ({"my.metric",l="v"}, Prometheus 3) is accepted. */
static int parse_sample(const char *s, size_t n, struct sample *o)
{
	size_t i = 0;
	memset(o, 0, sizeof *o);
	if (i < n && is_name_start(s[i])) {
		size_t b = i;
		while (i < n && is_name_char(s[i]))
			i++;
		o->name = iq_str_make(s + b, i - b);
	}
	if (i < n && s[i] == '{') {
		i++;
		for (;;) {
			i = skip_ws(s, n, i);
			if (i >= n)
				return -1;
			if (s[i] == '}') {
				i++;
				break;
			}
			struct iq_str ln, lv;
			if (s[i] == '"') {
				if (quoted(s, n, &i, &ln) != 0)
					return -1;
			} else if (is_name_start(s[i])) {
				size_t b = i;
				while (i < n && is_name_char(s[i]))
					i++;
				ln = iq_str_make(s + b, i - b);
			} else {
				return -1;
			}
			i = skip_ws(s, n, i);
			if (i < n && s[i] == '=') {
				i = skip_ws(s, n, i + 1);
				if (i >= n || s[i] != '"' || quoted(s, n, &i, &lv) != 0)
					return -1;
				int rank, l = lab_of(ln, &rank);
				if (l >= 0 && lv.n &&
				    (!o->lab[l].n || rank < o->lab_rank[l])) {
					o->lab[l] = lv;
					o->lab_rank[l] = rank;
				}
			} else if (!o->name.n && ln.p > s && ln.p[-1] == '"') {
				o->name = ln;    /* the quoted metric name */
			} else {
				return -1;
			}
			i = skip_ws(s, n, i);
			if (i < n && s[i] == ',')
				i++;
			else if (i >= n || s[i] != '}')
				return -1;
		}
	}
	if (!o->name.n || i >= n || !is_ws(s[i]))
		return -1;
	i = skip_ws(s, n, i);
	size_t b = i;
	while (i < n && !is_ws(s[i]))
		i++;
	if (parse_value(iq_str_make(s + b, i - b), &o->value) != 0)
		return -1;
	i = skip_ws(s, n, i);
	if (i < n && s[i] != '#') {
		b = i;
		while (i < n && !is_ws(s[i]))
			i++;
		o->ts_raw = iq_str_make(s + b, i - b);
		if (parse_ts(o->ts_raw, &o->ts) != 0)
			return -1;
		o->has_ts = 1;
		i = skip_ws(s, n, i);
	}
	if (i < n && s[i] != '#')
		return -1;   /* trailing bytes that are not an exemplar */
	return 0;
}

/* "# HELP name ...", "# TYPE name type", "# UNIT name unit", "# EOF". */
static int is_metadata(const char *s, size_t n)
{
	static const char *const kw[] = {"HELP", "TYPE", "UNIT"};
	size_t i = skip_ws(s, n, 1);
	if (n - i == 3 && memcmp(s + i, "EOF", 3) == 0)
		return 1;
	for (size_t k = 0; k < IQ_ARRAY_LEN(kw); k++) {
		if (n - i > 5 && memcmp(s + i, kw[k], 4) == 0 && is_ws(s[i + 4])) {
			size_t j = skip_ws(s, n, i + 5);
			return j < n && is_name_start(s[j]);
		}
	}
	return 0;
}

/* nvidia_gpu_exporter's names for the same fields (nvidia-smi's
 * --query-gpu columns as metrics: bytes and 0..1 ratios), each with the
 * factor to DCGM's units (MiB, percent). */
static const struct {
	const char *name;
	enum met m;
	double scale;
} smi_names[] = {
	{"nvidia_smi_memory_used_bytes", M_FB_USED, 1.0 / 1048576},
	{"nvidia_smi_memory_free_bytes", M_FB_FREE, 1.0 / 1048576},
	{"nvidia_smi_memory_reserved_bytes", M_FB_RESERVED, 1.0 / 1048576},
	{"nvidia_smi_memory_total_bytes", M_FB_TOTAL, 1.0 / 1048576},
	{"nvidia_smi_utilization_gpu_ratio", M_GPU_UTIL, 100},
	{"nvidia_smi_utilization_memory_ratio", M_MEM_COPY_UTIL, 100},
	{"nvidia_smi_temperature_gpu", M_GPU_TEMP, 1},
	{"nvidia_smi_power_draw_watts", M_POWER, 1},
};

/* The DCGM field a metric is, with the factor to its unit in *scale and
 * whether it is nvidia_gpu_exporter's in *smi; -1 for any other metric. */
static int met_of(struct iq_str name, double *scale, int *smi)
{
	*scale = 1;
	*smi = 0;
	if (name.n >= 11 && memcmp(name.p, "nvidia_smi_", 11) == 0) {
		for (size_t k = 0; k < IQ_ARRAY_LEN(smi_names); k++)
			if (str_is(name, smi_names[k].name)) {
				*scale = smi_names[k].scale;
				*smi = 1;
				return (int)smi_names[k].m;
			}
		return -1;
	}
	if (name.n < 12 || memcmp(name.p, "DCGM_FI_DEV_", 12) != 0)
		return -1;
	for (int m = 0; m < M_COUNT; m++)
		if (str_is(name, met_names[m]))
			return m;
	return -1;
}

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t pos = 0;
	int meta = 0, samples = 0, bad = 0, seen = 0, labelled = 0, dcgm = 0;
	while (pos < n && seen < 20) {
		const char *nl = memchr(head + pos, '\n', n - pos);
		if (!nl)
			break;   /* a line cut by the head */
		const char *s = head + pos;
		size_t len = (size_t)(nl - s);
		pos += len + 1;
		if (len && s[len - 1] == '\r')
			len--;
		size_t b = skip_ws(s, len, 0);
		if (b == len)
			continue;
		seen++;
		struct sample sm;
		if (s[b] == '#')
			meta += is_metadata(s + b, len - b);
		else if (parse_sample(s + b, len - b, &sm) == 0) {
			samples++;
			labelled |= memchr(s + b, '{', len - b) != NULL;
			dcgm |= sm.name.n > 5 && memcmp(sm.name.p, "DCGM_", 5) == 0;
		} else
			bad++;
	}
	int score = 0;
	if (meta && !bad)
		score = samples ? 95 : 85;
	else if (meta && samples > bad)
		score = 70;
	else if (!meta && !bad && samples && (labelled || dcgm))
		score = 80;
	else if (!meta && !bad && samples >= 3)
		score = 60;
	if (score)
		snprintf(why, whysz, "Prometheus text exposition (%d metadata, %d sample lines%s)",
			 meta, samples, dcgm ? ", DCGM" : "");
	return score;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct prom *p = st;
	iq_buf_init(&p->key);
	iq_buf_init(&p->text);
	iq_buf_init(&p->name);
	return 0;
}

/* Appends a label value with its escapes (\\ \" \n) decoded. */
static int add_unescaped(struct iq_buf *b, struct iq_str v)
{
	for (size_t i = 0; i < v.n; i++) {
		char c = v.p[i];
		if (c == '\\' && i + 1 < v.n) {
			c = v.p[++i];
			if (c == 'n')
				c = '\n';
		}
		if (iq_buf_addc(b, c))
			return IQ_ERR_NOMEM;
	}
	return 0;
}

/* A label of group g as a slice of its key. */
static struct iq_str glab(const struct group *g, enum lab l)
{
	size_t off = 0;
	for (int k = 0; k < (int)l; k++)
		off += g->len[k];
	return iq_str_make(g->key.p ? g->key.p + off : NULL, g->len[l]);
}

static int add_num(struct iq_buf *b, const char *label, double v)
{
	if (isnan(v))
		return 0;
	return iq_buf_printf(b, " %s=%.15g", label, v);
}

/* Emits group g as one GPU record and frees its slot (the slot's buffer
 * stays for reuse). */
/* Frees slot gi (its buffer stays for reuse), keeping the others in line
 * order. */
static void drop(struct prom *p, size_t gi)
{
	struct group hole = p->g[gi];
	memmove(&p->g[gi], &p->g[gi + 1], (p->ng - gi - 1) * sizeof hole);
	p->g[--p->ng] = hole;
}

/* Emits engine group g as one log record ("vllm engine 0 model m:
 * Running: ..."). */
static int emit_engine(struct prom *p, const struct iq_parse_ctx *ctx, struct group *g)
{
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_LOG);
	r.line = g->first;
	r.nlines = g->nlines;
	if (g->ts != IQ_TIME_NONE) {
		r.ts = g->ts;
		r.ts_how = IQ_TS_EXPLICIT;
		r.ts_raw = iq_str_make(g->ts_raw, g->ts_raw_n);
	}
	r.id.node = glab(g, L_HOST);
	r.id.pod = glab(g, L_POD);
	r.id.ns = glab(g, L_NS);
	r.id.container = glab(g, L_CONTAINER);
	struct iq_str eng = glab(g, L_ENGINE), model = glab(g, L_MODEL_NAME);
	iq_buf_reset(&p->text);
	int rc = iq_buf_adds(&p->text, g->engine) | iq_buf_adds(&p->text, " metrics");
	if (eng.n)
		rc |= iq_buf_adds(&p->text, " engine ") | iq_buf_add(&p->text, eng.p, eng.n);
	if (model.n)
		rc |= iq_buf_adds(&p->text, " model ") | iq_buf_add(&p->text, model.p, model.n);
	rc |= iq_buf_adds(&p->text, ": ");
	if (rc || iq_es_render(&p->text, &g->es))
		return IQ_ERR_NOMEM;
	r.text = iq_str_make(p->text.p, p->text.len);
	if (g->qline)
		r.quote[r.nquotes++] = (struct iq_quote){g->qline, iq_str_make(g->quote.p, g->quote.len), "sample"};
	return ctx->sink.record(ctx->sink.u, &r);
}

static int emit(struct prom *p, const struct iq_parse_ctx *ctx, size_t gi)
{
	struct group *g = &p->g[gi];
	if (g->fam == FAM_ENGINE) {
		int rc = emit_engine(p, ctx, g);
		drop(p, gi);
		return rc;
	}
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_GPU);
	r.line = g->first;
	r.nlines = g->nlines;
	if (g->ts != IQ_TIME_NONE) {
		r.ts = g->ts;
		r.ts_how = IQ_TS_EXPLICIT;
		r.ts_raw = iq_str_make(g->ts_raw, g->ts_raw_n);
	}
	struct iq_gpu *u = &r.u.gpu;
	struct iq_str idx = glab(g, L_GPU);
	if (idx.n && idx.n <= 5) {
		int v = 0;
		size_t k = 0;
		while (k < idx.n && is_digit(idx.p[k]))
			v = v * 10 + (idx.p[k++] - '0');
		if (k == idx.n)
			u->index = v;
	}
	u->uuid = glab(g, L_UUID);
	u->pci_bus = glab(g, L_PCI);
	/* a MIG instance is its own memory pool: say which in the name */
	struct iq_str gi_id = glab(g, L_GI_ID), prof = glab(g, L_GI_PROFILE);
	struct iq_str model = glab(g, L_MODEL);
	int rc = 0;
	iq_buf_reset(&p->name);
	if (gi_id.n) {
		if (model.n)
			rc |= iq_buf_add(&p->name, model.p, model.n) | iq_buf_addc(&p->name, ' ');
		rc |= iq_buf_adds(&p->name, "MIG ");
		if (prof.n)
			rc |= iq_buf_add(&p->name, prof.p, prof.n) | iq_buf_addc(&p->name, ' ');
		rc |= iq_buf_adds(&p->name, "GI ") | iq_buf_add(&p->name, gi_id.p, gi_id.n);
		u->name = iq_str_make(p->name.p, p->name.len);
	} else {
		u->name = model;
	}
	const double *v = g->v;
	u->mem_used_mib = v[M_FB_USED];
	u->mem_free_mib = v[M_FB_FREE];
	if (!isnan(v[M_FB_TOTAL]))
		u->mem_total_mib = v[M_FB_TOTAL];
	else if (!isnan(v[M_FB_USED]) && !isnan(v[M_FB_FREE]))
		u->mem_total_mib = v[M_FB_USED] + v[M_FB_FREE] +
				   (isnan(v[M_FB_RESERVED]) ? 0 : v[M_FB_RESERVED]);
	u->util_gpu_pct = v[M_GPU_UTIL];
	u->util_mem_pct = v[M_MEM_COPY_UTIL];
	u->temp_c = v[M_GPU_TEMP];
	u->power_w = v[M_POWER];
	r.id.node = glab(g, L_HOST);
	r.id.pod = glab(g, L_POD);
	r.id.ns = glab(g, L_NS);
	r.id.container = glab(g, L_CONTAINER);

	/* "DCGM gpu 0 GPU-...: FB_USED=... FB_FREE=..." */
	iq_buf_reset(&p->text);
	rc |= iq_buf_adds(&p->text, g->smi ? "nvidia-smi gpu" : "DCGM gpu");
	if (idx.n)
		rc |= iq_buf_addc(&p->text, ' ') | iq_buf_add(&p->text, idx.p, idx.n);
	if (u->uuid.n)
		rc |= iq_buf_addc(&p->text, ' ') | iq_buf_add(&p->text, u->uuid.p, u->uuid.n);
	if (gi_id.n)
		rc |= iq_buf_adds(&p->text, " GI ") | iq_buf_add(&p->text, gi_id.p, gi_id.n);
	rc |= iq_buf_addc(&p->text, ':');
	for (int m = 0; m < M_COUNT; m++)
		if (g->seen & (1u << m))
			rc |= isnan(v[m]) ? iq_buf_printf(&p->text, " %s=n/a", met_names[m] + 12)
					  : add_num(&p->text, met_names[m] + 12, v[m]);
	if (rc)
		return IQ_ERR_NOMEM;
	r.text = iq_str_make(p->text.p, p->text.len);
	if (g->qline)
		r.quote[r.nquotes++] = (struct iq_quote){g->qline, iq_str_make(g->quote.p, g->quote.len), "sample"};
	rc = ctx->sink.record(ctx->sink.u, &r);
	drop(p, gi);
	return rc;
}

/* Emits every pending group that matches (untimestamped only, or all),
 * in line order. */
static int flush(struct prom *p, const struct iq_parse_ctx *ctx, int untimed_only)
{
	size_t i = 0;
	while (i < p->ng) {
		if (untimed_only && p->g[i].ts != IQ_TIME_NONE) {
			i++;
			continue;
		}
		int rc = emit(p, ctx, i);
		if (rc)
			return rc;
	}
	return 0;
}

/* The current sample's key (p->key, p->len) from its labels. */
static int make_key(struct prom *p, const struct sample *sm)
{
	iq_buf_reset(&p->key);
	for (int l = 0; l < L_COUNT; l++) {
		size_t before = p->key.len;
		if (add_unescaped(&p->key, sm->lab[l]))
			return IQ_ERR_NOMEM;
		p->len[l] = p->key.len - before;
	}
	return 0;
}

static int same_key(const struct prom *p, const struct group *g, enum fam fam)
{
	return g->fam == fam && g->key.len == p->key.len && memcmp(g->len, p->len, sizeof p->len) == 0 &&
	       (p->key.len == 0 || memcmp(g->key.p, p->key.p, p->key.len) == 0);
}

/* A fresh group for the current key at line lineno. */
static int new_group(struct prom *p, const struct iq_parse_ctx *ctx, const struct sample *sm,
		     enum fam fam, long lineno, struct group **out)
{
	int rc;
	if (p->ng == MAX_GROUPS && (rc = emit(p, ctx, 0)))
		return rc;   /* the oldest goes first */
	if (p->ng == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 16;
		struct group *ng = realloc(p->g, nc * sizeof *ng);
		if (!ng)
			return IQ_ERR_NOMEM;
		memset(ng + p->cap, 0, (nc - p->cap) * sizeof *ng);
		p->g = ng;
		p->cap = nc;
	}
	struct group *g = &p->g[p->ng++];
	struct iq_buf keep = g->key, kq = g->quote;
	memset(g, 0, sizeof *g);
	g->key = keep;
	g->quote = kq;
	iq_buf_reset(&g->key);
	iq_buf_reset(&g->quote);
	g->qrank = M_COUNT + 1;
	if (iq_buf_add(&g->key, p->key.p ? p->key.p : "", p->key.len))
		return IQ_ERR_NOMEM;
	memcpy(g->len, p->len, sizeof g->len);
	g->first = lineno;
	g->ts = sm->has_ts ? sm->ts : IQ_TIME_NONE;
	if (sm->has_ts) {
		g->ts_raw_n = sm->ts_raw.n < TS_RAW_MAX ? sm->ts_raw.n : TS_RAW_MAX - 1;
		memcpy(g->ts_raw, sm->ts_raw.p, g->ts_raw_n);
	}
	for (int m = 0; m < M_COUNT; m++)
		g->v[m] = NAN;
	iq_es_init(&g->es);
	g->fam = fam;
	*out = g;
	return 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct prom *p = st;
	size_t b = skip_ws(s, n, 0);
	if (b == n) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	if (s[b] == '#') {
		ctx->sink.skip(ctx->sink.u, lineno, 1,
			       is_metadata(s + b, n - b) ? "metadata" : "comment", s, n);
		return 0;
	}
	struct sample sm;
	if (parse_sample(s + b, n - b, &sm) != 0) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "malformed sample", s, n);
		return 0;
	}
	double scale = 1;
	int smi = 0;
	int m = met_of(sm.name, &scale, &smi);
	enum fam fam = FAM_GPU;
	enum iq_es es;
	const char *engine = NULL;
	if (m < 0 && iq_es_of_metric(sm.name.p, sm.name.n, &es, &scale, &engine)) {
		fam = FAM_ENGINE;
		m = (int)es;
	}
	if (m < 0) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "metric not used", s, n);
		return 0;
	}
	int rc = make_key(p, &sm);
	if (rc)
		return rc;
	int64_t ts = sm.has_ts ? sm.ts : IQ_TIME_NONE;
	struct group *g = NULL;
	for (size_t i = 0; i < p->ng; i++)
		if (p->g[i].ts == ts && same_key(p, &p->g[i], fam)) {
			g = &p->g[i];
			break;
		}
	if (g && (g->seen & (1u << m))) {
		/* the series repeats: a new scrape (or a duplicate at one time) */
		if (ts == IQ_TIME_NONE)
			rc = flush(p, ctx, 1);
		else
			rc = emit(p, ctx, (size_t)(g - p->g));
		if (rc)
			return rc;
		g = NULL;
	}
	if (!g && (rc = new_group(p, ctx, &sm, fam, lineno, &g)))
		return rc;
	g->seen |= 1u << m;
	int rank = fam == FAM_ENGINE ? M_COUNT : m;
	if (rank < g->qrank) {
		size_t e = n;
		while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t'))
			e--;
		iq_buf_reset(&g->quote);
		if (iq_buf_add(&g->quote, s + b, e - b))
			return IQ_ERR_NOMEM;
		g->qline = lineno;
		g->qrank = rank;
	}
	if (fam == FAM_ENGINE) {
		g->es.v[m] = sm.value * scale;
		g->engine = engine;
	} else {
		g->v[m] = sm.value * scale;
		g->smi |= smi;
	}
	g->nlines++;
	return 0;
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct prom *p = st;
	int rc = flush(p, ctx, 0);
	for (size_t i = 0; i < p->cap; i++) {
		iq_buf_release(&p->g[i].key);
		iq_buf_release(&p->g[i].quote);
	}
	free(p->g);
	iq_buf_release(&p->key);
	iq_buf_release(&p->text);
	iq_buf_release(&p->name);
	return rc;
}

const struct iq_format iq_format_prometheus_text = {
	.name = "prometheus-text",
	.desc = "Prometheus text exposition (dcgm-exporter, vLLM/SGLang/TGI scrapes): one record per GPU or engine per scrape",
	.sniff = sniff,
	.state_size = sizeof(struct prom),
	.begin = begin,
	.line = line,
	.end = end,
};
