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
	long gpu_samples;
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
};

/* Helpers (util.c). */
int det_prep(struct det *x, const char *sql, sqlite3_stmt **q);
json_t *det_time(sqlite3_stmt *q, int col);
json_t *det_time_ns(int64_t t);
json_t *det_text(sqlite3_stmt *q, int col);
/* Evidence object from the columns file, line, ts, text at col..col+3. */
json_t *det_evidence(sqlite3_stmt *q, int col);
/* Evidence of one record by id. */
json_t *det_evidence_of(struct det *x, int64_t record_id);
/* A detector parameter from the pack (signal id's "detector"."params"."key"),
 * or def. */
double det_param(struct det *x, const char *signal, const char *key, double def);
/* A list parameter (a number is a list of one): how many were written. */
size_t det_param_list(struct det *x, const char *signal, const char *key, double *out, size_t max);
/* The signal object {id, present, count, first, last, evidence}. */
json_t *det_signal(const char *id, long count, int64_t first, int64_t last, json_t *evidence);
/* Runs a query that returns one integer (or NULL -> def). */
int64_t det_scalar(struct det *x, const char *sql, int64_t def);

/* Detectors, in the order they run (each adds to x->pat and x->f). */
int det_oom(struct det *x);
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
int det_phases(struct det *x);
int det_verdict(struct det *x);
/* The verdict from the pack's rules alone (patterns without detectors). */
int det_verdict_rules(struct det *x);

#endif
