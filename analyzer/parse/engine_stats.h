/* engine_stats.h: serving-engine statistics (requests running, waiting,
 * swapped; KV-cache usage) under one name each across vLLM versions,
 * SGLang and TGI, for the parsers that read them from metric dumps. */
#ifndef IQ_ENGINE_STATS_H
#define IQ_ENGINE_STATS_H

#include <math.h>

#include "parse.h"

enum iq_es {
	IQ_ES_RUNNING,        /* requests in the running batch */
	IQ_ES_WAITING,        /* queued requests ("Pending" before vLLM V1) */
	IQ_ES_SWAPPED,        /* requests swapped to CPU (vLLM V0) */
	IQ_ES_KV_USAGE,       /* GPU KV-cache usage, percent */
	IQ_ES_CPU_KV_USAGE,   /* CPU KV-cache usage, percent (vLLM V0) */
	IQ_ES_PREEMPTIONS,    /* preemptions so far (a counter) */
	IQ_ES_COUNT
};

/* One engine's statistics at one time; NAN unknown. */
struct iq_es_values {
	double v[IQ_ES_COUNT];
};

/* The stable name of a statistic ("running", "kv_cache_usage_pct"). */
const char *iq_es_name(enum iq_es s);

/* Which statistic the Prometheus metric name (n bytes, not terminated) is,
 * in any of its spellings: vllm:num_requests_waiting, the older
 * vllm:gpu_cache_usage_perc and the newer vllm:kv_cache_usage_perc, the
 * same with '_' for ':', sglang:num_queue_reqs, tgi_queue_size, ...
 * Returns 1 and sets *stat, *scale (multiply the sample by it: fractions
 * become percent) and *engine ("vllm", "sglang", "tgi"; may be NULL), or
 * 0 for any other metric. */
int iq_es_of_metric(const char *name, size_t n, enum iq_es *stat, double *scale,
		    const char **engine);

/* Sets every value unknown. */
void iq_es_init(struct iq_es_values *v);

/* Appends the known values to b in the wording of vLLM V1's periodic
 * line, in its order: "Running: 20 reqs, Waiting: 23 reqs, GPU KV cache
 * usage: 98.4%" (Swapped after Running as in V0). 0 or IQ_ERR_NOMEM. */
int iq_es_render(struct iq_buf *b, const struct iq_es_values *v);

#endif
