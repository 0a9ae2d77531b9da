/* charts.c: the data behind the postmortem's charts (GPU memory per GPU,
 * 5xx per minute, requests per upstream, pod lifetimes), read from the
 * database with bounded queries and bucketed, and their Mermaid blocks;
 * svg.c draws the same data as files in charts/. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report_int.h"

struct win {
	int64_t t0, t1;
};

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* The window all charts share: the outage (OUTAGE BEGINS to OUTAGE ENDS)
 * with a quarter of its length, at least 3 minutes, either side; else the
 * incident window of the findings; within the span of the GPU samples and
 * LB requests. */
static int chart_window(struct iq_store *s, json_t *doc, json_t *pat, struct win *w)
{
	sqlite3_stmt *q;
	w->t0 = IQ_TIME_NONE;
	w->t1 = IQ_TIME_NONE;
	if (sqlite3_prepare_v2(iq_store_db(s),
			       /* one aggregate per subquery: each is then one step of an index */
			       "SELECT min(ts), max(ts) FROM gpu_samples WHERE ts IS NOT NULL"
			       " UNION ALL SELECT (SELECT min(ts) FROM http_requests WHERE ts IS NOT NULL),"
			       " (SELECT max(ts) FROM http_requests WHERE ts IS NOT NULL)",
			       -1, &q, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(q) == SQLITE_ROW) {
		if (sqlite3_column_type(q, 0) == SQLITE_NULL)
			continue;
		int64_t a = sqlite3_column_int64(q, 0), b = sqlite3_column_int64(q, 1);
		if (w->t0 == IQ_TIME_NONE || a < w->t0)
			w->t0 = a;
		if (w->t1 == IQ_TIME_NONE || b > w->t1)
			w->t1 = b;
	}
	sqlite3_finalize(q);
	if (w->t0 == IQ_TIME_NONE)
		return -1;
	json_t *ph = json_object_get(pat, "phases");
	int64_t b = iq_json_time(json_object_get(ph, "outage_begins"), "time");
	int64_t e = iq_json_time(json_object_get(ph, "outage_ends"), "time");
	if (b == IQ_TIME_NONE || e == IQ_TIME_NONE || e < b) {
		json_t *iw = json_object_get(doc, "incident_window");
		b = iq_json_time(iw, "start");
		e = iq_json_time(iw, "end");
	}
	if (b != IQ_TIME_NONE && e != IQ_TIME_NONE && e >= b) {
		int64_t margin = (e - b) / 4;
		if (margin < 180 * IQ_NS_PER_SEC)
			margin = 180 * IQ_NS_PER_SEC;
		if (w->t0 < b - margin)
			w->t0 = b - margin;
		if (w->t1 > e + margin)
			w->t1 = e + margin;
	}
	if (w->t1 <= w->t0)
		w->t1 = w->t0 + 60 * IQ_NS_PER_SEC;
	return 0;
}

/* Buckets of whole seconds (whole minutes when minutes is set) from a
 * minute boundary, at most nb of them over the window. */
static void bucket(struct iq_chart *c, const struct win *w, size_t nb, int minutes)
{
	int64_t unit = (minutes ? 60 : 1) * IQ_NS_PER_SEC;
	int64_t t0 = w->t0 - ((w->t0 % (60 * IQ_NS_PER_SEC)) + 60 * IQ_NS_PER_SEC) % (60 * IQ_NS_PER_SEC);
	int64_t span = w->t1 - t0 + 1;
	int64_t step = (span + (int64_t)nb - 1) / (int64_t)nb;
	step = (step + unit - 1) / unit * unit;
	c->t0 = t0;
	c->step = step;
	c->nb = (size_t)((span + step - 1) / step);
	if (c->nb > nb)
		c->nb = nb;
	if (c->nb == 0)
		c->nb = 1;
}

static struct iq_series *series_new(struct iq_chart *c, size_t n, double fill)
{
	c->ser = iq_xcalloc(n ? n : 1, sizeof *c->ser);
	c->nser = n;
	for (size_t i = 0; i < n; i++)
		for (size_t b = 0; b < IQ_CHART_MAX_BUCKETS; b++)
			c->ser[i].y[b] = fill;
	return c->ser;
}

static long bucket_of(const struct iq_chart *c, int64_t t)
{
	if (t < c->t0)
		return -1;
	int64_t b = (t - c->t0) / c->step;
	return b < (int64_t)c->nb ? (long)b : -1;
}

static void chart_init(struct iq_chart *c, const char *name)
{
	memset(c, 0, sizeof *c);
	c->name = name;
	c->hline = -1;
	c->band0 = c->band1 = IQ_TIME_NONE;
}

/* GPU memory used, % of total, per GPU: the largest sample of a bucket. */
static int gpu_chart(struct iq_chart *c, struct iq_store *s, json_t *pat,
		     const struct win *w, size_t nb, const char *lang)
{
	chart_init(c, "gpu-memory");
	sqlite3 *db = iq_store_db(s);
	sqlite3_stmt *q;
	char nodes[IQ_CHART_SERIES][64];
	long gpus[IQ_CHART_SERIES];
	size_t n = 0;
	if (sqlite3_prepare_v2(db, "SELECT coalesce(node, ''), coalesce(gpu_index, -1) FROM gpu_samples"
				   " WHERE ts IS NOT NULL AND mem_total_mib > 0 GROUP BY 1, 2 ORDER BY 1, 2",
			       -1, &q, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(q) == SQLITE_ROW && n < IQ_CHART_SERIES) {
		snprintf(nodes[n], sizeof nodes[0], "%s", (const char *)sqlite3_column_text(q, 0));
		gpus[n++] = (long)sqlite3_column_int64(q, 1);
	}
	sqlite3_finalize(q);
	if (!n)
		return -1;
	/* Mermaid's x labels must stay apart: whole minutes there */
	bucket(c, w, nb, nb <= IQ_MERMAID_POINTS);
	series_new(c, n, NAN);
	if (sqlite3_prepare_v2(db, "SELECT ts, mem_used_mib * 100.0 / mem_total_mib FROM gpu_samples"
				   " WHERE coalesce(node, '') = ?1 AND coalesce(gpu_index, -1) = ?2"
				   " AND ts IS NOT NULL AND mem_total_mib > 0 AND mem_used_mib IS NOT NULL"
				   " ORDER BY ts", -1, &q, NULL) != SQLITE_OK)
		return -1;
	for (size_t i = 0; i < n; i++) {
		snprintf(c->ser[i].name, sizeof c->ser[i].name, iq_msg(lang, "chart.gpu.series"), gpus[i],
			 nodes[i]);
		sqlite3_bind_text(q, 1, nodes[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 2, gpus[i]);
		while (sqlite3_step(q) == SQLITE_ROW) {
			long b = bucket_of(c, sqlite3_column_int64(q, 0));
			double v = sqlite3_column_double(q, 1);
			if (b >= 0 && (isnan(c->ser[i].y[b]) || v > c->ser[i].y[b]))
				c->ser[i].y[b] = v;
		}
		sqlite3_reset(q);
	}
	sqlite3_finalize(q);
	snprintf(c->title, sizeof c->title, "%s", iq_msg(lang, "chart.gpu.title"));
	snprintf(c->xlabel, sizeof c->xlabel, "%s", iq_msg(lang, "chart.time"));
	/* the axis where the GPUs run: a full GPU sits at 95-97 %, and the climb
	 * to 100 % is what matters; the drops (a dead worker) go below it */
	double lo = 100;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < c->nb; k++)
			if (!isnan(c->ser[i].y[k]) && c->ser[i].y[k] >= 50 && c->ser[i].y[k] < lo)
				lo = c->ser[i].y[k];
	lo = floor((lo - 2) / 5) * 5;
	c->ymin = lo < 0 ? 0 : lo > 90 ? 90 : lo;
	c->ymax = 101;
	c->panels = n > 1;
	snprintf(c->ylabel, sizeof c->ylabel, iq_msg(lang, "chart.gpu.y"), c->ymin);
	snprintf(c->below_label, sizeof c->below_label, iq_msg(lang, "chart.gpu.below"), c->ymin);
	c->hline = 100;
	snprintf(c->hline_label, sizeof c->hline_label, "%s", iq_msg(lang, "chart.gpu.full"));
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(pat, "oom_events"), i, o) {
		if (c->nmarks >= IQ_CHART_MARKS)
			break;
		int64_t t = iq_json_time(o, "time");
		if (t == IQ_TIME_NONE)
			continue;
		struct iq_mark *m = &c->marks[c->nmarks++];
		m->t = t;
		m->series = -1;
		for (size_t k = 0; k < n; k++)
			if (strcmp(nodes[k], str(o, "node")) == 0)
				m->series = (int)k;
		snprintf(m->label, sizeof m->label, "OOM %s", str(o, "pod"));
	}
	return 0;
}

/* ---- the load balancer per minute, for the 5xx and upstream charts ---- */

/* Per minute from t0 (a minute boundary) over nmin minutes: responses
 * >= 500 and each upstream address's attempts, from one read of
 * http_requests and http_upstreams in record_id order (merged; an attempt
 * read out of that order takes its request's time from a lookup). */
/* The 5xx statuses charted apart; the rest of 5xx is one more. */
static const int split_status[] = {500, 502, 503, 504};
#define NSPLIT 5

static int status_class(long st)
{
	for (int k = 0; k < 4; k++)
		if (st == split_status[k])
			return k;
	return 4;
}

struct lbmin {
	int64_t t0;
	size_t nmin;
	long *e5xx[NSPLIT];   /* per status class (split_status, other 5xx) */
	char **addr;
	long **att;
	size_t naddr;
	int ok;
};

#define LBMIN_CELLS (4u << 20) /* most address-minutes kept; past that, SQL per chart */

static long *lbmin_series(struct lbmin *m, const char *addr)
{
	for (size_t i = 0; i < m->naddr; i++)
		if (strcmp(m->addr[i], addr) == 0)
			return m->att[i];
	if ((m->naddr + 1) * m->nmin > LBMIN_CELLS) {
		m->ok = 0;
		return NULL;
	}
	m->addr = iq_xrealloc(m->addr, (m->naddr + 1) * sizeof *m->addr);
	m->att = iq_xrealloc(m->att, (m->naddr + 1) * sizeof *m->att);
	m->addr[m->naddr] = iq_xstrdup(addr);
	m->att[m->naddr] = iq_xcalloc(m->nmin ? m->nmin : 1, sizeof **m->att);
	return m->att[m->naddr++];
}

static void lbmin_load(struct lbmin *m, struct iq_store *s, int64_t t0, int64_t t1)
{
	const int64_t minute = 60 * IQ_NS_PER_SEC;
	memset(m, 0, sizeof *m);
	m->t0 = t0;
	m->nmin = t1 > t0 ? (size_t)((t1 - t0 + minute - 1) / minute) : 0;
	m->ok = m->nmin > 0 && m->nmin <= LBMIN_CELLS;
	if (!m->ok)
		return;
	for (int k = 0; k < NSPLIT; k++)
		m->e5xx[k] = iq_xcalloc(m->nmin, sizeof *m->e5xx[k]);
	sqlite3 *db = iq_store_db(s);
	sqlite3_stmt *rq = NULL, *uq = NULL, *lq = NULL;
	if (sqlite3_prepare_v2(db, "SELECT record_id, ts, status FROM http_requests ORDER BY record_id", -1, &rq,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT record_id, addr FROM http_upstreams", -1, &uq, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT ts FROM http_requests WHERE record_id = ?1", -1, &lq, NULL) != SQLITE_OK) {
		m->ok = 0;
		goto done;
	}
	int urow = sqlite3_step(uq) == SQLITE_ROW;
	for (;;) {
		int rrow = sqlite3_step(rq) == SQLITE_ROW;
		int64_t rid = rrow ? sqlite3_column_int64(rq, 0) : INT64_MAX;
		int has_ts = rrow && sqlite3_column_type(rq, 1) != SQLITE_NULL;
		int64_t ts = has_ts ? sqlite3_column_int64(rq, 1) : 0;
		int in = has_ts && ts >= t0 && ts < t1;
		long st = (long)sqlite3_column_int64(rq, 2);
		if (in && st >= 500 && st < 600)
			m->e5xx[status_class(st)][(ts - t0) / minute]++;
		while (urow && sqlite3_column_int64(uq, 0) <= rid) {
			int64_t uid = sqlite3_column_int64(uq, 0);
			int64_t uts = ts;
			int uin = in;
			if (uid != rid) {
				sqlite3_bind_int64(lq, 1, uid);
				uin = sqlite3_step(lq) == SQLITE_ROW && sqlite3_column_type(lq, 0) != SQLITE_NULL;
				uts = uin ? sqlite3_column_int64(lq, 0) : 0;
				uin = uin && uts >= t0 && uts < t1;
				sqlite3_reset(lq);
			}
			const char *addr = (const char *)sqlite3_column_text(uq, 1);
			if (uin && addr) {
				long *ser = lbmin_series(m, addr);
				if (!ser)
					goto done;
				ser[(uts - t0) / minute]++;
			}
			urow = sqlite3_step(uq) == SQLITE_ROW;
		}
		if (!rrow)
			break;
	}
done:
	sqlite3_finalize(rq);
	sqlite3_finalize(uq);
	sqlite3_finalize(lq);
}

static void lbmin_release(struct lbmin *m)
{
	for (size_t i = 0; i < m->naddr; i++) {
		free(m->addr[i]);
		free(m->att[i]);
	}
	free(m->addr);
	free(m->att);
	for (int k = 0; k < NSPLIT; k++)
		free(m->e5xx[k]);
	memset(m, 0, sizeof *m);
}

/* Does the per-minute data cover chart c (its buckets whole minutes from
 * m's start)? */
static int lbmin_fits(const struct lbmin *m, const struct iq_chart *c)
{
	const int64_t minute = 60 * IQ_NS_PER_SEC;
	return m && m->ok && c->t0 == m->t0 && c->step % minute == 0 &&
	       c->t0 + (int64_t)c->nb * c->step <= m->t0 + (int64_t)m->nmin * minute;
}

/* Load-balancer 5xx responses per bucket (a minute when the window
 * allows), one series per status (500, 502, 503, 504, other 5xx) that the
 * window has, stacked. */
static int lb5xx_chart(struct iq_chart *c, struct iq_store *s, json_t *pat, const struct win *w,
		       size_t nb, const struct lbmin *lm, const char *lang)
{
	chart_init(c, "lb-5xx");
	bucket(c, w, nb, 1);
	double cnt[NSPLIT][IQ_CHART_MAX_BUCKETS];
	memset(cnt, 0, sizeof cnt);
	if (lbmin_fits(lm, c)) {
		/* the same as the query below, from the minutes */
		size_t per = (size_t)(c->step / (60 * IQ_NS_PER_SEC));
		for (int k = 0; k < NSPLIT; k++)
			for (size_t j = 0; j < (size_t)c->nb * per; j++)
				cnt[k][j / per] += (double)lm->e5xx[k][j];
	} else {
		sqlite3_stmt *q;
		if (sqlite3_prepare_v2(iq_store_db(s),
				       "SELECT (ts - ?1) / ?2, status, count(*) FROM http_requests WHERE status >= 500"
				       " AND status < 600 AND ts >= ?1 AND ts < ?3 GROUP BY 1, 2 ORDER BY 1", -1, &q,
				       NULL) != SQLITE_OK)
			return -1;
		sqlite3_bind_int64(q, 1, c->t0);
		sqlite3_bind_int64(q, 2, c->step);
		sqlite3_bind_int64(q, 3, c->t0 + (int64_t)c->nb * c->step);
		while (sqlite3_step(q) == SQLITE_ROW) {
			int64_t b = sqlite3_column_int64(q, 0);
			if (b >= 0 && b < (int64_t)c->nb)
				cnt[status_class((long)sqlite3_column_int64(q, 1))][b] += (double)sqlite3_column_int64(q, 2);
		}
		sqlite3_finalize(q);
	}
	int have[NSPLIT] = {0};
	size_t ns = 0;
	double mx = 0;
	for (size_t b = 0; b < c->nb; b++) {
		double t = 0;
		for (int k = 0; k < NSPLIT; k++) {
			t += cnt[k][b];
			if (cnt[k][b] > 0 && !have[k]++)
				ns++;
		}
		mx = t > mx ? t : mx;
	}
	if (!ns)
		return -1;
	series_new(c, ns, 0);
	size_t si = 0;
	for (int k = 0; k < NSPLIT; k++) {
		if (!have[k])
			continue;
		if (k < 4)
			snprintf(c->ser[si].name, sizeof c->ser[si].name, "%d", split_status[k]);
		else
			snprintf(c->ser[si].name, sizeof c->ser[si].name, "%s", iq_msg(lang, "chart.5xx.other"));
		for (size_t b = 0; b < c->nb; b++)
			c->ser[si].y[b] = cnt[k][b];
		si++;
	}
	c->stacked = 1;
	snprintf(c->title, sizeof c->title, "%s", iq_msg(lang, "chart.5xx.title"));
	if (c->step == 60 * IQ_NS_PER_SEC)
		snprintf(c->ylabel, sizeof c->ylabel, "%s", iq_msg(lang, "chart.5xx.y"));
	else
		snprintf(c->ylabel, sizeof c->ylabel, iq_msg(lang, "chart.5xx.yn"),
			 (long)(c->step / (60 * IQ_NS_PER_SEC)));
	snprintf(c->xlabel, sizeof c->xlabel, "%s", iq_msg(lang, "chart.time"));
	c->ymax = mx * 1.1 + 1;
	c->bars = 1;
	json_t *surge = json_object_get(pat, "lb_5xx_surge");
	if (json_is_object(surge)) {
		c->band0 = iq_json_time(surge, "start");
		c->band1 = iq_json_time(surge, "end");
		snprintf(c->band_label, sizeof c->band_label, "%s", iq_msg(lang, "chart.5xx.surge"));
	}
	return 0;
}

/* Upstream attempts per bucket, per upstream (the load shift). */
struct addr_total {
	const char *addr;
	long n;
	size_t i;
};

static int by_total(const void *a, const void *b)
{
	const struct addr_total *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->addr, y->addr);
}

static int upstream_chart(struct iq_chart *c, struct iq_store *s, json_t *pat,
			  const struct win *w, size_t nb, const struct lbmin *lm, const char *lang)
{
	chart_init(c, "upstreams");
	sqlite3 *db = iq_store_db(s);
	sqlite3_stmt *q, *pq;
	bucket(c, w, nb, 1);
	int64_t end = c->t0 + (int64_t)c->nb * c->step;
	char addr[IQ_CHART_SERIES][64];
	const long *mins[IQ_CHART_SERIES] = {NULL};
	size_t n = 0;
	int fits = lbmin_fits(lm, c);
	size_t per = fits ? (size_t)(c->step / (60 * IQ_NS_PER_SEC)) : 0;
	if (fits) {
		/* the eight busiest addresses of the window, as the query below */
		struct addr_total *t = iq_xcalloc(lm->naddr ? lm->naddr : 1, sizeof *t);
		size_t nt = 0;
		for (size_t i = 0; i < lm->naddr; i++) {
			long sum = 0;
			for (size_t j = 0; j < (size_t)c->nb * per; j++)
				sum += lm->att[i][j];
			if (sum)
				t[nt++] = (struct addr_total){lm->addr[i], sum, i};
		}
		qsort(t, nt, sizeof *t, by_total);
		for (size_t i = 0; i < nt && n < IQ_CHART_SERIES; i++) {
			mins[n] = lm->att[t[i].i];
			snprintf(addr[n++], sizeof addr[0], "%.63s", t[i].addr);
		}
		free(t);
	} else {
		if (sqlite3_prepare_v2(db, "SELECT u.addr, count(*) FROM http_upstreams u"
					   " JOIN http_requests h ON h.record_id = u.record_id"
					   " WHERE u.addr IS NOT NULL AND h.ts >= ?1 AND h.ts < ?2"
					   " GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 8", -1, &q, NULL) != SQLITE_OK)
			return -1;
		sqlite3_bind_int64(q, 1, c->t0);
		sqlite3_bind_int64(q, 2, end);
		while (sqlite3_step(q) == SQLITE_ROW && n < IQ_CHART_SERIES)
			snprintf(addr[n++], sizeof addr[0], "%.63s", (const char *)sqlite3_column_text(q, 0));
		sqlite3_finalize(q);
	}
	if (!n)
		return -1;
	series_new(c, n, 0);
	if (sqlite3_prepare_v2(db, "SELECT (h.ts - ?1) / ?2, count(*) FROM http_upstreams u"
				   " JOIN http_requests h ON h.record_id = u.record_id"
				   " WHERE u.addr = ?4 AND h.ts >= ?1 AND h.ts < ?3 GROUP BY 1", -1, &q,
			       NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(db, "SELECT pod FROM pod_states WHERE pod_ip = ?1 AND pod IS NOT NULL"
				   " ORDER BY ts DESC LIMIT 1", -1, &pq, NULL) != SQLITE_OK) {
		sqlite3_finalize(q);
		return -1;
	}
	double mx = 0;
	for (size_t i = 0; i < n; i++) {
		char ip[64];
		snprintf(ip, sizeof ip, "%.63s", addr[i]);
		char *colon = strrchr(ip, ':');
		if (colon)
			*colon = '\0';
		sqlite3_bind_text(pq, 1, ip, -1, SQLITE_STATIC);
		if (sqlite3_step(pq) == SQLITE_ROW)
			snprintf(c->ser[i].name, sizeof c->ser[i].name, "%.50s (%.40s)", addr[i],
				 (const char *)sqlite3_column_text(pq, 0));
		else
			snprintf(c->ser[i].name, sizeof c->ser[i].name, "%.63s", addr[i]);
		sqlite3_reset(pq);
		if (mins[i]) {
			for (size_t j = 0; j < (size_t)c->nb * per; j++) {
				size_t b = j / per;
				if (!mins[i][j])
					continue;
				c->ser[i].y[b] += (double)mins[i][j];
				mx = c->ser[i].y[b] > mx ? c->ser[i].y[b] : mx;
			}
			continue;
		}
		sqlite3_bind_int64(q, 1, c->t0);
		sqlite3_bind_int64(q, 2, c->step);
		sqlite3_bind_int64(q, 3, end);
		sqlite3_bind_text(q, 4, addr[i], -1, SQLITE_STATIC);
		while (sqlite3_step(q) == SQLITE_ROW) {
			int64_t b = sqlite3_column_int64(q, 0);
			if (b >= 0 && b < (int64_t)c->nb) {
				c->ser[i].y[b] = (double)sqlite3_column_int64(q, 1);
				mx = c->ser[i].y[b] > mx ? c->ser[i].y[b] : mx;
			}
		}
		sqlite3_reset(q);
	}
	sqlite3_finalize(q);
	sqlite3_finalize(pq);
	snprintf(c->title, sizeof c->title, "%s", iq_msg(lang, "chart.up.title"));
	if (c->step == 60 * IQ_NS_PER_SEC)
		snprintf(c->ylabel, sizeof c->ylabel, "%s", iq_msg(lang, "chart.up.y"));
	else
		snprintf(c->ylabel, sizeof c->ylabel, iq_msg(lang, "chart.up.yn"),
			 (long)(c->step / (60 * IQ_NS_PER_SEC)));
	snprintf(c->xlabel, sizeof c->xlabel, "%s", iq_msg(lang, "chart.time"));
	c->ymax = mx * 1.1 + 1;
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(pat, "oom_events"), i, o) {
		int64_t t = iq_json_time(o, "time");
		if (t == IQ_TIME_NONE || c->nmarks >= IQ_CHART_MARKS)
			continue;
		struct iq_mark *m = &c->marks[c->nmarks++];
		m->t = t;
		m->series = -1;
		snprintf(m->label, sizeof m->label, "OOM %s", str(o, "pod"));
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Pod lifetimes from the findings: serving until each CUDA OOM death,
 * down until the restarted worker was ready. */
static int pod_gantt(struct iq_gantt *g, struct iq_store *s, json_t *pat,
		     const struct win *w, const char *lang)
{
	memset(g, 0, sizeof *g);
	snprintf(g->title, sizeof g->title, "%s", iq_msg(lang, "chart.pods.title"));
	g->t0 = w->t0;
	g->t1 = w->t1;
	json_t *ooms = json_object_get(pat, "oom_events"), *rec = json_object_get(pat, "recovery");
	size_t i, j;
	json_t *o;
	/* lanes in order of first death */
	json_array_foreach(json_object_get(json_object_get(pat, "cascade"), "failure_order"), i, o) {
		if (g->nlanes < IQ_GANTT_LANES && *str(o, "pod"))
			snprintf(g->lanes[g->nlanes++].name, sizeof g->lanes[0].name, "%s", str(o, "pod"));
	}
	json_array_foreach(ooms, i, o) {
		int seen = 0;
		for (j = 0; j < g->nlanes; j++)
			seen |= strcmp(g->lanes[j].name, str(o, "pod")) == 0;
		if (!seen && g->nlanes < IQ_GANTT_LANES && *str(o, "pod"))
			snprintf(g->lanes[g->nlanes++].name, sizeof g->lanes[0].name, "%s", str(o, "pod"));
	}
	if (!g->nlanes)
		return -1;
	sqlite3_stmt *q = NULL;
	/* the first and the last entry of the pod's own files (their time
	 * spans, kept by the writer) */
	sqlite3_prepare_v2(iq_store_db(s), "SELECT min(first_ts), max(last_ts) FROM files WHERE pod = ?1",
			   -1, &q, NULL);
	for (size_t li = 0; li < g->nlanes; li++) {
		struct iq_lane *l = &g->lanes[li];
		int64_t first = g->t0, last = g->t1;
		if (q) {
			sqlite3_bind_text(q, 1, l->name, -1, SQLITE_STATIC);
			if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
				first = sqlite3_column_int64(q, 0);
				last = sqlite3_column_int64(q, 1);
			}
			sqlite3_reset(q);
		}
		first = first < g->t0 ? g->t0 : first;
		last = last > g->t1 || last < first ? g->t1 : last;
		json_array_foreach(ooms, i, o) {
			int64_t t = iq_json_time(o, "time");
			if (t != IQ_TIME_NONE && strcmp(str(o, "pod"), l->name) == 0 && l->ndeaths < IQ_LANE_SPANS)
				l->deaths[l->ndeaths++] = t;
		}
		qsort(l->deaths, l->ndeaths, sizeof l->deaths[0], by_time);
		int64_t cur = first;
		for (size_t d = 0; d < l->ndeaths && l->nspans + 2 <= IQ_LANE_SPANS; d++) {
			int64_t dt = l->deaths[d], ready = IQ_TIME_NONE;
			if (dt > cur)
				l->spans[l->nspans++] = (struct iq_span){cur, dt, 0};
			int64_t next = d + 1 < l->ndeaths ? l->deaths[d + 1] : INT64_MAX;
			json_array_foreach(rec, j, o) {
				int64_t r = iq_json_time(o, "ready");
				if (strcmp(str(o, "pod"), l->name) == 0 && r != IQ_TIME_NONE && r > dt && r <= next &&
				    (ready == IQ_TIME_NONE || r < ready))
					ready = r;
			}
			int64_t stop = ready != IQ_TIME_NONE ? ready : next != INT64_MAX ? next : g->t1;
			stop = stop > g->t1 ? g->t1 : stop;
			l->spans[l->nspans++] = (struct iq_span){dt, stop, 1};
			cur = stop;
		}
		if (cur < last && l->nspans < IQ_LANE_SPANS)
			l->spans[l->nspans++] = (struct iq_span){cur, last, 0};
	}
	sqlite3_finalize(q);
	return 0;
}

/* ---- Mermaid ---- */

static void hhmm(int64_t t, int secs, char *b, size_t n)
{
	int h, mi, sec;
	iq_time_split(t, NULL, NULL, NULL, &h, &mi, &sec, NULL);
	if (secs)
		snprintf(b, n, "%02d:%02d:%02d", h, mi, sec);
	else
		snprintf(b, n, "%02d:%02d", h, mi);
}

/* Mermaid text in quotes: no quotes or line breaks inside. */
static void mm_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++)
		fputc(*s == '"' ? '\'' : (unsigned char)*s < 0x20 ? ' ' : *s, out);
	fputc('"', out);
}

/* The SVG's palette, so that the Mermaid chart's lines have the same
 * colours (Mermaid's default starts with a near-white one). */
static const char mm_palette[] = "#1f77b4, #ff7f0e, #2ca02c, #9467bd, #8c564b, #e377c2, #17becf, #d62728";

static void mermaid_chart(FILE *out, const struct iq_chart *c)
{
	fprintf(out, "```mermaid\n%%%%{init: {\"themeVariables\": {\"xyChart\": {\"plotColorPalette\": \"%s\"}}}}%%%%\n"
		     "xychart-beta\n    title ", c->stacked ? "#1f77b4, #ff7f0e, #2ca02c, #9467bd, #8c564b" : mm_palette);
	mm_quoted(out, c->title);
	fputs("\n    x-axis [", out);
	int secs = c->step % (60 * IQ_NS_PER_SEC) != 0;
	for (size_t i = 0; i < c->nb; i++) {
		char b[16];
		hhmm(c->t0 + (int64_t)i * c->step, secs, b, sizeof b);
		fprintf(out, "%s\"%s\"", i ? ", " : "", b);
	}
	fputs("]\n    y-axis ", out);
	mm_quoted(out, c->ylabel);
	fprintf(out, " %g --> %g\n", floor(c->ymin), ceil(c->ymax));
	for (size_t si = 0; si < c->nser; si++) {
		fprintf(out, "    %s [", c->bars ? "bar" : "line");
		double prev = 0;
		for (size_t i = 0; i < c->nb; i++) {
			double v = c->ser[si].y[i];
			if (isnan(v))
				v = prev; /* Mermaid has no gaps: hold the last value */
			prev = v;
			/* stacked: each bar is its status and those after it, drawn
			 * over the one before (Mermaid overlays bars) */
			for (size_t k = si + 1; c->stacked && k < c->nser; k++)
				v += isnan(c->ser[k].y[i]) ? 0 : c->ser[k].y[i];
			if (v < c->ymin)
				v = c->ymin; /* below the axis: at its foot */
			fprintf(out, "%s%.1f", i ? ", " : "", v);
		}
		fputs("]\n", out);
	}
	if (c->hline >= 0) {
		fputs("    line [", out);
		for (size_t i = 0; i < c->nb; i++)
			fprintf(out, "%s%g", i ? ", " : "", c->hline);
		fputs("]\n", out);
	}
	fputs("```\n\n", out);
}

static void mm_name(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		int ok = ch >= 0x80 || (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') ||
			 ch == '-' || ch == '.' || ch == '_' || ch == ' ' || ch == '(' || ch == ')';
		fputc(ok ? ch : '_', out);
	}
}

static void mm_time(FILE *out, int64_t t)
{
	char b[IQ_TIME_BUF];
	iq_time_fmt_ms(t, b);
	fprintf(out, "%.19s", b);
}

static void mermaid_gantt(FILE *out, const struct iq_gantt *g, const char *lang)
{
	/* the SVG's colours (green serving, red down), one row a pod */
	fputs("```mermaid\n%%{init: {\"gantt\": {\"displayMode\": \"compact\"}, \"themeVariables\": "
	      "{\"activeTaskBkgColor\": \"#5aa55a\", \"activeTaskBorderColor\": \"#3d7a3d\", "
	      "\"critBkgColor\": \"#f2a5a5\", \"critBorderColor\": \"#c0392b\", \"taskTextColor\": \"#111111\"}}}%%\n"
	      "gantt\n    title ", out);
	mm_name(out, g->title);
	fputs("\n    dateFormat YYYY-MM-DDTHH:mm:ss\n    axisFormat %H:%M\n", out);
	for (size_t li = 0; li < g->nlanes; li++) {
		const struct iq_lane *l = &g->lanes[li];
		fputs("    section ", out);
		mm_name(out, l->name);
		fputc('\n', out);
		for (size_t i = 0; i < l->nspans; i++) {
			fputs("    ", out);
			mm_name(out, iq_msg(lang, l->spans[i].down ? "chart.down" : "chart.serving"));
			fputs(l->spans[i].down ? " :crit, " : " :active, ", out);
			mm_time(out, l->spans[i].t0);
			fputs(", ", out);
			mm_time(out, l->spans[i].t1 > l->spans[i].t0 + IQ_NS_PER_SEC ? l->spans[i].t1
										  : l->spans[i].t0 + IQ_NS_PER_SEC);
			fputc('\n', out);
		}
		for (size_t i = 0; i < l->ndeaths; i++) {
			fputs("    CUDA OOM :milestone, ", out);
			mm_time(out, l->deaths[i]);
			fputs(", 0s\n", out);
		}
	}
	fputs("```\n\n", out);
}

/* ---- files ---- */

struct svg_job {
	const struct iq_chart *c;
	const struct iq_gantt *g;
	const char *lang;
};

static int svg_render(void *u, FILE *f)
{
	struct svg_job *j = u;
	return j->c ? iq_svg_chart(j->c, j->lang, f) : iq_svg_gantt(j->g, j->lang, f);
}

static void svg_file(FILE *out, const char *dir, const char *href, const char *name,
		     const char *title, struct svg_job *j)
{
	if (!dir)
		return;
	size_t n = strlen(dir) + strlen(name) + 8;
	char *path = iq_xmalloc(n);
	snprintf(path, n, "%s/%s.svg", dir, name);
	struct iq_diag d = {{0}};
	if (iq_write_atomic(path, svg_render, j, &d) == 0) {
		fputs("![", out);
		iq_md_put(out, title, 200);
		fprintf(out, "](%s/%s.svg)\n\n", href ? href : "charts", name);
	} else {
		iq_warnf("%s", d.msg);
	}
	free(path);
}

static void chart_notes(FILE *out, const struct iq_chart *c, const char *lang)
{
	const char *sep = "";
	if (c->nser > 1 || c->hline >= 0) {
		sep = " ";
		fputs(iq_msg(lang, c->stacked ? "chart.stacked" : "chart.order"), out);
		for (size_t i = 0; i < c->nser; i++) {
			fputs(i ? ", " : " ", out);
			iq_md_put(out, c->ser[i].name, 96);
		}
		if (c->hline >= 0) {
			fputs(", ", out);
			iq_md_put(out, c->hline_label, 48);
		}
		fputs(".", out);
	}
	if (c->nmarks) {
		fprintf(out, "%s%s", sep, iq_msg(lang, "chart.marks"));
		sep = " ";
		for (size_t i = 0; i < c->nmarks; i++) {
			char b[16];
			hhmm(c->marks[i].t, 1, b, sizeof b);
			fprintf(out, "%s%s (", i ? ", " : " ", b);
			iq_md_put(out, c->marks[i].label, 48);
			fputc(')', out);
		}
		fputc('.', out);
	}
	if (*c->below_label) {
		fprintf(out, "%s", sep);
		iq_md_put(out, c->below_label, 200);
		fputc('.', out);
		sep = " ";
	}
	if (c->band0 != IQ_TIME_NONE) {
		char a[16], b[16];
		hhmm(c->band0, 1, a, sizeof a);
		hhmm(c->band1, 1, b, sizeof b);
		fprintf(out, "%s%s: %s–%s.", sep, c->band_label, a, b);
	}
	fputs("\n\n", out);
}

static void one_chart(FILE *out, struct iq_chart *mc, struct iq_chart *sc, const char *lang,
		      const char *dir, const char *href)
{
	fprintf(out, "### %s\n\n", mc->title);
	mermaid_chart(out, mc);
	chart_notes(out, mc, lang);
	struct svg_job j = {sc, NULL, lang};
	svg_file(out, dir, href, sc->name, sc->title, &j);
}

void iq_charts_section(FILE *out, json_t *doc, json_t *pat, struct iq_store *s,
		       const char *lang, const char *charts_dir, const char *charts_href)
{
	fprintf(out, "## %s\n\n", iq_msg(lang, "h.charts"));
	struct win w;
	if (chart_window(s, doc, pat, &w) != 0) {
		fprintf(out, "%s\n\n", iq_msg(lang, "chart.nodata"));
		return;
	}
	if (charts_dir && mkdir(charts_dir, 0777) != 0 && errno != EEXIST) {
		iq_warnf("cannot create '%s': %s", charts_dir, strerror(errno));
		charts_dir = NULL;
	}
	fprintf(out, "%s\n\n", iq_msg(lang, "chart.intro"));
	struct iq_chart *mc = iq_xcalloc(1, sizeof *mc), *sc = iq_xcalloc(1, sizeof *sc);
	int any = 0;
	/* one read of the LB tables for both sizes of both LB charts */
	struct lbmin lm;
	bucket(mc, &w, IQ_MERMAID_POINTS, 1);
	bucket(sc, &w, IQ_CHART_MAX_BUCKETS, 1);
	int64_t e1 = mc->t0 + (int64_t)mc->nb * mc->step, e2 = sc->t0 + (int64_t)sc->nb * sc->step;
	lbmin_load(&lm, s, mc->t0, e1 > e2 ? e1 : e2);
	for (int k = 0; k < 3; k++) {
		int a, b;
		if (k == 0) {
			a = gpu_chart(mc, s, pat, &w, IQ_MERMAID_POINTS, lang);
			b = a ? -1 : gpu_chart(sc, s, pat, &w, IQ_CHART_MAX_BUCKETS, lang);
		} else if (k == 1) {
			a = lb5xx_chart(mc, s, pat, &w, IQ_MERMAID_POINTS, &lm, lang);
			b = a ? -1 : lb5xx_chart(sc, s, pat, &w, IQ_CHART_MAX_BUCKETS, &lm, lang);
		} else {
			a = upstream_chart(mc, s, pat, &w, IQ_MERMAID_POINTS, &lm, lang);
			b = a ? -1 : upstream_chart(sc, s, pat, &w, IQ_CHART_MAX_BUCKETS, &lm, lang);
		}
		if (!a && !b) {
			one_chart(out, mc, sc, lang, charts_dir, charts_href);
			any = 1;
		}
		free(mc->ser);
		free(sc->ser);
		mc->ser = sc->ser = NULL;
	}
	lbmin_release(&lm);
	free(mc);
	free(sc);
	struct iq_gantt *g = iq_xcalloc(1, sizeof *g);
	if (pod_gantt(g, s, pat, &w, lang) == 0) {
		fprintf(out, "### %s\n\n", g->title);
		mermaid_gantt(out, g, lang);
		fprintf(out, "%s\n\n", iq_msg(lang, "chart.pods.note"));
		struct svg_job j = {NULL, g, lang};
		svg_file(out, charts_dir, charts_href, "pod-lifetimes", g->title, &j);
		any = 1;
	}
	free(g);
	if (!any)
		fprintf(out, "%s\n\n", iq_msg(lang, "chart.nodata"));
}
