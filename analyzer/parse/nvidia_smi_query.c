/* nvidia_smi_query.c: `nvidia-smi -q` in its two spellings, the text
 * report ("==============NVSMI LOG==============", "GPU 00000000:07:00.0",
 * indented "Key : Value" lines under section names) and the XML of -q -x
 * (nvsmi_device_v*.dtd), one snapshot or several appended (-l): one
 * IQ_KIND_GPU record per GPU, from its bus id, product name, uuid, minor
 * number, frame buffer memory, utilisation, temperature and power.
 *
 * Decisions: the snapshot's timestamp ("Fri Jan 27 11:32:31 2023", local
 * time, no zone) is every GPU's time, assumed UTC; a GPU before any
 * timestamp has none. The record spans the GPU's lines; the lines around
 * the GPUs (driver and CUDA versions, the XML prolog) are skipped "nvidia-smi
 * header". MIG devices' own memory (inside their section) is not the GPU's
 * and is left out. minor_number stands for the index (nvidia-smi orders
 * both by PCI bus). Power Draw, else Average Power Draw, else the
 * instantaneous one (drivers from 535 on) is the power. The reader is
 * line-based, one element or field per line as nvidia-smi writes them. */
#include <string.h>

#include "parse.h"

#define MAX_DEPTH 16
#define NAME_MAX_LEN 48

struct smiq {
	char stack[MAX_DEPTH][NAME_MAX_LEN];
	int depth;             /* open elements (deeper ones are counted only) */
	int in_gpu;            /* a <gpu> is open */
	int gpu_depth;         /* the depth it opened at */
	long gpu_line;         /* where it opened */
	long last_gpu_line;    /* the text report's last line of it */
	long last;             /* the last line seen */
	int64_t ts;            /* the document's timestamp */
	char ts_raw[40];
	struct iq_buf meta;    /* the GPU's strings: id, name, uuid */
	size_t id_off, id_n, name_off, name_n, uuid_off, uuid_n;
	struct iq_gpu g;
	double avg_w, inst_w;  /* the power readings of newer drivers */
	struct iq_buf text;
	long acct;             /* lines before this are accounted for */
	char section[40];      /* the text report's section of the open GPU */
	/* the line being read; the one that gave the memory used, which the
	 * record quotes (its text kept) */
	long cur;
	struct iq_str cur_text;
	long used_line;
	struct iq_buf used_text;
};

/* Notes the current line as the one that says the memory used. */
static void saw_used(struct smiq *p)
{
	p->used_line = p->cur;
	iq_buf_reset(&p->used_text);
	if (iq_buf_add(&p->used_text, p->cur_text.p, p->cur_text.n))
		p->used_line = 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* The number at the start of v ("40960 MiB", " 37 C ", "66.92 W", "0 %"),
 * NAN for "N/A" and the like. */
static double number(struct iq_str v)
{
	size_t i = 0;
	while (i < v.n && is_space(v.p[i]))
		i++;
	double x = 0, scale = 0;
	int neg = i < v.n && v.p[i] == '-', digits = 0;
	if (neg)
		i++;
	for (; i < v.n && ((v.p[i] >= '0' && v.p[i] <= '9') || (v.p[i] == '.' && scale == 0)); i++) {
		if (v.p[i] == '.') {
			scale = 1;
			continue;
		}
		x = x * 10 + (v.p[i] - '0');
		if (scale)
			scale *= 10;
		digits++;
	}
	if (!digits)
		return NAN;
	if (scale)
		x /= scale;
	return neg ? -x : x;
}

/* The element of one line: "<name attrs>" (open, 1; also "<name>text"
 * whose closing tag is on a later line), "</name>" (close, 2),
 * "<name>value</name>" (leaf, 3) or "<name/>" (empty, 4); 0 for anything
 * else. name, attrs and value point into s. */
static int element(const char *s, size_t n, struct iq_str *name, struct iq_str *attrs,
		   struct iq_str *value)
{
	size_t i = 0;
	while (i < n && is_space(s[i]))
		i++;
	while (n > i && is_space(s[n - 1]))
		n--;
	if (n - i < 3 || s[i] != '<')
		return 0;
	int close = s[i + 1] == '/';
	size_t b = i + 1 + (size_t)close, e = b;
	while (e < n && s[e] != '>' && s[e] != ' ' && s[e] != '/')
		e++;
	if (e == b || e - b >= NAME_MAX_LEN || e >= n)
		return 0;
	*name = iq_str_make(s + b, e - b);
	if (close)
		return s[e] == '>' && e == n - 1 ? 2 : 0;
	const char *gt = memchr(s + e, '>', n - e);
	if (!gt)
		return 0;
	size_t g = (size_t)(gt - s);
	*attrs = iq_str_make(s + e, g - e);
	if (g == n - 1)
		return s[g - 1] == '/' ? 4 : 1;
	/* a leaf: the value, then "</name>" */
	size_t cl = n - (name->n + 3);
	if (n < name->n + 3 || cl <= g || s[cl] != '<' || s[cl + 1] != '/' ||
	    memcmp(s + cl + 2, name->p, name->n) != 0 || s[n - 1] != '>')
		return 1;
	*value = iq_str_make(s + g + 1, cl - g - 1);
	return 3;
}

static int is(struct iq_str s, const char *lit)
{
	size_t l = strlen(lit);
	return s.n == l && memcmp(s.p, lit, l) == 0;
}

static int parent_is(const struct smiq *p, const char *lit)
{
	return p->depth >= 1 && strcmp(p->stack[p->depth - 1], lit) == 0;
}

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t lim = n < 4096 ? n : 4096;
	if (iq_memmem(head, lim, "<nvidia_smi_log>", 16)) {
		snprintf(why, whysz, "nvidia-smi -q -x XML (<nvidia_smi_log>)");
		return 95;
	}
	if (iq_memmem(head, lim, "==NVSMI LOG==", 13)) {
		snprintf(why, whysz, "nvidia-smi -q report (NVSMI LOG)");
		return 95;
	}
	return 0;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct smiq *p = st;
	iq_buf_init(&p->meta);
	iq_buf_init(&p->text);
	iq_buf_init(&p->used_text);
	p->ts = IQ_TIME_NONE;
	p->acct = 1;
	return 0;
}

static void envelope_until(struct smiq *p, const struct iq_parse_ctx *ctx, long l)
{
	if (p->acct < l)
		ctx->sink.skip(ctx->sink.u, p->acct, l - p->acct, "nvidia-smi header", NULL, 0);
	if (p->acct < l)
		p->acct = l;
}

/* Keeps v in meta; its offset and length into *off, *len. */
static int keep(struct smiq *p, struct iq_str v, size_t *off, size_t *len)
{
	while (v.n && is_space(v.p[0])) {
		v.p++;
		v.n--;
	}
	while (v.n && is_space(v.p[v.n - 1]))
		v.n--;
	*off = p->meta.len;
	*len = v.n;
	return iq_buf_add(&p->meta, v.p, v.n);
}

static struct iq_str kept(const struct smiq *p, size_t off, size_t len)
{
	return len ? iq_str_make(p->meta.p + off, len) : IQ_STR_NULL;
}

static void open_gpu(struct smiq *p, long lineno, struct iq_str attrs)
{
	p->in_gpu = 1;
	p->gpu_depth = p->depth;
	p->gpu_line = lineno;
	p->used_line = 0;
	iq_buf_reset(&p->meta);
	p->id_n = p->name_n = p->uuid_n = 0;
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_GPU);
	p->g = r.u.gpu;
	p->avg_w = p->inst_w = NAN;
	p->section[0] = '\0';
	p->last_gpu_line = lineno;
	const char *q = iq_memmem(attrs.p, attrs.n, "id=\"", 4);
	if (q) {
		const char *b = q + 4, *e = memchr(b, '"', attrs.n - (size_t)(b - attrs.p));
		if (e)
			keep(p, iq_str_make(b, (size_t)(e - b)), &p->id_off, &p->id_n);
	} else {
		keep(p, attrs, &p->id_off, &p->id_n);   /* the text's "GPU <bus id>" */
	}
}

static int close_gpu(struct smiq *p, const struct iq_parse_ctx *ctx, long lineno)
{
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_GPU);
	r.u.gpu = p->g;
	if (isnan(r.u.gpu.power_w))
		r.u.gpu.power_w = !isnan(p->avg_w) ? p->avg_w : p->inst_w;
	r.u.gpu.pci_bus = kept(p, p->id_off, p->id_n);
	r.u.gpu.name = kept(p, p->name_off, p->name_n);
	r.u.gpu.uuid = kept(p, p->uuid_off, p->uuid_n);
	r.ts = p->ts;
	if (r.ts != IQ_TIME_NONE) {
		r.ts_how = iq_time_local(&r.ts);
		r.ts_raw = iq_str_make(p->ts_raw, strlen(p->ts_raw));
	}
	/* "GPU 00000000:00:04.0 NVIDIA A100-SXM4-40GB: 38 of 40960 MiB used" */
	iq_buf_reset(&p->text);
	int rc = iq_buf_printf(&p->text, "GPU %.*s %.*s", (int)r.u.gpu.pci_bus.n,
			       r.u.gpu.pci_bus.p ? r.u.gpu.pci_bus.p : "", (int)r.u.gpu.name.n,
			       r.u.gpu.name.p ? r.u.gpu.name.p : "");
	if (!rc && !isnan(r.u.gpu.mem_used_mib) && !isnan(r.u.gpu.mem_total_mib))
		rc = iq_buf_printf(&p->text, ": %.0f of %.0f MiB used", r.u.gpu.mem_used_mib,
				   r.u.gpu.mem_total_mib);
	if (rc)
		return IQ_ERR_NOMEM;
	r.text = iq_str_make(p->text.p, p->text.len);
	if (p->used_line)
		r.quote[r.nquotes++] = (struct iq_quote){p->used_line, iq_str_make(p->used_text.p, p->used_text.len),
							 "sample"};
	envelope_until(p, ctx, p->gpu_line);
	r.line = p->gpu_line;
	r.nlines = lineno - p->gpu_line + 1;
	p->acct = lineno + 1;
	p->in_gpu = 0;
	return ctx->sink.record(ctx->sink.u, &r);
}

/* A leaf value inside the open <gpu> (not inside its MIG devices). */
static int gpu_leaf(struct smiq *p, struct iq_str name, struct iq_str v)
{
	int rel = p->depth - p->gpu_depth - 1;  /* 0: a child of <gpu> */
	struct iq_gpu *g = &p->g;
	if (rel == 0) {
		if (is(name, "product_name"))
			return keep(p, v, &p->name_off, &p->name_n);
		if (is(name, "uuid"))
			return keep(p, v, &p->uuid_off, &p->uuid_n);
		if (is(name, "minor_number")) {
			double d = number(v);
			if (!isnan(d) && d >= 0 && d < 65536)
				g->index = (int)d;
		}
		return 0;
	}
	if (rel != 1)
		return 0;
	if (parent_is(p, "fb_memory_usage")) {
		if (is(name, "total"))
			g->mem_total_mib = number(v);
		else if (is(name, "used")) {
			g->mem_used_mib = number(v);
			saw_used(p);
		}
		else if (is(name, "free"))
			g->mem_free_mib = number(v);
	} else if (parent_is(p, "utilization")) {
		if (is(name, "gpu_util"))
			g->util_gpu_pct = number(v);
		else if (is(name, "memory_util"))
			g->util_mem_pct = number(v);
	} else if (parent_is(p, "temperature")) {
		if (is(name, "gpu_temp"))
			g->temp_c = number(v);
	} else if (parent_is(p, "power_readings") || parent_is(p, "gpu_power_readings")) {
		if (is(name, "power_draw"))
			g->power_w = number(v);
		else if (is(name, "average_power_draw"))
			p->avg_w = number(v);
		else if (is(name, "instant_power_draw"))
			p->inst_w = number(v);
	}
	return 0;
}

/* The timestamp text v of a snapshot ("Fri Jan 27 11:32:31 2023"). */
static void snapshot_time(struct smiq *p, struct iq_str v)
{
	int64_t t;
	while (v.n && is_space(v.p[0])) {
		v.p++;
		v.n--;
	}
	size_t used = iq_parse_ctime(v.p, v.n, &t);
	if (used && used < sizeof p->ts_raw) {
		p->ts = t;
		memcpy(p->ts_raw, v.p, used);
		p->ts_raw[used] = '\0';
	}
}

static int xml_line(struct smiq *p, const struct iq_parse_ctx *ctx, long lineno, const char *s,
		    size_t n)
{
	struct iq_str name = IQ_STR_NULL, attrs = IQ_STR_NULL, v = IQ_STR_NULL;
	int k = element(s, n, &name, &attrs, &v);
	if (k == 1) {
		if (p->depth < MAX_DEPTH) {
			memcpy(p->stack[p->depth], name.p, name.n);
			p->stack[p->depth][name.n] = '\0';
		}
		if (is(name, "nvidia_smi_log"))
			p->ts = IQ_TIME_NONE;   /* a new snapshot */
		if (is(name, "gpu") && !p->in_gpu)
			open_gpu(p, lineno, attrs);
		p->depth++;
	} else if (k == 2) {
		if (p->depth > 0)
			p->depth--;
		if (p->in_gpu && p->depth == p->gpu_depth && is(name, "gpu"))
			return close_gpu(p, ctx, lineno);
	} else if (k == 3 && p->in_gpu) {
		if (p->depth <= MAX_DEPTH && gpu_leaf(p, name, v))
			return IQ_ERR_NOMEM;
	} else if (k == 3 && is(name, "timestamp")) {
		snapshot_time(p, v);
	}
	return 0;
}

/* The text report's "Key : Value" at s (indent already skipped): the key
 * without its padding, the value; 0 when the line has no " : ". */
static int key_value(const char *s, size_t n, struct iq_str *key, struct iq_str *v)
{
	const char *c = iq_memmem(s, n, " : ", 3);
	size_t kn = c ? (size_t)(c - s) : n;
	while (kn && is_space(s[kn - 1]))
		kn--;
	*key = iq_str_make(s, kn);
	if (!c)
		return 0;
	size_t vb = (size_t)(c - s) + 3;
	*v = iq_str_make(s + vb, n - vb);
	return 1;
}

/* A text report's field of the open GPU: at indent 4 its own ("Product
 * Name", a section name), at indent 8 a section's. */
static int text_field(struct smiq *p, size_t indent, struct iq_str key, struct iq_str v, int kv)
{
	if (indent == 4) {
		if (!kv) {
			size_t l = key.n < sizeof p->section - 1 ? key.n : sizeof p->section - 1;
			memcpy(p->section, key.p, l);
			p->section[l] = '\0';
			return 0;
		}
		p->section[0] = '\0';
		if (is(key, "Product Name"))
			return keep(p, v, &p->name_off, &p->name_n);
		if (is(key, "GPU UUID"))
			return keep(p, v, &p->uuid_off, &p->uuid_n);
		if (is(key, "Minor Number")) {
			double d = number(v);
			if (!isnan(d) && d >= 0 && d < 65536)
				p->g.index = (int)d;
		}
		return 0;
	}
	if (indent != 8 || !kv)
		return 0;
	struct iq_gpu *g = &p->g;
	const char *sec = p->section;
	if (!strcmp(sec, "FB Memory Usage")) {
		if (is(key, "Total"))
			g->mem_total_mib = number(v);
		else if (is(key, "Used")) {
			g->mem_used_mib = number(v);
			saw_used(p);
		}
		else if (is(key, "Free"))
			g->mem_free_mib = number(v);
	} else if (!strcmp(sec, "Utilization")) {
		if (is(key, "GPU") || is(key, "Gpu"))
			g->util_gpu_pct = number(v);
		else if (is(key, "Memory"))
			g->util_mem_pct = number(v);
	} else if (!strcmp(sec, "Temperature")) {
		if (is(key, "GPU Current Temp"))
			g->temp_c = number(v);
	} else if (!strcmp(sec, "GPU Power Readings") || !strcmp(sec, "Power Readings")) {
		if (is(key, "Power Draw"))
			g->power_w = number(v);
		else if (is(key, "Average Power Draw"))
			p->avg_w = number(v);
		else if (is(key, "Instantaneous Power Draw"))
			p->inst_w = number(v);
	}
	return 0;
}

static int text_line(struct smiq *p, const struct iq_parse_ctx *ctx, long lineno, const char *s,
		     size_t n)
{
	size_t indent = 0;
	while (indent < n && s[indent] == ' ')
		indent++;
	while (n > indent && (is_space(s[n - 1])))
		n--;
	if (indent == n)
		return 0;            /* blank: the GPU's, or the header's */
	struct iq_str key, v;
	int kv = key_value(s + indent, n - indent, &key, &v);
	if (indent == 0) {
		/* a GPU ends at the next line that is not its own */
		if (p->in_gpu) {
			int rc = close_gpu(p, ctx, p->last_gpu_line);
			if (rc)
				return rc;
		}
		if (iq_memmem(s, n, "NVSMI LOG", 9))
			p->ts = IQ_TIME_NONE;   /* a new snapshot */
		else if (kv && is(key, "Timestamp"))
			snapshot_time(p, v);
		else if (!kv && n > 4 && memcmp(s, "GPU ", 4) == 0)
			open_gpu(p, lineno, iq_str_make(s + 3, n - 3));
		return 0;
	}
	if (p->in_gpu) {
		p->last_gpu_line = lineno;
		return text_field(p, indent, key, v, kv);
	}
	return 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct smiq *p = st;
	p->last = lineno;
	size_t i = 0;
	while (i < n && is_space(s[i]))
		i++;
	size_t e = n;
	while (e > i && (is_space(s[e - 1]) || s[e - 1] == '\r'))
		e--;
	p->cur = lineno;
	p->cur_text = iq_str_make(s + i, e - i);
	if (i < n && s[i] == '<')
		return xml_line(p, ctx, lineno, s, n);
	return text_line(p, ctx, lineno, s, n);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct smiq *p = st;
	int rc = 0;
	/* a GPU still open at the end (the text report's last, or an XML
	 * document cut inside a <gpu>) keeps what was read of it */
	if (p->in_gpu)
		rc = close_gpu(p, ctx, p->depth ? p->last : p->last_gpu_line);
	envelope_until(p, ctx, p->last + 1);
	iq_buf_release(&p->meta);
	iq_buf_release(&p->text);
	iq_buf_release(&p->used_text);
	return rc;
}

const struct iq_format iq_format_nvidia_smi_query = {
	.name = "nvidia-smi-query",
	.desc = "nvidia-smi -q report, text or XML (-x), one GPU sample per GPU, snapshots appended",
	.sniff = sniff,
	.state_size = sizeof(struct smiq),
	.begin = begin,
	.line = line,
	.end = end,
};
