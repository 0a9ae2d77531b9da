/* iqtime.h: time inside inquest is UTC nanoseconds since the epoch in an
 * int64_t; these functions read the timestamp spellings of the inputs and
 * write RFC 3339. */
#ifndef IQ_IQTIME_H
#define IQ_IQTIME_H

#include <stddef.h>
#include <stdint.h>

#define IQ_TIME_NONE INT64_MIN
#define IQ_NS_PER_SEC 1000000000LL
#define IQ_TIME_BUF 48
/* Years whose times fit in int64 nanoseconds (with margin). */
#define IQ_YEAR_MIN 1678
#define IQ_YEAR_MAX 2261

/* How a record's UTC time was derived; stored beside it. */
enum iq_ts_how {
	IQ_TS_NONE = 0,        /* the record has no time */
	IQ_TS_EXPLICIT,        /* the text carried date, time and zone */
	IQ_TS_ASSUMED_UTC,     /* no zone in the text: taken as UTC */
	IQ_TS_YEAR_INFERRED,   /* no year in the text: inferred from the bundle */
	IQ_TS_BOOT_RELATIVE,   /* seconds since boot; no boot time known */
	IQ_TS_INHERITED,       /* no time of its own: the previous record's */
	IQ_TS_SKEW_CORRECTED,  /* moved by its node's estimated clock offset */
	IQ_TS_BOOT_ANCHORED,   /* seconds since boot + a boot time from the bundle */
	IQ_TS_ASSUMED_ZONE,    /* no zone in the text: taken in the --tz zone */
};

/* Stable lower-case name of a derivation ("explicit", "assumed_utc", ...). */
const char *iq_ts_how_name(enum iq_ts_how how);

/* Days since 1970-01-01 of a proleptic Gregorian date (month 1..12). */
int64_t iq_days_from_civil(int64_t y, unsigned m, unsigned d);

/* UTC nanoseconds of a broken-down UTC time, or IQ_TIME_NONE when the year
 * is outside IQ_YEAR_MIN..IQ_YEAR_MAX. Other fields are not range-checked
 * beyond what the caller did. */
int64_t iq_time_make(int y, int mon, int day, int h, int mi, int s, long nsec);

/* Splits t into its UTC calendar parts (any of the pointers may be NULL). */
void iq_time_split(int64_t t, int *y, int *mon, int *day, int *h, int *mi,
		   int *s, long *nsec);

/* Reads an RFC 3339 / ISO 8601 timestamp at the start of s (length n):
 * "2024-05-01T12:00:00Z", "...T12:00:00.123456789+02:00", "+0200", with 'T'
 * or ' ' between date and time, 0..9 fraction digits (',' accepted too).
 * On success stores the UTC time in *out, the number of bytes consumed in
 * *used (may be NULL) and returns 1 if a zone was present, 0 if not (the
 * time is then taken as UTC). Returns -1 when s does not start with one. */
int iq_time_parse_iso(const char *s, size_t n, int64_t *out, size_t *used);

/* iq_time_parse_iso, except that a well-formed timestamp whose year lies
 * outside IQ_YEAR_MIN..IQ_YEAR_MAX (Go's zero time "0001-01-01T00:00:00Z",
 * a clock set to 2300) is read too, with *out = IQ_TIME_NONE: the record
 * stays, without a time. */
int iq_time_parse_iso_any(const char *s, size_t n, int64_t *out, size_t *used);

/* The whole of s (length n) as RFC 1123 with a numeric zone, as kubectl
 * prints it ("Mon, 30 Nov 2026 14:12:03 +0000"; "UTC", "GMT" and "Z"
 * accepted for the zone): UTC ns, or IQ_TIME_NONE when s is not one or its
 * year is out of range (Go's zero time "Mon, 01 Jan 0001 ..."). */
int64_t iq_time_parse_rfc1123(const char *s, size_t n);

/* Month number 1..12 of an English three-letter abbreviation ("Jan"), or 0. */
int iq_month_from_abbr(const char *s);

/* A date and time of day written without a year: syslog "May  1
 * 12:00:00", klog "I0501 12:00:00.123456", journalctl short. */
struct iq_yearless {
	int mon, day, h, mi, s;   /* as written; mon 1..12 */
	long ns;
};

/* How far a time may lie past the file's date, or behind the time before
 * it, and still count as not past / not behind: zones (the wall clock of a
 * node read as UTC) and lines a little out of order. */
#define IQ_YEAR_GRACE (86400 * IQ_NS_PER_SEC)

/* The years of one file's yearless dates, by one rule:
 *  - dates are read forwards: one earlier than the time before it (by more
 *    than IQ_YEAR_GRACE) is in the next year (a run from Dec 3 to Jan 3);
 *  - a year written in the text wins (iq_years_seen): later dates are read
 *    forwards from that time, and a text running past the file's date
 *    voids that date;
 *  - no date is placed after the file's date (limit: the mtime, the
 *    bundle's collection time, or an end the text states, such as
 *    journalctl's "end at"), give or take IQ_YEAR_GRACE: a run that would
 *    go past it lies in the years before, and where it crosses New Year
 *    its earlier dates lie in the year before that (first_year, settled by
 *    looking ahead: iq_years_scan).
 * Times are wall clock read as UTC, as the parsers write them before
 * iq_time_from_local. The caller owns the struct; nothing to free. */
struct iq_years {
	int64_t limit;      /* the file's date; IQ_TIME_NONE unknown */
	int64_t prev;       /* the last time placed or read; IQ_TIME_NONE */
	int first_year;     /* the first date's year when prev is none; 0 */
};

/* Clears y: no time yet, limit as given (IQ_TIME_NONE for none). */
void iq_years_init(struct iq_years *y, int64_t limit);

/* A time read with its year (UTC ns): later dates go forwards from it; one
 * past the file's date (+ grace) voids that date. */
void iq_years_seen(struct iq_years *y, int64_t t);

/* An upper bound the text gives (journalctl's "end at"): it replaces the
 * file's date. */
void iq_years_limit(struct iq_years *y, int64_t t);

/* The time of d by the rule above, or IQ_TIME_NONE when no year can be
 * had (no time before it, no first_year, no limit) or d does not exist in
 * the year found (Feb 29). */
int64_t iq_years_place(struct iq_years *y, const struct iq_yearless *d);

/* d in year y (wall clock as UTC), IQ_TIME_NONE when it does not exist. */
int64_t iq_yearless_in(const struct iq_yearless *d, int y);

/* Looking ahead at a run of yearless dates (no year in the text among
 * them), in order: how many times the run crosses New Year, read forwards,
 * and its last date. Zero-initialise; add each date. */
struct iq_years_scan {
	long n;                    /* dates added */
	int64_t prev;              /* the last, placed from the year 2000 on */
	struct iq_yearless last;
};
void iq_years_scan_add(struct iq_years_scan *sc, const struct iq_yearless *d);

/* The year of the run's first date when its last date lies at or before
 * ref (a time with its year after the run, or the file's date), give or
 * take IQ_YEAR_GRACE; 0 when nothing was added or ref is IQ_TIME_NONE. */
int iq_years_scan_first(const struct iq_years_scan *sc, int64_t ref);

/* Writes "YYYY-MM-DDTHH:MM:SS.mmmZ" into out (at least IQ_TIME_BUF bytes) and
 * returns out; IQ_TIME_NONE gives "". */
char *iq_time_fmt_ms(int64_t t, char *out);

struct iq_diag;

/* The zone of timestamps written without one. They are UTC unless this is
 * set (the --tz option): spec is "UTC"/"Z"/"GMT", a fixed offset ("+03:00",
 * "-0530", "+3", "UTC+03:00"), or an IANA zone name ("Europe/Istanbul")
 * found in the system zoneinfo ($TZDIR, else /usr/share/zoneinfo); NULL or
 * "" resets to UTC. Named zones follow their DST rules through the C
 * library (TZ set only for the moment of a conversion, results cached per
 * quarter hour, under a mutex so that parser threads may convert at once);
 * set it before the parsers start. Returns 0, or IQ_ERR_USAGE with d->msg naming the
 * spec when it is none of these (the setting is then unchanged). */
int iq_time_set_default_zone(const char *spec, struct iq_diag *d);

/* The default zone as set ("UTC", "+03:00", "Europe/Istanbul"). */
const char *iq_time_default_zone(void);

/* UTC ns of wall, a wall-clock time written without a zone and read as if
 * it were UTC, in the default zone: wall itself for UTC. IQ_TIME_NONE
 * stays. A wall time a DST change skips or repeats takes the C library's
 * choice. */
int64_t iq_time_from_local(int64_t wall);

/* For parsers, where a timestamp had no zone: converts *t with
 * iq_time_from_local and returns how to mark it: IQ_TS_ASSUMED_UTC, or
 * IQ_TS_ASSUMED_ZONE when a zone was set. */
enum iq_ts_how iq_time_local(int64_t *t);

/* Parses "YYYY-MM-DDTHH:MM:SS[.fff][Z]" or a date alone, for command-line
 * options such as --since; 0 on success, -1 otherwise. */
int iq_time_parse_arg(const char *s, int64_t *out);

#endif
