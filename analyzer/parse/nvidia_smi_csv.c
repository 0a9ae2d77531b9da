/* nvidia_smi_csv.c: `nvidia-smi --query-gpu=... --format=csv[,noheader]
 * [,nounits]` output, possibly looped (-l/-lms), one GPU sample per row.
 * Columns are mapped by header name, in any case ("pci.baseClass") and any
 * number of them (the full --query-gpu set is 200+ columns); a repeated
 * header is skipped, a new one re-maps the columns. Without any header only the query of NVIDIA's
 * own documented example (13 columns, see known_set) is recognised, by the
 * shape of its values; other header-less rows are skipped "no header". */
#include <stdlib.h>
#include <string.h>

#include "parse.h"

enum col {
	C_IGNORE = 0,
	C_INDEX,
	C_UUID,
	C_NAME,
	C_PCI,
	C_TS,
	C_MEM_USED,
	C_MEM_TOTAL,
	C_MEM_FREE,
	C_UTIL_GPU,
	C_UTIL_MEM,
	C_TEMP,
	C_POWER,
	C_POWER_ALT,  /* power.draw.instant/.average: used when no power.draw */
};

struct smi {
	unsigned char *col;       /* the header's columns, ncols of them */
	long ncols;
	int have_header;
	int have_power;   /* the header has power.draw itself */
};

static const struct {
	const char *name;
	enum col c;
} fields[] = {
	{"index", C_INDEX},
	{"uuid", C_UUID}, {"gpu_uuid", C_UUID},
	{"name", C_NAME}, {"gpu_name", C_NAME},
	{"pci.bus_id", C_PCI}, {"gpu_bus_id", C_PCI},
	{"timestamp", C_TS},
	{"memory.used", C_MEM_USED},
	{"memory.total", C_MEM_TOTAL},
	{"memory.free", C_MEM_FREE},
	{"utilization.gpu", C_UTIL_GPU},
	{"utilization.memory", C_UTIL_MEM},
	{"temperature.gpu", C_TEMP},
	{"power.draw", C_POWER},
	{"power.draw.instant", C_POWER_ALT},
	{"power.draw.average", C_POWER_ALT},
};

/* The query of the nvidia-smi documentation's example
 * (timestamp,name,pci.bus_id,driver_version,pstate,pcie.link.gen.max,
 * pcie.link.gen.current,temperature.gpu,utilization.gpu,utilization.memory,
 * memory.total,memory.free,memory.used): the one column set assumed for
 * rows without a header, and only when their shape fits (shape_is_known). */
static const unsigned char known_set[] = {
	C_TS, C_NAME, C_PCI, C_IGNORE, C_IGNORE, C_IGNORE, C_IGNORE, C_TEMP,
	C_UTIL_GPU, C_UTIL_MEM, C_MEM_TOTAL, C_MEM_FREE, C_MEM_USED,
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Trims spaces and tabs around s[0..*n). */
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

/* Number of comma-separated fields of a line. */
static long count_fields(const char *s, size_t n)
{
	long k = 1;
	for (size_t i = 0; i < n; i++)
		k += s[i] == ',';
	return k;
}

/* Next field of s[*pos..n): stores its trimmed slice, advances *pos past
 * the comma. */
static struct iq_str next_field(const char *s, size_t n, size_t *pos)
{
	size_t b = *pos, e = b;
	while (e < n && s[e] != ',')
		e++;
	*pos = e < n ? e + 1 : n + 1;
	size_t len = e - b;
	const char *p = trim(s + b, &len);
	return iq_str_make(p, len);
}

/* A decimal number at the start of s (optional sign, digits, optional
 * fraction), without locale; *used gets the bytes read. -1 when none. */
static int parse_dec(const char *s, size_t n, double *out, size_t *used)
{
	size_t i = 0;
	int neg = 0;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	int64_t ip = 0, fp = 0, scale = 1;
	size_t d0 = i;
	while (i < n && is_digit(s[i])) {
		if (ip < INT64_MAX / 100)
			ip = ip * 10 + (s[i] - '0');
		i++;
	}
	int nd = (int)(i - d0);
	if (i < n && s[i] == '.') {
		i++;
		while (i < n && is_digit(s[i])) {
			if (scale < 1000000000LL) {
				fp = fp * 10 + (s[i] - '0');
				scale *= 10;
			}
			i++;
			nd++;
		}
	}
	if (nd == 0)
		return -1;
	/* ip*scale+fp is exact in a double up to 2^53: one rounding only */
	double v = ((double)ip * (double)scale + (double)fp) / (double)scale;
	*out = neg ? -v : v;
	*used = i;
	return 0;
}

/* "[N/A]", "[Not Supported]", "[GPU is lost]", "N/A", empty: no value. */
static int is_nonvalue(struct iq_str v)
{
	return v.n == 0 || v.p[0] == '[' || (v.n == 3 && memcmp(v.p, "N/A", 3) == 0);
}

/* A value with an optional unit ("70 %", "250.00 W", "1234 MiB", "37").
 * unit is the one accepted suffix; memory values also take other binary
 * sizes ("80 GiB") and are returned in MiB. NAN when not a number. */
static double value_of(struct iq_str v, const char *unit, int is_mem)
{
	double d;
	size_t used;
	if (is_nonvalue(v) || parse_dec(v.p, v.n, &d, &used) != 0)
		return NAN;
	size_t rn = v.n - used;
	const char *rest = trim(v.p + used, &rn);
	if (rn == 0)
		return d;
	if (rn == strlen(unit) && memcmp(rest, unit, rn) == 0)
		return d;
	if (is_mem) {
		int64_t b = iq_parse_size(v.p, v.n);
		if (b >= 0)
			return (double)b / 1048576.0;
	}
	return NAN;
}

/* nvidia-smi's timestamp "2024/05/01 12:00:00.123" (local time, no zone).
 * Returns 0 and the time taken as UTC, or -1. */
static int parse_smi_ts(struct iq_str v, int64_t *out)
{
	char tmp[40];
	if (v.n < 19 || v.n >= sizeof tmp || v.p[4] != '/' || v.p[7] != '/')
		return -1;
	int y = 0;
	for (int i = 0; i < 4; i++) {
		if (!is_digit(v.p[i]))
			return -1;
		y = y * 10 + (v.p[i] - '0');
	}
	if (y < 1678 || y > 2261) /* out of int64 nanoseconds */
		return -1;
	memcpy(tmp, v.p, v.n);
	tmp[4] = tmp[7] = '-';
	size_t used;
	if (iq_time_parse_iso(tmp, v.n, out, &used) != 0 || used != v.n)
		return -1; /* a zone, or trailing bytes: not nvidia-smi's */
	return 0;
}

/* "00000000:3B:00.0" (nvidia-smi) or "0000:3b:00.0". */
static int is_pci(struct iq_str v)
{
	size_t i = 0;
	while (i < v.n && is_hex(v.p[i]))
		i++;
	if (i < 4 || i > 8 || v.n != i + 8)
		return 0;
	const char *p = v.p + i;
	return p[0] == ':' && is_hex(p[1]) && is_hex(p[2]) && p[3] == ':' &&
	       is_hex(p[4]) && is_hex(p[5]) && p[6] == '.' && is_hex(p[7]);
}

/* A number, optionally followed by exactly " unit". */
static int is_num_unit(struct iq_str v, const char *unit)
{
	double d;
	size_t used;
	if (parse_dec(v.p, v.n, &d, &used) != 0)
		return 0;
	if (used == v.n)
		return 1;
	size_t ul = strlen(unit);
	return v.n - used == ul + 1 && v.p[used] == ' ' && memcmp(v.p + used + 1, unit, ul) == 0;
}

/* Does a header-less row have the shape of known_set's query? */
static int shape_is_known(const char *s, size_t n)
{
	if (count_fields(s, n) != (long)IQ_ARRAY_LEN(known_set))
		return 0;
	size_t pos = 0;
	int64_t t;
	for (size_t i = 0; i < IQ_ARRAY_LEN(known_set); i++) {
		struct iq_str v = next_field(s, n, &pos);
		int ok = 1;
		switch (i) {
		case 0: ok = parse_smi_ts(v, &t) == 0; break;
		case 2: ok = is_nonvalue(v) || is_pci(v); break;
		case 4: ok = is_nonvalue(v) || (v.n >= 2 && v.p[0] == 'P' && is_digit(v.p[1])); break;
		case 7: ok = is_nonvalue(v) || is_num_unit(v, ""); break;
		case 8: case 9: ok = is_nonvalue(v) || is_num_unit(v, "%"); break;
		case 10: case 11: case 12: ok = is_nonvalue(v) || is_num_unit(v, "MiB"); break;
		default: break;
		}
		if (!ok)
			return 0;
	}
	return 1;
}

/* A header field: a property name ("memory.used", "clocks_throttle_reasons
 * .active") with an optional " [unit]". *name gets the name alone. */
static int is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int header_field(struct iq_str f, struct iq_str *name)
{
	size_t i = 0;
	if (f.n == 0 || !is_letter(f.p[0]))
		return 0;
	while (i < f.n && (is_letter(f.p[i]) || is_digit(f.p[i]) || f.p[i] == '_' || f.p[i] == '.'))
		i++;
	*name = iq_str_make(f.p, i);
	if (i == f.n)
		return 1;
	return f.n - i >= 4 && f.p[i] == ' ' && f.p[i + 1] == '[' && f.p[f.n - 1] == ']';
}

/* The column of a property name, matched without case (nvidia-smi
 * accepts "Memory.Used" on the command line and echoes it as typed). */
static enum col col_of(struct iq_str name)
{
	for (size_t k = 0; k < IQ_ARRAY_LEN(fields); k++) {
		if (strlen(fields[k].name) != name.n)
			continue;
		size_t i = 0;
		while (i < name.n && (name.p[i] | 0x20) == (fields[k].name[i] | 0x20))
			i++;
		if (i == name.n)
			return fields[k].c;
	}
	return C_IGNORE;
}

/* Reads a header line into cols (when not NULL: room for every field).
 * Returns the number of known GPU fields (>= 0) when the line is a header,
 * -1 otherwise. A line is a header when every field is a property name and
 * at least one is a known field or has a dot or unit (so a row of words is
 * not). */
static int read_header(const char *s, size_t n, unsigned char *cols, int *has_mem)
{
	size_t pos = 0;
	int known = 0, dotted = 0;
	long i = 0;
	if (has_mem)
		*has_mem = 0;
	while (pos <= n) {
		struct iq_str f = next_field(s, n, &pos), name;
		if (!header_field(f, &name))
			return -1;
		enum col c = col_of(name);
		if (c != C_IGNORE)
			known++;
		if (memchr(f.p, '.', f.n) || memchr(f.p, '[', f.n))
			dotted = 1;
		if (has_mem && (c == C_MEM_USED || c == C_UTIL_GPU))
			*has_mem = 1;
		if (cols)
			cols[i] = (unsigned char)c;
		i++;
	}
	return known || dotted ? known : -1;
}

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	size_t pos = 0;
	int seen = 0, best = 0;
	while (pos < n && seen < 5) {
		const char *nl = memchr(head + pos, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - (head + pos)) : n - pos;
		const char *s = head + pos;
		pos += len + 1;
		if (len && s[len - 1] == '\r')
			len--;
		if (len == 0)
			continue;
		seen++;
		int has_mem;
		int known = read_header(s, len, NULL, &has_mem);
		if (known > 0 && has_mem) {
			snprintf(why, whysz, "nvidia-smi --query-gpu CSV header with memory/utilization columns");
			return 95;
		}
		if (known >= 2 && best < 60) {
			best = 60;
			snprintf(why, whysz, "nvidia-smi --query-gpu CSV header");
		}
		if (!nl && pos > n) /* a line cut by the head: shape unsure */
			break;
		if (shape_is_known(s, len) && best < 80) {
			best = 80;
			snprintf(why, whysz, "nvidia-smi --query-gpu CSV rows without header (documented default query)");
		} else {
			size_t p2 = 0;
			int64_t t;
			struct iq_str f = next_field(s, len, &p2);
			if (p2 <= len && parse_smi_ts(f, &t) == 0 && best < 50) {
				best = 50;
				snprintf(why, whysz, "nvidia-smi CSV rows (timestamp first) without header");
			}
		}
	}
	return best;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	memset(st, 0, sizeof(struct smi));
	return 0;
}

static int set_header(struct smi *p, const char *s, size_t n)
{
	long k = count_fields(s, n);
	unsigned char *c = realloc(p->col, (size_t)k);
	if (!c)
		return IQ_ERR_NOMEM;
	p->col = c;
	memset(p->col, 0, (size_t)k);
	read_header(s, n, p->col, NULL);
	p->ncols = k;
	p->have_header = 1;
	p->have_power = 0;
	for (long i = 0; i < p->ncols; i++)
		p->have_power |= p->col[i] == C_POWER;
	return 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct smi *p = st;
	size_t tn = n;
	const char *ts = trim(s, &tn);
	if (tn == 0) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	if (read_header(ts, tn, NULL, NULL) >= 0) {
		if (set_header(p, ts, tn))
			return IQ_ERR_NOMEM;
		ctx->sink.skip(ctx->sink.u, lineno, 1, "header", s, n);
		return 0;
	}
	const unsigned char *cols = p->col;
	long ncols = p->ncols;
	int have_power = p->have_power;
	if (!p->have_header) {
		if (!shape_is_known(ts, tn)) {
			ctx->sink.skip(ctx->sink.u, lineno, 1, "no header", s, n);
			return 0;
		}
		cols = known_set;
		ncols = (long)IQ_ARRAY_LEN(known_set);
		have_power = 0;
	}
	if (count_fields(ts, tn) != ncols) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "wrong column count", s, n);
		return 0;
	}
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_GPU);
	r.line = lineno;
	r.text = iq_str_make(s, n);
	struct iq_gpu *g = &r.u.gpu;
	size_t pos = 0;
	for (long i = 0; i < ncols; i++) {
		struct iq_str v = next_field(ts, tn, &pos);
		enum col c = (enum col)cols[i];
		double d;
		switch (c) {
		case C_TS:
			if (parse_smi_ts(v, &r.ts) == 0) {
				r.ts_how = iq_time_local(&r.ts);
				r.ts_raw = v;
			} else {
				r.ts = IQ_TIME_NONE;
			}
			break;
		case C_INDEX:
			d = value_of(v, "", 0);
			if (!isnan(d) && d >= 0 && d < 65536 && d == (double)(int)d)
				g->index = (int)d;
			break;
		case C_UUID: if (!is_nonvalue(v)) g->uuid = v; break;
		case C_NAME: if (!is_nonvalue(v)) g->name = v; break;
		case C_PCI: if (!is_nonvalue(v)) g->pci_bus = v; break;
		case C_MEM_USED: g->mem_used_mib = value_of(v, "MiB", 1); break;
		case C_MEM_TOTAL: g->mem_total_mib = value_of(v, "MiB", 1); break;
		case C_MEM_FREE: g->mem_free_mib = value_of(v, "MiB", 1); break;
		case C_UTIL_GPU: g->util_gpu_pct = value_of(v, "%", 0); break;
		case C_UTIL_MEM: g->util_mem_pct = value_of(v, "%", 0); break;
		case C_TEMP: g->temp_c = value_of(v, "C", 0); break;
		case C_POWER: g->power_w = value_of(v, "W", 0); break;
		case C_POWER_ALT:
			if (!have_power && isnan(g->power_w))
				g->power_w = value_of(v, "W", 0);
			break;
		case C_IGNORE: break;
		}
	}
	return ctx->sink.record(ctx->sink.u, &r);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct smi *p = st;
	free(p->col);
	p->col = NULL;
	return 0;
}

const struct iq_format iq_format_nvidia_smi_csv = {
	.name = "nvidia-smi-csv",
	.desc = "nvidia-smi --query-gpu CSV (with or without header/units, looped)",
	.sniff = sniff,
	.state_size = sizeof(struct smi),
	.begin = begin,
	.line = line,
	.end = end,
};
