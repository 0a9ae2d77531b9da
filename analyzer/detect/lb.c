/* lb.c: what the load balancer saw: the 5xx surge (per minute against a
 * baseline before it), the impact on clients (failed requests, the stretch
 * with no upstream serving, streams cut), and the ingress-flood boundary
 * (a surge driven by a few clients, with no GPU memory pressure). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct minute {
	int64_t m;       /* window index: ts / window */
	long total, e5xx, s502, s503, s504, s429;
};

/* Per window (window_s, default a minute): requests, the failures counted
 * (the pack's statuses, default 500-599) and each 5xx status. */
static int load_minutes(struct det *x, struct minute **out, size_t *n)
{
	double st[32];
	size_t nst = det_param_list(x, "lb-5xx-surge", "statuses", st, IQ_ARRAY_LEN(st));
	double win = det_param(x, "lb-5xx-surge", "window_s", 60);
	struct iq_buf sql;
	iq_buf_init(&sql);
	iq_buf_printf(&sql, "SELECT ts / %lld, count(*), sum(", (long long)(win > 0 ? win * 1e9 : 6e10));
	if (nst) {
		iq_buf_adds(&sql, "status IN (");
		for (size_t i = 0; i < nst; i++)
			iq_buf_printf(&sql, "%s%d", i ? "," : "", (int)st[i]);
		iq_buf_adds(&sql, ")");
	} else {
		iq_buf_adds(&sql, "status BETWEEN 500 AND 599");
	}
	iq_buf_adds(&sql, "), sum(status = 502), sum(status = 503), sum(status = 504), sum(status = 429)"
		    " FROM http_requests WHERE ts IS NOT NULL GROUP BY 1 ORDER BY 1");
	sqlite3_stmt *q;
	int rc = det_prep(x, sql.p, &q);
	iq_buf_release(&sql);
	if (rc)
		return rc;
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			*out = iq_xrealloc(*out, cap * sizeof **out);
		}
		struct minute *m = &(*out)[(*n)++];
		m->m = sqlite3_column_int64(q, 0);
		m->total = (long)sqlite3_column_int64(q, 1);
		m->e5xx = (long)sqlite3_column_int64(q, 2);
		m->s502 = (long)sqlite3_column_int64(q, 3);
		m->s503 = (long)sqlite3_column_int64(q, 4);
		m->s504 = (long)sqlite3_column_int64(q, 5);
		m->s429 = (long)sqlite3_column_int64(q, 6);
	}
	sqlite3_finalize(q);
	return 0;
}

/* Evidence: the first response of each 5xx status inside [a, b). */
static json_t *surge_evidence(struct det *x, int64_t a, int64_t b)
{
	json_t *ev = json_array();
	sqlite3_stmt *q;
	if (det_prep(x, "SELECT f.path, r.line, r.ts, r.text FROM http_requests h"
			" JOIN records r ON r.id = h.record_id JOIN files f ON f.id = r.file_id"
			" WHERE h.ts >= ?1 AND h.ts < ?2 AND h.status BETWEEN 500 AND 599"
			" AND h.record_id IN (SELECT min(record_id) FROM http_requests"
			"   WHERE ts >= ?1 AND ts < ?2 AND status BETWEEN 500 AND 599 GROUP BY status)"
			" ORDER BY h.ts", &q))
		return ev;
	sqlite3_bind_int64(q, 1, a);
	sqlite3_bind_int64(q, 2, b);
	while (sqlite3_step(q) == SQLITE_ROW)
		json_array_append_new(ev, det_evidence(q, 0));
	sqlite3_finalize(q);
	return ev;
}

int det_surge(struct det *x)
{
	struct minute *m;
	size_t n;
	int rc = load_minutes(x, &m, &n);
	if (rc)
		return rc;
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
		e5xx += m[i].e5xx;
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
		for (size_t j = i; j-- > 0 && (double)(m[i].m - m[j].m) <= baseline_s / win;)
			base += (double)m[j].e5xx;
		double mean = base / (baseline_s / win);
		if ((double)m[i].e5xx >= min_count && (double)m[i].e5xx >= factor * mean &&
		    (double)m[i].e5xx >= min_ratio * (double)m[i].total)
			start = end = (long)i;
	}
	for (size_t i = (size_t)(start + 1); start >= 0 && i < n; i++) {
		if ((double)(m[i].m - m[end].m) > gap_min + 1)
			break;
		if ((double)m[i].e5xx >= min_count && (double)m[i].e5xx >= min_ratio * (double)m[i].total)
			end = (long)i;
	}
	json_t *signals = json_object_get(x->pat, "signals");
	if (start < 0) {
		json_object_set_new(x->pat, "lb_5xx_surge", json_null());
		json_array_append_new(signals, det_signal("lb-5xx-surge", 0, IQ_TIME_NONE, IQ_TIME_NONE, NULL));
		free(m);
		return 0;
	}
	long peak = 0, c502 = 0, c503 = 0, c504 = 0, c5 = 0;
	for (long i = start; i <= end; i++) {
		if (m[i].e5xx > peak)
			peak = m[i].e5xx;
		c502 += m[i].s502;
		c503 += m[i].s503;
		c504 += m[i].s504;
		c5 += m[i].e5xx;
	}
	int64_t a = (int64_t)((double)m[start].m * win * 1e9), b = (int64_t)((double)(m[end].m + 1) * win * 1e9);
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
	/* per upstream: failed attempts in the window */
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
	json_object_set_new(s, "per_upstream", ups);
	json_t *ev = surge_evidence(x, a, b);
	json_object_set(s, "evidence", ev);
	json_object_set_new(x->pat, "lb_5xx_surge", s);
	json_array_append_new(signals, det_signal("lb-5xx-surge", c5, a, b, ev));
	free(m);
	return 0;
}

/* Stretches of at least min_s in which requests came but none was served
 * (status < 500), merged over gaps of bucket_s; the longest one. */
static int unavailability(struct det *x, int64_t *ua, int64_t *ub)
{
	const int64_t bucket = NS(10);
	sqlite3_stmt *q;
	*ua = *ub = IQ_TIME_NONE;
	int rc = det_prep(x, "SELECT ts / 10000000000, sum(status < 500 AND status > 0) FROM http_requests"
			     " WHERE ts IS NOT NULL GROUP BY 1 ORDER BY 1", &q);
	if (rc)
		return rc;
	int64_t cur_a = IQ_TIME_NONE, cur_b = IQ_TIME_NONE;
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t b0 = sqlite3_column_int64(q, 0) * bucket;
		long ok = (long)sqlite3_column_int64(q, 1);
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
	sqlite3_finalize(q);
	return 0;
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
	int rc = unavailability(x, &ua, &ub);
	if (rc) {
		json_decref(im);
		return rc;
	}
	json_object_set_new(im, "failed_requests",
			    json_integer(det_scalar(x, "SELECT count(*) FROM http_requests WHERE status >= 500", 0)));
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
	json_object_set_new(im, "dropped_streams",
			    json_integer(det_scalar(x, "SELECT count(DISTINCT record_id) FROM http_upstreams"
						       " WHERE status = 502 AND time_s > 0", 0)));
	json_object_set_new(x->pat, "impact", im);
	return 0;
}

/* The ingress-flood boundary: in the surge window (or, without one, the
 * busiest minute of 429s), a few clients send most requests, with no CUDA
 * OOM and no GPU memory pressure. */

json_t *det_flood(struct det *x)
{
	int64_t a = x->f.surge_start, b = x->f.surge_end;
	json_t *o = json_object();
	json_object_set_new(o, "id", json_string("ingress-flood"));
	if (!x->f.surge) {
		int64_t m = det_scalar(x, "SELECT ts / 60000000000 FROM http_requests WHERE status = 429"
				       " GROUP BY 1 ORDER BY count(*) DESC LIMIT 1", -1);
		if (m >= 0) {
			a = NS(m * 60);
			b = NS((m + 1) * 60);
		}
	}
	long top = 0, all = 0;
	json_t *clients = json_array();
	json_t *ev = json_array();
	if (a != IQ_TIME_NONE && b > a) {
		sqlite3_stmt *q;
		if (det_prep(x, "SELECT client, count(*), min(record_id) FROM http_requests WHERE ts >= ?1 AND ts < ?2"
				" GROUP BY client ORDER BY 2 DESC", &q) == 0) {
			sqlite3_bind_int64(q, 1, a);
			sqlite3_bind_int64(q, 2, b);
			int k = 0;
			while (sqlite3_step(q) == SQLITE_ROW) {
				long c = (long)sqlite3_column_int64(q, 1);
				all += c;
				if (k++ < 3) {
					top += c;
					json_t *ci = json_object();
					json_object_set_new(ci, "client", det_text(q, 0));
					json_object_set_new(ci, "requests", json_integer(c));
					json_array_append_new(clients, ci);
					json_t *e = det_evidence_of(x, sqlite3_column_int64(q, 2));
					if (e)
						json_array_append_new(ev, e);
				}
			}
			sqlite3_finalize(q);
		}
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
