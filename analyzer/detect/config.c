/* config.c: the settings that bear on GPU memory, gathered from configs and
 * manifests (config_settings) and from serving engines' startup lines (vLLM
 * "non-default args: {...}" and "args: Namespace(...)"), and the playbook's
 * contributing conditions decided from them. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "../parse/engine_stats.h"

/* Keys worth pulling out of an engine's argument dump. */
static const char *const engine_keys[] = {
	"gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "max_model_len",
	"enable_chunked_prefill", "block_size", "kv_cache_dtype", "max_batch_size",
	"max_batch_prefill_tokens", "max_total_tokens", "max_concurrent_requests",
	"max_input_tokens", "max_input_length", "cuda_memory_fraction", "swap_space",
};

/* Engine defaults an argument dump prints beside what the operator set:
 * vLLM's "args: Namespace(...)" lists every argument, max_num_seqs=256
 * included when nobody set it (EngineArgs' default before the V1 engine
 * made it None). */
static const struct { const char *engine, *dump, *key, *value; } dump_defaults[] = {
	{"vllm", "Namespace(", "max_num_seqs", "256"},
};

/* Adds a setting to the settings array. configured: set by the operator,
 * not an unset value ("None", "null", empty) nor the engine's default as
 * an argument dump prints it (then default_of names the engine). */
static void add_setting(json_t *set, const char *scope, const char *key, const char *value,
			const char *source, json_t *evidence, const char *dump)
{
	json_t *o = json_object();
	json_object_set_new(o, "scope", scope ? json_string(scope) : json_null());
	json_object_set_new(o, "key", json_string(key));
	json_object_set_new(o, "value", json_string(value));
	json_object_set_new(o, "source", json_string(source));
	const char *engine = NULL;
	for (size_t k = 0; dump && k < IQ_ARRAY_LEN(dump_defaults); k++)
		if (strstr(dump, dump_defaults[k].dump) && strcmp(key, dump_defaults[k].key) == 0 &&
		    strcmp(value, dump_defaults[k].value) == 0)
			engine = dump_defaults[k].engine;
	json_object_set_new(o, "configured", json_boolean(!det_value_unset(value) && !engine));
	if (engine)
		json_object_set_new(o, "default_of", json_string(engine));
	json_object_set_new(o, "evidence", evidence ? evidence : json_null());
	json_array_append_new(set, o);
}

/* Finds 'key': value or key=value in an argument dump; copies the value. */
static int arg_value(const char *text, const char *key, char *out, size_t outsz)
{
	size_t kl = strlen(key);
	for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
		if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		const char *v = p + kl;
		if (*v == '\'')
			v++;
		while (*v == ' ')
			v++;
		if (*v != ':' && *v != '=')
			continue;
		v++;
		while (*v == ' ' || *v == '\'' || *v == '"')
			v++;
		size_t n = strcspn(v, ",)}' \"");
		if (n == 0 || n >= outsz)
			continue;
		memcpy(out, v, n);
		out[n] = '\0';
		return 1;
	}
	return 0;
}

/* All settings, with evidence: one per (scope, key), the latest wins. */
static json_t *settings(struct det *x)
{
	json_t *set = json_array();
	sqlite3_stmt *q;
	if (det_prep(x, "SELECT c.scope, c.key, c.value, c.source, f.path, r.line, r.ts, r.text, r.id"
			" FROM config_settings c JOIN records r ON r.id = c.record_id"
			" JOIN files f ON f.id = r.file_id ORDER BY c.key, f.path, r.line", &q) == 0) {
		while (sqlite3_step(q) == SQLITE_ROW)
			add_setting(set, (const char *)sqlite3_column_text(q, 0),
				    (const char *)sqlite3_column_text(q, 1),
				    sqlite3_column_text(q, 2) ? (const char *)sqlite3_column_text(q, 2) : "",
				    sqlite3_column_text(q, 3) ? (const char *)sqlite3_column_text(q, 3) : "config",
				    det_evidence(x, q, 4, NULL), NULL);
		sqlite3_finalize(q);
	}
	/* engine argument dumps in the logs */
	if (det_prep(x, "SELECT r.pod, f.path, r.line, r.ts, r.text, r.id FROM signal_matches m"
			" JOIN records r ON r.id = m.record_id JOIN files f ON f.id = r.file_id"
			" WHERE m.pack = ?1 AND m.signal = 'engine-args' ORDER BY r.ts", &q) == 0) {
		sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
		while (sqlite3_step(q) == SQLITE_ROW) {
			const char *text = (const char *)sqlite3_column_text(q, 4);
			for (size_t k = 0; text && k < IQ_ARRAY_LEN(engine_keys); k++) {
				char v[128];
				if (arg_value(text, engine_keys[k], v, sizeof v))
					add_setting(set, (const char *)sqlite3_column_text(q, 0), engine_keys[k], v,
						    "engine-log", det_evidence(x, q, 1, NULL), text);
			}
		}
		sqlite3_finalize(q);
	}
	return set;
}

/* The first setting with key that the operator configured. */
static json_t *find(json_t *set, const char *key)
{
	return det_setting(set, key);
}

static double num(json_t *o)
{
	if (!o)
		return NAN;
	const char *v = json_string_value(json_object_get(o, "value"));
	char *end;
	double d = v ? strtod(v, &end) : NAN;
	return v && end != v ? d : NAN;
}

static json_t *ev_of(json_t *o)
{
	json_t *a = json_array();
	json_t *e = o ? json_object_get(o, "evidence") : NULL;
	if (e && !json_is_null(e))
		json_array_append(a, e);
	return a;
}

static void condition(json_t *conds, const char *id, int present, const char *detail, json_t *ev)
{
	json_t *c = json_object();
	json_object_set_new(c, "id", json_string(id));
	json_object_set_new(c, "present", present < 0 ? json_null() : json_boolean(present));
	json_object_set_new(c, "detail", json_string(detail));
	json_object_set_new(c, "evidence", ev ? ev : json_array());
	json_array_append_new(conds, c);
}
enum hpa_class { HPA_OTHER, HPA_CPU, HPA_GPU_OR_QUEUE };

/* What an HPA metric (parse/k8s_manifest.c: "Type/name/TargetType/value",
 * or autoscaling/v1's "Resource/cpu/Utilization/80") scales on: CPU is
 * the cpu resource itself (not vLLM's cpu_cache_usage_perc); any serving
 * engine statistic (vllm:kv_cache_usage_perc, sglang:num_queue_reqs,
 * tgi_queue_size, ... in every spelling the engine-stats table knows), a
 * GPU or DCGM metric or a queue/request count is a GPU or queue metric. */
static enum hpa_class hpa_metric_class(const char *v)
{
	if (!v)
		return HPA_OTHER;
	const char *name = strchr(v, '/');
	name = name ? name + 1 : v;
	size_t n = strcspn(name, "/");
	int resource = strncmp(v, "Resource/", 9) == 0 || strncmp(v, "ContainerResource/", 18) == 0;
	if (resource && n == 3 && strncmp(name, "cpu", 3) == 0)
		return HPA_CPU;
	enum iq_es stat;
	double scale;
	const char *engine;
	if (iq_es_of_metric(name, n, &stat, &scale, &engine))
		return HPA_GPU_OR_QUEUE;
	static const char *const words[] = {"gpu", "GPU", "DCGM", "queue", "waiting", "request",
					    "kv_cache"};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
		size_t w = strlen(words[i]);
		for (size_t k = 0; k + w <= n; k++)
			if (memcmp(name + k, words[i], w) == 0)
				return HPA_GPU_OR_QUEUE;
	}
	return HPA_OTHER;
}


int det_conditions(struct det *x)
{
	json_t *set = settings(x);
	json_t *conds = json_array();
	char d[512];

	/* no-backpressure: the LB never answered 429 and the engine refuses
	 * nothing (TGI's max_concurrent_requests answers 429 past its limit;
	 * a batching queue delay is not a refusal) */
	long r429 = x->http ? x->http->status_429_all : 0;
	json_t *qcap = find(set, "max_concurrent_requests");
	if (x->f.lb_requests == 0 && !qcap) {
		condition(conds, "no-backpressure", -1, "No load-balancer log and no queue limit in the bundle: cannot tell.", NULL);
	} else {
		snprintf(d, sizeof d, "%ld of %ld requests were refused with 429; queue limit: %s.", r429,
			 x->f.lb_requests, qcap ? json_string_value(json_object_get(qcap, "value")) : "none found");
		condition(conds, "no-backpressure", r429 == 0 && !qcap, d, ev_of(qcap));
	}

	/* static-vram-preallocation: the engine reserves (nearly) all GPU memory up front */
	double thr = det_param(x, "static-vram-preallocation", "min_fraction", 0.95);
	json_t *gmu = find(set, "gpu_memory_utilization");
	if (!gmu)
		gmu = find(set, "kv_cache_free_gpu_mem_fraction");
	if (!gmu)
		gmu = find(set, "cuda_memory_fraction");
	double frac = num(gmu);
	if (isnan(frac)) {
		condition(conds, "static-vram-preallocation", -1, "No GPU memory fraction setting found.", NULL);
	} else {
		snprintf(d, sizeof d, "%s = %g (threshold %g).", json_string_value(json_object_get(gmu, "key")),
			 frac, thr);
		condition(conds, "static-vram-preallocation", frac >= thr, d, ev_of(gmu));
	}

	/* no-batch-caps: no limit on sequences per batch or tokens per batch */
	json_t *seqs = find(set, "max_num_seqs");
	json_t *toks = find(set, "max_num_batched_tokens");
	json_t *mbs = find(set, "max_batch_size");
	json_t *mlen = find(set, "max_model_len");
	json_t *cev = json_array();
	json_t *cand[] = {seqs, toks, mbs, mlen};
	for (size_t k = 0; k < IQ_ARRAY_LEN(cand); k++)
		if (cand[k] && !json_is_null(json_object_get(cand[k], "evidence")))
			json_array_append(cev, json_object_get(cand[k], "evidence"));
	snprintf(d, sizeof d, "max_num_seqs=%s, max_num_batched_tokens=%s, max_batch_size=%s, max_model_len=%s.",
		 seqs ? json_string_value(json_object_get(seqs, "value")) : "unset",
		 toks ? json_string_value(json_object_get(toks, "value")) : "unset",
		 mbs ? json_string_value(json_object_get(mbs, "value")) : "unset",
		 mlen ? json_string_value(json_object_get(mlen, "value")) : "unset");
	if (!json_array_size(set))
		condition(conds, "no-batch-caps", -1, "No serving configuration found in the bundle.", cev);
	else
		condition(conds, "no-batch-caps", !seqs && !toks && !mbs, d, cev);

	/* cpu-autoscaling: the HPA scales on CPU, not on GPU memory or queue depth */
	json_t *hev = json_array();
	int cpu = 0, gpuq = 0, any = 0;
	size_t i;
	json_t *o;
	json_array_foreach(set, i, o) {
		if (strcmp(json_string_value(json_object_get(o, "key")), "hpa_metric") != 0)
			continue;
		any = 1;
		switch (hpa_metric_class(json_string_value(json_object_get(o, "value")))) {
		case HPA_CPU:
			cpu = 1;
			break;
		case HPA_GPU_OR_QUEUE:
			gpuq = 1;
			break;
		default:
			break;
		}
		if (!json_is_null(json_object_get(o, "evidence")))
			json_array_append(hev, json_object_get(o, "evidence"));
	}
	if (!any)
		condition(conds, "cpu-autoscaling", -1, "No HorizontalPodAutoscaler in the bundle.", hev);
	else
		condition(conds, "cpu-autoscaling", cpu && !gpuq,
			  cpu && !gpuq ? "The autoscaler scales on CPU only, not on GPU memory or queue depth."
				       : "The autoscaler uses a GPU or queue metric.", hev);

	/* fragmentation: memory reserved but unallocated would have held the
	 * request, and is a material share of the GPU (a few hundred MiB is the
	 * caching allocator's ordinary slack, not fragmentation) */
	double min_share = det_item_param(x, "conditions", "fragmentation", "min_capacity_share", 0.1);
	long frag = 0, slack = 0;
	json_t *fev = json_array();
	json_array_foreach(x->ooms, i, o) {
		json_t *ru = json_object_get(o, "reserved_unallocated_bytes");
		json_t *tr = json_object_get(o, "tried_bytes");
		json_t *cap = json_object_get(o, "capacity_bytes");
		if (!json_is_integer(ru) || !json_is_integer(tr) || json_integer_value(ru) < json_integer_value(tr))
			continue;
		/* without the capacity the share cannot be judged: not counted */
		if (!json_is_integer(cap) || json_integer_value(cap) <= 0 ||
		    (double)json_integer_value(ru) < min_share * (double)json_integer_value(cap)) {
			slack++;
			continue;
		}
		frag++;
		json_array_append(fev, json_array_get(json_object_get(o, "evidence"), 0));
	}
	if (!x->f.oom_events) {
		condition(conds, "fragmentation", -1, "No CUDA OOM message to read the allocator's state from.", fev);
	} else {
		snprintf(d, sizeof d, "%ld of %ld OOM messages had memory reserved-but-unallocated at least as large as "
			 "the allocation that failed and %.0f%% or more of the GPU%s", frag, x->f.oom_events,
			 min_share * 100, slack ? "" : ".");
		if (slack)
			snprintf(d + strlen(d), sizeof d - strlen(d), "; %ld more had enough for the allocation but less "
				 "than that share (or no capacity in the message): the allocator's ordinary slack.", slack);
		condition(conds, "fragmentation", frag > 0, d, fev);
	}

	/* no-expandable-segments: PyTorch's allocator without expandable segments */
	json_t *pcac = find(set, "pytorch_cuda_alloc_conf");
	int pytorch = 0;
	json_array_foreach(x->ooms, i, o)
		pytorch |= strcmp(json_string_value(json_object_get(o, "framework")), "pytorch") == 0;
	int exp = pcac && strstr(json_string_value(json_object_get(pcac, "value")), "expandable_segments:True");
	if (!pytorch && !pcac) {
		condition(conds, "no-expandable-segments", -1, "No PyTorch allocator in evidence.", NULL);
	} else {
		snprintf(d, sizeof d, "PYTORCH_CUDA_ALLOC_CONF: %s.",
			 pcac ? json_string_value(json_object_get(pcac, "value")) : "not set");
		json_t *eev = ev_of(pcac);
		if (!pcac && json_array_size(x->ooms))
			json_array_append(eev, json_array_get(json_object_get(json_array_get(x->ooms, 0), "evidence"), 0));
		condition(conds, "no-expandable-segments", !exp, d, eev);
	}
	json_object_set_new(x->pat, "conditions", conds);
	json_object_set_new(x->pat, "settings", set);
	return 0;
}
