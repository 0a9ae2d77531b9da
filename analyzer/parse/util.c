/* util.c: small helpers every parser uses: record defaults, log levels,
 * sizes with units, JSON string decoding, ctime-style dates. */
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
		r->u.event.first_ts = r->u.event.last_ts = r->u.event.created_ts = IQ_TIME_NONE;
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
		r->u.pod.ready_since = IQ_TIME_NONE;
		break;
	case IQ_KIND_LOG:
	case IQ_KIND_CONFIG:
		break;
	}
}

/* The value slice of key (quoted, with its quotes) in the first lim bytes
 * of a JSON line: the string's body (quoted 1) or a bare number's text
 * (quoted 0). 0 when absent. */
static int json_value(const char *s, size_t n, size_t lim, const char *key, struct iq_str *v, int *quoted)
{
	size_t kl = strlen(key);
	const char *p = iq_memmem(s, lim, key, kl);
	while (p) {
		size_t i = (size_t)(p - s) + kl;
		while (i < n && s[i] == ' ')
			i++;
		if (i < n && s[i] == ':') {
			i++;
			while (i < n && s[i] == ' ')
				i++;
			if (i < n && s[i] == '"') {
				size_t b = ++i;
				while (i < n && s[i] != '"' && s[i] != '\\' && i - b < 64)
					i++;
				if (i < n && s[i] == '"') {
					*v = iq_str_make(s + b, i - b);
					*quoted = 1;
					return 1;
				}
				return 0;
			}
			size_t b = i;
			while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
				i++;
			if (i > b) {
				*v = iq_str_make(s + b, i - b);
				*quoted = 0;
				return 1;
			}
			return 0;
		}
		size_t off = (size_t)(p - s) + 1;
		p = off < lim ? iq_memmem(s + off, lim - off, key, kl) : NULL;
	}
	return 0;
}

int iq_json_plain_in(const char *dec, size_t dn, const char *raw, size_t rn)
{
	char esc[64 * 6 + 1];
	size_t k = 0;
	for (size_t i = 0; i < dn && i < 64; i++) {
		unsigned char c = (unsigned char)dec[i];
		if (c == '"' || c == '\\') {
			esc[k++] = '\\';
			esc[k++] = (char)c;
		} else if (c == '\n' || c == '\t' || c == '\r' || c == '\b' || c == '\f') {
			esc[k++] = '\\';
			esc[k++] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : c == '\b' ? 'b' : 'f';
		} else if (c < 0x20) {
			k += (size_t)snprintf(esc + k, sizeof esc - k, "\\u%04x", c);
		} else {
			esc[k++] = (char)c;
		}
	}
	return k == 0 || (rn >= k && iq_memmem(raw, rn, esc, k) != NULL);
}

int iq_json_line_time(const char *s, size_t n, int64_t *ts, struct iq_str *raw)
{
	static const char *const keys[] = {"\"ts\"", "\"time\"", "\"timestamp\"", "\"@timestamp\"",
					   "\"datetime\"", "\"asctime\"", "\"t\"", "\"timeStamp\"",
					   "\"Timestamp\"", "\"@t\"", "\"eventTime\""};
	if (n < 2 || s[0] != '{')
		return -1;
	size_t lim = n < 600 ? n : 600;
	for (size_t k = 0; k < IQ_ARRAY_LEN(keys); k++) {
		struct iq_str v;
		int quoted;
		if (!json_value(s, n, lim, keys[k], &v, &quoted))
			continue;
		if (quoted) {
			size_t used = 0;
			int z = iq_time_parse_iso(v.p, v.n, ts, &used);
			if (z < 0 || used != v.n)
				continue;
			*raw = v;
			return z;
		}
		/* seconds since the epoch, or its milli-, micro- or nanoseconds,
		 * told by the integer part's digits; the fraction exactly */
		size_t i = 0, id = 0;
		uint64_t whole = 0; /* unsigned: 19 digits may exceed int64_t */
		int64_t frac = 0, scale = 1;
		for (; i < v.n && v.p[i] != '.'; i++, id++)
			if (id < 19)
				whole = whole * 10 + (uint64_t)(v.p[i] - '0');
		if (i < v.n)
			for (i++; i < v.n && scale < 1000000000; i++, scale *= 10)
				frac = frac * 10 + (v.p[i] - '0');
		int64_t unit = id >= 18 ? 1 : id >= 15 ? 1000 : id >= 12 ? 1000000 : 1000000000;
		/* not 2000 .. 2200 (told before the product can overflow) */
		if (id > 19 || whole > (uint64_t)(7258118400LL * 1000000000LL / unit))
			continue;
		int64_t t = (int64_t)whole * unit + frac * (unit / scale > 0 ? unit / scale : 0);
		if (t < 946684800LL * 1000000000LL || t > 7258118400LL * 1000000000LL)
			continue;
		*ts = t;
		*raw = v;
		return 1;
	}
	/* MongoDB's and extended JSON's {"t":{"$date":"2026-03-10T20:58:09.401+00:00"}} */
	const char *d = iq_memmem(s, lim, "{\"$date\":", 9);
	if (d) {
		size_t i = (size_t)(d - s) + 9, used = 0;
		while (i < n && s[i] == ' ')
			i++;
		if (i < n && s[i] == '"') {
			int z = iq_time_parse_iso(s + i + 1, n - i - 1, ts, &used);
			if (z >= 0 && i + 1 + used < n && s[i + 1 + used] == '"') {
				*raw = iq_str_make(s + i + 1, used);
				return z;
			}
		}
	}
	return -1;
}

/* The value of a structured (JSON) log line's level key near its start:
 * {"ts":…,"level":"error",…}, "severity", "lvl", "levelname". */
static struct iq_str json_level(const char *s, size_t n)
{
	static const char *const keys[] = {"\"level\"", "\"severity\"", "\"lvl\"", "\"levelname\"",
					   "\"log.level\""};
	size_t lim = n < 400 ? n : 400;
	for (size_t k = 0; k < IQ_ARRAY_LEN(keys); k++) {
		size_t kl = strlen(keys[k]);
		const char *p = iq_memmem(s, lim, keys[k], kl);
		if (!p)
			continue;
		size_t i = (size_t)(p - s) + kl;
		while (i < n && s[i] == ' ')
			i++;
		if (i >= n || s[i] != ':')
			continue;
		i++;
		while (i < n && s[i] == ' ')
			i++;
		if (i >= n || s[i] != '"')
			continue;
		size_t b = ++i;
		while (i < n && i - b < 16 && ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z')))
			i++;
		if (i < n && s[i] == '"' && i > b)
			return iq_str_make(s + b, i - b);
	}
	return IQ_STR_NULL;
}

struct iq_str iq_log_severity(const char *s, size_t n)
{
	if (n > 2 && s[0] == '{')
		return json_level(s, n);
	static const char *const words[] = {
		"CRITICAL", "FATAL", "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "TRACE",
	};
	size_t i = 0;
	for (int k = 0; k < 3 && i < n && s[i] == '('; k++) {
		const char *e = memchr(s + i, ')', n - i);
		if (!e || (size_t)(e - s) + 1 >= n || e[1] != ' ')
			return IQ_STR_NULL;
		i = (size_t)(e - s) + 2;
	}
	for (size_t w = 0; w < IQ_ARRAY_LEN(words); w++) {
		size_t l = strlen(words[w]);
		if (n - i > l && memcmp(s + i, words[w], l) == 0 &&
		    (s[i + l] == ' ' || s[i + l] == ':'))
			return iq_str_make(s + i, l);
	}
	if (n - i >= 6 && s[i] && memchr("IWEF", s[i], 4) && s[i + 5] == ' ') {
		for (size_t k = 1; k <= 4; k++)
			if (s[i + k] < '0' || s[i + k] > '9')
				return IQ_STR_NULL;
		return iq_str_make(s + i, 1);
	}
	return IQ_STR_NULL;
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
	double mult = 0;
	for (size_t u = 0; u < IQ_ARRAY_LEN(units) && !mult; u++) {
		size_t ul = strlen(units[u].u);
		if (n - i >= ul && strncmp(s + i, units[u].u, ul) == 0)
			mult = units[u].m;
	}
	/* a bare number is a count of bytes ("allocate 7406166528") */
	if (!mult && (i >= n || !isalpha((unsigned char)s[i])))
		mult = 1;
	double bytes = v * mult + 0.5;
	/* NaN, negative or past what int64 holds is not a size */
	if (!mult || !(bytes >= 0 && bytes < 9.2e18))
		return -1;
	return (int64_t)bytes;
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

static int two_digits(const char *s, int *v)
{
	if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
		return -1;
	*v = (s[0] - '0') * 10 + (s[1] - '0');
	return 0;
}

int iq_parse_clf(const char *p, size_t n, int64_t *out)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	int d, mon = 0, yh, yl, h, mi, s, oh, om;
	if (n < 26 || two_digits(p, &d) || p[2] != '/' || p[6] != '/' || two_digits(p + 7, &yh) ||
	    two_digits(p + 9, &yl) || p[11] != ':' || two_digits(p + 12, &h) || p[14] != ':' ||
	    two_digits(p + 15, &mi) || p[17] != ':' || two_digits(p + 18, &s) || p[20] != ' ' ||
	    (p[21] != '+' && p[21] != '-') || two_digits(p + 22, &oh) || two_digits(p + 24, &om))
		return -1;
	for (int m = 0; m < 12; m++)
		if (memcmp(p + 3, months + 3 * m, 3) == 0)
			mon = m + 1;
	if (!mon || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || oh > 23 || om > 59)
		return -1;
	int64_t off = ((int64_t)oh * 3600 + om * 60) * IQ_NS_PER_SEC;
	int64_t t = iq_time_make(yh * 100 + yl, mon, d, h, mi, s, 0);
	if (t == IQ_TIME_NONE)
		return -1; /* a year int64 nanoseconds cannot hold */
	*out = t - (p[21] == '+' ? off : -off);
	return 0;
}

size_t iq_parse_ctime(const char *s, size_t n, int64_t *out)
{
	/* "Www Mmm dd hh:mm:ss yyyy" (asctime pads the day with a space,
	 * nvidia-smi writes "Aug 7" unpadded) */
	if (n < 23 || !isupper((unsigned char)s[0]) || !islower((unsigned char)s[1]) ||
	    !islower((unsigned char)s[2]) || s[3] != ' ' || s[7] != ' ')
		return 0;
	int mon = iq_month_from_abbr(s + 4), day, h, mi, sec, y1, y2;
	if (!mon)
		return 0;
	size_t i = 8;
	if (s[i] == ' ')
		i++;
	if (s[i] < '0' || s[i] > '9')
		return 0;
	day = s[i++] - '0';
	if (s[i] >= '0' && s[i] <= '9')
		day = day * 10 + (s[i++] - '0');
	if (n - i < 14 || s[i] != ' ' || two_digits(s + i + 1, &h) || s[i + 3] != ':' ||
	    two_digits(s + i + 4, &mi) || s[i + 6] != ':' || two_digits(s + i + 7, &sec) ||
	    h > 23 || mi > 59 || sec > 60)
		return 0;
	i += 9;
	long ns = 0, scale = 100000000L;
	if (s[i] == '.') {
		size_t f = ++i;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			if (i - f < 9)
				ns += (s[i] - '0') * scale;
			scale /= 10;
		}
		if (i == f)
			return 0;
	}
	if (n - i < 5 || s[i] != ' ' || two_digits(s + i + 1, &y1) || two_digits(s + i + 3, &y2))
		return 0;
	struct iq_yearless d = {mon, day, h, mi, sec == 60 ? 59 : sec, ns};
	*out = iq_yearless_in(&d, y1 * 100 + y2);
	return *out == IQ_TIME_NONE ? 0 : i + 5;
}

/* Month names as strftime's %b writes them in the locales a node's
 * journalctl or syslog daemon may run in (glibc's LC_TIME data): English,
 * French, German, Spanish, Italian, Portuguese; lower case, UTF-8. */
static const struct {
	const char *w;
	int mon;
} month_words[] = {
	{"jan", 1}, {"feb", 2}, {"mar", 3}, {"apr", 4}, {"may", 5}, {"jun", 6},
	{"jul", 7}, {"aug", 8}, {"sep", 9}, {"oct", 10}, {"nov", 11}, {"dec", 12},
	{"janv.", 1}, {"f\xc3\xa9vr.", 2}, {"mars", 3}, {"avr.", 4}, {"avril", 4}, {"mai", 5},
	{"juin", 6}, {"juil.", 7}, {"ao\xc3\xbbt", 8}, {"sept.", 9}, {"oct.", 10}, {"nov.", 11},
	{"d\xc3\xa9""c.", 12},
	{"m\xc3\xa4r", 3}, {"mrz", 3}, {"okt", 10}, {"dez", 12},
	{"ene", 1}, {"abr", 4}, {"ago", 8}, {"dic", 12},
	{"gen", 1}, {"mag", 5}, {"giu", 6}, {"lug", 7}, {"set", 9}, {"ott", 10},
	{"fev", 2}, {"out", 10},
};

int iq_month_word(const char *s, size_t n, size_t *len)
{
	int best = 0;
	size_t bl = 0;
	for (size_t k = 0; k < IQ_ARRAY_LEN(month_words); k++) {
		size_t l = strlen(month_words[k].w), i = 0;
		if (l > n || l <= bl)
			continue;
		while (i < l && (unsigned char)tolower((unsigned char)s[i]) ==
				(unsigned char)month_words[k].w[i])
			i++;
		if (i == l && (l == n || s[l] == ' ')) {
			best = month_words[k].mon;
			bl = l;
		}
	}
	if (best)
		*len = bl;
	return best;
}

int iq_head_line(const char *head, size_t n, size_t *pos, int take_cut, struct iq_str *line)
{
	if (*pos >= n)
		return 0;
	const char *s = head + *pos;
	const char *nl = memchr(s, '\n', n - *pos);
	if (!nl && !take_cut)
		return 0;
	size_t len = nl ? (size_t)(nl - s) : n - *pos;
	*pos += len + 1;
	if (len && s[len - 1] == '\r')
		len--;
	*line = iq_str_make(s, len);
	return 1;
}
