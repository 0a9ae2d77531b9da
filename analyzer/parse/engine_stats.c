/* engine_stats.c: the serving engines' queue and KV-cache statistics under
 * one name each, whatever version wrote them. vLLM renamed its metrics
 * (vllm:gpu_cache_usage_perc -> vllm:kv_cache_usage_perc; its log line's
 * "Pending" became "Waiting"), SGLang and TGI spell the same gauges their
 * own way. Records carry them in the wording of vLLM V1's periodic line
 * ("Running: 20 reqs, Waiting: 23 reqs, GPU KV cache usage: 98.4%"), the
 * spelling the rule packs read. */
#include <string.h>

#include "engine_stats.h"

static const char *const stat_names[IQ_ES_COUNT] = {
	"running", "waiting", "swapped", "kv_cache_usage_pct", "cpu_kv_cache_usage_pct",
	"preemptions",
};

/* Metric names after the engine prefix ("vllm:" or "vllm_"), and what
 * they are. scale turns a fraction 0..1 into percent. */
static const struct {
	const char *prefix, *name;
	enum iq_es stat;
	double scale;
} metrics[] = {
	{"vllm", "num_requests_running", IQ_ES_RUNNING, 1},
	{"vllm", "num_requests_waiting", IQ_ES_WAITING, 1},
	{"vllm", "num_requests_pending", IQ_ES_WAITING, 1},
	{"vllm", "num_requests_swapped", IQ_ES_SWAPPED, 1},
	{"vllm", "kv_cache_usage_perc", IQ_ES_KV_USAGE, 100},
	{"vllm", "gpu_cache_usage_perc", IQ_ES_KV_USAGE, 100},
	{"vllm", "cpu_cache_usage_perc", IQ_ES_CPU_KV_USAGE, 100},
	{"vllm", "num_preemptions_total", IQ_ES_PREEMPTIONS, 1},
	{"vllm", "num_preemptions", IQ_ES_PREEMPTIONS, 1},
	{"sglang", "num_running_reqs", IQ_ES_RUNNING, 1},
	{"sglang", "num_queue_reqs", IQ_ES_WAITING, 1},
	{"sglang", "token_usage", IQ_ES_KV_USAGE, 100},
	{"tgi", "batch_current_size", IQ_ES_RUNNING, 1},
	{"tgi", "queue_size", IQ_ES_WAITING, 1},
};

const char *iq_es_name(enum iq_es s)
{
	return s >= 0 && s < IQ_ES_COUNT ? stat_names[s] : "";
}

int iq_es_of_metric(const char *name, size_t n, enum iq_es *stat, double *scale,
		    const char **engine)
{
	for (size_t k = 0; k < IQ_ARRAY_LEN(metrics); k++) {
		size_t pl = strlen(metrics[k].prefix), ml = strlen(metrics[k].name);
		/* "vllm:x" as exported, "vllm_x" after a rename to a legal
		 * Prometheus 2 name (recording rules, some exporters) */
		if (n != pl + 1 + ml || memcmp(name, metrics[k].prefix, pl) != 0 ||
		    (name[pl] != ':' && name[pl] != '_') ||
		    memcmp(name + pl + 1, metrics[k].name, ml) != 0)
			continue;
		*stat = metrics[k].stat;
		*scale = metrics[k].scale;
		if (engine)
			*engine = metrics[k].prefix;
		return 1;
	}
	return 0;
}

void iq_es_init(struct iq_es_values *v)
{
	for (int k = 0; k < IQ_ES_COUNT; k++)
		v->v[k] = NAN;
}

/* A count as an integer when it is one ("20", not "20.0"). */
static int add_count(struct iq_buf *b, double v)
{
	if (v >= 0 && v < 1e15 && v == (double)(long long)v)
		return iq_buf_printf(b, "%lld", (long long)v);
	return iq_buf_printf(b, "%.6g", v);
}

int iq_es_render(struct iq_buf *b, const struct iq_es_values *v)
{
	static const struct {
		enum iq_es s;
		const char *label, *unit;
	} order[] = {
		{IQ_ES_RUNNING, "Running", " reqs"},
		{IQ_ES_SWAPPED, "Swapped", " reqs"},
		{IQ_ES_WAITING, "Waiting", " reqs"},
		{IQ_ES_KV_USAGE, "GPU KV cache usage", "%"},
		{IQ_ES_CPU_KV_USAGE, "CPU KV cache usage", "%"},
		{IQ_ES_PREEMPTIONS, "Preemptions", ""},
	};
	int rc = 0, first = 1;
	for (size_t k = 0; k < IQ_ARRAY_LEN(order); k++) {
		double x = v->v[order[k].s];
		if (isnan(x))
			continue;
		rc |= iq_buf_printf(b, "%s%s: ", first ? "" : ", ", order[k].label);
		if (order[k].unit[0] == '%')
			rc |= iq_buf_printf(b, "%.1f", x);
		else
			rc |= add_count(b, x);
		rc |= iq_buf_adds(b, order[k].unit);
		first = 0;
	}
	return rc ? IQ_ERR_NOMEM : 0;
}
