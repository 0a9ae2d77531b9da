/* phases.c: the incident's phases for the timeline and the postmortem:
 * when the outage began (the first request that failed, or the first
 * worker death), when it could have been detected (the first warning the
 * cluster raised), when it was mitigated (the first worker started with a
 * lower batch or memory setting than the one that died) and when it ended
 * (the last failed request of the surge, or the last recovery). Each with
 * the basis in words and its evidence. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static json_t *phase(int64_t t, const char *basis, json_t *ev)
{
	json_t *p = json_object();
	json_object_set_new(p, "time", det_time_ns(t));
	json_object_set_new(p, "basis", json_string(basis));
	json_t *a = json_array();
	if (ev)
		json_array_append_new(a, ev);
	json_object_set_new(p, "evidence", a);
	return p;
}

/* The first record matching where (with ?1 = from), as evidence; its time. */
static json_t *first_of(struct det *x, const char *sql, int64_t from, int64_t to, int64_t *t)
{
	sqlite3_stmt *q;
	json_t *e = NULL;
	*t = IQ_TIME_NONE;
	if (det_prep(x, sql, &q))
		return NULL;
	sqlite3_bind_int64(q, 1, from);
	sqlite3_bind_int64(q, 2, to);
	if (sqlite3_step(q) == SQLITE_ROW) {
		*t = sqlite3_column_int64(q, 2);
		e = det_evidence(x, q, 0, NULL);
	}
	sqlite3_finalize(q);
	return e;
}

/* A setting's value as a number, from the engine's argument dump. */
static double seqs_of(const char *text)
{
	const char *p = text ? strstr(text, "max_num_seqs") : NULL;
	if (!p)
		return -1;
	p += 12;
	while (*p == '\'' || *p == ':' || *p == '=' || *p == ' ')
		p++;
	return strtod(p, NULL);
}

int det_phases(struct det *x)
{
	json_t *ph = json_object();
	int64_t lo = x->f.first_oom != IQ_TIME_NONE ? x->f.first_oom - NS(600) : INT64_MIN + 1;
	int64_t hi = INT64_MAX;
	int64_t begin = IQ_TIME_NONE, t;

	/* outage begins: the first failed request from the first death on */
	json_t *e = first_of(x, "SELECT f.path, r.line, r.ts, r.text, r.id FROM http_requests h JOIN records r"
			     " ON r.id = h.record_id JOIN files f ON f.id = r.file_id"
			     " WHERE h.status >= 500 AND h.ts >= ?1 AND h.ts <= ?2 ORDER BY h.ts LIMIT 1",
			     x->f.first_oom != IQ_TIME_NONE ? x->f.first_oom - NS(5) : lo, hi, &t);
	/* LB logs stamp whole seconds: a 5xx in the OOM's second is its effect */
	if (x->f.first_oom != IQ_TIME_NONE && (t == IQ_TIME_NONE || x->f.first_oom <= t + NS(1))) {
		json_decref(e);
		json_t *oe = json_array_get(json_object_get(json_array_get(x->ooms, 0), "evidence"), 0);
		begin = x->f.first_oom;
		json_object_set_new(ph, "outage_begins", phase(begin, "the first worker died of a CUDA OOM",
							       oe ? json_incref(oe) : NULL));
	} else if (t != IQ_TIME_NONE) {
		begin = t;
		json_object_set_new(ph, "outage_begins", phase(t, "the first request failed with 5xx", e));
	} else {
		json_object_set_new(ph, "outage_begins", json_null());
	}

	/* detected: the first warning the cluster raised after it began */
	if (begin != IQ_TIME_NONE) {
		e = first_of(x, "SELECT f.path, r.line, coalesce(k.first_ts, k.ts), r.text, r.id FROM k8s_events k JOIN records r"
			     " ON r.id = k.record_id JOIN files f ON f.id = r.file_id"
			     " WHERE k.type = 'Warning' AND coalesce(k.first_ts, k.ts) >= ?1 AND k.ts <= ?2"
			     " ORDER BY coalesce(k.first_ts, k.ts) LIMIT 1", begin, hi, &t);
		int64_t ts = x->f.surge ? x->f.surge_start : IQ_TIME_NONE;
		if (e && (ts == IQ_TIME_NONE || t <= ts + NS(60)))
			json_object_set_new(ph, "detected", phase(t, "the first Kubernetes warning event", e));
		else if (ts != IQ_TIME_NONE) {
			json_decref(e);
			json_t *sev = json_array_get(json_object_get(json_object_get(x->pat, "lb_5xx_surge"), "evidence"), 0);
			json_object_set_new(ph, "detected", phase(ts + NS(60), "the first full minute of the 5xx surge",
								  sev ? json_incref(sev) : NULL));
		} else
			json_object_set_new(ph, "detected", json_null());
	} else {
		json_object_set_new(ph, "detected", json_null());
	}

	/* mitigated: the first engine started with fewer sequences per batch
	 * than the one that died first */
	sqlite3_stmt *q;
	double died = -1;
	int mitigated = 0;
	if (begin != IQ_TIME_NONE && det_prep(x, "SELECT f.path, r.line, r.ts, r.text, r.id FROM signal_matches m"
					      " JOIN records r ON r.id = m.record_id JOIN files f ON f.id = r.file_id"
					      " WHERE m.pack = ?1 AND m.signal = 'engine-args' ORDER BY r.ts", &q) == 0) {
		sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
		while (sqlite3_step(q) == SQLITE_ROW) {
			double v = seqs_of((const char *)sqlite3_column_text(q, 3));
			int64_t rt = sqlite3_column_int64(q, 2);
			if (rt <= begin) {
				died = v;
				continue;
			}
			if (died > 0 && v > 0 && v < died) {
				json_object_set_new(ph, "mitigated", phase(rt, "a worker started with a lower max_num_seqs",
									   det_evidence(x, q, 0, NULL)));
				mitigated = 1;
				break;
			}
		}
		sqlite3_finalize(q);
	}
	if (!mitigated)
		json_object_set_new(ph, "mitigated", json_null());

	/* outage ends: the end of the 5xx surge */
	if (x->f.surge) {
		e = first_of(x, "SELECT f.path, r.line, r.ts, r.text, r.id FROM http_requests h JOIN records r"
			     " ON r.id = h.record_id JOIN files f ON f.id = r.file_id"
			     " WHERE h.status >= 500 AND h.ts >= ?1 AND h.ts < ?2 ORDER BY h.ts DESC LIMIT 1",
			     x->f.surge_start, x->f.surge_end, &t);
		json_object_set_new(ph, "outage_ends", phase(t, "the last failed request of the 5xx surge", e));
	} else {
		json_object_set_new(ph, "outage_ends", json_null());
	}
	json_object_set_new(x->pat, "phases", ph);
	return 0;
}
