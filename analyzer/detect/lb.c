/* lb.c: what the load balancer saw: the 5xx surge (per minute against a
 * baseline before it), the impact on clients (failed requests, the stretch
 * with no upstream serving, streams cut), and the ingress-flood boundary
 * (a surge driven by a few clients, with no GPU memory pressure). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Evidence: the first response of each 5xx status inside [a, b). */
static json_t *surge_evidence(struct det *x, int64_t a, int64_t b)
{
	json_t *ev = json_array();
	sqlite3_stmt *q;
	if (det_prep(x, "SELECT f.path, r.line, r.ts, r.text, r.id FROM http_requests h"
			" JOIN records r ON r.id = h.record_id JOIN files f ON f.id = r.file_id"
			" WHERE h.ts >= ?1 AND h.ts < ?2 AND h.status BETWEEN 500 AND 599"
			" AND h.record_id IN (SELECT min(record_id) FROM http_requests"
			"   WHERE ts >= ?1 AND ts < ?2 AND status BETWEEN 500 AND 599 GROUP BY status)"
			" ORDER BY h.ts", &q))
		return ev;
	sqlite3_bind_int64(q, 1, a);
	sqlite3_bind_int64(q, 2, b);
	while (sqlite3_step(q) == SQLITE_ROW)
		json_array_append_new(ev, det_evidence(x, q, 0, NULL));
	sqlite3_finalize(q);
	return ev;
}

/* Per upstream address: attempts and failed ones in windows ka..kb,
 * most failed first, then by address. */
struct upsum {
	const char *addr;
	long attempts, failed;
};

static int by_failed(const void *a, const void *b)
{
	const struct upsum *x = a, *y = b;
	if (x->failed != y->failed)
		return x->failed > y->failed ? -1 : 1;
	if (!x->addr || !y->addr)
		return !y->addr - !x->addr;
	return strcmp(x->addr, y->addr);
}

static json_t *per_upstream(struct det *x, int64_t ka, int64_t kb)
{
	const struct det_http *h = x->http;
	struct upsum *u = iq_xcalloc(h->naddr ? h->naddr : 1, sizeof *u);
	for (size_t i = 0; i < h->naddr; i++)
		u[i].addr = h->addr[i];
	for (size_t i = 0; i < h->nup; i++)
		if (h->up[i].k >= ka && h->up[i].k <= kb) {
			u[h->up[i].addr].attempts += h->up[i].attempts;
			u[h->up[i].addr].failed += h->up[i].failed;
		}
	size_t n = 0;
	for (size_t i = 0; i < h->naddr; i++)
		if (u[i].attempts)
			u[n++] = u[i];
	qsort(u, n, sizeof *u, by_failed);
	json_t *ups = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "upstream", det_str(u[i].addr));
		json_object_set_new(o, "attempts", json_integer(u[i].attempts));
		json_object_set_new(o, "failed", json_integer(u[i].failed));
		json_array_append_new(ups, o);
	}
	free(u);
	return ups;
}

/* The same from SQL, for a window that is not made of whole windows. */
static json_t *per_upstream_sql(struct det *x, int64_t a, int64_t b)
{
	json_t *ups = json_array();
	sqlite3_stmt *q;
	if (det_prep(x, "SELECT u.addr, count(*), sum(u.status BETWEEN 500 AND 599) FROM http_upstreams u"
			" JOIN http_requests h ON h.record_id = u.record_id"
			" WHERE h.ts >= ?1 AND h.ts < ?2 GROUP BY u.addr ORDER BY 3 DESC, 1", &q) == 0) {
		sqlite3_bind_int64(q, 1, a);
		sqlite3_bind_int64(q, 2, b);
		while (sqlite3_step(q) == SQLITE_ROW) {
			json_t *u = json_object();
			json_object_set_new(u, "upstream", det_text(q, 0));
			json_object_set_new(u, "attempts", json_integer(sqlite3_column_int64(q, 1)));
			json_object_set_new(u, "failed", json_integer(sqlite3_column_int64(q, 2)));
			json_array_append_new(ups, u);
		}
		sqlite3_finalize(q);
	}
	return ups;
}

int det_surge(struct det *x)
{
	const struct det_window *m = x->http->win;
	size_t n = x->http->nwin;
	double factor = det_param(x, "lb-5xx-surge", "factor", 5);
	double min_count = det_param(x, "lb-5xx-surge", "min_count", 5);
	double min_ratio = det_param(x, "lb-5xx-surge", "min_ratio", 0.05);
	double baseline_s = det_param(x, "lb-5xx-surge", "baseline_s", 600);
	double win = det_param(x, "lb-5xx-surge", "window_s", 60);
	if (win <= 0)
		win = 60;
	double gap_min = det_param(x, "lb-5xx-surge", "max_gap_s", 120) / win;
	long total = 0, e5xx = 0;
	for (size_t i = 0; i < n; i++) {
		total += m[i].total;
		e5xx += m[i].fail;
	}
	x->f.lb_requests = total;
	x->f.lb_5xx = e5xx;
	/* The surge starts at the first minute whose 5xx count is at least
	 * min_count, factor times the mean per minute of the baseline window
	 * before it, and min_ratio of that minute's requests. It lasts while
	 * minutes stay elevated (min_count and min_ratio), allowing quiet gaps
	 * of up to max_gap_s. */
	long start = -1, end = -1;
	for (size_t i = 0; i < n && start < 0; i++) {
		double base = 0;
		for (size_t j = i; j-- > 0 && (double)(m[i].k - m[j].k) <= baseline_s / win;)
			base += (double)m[j].fail;
		double mean = base / (baseline_s / win);
		if ((double)m[i].fail >= min_count && (double)m[i].fail >= factor * mean &&
		    (double)m[i].fail >= min_ratio * (double)m[i].total)
			start = end = (long)i;
	}
	/* The excursion's first minutes: the minutes right before that one
	 * whose 5xx are clearly above the baseline before them (two or more,
	 * and factor times its mean per minute and its ratio of requests) are
	 * the surge's start: the first worker's in-flight requests fail
	 * before the surge reaches min_count. One stray 5xx is not. */
	while (start > 0 && m[start - 1].k == m[start].k - 1 && m[start - 1].fail >= 2) {
		size_t i = (size_t)start - 1;
		double base = 0, base_total = 0;
		for (size_t j = i; j-- > 0 && (double)(m[i].k - m[j].k) <= baseline_s / win;) {
			base += (double)m[j].fail;
			base_total += (double)m[j].total;
		}
		double mean = base / (baseline_s / win), ratio = base_total > 0 ? base / base_total : 0;
		if (!((double)m[i].fail > factor * mean && (double)m[i].fail > factor * ratio * (double)m[i].total))
			break;
		start = (long)i;
	}
	for (size_t i = (size_t)(end + 1); start >= 0 && i < n; i++) {
		if ((double)(m[i].k - m[end].k) > gap_min + 1)
			break;
		if ((double)m[i].fail >= min_count && (double)m[i].fail >= min_ratio * (double)m[i].total)
			end = (long)i;
	}
	json_t *signals = json_object_get(x->pat, "signals");
	if (start < 0) {
		json_object_set_new(x->pat, "lb_5xx_surge", json_null());
		json_array_append_new(signals, det_signal("lb-5xx-surge", 0, IQ_TIME_NONE, IQ_TIME_NONE, NULL));
		return 0;
	}
	long peak = 0, c502 = 0, c503 = 0, c504 = 0, c5 = 0;
	for (long i = start; i <= end; i++) {
		if (m[i].fail > peak)
			peak = m[i].fail;
		c502 += m[i].s502;
		c503 += m[i].s503;
		c504 += m[i].s504;
		c5 += m[i].fail;
	}
	int64_t a = (int64_t)((double)m[start].k * win * 1e9), b = (int64_t)((double)(m[end].k + 1) * win * 1e9);
	x->f.surge = 1;
	x->f.surge_start = a;
	x->f.surge_end = b;
	json_t *s = json_object();
	json_object_set_new(s, "start", det_time_ns(a));
	json_object_set_new(s, "end", det_time_ns(b));
	json_object_set_new(s, "peak_per_minute", json_integer(peak));
	json_object_set_new(s, "count_502", json_integer(c502));
	json_object_set_new(s, "count_503", json_integer(c503));
	json_object_set_new(s, "count_504", json_integer(c504));
	/* per upstream: failed attempts in the window (whole windows of the
	 * pass; a window that does not fall on them is counted again) */
	json_t *ups;
	if (a == m[start].k * x->http->win_ns && b == (m[end].k + 1) * x->http->win_ns)
		ups = per_upstream(x, m[start].k, m[end].k);
	else
		ups = per_upstream_sql(x, a, b);
	json_object_set_new(s, "per_upstream", ups);
	json_t *ev = surge_evidence(x, a, b);
	json_object_set(s, "evidence", ev);
	json_object_set_new(x->pat, "lb_5xx_surge", s);
	json_array_append_new(signals, det_signal("lb-5xx-surge", c5, a, b, ev));
	return 0;
}

/* Stretches of at least min_s in which requests came but none was served
 * (status < 500), merged over gaps of bucket_s; the longest one. */
static void unavailability(struct det *x, int64_t *ua, int64_t *ub)
{
	const int64_t bucket = NS(10);
	*ua = *ub = IQ_TIME_NONE;
	int64_t cur_a = IQ_TIME_NONE, cur_b = IQ_TIME_NONE;
	for (size_t i = 0; i < x->http->nten; i++) {
		int64_t b0 = x->http->ten[i].k * bucket;
		long ok = x->http->ten[i].served;
		if (ok == 0) {
			if (cur_a == IQ_TIME_NONE || b0 - cur_b > bucket)
				cur_a = b0;
			cur_b = b0 + bucket;
			if (cur_b - cur_a > (*ub == IQ_TIME_NONE ? 0 : *ub - *ua) && cur_b - cur_a >= NS(30)) {
				*ua = cur_a;
				*ub = cur_b;
			}
		} else {
			cur_a = cur_b = IQ_TIME_NONE;
		}
	}
}

int det_impact(struct det *x)
{
	json_t *im = json_object();
	if (x->f.lb_requests == 0) {
		json_object_set_new(im, "failed_requests", json_null());
		json_object_set_new(im, "unavailability", json_null());
		json_object_set_new(im, "dropped_streams", json_null());
		json_object_set_new(x->pat, "impact", im);
		return 0;
	}
	int64_t ua, ub;
	unavailability(x, &ua, &ub);
	json_object_set_new(im, "failed_requests", json_integer(x->http->status_5xx_all));
	if (ua != IQ_TIME_NONE) {
		json_t *u = json_object();
		json_object_set_new(u, "start", det_time_ns(ua));
		json_object_set_new(u, "end", det_time_ns(ub));
		json_object_set_new(im, "unavailability", u);
	} else {
		json_object_set_new(im, "unavailability", json_null());
	}
	/* in-flight requests cut when their upstream died: the attempt ended
	 * in 502 after the upstream had accepted it */
	json_object_set_new(im, "dropped_streams", json_integer(x->http->dropped_streams));
	json_object_set_new(x->pat, "impact", im);
	return 0;
}

/* The ingress-flood boundary: in the surge window (or, without one, the
 * busiest minute of 429s), a few clients send most requests, with no CUDA
 * OOM and no GPU memory pressure. */

/* Requests per client in [a, b): most first, a tie in client order (no
 * client first), with each client's first request. */
struct client {
	const char *client;
	long n;
	int64_t first;
};

static int by_requests(const void *a, const void *b)
{
	const struct client *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	if (!x->client || !y->client)
		return !y->client - !x->client;
	return strcmp(x->client, y->client);
}

static struct client *clients_in(struct det *x, int64_t a, int64_t b, struct det_strs *names, size_t *n)
{
	struct client *c = NULL;
	size_t cap = 0;
	struct client none = {NULL, 0, INT64_MAX};
	*n = 0;
	sqlite3_stmt *q;
	if (det_prep(x, "SELECT client, record_id FROM http_requests WHERE ts >= ?1 AND ts < ?2", &q))
		return NULL;
	sqlite3_bind_int64(q, 1, a);
	sqlite3_bind_int64(q, 2, b);
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *cl = (const char *)sqlite3_column_text(q, 0);
		int64_t id = sqlite3_column_int64(q, 1);
		struct client *e = &none;
		if (cl) {
			int is_new;
			size_t k = det_strs_id(names, cl, &is_new);
			if (is_new) {
				if (k >= cap) {
					cap = cap ? cap * 2 : 64;
					c = iq_xrealloc(c, cap * sizeof *c);
				}
				c[k] = (struct client){NULL, 0, INT64_MAX};
			}
			e = &c[k];
		}
		e->n++;
		if (id < e->first)
			e->first = id;
	}
	sqlite3_finalize(q);
	*n = names->n;
	for (size_t i = 0; i < *n; i++)
		c[i].client = names->s[i];
	if (none.n) {
		c = iq_xrealloc(c, (*n + 1) * sizeof *c);
		c[(*n)++] = none;
	}
	if (*n)
		qsort(c, *n, sizeof *c, by_requests);
	return c;
}

json_t *det_flood(struct det *x)
{
	int64_t a = x->f.surge_start, b = x->f.surge_end;
	json_t *o = json_object();
	json_object_set_new(o, "id", json_string("ingress-flood"));
	if (!x->f.surge) {
		/* the busiest minute of 429s; a tie goes to the earliest, and 429s
		 * without a time make no window */
		const struct det_http *h = x->http;
		long best = 0;
		int64_t m = -1;
		for (size_t i = 0; i < h->n429; i++)
			if (h->m429[i].served > best) {
				best = h->m429[i].served;
				m = h->m429[i].k;
			}
		if (h->null_ts_429 && h->null_ts_429 >= best)
			m = -1;
		if (m >= 0) {
			a = NS(m * 60);
			b = NS((m + 1) * 60);
		}
	}
	long top = 0, all = 0;
	json_t *clients = json_array();
	json_t *ev = json_array();
	if (a != IQ_TIME_NONE && b > a) {
		struct det_strs names;
		memset(&names, 0, sizeof names);
		size_t n;
		struct client *c = clients_in(x, a, b, &names, &n);
		for (size_t k = 0; k < n; k++) {
			all += c[k].n;
			if (k >= 3)
				continue;
			top += c[k].n;
			json_t *ci = json_object();
			json_object_set_new(ci, "client", det_str(c[k].client));
			json_object_set_new(ci, "requests", json_integer(c[k].n));
			json_array_append_new(clients, ci);
			json_t *e = det_evidence_of(x, c[k].first);
			if (e)
				json_array_append_new(ev, e);
		}
		free(c);
		det_strs_release(&names);
	}
	double share = all ? (double)top / (double)all : 0;
	double rate = b > a && a != IQ_TIME_NONE ? (double)all / ((double)(b - a) / 1e9) : 0;
	double min_share = det_param(x, "ingress-flood", "min_client_share", 0.8);
	double min_rate = det_param(x, "ingress-flood", "min_rate_per_s", 5);
	double max_gpu = det_param(x, "ingress-flood", "max_gpu_ratio", 0.95);
	int pressure = !isnan(x->f.gpu_peak_ratio) && x->f.gpu_peak_ratio >= max_gpu;
	int present = all > 0 && share >= min_share && rate >= min_rate && x->f.oom_events == 0 && !pressure;
	x->f.flood = present;
	json_object_set_new(o, "present", json_boolean(present));
	json_object_set_new(o, "count", json_integer(present ? all : 0));
	json_object_set_new(o, "top_clients", clients);
	json_object_set_new(o, "top_client_share", json_real(floor(share * 1000 + 0.5) / 1000));
	json_object_set_new(o, "requests_per_s", json_real(floor(rate * 100 + 0.5) / 100));
	json_object_set_new(o, "attributed_to", json_array());
	json_object_set_new(o, "evidence", ev);
	return o;
}
