/* cascade.c: the domino. The order in which serving pods first died of
 * CUDA OOM, and the load shift: each survivor's share of the load
 * balancer's requests before and after each death (upstream addresses are
 * tied to pods through their pod IPs). Two or more pods dying in turn,
 * with traffic moving to the survivors, is the cascade. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The pods behind the load balancer's addresses: pods (sorted, each
 * once; the first 64, all counts them all) and, per address of x->http,
 * how many of each pod's IPs it matches. Addresses are tied to pods
 * through the pod IPs of pod status. */
struct lb_pods {
	json_t *pods;
	size_t all;
	unsigned char (*reach)[64];
};

static void lb_pods_load(struct det *x, struct lb_pods *lp)
{
	const struct det_http *h = x->http;
	lp->pods = json_array();
	lp->all = 0;
	lp->reach = iq_xcalloc(h->naddr ? h->naddr : 1, sizeof *lp->reach);
	sqlite3_stmt *q;
	if (det_prep(x, "SELECT DISTINCT pod, pod_ip FROM pod_states WHERE pod_ip IS NOT NULL AND pod IS NOT NULL"
		     " ORDER BY pod, pod_ip", &q))
		return;
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *pod = (const char *)sqlite3_column_text(q, 0);
		const char *ip = (const char *)sqlite3_column_text(q, 1);
		size_t n = json_array_size(lp->pods);
		int hit = 0;
		for (size_t a = 0; a < h->naddr; a++)
			hit |= det_addr_is_ip(h->addr[a], ip);
		if (!hit)
			continue;
		size_t i = n;
		if (n && strcmp(json_string_value(json_array_get(lp->pods, n - 1)), pod) == 0) {
			i = n - 1;
		} else {
			lp->all++;
			if (n >= 64)
				continue;
			json_array_append_new(lp->pods, json_string(pod));
		}
		for (size_t a = 0; a < h->naddr; a++)
			if (det_addr_is_ip(h->addr[a], ip) && lp->reach[a][i] < 255)
				lp->reach[a][i]++;
	}
	sqlite3_finalize(q);
}

/* Attempts sent to each pod's upstreams before (side 0) or after (1)
 * death d: fills counts (indexed like lp->pods) and returns the total
 * sent to known pods. */
static long shares(struct det *x, const struct lb_pods *lp, size_t d, int side, long *counts)
{
	const struct det_http *h = x->http;
	size_t n = json_array_size(lp->pods);
	long total = 0;
	for (size_t i = 0; i < n; i++)
		counts[i] = 0;
	for (size_t a = 0; a < h->naddr; a++) {
		long c = h->shares[a] ? h->shares[a][2 * d + (size_t)side] : 0;
		if (!c)
			continue;
		for (size_t i = 0; i < n; i++) {
			counts[i] += c * lp->reach[a][i];
			total += c * lp->reach[a][i];
		}
	}
	return total;
}

static double round3(double v)
{
	return floor(v * 1000 + 0.5) / 1000;
}

/* Walks the OOM events: the first death of each pod, in order, until a
 * gap longer than max_gap_s (a pod failing long after the previous one is
 * not part of the same domino). Fills times and, when not NULL, order
 * ({pod, node, time}) and deaths (the OOM events). */
static size_t cascade_walk(struct det *x, int64_t *times, size_t max, json_t *order, json_t *deaths)
{
	double max_gap = det_param(x, "cascade", "max_gap_s", 1800);
	const char *pods[64];
	size_t n = 0;
	size_t i;
	json_t *e;
	json_array_foreach(x->ooms, i, e) {
		const char *pod = json_string_value(json_object_get(e, "pod"));
		const char *ts = json_string_value(json_object_get(e, "time"));
		if (!pod || !ts)
			continue;
		int seen = 0;
		for (size_t j = 0; j < n; j++)
			seen |= strcmp(pods[j], pod) == 0;
		if (seen || n >= max || n >= IQ_ARRAY_LEN(pods))
			continue;
		int64_t t;
		if (iq_time_parse_iso(ts, strlen(ts), &t, NULL) < 0)
			continue;
		if (n && (double)(t - times[n - 1]) > max_gap * 1e9)
			break;
		times[n] = t;
		pods[n++] = pod;
		if (order) {
			json_t *fo = json_object();
			json_object_set(fo, "pod", json_object_get(e, "pod"));
			json_object_set(fo, "node", json_object_get(e, "node"));
			json_object_set(fo, "time", json_object_get(e, "time"));
			json_array_append_new(order, fo);
		}
		if (deaths)
			json_array_append(deaths, e);
	}
	return n;
}

size_t det_cascade_deaths(struct det *x, int64_t *times, size_t max)
{
	return cascade_walk(x, times, max, NULL, NULL);
}

int det_http(struct det *x)
{
	int64_t times[64];
	size_t n = det_cascade_deaths(x, times, IQ_ARRAY_LEN(times));
	return det_http_load(x, times, n, det_param(x, "cascade", "shift_window_s", 120));
}

int det_cascade(struct det *x)
{
	double min_pods = det_param(x, "cascade", "min_pods", 2);
	json_t *order = json_array();
	json_t *deaths = json_array();   /* first OOM per pod, in order */
	int64_t times[64];
	size_t i;
	json_t *e;
	cascade_walk(x, times, IQ_ARRAY_LEN(times), order, deaths);
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
	struct lb_pods lp;
	lb_pods_load(x, &lp);
	json_t *pods = lp.pods;
	json_t *shift = json_array();
	size_t np = json_array_size(pods);
	long before[64], after[64];
	int rose = 0;
	for (size_t k = 0; np && lp.all <= 64 && k < n && k < x->http->ndeaths; k++) {
		const char *dead = json_string_value(json_object_get(json_array_get(order, k), "pod"));
		long tb = shares(x, &lp, k, 0, before);
		long ta = shares(x, &lp, k, 1, after);
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
	free(lp.reach);
	x->f.lb_pods = (long)lp.all;
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
