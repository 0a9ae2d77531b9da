/* iqtime.c: calendar arithmetic and timestamp reading without libc's
 * locale- and TZ-dependent functions, so results never depend on the
 * machine that runs the analysis; and the one exception, asked for: the
 * default zone of zone-less timestamps (--tz), whose named zones come from
 * the system zoneinfo through the C library. */
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iq.h"
#include "iqtime.h"

const char *iq_ts_how_name(enum iq_ts_how how)
{
	switch (how) {
	case IQ_TS_EXPLICIT: return "explicit";
	case IQ_TS_ASSUMED_UTC: return "assumed_utc";
	case IQ_TS_YEAR_INFERRED: return "year_inferred";
	case IQ_TS_BOOT_RELATIVE: return "boot_relative";
	case IQ_TS_INHERITED: return "inherited";
	case IQ_TS_SKEW_CORRECTED: return "skew_corrected";
	case IQ_TS_BOOT_ANCHORED: return "boot_anchored";
	case IQ_TS_ASSUMED_ZONE: return "assumed_zone";
	case IQ_TS_NONE: break;
	}
	return "none";
}

/* Howard Hinnant's days_from_civil algorithm. */
int64_t iq_days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

int64_t iq_time_make(int y, int mon, int day, int h, int mi, int s, long nsec)
{
	/* int64 nanoseconds reach from 1677-09-21 to 2262-04-11 */
	if (y < IQ_YEAR_MIN || y > IQ_YEAR_MAX)
		return IQ_TIME_NONE;
	int64_t days = iq_days_from_civil(y, (unsigned)mon, (unsigned)day);
	int64_t secs = days * 86400 + (int64_t)h * 3600 + (int64_t)mi * 60 + s;
	return secs * IQ_NS_PER_SEC + nsec;
}

void iq_time_split(int64_t t, int *y, int *mon, int *day, int *h, int *mi,
		   int *s, long *nsec)
{
	int64_t secs = t / IQ_NS_PER_SEC;
	int64_t ns = t % IQ_NS_PER_SEC;
	if (ns < 0) {
		ns += IQ_NS_PER_SEC;
		secs--;
	}
	int64_t days = secs / 86400;
	int64_t rem = secs % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	/* civil_from_days */
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t yy = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned dd = doy - (153 * mp + 2) / 5 + 1;
	unsigned mm = mp < 10 ? mp + 3 : mp - 9;
	yy += mm <= 2;
	if (y) *y = (int)yy;
	if (mon) *mon = (int)mm;
	if (day) *day = (int)dd;
	if (h) *h = (int)(rem / 3600);
	if (mi) *mi = (int)(rem % 3600 / 60);
	if (s) *s = (int)(rem % 60);
	if (nsec) *nsec = (long)ns;
}

/* Reads exactly k digits at s[*i]; -1 when they are not all digits. */
static int digits(const char *s, size_t n, size_t *i, int k)
{
	int v = 0;
	for (int j = 0; j < k; j++) {
		if (*i >= n || s[*i] < '0' || s[*i] > '9')
			return -1;
		v = v * 10 + (s[*i] - '0');
		(*i)++;
	}
	return v;
}

static int days_in_month(int y, int m)
{
	static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 29;
	return dm[m - 1];
}

/* iq_time_parse_iso; with any_year, a well-formed time outside the int64
 * range reads as IQ_TIME_NONE instead of failing. */
static int parse_iso(const char *s, size_t n, int64_t *out, size_t *used, int any_year)
{
	size_t i = 0;
	int y = digits(s, n, &i, 4);
	if (y < 0 || i >= n || s[i++] != '-')
		return -1;
	int mon = digits(s, n, &i, 2);
	if (mon < 1 || mon > 12 || i >= n || s[i++] != '-')
		return -1;
	int day = digits(s, n, &i, 2);
	if (day < 1 || day > days_in_month(y, mon))
		return -1;
	if (i >= n || (s[i] != 'T' && s[i] != 't' && s[i] != ' '))
		return -1;
	i++;
	int h = digits(s, n, &i, 2);
	if (h < 0 || h > 23 || i >= n || s[i++] != ':')
		return -1;
	int mi = digits(s, n, &i, 2);
	if (mi < 0 || mi > 59 || i >= n || s[i++] != ':')
		return -1;
	int sec = digits(s, n, &i, 2);
	if (sec < 0 || sec > 60)
		return -1;
	if (sec == 60)
		sec = 59; /* a leap second is kept inside its minute */
	long nsec = 0;
	if (i < n && (s[i] == '.' || s[i] == ',') && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9') {
		i++;
		long scale = 100000000L;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			nsec += (s[i] - '0') * scale;
			scale /= 10;
			i++;
		}
	}
	int zoned = 0;
	long off = 0;
	if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
		zoned = 1;
		i++;
	} else if (i < n && (s[i] == '+' || s[i] == '-')) {
		int sign = s[i] == '-' ? -1 : 1;
		size_t j = i + 1;
		int oh = digits(s, n, &j, 2);
		if (oh >= 0 && oh <= 23) {
			int om = 0;
			if (j < n && s[j] == ':') {
				j++;
				om = digits(s, n, &j, 2);
			} else if (j + 1 < n && s[j] >= '0' && s[j] <= '9') {
				om = digits(s, n, &j, 2);
			}
			if (om >= 0 && om <= 59) {
				zoned = 1;
				off = sign * (oh * 3600L + om * 60L);
				i = j;
			}
		}
	}
	if (y < IQ_YEAR_MIN || y > IQ_YEAR_MAX) {
		if (!any_year)
			return -1;
		*out = IQ_TIME_NONE;
	} else {
		*out = iq_time_make(y, mon, day, h, mi, sec, nsec) - (int64_t)off * IQ_NS_PER_SEC;
	}
	if (used)
		*used = i;
	return zoned;
}

int iq_time_parse_iso(const char *s, size_t n, int64_t *out, size_t *used)
{
	return parse_iso(s, n, out, used, 0);
}

int iq_time_parse_iso_any(const char *s, size_t n, int64_t *out, size_t *used)
{
	return parse_iso(s, n, out, used, 1);
}

int64_t iq_time_parse_rfc1123(const char *s, size_t n)
{
	if (n < 27 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
	    s[19] != ':' || s[22] != ':' || s[25] != ' ')
		return IQ_TIME_NONE;
	int v[5];
	static const size_t at[5] = {5, 12, 17, 20, 23};
	for (int k = 0; k < 5; k++) {
		size_t i = at[k];
		v[k] = digits(s, n, &i, k == 1 ? 4 : 2);
		if (v[k] < 0)
			return IQ_TIME_NONE;
	}
	int mon = iq_month_from_abbr(s + 8);
	if (!mon || v[0] < 1 || v[0] > 31 || v[2] > 23 || v[3] > 59 || v[4] > 60)
		return IQ_TIME_NONE;
	long off = 0;
	const char *z = s + 26;
	size_t zn = n - 26, j = 1;
	if (zn == 5 && (z[0] == '+' || z[0] == '-')) {
		int hh = digits(z, zn, &j, 2), mm = digits(z, zn, &j, 2);
		if (hh < 0 || mm < 0)
			return IQ_TIME_NONE;
		off = (z[0] == '-' ? -1 : 1) * (hh * 3600L + mm * 60L);
	} else if (!((zn == 3 && (memcmp(z, "UTC", 3) == 0 || memcmp(z, "GMT", 3) == 0)) ||
		     (zn == 1 && z[0] == 'Z'))) {
		return IQ_TIME_NONE;
	}
	if (v[1] < IQ_YEAR_MIN || v[1] > IQ_YEAR_MAX || v[0] > days_in_month(v[1], mon))
		return IQ_TIME_NONE;
	int64_t r = iq_time_make(v[1], mon, v[0], v[2], v[3], v[4] == 60 ? 59 : v[4], 0);
	return r - off * IQ_NS_PER_SEC;
}

int iq_month_from_abbr(const char *s)
{
	static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	for (int m = 0; m < 12; m++)
		if (strncmp(s, names + 3 * m, 3) == 0)
			return m + 1;
	return 0;
}

int64_t iq_yearless_in(const struct iq_yearless *d, int y)
{
	if (d->mon < 1 || d->mon > 12 || d->day < 1 || y < IQ_YEAR_MIN || y > IQ_YEAR_MAX ||
	    d->day > days_in_month(y, d->mon))
		return IQ_TIME_NONE;
	return iq_time_make(y, d->mon, d->day, d->h, d->mi, d->s, d->ns);
}

static int year_of(int64_t t)
{
	int y;
	iq_time_split(t, &y, NULL, NULL, NULL, NULL, NULL, NULL);
	return y;
}

/* d at or after prev - grace, as early as can be: prev's year, else the
 * next year in which d exists. */
static int64_t forwards(const struct iq_yearless *d, int64_t prev)
{
	int py = year_of(prev);
	for (int y = py; y <= py + 4; y++) {
		int64_t t = iq_yearless_in(d, y);
		if (t != IQ_TIME_NONE && t >= prev - IQ_YEAR_GRACE)
			return t;
	}
	return IQ_TIME_NONE;
}

/* d at or before ref + grace, as late as can be. */
static int64_t backwards(const struct iq_yearless *d, int64_t ref)
{
	int ry = year_of(ref);
	for (int y = ry + 1; y >= ry - 4; y--) {
		int64_t t = iq_yearless_in(d, y);
		if (t != IQ_TIME_NONE && t <= ref + IQ_YEAR_GRACE)
			return t;
	}
	return IQ_TIME_NONE;
}

void iq_years_init(struct iq_years *y, int64_t limit)
{
	y->limit = limit;
	y->prev = IQ_TIME_NONE;
	y->first_year = 0;
}

void iq_years_seen(struct iq_years *y, int64_t t)
{
	if (t == IQ_TIME_NONE)
		return;
	y->prev = t;
	y->first_year = 0;
	/* the text says the file ran past its date: the text wins */
	if (y->limit != IQ_TIME_NONE && t > y->limit + IQ_YEAR_GRACE)
		y->limit = IQ_TIME_NONE;
}

void iq_years_limit(struct iq_years *y, int64_t t)
{
	if (t != IQ_TIME_NONE)
		y->limit = t;
}

int64_t iq_years_place(struct iq_years *y, const struct iq_yearless *d)
{
	int64_t t = IQ_TIME_NONE;
	if (y->prev != IQ_TIME_NONE) {
		t = forwards(d, y->prev);
		/* read forwards past the file's date: the run was not in
		 * order after all; the date still may not lie after it */
		if (y->limit != IQ_TIME_NONE && t != IQ_TIME_NONE &&
		    t > y->limit + IQ_YEAR_GRACE)
			t = backwards(d, y->limit);
	} else if (y->first_year) {
		t = iq_yearless_in(d, y->first_year);
		y->first_year = 0;
	}
	if (t == IQ_TIME_NONE && y->prev == IQ_TIME_NONE && y->limit != IQ_TIME_NONE)
		t = backwards(d, y->limit);
	if (t != IQ_TIME_NONE)
		y->prev = t;
	return t;
}

/* The scan runs in a shadow calendar from 2000 on, where Feb 29 of a
 * common year would count as a crossing: it is taken as Feb 28 there. */
void iq_years_scan_add(struct iq_years_scan *sc, const struct iq_yearless *d)
{
	struct iq_yearless v = *d;
	if (v.mon == 2 && v.day == 29)
		v.day = 28;
	int64_t t = sc->n ? forwards(&v, sc->prev) : iq_yearless_in(&v, 2000);
	if (t == IQ_TIME_NONE)
		return;  /* not a date (day 31 of a 30-day month) */
	sc->prev = t;
	sc->last = *d;
	sc->n++;
}

int iq_years_scan_first(const struct iq_years_scan *sc, int64_t ref)
{
	if (!sc->n || ref == IQ_TIME_NONE)
		return 0;
	int64_t t = backwards(&sc->last, ref);
	if (t == IQ_TIME_NONE) {
		/* a last date that exists in no year near ref (Feb 29): its
		 * shadow stand-in */
		struct iq_yearless v = sc->last;
		v.day = v.mon == 2 && v.day == 29 ? 28 : v.day;
		t = backwards(&v, ref);
		if (t == IQ_TIME_NONE)
			return 0;
	}
	int y = year_of(t) - (year_of(sc->prev) - 2000);
	return y >= IQ_YEAR_MIN && y <= IQ_YEAR_MAX ? y : 0;
}

char *iq_time_fmt_ms(int64_t t, char *out)
{
	if (t == IQ_TIME_NONE) {
		out[0] = '\0';
		return out;
	}
	int y, mon, d, h, mi, s;
	long ns;
	iq_time_split(t, &y, &mon, &d, &h, &mi, &s, &ns);
	snprintf(out, IQ_TIME_BUF, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, mon, d, h,
		 mi, s, (int)(ns / 1000000));
	return out;
}

int iq_time_parse_arg(const char *s, int64_t *out)
{
	size_t n = strlen(s);
	size_t used;
	if (iq_time_parse_iso(s, n, out, &used) >= 0 && used == n)
		return 0;
	if (n == 10) {
		char tmp[32];
		snprintf(tmp, sizeof tmp, "%sT00:00:00Z", s);
		if (iq_time_parse_iso(tmp, strlen(tmp), out, &used) >= 0)
			return 0;
	}
	return -1;
}

/* The default zone: UTC, a fixed offset, or a zoneinfo name. */
enum zkind { Z_UTC, Z_FIXED, Z_NAMED };

#define ZCACHE 256
#define ZSLOT (15 * 60)   /* zones change offset on quarter hours at most */

static struct {
	enum zkind kind;
	long off;                 /* Z_FIXED: seconds east of UTC */
	char name[128];           /* as given (Z_NAMED: the zoneinfo name) */
	struct {
		int64_t slot;     /* wall seconds / ZSLOT; INT64_MIN empty */
		long off;
	} cache[ZCACHE];
} zone = {.kind = Z_UTC, .name = "UTC"};

/* "+03:00", "-0530", "+3", "-03", after an optional "UTC"/"GMT": seconds
 * east of UTC into *off; -1 when spec is not one. */
static int fixed_offset(const char *s, long *off)
{
	if (!strncmp(s, "UTC", 3) || !strncmp(s, "GMT", 3))
		s += 3;
	if (*s != '+' && *s != '-')
		return -1;
	int sign = *s++ == '-' ? -1 : 1;
	int h = 0, m = 0, nd = 0;
	while (*s >= '0' && *s <= '9' && nd < 2) {
		h = h * 10 + (*s++ - '0');
		nd++;
	}
	if (!nd)
		return -1;
	if (*s == ':')
		s++;
	if (*s) {
		if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' || s[2])
			return -1;
		m = (s[0] - '0') * 10 + (s[1] - '0');
	}
	if (h > 14 || m > 59)
		return -1;
	*off = sign * (h * 3600L + m * 60L);
	return 0;
}

/* A zoneinfo name that names a TZif file under the zoneinfo directory. */
static int zoneinfo_has(const char *name)
{
	if (!*name || name[0] == '/' || strstr(name, "..") || strlen(name) > 100)
		return 0;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		      *c == '/' || *c == '_' || *c == '-' || *c == '+'))
			return 0;
	const char *dir = getenv("TZDIR");
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "/usr/share/zoneinfo", name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	char magic[4];
	int ok = fread(magic, 1, 4, f) == 4 && memcmp(magic, "TZif", 4) == 0;
	fclose(f);
	return ok;
}

int iq_time_set_default_zone(const char *spec, struct iq_diag *d)
{
	long off = 0;
	if (!spec || !*spec || !strcmp(spec, "UTC") || !strcmp(spec, "Z") || !strcmp(spec, "GMT") ||
	    !strcmp(spec, "Etc/UTC")) {
		zone.kind = Z_UTC;
		snprintf(zone.name, sizeof zone.name, "UTC");
	} else if (fixed_offset(spec, &off) == 0) {
		zone.kind = off ? Z_FIXED : Z_UTC;
		zone.off = off;
		if (off)
			snprintf(zone.name, sizeof zone.name, "%c%02ld:%02ld", off < 0 ? '-' : '+',
				 labs(off) / 3600, labs(off) % 3600 / 60);
		else
			snprintf(zone.name, sizeof zone.name, "UTC");
	} else if (zoneinfo_has(spec)) {
		zone.kind = Z_NAMED;
		snprintf(zone.name, sizeof zone.name, "%s", spec);
	} else {
		return iq_diag_set(d, IQ_ERR_USAGE, "unknown time zone '%s' (give UTC, an offset such as "
				   "+03:00, or a zone name such as Europe/Istanbul)", spec);
	}
	for (int i = 0; i < ZCACHE; i++)
		zone.cache[i].slot = INT64_MIN;
	return 0;
}

const char *iq_time_default_zone(void)
{
	return zone.name;
}

static pthread_mutex_t zone_mu = PTHREAD_MUTEX_INITIALIZER;

/* The offset east of UTC of the named zone at wall-clock time wall (whole
 * seconds read as UTC), with TZ set to the zone only for the call. */
static long named_offset(int64_t wall)
{
	char *old = getenv("TZ");
	char *keep = old ? iq_xstrdup(old) : NULL;
	setenv("TZ", zone.name, 1);
	tzset();
	int y, mon, day, h, mi, sec;
	iq_time_split(wall * IQ_NS_PER_SEC, &y, &mon, &day, &h, &mi, &sec, NULL);
	struct tm tm = {.tm_year = y - 1900, .tm_mon = mon - 1, .tm_mday = day,
			.tm_hour = h, .tm_min = mi, .tm_sec = sec, .tm_isdst = -1};
	time_t t = mktime(&tm);
	if (keep) {
		setenv("TZ", keep, 1);
		free(keep);
	} else {
		unsetenv("TZ");
	}
	tzset();
	return t == (time_t)-1 ? 0 : (long)(wall - (int64_t)t);
}

int64_t iq_time_from_local(int64_t wall)
{
	if (wall == IQ_TIME_NONE || zone.kind == Z_UTC)
		return wall;
	if (zone.kind == Z_FIXED)
		return wall - (int64_t)zone.off * IQ_NS_PER_SEC;
	int64_t secs = wall / IQ_NS_PER_SEC - (wall % IQ_NS_PER_SEC < 0);
	int64_t slot = secs / ZSLOT - (secs % ZSLOT < 0);
	unsigned i = (unsigned)((uint64_t)slot % ZCACHE);
	/* parser threads share the cache and the TZ swap of named_offset */
	pthread_mutex_lock(&zone_mu);
	if (zone.cache[i].slot != slot) {
		zone.cache[i].slot = slot;
		zone.cache[i].off = named_offset(secs);
	}
	long off = zone.cache[i].off;
	pthread_mutex_unlock(&zone_mu);
	return wall - (int64_t)off * IQ_NS_PER_SEC;
}

enum iq_ts_how iq_time_local(int64_t *t)
{
	*t = iq_time_from_local(*t);
	return zone.kind == Z_UTC ? IQ_TS_ASSUMED_UTC : IQ_TS_ASSUMED_ZONE;
}
