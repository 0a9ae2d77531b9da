/* nvidia_smi_table.c: the default `nvidia-smi` table (box drawing), one
 * snapshot or many (`watch`, `-l`, a loop appending to a file): every
 * layout from the two-row pre-450 one to the 595 "new layout", the MIG
 * devices table, and the Processes table.
 *
 * Decisions: one IQ_KIND_GPU record per GPU per snapshot, made of its two
 * rows (and the third "MIG M." row when there is one); one per MIG device
 * too (its memory is its own pool), named "<GPU name> MIG GI <gi> CI <ci>".
 * The snapshot's date line ("Wed May  1 12:00:00 2024", local time, no
 * zone) gives ts, assumed UTC; rows before any date line have none.
 * Processes-table lines are skipped "process table"; borders, headers and
 * text around the table (shell prompts) are skipped with their reason. */
#include <string.h>

#include "parse.h"

#define MAX_CELLS 8
#define MAX_GPUS 64
#define TEXT_MAX 1024

enum section { S_NONE = 0, S_GPU, S_MIG, S_PROC };

/* A GPU of the current snapshot, for naming its MIG devices. */
struct known_gpu {
	int index;
	char name[96];
	char pci[24];
};

struct smi {
	enum section sec;
	int64_t ts;
	char ts_raw[40];
	struct known_gpu gpus[MAX_GPUS];
	int ngpus;
	/* the GPU or MIG device being read */
	int pending;            /* 0 none, 1 GPU, 2 MIG device */
	int rows;               /* rows of it read */
	long last_line;         /* the last line of it read */
	struct iq_record r;
	char name[128];
	char pci[24];
	char text[TEXT_MAX];
	size_t text_n;
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int has(const char *s, size_t n, const char *lit)
{
	return iq_memmem(s, n, lit, strlen(lit)) != NULL;
}

/* Trims spaces around s[0..*n). */
static const char *trim(const char *s, size_t *n)
{
	while (*n && (s[0] == ' ' || s[0] == '\t')) {
		s++;
		(*n)--;
	}
	while (*n && (s[*n - 1] == ' ' || s[*n - 1] == '\t'))
		(*n)--;
	return s;
}

/* The next space-separated token of s[*pos..n), or an empty slice. */
static struct iq_str token(const char *s, size_t n, size_t *pos)
{
	size_t i = *pos;
	while (i < n && s[i] == ' ')
		i++;
	size_t b = i;
	while (i < n && s[i] != ' ')
		i++;
	*pos = i;
	return iq_str_make(s + b, i - b);
}

/* A non-negative decimal number at the start of t; *used its length.
 * -1 when none. */
static int number(struct iq_str t, double *out, size_t *used)
{
	size_t i = 0;
	double v = 0, scale = 1;
	while (i < t.n && is_digit(t.p[i]))
		v = v * 10 + (t.p[i++] - '0');
	if (i == 0)
		return -1;
	if (i < t.n && t.p[i] == '.') {
		i++;
		while (i < t.n && is_digit(t.p[i])) {
			scale /= 10;
			v += (t.p[i++] - '0') * scale;
		}
	}
	*out = v;
	*used = i;
	return 0;
}

/* A number with exactly the unit suffix ("34C", "70W", "100%"); NAN else. */
static double with_unit(struct iq_str t, const char *unit)
{
	double v;
	size_t used, ul = strlen(unit);
	if (number(t, &v, &used) != 0 || t.n - used != ul || memcmp(t.p + used, unit, ul) != 0)
		return NAN;
	return v;
}

/* "00000000:18:00.0" */
static int is_pci(struct iq_str v)
{
	size_t i = 0;
	while (i < v.n && is_hex(v.p[i]))
		i++;
	if (i < 4 || i > 8 || v.n != i + 8)
		return 0;
	const char *p = v.p + i;
	return p[0] == ':' && is_hex(p[1]) && is_hex(p[2]) && p[3] == ':' && is_hex(p[4]) &&
	       is_hex(p[5]) && p[6] == '.' && is_hex(p[7]);
}

/* Splits a "| a | b | c |" row into trimmed cells; returns their count. */
static int cells(const char *s, size_t n, struct iq_str *c)
{
	int k = 0;
	size_t i = 1;   /* past the leading '|' */
	while (i < n && k < MAX_CELLS) {
		const char *bar = memchr(s + i, '|', n - i);
		size_t e = bar ? (size_t)(bar - s) : n;
		size_t len = e - i;
		const char *p = trim(s + i, &len);
		if (!bar && len == 0)
			break;
		c[k++] = iq_str_make(p, len);
		i = e + 1;
	}
	return k;
}

/* "Wed May  1 12:00:00 2024": the snapshot's date line. */
static int date_line(const char *s, size_t n, int64_t *out)
{
	static const char *const dows[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
	if (n < 24 || s[3] != ' ' || s[7] != ' ')
		return -1;
	int dow = 0;
	for (size_t k = 0; k < IQ_ARRAY_LEN(dows); k++)
		dow |= memcmp(s, dows[k], 3) == 0;
	char mb[4] = {s[4], s[5], s[6], 0};
	int mon = iq_month_from_abbr(mb);
	if (!dow || !mon)
		return -1;
	size_t i = 8;
	if (s[i] == ' ')
		i++;
	int day = 0, h, mi, sec, y = 0, nd = 0;
	while (i < n && is_digit(s[i]) && nd < 2) {
		day = day * 10 + (s[i++] - '0');
		nd++;
	}
	if (nd == 0 || i + 14 > n || s[i] != ' ' || !is_digit(s[i + 1]) || !is_digit(s[i + 2]) ||
	    s[i + 3] != ':' || !is_digit(s[i + 4]) || !is_digit(s[i + 5]) || s[i + 6] != ':' ||
	    !is_digit(s[i + 7]) || !is_digit(s[i + 8]) || s[i + 9] != ' ')
		return -1;
	h = (s[i + 1] - '0') * 10 + (s[i + 2] - '0');
	mi = (s[i + 4] - '0') * 10 + (s[i + 5] - '0');
	sec = (s[i + 7] - '0') * 10 + (s[i + 8] - '0');
	i += 10;
	for (int k = 0; k < 4; k++, i++) {
		if (!is_digit(s[i]))
			return -1;
		y = y * 10 + (s[i] - '0');
	}
	if (i != n || day < 1 || day > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	int64_t t = iq_time_make(y, mon, day, h, mi, sec, 0);
	if (t == IQ_TIME_NONE)
		return -1;
	*out = t;
	return 0;
}

/* A border: '+', '|', '-', '=' and spaces only, with a run of - or =. */
static int is_border(const char *s, size_t n)
{
	int run = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '+' && s[i] != '|' && s[i] != '-' && s[i] != '=' && s[i] != ' ')
			return 0;
		run |= s[i] == '-' || s[i] == '=';
	}
	return run;
}

/* Row 2 of a GPU: "N/A 34C P0 70W / 700W" | "81000MiB / 81559MiB" | "100% Default". */
static int is_row2(const struct iq_str *c, int nc)
{
	return nc >= 3 && has(c[1].p, c[1].n, "MiB /") && (has(c[0].p, c[0].n, "C ") ||
							   has(c[0].p, c[0].n, "N/A"));
}

/* The table is the file's content, not a copy printed inside another
 * program's log: its header must come early (after a few prompt lines),
 * or most lines must be table lines. */
static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t pos = 0;
	int seen = 0, table = 0, row2 = 0;
	while (pos < n) {
		const char *nl = memchr(head + pos, '\n', n - pos);
		if (!nl)
			break;   /* a line cut by the head */
		const char *s = head + pos;
		size_t len = (size_t)(nl - s);
		pos += len + 1;
		if (len && s[len - 1] == '\r')
			len--;
		const char *t = trim(s, &len);
		if (len == 0)
			continue;
		seen++;
		if (seen <= 12 && len > 13 && memcmp(t, "| NVIDIA-SMI ", 13) == 0) {
			snprintf(why, whysz, "nvidia-smi table header (| NVIDIA-SMI ...)");
			return 95;
		}
		if (seen <= 12 && len > 14 && memcmp(t, "| MIG devices:", 14) == 0) {
			snprintf(why, whysz, "nvidia-smi MIG devices table");
			return 85;
		}
		struct iq_str c[MAX_CELLS];
		if (t[0] == '|' || t[0] == '+')
			table++;
		if (t[0] == '|' && is_row2(c, cells(t, len, c)))
			row2++;
	}
	if (row2 && table * 2 > seen) {
		snprintf(why, whysz, "nvidia-smi table rows (temperature, MiB / MiB)");
		return 75;
	}
	return 0;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct smi *p = st;
	memset(p, 0, sizeof *p);
	p->ts = IQ_TIME_NONE;
	return 0;
}

static void text_add(struct smi *p, const char *s, size_t n)
{
	size_t len = n;
	s = trim(s, &len);
	if (p->text_n && p->text_n < TEXT_MAX)
		p->text[p->text_n++] = ' ';
	size_t room = TEXT_MAX - p->text_n;
	if (len > room)
		len = room;
	memcpy(p->text + p->text_n, s, len);
	p->text_n += len;
}

static void copy_str(char *dst, size_t dsz, struct iq_str s)
{
	size_t k = s.n < dsz - 1 ? s.n : dsz - 1;
	memcpy(dst, s.p, k);
	dst[k] = '\0';
}

/* Emits the pending GPU or MIG device, if any. */
static int flush(struct smi *p, const struct iq_parse_ctx *ctx)
{
	if (!p->pending)
		return 0;
	p->pending = 0;
	struct iq_record *r = &p->r;
	r->nlines = p->last_line - r->line + 1;
	r->ts = p->ts;
	if (p->ts != IQ_TIME_NONE) {
		r->ts_how = iq_time_local(&r->ts);
		r->ts_raw = iq_str_make(p->ts_raw, strlen(p->ts_raw));
	}
	r->u.gpu.name = iq_str_make(p->name, strlen(p->name));
	r->u.gpu.pci_bus = iq_str_make(p->pci, strlen(p->pci));
	r->text = iq_str_make(p->text, p->text_n);
	return ctx->sink.record(ctx->sink.u, r);
}

static void start(struct smi *p, int kind, long lineno, const char *s, size_t n)
{
	p->pending = kind;
	p->rows = 1;
	iq_record_init(&p->r, IQ_KIND_GPU);
	p->r.line = lineno;
	p->last_line = lineno;
	p->name[0] = p->pci[0] = '\0';
	p->text_n = 0;
	text_add(p, s, n);
}

/* Row 1 of a GPU: "0  NVIDIA H100 80GB HBM3  On" | "00000000:18:00.0 Off" | ECC. */
static int gpu_row1(struct smi *p, long lineno, const char *s, size_t n, const struct iq_str *c)
{
	size_t pos = 0;
	struct iq_str idx = token(c[0].p, c[0].n, &pos);
	double d;
	size_t used;
	if (number(idx, &d, &used) != 0 || used != idx.n || d > 65535)
		return -1;
	size_t pp = 0;
	struct iq_str pci = token(c[1].p, c[1].n, &pp);
	start(p, 1, lineno, s, n);
	p->r.u.gpu.index = (int)d;
	/* the name runs to the last token (persistence mode / TCC / WDDM) */
	struct iq_str rest = iq_str_make(c[0].p + pos, c[0].n - pos);
	rest.p = trim(rest.p, &rest.n);
	size_t e = rest.n;
	while (e && rest.p[e - 1] != ' ')
		e--;
	size_t nn = e;
	struct iq_str name = iq_str_make(rest.p, nn);
	name.p = trim(name.p, &name.n);
	copy_str(p->name, sizeof p->name, name);
	copy_str(p->pci, sizeof p->pci, pci);
	if (p->ngpus < MAX_GPUS) {
		struct known_gpu *k = &p->gpus[p->ngpus++];
		k->index = (int)d;
		copy_str(k->name, sizeof k->name, name);
		copy_str(k->pci, sizeof k->pci, pci);
	}
	return 0;
}

/* Memory "81000MiB / 81559MiB" into used and total. */
static void memory(struct iq_str c, struct iq_gpu *g)
{
	size_t pos = 0;
	struct iq_str u = token(c.p, c.n, &pos), slash = token(c.p, c.n, &pos);
	struct iq_str t = token(c.p, c.n, &pos);
	if (slash.n == 1 && slash.p[0] == '/') {
		g->mem_used_mib = with_unit(u, "MiB");
		g->mem_total_mib = with_unit(t, "MiB");
	}
}

static void gpu_row2(struct smi *p, const struct iq_str *c)
{
	struct iq_gpu *g = &p->r.u.gpu;
	size_t pos = 0;
	for (;;) {
		struct iq_str t = token(c[0].p, c[0].n, &pos);
		if (!t.n)
			break;
		if (t.n >= 2 && t.p[t.n - 1] == 'C' && isnan(g->temp_c))
			g->temp_c = with_unit(t, "C");
		else if (t.n >= 2 && t.p[t.n - 1] == 'W' && isnan(g->power_w)) {
			/* "70W / 700W": the draw is the one before the slash */
			size_t q = pos;
			struct iq_str nx = token(c[0].p, c[0].n, &q);
			if (nx.n == 1 && nx.p[0] == '/')
				g->power_w = with_unit(t, "W");
		}
	}
	memory(c[1], g);
	pos = 0;
	g->util_gpu_pct = with_unit(token(c[2].p, c[2].n, &pos), "%");
}

/* MIG device row 1: "1  3  0  0" | "14366MiB / 19968MiB" | ... */
static int mig_row1(struct smi *p, long lineno, const char *s, size_t n, const struct iq_str *c,
		    int nc)
{
	int v[4];
	size_t pos = 0;
	for (int k = 0; k < 4; k++) {
		struct iq_str t = token(c[0].p, c[0].n, &pos);
		double d;
		size_t used;
		if (number(t, &d, &used) != 0 || used != t.n || d > 65535)
			return -1;
		v[k] = (int)d;
	}
	if (token(c[0].p, c[0].n, &pos).n || nc < 2 || !has(c[1].p, c[1].n, "MiB"))
		return -1;
	start(p, 2, lineno, s, n);
	p->r.u.gpu.index = v[0];
	const struct known_gpu *k = NULL;
	for (int i = 0; i < p->ngpus; i++)
		if (p->gpus[i].index == v[0])
			k = &p->gpus[i];
	snprintf(p->name, sizeof p->name, "%s%sMIG GI %d CI %d", k && k->name[0] ? k->name : "",
		 k && k->name[0] ? " " : "", v[1], v[2]);
	if (k)
		snprintf(p->pci, sizeof p->pci, "%s", k->pci);
	memory(c[1], &p->r.u.gpu);
	return 0;
}

static void skip(const struct iq_parse_ctx *ctx, long lineno, const char *reason, const char *s,
		 size_t n)
{
	ctx->sink.skip(ctx->sink.u, lineno, 1, reason, s, n);
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct smi *p = st;
	size_t tn = n;
	const char *ts = trim(s, &tn);
	int rc;
	int64_t t;
	struct iq_str c[MAX_CELLS];
	int nc = tn && ts[0] == '|' ? cells(ts, tn, c) : 0;
	/* the third row of a GPU (MIG M.) or a MIG device's BAR1 row */
	if (p->pending && nc >= 2 && c[0].n == 0 && !is_border(ts, tn) &&
	    ((p->pending == 1 && p->rows == 2) || (p->pending == 2 && p->rows == 1))) {
		p->rows++;
		p->last_line = lineno;
		return 0;
	}
	if (p->pending == 1 && p->rows == 1 && is_row2(c, nc)) {
		gpu_row2(p, c);
		text_add(p, s, n);
		p->rows++;
		p->last_line = lineno;
		return 0;
	}
	if ((rc = flush(p, ctx)))
		return rc;
	if (tn == 0) {
		skip(ctx, lineno, "blank", NULL, 0);
	} else if (date_line(ts, tn, &t) == 0) {
		p->ts = t;
		copy_str(p->ts_raw, sizeof p->ts_raw, iq_str_make(ts, tn));
		p->sec = S_NONE;
		p->ngpus = 0;
		skip(ctx, lineno, "snapshot header", s, n);
	} else if (is_border(ts, tn)) {
		skip(ctx, lineno, "table border", s, n);
	} else if (nc == 0 && tn > 6 && memcmp(ts, "Every ", 6) == 0 && has(ts, tn, "nvidia-smi")) {
		skip(ctx, lineno, "watch header", s, n);
	} else if (nc == 0) {
		skip(ctx, lineno, "not nvidia-smi output", s, n);
	} else if (has(ts, tn, "NVIDIA-SMI ")) {
		if (p->sec != S_NONE)
			p->ngpus = 0;   /* a new snapshot without a date line */
		p->sec = S_GPU;
		skip(ctx, lineno, "header", s, n);
	} else if (has(ts, tn, "| MIG devices:")) {
		p->sec = S_MIG;
		skip(ctx, lineno, "header", s, n);
	} else if (has(ts, tn, "| Processes:")) {
		p->sec = S_PROC;
		skip(ctx, lineno, "process table", s, n);
	} else if (p->sec == S_PROC) {
		skip(ctx, lineno, "process table", s, n);
	} else if (p->sec == S_MIG) {
		if (mig_row1(p, lineno, s, n, c, nc) != 0)
			skip(ctx, lineno, "header", s, n);
	} else if (nc >= 3 && is_pci(token(c[1].p, c[1].n, &(size_t){0}))) {
		if (gpu_row1(p, lineno, s, n, c) != 0)
			skip(ctx, lineno, "malformed gpu row", s, n);
	} else if (has(ts, tn, "Bus-Id") || has(ts, tn, "Memory-Usage") || has(ts, tn, "MIG M.") ||
		   has(ts, tn, "Persistence-M") || has(ts, tn, "Pwr:Usage")) {
		skip(ctx, lineno, "header", s, n);
	} else if (is_row2(c, nc)) {
		/* a second row without its first: an excerpt */
		start(p, 1, lineno, s, n);
		gpu_row2(p, c);
		p->rows = 2; /* the row it has: the next may be the third */
	} else {
		skip(ctx, lineno, "unrecognised table row", s, n);
	}
	return 0;
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	return flush(st, ctx);
}

const struct iq_format iq_format_nvidia_smi_table = {
	.name = "nvidia-smi-table",
	.desc = "nvidia-smi default table snapshots (also watch/looped, MIG devices)",
	.sniff = sniff,
	.state_size = sizeof(struct smi),
	.begin = begin,
	.line = line,
	.end = end,
};
