/* cascade.c: the domino. The order in which serving pods first died of
 * CUDA OOM, and the load shift: each survivor's share of the load
 * balancer's requests before and after each death (upstream addresses are
 * tied to pods through their pod IPs). Two or more pods dying in turn,
 * with traffic moving to the survivors, is the cascade. */
#include <math.h>
#include <string.h>

#include "internal.h"

/* Requests sent to each pod's upstream in [a, b): fills counts (indexed
 * like pods) and returns the total sent to known pods. */
static long shares(struct det *x, json_t *pods, int64_t a, int64_t b, long *counts)
{
	sqlite3_stmt *q;
	size_t n = json_array_size(pods);
	long total = 0;
	for (size_t i = 0; i < n; i++)
		counts[i] = 0;
	if (det_prep(x, "SELECT p.pod, count(*) FROM http_upstreams u JOIN http_requests h ON h.record_id = u.record_id"
			" JOIN (SELECT DISTINCT pod, pod_ip FROM pod_states WHERE pod_ip IS NOT NULL) p"
			"   ON u.addr = p.pod_ip OR u.addr LIKE p.pod_ip || ':%'"
			" WHERE h.ts >= ?1 AND h.ts < ?2 GROUP BY p.pod", &q))
		return 0;
	sqlite3_bind_int64(q, 1, a);
	sqlite3_bind_int64(q, 2, b);
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *pod = (const char *)sqlite3_column_text(q, 0);
		for (size_t i = 0; i < n; i++)
			if (pod && strcmp(json_string_value(json_array_get(pods, i)), pod) == 0) {
				counts[i] = (long)sqlite3_column_int64(q, 1);
				total += counts[i];
			}
	}
	sqlite3_finalize(q);
	return total;
}

static double round3(double v)
{
	return floor(v * 1000 + 0.5) / 1000;
}

int det_cascade(struct det *x)
{
	double window = det_param(x, "cascade", "shift_window_s", 120);
	double max_gap = det_param(x, "cascade", "max_gap_s", 1800);
	double min_pods = det_param(x, "cascade", "min_pods", 2);
	json_t *order = json_array();
	json_t *deaths = json_array();   /* first OOM per pod, in order */
	int64_t times[64];
	size_t i;
	json_t *e;
	json_array_foreach(x->ooms, i, e) {
		const char *pod = json_string_value(json_object_get(e, "pod"));
		const char *ts = json_string_value(json_object_get(e, "time"));
		if (!pod || !ts)
			continue;
		int seen = 0;
		size_t j;
		json_t *o;
		json_array_foreach(order, j, o)
			seen |= strcmp(json_string_value(json_object_get(o, "pod")), pod) == 0;
		if (seen || json_array_size(order) >= IQ_ARRAY_LEN(times))
			continue;
		int64_t t;
		if (iq_time_parse_iso(ts, strlen(ts), &t, NULL) < 0)
			continue;
		/* a pod failing long after the previous one is not part of the same domino */
		if (json_array_size(order) && (double)(t - times[json_array_size(order) - 1]) > max_gap * 1e9)
			break;
		times[json_array_size(order)] = t;
		json_t *fo = json_object();
		json_object_set(fo, "pod", json_object_get(e, "pod"));
		json_object_set(fo, "node", json_object_get(e, "node"));
		json_object_set(fo, "time", json_object_get(e, "time"));
		json_array_append_new(order, fo);
		json_array_append(deaths, e);
	}
	size_t n = json_array_size(order);
	/* nodes affected */
	json_t *nodes = json_array();
	json_array_foreach(order, i, e) {
		const char *nd = json_string_value(json_object_get(e, "node"));
		int seen = 0;
		size_t j;
		json_t *v;
		json_array_foreach(nodes, j, v)
			seen |= nd && strcmp(json_string_value(v), nd) == 0;
		if (nd && !seen)
			json_array_append_new(nodes, json_string(nd));
	}
	/* load shift: the pods the LB knows, survivors' shares around each death */
	json_t *pods = json_array();
	sqlite3_stmt *q;
	if (det_prep(x, "SELECT DISTINCT pod FROM pod_states WHERE pod_ip IS NOT NULL AND pod IN"
			" (SELECT pod FROM pod_states s JOIN http_upstreams u ON u.addr = s.pod_ip"
			"  OR u.addr LIKE s.pod_ip || ':%') ORDER BY pod", &q) == 0) {
		while (sqlite3_step(q) == SQLITE_ROW)
			json_array_append_new(pods, det_text(q, 0));
		sqlite3_finalize(q);
	}
	json_t *shift = json_array();
	size_t np = json_array_size(pods);
	long before[64], after[64];
	int rose = 0;
	for (size_t k = 0; np && np <= 64 && k < n; k++) {
		const char *dead = json_string_value(json_object_get(json_array_get(order, k), "pod"));
		int64_t t = times[k];
		long tb = shares(x, pods, t - (int64_t)(window * 1e9), t, before);
		long ta = shares(x, pods, t, t + (int64_t)(window * 1e9), after);
		if (!tb || !ta)
			continue;
		for (size_t p = 0; p < np; p++) {
			const char *pod = json_string_value(json_array_get(pods, p));
			if (strcmp(pod, dead) == 0)
				continue;
			double sb = (double)before[p] / (double)tb, sa = (double)after[p] / (double)ta;
			json_t *o = json_object();
			json_object_set_new(o, "after_pod", json_string(dead));
			json_object_set_new(o, "survivor", json_string(pod));
			json_object_set_new(o, "share_before", json_real(round3(sb)));
			json_object_set_new(o, "share_after", json_real(round3(sa)));
			json_array_append_new(shift, o);
			rose |= sa > sb;
		}
	}
	x->f.load_shift_seen = rose;
	/* The domino: two or more pods in turn; when the LB's view can be tied
	 * to pods, traffic must also have moved to the survivors. */
	int measurable = json_array_size(shift) > 0;
	x->f.cascade = (double)n >= min_pods && n >= 2 && (!measurable || rose);
	json_t *sigev = json_array();
	json_array_foreach(deaths, i, e)
		json_array_append(sigev, json_array_get(json_object_get(e, "evidence"), 0));
	json_decref(deaths);
	if (n >= 1) {
		json_t *c = json_object();
		json_object_set_new(c, "failure_order", order);
		json_object_set_new(c, "pods_affected", json_integer((json_int_t)n));
		json_object_set_new(c, "nodes_affected", json_integer((json_int_t)json_array_size(nodes)));
		json_object_set_new(c, "load_shift", shift);
		json_object_set_new(x->pat, "cascade", c);
	} else {
		json_decref(order);
		json_decref(shift);
		json_object_set_new(x->pat, "cascade", json_null());
	}
	json_decref(nodes);
	json_decref(pods);
	json_array_append_new(json_object_get(x->pat, "signals"),
			      det_signal("cascade", x->f.cascade ? (long)n : 0, n ? times[0] : IQ_TIME_NONE,
					 n ? times[n - 1] : IQ_TIME_NONE, x->f.cascade ? sigev : (json_decref(sigev), NULL)));
	return 0;
}
