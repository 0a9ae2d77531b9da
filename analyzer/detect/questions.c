/* questions.c: the playbook's investigation questions, each answered with
 * a sentence, the data behind it and the records that prove it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void question(struct det *x, const char *id, const char *text, const char *answer,
		     json_t *data, json_t *ev)
{
	json_t *q = json_object();
	json_object_set_new(q, "id", json_string(id));
	json_object_set_new(q, "question", json_string(text));
	json_object_set_new(q, "answer", json_string(answer));
	json_object_set_new(q, "data", data);
	json_object_set_new(q, "evidence", ev ? ev : json_array());
	json_array_append_new(json_object_get(x->pat, "questions"), q);
}

/* The largest capture key of the pack's signal (a fact) logged by a
 * serving pod in [a, b), with the record that holds it as evidence; -1
 * when none. */
static long max_capture(struct det *x, int64_t a, int64_t b, const char *signal, const char *key,
			json_t **ev)
{
	sqlite3_stmt *q;
	long best = -1;
	*ev = NULL;
	char path[64];
	snprintf(path, sizeof path, "$.%s", key);
	if (det_prep(x, "SELECT CAST(json_extract(m.captures, ?5) AS INTEGER) AS v, r.id FROM signal_matches m"
			" JOIN records r ON r.id = m.record_id WHERE m.pack = ?3 AND m.signal = ?4"
			" AND r.ts >= ?1 AND r.ts < ?2 AND r.pod IS NOT NULL"
			" AND json_extract(m.captures, ?5) IS NOT NULL"
			" ORDER BY v DESC, r.ts LIMIT 1", &q))
		return -1;
	sqlite3_bind_int64(q, 1, a);
	sqlite3_bind_int64(q, 2, b);
	sqlite3_bind_text(q, 3, x->pack_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 4, signal, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 5, path, -1, SQLITE_STATIC);
	if (sqlite3_step(q) == SQLITE_ROW) {
		best = (long)sqlite3_column_int64(q, 0);
		*ev = json_array();
		json_t *e = det_evidence_of(x, sqlite3_column_int64(q, 1));
		if (e)
			json_array_append_new(*ev, e);
	}
	sqlite3_finalize(q);
	return best;
}

/* The number after key ("max_prompt_tokens\":32495", "prompt_token_ids_len=
 * 30642") at its largest in t; -1 when t has none. */
static long max_number_after(const char *t, const char *key)
{
	long best = -1;
	size_t kl = strlen(key);
	for (const char *p = t; p && (p = strstr(p, key)) != NULL; p += kl) {
		const char *v = p + kl;
		while (*v == '"' || *v == '\\' || *v == '\'' || *v == ':' || *v == '=' || *v == ' ')
			v++;
		if (*v < '0' || *v > '9')
			continue;
		long n = strtol(v, NULL, 10);
		if (n > best)
			best = n;
	}
	return best;
}

/* The batch the first CUDA OOM struck, when the crash dump logs it: the
 * engine's batch lines and crash stats of the dying pod's file within a
 * few seconds of the OOM (the dump comes with it), and the longest prompt
 * it names. NULL when nothing there says. */
static json_t *failing_batch(struct det *x)
{
	sqlite3_stmt *q;
	/* the dump's records: vLLM's scheduler stats and output, and the OOM
	 * record itself when it names its batch (not the periodic batch
	 * lines around it, which tell of the steps before) */
	if (det_prep(x, "WITH o AS (SELECT r.file_id, r.ts FROM signal_matches m JOIN records r ON r.id = m.record_id"
			"  WHERE m.pack = ?1 AND m.signal = 'cuda-oom' AND r.ts IS NOT NULL ORDER BY r.ts, r.id LIMIT 1)"
			" SELECT r.id, r.text, m.signal, json_extract(m.captures, '$.running') FROM o"
			" JOIN records r ON r.file_id = o.file_id AND r.ts BETWEEN o.ts - 2000000000 AND o.ts + 5000000000"
			" JOIN signal_matches m ON m.record_id = r.id AND m.pack = ?1"
			" WHERE m.signal IN ('cuda-oom', 'engine-crash-stats', 'engine-crash-step')"
			"  OR (m.signal = 'engine-batch' AND EXISTS (SELECT 1 FROM signal_matches c WHERE c.record_id = r.id"
			"   AND c.pack = ?1 AND c.signal = 'cuda-oom'))"
			" ORDER BY r.ts, r.id", &q))
		return NULL;
	sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
	long size = -1, prompt = -1;
	int64_t size_rec = -1, prompt_rec = -1;
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t rec = sqlite3_column_int64(q, 0);
		const char *t = (const char *)sqlite3_column_text(q, 1);
		const char *sig = (const char *)sqlite3_column_text(q, 2);
		if (sqlite3_column_type(q, 3) != SQLITE_NULL && strcmp(sig, "cuda-oom") != 0) {
			long v = (long)sqlite3_column_int64(q, 3);
			if (v > size) {
				size = v;
				size_rec = rec;
			}
		}
		long p = t ? max_number_after(t, "max_prompt_tokens") : -1;
		long p2 = t ? max_number_after(t, "prompt_token_ids_len") : -1;
		if (p2 > p)
			p = p2;
		if (p > prompt) {
			prompt = p;
			prompt_rec = rec;
		}
	}
	sqlite3_finalize(q);
	if (size < 0 && prompt < 0)
		return NULL;
	json_t *fb = json_object();
	json_object_set_new(fb, "size", size >= 0 ? json_integer(size) : json_null());
	json_object_set_new(fb, "max_prompt_tokens", prompt >= 0 ? json_integer(prompt) : json_null());
	json_t *ev = json_array();
	if (size_rec >= 0) {
		json_t *e = det_evidence_of(x, size_rec);
		if (e)
			json_array_append_new(ev, e);
	}
	if (prompt_rec >= 0 && prompt_rec != size_rec) {
		json_t *e = det_evidence_of(x, prompt_rec);
		if (e)
			json_array_append_new(ev, e);
	}
	json_object_set_new(fb, "evidence", ev);
	return fb;
}

static void q_batch_and_seq(struct det *x)
{
	/* how far back to look; 0 (the default): everything logged before */
	double look = det_param(x, "max-batch-and-seq", "window_s", 0);
	json_t *data = json_object();
	char ans[640];
	if (x->f.first_oom == IQ_TIME_NONE) {
		json_object_set_new(data, "max_batch_size", json_null());
		json_object_set_new(data, "max_seq_len", json_null());
		json_object_set_new(data, "failing_batch", json_null());
		json_object_set_new(data, "window_start", json_null());
		json_object_set_new(data, "window_end", json_null());
		question(x, "max-batch-and-seq", "What was the maximum batch size and sequence length in the "
			 "request batch preceding the OOM crash?", "There was no CUDA OOM crash to look before.", data, NULL);
		return;
	}
	/* strictly before the first OOM: what the engine was running into it */
	int64_t a = look > 0 ? x->f.first_oom - (int64_t)(look * 1e9) : INT64_MIN, b = x->f.first_oom;
	json_t *ev1, *ev2 = NULL;
	long batch = max_capture(x, a, b, "engine-batch", "running", &ev1);
	long seq = max_capture(x, a, b, "request-tokens", "prompt_tokens", &ev2);
	if (seq < 0) {
		json_decref(ev2);
		seq = max_capture(x, a, b, "request-tokens", "seq_tokens", &ev2);
	}
	json_t *fb = failing_batch(x);
	json_object_set_new(data, "max_batch_size", batch >= 0 ? json_integer(batch) : json_null());
	json_object_set_new(data, "max_seq_len", seq >= 0 ? json_integer(seq) : json_null());
	json_object_set_new(data, "failing_batch", fb ? fb : json_null());
	json_object_set_new(data, "window_start", look > 0 ? det_time_ns(a) : json_null());
	json_object_set_new(data, "window_end", det_time_ns(b));
	char bs[64] = "not logged", ss[64] = "not logged", fs[160] = "";
	if (batch >= 0)
		snprintf(bs, sizeof bs, "%ld requests", batch);
	if (seq >= 0)
		snprintf(ss, sizeof ss, "%ld tokens", seq);
	if (fb) {
		json_t *sz = json_object_get(fb, "size"), *mp = json_object_get(fb, "max_prompt_tokens");
		char a1[32] = "", a2[48] = "";
		if (json_is_integer(sz))
			snprintf(a1, sizeof a1, "%lld requests", (long long)json_integer_value(sz));
		if (json_is_integer(mp))
			snprintf(a2, sizeof a2, "%sits longest prompt %lld tokens", *a1 ? ", " : "",
				 (long long)json_integer_value(mp));
		snprintf(fs, sizeof fs, " The batch the OOM struck: %s%s.", a1, a2);
	}
	if (look > 0)
		snprintf(ans, sizeof ans, "In the %.0f minutes before the first OOM the largest batch was %s and the "
			 "longest prompt %s.%s", look / 60, bs, ss, fs);
	else
		snprintf(ans, sizeof ans, "Before the first OOM the largest batch a serving pod logged was %s and the "
			 "longest prompt %s.%s", bs, ss, fs);
	json_t *ev = ev1 ? ev1 : json_array();
	if (ev2) {
		json_array_extend(ev, ev2);
		json_decref(ev2);
	}
	question(x, "max-batch-and-seq", "What was the maximum batch size and sequence length in the request "
		 "batch preceding the OOM crash?", ans, data, ev);
}

/* The first setting of key the operator configured. */
static json_t *setting(struct det *x, const char *key)
{
	return det_setting(json_object_get(x->pat, "settings"), key);
}

/* The first setting of key that an argument dump shows at an engine's
 * default, or NULL. */
static json_t *setting_default(struct det *x, const char *key)
{
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(x->pat, "settings"), i, o)
		if (strcmp(json_string_value(json_object_get(o, "key")), key) == 0 &&
		    json_is_string(json_object_get(o, "default_of")))
			return o;
	return NULL;
}

/* Whether any setting of key is in the bundle, set or not (an engine's
 * argument dump saying max_num_seqs=None says the engine is vLLM). */
static int setting_seen(struct det *x, const char *key)
{
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(x->pat, "settings"), i, o)
		if (strcmp(json_string_value(json_object_get(o, "key")), key) == 0)
			return 1;
	return 0;
}

static void add_ev(json_t *ev, json_t *o)
{
	if (o && !json_is_null(json_object_get(o, "evidence")))
		json_array_append(ev, json_object_get(o, "evidence"));
}

/* A queue-delay ceiling in microseconds from a setting in its own unit. */
static double delay_us(json_t *o)
{
	static const struct { const char *key; double us; } units[] = {
		{"max_queue_delay_microseconds", 1}, {"batch_timeout_ms", 1e3}, {"batch_wait_timeout_s", 1e6},
	};
	const char *k = json_string_value(json_object_get(o, "key"));
	const char *v = json_string_value(json_object_get(o, "value"));
	char *end;
	double d = v ? strtod(v, &end) : NAN;
	if (!v || end == v)
		return NAN;
	for (size_t i = 0; k && i < IQ_ARRAY_LEN(units); i++)
		if (strcmp(k, units[i].key) == 0)
			return d * units[i].us;
	return NAN;
}

static void q_ceilings(struct det *x)
{
	/* batch-size ceilings, in the order engines name them: vLLM's
	 * sequences per step, Triton's / HF servers' / TGI's batch size,
	 * TGI's token budget per batch (TGI's max_concurrent_requests bounds
	 * the queue, not the batch) */
	static const char *const cap_keys[] = {"max_num_seqs", "max_batch_size", "max_batch_total_tokens"};
	static const char *const delay_keys[] = {"max_queue_delay_microseconds", "batch_timeout_ms",
						 "batch_wait_timeout_s"};
	json_t *cap = NULL, *delay = NULL;
	for (size_t k = 0; !cap && k < IQ_ARRAY_LEN(cap_keys); k++)
		cap = setting(x, cap_keys[k]);
	for (size_t k = 0; !delay && k < IQ_ARRAY_LEN(delay_keys); k++)
		delay = setting(x, delay_keys[k]);
	double dus = delay ? delay_us(delay) : NAN;
	json_t *data = json_object();
	json_t *ev = json_array();
	add_ev(ev, cap);
	add_ev(ev, delay);
	json_object_set_new(data, "batch_cap_present", json_boolean(cap != NULL));
	json_object_set_new(data, "batch_cap", cap ? json_string(json_string_value(json_object_get(cap, "value"))) : json_null());
	json_object_set_new(data, "batch_cap_key", cap ? json_incref(json_object_get(cap, "key")) : json_null());
	json_object_set_new(data, "queue_delay_cap_present", json_boolean(delay != NULL));
	json_object_set_new(data, "queue_delay_us", isnan(dus) ? json_null() : json_integer((json_int_t)llround(dus)));
	json_object_set_new(data, "source", cap ? json_incref(json_object_get(cap, "source")) : json_null());
	/* the engine's own ceiling when nobody set one: vLLM's documented
	 * max_num_seqs default, seen in its argument dump (at 256, or None on
	 * the V1 engine, which then picks its own) */
	json_t *def = NULL;
	if (!cap) {
		json_t *shown = setting_default(x, "max_num_seqs");
		if (shown || setting_seen(x, "max_num_seqs")) {
			def = json_object();
			json_object_set_new(def, "engine", json_string("vllm"));
			json_object_set_new(def, "key", json_string("max_num_seqs"));
			json_object_set_new(def, "value", json_integer(256));
			json_object_set_new(def, "holds_for",
					    json_string(shown ? "vLLM before the V1 engine: EngineArgs.max_num_seqs = 256, "
								"as the argument dump shows"
							      : "vLLM V0's EngineArgs default; the V1 engine, which logs "
								"max_num_seqs=None, picks its own by usage context and GPU"));
			add_ev(ev, shown);
		}
	}
	json_object_set_new(data, "batch_cap_default", def ? def : json_null());
	char ans[640];
	int off;
	if (cap)
		off = snprintf(ans, sizeof ans, "Batch size is capped (%s = %s, %s)",
			       json_string_value(json_object_get(cap, "key")), json_string_value(json_object_get(cap, "value")),
			       json_string_value(json_object_get(cap, "source")));
	else if (def)
		off = snprintf(ans, sizeof ans, "No batch-size cap is configured; vLLM's default of 256 sequences "
			       "per step (max_num_seqs) applied%s",
			       setting_default(x, "max_num_seqs") ? "" : " (or the V1 engine's own choice)");
	else
		off = snprintf(ans, sizeof ans, "No batch-size cap is configured");
	if (off < (int)sizeof ans) {
		if (delay && !isnan(dus))
			snprintf(ans + off, sizeof ans - (size_t)off, "; queue delay is capped at %.0f µs (%s = %s).", dus,
				 json_string_value(json_object_get(delay, "key")),
				 json_string_value(json_object_get(delay, "value")));
		else
			snprintf(ans + off, sizeof ans - (size_t)off, "; no queue-delay ceiling was found.");
	}
	question(x, "batching-ceilings", "Is dynamic request batching configured with hard ceilings for both "
		 "batch size and queue delay?", ans, data, ev);
}

/* Does text contain pat, as LIKE '%pat%' would say: ASCII letters in
 * either case, '_' any one character? */
static int like_in(const char *text, const char *pat)
{
	for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
		const unsigned char *t = s, *p = (const unsigned char *)pat;
		for (; *p && *t; p++) {
			if (*p == '_') {
				if (*t++ >= 0xc0)
					while ((*t & 0xc0) == 0x80)
						t++;
			} else if (*t < 0x80 && (*t | 0x20) == (*p | 0x20) && ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z')) {
				t++;
			} else if (*t == *p) {
				t++;
			} else {
				break;
			}
		}
		if (!*p)
			return 1;
	}
	return 0;
}

static void q_paged(struct det *x)
{
	static const struct { const char *like, *engine; int paged; } engines[] = {
		{"vLLM", "vllm", 1}, {"text_generation", "tgi", 1},
		{"text-generation-launcher", "tgi", 1}, {"TensorRT-LLM", "tensorrt-llm", 1},
		{"tritonserver", "triton", -1}, {"sglang", "sglang", 1},
	};
	/* The engine first in this list that some log line names, with the
	 * first such line as evidence: one read of the log records, over as
	 * soon as the first engine of the list is found. */
	int64_t first[IQ_ARRAY_LEN(engines)];
	for (size_t k = 0; k < IQ_ARRAY_LEN(engines); k++)
		first[k] = -1;
	sqlite3_stmt *q;
	if (det_prep(x, "SELECT id, text FROM records WHERE kind = 'log' ORDER BY id", &q) == 0) {
		while (first[0] < 0 && sqlite3_step(q) == SQLITE_ROW) {
			const char *text = (const char *)sqlite3_column_text(q, 1);
			for (size_t k = 0; text && k < IQ_ARRAY_LEN(engines); k++)
				if (first[k] < 0 && like_in(text, engines[k].like))
					first[k] = sqlite3_column_int64(q, 0);
		}
		sqlite3_finalize(q);
	}
	const char *engine = NULL;
	int paged = -1;
	json_t *ev = json_array();
	for (size_t k = 0; k < IQ_ARRAY_LEN(engines) && !engine; k++) {
		if (first[k] >= 0) {
			engine = engines[k].engine;
			paged = engines[k].paged;
			json_t *e = det_evidence_of(x, first[k]);
			if (e)
				json_array_append_new(ev, e);
		}
	}
	/* what the configuration says of the KV cache overrides what the
	 * engine's name implies: a transformers backend (Triton's python
	 * backend, an HF server) with kv_cache: contiguous or an attention
	 * implementation of its own (sdpa, eager, flash_attention_2) does not
	 * page; kv_cache: paged (or TGI's "Using Attention = paged") does */
	json_t *kv = setting(x, "kv_cache");
	json_t *attn = setting(x, "attn_implementation");
	const char *said = NULL;
	if (kv) {
		const char *v = json_string_value(json_object_get(kv, "value"));
		if (v && (like_in(v, "paged") || like_in(v, "block")))
			paged = 1, said = "kv_cache";
		else if (v && (like_in(v, "contiguous") || like_in(v, "static") || like_in(v, "dynamic")))
			paged = 0, said = "kv_cache";
	}
	if (!said && attn && (!engine || strcmp(engine, "triton") == 0)) {
		const char *v = json_string_value(json_object_get(attn, "value"));
		if (v && like_in(v, "paged"))
			paged = 1, said = "attn_implementation";
		else if (v && (like_in(v, "sdpa") || like_in(v, "eager") || like_in(v, "flash_attention")))
			paged = 0, said = "attn_implementation";
	}
	if (said) {
		add_ev(ev, kv);
		add_ev(ev, attn);
	}
	json_t *frac = setting(x, "gpu_memory_utilization");
	if (!frac)
		frac = setting(x, "kv_cache_free_gpu_mem_fraction");
	add_ev(ev, frac);
	json_t *data = json_object();
	json_object_set_new(data, "enabled", paged < 0 ? json_null() : json_boolean(paged));
	json_object_set_new(data, "engine", engine ? json_string(engine) : json_null());
	double f = frac ? strtod(json_string_value(json_object_get(frac, "value")), NULL) : NAN;
	json_object_set_new(data, "memory_fraction", isnan(f) ? json_null() : json_real(f));
	json_object_set_new(data, "source", said ? json_string(said) : engine && paged >= 0 ? json_string("engine")
			    : json_null());
	char ans[512];
	if (said && paged == 0)
		snprintf(ans, sizeof ans, "No: the KV cache is not paged (%s%s%s%s%s)%s%s.",
			 kv ? "kv_cache: " : "", kv ? json_string_value(json_object_get(kv, "value")) : "",
			 kv && attn ? ", " : "", attn ? "attn_implementation: " : "",
			 attn ? json_string_value(json_object_get(attn, "value")) : "", engine ? " under " : "",
			 engine ? engine : "");
	else if (said)
		snprintf(ans, sizeof ans, "Yes: the KV cache is paged (%s: %s).", said,
			 json_string_value(json_object_get(kv && !strcmp(said, "kv_cache") ? kv : attn, "value")));
	else if (!engine)
		snprintf(ans, sizeof ans, "The serving engine could not be identified from the bundle.");
	else if (paged > 0 && frac)
		snprintf(ans, sizeof ans, "Yes: %s manages the KV cache in pages (PagedAttention), and reserves %s of "
			 "GPU memory up front (%s); paging removes fragmentation, not the ceiling.", engine,
			 json_string_value(json_object_get(frac, "value")), json_string_value(json_object_get(frac, "key")));
	else if (paged > 0)
		snprintf(ans, sizeof ans, "Yes: %s manages the KV cache in pages (PagedAttention).", engine);
	else
		snprintf(ans, sizeof ans, "%s: whether the KV cache is paged depends on the backend; not stated in the bundle.", engine);
	question(x, "paged-attention", "Does the serving framework enable PagedAttention or memory-efficient KV "
		 "cache partitioning?", ans, data, ev);
}

static void q_order(struct det *x)
{
	json_t *c = json_object_get(x->pat, "cascade");
	json_t *order = json_is_object(c) ? json_object_get(c, "failure_order") : NULL;
	json_t *data = json_object();
	json_t *pods = json_array();
	json_t *ev = json_array();
	size_t i;
	json_t *o;
	json_array_foreach(order, i, o)
		json_array_append(pods, json_object_get(o, "pod"));
	json_array_foreach(x->ooms, i, o) {
		size_t j;
		json_t *p;
		json_array_foreach(pods, j, p)
			if (json_equal(p, json_object_get(o, "pod")) && json_array_size(ev) == j)
				json_array_append(ev, json_array_get(json_object_get(o, "evidence"), 0));
	}
	json_object_set_new(data, "pods", pods);
	json_object_set(data, "first", json_array_size(order) ? json_array_get(order, 0) : json_null());
	char ans[1024];
	if (!json_array_size(order)) {
		snprintf(ans, sizeof ans, "No pod died of a CUDA OOM.");
	} else {
		json_t *f = json_array_get(order, 0);
		int n = snprintf(ans, sizeof ans, "%s on %s failed first, at %s", json_string_value(json_object_get(f, "pod")),
				 json_string_value(json_object_get(f, "node")) ? json_string_value(json_object_get(f, "node")) : "an unknown node",
				 json_string_value(json_object_get(f, "time")));
		for (i = 1; i < json_array_size(order) && n > 0 && (size_t)n < sizeof ans; i++) {
			json_t *p = json_array_get(order, i);
			n += snprintf(ans + n, sizeof ans - (size_t)n, "%s %s (%s)", i == 1 ? "; then" : ",",
				      json_string_value(json_object_get(p, "pod")), json_string_value(json_object_get(p, "time")));
		}
		if (n > 0 && (size_t)n < sizeof ans - 1)
			snprintf(ans + n, sizeof ans - (size_t)n, ".");
	}
	question(x, "failure-order", "Which pod failed first, when, and in what order did the others follow?", ans, data, ev);
}

static void q_impact(struct det *x)
{
	json_t *im = json_object_get(x->pat, "impact");
	json_t *data = json_object();
	json_object_set(data, "failed_requests", json_object_get(im, "failed_requests"));
	json_object_set(data, "unavailability", json_object_get(im, "unavailability"));
	json_t *ev = json_array();
	json_t *s = json_object_get(x->pat, "lb_5xx_surge");
	if (json_is_object(s))
		json_array_extend(ev, json_object_get(s, "evidence"));
	char ans[512];
	json_t *u = json_object_get(im, "unavailability");
	if (json_is_null(json_object_get(im, "failed_requests")))
		snprintf(ans, sizeof ans, "The bundle has no load-balancer log to count failed requests from.");
	else if (json_is_object(u))
		snprintf(ans, sizeof ans, "%lld requests failed with 5xx; no upstream served any request from %s to %s.",
			 (long long)json_integer_value(json_object_get(im, "failed_requests")),
			 json_string_value(json_object_get(u, "start")), json_string_value(json_object_get(u, "end")));
	else
		snprintf(ans, sizeof ans, "%lld requests failed with 5xx; some upstream kept serving throughout.",
			 (long long)json_integer_value(json_object_get(im, "failed_requests")));
	question(x, "impact", "How many requests failed, and when was the service unavailable?", ans, data, ev);
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void q_recovery(struct det *x)
{
	json_t *rec = json_object_get(x->pat, "recovery");
	json_t *data = json_object();
	json_t *pods = json_array();
	json_t *ev = json_array();
	size_t n = json_array_size(rec), nready = 0, died = 0, unknown = 0, estimated = 0;
	double *secs = n ? iq_xmalloc(n * sizeof *secs) : NULL;
	json_t *slowest = NULL;
	size_t i;
	json_t *o;
	json_array_foreach(rec, i, o) {
		json_t *p = json_object();
		static const char *const keep[] = {"pod", "restart", "started", "ready", "restart_to_ready_s",
						   "ready_basis", "model_load_s", "died_before_ready"};
		for (size_t k = 0; k < IQ_ARRAY_LEN(keep); k++)
			json_object_set(p, keep[k], json_object_get(o, keep[k]));
		json_array_append_new(pods, p);
		json_t *v = json_object_get(o, "restart_to_ready_s");
		if (json_is_number(v)) {
			double s = json_number_value(v);
			secs[nready++] = s;
			if (!slowest || s > json_number_value(json_object_get(slowest, "restart_to_ready_s")))
				slowest = o;
			const char *b = json_string_value(json_object_get(o, "ready_basis"));
			estimated += b && strncmp(b, "estimate", 8) == 0;
		} else if (json_is_true(json_object_get(o, "died_before_ready"))) {
			died++;
		} else {
			unknown++;
		}
		if (json_array_size(ev) < 10)
			json_array_extend(ev, json_object_get(o, "evidence"));
	}
	/* thundering herd: restarts of different pods close together */
	long herd = 0;
	double herd_s = det_param(x, "recovery", "herd_window_s", 30);
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			json_t *ra = json_array_get(rec, a), *rb = json_array_get(rec, b);
			if (json_equal(json_object_get(ra, "pod"), json_object_get(rb, "pod")))
				continue;
			int64_t ta, tb;
			const char *sa = json_string_value(json_object_get(ra, "started"));
			const char *sb = json_string_value(json_object_get(rb, "started"));
			if (sa && sb && iq_time_parse_iso(sa, strlen(sa), &ta, NULL) >= 0 &&
			    iq_time_parse_iso(sb, strlen(sb), &tb, NULL) >= 0 && llabs(ta - tb) <= (int64_t)(herd_s * 1e9))
				herd++;
		}
	json_object_set_new(data, "pods", pods);
	json_object_set_new(data, "restarts", json_integer((json_int_t)n));
	json_object_set_new(data, "ready", json_integer((json_int_t)nready));
	json_object_set_new(data, "estimated", json_integer((json_int_t)estimated));
	json_object_set_new(data, "died_before_ready", json_integer((json_int_t)died));
	json_object_set_new(data, "undetermined", json_integer((json_int_t)unknown));
	char ans[768];
	int off = 0;
	if (nready) {
		qsort(secs, nready, sizeof *secs, by_double);
		double med = nready % 2 ? secs[nready / 2] : (secs[nready / 2 - 1] + secs[nready / 2]) / 2;
		json_t *spread = json_object();
		json_object_set_new(spread, "min_s", json_real(secs[0]));
		json_object_set_new(spread, "median_s", json_real(med));
		json_object_set_new(spread, "max_s", json_real(secs[nready - 1]));
		json_object_set_new(data, "spread", spread);
		json_t *sl = json_object();
		static const char *const keep[] = {"pod", "restart", "started", "ready", "restart_to_ready_s",
						   "ready_basis", "model_load_s"};
		for (size_t k = 0; k < IQ_ARRAY_LEN(keep); k++)
			json_object_set(sl, keep[k], json_object_get(slowest, keep[k]));
		json_object_set_new(data, "slowest", sl);
		json_object_set_new(data, "thundering_herd", json_boolean(herd > 0));
		json_t *ml = json_object_get(slowest, "model_load_s");
		if (nready == 1)
			off = snprintf(ans, sizeof ans, "1 of %zu restarts was marked Ready again: %s restart %lld, "
				       "%.0f s after the container started", n,
				       json_string_value(json_object_get(slowest, "pod")),
				       (long long)json_integer_value(json_object_get(slowest, "restart")), secs[0]);
		else
			off = snprintf(ans, sizeof ans,
				       "%zu of %zu restarts were marked Ready again %.0f–%.0f s after the container "
				       "started (median %.0f s); the slowest, %s restart %lld, took %.0f s", nready, n,
				       secs[0], secs[nready - 1], med,
				       json_string_value(json_object_get(slowest, "pod")),
				       (long long)json_integer_value(json_object_get(slowest, "restart")),
				       secs[nready - 1]);
		if (json_is_number(ml) && off < (int)sizeof ans)
			off += snprintf(ans + off, sizeof ans - (size_t)off, ", %.0f s of it loading the model",
					json_number_value(ml));
		if (off < (int)sizeof ans)
			off += snprintf(ans + off, sizeof ans - (size_t)off, "; restarts %s.",
					herd ? "of different pods came within seconds of each other (a thundering herd)"
					     : "were staggered");
		if (estimated && off < (int)sizeof ans)
			off += snprintf(ans + off, sizeof ans - (size_t)off,
					" %zu of these are estimates (the engine's ready line plus half the readiness "
					"probe period; nothing in the bundle says when Kubernetes marked them Ready).",
					estimated);
	} else if (n) {
		off = snprintf(ans, sizeof ans, "%zu restarts; none was seen marked Ready again.", n);
	} else {
		off = snprintf(ans, sizeof ans, "No container restarted in the bundle.");
	}
	if (died && off < (int)sizeof ans)
		off += snprintf(ans + off, sizeof ans - (size_t)off, " %zu of the restarts died again before %s ready.",
				died, died == 1 ? "it was" : "they were");
	if (unknown && off < (int)sizeof ans)
		snprintf(ans + off, sizeof ans - (size_t)off,
			 " For %zu, when %s ready could not be determined (no kubelet readiness line, Ready "
			 "condition, engine ready line or load-balancer request).", unknown,
			 unknown == 1 ? "it was" : "they were");
	if (!nready)
		json_object_set_new(data, "thundering_herd", n ? json_boolean(herd > 0) : json_null());
	free(secs);
	question(x, "recovery", "How long did each restarted pod take to serve again, and were restarts staggered?",
		 ans, data, ev);
}

int det_questions(struct det *x)
{
	json_object_set_new(x->pat, "questions", json_array());
	q_batch_and_seq(x);
	q_ceilings(x);
	q_paged(x);
	q_order(x);
	q_impact(x);
	q_recovery(x);
	return 0;
}
