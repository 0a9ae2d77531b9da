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

/* Recovery: for every container instance after a restart (N.log, N >= 1,
 * with its rotated pieces), from the container's start to when Kubernetes
 * marked the pod Ready again: the kubelet's readiness line, else the pod's
 * Ready condition, else the first request the load balancer routed to it
 * and it answered. The engine's own "ready" line and its model-load time
 * are reported beside, never taken for readiness: the probe passes, and
 * the Service sends traffic, seconds later. */

enum ready_basis { RB_KUBELET, RB_CONDITION, RB_PROBE, RB_LB, RB_N };
static const char *const basis_name[RB_N] = {"kubelet-readiness", "ready-condition", "estimate-engine-ready-probe",
					     "lb-first-request"};

/* The recovery question's parameters (the pack says why each):
 * start_slack_s, how much later than the container's start (its status,
 * whole seconds) its first log line may be and still be its start;
 * lb_ready_max_s, how long after a restart the first request the LB
 * routed to the pod still says it became ready; probe_period_default_s,
 * a readiness probe's period when the manifest does not set one. */
#define RECOVERY_PARAM(x, key, def) det_item_param((x), "questions", "recovery", (key), (def))

struct instance {
	char *pod, *node, *container;
	int64_t restart, start, end;     /* end: the next instance's start or death */
	int64_t ready, ready_id, server_ready, server_id, load_id;
	double load_s;
	int64_t earliest, latest;        /* RB_PROBE: the bounds of the estimate */
	double period_s;
	int period_said;                 /* the period is the manifest's, not the default */
	int basis;                       /* enum ready_basis, -1 none */
	int died;                        /* died before it was ready */
};

/* A moment the pod was marked ready, by basis. */
struct mark {
	char *pod;
	int64_t ts, id;
	int basis;
};

struct marks {
	struct mark *v;
	size_t n, cap;
};

static void mark_add(struct marks *m, const char *pod, int64_t ts, int64_t id, int basis)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 32;
		m->v = iq_xrealloc(m->v, m->cap * sizeof *m->v);
	}
	m->v[m->n++] = (struct mark){iq_xstrdup(pod), ts, id, basis};
}

/* Deaths of pod's container in (after, before): CUDA OOMs and host OOM
 * kills; the earliest, or INT64_MAX. */
static int64_t death_after(struct det *x, const char *pod, const char *cont, int64_t after)
{
	int64_t best = INT64_MAX;
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
			if (d > after && d < best)
				best = d;
		}
	}
	return best;
}

static int by_pod_start(const void *a, const void *b)
{
	const struct instance *x = a, *y = b;
	int c = strcmp(x->pod, y->pod);
	if (c)
		return c;
	c = strcmp(x->container ? x->container : "", y->container ? y->container : "");
	if (c)
		return c;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_start(const void *a, const void *b)
{
	const struct instance *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return strcmp(x->pod, y->pod);
}

/* The instances: one per (pod, container, restart >= 1) of a serving
 * container (one whose lines the pack recognises as the engine's: a
 * log-shipper sidecar's restart is not the service's recovery), started
 * at the first line of its files (the rotated pieces of N.log are the
 * same instance). */
static int load_instances(struct det *x, struct instance **out, size_t *nout)
{
	static const char sql[] =
		"WITH serving AS (SELECT DISTINCT r.pod, r.container FROM signal_matches m"
		"  JOIN records r ON r.id = m.record_id WHERE m.pack = ?1 AND m.signal IN"
		"  ('cuda-oom', 'engine-ready', 'model-loaded', 'engine-args', 'engine-batch'))"
		"SELECT i.pod, i.container, i.restart, i.node, i.t,"
		" (SELECT min(s.started_at) FROM pod_states s WHERE s.pod = i.pod AND s.container IS i.container"
		"   AND s.restart_count = i.restart)"
		" FROM (SELECT pod, container, restart, min(node) AS node, min(t) AS t FROM (SELECT f.pod, f.container,"
		"  f.restart, f.node, coalesce(f.first_ts, (SELECT min(ts) FROM records r WHERE r.id BETWEEN"
		"   f.first_record AND f.last_record AND r.file_id = f.id)) AS t FROM files f"
		"  WHERE f.restart >= 1 AND f.pod IS NOT NULL AND f.format IS NOT NULL)"
		" WHERE t IS NOT NULL GROUP BY pod, container, restart) i"
		" WHERE EXISTS (SELECT 1 FROM serving v WHERE v.pod = i.pod AND v.container IS i.container)";
	sqlite3_stmt *q;
	int rc = det_prep(x, sql, &q);
	if (rc)
		return rc;
	sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
	int64_t slack = (int64_t)(RECOVERY_PARAM(x, "start_slack_s", 2) * 1e9);
	struct instance *in = NULL;
	size_t n = 0, cap = 0;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			in = iq_xrealloc(in, cap * sizeof *in);
		}
		struct instance *e = &in[n++];
		memset(e, 0, sizeof *e);
		e->pod = iq_xstrdup((const char *)sqlite3_column_text(q, 0));
		e->container = sqlite3_column_text(q, 1) ? iq_xstrdup((const char *)sqlite3_column_text(q, 1)) : NULL;
		e->restart = sqlite3_column_int64(q, 2);
		e->node = sqlite3_column_text(q, 3) ? iq_xstrdup((const char *)sqlite3_column_text(q, 3)) : NULL;
		e->start = sqlite3_column_int64(q, 4);
		/* the container's start as its status says (whole seconds):
		 * the first kept line is later when rotation dropped the
		 * instance's head */
		if (sqlite3_column_type(q, 5) != SQLITE_NULL) {
			int64_t st = sqlite3_column_int64(q, 5);
			if (st <= e->start && e->start - st >= slack)
				e->start = st;
		}
		e->ready = e->server_ready = IQ_TIME_NONE;
		e->load_s = -1;
		e->basis = -1;
	}
	sqlite3_finalize(q);
	*out = in;
	*nout = n;
	return rc == SQLITE_DONE ? 0 : det_fail(x, "recovery instances");
}

/* Readiness marks from the kubelet's journal and the pods' Ready
 * conditions. */
static int load_marks(struct det *x, struct marks *m)
{
	static const char *const sql[2] = {
		"SELECT json_extract(m.captures, '$.pod'), r.ts, r.id FROM signal_matches m"
		" JOIN records r ON r.id = m.record_id WHERE m.pack = ?1 AND m.signal = 'pod-ready'"
		" AND r.ts IS NOT NULL",
		"SELECT pod, ready_since, min(record_id) FROM pod_states WHERE ready_since IS NOT NULL"
		" AND pod IS NOT NULL GROUP BY pod, ready_since",
	};
	for (int k = 0; k < 2; k++) {
		sqlite3_stmt *q;
		int rc = det_prep(x, sql[k], &q);
		if (rc)
			return rc;
		if (k == 0)
			sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
		while ((rc = sqlite3_step(q)) == SQLITE_ROW)
			if (sqlite3_column_text(q, 0))
				mark_add(m, (const char *)sqlite3_column_text(q, 0), sqlite3_column_int64(q, 1),
					 sqlite3_column_int64(q, 2), k == 0 ? RB_KUBELET : RB_CONDITION);
		sqlite3_finalize(q);
		if (rc != SQLITE_DONE)
			return det_fail(x, "recovery readiness");
	}
	return 0;
}

/* The first of pod's marks of basis in [from, to]. */
static const struct mark *first_mark(const struct marks *m, const char *pod, int basis, int64_t from, int64_t to)
{
	const struct mark *best = NULL;
	for (size_t i = 0; i < m->n; i++) {
		const struct mark *k = &m->v[i];
		if (k->basis == basis && k->ts >= from && k->ts <= to && strcmp(k->pod, pod) == 0 &&
		    (!best || k->ts < best->ts))
			best = k;
	}
	return best;
}

static int pod_has_marks(const struct marks *m, const char *pod, int basis)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].basis == basis && strcmp(m->v[i].pod, pod) == 0)
			return 1;
	return 0;
}

/* The first request in [from, to] that the LB sent to one of pod's
 * addresses and the pod answered (status below 500). */
static int lb_first(struct det *x, sqlite3_stmt *q, const struct instance *e, int64_t to, int64_t *ts, int64_t *id)
{
	sqlite3_reset(q);
	sqlite3_bind_text(q, 1, e->pod, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 2, e->start);
	/* the requests' time index, walked from the start: a pod not sent
	 * traffic within lb_ready_max_s is not called ready by it */
	int64_t max = (int64_t)(RECOVERY_PARAM(x, "lb_ready_max_s", 1800) * 1e9);
	sqlite3_bind_int64(q, 3, to - e->start > max ? e->start + max : to);
	int rc = sqlite3_step(q);
	if (rc == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
		*ts = sqlite3_column_int64(q, 0);
		*id = sqlite3_column_int64(q, 1);
		return 1;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		det_fail(x, "recovery load balancer");
	return 0;
}

/* The engine's own start-up line and model-load figure in the instance's
 * files, within [start, to]. */
static void engine_lines(struct det *x, sqlite3_stmt *q, struct instance *e, int64_t to)
{
	sqlite3_reset(q);
	sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, e->pod, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 3, e->restart);
	sqlite3_bind_int64(q, 4, e->start);
	sqlite3_bind_int64(q, 5, to);
	if (e->container)
		sqlite3_bind_text(q, 6, e->container, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(q, 6);
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *sig = (const char *)sqlite3_column_text(q, 0);
		if (sig && strcmp(sig, "engine-ready") == 0 && e->server_ready == IQ_TIME_NONE) {
			e->server_ready = sqlite3_column_int64(q, 1);
			e->server_id = sqlite3_column_int64(q, 2);
		} else if (sig && strcmp(sig, "model-loaded") == 0 && e->load_s < 0 &&
			   sqlite3_column_type(q, 3) != SQLITE_NULL) {
			e->load_s = sqlite3_column_double(q, 3);
			e->load_id = sqlite3_column_int64(q, 2);
		}
	}
}

/* The readiness probe's period and initial delay for pod: from the
 * workload whose name the pod's starts with (the longest such), else
 * Kubernetes' defaults; *said tells whether the bundle said. */
static void probe_timing(sqlite3_stmt *q, const char *pod, double def_period, double *period, double *delay,
			 int *said)
{
	*period = def_period;
	*delay = 0;
	*said = 0;
	sqlite3_reset(q);
	sqlite3_bind_text(q, 1, pod, -1, SQLITE_STATIC);
	size_t best[2] = {0, 0};
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(q, 0);
		size_t len = (size_t)sqlite3_column_int64(q, 2);
		int k = key && strcmp(key, "readiness_period_s") == 0 ? 0 : 1;
		if (len < best[k])
			continue;
		best[k] = len;
		double v = sqlite3_column_double(q, 1);
		if (k == 0 && v > 0) {
			*period = v;
			*said = 1;
		} else if (k == 1 && v >= 0) {
			*delay = v;
		}
	}
}

static json_t *seconds(int64_t from, int64_t to)
{
	double s = (double)(to - from) / 1e9;
	return json_real((double)(long long)(s * 10 + (s < 0 ? -0.5 : 0.5)) / 10);
}

static void add_ev(struct det *x, json_t *ev, int64_t id, const char *what)
{
	json_t *e = det_evidence_what(x, id, what);
	if (e)
		json_array_append_new(ev, e);
}

static json_t *instance_json(struct det *x, const struct instance *e)
{
	json_t *o = json_object();
	json_object_set_new(o, "pod", det_str(e->pod));
	json_object_set_new(o, "container", det_str(e->container));
	json_object_set_new(o, "restart", json_integer(e->restart));
	json_object_set_new(o, "node", det_str(e->node));
	json_object_set_new(o, "started", det_time_ns(e->start));
	json_object_set_new(o, "ready", e->ready != IQ_TIME_NONE ? det_time_ns(e->ready) : json_null());
	json_object_set_new(o, "ready_basis", e->basis >= 0 ? json_string(basis_name[e->basis]) : json_null());
	if (e->basis == RB_PROBE) {
		json_t *w = json_object();
		json_object_set_new(w, "earliest", det_time_ns(e->earliest));
		json_object_set_new(w, "latest", det_time_ns(e->latest));
		json_object_set_new(w, "probe_period_s", json_real(e->period_s));
		json_object_set_new(w, "probe_period_from", json_string(e->period_said ? "manifest" : "kubernetes-default"));
		json_object_set_new(o, "ready_window", w);
	}
	json_object_set_new(o, "restart_to_ready_s", e->ready != IQ_TIME_NONE ? seconds(e->start, e->ready)
				    : json_null());
	json_object_set_new(o, "server_ready", e->server_ready != IQ_TIME_NONE ? det_time_ns(e->server_ready)
				    : json_null());
	json_object_set_new(o, "model_load_s", e->load_s >= 0 ? json_real(e->load_s) : json_null());
	json_object_set_new(o, "died_before_ready", json_boolean(e->died));
	json_t *ev = json_array();
	if (e->ready != IQ_TIME_NONE && e->basis != RB_PROBE)
		add_ev(x, ev, e->ready_id, e->basis == RB_CONDITION ? "ready_since" : NULL);
	if (e->server_ready != IQ_TIME_NONE)
		add_ev(x, ev, e->server_id, NULL);
	if (e->load_s >= 0 && (e->server_ready == IQ_TIME_NONE || e->load_id != e->server_id))
		add_ev(x, ev, e->load_id, NULL);
	json_object_set_new(o, "evidence", ev);
	return o;
}

int det_recovery(struct det *x)
{
	static const char lb_sql[] =
		"SELECT h.ts, h.record_id FROM http_requests h JOIN http_upstreams u ON u.record_id = h.record_id"
		" WHERE h.ts >= ?2 AND h.ts <= ?3 AND u.status BETWEEN 100 AND 499"
		"  AND EXISTS (SELECT 1 FROM pod_states s WHERE s.pod = ?1 AND s.pod_ip IS NOT NULL"
		"   AND substr(u.addr, 1, length(s.pod_ip) + 1) = s.pod_ip || ':')"
		" ORDER BY h.ts LIMIT 1";
	static const char eng_sql[] =
		"SELECT m.signal, r.ts, r.id, json_extract(m.captures, '$.load_s') FROM files f"
		" JOIN records r ON r.id BETWEEN f.first_record AND f.last_record AND r.file_id = f.id"
		" JOIN signal_matches m ON m.record_id = r.id AND m.pack = ?1"
		"  AND m.signal IN ('engine-ready', 'model-loaded')"
		" WHERE f.pod = ?2 AND f.restart = ?3 AND (f.container = ?6 OR ?6 IS NULL)"
		"  AND r.ts >= ?4 AND r.ts <= ?5 ORDER BY r.ts";
	static const char probe_sql[] =
		"SELECT key, value, length(scope) FROM config_settings WHERE key IN ('readiness_period_s',"
		" 'readiness_initial_delay_s') AND scope IS NOT NULL AND substr(?1, 1, length(scope) + 1) = scope || '-'";
	struct instance *in = NULL;
	size_t n = 0;
	struct marks m = {0};
	sqlite3_stmt *lq = NULL, *eq = NULL, *pq = NULL;
	int rc = load_instances(x, &in, &n);
	if (!rc)
		rc = load_marks(x, &m);
	if (!rc)
		rc = det_prep(x, lb_sql, &lq);
	if (!rc)
		rc = det_prep(x, eng_sql, &eq);
	if (!rc)
		rc = det_prep(x, probe_sql, &pq);
	if (n)
		qsort(in, n, sizeof *in, by_pod_start);
	for (size_t i = 0; !rc && i < n; i++) {
		struct instance *e = &in[i];
		int same = i + 1 < n && strcmp(in[i + 1].pod, e->pod) == 0 &&
			   strcmp(in[i + 1].container ? in[i + 1].container : "", e->container ? e->container : "") == 0;
		int64_t next = same ? in[i + 1].start : INT64_MAX;
		int64_t death = death_after(x, e->pod, e->container, e->start);
		e->end = death < next ? death : next;
		/* the most direct basis the bundle has for this pod */
		for (int b = RB_KUBELET; b <= RB_CONDITION && e->basis < 0; b++) {
			const struct mark *k = first_mark(&m, e->pod, b, e->start, e->end);
			if (k) {
				e->ready = k->ts;
				e->ready_id = k->id;
				e->basis = b;
			} else if (b == RB_KUBELET && pod_has_marks(&m, e->pod, b)) {
				break; /* the kubelet logged this pod's probes: not ready in this instance */
			}
		}
		engine_lines(x, eq, e, e->end);
		int64_t lb = IQ_TIME_NONE, lb_id = 0;
		if (e->basis < 0 && !pod_has_marks(&m, e->pod, RB_KUBELET) && !lb_first(x, lq, e, e->end, &lb, &lb_id))
			lb = IQ_TIME_NONE;
		if (e->basis < 0 && !pod_has_marks(&m, e->pod, RB_KUBELET) && e->server_ready != IQ_TIME_NONE) {
			/* the probe passes at its first run after the engine
			 * listens: within one period of it, and no later than
			 * the first request the LB routed to the pod */
			double period, delay, def_period = RECOVERY_PARAM(x, "probe_period_default_s", 10);
			int said;
			probe_timing(pq, e->pod, def_period, &period, &delay, &said);
			int64_t first_probe = e->start + (int64_t)(delay * 1e9);
			int64_t from = e->server_ready > first_probe ? e->server_ready : first_probe;
			int64_t to = from + (int64_t)(period * 1e9);
			if (lb != IQ_TIME_NONE && lb >= e->server_ready && lb < to)
				to = lb;
			if (to > e->end)
				to = e->end;
			if (from <= to) {
				e->earliest = from;
				e->latest = to;
				e->period_s = period;
				e->period_said = said;
				e->ready = from + (to - from) / 2;
				e->basis = RB_PROBE;
			}
		}
		if (e->basis < 0 && lb != IQ_TIME_NONE) {
			e->ready = lb;
			e->ready_id = lb_id;
			e->basis = RB_LB;
		}
		e->died = e->basis < 0 && death < next;
	}
	if (pq)
		sqlite3_finalize(pq);
	if (lq)
		sqlite3_finalize(lq);
	if (eq)
		sqlite3_finalize(eq);
	if (n)
		qsort(in, n, sizeof *in, by_start);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			json_array_append_new(a, instance_json(x, &in[i]));
		free(in[i].pod);
		free(in[i].node);
		free(in[i].container);
	}
	free(in);
	for (size_t i = 0; i < m.n; i++)
		free(m.v[i].pod);
	free(m.v);
	json_object_set_new(x->pat, "recovery", a);
	return rc;
}
