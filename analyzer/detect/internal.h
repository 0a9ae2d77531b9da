/* internal.h: what the detectors share: the context of one pack's run,
 * query and JSON helpers, and the facts each detector leaves for the
 * verdict. Not for use outside detect/. */
#ifndef IQ_DETECT_INTERNAL_H
#define IQ_DETECT_INTERNAL_H

#include "detect.h"

#define NS(s) ((int64_t)(s) * IQ_NS_PER_SEC)

/* Facts the detectors establish, read by the verdict and the questions. */
struct det_facts {
	long oom_events;          /* CUDA OOM deaths */
	long oom_pods;            /* distinct pods with one */
	int64_t first_oom;        /* IQ_TIME_NONE when none */
	char first_pod[256], first_node[256];
	int cascade;              /* two or more pods died of CUDA OOM in turn */
	int load_shift_seen;      /* survivors' share rose after a death */
	int surge;                /* LB 5xx surge found */
	int64_t surge_start, surge_end;
	long lb_requests, lb_5xx;
	int sawtooth;             /* at least one GPU climbed to the top and dropped */
	double gpu_peak_ratio;    /* highest used/total seen, NAN without samples */
	long crashloop_pods;
	long host_oom_kills;      /* kernel/cgroup OOM kills and OOMKilled */
	long host_oom_on_oom_pods;/* of them, in serving containers that died */
	long host_oom_workers;    /* of them, in serving containers (vllm ...) */
	int flood;                /* ingress flood boundary present */
	int xid;                  /* NVIDIA Xid hardware faults seen */
	long container_logs;      /* log records from pod containers */
	long lb_pods;             /* pods the load balancer sends to */
	long gpu_samples;
};

/* One window of the surge detector (window_s of the pack). */
struct det_window {
	int64_t k;                /* ts / window */
	long total, fail, s500, s502, s503, s504, s429;
	int64_t first_ts, last_ts; /* the first and last failure (when fail) */
	int64_t first_id, last_id; /* their records */
};

/* A 10-second bucket (or a minute, for m429): requests served (or 429s). */
struct det_ten {
	int64_t k;
	long served;
};

/* What one pass over http_requests and http_upstreams gives (http.c). */
struct det_http {
	int64_t win_ns;
	struct det_window *win;   /* sorted by k; requests with a time */
	size_t nwin;
	struct det_ten *ten;      /* sorted by k */
	size_t nten;
	struct det_ten *m429;     /* 429s per minute, sorted by k */
	size_t n429;
	long null_ts_429;         /* 429s without a time */
	long requests, status_5xx_all, status_429_all, dropped_streams;
	char **addr;              /* upstream addresses (NULL: no address) */
	size_t naddr, addr_cap;
	int32_t null_addr;
	size_t ndeaths;
	long **shares;            /* per address: attempts before, after each death */
};

struct det {
	struct iq_store *s;
	sqlite3 *db;
	const struct iq_pack *pack;
	const char *pack_id;
	json_t *pat;              /* the pattern object being built */
	struct iq_diag *d;
	struct det_facts f;
	json_t *ooms;             /* oom_events array (borrowed from pat) */
	sqlite3_stmt *ev_q;       /* det_evidence's lookup, finalized with the run */
	struct det_http *http;    /* NULL until det_http_load */
};

/* Helpers (util.c). */
int det_prep(struct det *x, const char *sql, sqlite3_stmt **q);
json_t *det_time(sqlite3_stmt *q, int col);
/* A setting's value that says "not set" (None, null, empty, ...). */
int det_value_unset(const char *v);
/* The first setting of set (the settings array) with key that the
 * operator configured (not unset, not an engine default a dump printed). */
json_t *det_setting(json_t *set, const char *key);
/* A failed SQLite step while reading what: the error, set in x->d. */
int det_fail(struct det *x, const char *what);
json_t *det_time_ns(int64_t t);
json_t *det_text(sqlite3_stmt *q, int col);
/* A JSON string of t (invalid UTF-8 bytes become '?'), null for NULL. */
json_t *det_str(const char *t);
/* The evidence object {file, line, nlines, time, text[, summary]} of the
 * record whose columns file, line, ts, text, id stand at col..col+4 of q:
 * for a structured record the line and verbatim text of its quote named
 * what (its first quote when what is NULL or it has none so named) with
 * the record's text as the summary; else its own line, span and text.
 * The text is the first line, cut at 400 bytes with "…". NULL on a
 * database error. */
json_t *det_evidence(struct det *x, sqlite3_stmt *q, int col, const char *what);
/* The same for one record by id. */
json_t *det_evidence_what(struct det *x, int64_t record_id, const char *what);
json_t *det_evidence_of(struct det *x, int64_t record_id);
/* A detector parameter from the pack (signal id's "detector"."params"."key"),
 * or def. */
double det_param(struct det *x, const char *signal, const char *key, double def);
/* A parameter of the pack's item id in section ("conditions",
 * "questions"): its "params"."key", or def. */
double det_item_param(struct det *x, const char *section, const char *id, const char *key, double def);
/* A list parameter (a number is a list of one): how many were written. */
size_t det_param_list(struct det *x, const char *signal, const char *key, double *out, size_t max);
/* The signal object {id, present, count, first, last, evidence}. */
json_t *det_signal(const char *id, long count, int64_t first, int64_t last, json_t *evidence);
/* Runs a query that returns one integer (or NULL -> def). */
int64_t det_scalar(struct det *x, const char *sql, int64_t def);

/* A set of strings, each with its index in order of arrival (http.c). */
struct det_strs {
	char **s;
	size_t n, cap;
	uint32_t *slot, *hash;    /* open addressing: index + 1, 0 empty */
	size_t scap;
};
/* The index of s (copied when new, *is_new set). */
size_t det_strs_id(struct det_strs *t, const char *s, int *is_new);
/* The index of s, or SIZE_MAX when it is not in t. */
size_t det_strs_find(const struct det_strs *t, const char *s);
void det_strs_release(struct det_strs *t);

/* The pass over the load balancer's tables (http.c): deaths are the
 * times around which each address's attempts are counted, shift_s
 * before and after. Sets x->http (freed by det_http_free). Returns 0 or
 * IQ_ERR_DB. */
int det_http_load(struct det *x, const int64_t *deaths, size_t ndeaths, double shift_s);
void det_http_free(struct det_http *h);
/* Is addr the IP ip, alone or with a port? */
int det_addr_is_ip(const char *addr, const char *ip);
/* The cascade's deaths (cascade.c): the first CUDA OOM of each pod in
 * order, up to the first gap longer than the pack's max_gap_s; fills at
 * most max times and returns how many. */
size_t det_cascade_deaths(struct det *x, int64_t *times, size_t max);

/* Detectors, in the order they run (each adds to x->pat and x->f). */
int det_oom(struct det *x);
int det_http(struct det *x);
int det_crashloop(struct det *x);
int det_recovery(struct det *x);
int det_impact(struct det *x);
int det_surge(struct det *x);
int det_sawtooth(struct det *x);
int det_cascade(struct det *x);
int det_boundaries(struct det *x);
json_t *det_flood(struct det *x);
int det_conditions(struct det *x);
int det_questions(struct det *x);
int det_limits(struct det *x);
int det_phases(struct det *x);
int det_verdict(struct det *x);
/* The tie detector (tie.c): the pack's faults tied in time to worker
 * deaths on their node; adds the signal sig and x->pat's "ties". */
int det_tie(struct det *x, const struct iq_signal *sig);
/* The verdict from the pack's rules alone (patterns without detectors). */
int det_verdict_rules(struct det *x);

#endif
