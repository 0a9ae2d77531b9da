/* oom.c: CUDA out-of-memory events: one per worker death, with the pod,
 * node and container it happened in and the numbers of the message. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static json_t *capture_int(json_t *caps, const char *key)
{
	json_t *v = json_object_get(caps, key);
	return json_is_integer(v) ? json_incref(v) : json_null();
}

/* The framework of an OOM line whose pattern does not name one. */
static const char *framework_of(const char *text)
{
	if (!text)
		return "unknown";
	if (strstr(text, "TensorRT"))
		return "tensorrt-llm";
	if (strstr(text, "PyTorch") || strstr(text, "torch.") || strstr(text, "Tried to allocate"))
		return "pytorch";
	if (strstr(text, "OOM when allocating"))
		return "tensorflow";
	if (strstr(text, "RESOURCE_EXHAUSTED"))
		return "jax";
	if (strstr(text, "CUBLAS") || strstr(text, "CUDNN"))
		return "cuda-library";
	return "cuda";
}

/* Is the OOM line at (file, t) part of an event already in a? A traceback
 * often repeats the message (worker, then engine), so further OOM lines of
 * one file within IQ_OOM_MERGE_S of an event are the same death. */
static json_t *same_death(json_t *a, const char *file, int64_t t, int64_t *tss)
{
	for (size_t k = json_array_size(a); k-- > 0;) {
		json_t *prev = json_array_get(a, k);
		json_t *pe = json_array_get(json_object_get(prev, "evidence"), 0);
		if (tss[k] != IQ_TIME_NONE && t != IQ_TIME_NONE && t - tss[k] <= NS(IQ_OOM_MERGE_S) &&
		    strcmp(json_string_value(json_object_get(pe, "file")), file) == 0)
			return prev;
	}
	return NULL;
}

int det_oom(struct det *x)
{
	sqlite3_stmt *q;
	int rc = det_prep(x,
			  "SELECT f.path, r.line, r.ts, r.text, r.id, r.pod, r.node, r.container, m.captures"
			  " FROM signal_matches m JOIN records r ON r.id = m.record_id"
			  " JOIN files f ON f.id = r.file_id"
			  " WHERE m.signal = 'cuda-oom' AND m.pack = ?1"
			  " ORDER BY r.ts IS NULL, r.ts, f.path, r.line", &q);
	if (rc)
		return rc;
	sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
	json_t *a = json_array();
	int64_t *tss = NULL;
	size_t cap = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *file = (const char *)sqlite3_column_text(q, 0);
		int64_t t = sqlite3_column_type(q, 2) == SQLITE_NULL ? IQ_TIME_NONE : sqlite3_column_int64(q, 2);
		json_t *prev = same_death(a, file, t, tss);
		if (prev) {
			json_array_append_new(json_object_get(prev, "evidence"), det_evidence(x, q, 0, NULL));
			continue;
		}
		const char *capstext = (const char *)sqlite3_column_text(q, 8);
		json_t *caps = json_loads(capstext ? capstext : "{}", 0, NULL);
		json_t *e = json_object();
		json_object_set_new(e, "pod", det_text(q, 5));
		json_object_set_new(e, "node", det_text(q, 6));
		json_object_set_new(e, "container", det_text(q, 7));
		json_object_set_new(e, "time", det_time(q, 2));
		/* the pack names the program of each message form (a mark,
		 * rules/README.md); the words of the text are the fallback */
		json_t *fw = json_object_get(caps, "framework");
		json_object_set_new(e, "framework", json_is_string(fw) ? json_incref(fw)
					: json_string(framework_of((const char *)sqlite3_column_text(q, 3))));
		json_object_set_new(e, "tried_bytes", capture_int(caps, "tried_bytes"));
		json_object_set_new(e, "capacity_bytes", capture_int(caps, "capacity_bytes"));
		json_object_set_new(e, "free_bytes", capture_int(caps, "free_bytes"));
		json_object_set_new(e, "allocated_bytes", capture_int(caps, "allocated_bytes"));
		json_t *ru = capture_int(caps, "reserved_unallocated_bytes");
		json_t *res = json_object_get(caps, "reserved_bytes");
		json_t *alloc = json_object_get(caps, "allocated_bytes");
		if (json_is_null(ru) && json_is_integer(res) && json_is_integer(alloc)) {
			/* old message: reserved in total = allocated + reserved-unallocated */
			json_decref(ru);
			ru = json_integer(json_integer_value(res) - json_integer_value(alloc));
		}
		json_object_set_new(e, "reserved_unallocated_bytes", ru);
		json_t *ev = json_array();
		json_array_append_new(ev, det_evidence(x, q, 0, NULL));
		json_object_set_new(e, "evidence", ev);
		if (json_array_size(a) == cap) {
			cap = cap ? cap * 2 : 16;
			tss = iq_xrealloc(tss, cap * sizeof *tss);
		}
		tss[json_array_size(a)] = t;
		json_array_append_new(a, e);
		json_decref(caps);
	}
	sqlite3_finalize(q);
	free(tss);
	x->f.oom_events = (long)json_array_size(a);
	x->f.first_oom = IQ_TIME_NONE;
	json_t *pods = json_array();
	size_t i;
	json_t *e;
	json_array_foreach(a, i, e) {
		const char *pod = json_string_value(json_object_get(e, "pod"));
		int seen = 0;
		size_t j;
		json_t *p;
		json_array_foreach(pods, j, p)
			seen |= pod && strcmp(json_string_value(p), pod) == 0;
		if (pod && !seen)
			json_array_append_new(pods, json_string(pod));
		if (i == 0 && json_is_string(json_object_get(e, "time"))) {
			iq_time_parse_iso(json_string_value(json_object_get(e, "time")),
					  strlen(json_string_value(json_object_get(e, "time"))), &x->f.first_oom, NULL);
			snprintf(x->f.first_pod, sizeof x->f.first_pod, "%s", pod ? pod : "");
			const char *node = json_string_value(json_object_get(e, "node"));
			snprintf(x->f.first_node, sizeof x->f.first_node, "%s", node ? node : "");
		}
	}
	x->f.oom_pods = (long)json_array_size(pods);
	json_decref(pods);
	json_object_set_new(x->pat, "oom_events", a);
	x->ooms = a;
	return 0;
}
