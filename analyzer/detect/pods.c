/* pods.c: crash loops (restarts, back-off events, exit codes and reasons
 * per pod) and recovery (how long each restarted container took to serve
 * again). */
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
			json_t *e = det_evidence_of(x, sqlite3_column_int64(q, c));
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

int det_recovery(struct det *x)
{
	/* the engine-ready fact of the pack marks "serving again" */
	static const char sql[] =
		"WITH ready AS (SELECT r.file_id, min(r.ts) AS ts, min(r.id) AS id FROM signal_matches m"
		"   JOIN records r ON r.id = m.record_id WHERE m.pack = ?1 AND m.signal = 'engine-ready'"
		"   GROUP BY r.file_id)"
		"SELECT f.pod, f.restart, f.node,"
		" (SELECT min(ts) FROM records r WHERE r.file_id = f.id), ready.ts, ready.id"
		" FROM files f JOIN ready ON ready.file_id = f.id"
		" WHERE f.restart >= 1 AND f.pod IS NOT NULL AND f.format IS NOT NULL"
		"  AND f.path NOT LIKE '%.gz' AND f.path NOT GLOB '*.log.[0-9]*'"
		" ORDER BY 4";
	sqlite3_stmt *q;
	int rc = det_prep(x, sql, &q);
	if (rc)
		return rc;
	sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
	json_t *a = json_array();
	while (sqlite3_step(q) == SQLITE_ROW) {
		if (sqlite3_column_type(q, 3) == SQLITE_NULL || sqlite3_column_type(q, 4) == SQLITE_NULL)
			continue;
		double s = (double)(sqlite3_column_int64(q, 4) - sqlite3_column_int64(q, 3)) / 1e9;
		json_t *o = json_object();
		json_object_set_new(o, "pod", det_text(q, 0));
		json_object_set_new(o, "restart", json_integer(sqlite3_column_int64(q, 1)));
		json_object_set_new(o, "node", det_text(q, 2));
		json_object_set_new(o, "started", det_time(q, 3));
		json_object_set_new(o, "ready", det_time(q, 4));
		json_object_set_new(o, "restart_to_ready_s", json_real((double)(long long)(s * 10 + 0.5) / 10));
		json_t *ev = json_array();
		json_t *e = det_evidence_of(x, sqlite3_column_int64(q, 5));
		if (e)
			json_array_append_new(ev, e);
		json_object_set_new(o, "evidence", ev);
		json_array_append_new(a, o);
	}
	sqlite3_finalize(q);
	json_object_set_new(x->pat, "recovery", a);
	return 0;
}
