/* pods.c: crash loops (restarts, back-off events, exit codes and reasons
 * per pod) and recovery (how long each restarted container took to serve
 * again). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int det_crashloop(struct det *x)
{
	/* Per pod: back-off events, restarts seen in pod status and in the
	 * container log files (N.log is the Nth restart), how the last
	 * instance ended. */
	static const char sql[] =
		"WITH pods AS ("
		"  SELECT object_name AS pod FROM k8s_events WHERE reason = 'BackOff'"
		"  UNION SELECT pod FROM pod_states WHERE restart_count > 0 OR reason = 'CrashLoopBackOff'"
		"  UNION SELECT pod FROM files WHERE restart > 0 AND pod IS NOT NULL)"
		" SELECT p.pod,"
		"  (SELECT coalesce(sum(count), 0) FROM k8s_events e WHERE e.object_name = p.pod AND e.reason = 'BackOff'),"
		"  (SELECT max(restart_count) FROM pod_states s WHERE s.pod = p.pod),"
		"  (SELECT max(restart) FROM files f WHERE f.pod = p.pod),"
		"  (SELECT last_exit_code FROM pod_states s WHERE s.pod = p.pod AND last_exit_code IS NOT NULL"
		"     ORDER BY restart_count DESC LIMIT 1),"
		"  (SELECT last_reason FROM pod_states s WHERE s.pod = p.pod AND last_reason IS NOT NULL"
		"     ORDER BY restart_count DESC LIMIT 1),"
		"  (SELECT container FROM pod_states s WHERE s.pod = p.pod ORDER BY restart_count DESC LIMIT 1),"
		"  (SELECT min(first_ts) FROM k8s_events e WHERE e.object_name = p.pod AND e.reason = 'BackOff'),"
		"  (SELECT max(last_ts) FROM k8s_events e WHERE e.object_name = p.pod AND e.reason = 'BackOff'),"
		"  (SELECT min(record_id) FROM k8s_events e WHERE e.object_name = p.pod AND e.reason = 'BackOff'),"
		"  (SELECT record_id FROM pod_states s WHERE s.pod = p.pod ORDER BY restart_count DESC LIMIT 1)"
		" FROM pods p WHERE p.pod IS NOT NULL ORDER BY p.pod";
	double min_restarts = det_param(x, "crashloop", "min_restarts", 2);
	sqlite3_stmt *q;
	int rc = det_prep(x, sql, &q);
	if (rc)
		return rc;
	json_t *loops = json_array();
	json_t *ev = json_array();
	long count = 0;
	int64_t first = IQ_TIME_NONE, last = IQ_TIME_NONE;
	while (sqlite3_step(q) == SQLITE_ROW) {
		long backoffs = (long)sqlite3_column_int64(q, 1);
		long restarts = sqlite3_column_type(q, 2) != SQLITE_NULL ? (long)sqlite3_column_int64(q, 2) : 0;
		long files = sqlite3_column_type(q, 3) != SQLITE_NULL ? (long)sqlite3_column_int64(q, 3) : 0;
		if (files > restarts)
			restarts = files;
		/* a crash loop: the kubelet backed off, or it restarted min_restarts times */
		int looping = backoffs > 0 || restarts >= (long)min_restarts;
		json_t *o = json_object();
		json_object_set_new(o, "pod", det_text(q, 0));
		json_object_set_new(o, "container", det_text(q, 6));
		json_object_set_new(o, "restarts", json_integer(restarts));
		json_object_set_new(o, "backoff_events", json_integer(backoffs));
		json_object_set_new(o, "last_exit_code", sqlite3_column_type(q, 4) == SQLITE_NULL ? json_null()
				    : json_integer(sqlite3_column_int64(q, 4)));
		json_object_set_new(o, "last_reason", det_text(q, 5));
		json_object_set_new(o, "crash_loop", json_boolean(looping));
		json_t *pe = json_array();
		for (int c = 9; c <= 10; c++) {
			if (sqlite3_column_type(q, c) == SQLITE_NULL)
				continue;
			/* the back-off event's message; the container's state (why it waits) */
			json_t *e = det_evidence_what(x, sqlite3_column_int64(q, c), c == 10 ? "reason" : NULL);
			if (e) {
				json_array_append(pe, e);
				if (looping && json_array_size(ev) < IQ_MAX_EVIDENCE)
					json_array_append(ev, e);
				json_decref(e);
			}
		}
		json_object_set_new(o, "evidence", pe);
		json_array_append_new(loops, o);
		if (!looping)
			continue;
		count++;
		if (sqlite3_column_type(q, 7) != SQLITE_NULL) {
			int64_t t = sqlite3_column_int64(q, 7);
			if (first == IQ_TIME_NONE || t < first)
				first = t;
		}
		if (sqlite3_column_type(q, 8) != SQLITE_NULL) {
			int64_t t = sqlite3_column_int64(q, 8);
			if (last == IQ_TIME_NONE || t > last)
				last = t;
		}
	}
	sqlite3_finalize(q);
	x->f.crashloop_pods = count;
	json_object_set_new(x->pat, "crash_loops", loops);
	json_array_append_new(json_object_get(x->pat, "signals"), det_signal("crashloop", count, first, last, ev));
	return 0;
}

/* Recovery: for every container instance after a restart (N.log, N >= 1),
 * the time from its first line to the line that says it serves. */

struct instance {
	char *pod, *node, *container;
	int64_t restart, file_id, ready, ready_id, start;
	int has_start;
};

/* The latest death of pod's container before t (a CUDA OOM or a host OOM
 * kill), or INT64_MIN: no line of the next instance can be older. */
static int64_t death_before(struct det *x, const char *pod, const char *cont, int64_t t)
{
	int64_t best = INT64_MIN;
	json_t *host = NULL;
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(x->pat, "boundaries"), i, b)
		if (json_is_string(json_object_get(b, "id")) &&
		    strcmp(json_string_value(json_object_get(b, "id")), "host-oom") == 0)
			host = json_object_get(b, "attributed_to");
	json_t *lists[2] = {x->ooms, host};
	for (int k = 0; k < 2; k++) {
		json_t *e;
		json_array_foreach(lists[k], i, e) {
			const char *p = json_string_value(json_object_get(e, "pod"));
			const char *c = json_string_value(json_object_get(e, "container"));
			const char *ts = json_string_value(json_object_get(e, "time"));
			int64_t d;
			if (!p || !ts || strcmp(p, pod) != 0 || (c && cont && strcmp(c, cont) != 0) ||
			    iq_time_parse_iso(ts, strlen(ts), &d, NULL) < 0)
				continue;
			if (d <= t && d > best)
				best = d;
		}
	}
	return best;
}

static int by_start(const void *a, const void *b)
{
	const struct instance *x = a, *y = b;
	if (x->has_start != y->has_start)
		return x->has_start ? 1 : -1;
	if (x->has_start && x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->file_id < y->file_id ? -1 : x->file_id > y->file_id;
}

int det_recovery(struct det *x)
{
	/* the engine-ready fact of the pack marks "serving again" */
	static const char sql[] =
		"WITH ready AS (SELECT r.file_id, min(r.ts) AS ts, min(r.id) AS id FROM signal_matches m"
		"   JOIN records r ON r.id = m.record_id WHERE m.pack = ?1 AND m.signal = 'engine-ready'"
		"   GROUP BY r.file_id)"
		"SELECT f.pod, f.restart, f.node, f.container, f.id, ready.ts, ready.id"
		" FROM files f JOIN ready ON ready.file_id = f.id"
		" WHERE f.restart >= 1 AND f.pod IS NOT NULL AND f.format IS NOT NULL"
		"  AND f.path NOT LIKE '%.gz' AND f.path NOT GLOB '*.log.[0-9]*'"
		" ORDER BY f.id";
	/* the instance's first line, from the death that ended the instance
	 * before it: the file's first time when that is in the window, else
	 * a scan of the file's own records (its id range) */
	static const char first_sql[] =
		"SELECT CASE WHEN f.first_ts BETWEEN ?2 AND ?3 THEN f.first_ts ELSE"
		" (SELECT min(ts) FROM records WHERE id BETWEEN f.first_record AND f.last_record"
		"  AND pod = ?1 AND ts >= ?2 AND ts <= ?3) END FROM files f WHERE f.id = ?4";
	sqlite3_stmt *q, *fq;
	int rc = det_prep(x, sql, &q);
	if (rc)
		return rc;
	if ((rc = det_prep(x, first_sql, &fq))) {
		sqlite3_finalize(q);
		return rc;
	}
	sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
	struct instance *in = NULL;
	size_t n = 0, cap = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			in = iq_xrealloc(in, cap * sizeof *in);
		}
		struct instance *e = &in[n++];
		memset(e, 0, sizeof *e);
		e->pod = iq_xstrdup((const char *)sqlite3_column_text(q, 0));
		e->restart = sqlite3_column_int64(q, 1);
		e->node = sqlite3_column_text(q, 2) ? iq_xstrdup((const char *)sqlite3_column_text(q, 2)) : NULL;
		e->container = sqlite3_column_text(q, 3) ? iq_xstrdup((const char *)sqlite3_column_text(q, 3)) : NULL;
		e->file_id = sqlite3_column_int64(q, 4);
		e->ready = sqlite3_column_type(q, 5) == SQLITE_NULL ? IQ_TIME_NONE : sqlite3_column_int64(q, 5);
		e->ready_id = sqlite3_column_int64(q, 6);
		if (e->ready == IQ_TIME_NONE)
			continue;
		sqlite3_bind_text(fq, 1, e->pod, -1, SQLITE_STATIC);
		sqlite3_bind_int64(fq, 2, death_before(x, e->pod, e->container, e->ready));
		sqlite3_bind_int64(fq, 3, e->ready);
		sqlite3_bind_int64(fq, 4, e->file_id);
		if (sqlite3_step(fq) == SQLITE_ROW && sqlite3_column_type(fq, 0) != SQLITE_NULL) {
			e->start = sqlite3_column_int64(fq, 0);
			e->has_start = 1;
		}
		sqlite3_reset(fq);
	}
	sqlite3_finalize(q);
	sqlite3_finalize(fq);
	/* in order of start (the old "ORDER BY start"), then of file */
	if (n)
		qsort(in, n, sizeof *in, by_start);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		struct instance *e = &in[i];
		if (e->has_start && e->ready != IQ_TIME_NONE) {
			double s = (double)(e->ready - e->start) / 1e9;
			json_t *o = json_object();
			json_object_set_new(o, "pod", det_str(e->pod));
			json_object_set_new(o, "restart", json_integer(e->restart));
			json_object_set_new(o, "node", det_str(e->node));
			json_object_set_new(o, "started", det_time_ns(e->start));
			json_object_set_new(o, "ready", det_time_ns(e->ready));
			json_object_set_new(o, "restart_to_ready_s", json_real((double)(long long)(s * 10 + 0.5) / 10));
			json_t *ev = json_array();
			json_t *ee = det_evidence_what(x, e->ready_id, "ready");
			if (ee)
				json_array_append_new(ev, ee);
			json_object_set_new(o, "evidence", ev);
			json_array_append_new(a, o);
		}
		free(e->pod);
		free(e->node);
		free(e->container);
	}
	free(in);
	json_object_set_new(x->pat, "recovery", a);
	return 0;
}
