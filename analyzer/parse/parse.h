/* parse.h: the contract between input formats and the rest of inquest.
 *
 * A format is one .c file in parse/ and one row in formats.def. It sniffs a
 * file from its first bytes, then is fed the file line by line and hands
 * out records through a sink. Record strings point into the current line or
 * the parser's own buffers and are valid during the sink call only; the
 * store copies them. A parser never writes SQL. */
#ifndef IQ_PARSE_H
#define IQ_PARSE_H

#include <math.h>
#include <stdint.h>
#include <sys/types.h>

#include "../core/iq.h"
#include "../core/iqtime.h"

/* What a record is; decides its typed table. */
enum iq_kind {
	IQ_KIND_LOG = 0,   /* a line (or joined lines) of a program's log */
	IQ_KIND_EVENT,     /* a Kubernetes event */
	IQ_KIND_HTTP,      /* one request in a load balancer's access log */
	IQ_KIND_GPU,       /* one GPU memory/utilisation sample */
	IQ_KIND_KERNEL,    /* a kernel log message */
	IQ_KIND_POD,       /* one container's status in a pod (kubectl get pods) */
	IQ_KIND_CONFIG,    /* one setting from a config, manifest or command line */
};

const char *iq_kind_name(enum iq_kind k);

/* Who a record is about. Empty slices mean "unknown here"; the file's own
 * identity (from its path in the bundle) fills the gaps. */
struct iq_ident {
	struct iq_str node;
	struct iq_str ns;        /* Kubernetes namespace */
	struct iq_str pod;
	struct iq_str container;
	struct iq_str pod_uid;
	struct iq_str container_id;
	int restart;             /* container restart number, -1 unknown */
};

#define IQ_MAX_UPSTREAMS 8

struct iq_http {
	struct iq_str client;           /* remote address */
	struct iq_str method, path, proto, host, user_agent, request_id;
	int status;                     /* HTTP status to the client, 0 unknown */
	int64_t bytes_sent;             /* -1 unknown */
	double duration_s;              /* request time, NAN unknown */
	/* One element per upstream attempt (ingress-nginx writes retries as
	 * "a:8000, b:8000" with statuses "502, 200"). */
	int n_upstreams;
	struct iq_str upstream_addr[IQ_MAX_UPSTREAMS];
	int upstream_status[IQ_MAX_UPSTREAMS];   /* 0 unknown */
	double upstream_time_s[IQ_MAX_UPSTREAMS]; /* NAN unknown */
	struct iq_str upstream_name;    /* ingress-nginx proxy_upstream_name */
};

struct iq_gpu {
	int index;                      /* -1 unknown */
	struct iq_str uuid, pci_bus, name;
	double mem_used_mib, mem_total_mib, mem_free_mib; /* NAN unknown */
	double util_gpu_pct, util_mem_pct;                /* NAN unknown */
	double temp_c, power_w;                           /* NAN unknown */
};

struct iq_event {
	struct iq_str type;             /* Normal, Warning */
	struct iq_str reason;           /* BackOff, Killing, OOMKilling, ... */
	struct iq_str message;
	struct iq_str object_kind, object_name, object_ns;
	struct iq_str source;           /* reporting component */
	struct iq_str host;             /* reporting node */
	long count;                     /* occurrences coalesced, >= 1 */
	int64_t first_ts, last_ts;      /* IQ_TIME_NONE unknown */
	/* metadata.creationTimestamp: when the API server stored the event,
	 * on the reference clock, while first_ts is the reporter's (a
	 * kubelet's: its node's clock); IQ_TIME_NONE unknown */
	int64_t created_ts;
};

struct iq_kernel {
	struct iq_str host;             /* syslog hostname, if any */
	struct iq_str facility;         /* "kernel", program name, ... */
	double boot_s;                  /* seconds since boot; NAN unknown */
};

/* A container's status as Kubernetes reports it (core/v1 ContainerStatus
 * with its pod): one record per container (init containers included). */
struct iq_pod {
	struct iq_str ns, name, uid, node, pod_ip, phase;
	struct iq_str container, container_id, image;
	int restart_count;              /* -1 unknown */
	int ready;                      /* 1, 0, -1 unknown */
	struct iq_str state;            /* running, waiting, terminated */
	struct iq_str reason;           /* CrashLoopBackOff, Error, OOMKilled... */
	int exit_code;                  /* -1 unknown */
	int64_t started_at, finished_at; /* IQ_TIME_NONE unknown */
	/* lastState.terminated: how the previous instance ended */
	struct iq_str last_reason;
	int last_exit_code;             /* -1 unknown */
	int64_t last_started_at, last_finished_at;
	/* the pod's Ready condition: since when it has been True (its
	 * lastTransitionTime); IQ_TIME_NONE when not ready or not said */
	int64_t ready_since;
};

/* One setting that bears on GPU memory: a serving engine's argument, an
 * environment variable, a batching limit, an autoscaler metric. key is
 * normalised (lower case, '-' as '_', no leading dashes: "max_num_seqs",
 * "gpu_memory_utilization", "pytorch_cuda_alloc_conf", "max_batch_size",
 * "max_queue_delay_microseconds", "hpa_metric", "nvidia.com/gpu"); value as
 * written. */
struct iq_config {
	struct iq_str scope;            /* what it belongs to: pod, deployment, model */
	struct iq_str key, value;
	struct iq_str source;           /* "container-args", "env", "triton-config",
					   "hpa", "engine-log", "resources" */
};

/* A verbatim piece of the file that says what a structured record says
 * (a JSON event's "message" member, a container status's "reason" line,
 * a sample's own line): its line and text, a slice valid during the sink
 * call like every other, and what it shows ("message", "reason",
 * "last_reason", ...; a literal). Evidence quotes it and keeps the
 * record's text, a restatement, as its summary. A record whose text
 * stands at its own line has none. */
struct iq_quote {
	long line;
	struct iq_str text;
	const char *what;
};

#define IQ_MAX_QUOTES 4

struct iq_record {
	enum iq_kind kind;
	long line;                      /* first line in the file, 1-based (but
					   see first_line) */
	long nlines;                    /* lines the record spans (>= 1), the
					   other stream's lines between included */
	int64_t ts;                     /* UTC ns, IQ_TIME_NONE if none */
	enum iq_ts_how ts_how;
	struct iq_str ts_raw;           /* the timestamp as written */
	struct iq_str stream;           /* stdout / stderr, or empty */
	struct iq_str severity;         /* as written (ERROR, W, warning...) */
	struct iq_str text;             /* the message: what signals match */
	struct iq_ident id;
	union {
		struct iq_http http;
		struct iq_gpu gpu;
		struct iq_event event;
		struct iq_kernel kernel;
		struct iq_pod pod;
		struct iq_config config;
	} u;
	/* Where the record starts when that is not `line`: a Python traceback
	 * is one record placed at its (first) exception line, the line that
	 * names the error and that evidence cites, while its lines run from
	 * first_line ("Traceback (most recent call last):") for nlines. 0 when
	 * the record starts at line. */
	long first_line;
	struct iq_quote quote[IQ_MAX_QUOTES];
	int nquotes;
};

/* Clears r and sets the "unknown" markers (NAN, -1, IQ_TIME_NONE). */
void iq_record_init(struct iq_record *r, enum iq_kind kind);

/* Where records go. record() returns 0, IQ_RECORD_DROPPED when it left
 * the record out (outside the --since/--until scope, say) after accounting
 * for its lines through the parse context's sink.skip (which, during
 * iq_parse_run, is the driver's counting sink), or a negative iq_err to
 * stop the file. skip() accounts for count lines from first_line on that yield no
 * record, with a short fixed reason ("blank", "header", "malformed JSON",
 * ...), a string that outlives the file (a literal); text is one example
 * line (may be NULL). */
#define IQ_RECORD_DROPPED 1

struct iq_sink {
	int (*record)(void *u, const struct iq_record *r);
	void (*skip)(void *u, long first_line, long count, const char *reason,
		     const char *text, size_t n);
	void *u;
};

/* What a parser knows of the file it reads. */
struct iq_parse_ctx {
	const char *path;         /* stable path inside the bundle */
	int64_t mtime;            /* last write of the file, UTC ns; IQ_TIME_NONE */
	struct iq_ident file_id;  /* identity from the path (may be empty) */
	struct iq_sink sink;
	/* The years of the file's yearless dates (core/iqtime.h), owned by
	 * iq_parse_run; NULL outside it. Parsers go through iq_parse_yearless
	 * and iq_parse_year_seen/_limit rather than touch it. */
	struct iq_years *years;
};

/* What a line says of dates, for a format's dates() hook. */
enum iq_dates {
	IQ_DATES_NONE = 0,
	IQ_DATES_YEARLESS,   /* a date without a year, in *d */
	IQ_DATES_YEAR,       /* a time with its year written, in *t (UTC ns) */
	IQ_DATES_LIMIT,      /* an end of the file's times the text gives, *t */
};

/* The time of a yearless date d of the file (wall clock read as UTC, as
 * iq_time_make gives it), by the one rule of iq_years: IQ_TIME_NONE when
 * no year can be had. Call it for each such date in line order; outside
 * iq_parse_run the file's mtime alone bounds it. */
int64_t iq_parse_yearless(const struct iq_parse_ctx *ctx, const struct iq_yearless *d);
/* A time of the file read with its year (iq_years_seen). */
void iq_parse_year_seen(const struct iq_parse_ctx *ctx, int64_t t);
/* An end the text gives to the file's times (iq_years_limit). */
void iq_parse_year_limit(const struct iq_parse_ctx *ctx, int64_t t);

/* One input format. The framework callocs state_size bytes for each file,
 * calls begin, then line for every line (without its line end; a CR before
 * the LF is removed), then end exactly once (also after an error), which
 * must flush pending records and free what the parser allocated. */
struct iq_format {
	const char *name;          /* "docker-json", "cri", ...: stable id */
	const char *desc;          /* one line for `inquest sniff` and help */
	/* 0..100: how sure the format is that head (the first n bytes of the
	 * file, possibly cut mid-line) is its own; writes the reason into why. */
	int (*sniff)(const char *path, const char *head, size_t n, char *why,
		     size_t whysz);
	size_t state_size;
	int (*begin)(void *st, const struct iq_parse_ctx *ctx);
	int (*line)(void *st, const struct iq_parse_ctx *ctx, long lineno,
		    const char *s, size_t n);
	int (*end)(void *st, const struct iq_parse_ctx *ctx);
	/* Optional, for formats whose dates may lack a year: what line s (as
	 * line() gets it) says of dates, without state; must agree with what
	 * line() passes to iq_parse_yearless / _year_seen / _year_limit. With
	 * it the driver holds the file's lines back until the year of its
	 * first yearless date is settled: at a line with a year, else at the
	 * file's end (or IQ_YEAR_LOOKAHEAD bytes) against the file's date, so
	 * that a run crossing New Year is placed before that date. */
	enum iq_dates (*dates)(const char *s, size_t n, struct iq_yearless *d, int64_t *t);
};

#define IQ_YEAR_LOOKAHEAD (16u << 20)  /* bytes held back at most */

/* The registry (formats.def). */
size_t iq_format_count(void);
const struct iq_format *iq_format_at(size_t i);
const struct iq_format *iq_format_find(const char *name);

/* Picks the format of a file from its path and first bytes. Returns the
 * format, or NULL for unknown/binary; writes the reason into why either
 * way. */
const struct iq_format *iq_sniff(const char *path, const char *head, size_t n,
				 char *why, size_t whysz);

/* Identity from a kubelet/bundle path: /var/log/pods/<ns>_<pod>_<uid>/<c>/
 * <n>.log, /var/log/containers/<pod>_<ns>_<c>-<id>.log, and the node from a
 * "nodes/<node>/" component (or the component before "var/log/"). Slices
 * point into path. */
void iq_path_ident(const char *path, struct iq_ident *id);

/* Helpers shared by parsers (parse/util.c). */
/* The level word a log message opens with, after up to three vLLM-style
 * "(Proc pid=N) " tags: CRITICAL, FATAL, ERROR, WARNING, WARN, INFO, DEBUG,
 * TRACE followed by a space or ':' (vLLM, uvicorn, Python logging), or a
 * klog/Triton letter ("E0501 "). Empty when there is none; the slice points
 * into s. */
struct iq_str iq_log_severity(const char *s, size_t n);

/* The time of a JSON log line ({"ts":"2025-06-27T03:54:33.118Z", ...}):
 * the first of the keys ts, time, timestamp, @timestamp, datetime,
 * asctime, t near the line's start holding an ISO 8601 string or a number
 * of (milli/micro/nano)seconds since the epoch. Returns 1 (zone given) or
 * 0 (none: the time is UTC wall clock) with *ts and *raw (the value's
 * text, inside s), or -1 when there is none. */
int iq_json_line_time(const char *s, size_t n, int64_t *ts, struct iq_str *raw);
/* Does raw (JSON text as a file holds it) hold the decoded string dec
 * (its first 64 bytes) as plain JSON escaping writes it: quote, backslash
 * and control characters escaped, nothing else? Then a reader of the file
 * finds the decoded text there; when the writer escaped more (moby's
 * \u003c for '<') or dec was joined from pieces, it does not. */
int iq_json_plain_in(const char *dec, size_t dn, const char *raw, size_t rn);
/* Parses a size such as "2.00 GiB", "512MiB", "1234 bytes", "1.5 GB" (a bare
 * number is bytes) into
 * bytes; returns -1 when s is not a size or not one an int64 holds. */
int64_t iq_parse_size(const char *s, size_t n);
/* The month of a month name at the start of s followed by a space or the
 * end: English abbreviations in any case ("May", "MAY") and the %b names
 * of French, German, Spanish, Italian and Portuguese ("ao\xc3\xbbt", "Okt",
 * "dic"). Returns 1..12 with the name's length in *len, or 0. */
int iq_month_word(const char *s, size_t n, size_t *len);
/* For sniffers: the next line of head from *pos (its CR and LF removed)
 * into *line, advancing *pos. Returns 0 at the end, and at a last line the
 * head cut short unless take_cut (a file of one line). */
int iq_head_line(const char *head, size_t n, size_t *pos, int take_cut, struct iq_str *line);
/* Reads the C library's ctime date at the start of s, as dmesg -T and
 * Apache httpd write it: "Tue May  7 12:00:00 2024", with an optional
 * fraction after the seconds ("Fri Sep 09 10:42:29.902022 2011"). Stores
 * the time (wall clock, as UTC) and returns the bytes read, or 0 when s
 * does not start with one or the date does not exist. */
size_t iq_parse_ctime(const char *s, size_t n, int64_t *out);
/* The Common Log Format's time, "01/May/2024:12:00:00 +0300" (26 bytes at
 * p, n available), into UTC ns in *out: 0, or -1 when p holds none. */
int iq_parse_clf(const char *p, size_t n, int64_t *out);
/* Decodes a JSON string body (between the quotes, escapes included) into
 * out; invalid escapes are kept as written. Returns 0 or IQ_ERR_NOMEM. */
int iq_json_unescape(struct iq_buf *out, const char *s, size_t n);

/* Line accounting of one file: read = parsed + skipped. */
struct iq_file_stats {
	long lines_read;
	long lines_parsed;    /* lines that went into records */
	long lines_skipped;   /* lines accounted for by skip() */
	long records;
	long cut_lines;       /* lines longer than the cap, cut */
	long nul_bytes;       /* NUL bytes dropped (zeroed blocks) */
	long nul_lines;       /* lines that held some */
};

/* Reads the next bytes of the input; returns the count, 0 at the end, or
 * a negative iq_err with d->msg set. */
typedef ssize_t (*iq_read_fn)(void *src, void *buf, size_t n, struct iq_diag *d);

#define IQ_HEAD_BYTES 65536          /* what sniffing sees */
#define IQ_MAX_LINE (8u << 20)       /* longer lines are cut */

/* Runs format f over one input: head (n bytes already read, may be 0)
 * followed by what rd returns, split into lines, through begin/line/end.
 * ctx->sink receives the records; the driver counts lines into *st and
 * accounts for lines a parser neither parsed nor skipped ("unaccounted").
 * Returns 0, or the first error (read or sink) with d->msg set; records
 * before the error stand. */
int iq_parse_run(const struct iq_format *f, struct iq_parse_ctx *ctx,
		 const char *head, size_t n, iq_read_fn rd, void *src,
		 struct iq_file_stats *st, struct iq_diag *d);

#endif
