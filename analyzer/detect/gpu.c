/* gpu.c: the GPU memory sawtooth: per GPU, memory climbing to the top
 * (>= peak of total) and then dropping sharply (the worker died and its
 * memory was freed), cycle after cycle. A GPU held steadily near full (a
 * training job, vLLM's pre-allocated KV cache) has no drop and is no
 * sawtooth. Each drop is tied to the CUDA OOM death it follows. */
#include <math.h>
#include <string.h>

#include "internal.h"

struct series {
	char node[256];
	char gpu[128];
	long cycles;
	double peak;
	int64_t peak_ts, peak_rec; /* the last sample at the top */
	int at_top;
	json_t *ev, *deaths;
};

static void flush(struct det *x, struct series *s, json_t *out, json_t *sigev, long *total,
		  int64_t *first, int64_t *last)
{
	IQ_UNUSED(x);
	if (!s->ev)
		return;
	if (s->cycles > 0 || s->peak >= 0) {
		json_t *o = json_object();
		json_object_set_new(o, "node", s->node[0] ? json_string(s->node) : json_null());
		json_object_set_new(o, "gpu", json_string(s->gpu));
		json_object_set_new(o, "cycles", json_integer(s->cycles));
		json_object_set_new(o, "peak_ratio", json_real(floor(s->peak * 10000 + 0.5) / 10000));
		json_object_set_new(o, "deaths", s->deaths);
		json_object_set_new(o, "evidence", s->ev);
		if (s->cycles > 0) {
			size_t i;
			json_t *e;
			json_array_foreach(s->ev, i, e)
				if (json_array_size(sigev) < IQ_MAX_EVIDENCE)
					json_array_append(sigev, e);
			json_array_append_new(out, o);
		} else {
			json_decref(o);
		}
	} else {
		json_decref(s->ev);
		json_decref(s->deaths);
	}
	*total += s->cycles;
	IQ_UNUSED(first);
	IQ_UNUSED(last);
	s->ev = s->deaths = NULL;
}

/* The OOM death on node closest before t (within a minute), or NULL. */
static json_t *death_before(struct det *x, const char *node, int64_t peak_ts, int64_t t)
{
	size_t i;
	json_t *e;
	json_t *best = NULL;
	json_array_foreach(x->ooms, i, e) {
		const char *n = json_string_value(json_object_get(e, "node"));
		const char *ts = json_string_value(json_object_get(e, "time"));
		int64_t ot;
		if (!n || !ts || strcmp(n, node) != 0 || iq_time_parse_iso(ts, strlen(ts), &ot, NULL) < 0)
			continue;
		if (ot >= peak_ts - NS(60) && ot <= t + NS(5))
			best = e;
	}
	return best;
}

int det_sawtooth(struct det *x)
{
	double top = det_param(x, "gpu-mem-sawtooth", "peak_ratio", 0.99);
	double drop = det_param(x, "gpu-mem-sawtooth", "drop_ratio", 0.3);
	double window = det_param(x, "gpu-mem-sawtooth", "drop_window_s", 120);
	sqlite3_stmt *q;
	int rc = det_prep(x,
			  "SELECT coalesce(node, ''), coalesce(uuid, pci_bus, CAST(gpu_index AS TEXT), '?'),"
			  " mem_used_mib / mem_total_mib, ts, record_id FROM gpu_samples"
			  " WHERE ts IS NOT NULL AND mem_used_mib IS NOT NULL AND mem_total_mib > 0"
			  " ORDER BY 1, 2, ts", &q);
	if (rc)
		return rc;
	json_t *out = json_array();
	json_t *sigev = json_array();
	struct series s;
	memset(&s, 0, sizeof s);
	long total = 0, samples = 0;
	int64_t first = IQ_TIME_NONE, last = IQ_TIME_NONE;
	x->f.gpu_peak_ratio = NAN;
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *node = (const char *)sqlite3_column_text(q, 0);
		const char *gpu = (const char *)sqlite3_column_text(q, 1);
		double r = sqlite3_column_double(q, 2);
		int64_t t = sqlite3_column_int64(q, 3);
		int64_t rec = sqlite3_column_int64(q, 4);
		samples++;
		if (!s.ev || strcmp(s.node, node) || strcmp(s.gpu, gpu)) {
			flush(x, &s, out, sigev, &total, &first, &last);
			memset(&s, 0, sizeof s);
			snprintf(s.node, sizeof s.node, "%s", node);
			snprintf(s.gpu, sizeof s.gpu, "%s", gpu);
			s.ev = json_array();
			s.deaths = json_array();
			s.peak = -1;
		}
		if (r > s.peak)
			s.peak = r;
		if (isnan(x->f.gpu_peak_ratio) || r > x->f.gpu_peak_ratio)
			x->f.gpu_peak_ratio = r;
		if (r >= top) {
			s.at_top = 1;
			s.peak_ts = t;
			s.peak_rec = rec;
			continue;
		}
		if (s.at_top && r <= top - drop && (double)(t - s.peak_ts) <= window * 1e9) {
			s.cycles++;
			if (first == IQ_TIME_NONE)
				first = s.peak_ts;
			last = t;
			json_t *e = det_evidence_of(x, s.peak_rec);
			if (e)
				json_array_append_new(s.ev, e);
			e = det_evidence_of(x, rec);
			if (e)
				json_array_append_new(s.ev, e);
			json_t *d = death_before(x, node, s.peak_ts, t);
			json_t *dd = json_object();
			json_object_set_new(dd, "drop", det_time_ns(t));
			json_object_set(dd, "pod", d ? json_object_get(d, "pod") : json_null());
			json_object_set(dd, "oom_time", d ? json_object_get(d, "time") : json_null());
			json_array_append_new(s.deaths, dd);
		}
		if (r < top)
			s.at_top = s.at_top && (double)(t - s.peak_ts) <= window * 1e9 && r > top - drop;
	}
	sqlite3_finalize(q);
	flush(x, &s, out, sigev, &total, &first, &last);
	x->f.sawtooth = total > 0;
	x->f.gpu_samples = samples;
	json_object_set_new(x->pat, "sawtooth", out);
	json_array_append_new(json_object_get(x->pat, "signals"),
			      det_signal("gpu-mem-sawtooth", total, first, last, sigev));
	return 0;
}
