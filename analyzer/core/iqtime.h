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

/* The year to give a date that has none (month mon, 1..12), seen in a file
 * whose last write was at ref (UTC ns): ref's year, or the year before when
 * the month lies after ref's month (a December line in a January file). */
int iq_year_infer(int mon, int64_t ref);

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
