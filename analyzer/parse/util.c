/* util.c: small helpers every parser uses: record defaults, sizes with
 * units, JSON string decoding. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

const char *iq_kind_name(enum iq_kind k)
{
	switch (k) {
	case IQ_KIND_LOG: return "log";
	case IQ_KIND_EVENT: return "event";
	case IQ_KIND_HTTP: return "http";
	case IQ_KIND_GPU: return "gpu";
	case IQ_KIND_KERNEL: return "kernel";
	case IQ_KIND_POD: return "pod";
	case IQ_KIND_CONFIG: return "config";
	}
	return "log";
}

void iq_record_init(struct iq_record *r, enum iq_kind kind)
{
	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->nlines = 1;
	r->ts = IQ_TIME_NONE;
	r->id.restart = -1;
	switch (kind) {
	case IQ_KIND_HTTP:
		r->u.http.bytes_sent = -1;
		r->u.http.duration_s = NAN;
		for (int i = 0; i < IQ_MAX_UPSTREAMS; i++)
			r->u.http.upstream_time_s[i] = NAN;
		break;
	case IQ_KIND_GPU:
		r->u.gpu.index = -1;
		r->u.gpu.mem_used_mib = r->u.gpu.mem_total_mib = NAN;
		r->u.gpu.mem_free_mib = NAN;
		r->u.gpu.util_gpu_pct = r->u.gpu.util_mem_pct = NAN;
		r->u.gpu.temp_c = r->u.gpu.power_w = NAN;
		break;
	case IQ_KIND_EVENT:
		r->u.event.count = 1;
		r->u.event.first_ts = r->u.event.last_ts = IQ_TIME_NONE;
		break;
	case IQ_KIND_KERNEL:
		r->u.kernel.boot_s = NAN;
		break;
	case IQ_KIND_POD:
		r->u.pod.restart_count = -1;
		r->u.pod.ready = -1;
		r->u.pod.exit_code = r->u.pod.last_exit_code = -1;
		r->u.pod.started_at = r->u.pod.finished_at = IQ_TIME_NONE;
		r->u.pod.last_started_at = r->u.pod.last_finished_at = IQ_TIME_NONE;
		break;
	case IQ_KIND_LOG:
	case IQ_KIND_CONFIG:
		break;
	}
}

int64_t iq_parse_size(const char *s, size_t n)
{
	char tmp[64];
	size_t i = 0;
	while (i < n && s[i] == ' ')
		i++;
	size_t start = i;
	while (i < n && (isdigit((unsigned char)s[i]) || s[i] == '.' || s[i] == ','))
		i++;
	if (i == start || i - start >= sizeof tmp)
		return -1;
	size_t k = 0;
	for (size_t j = start; j < i; j++)
		if (s[j] != ',')
			tmp[k++] = s[j];
	tmp[k] = '\0';
	char *end;
	double v = strtod(tmp, &end);
	if (*end)
		return -1;
	while (i < n && s[i] == ' ')
		i++;
	static const struct { const char *u; double m; } units[] = {
		{"bytes", 1}, {"byte", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0},
		{"GiB", 1073741824.0}, {"TiB", 1099511627776.0}, {"KB", 1e3},
		{"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
	};
	double m = 0;
	for (size_t u = 0; u < IQ_ARRAY_LEN(units) && !m; u++) {
		size_t ul = strlen(units[u].u);
		if (n - i >= ul && strncmp(s + i, units[u].u, ul) == 0)
			m = units[u].m;
	}
	/* a bare number is a count of bytes ("allocate 7406166528") */
	if (!m && (i >= n || !isalpha((unsigned char)s[i])))
		m = 1;
	if (!m)
		return -1;
	/* past int64 the conversion is undefined: no size */
	double b = v * m + 0.5;
	return b < 9223372036854775807.0 ? (int64_t)b : -1;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

static int add_utf8(struct iq_buf *out, unsigned cp)
{
	char b[4];
	size_t n;
	if (cp < 0x80) {
		b[0] = (char)cp; n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xC0 | (cp >> 6)); b[1] = (char)(0x80 | (cp & 0x3F)); n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xE0 | (cp >> 12)); b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
	} else {
		b[0] = (char)(0xF0 | (cp >> 18)); b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
	}
	return iq_buf_add(out, b, n);
}

static int hex4(const char *s, size_t n, size_t i, unsigned *cp)
{
	if (i + 4 > n)
		return -1;
	unsigned v = 0;
	for (size_t k = 0; k < 4; k++) {
		int h = hexval(s[i + k]);
		if (h < 0)
			return -1;
		v = v * 16 + (unsigned)h;
	}
	*cp = v;
	return 0;
}

int iq_json_unescape(struct iq_buf *out, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		const char *bs = memchr(s + i, '\\', n - i);
		size_t run = bs ? (size_t)(bs - (s + i)) : n - i;
		if (run && iq_buf_add(out, s + i, run))
			return IQ_ERR_NOMEM;
		i += run;
		if (i >= n)
			break;
		if (i + 1 >= n) {
			if (iq_buf_addc(out, '\\'))
				return IQ_ERR_NOMEM;
			break;
		}
		char c = s[i + 1];
		char lit = 0;
		switch (c) {
		case 'n': lit = '\n'; break;
		case 't': lit = '\t'; break;
		case 'r': lit = '\r'; break;
		case 'b': lit = '\b'; break;
		case 'f': lit = '\f'; break;
		case '/': lit = '/'; break;
		case '\\': lit = '\\'; break;
		case '"': lit = '"'; break;
		case 'u': {
			unsigned cp;
			if (hex4(s, n, i + 2, &cp) == 0) {
				size_t adv = 6;
				unsigned lo;
				if (cp >= 0xD800 && cp <= 0xDBFF && i + 7 < n && s[i + 6] == '\\' &&
				    s[i + 7] == 'u' && hex4(s, n, i + 8, &lo) == 0 && lo >= 0xDC00 &&
				    lo <= 0xDFFF) {
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					adv = 12;
				} else if (cp >= 0xD800 && cp <= 0xDFFF) {
					cp = 0xFFFD;
				}
				if (add_utf8(out, cp))
					return IQ_ERR_NOMEM;
				i += adv;
				continue;
			}
			break;
		}
		default:
			break;
		}
		if (lit) {
			if (iq_buf_addc(out, lit))
				return IQ_ERR_NOMEM;
		} else if (iq_buf_add(out, s + i, 2)) {
			return IQ_ERR_NOMEM;
		}
		i += 2;
	}
	return 0;
}
