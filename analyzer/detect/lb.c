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

/* Per upstream address: attempts and failed ones in [a, b), most failed
 * first, then by address. */
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

/* The noise of the failures in the nb windows before window i: their mean
 * per window plus two standard deviations of a Poisson count. */
static double noise_before(const struct det_window *m, size_t i, double nb)
{
	double base = 0;
	for (size_t j = i; j-- > 0 && (double)(m[i].k - m[j].k) <= nb;)
		base += (double)m[j].fail;
	double mean = base / nb;
	return mean + 2 * sqrt(mean);
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
	for (size_t i = (size_t)(end + 1); start >= 0 && i < n; i++) {
		if ((double)(m[i].k - m[end].k) > gap_min + 1)
			break;
		if ((double)m[i].fail >= min_count && (double)m[i].fail >= min_ratio * (double)m[i].total)
			end = (long)i;
	}
	/* The surge is the whole episode of failures around that: from its
	 * first 5xx to its last. Windows before the start (and after the end)
	 * belong to it while their failures stand above the noise of the
	 * baseline before the start (its mean per window plus two standard
	 * deviations of a Poisson count: with a quiet baseline, any 5xx),
	 * across quiet gaps of up to max_gap_s. A baseline that fails now and
	 * then does not stretch the surge back over it. */
	if (start >= 0) {
		for (long i = start - 1; i >= 0; i--) {
			if ((double)(m[start].k - m[i].k) > gap_min + 1)
				break;
			if ((double)m[i].fail > noise_before(m, (size_t)i, baseline_s / win))
				start = i;
		}
		double noise = noise_before(m, (size_t)start, baseline_s / win);
		for (size_t i = (size_t)(end + 1); i < n; i++) {
			if ((double)(m[i].k - m[end].k) > gap_min + 1)
				break;
			if ((double)m[i].fail > noise)
				end = (long)i;
		}
	}
	json_t *signals = json_object_get(x->pat, "signals");
	if (start < 0) {
		json_object_set_new(x->pat, "lb_5xx_surge", json_null());
		json_array_append_new(signals, det_signal("lb-5xx-surge", 0, IQ_TIME_NONE, IQ_TIME_NONE, NULL));
		return 0;
	}
	long peak = 0, c500 = 0, c502 = 0, c503 = 0, c504 = 0, c5 = 0;
	for (long i = start; i <= end; i++) {
		if (m[i].fail > peak)
			peak = m[i].fail;
		c500 += m[i].s500;
		c502 += m[i].s502;
		c503 += m[i].s503;
		c504 += m[i].s504;
		c5 += m[i].fail;
	}
	/* from the first failure to the last, both included */
	int64_t a = m[start].first_ts, last = m[end].last_ts, b = last + 1;
	x->f.surge = 1;
	x->f.surge_start = a;
	x->f.surge_end = b;
	json_t *s = json_object();
	json_object_set_new(s, "start", det_time_ns(a));
	json_object_set_new(s, "end", det_time_ns(last));
	json_object_set_new(s, "peak_per_minute", json_integer(peak));
	json_object_set_new(s, "count", json_integer(c5));
	json_object_set_new(s, "count_500", json_integer(c500));
	json_object_set_new(s, "count_502", json_integer(c502));
	json_object_set_new(s, "count_503", json_integer(c503));
	json_object_set_new(s, "count_504", json_integer(c504));
	json_object_set_new(s, "per_upstream", per_upstream_sql(x, a, b));
	/* the first failure of each status, and the last failure */
	json_t *ev = surge_evidence(x, a, b);
	if (m[end].last_id != m[start].first_id || !json_array_size(ev)) {
		json_t *e = det_evidence_of(x, m[end].last_id);
		if (e)
			json_array_append_new(ev, e);
	}
	json_object_set(s, "evidence", ev);
	json_object_set_new(x->pat, "lb_5xx_surge", s);
	json_array_append_new(signals, det_signal("lb-5xx-surge", c5, a, b, ev));
	return 0;
}

/* Stretches of at least unavailability_min_s in which requests came but
 * none was served (status < 500), in 10-second buckets; the longest one. */
static void unavailability(struct det *x, int64_t *ua, int64_t *ub)
{
	/* the impact question's params: the LB pass counts served requests
	 * in 10-second buckets, so a stretch is a whole number of them */
	const int64_t bucket = NS(10);
	const int64_t min_ns = (int64_t)(det_item_param(x, "questions", "impact", "unavailability_min_s", 30) * 1e9);
	*ua = *ub = IQ_TIME_NONE;
	int64_t cur_a = IQ_TIME_NONE, cur_b = IQ_TIME_NONE;
	for (size_t i = 0; i < x->http->nten; i++) {
		int64_t b0 = x->http->ten[i].k * bucket;
		long ok = x->http->ten[i].served;
		if (ok == 0) {
			if (cur_a == IQ_TIME_NONE || b0 - cur_b > bucket)
				cur_a = b0;
			cur_b = b0 + bucket;
			if (cur_b - cur_a > (*ub == IQ_TIME_NONE ? 0 : *ub - *ua) && cur_b - cur_a >= min_ns) {
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

/* The ingress-flood boundary. In the surge window (or, without one, the
 * busiest minute of 429s) it asks four things, each with a margin:
 *
 *   few heavy clients  clients that each sent at least heavy_factor times
 *                      the median client's requests, no more than
 *                      max_clients of them ("a few"), together sending at
 *                      least min_client_share of the window's requests;
 *   a rise             the window's request rate at least min_rate_rise
 *                      times the rate of the baseline_s before it (when
 *                      the log reaches back a minute or more before it);
 *   refused at the edge  at least min_refused_share of the failed requests
 *                      (5xx and 429) answered by the load balancer itself,
 *                      no upstream tried (when the log names upstreams);
 *   workers up         no CUDA OOM, no GPU memory sawtooth, no serving
 *                      worker killed by the host's OOM killer.
 *
 * Steady high GPU memory is not pressure: engines pre-allocate most of it
 * and training jobs hold it; the sawtooth (a climb and a drop when a worker
 * dies) is. Each test that fails is named in "reasons". */

/* Requests per client in [a, b): most first, a tie in client order (no
 * client last), with each client's first request and its failures. */
struct client {
	const char *client;
	long n, failed, refused;
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

/* What the window holds besides the clients. */
struct flood_win {
	long requests, failed, refused; /* failed: 5xx and 429; refused: of them, no upstream tried */
	long with_upstream;             /* requests whose upstream the log names */
	int64_t first_refused;          /* record id, INT64_MAX when none */
};

static struct client *clients_in(struct det *x, int64_t a, int64_t b, struct det_strs *names, size_t *n,
				 struct flood_win *w)
{
	struct client *c = NULL;
	size_t cap = 0;
	struct client none = {NULL, 0, 0, 0, INT64_MAX};
	*n = 0;
	memset(w, 0, sizeof *w);
	w->first_refused = INT64_MAX;
	sqlite3_stmt *q;
	if (det_prep(x, "SELECT h.client, h.record_id, h.status,"
			" EXISTS (SELECT 1 FROM http_upstreams u WHERE u.record_id = h.record_id AND u.addr IS NOT NULL)"
			" FROM http_requests h WHERE h.ts >= ?1 AND h.ts < ?2", &q))
		return NULL;
	sqlite3_bind_int64(q, 1, a);
	sqlite3_bind_int64(q, 2, b);
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *cl = (const char *)sqlite3_column_text(q, 0);
		int64_t id = sqlite3_column_int64(q, 1);
		int st = sqlite3_column_type(q, 2) == SQLITE_NULL ? 0 : sqlite3_column_int(q, 2);
		int up = sqlite3_column_int(q, 3);
		struct client *e = &none;
		if (cl) {
			int is_new;
			size_t k = det_strs_id(names, cl, &is_new);
			if (is_new) {
				if (k >= cap) {
					cap = cap ? cap * 2 : 64;
					c = iq_xrealloc(c, cap * sizeof *c);
				}
				c[k] = (struct client){NULL, 0, 0, 0, INT64_MAX};
			}
			e = &c[k];
		}
		int failed = st == 429 || (st >= 500 && st <= 599);
		e->n++;
		e->failed += failed;
		e->refused += failed && !up;
		if (id < e->first)
			e->first = id;
		w->requests++;
		w->failed += failed;
		w->with_upstream += up;
		if (failed && !up) {
			w->refused++;
			if (id < w->first_refused)
				w->first_refused = id;
		}
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

static json_t *ratio(double v, double scale)
{
	return isnan(v) ? json_null() : json_real(floor(v * scale + 0.5) / scale);
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
	double heavy_factor = det_param(x, "ingress-flood", "heavy_factor", 10);
	double max_clients = det_param(x, "ingress-flood", "max_clients", 10);
	double min_share = det_param(x, "ingress-flood", "min_client_share", 0.5);
	double min_rise = det_param(x, "ingress-flood", "min_rate_rise", 5);
	double min_refused = det_param(x, "ingress-flood", "min_refused_share", 0.5);
	double baseline_s = det_param(x, "ingress-flood", "baseline_s", 600);
	json_t *reasons = json_array();
	json_t *clients = json_array();
	json_t *ev = json_array();
	long heavy = 0, heavy_n = 0, nclients = 0;
	double share = NAN, busiest = NAN, median = NAN, rate = NAN, base_rate = NAN, rise = NAN, refused = NAN;
	double typical_out = NAN;
	struct flood_win w = {0, 0, 0, 0, INT64_MAX};
	if (a == IQ_TIME_NONE || b <= a) {
		json_array_append_new(reasons, json_string("no_window"));
	} else {
		struct det_strs names;
		memset(&names, 0, sizeof names);
		size_t n;
		struct client *c = clients_in(x, a, b, &names, &n, &w);
		nclients = (long)n;
		rate = (double)w.requests / ((double)(b - a) / 1e9);
		/* the baseline: the baseline_s before the window, the part of it
		 * the log covers, when that is a minute or more */
		int64_t from = a - (int64_t)(baseline_s * 1e9);
		int64_t first = det_scalar(x, "SELECT min(ts) FROM http_requests WHERE ts IS NOT NULL", IQ_TIME_NONE);
		if (first != IQ_TIME_NONE && first > from)
			from = first;
		double typical = NAN;
		if (a - from >= NS(60)) {
			/* the rate before, and the median client's requests then,
			 * scaled to the window's length */
			sqlite3_stmt *q;
			long base_n = 0;
			long *per = NULL;
			size_t nper = 0, cap = 0;
			if (det_prep(x, "SELECT count(*) FROM http_requests WHERE ts >= ?1 AND ts < ?2"
					" GROUP BY client ORDER BY 1", &q) == 0) {
				sqlite3_bind_int64(q, 1, from);
				sqlite3_bind_int64(q, 2, a);
				while (sqlite3_step(q) == SQLITE_ROW) {
					if (nper == cap) {
						cap = cap ? cap * 2 : 64;
						per = iq_xrealloc(per, cap * sizeof *per);
					}
					per[nper] = (long)sqlite3_column_int64(q, 0);
					base_n += per[nper++];
				}
				sqlite3_finalize(q);
			}
			double span = (double)(a - from) / 1e9;
			base_rate = (double)base_n / span;
			if (nper) {
				double med = nper % 2 ? (double)per[nper / 2]
						      : ((double)per[nper / 2 - 1] + (double)per[nper / 2]) / 2;
				typical = med * ((double)(b - a) / 1e9) / span;
			}
			free(per);
			rise = base_rate > 0 ? rate / base_rate : INFINITY;
		}
		if (n) {
			/* without a baseline, the median client of the window */
			median = n % 2 ? (double)c[n / 2].n : ((double)c[n / 2 - 1].n + (double)c[n / 2].n) / 2;
			busiest = (double)c[0].n / (double)w.requests;
		}
		double ref = isnan(typical) ? median : typical;
		if (ref < 1)
			ref = 1;
		for (size_t k = 0; k < n && c[k].client && (double)c[k].n >= heavy_factor * ref; k++) {
			heavy++;
			heavy_n += c[k].n;
		}
		/* the heavy clients, or the busiest three when none is */
		size_t show = heavy ? (size_t)heavy : 3;
		if ((double)show > max_clients)
			show = (size_t)max_clients;
		for (size_t k = 0; k < n && k < show; k++) {
			json_t *ci = json_object();
			json_object_set_new(ci, "client", det_str(c[k].client));
			json_object_set_new(ci, "requests", json_integer(c[k].n));
			json_object_set_new(ci, "failed", json_integer(c[k].failed));
			json_object_set_new(ci, "refused", json_integer(c[k].refused));
			json_array_append_new(clients, ci);
			if (k < 3) {
				json_t *e = det_evidence_of(x, c[k].first);
				if (e)
					json_array_append_new(ev, e);
			}
		}
		share = w.requests ? (double)(heavy ? heavy_n : c[0].n) / (double)w.requests : NAN;
		typical_out = ref;
		free(c);
		det_strs_release(&names);
		if (!heavy)
			json_array_append_new(reasons, json_string("no_heavy_client"));
		else if ((double)heavy > max_clients)
			json_array_append_new(reasons, json_string("many_clients"));
		else if (share < min_share)
			json_array_append_new(reasons, json_string("low_share"));
		if (!isnan(rise) && rise < min_rise)
			json_array_append_new(reasons, json_string("no_rise"));
		if (w.with_upstream && w.failed) {
			refused = (double)w.refused / (double)w.failed;
			if (refused < min_refused)
				json_array_append_new(reasons, json_string("not_refused"));
		}
		if (w.first_refused != INT64_MAX) {
			json_t *e = det_evidence_of(x, w.first_refused);
			if (e)
				json_array_append_new(ev, e);
		}
	}
	if (x->f.oom_events)
		json_array_append_new(reasons, json_string("cuda_oom"));
	if (x->f.sawtooth)
		json_array_append_new(reasons, json_string("gpu_sawtooth"));
	if (x->f.host_oom_workers)
		json_array_append_new(reasons, json_string("host_oom"));
	int present = json_array_size(reasons) == 0;
	x->f.flood = present;
	json_object_set_new(o, "present", json_boolean(present));
	json_object_set_new(o, "count", json_integer(present ? heavy_n : 0));
	json_object_set_new(o, "reasons", reasons);
	json_object_set_new(o, "clients", json_integer(nclients));
	json_object_set_new(o, "heavy_clients", json_integer(heavy));
	json_object_set_new(o, "typical_client_requests", ratio(typical_out, 10));
	json_object_set_new(o, "top_clients", clients);
	json_object_set_new(o, "top_client_share", ratio(share, 1000));
	json_object_set_new(o, "busiest_client_share", ratio(busiest, 1000));
	json_object_set_new(o, "requests_per_s", ratio(rate, 100));
	json_object_set_new(o, "baseline_requests_per_s", ratio(base_rate, 100));
	json_object_set_new(o, "rate_rise", isinf(rise) ? json_null() : ratio(rise, 10));
	json_object_set_new(o, "failed_requests", json_integer(w.failed));
	json_object_set_new(o, "refused_share", ratio(refused, 1000));
	json_object_set_new(o, "attributed_to", json_array());
	json_object_set_new(o, "evidence", ev);
	return o;
}
