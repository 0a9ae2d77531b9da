/* http.c: one pass over the load balancer's requests and their upstream
 * attempts, aggregated for every detector that reads them (the 5xx surge,
 * the stretch with no upstream serving, the load shift around each death,
 * the per-upstream failures, the 429s). The two tables are read in
 * record_id order and merged, so the pass costs one read of each instead
 * of a join per question; memory grows with the number of windows and
 * upstream addresses, not with the number of requests. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* ---- a map of (int64, int32) keys to slots of a growing array ---- */

struct slotmap {
	int64_t *k;
	int32_t *a;
	size_t *v;     /* index + 1; 0 = empty */
	size_t cap, n;
};

static uint64_t mix(int64_t k, int32_t a)
{
	uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)a * 0xC2B2AE3D27D4EB4Full;
	return h ^ (h >> 29);
}

static void map_grow(struct slotmap *m)
{
	struct slotmap o = *m;
	m->cap = o.cap ? o.cap * 2 : 256;
	m->k = iq_xcalloc(m->cap, sizeof *m->k);
	m->a = iq_xcalloc(m->cap, sizeof *m->a);
	m->v = iq_xcalloc(m->cap, sizeof *m->v);
	m->n = 0;
	for (size_t i = 0; i < o.cap; i++) {
		if (!o.v[i])
			continue;
		size_t h = (size_t)mix(o.k[i], o.a[i]) & (m->cap - 1);
		while (m->v[h])
			h = (h + 1) & (m->cap - 1);
		m->k[h] = o.k[i];
		m->a[h] = o.a[i];
		m->v[h] = o.v[i];
		m->n++;
	}
	free(o.k);
	free(o.a);
	free(o.v);
}

/* The slot of (k, a): its index, or next (which the caller then fills)
 * when the key is new, with *is_new set. */
static size_t map_slot(struct slotmap *m, int64_t k, int32_t a, size_t next, int *is_new)
{
	if ((m->n + 1) * 2 > m->cap)
		map_grow(m);
	size_t h = (size_t)mix(k, a) & (m->cap - 1);
	while (m->v[h]) {
		if (m->k[h] == k && m->a[h] == a) {
			*is_new = 0;
			return m->v[h] - 1;
		}
		h = (h + 1) & (m->cap - 1);
	}
	m->k[h] = k;
	m->a[h] = a;
	m->v[h] = next + 1;
	m->n++;
	*is_new = 1;
	return next;
}

static void map_release(struct slotmap *m)
{
	free(m->k);
	free(m->a);
	free(m->v);
	memset(m, 0, sizeof *m);
}

/* ---- the pass ---- */

static uint32_t str_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

size_t det_strs_find(const struct det_strs *t, const char *s)
{
	if (!t->scap)
		return SIZE_MAX;
	uint32_t hs = str_hash(s);
	for (size_t i = hs & (t->scap - 1); t->slot[i]; i = (i + 1) & (t->scap - 1)) {
		uint32_t k = t->slot[i] - 1;
		if (t->hash[i] == hs && strcmp(t->s[k], s) == 0)
			return k;
	}
	return SIZE_MAX;
}

size_t det_strs_id(struct det_strs *t, const char *s, int *is_new)
{
	uint32_t hs = str_hash(s);
	if (t->scap) {
		size_t i = hs & (t->scap - 1);
		while (t->slot[i]) {
			uint32_t k = t->slot[i] - 1;
			if (t->hash[i] == hs && strcmp(t->s[k], s) == 0) {
				*is_new = 0;
				return k;
			}
			i = (i + 1) & (t->scap - 1);
		}
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->s = iq_xrealloc(t->s, t->cap * sizeof *t->s);
	}
	size_t id = t->n++;
	t->s[id] = iq_xstrdup(s);
	if ((t->n + 1) * 2 > t->scap) {
		size_t cap = t->scap ? t->scap * 2 : 64;
		uint32_t *slot = iq_xcalloc(cap, sizeof *slot), *hh = iq_xcalloc(cap, sizeof *hh);
		for (size_t i = 0; i < t->scap; i++) {
			if (!t->slot[i])
				continue;
			size_t j = t->hash[i] & (cap - 1);
			while (slot[j])
				j = (j + 1) & (cap - 1);
			slot[j] = t->slot[i];
			hh[j] = t->hash[i];
		}
		free(t->slot);
		free(t->hash);
		t->slot = slot;
		t->hash = hh;
		t->scap = cap;
	}
	size_t i = hs & (t->scap - 1);
	while (t->slot[i])
		i = (i + 1) & (t->scap - 1);
	t->slot[i] = (uint32_t)id + 1;
	t->hash[i] = hs;
	*is_new = 1;
	return id;
}

void det_strs_release(struct det_strs *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->slot);
	free(t->hash);
	memset(t, 0, sizeof *t);
}

struct pass {
	struct det *x;
	struct det_http *h;
	struct det_strs ix;
	int32_t *ixmap;            /* ix id -> address index */
	struct slotmap wmap, tmap, m429;
	size_t wcap, tcap;
	int64_t win_ns;
	const int64_t *deaths;
	size_t ndeaths;
	int64_t shift_ns;
	int64_t lo, hi;            /* span of the death windows */
	double st[32];
	size_t nst;
	int64_t last_dropped;
};

/* The index of upstream address s (NULL is an address of its own). */
static int32_t addr_of(struct pass *p, const char *s)
{
	struct det_http *h = p->h;
	size_t k = 0;
	int is_new = 1;
	if (!s) {
		if (h->null_addr >= 0)
			return h->null_addr;
	} else {
		k = det_strs_id(&p->ix, s, &is_new);
		if (!is_new)
			return p->ixmap[k];
		p->ixmap = iq_xrealloc(p->ixmap, p->ix.cap * sizeof *p->ixmap);
	}
	if (h->naddr == h->addr_cap) {
		h->addr_cap = h->addr_cap ? h->addr_cap * 2 : 16;
		h->addr = iq_xrealloc(h->addr, h->addr_cap * sizeof *h->addr);
		h->shares = iq_xrealloc(h->shares, h->addr_cap * sizeof *h->shares);
	}
	int32_t id = (int32_t)h->naddr++;
	h->addr[id] = s ? iq_xstrdup(s) : NULL;
	h->shares[id] = p->ndeaths ? iq_xcalloc(2 * p->ndeaths, sizeof **h->shares) : NULL;
	if (s)
		p->ixmap[k] = id;
	else
		h->null_addr = id;
	return id;
}

static int failed_status(const struct pass *p, int status)
{
	if (!p->nst)
		return status >= 500 && status <= 599;
	for (size_t i = 0; i < p->nst; i++)
		if ((double)status == p->st[i])
			return 1;
	return 0;
}

static void request(struct pass *p, int64_t rid, int64_t ts, int has_ts, int status)
{
	struct det_http *h = p->h;
	if (status >= 500)
		h->status_5xx_all++;
	if (status == 429)
		h->status_429_all++;
	if (!has_ts) {
		if (status == 429)
			h->null_ts_429++;
		return;
	}
	int is_new;
	size_t i = map_slot(&p->wmap, ts / p->win_ns, 0, h->nwin, &is_new);
	if (is_new) {
		if (h->nwin == p->wcap) {
			p->wcap = p->wcap ? p->wcap * 2 : 64;
			h->win = iq_xrealloc(h->win, p->wcap * sizeof *h->win);
		}
		memset(&h->win[i], 0, sizeof h->win[i]);
		h->win[i].k = ts / p->win_ns;
		h->nwin++;
	}
	struct det_window *w = &h->win[i];
	w->total++;
	if (status && failed_status(p, status)) {
		/* the window's first and last failure, in time (a tie: the
		 * earlier record first) */
		if (!w->fail || ts < w->first_ts || (ts == w->first_ts && rid < w->first_id)) {
			w->first_ts = ts;
			w->first_id = rid;
		}
		if (!w->fail || ts > w->last_ts || (ts == w->last_ts && rid > w->last_id)) {
			w->last_ts = ts;
			w->last_id = rid;
		}
		w->fail++;
	}
	w->s500 += status == 500;
	w->s502 += status == 502;
	w->s503 += status == 503;
	w->s504 += status == 504;
	w->s429 += status == 429;
	i = map_slot(&p->tmap, ts / NS(10), 0, h->nten, &is_new);
	if (is_new) {
		if (h->nten == p->tcap) {
			p->tcap = p->tcap ? p->tcap * 2 : 64;
			h->ten = iq_xrealloc(h->ten, p->tcap * sizeof *h->ten);
		}
		h->ten[i].k = ts / NS(10);
		h->ten[i].served = 0;
		h->nten++;
	}
	h->ten[i].served += status > 0 && status < 500;
	if (status == 429) {
		/* the busiest minute of 429s (the flood's window without a surge) */
		i = map_slot(&p->m429, ts / NS(60), 0, h->n429, &is_new);
		if (is_new) {
			h->m429 = iq_xrealloc(h->m429, (h->n429 + 1) * sizeof *h->m429);
			h->m429[i].k = ts / NS(60);
			h->m429[i].served = 0;
			h->n429++;
		}
		h->m429[i].served++;
	}
}

static void upstream(struct pass *p, int64_t rid, int64_t ts, int has_ts, const char *addr, int status,
		     double time_s, int has_time)
{
	struct det_http *h = p->h;
	if (status == 502 && has_time && time_s > 0 && rid != p->last_dropped) {
		h->dropped_streams++;
		p->last_dropped = rid;
	}
	int32_t a = addr_of(p, addr);
	if (!has_ts)
		return;
	if (ts < p->lo || ts >= p->hi)
		return;
	for (size_t d = 0; d < p->ndeaths; d++) {
		if (ts >= p->deaths[d] - p->shift_ns && ts < p->deaths[d])
			h->shares[a][2 * d]++;
		else if (ts >= p->deaths[d] && ts < p->deaths[d] + p->shift_ns)
			h->shares[a][2 * d + 1]++;
	}
}

static int by_k_window(const void *a, const void *b)
{
	const struct det_window *x = a, *y = b;
	return x->k < y->k ? -1 : x->k > y->k;
}

static int by_k_ten(const void *a, const void *b)
{
	const struct det_ten *x = a, *y = b;
	return x->k < y->k ? -1 : x->k > y->k;
}

int det_http_load(struct det *x, const int64_t *deaths, size_t ndeaths, double shift_s)
{
	struct det_http *h = iq_xcalloc(1, sizeof *h);
	h->null_addr = -1;
	h->ndeaths = ndeaths;
	x->http = h;
	struct pass p;
	memset(&p, 0, sizeof p);
	p.x = x;
	p.h = h;
	double win = det_param(x, "lb-5xx-surge", "window_s", 60);
	p.win_ns = (int64_t)(win > 0 ? win * 1e9 : 6e10);
	if (p.win_ns <= 0)
		p.win_ns = NS(60);
	h->win_ns = p.win_ns;
	p.nst = det_param_list(x, "lb-5xx-surge", "statuses", p.st, IQ_ARRAY_LEN(p.st));
	p.deaths = deaths;
	p.ndeaths = ndeaths;
	p.shift_ns = (int64_t)(shift_s * 1e9);
	p.lo = INT64_MAX;
	p.hi = INT64_MIN;
	for (size_t d = 0; d < ndeaths; d++) {
		if (deaths[d] - p.shift_ns < p.lo)
			p.lo = deaths[d] - p.shift_ns;
		if (deaths[d] + p.shift_ns > p.hi)
			p.hi = deaths[d] + p.shift_ns;
	}
	p.last_dropped = INT64_MIN;
	sqlite3_stmt *rq = NULL, *uq = NULL, *lq = NULL;
	int rc = det_prep(x, "SELECT record_id, ts, status FROM http_requests ORDER BY record_id", &rq);
	if (!rc)
		rc = det_prep(x, "SELECT record_id, addr, status, time_s FROM http_upstreams", &uq);
	if (!rc)
		rc = det_prep(x, "SELECT ts FROM http_requests WHERE record_id = ?1", &lq);
	int urow = 0, disorder = 0;
	if (!rc)
		urow = sqlite3_step(uq) == SQLITE_ROW;
	while (!rc) {
		int rrow = sqlite3_step(rq) == SQLITE_ROW;
		int64_t rid = rrow ? sqlite3_column_int64(rq, 0) : INT64_MAX;
		int has_ts = rrow && sqlite3_column_type(rq, 1) != SQLITE_NULL;
		int64_t ts = has_ts ? sqlite3_column_int64(rq, 1) : 0;
		if (rrow) {
			h->requests++;
			request(&p, rid, ts, has_ts, (int)sqlite3_column_int64(rq, 2));
		}
		/* the attempts of this request; one read out of record_id order
		 * takes its request's time from a lookup */
		while (urow && sqlite3_column_int64(uq, 0) <= rid) {
			int64_t uid = sqlite3_column_int64(uq, 0);
			int64_t uts = ts;
			int uhas = has_ts;
			if (uid != rid) {
				disorder = 1;
				sqlite3_bind_int64(lq, 1, uid);
				uhas = sqlite3_step(lq) == SQLITE_ROW && sqlite3_column_type(lq, 0) != SQLITE_NULL;
				uts = uhas ? sqlite3_column_int64(lq, 0) : 0;
				sqlite3_reset(lq);
			}
			upstream(&p, uid, uts, uhas, (const char *)sqlite3_column_text(uq, 1),
				 (int)sqlite3_column_int64(uq, 2), sqlite3_column_double(uq, 3),
				 sqlite3_column_type(uq, 3) != SQLITE_NULL);
			urow = sqlite3_step(uq) == SQLITE_ROW;
		}
		if (!rrow)
			break;
	}
	sqlite3_finalize(rq);
	sqlite3_finalize(uq);
	sqlite3_finalize(lq);
	map_release(&p.wmap);
	map_release(&p.tmap);
	map_release(&p.m429);
	det_strs_release(&p.ix);
	free(p.ixmap);
	if (rc)
		return rc;
	/* attempts of one request read apart could be counted twice */
	if (disorder)
		h->dropped_streams = det_scalar(x, "SELECT count(DISTINCT record_id) FROM http_upstreams"
					       " WHERE status = 502 AND time_s > 0", 0);
	/* qsort's array may not be NULL, even for no elements */
	if (h->nwin)
		qsort(h->win, h->nwin, sizeof *h->win, by_k_window);
	if (h->nten)
		qsort(h->ten, h->nten, sizeof *h->ten, by_k_ten);
	if (h->n429)
		qsort(h->m429, h->n429, sizeof *h->m429, by_k_ten);
	return 0;
}

void det_http_free(struct det_http *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->naddr; i++) {
		free(h->addr[i]);
		free(h->shares[i]);
	}
	free(h->addr);
	free(h->shares);
	free(h->win);
	free(h->ten);
	free(h->m429);
	free(h);
}

/* Does upstream address addr belong to pod_ip? The address is the IP, or
 * the IP and a port (the same test as addr = ip OR addr LIKE ip || ':%'). */
int det_addr_is_ip(const char *addr, const char *ip)
{
	if (!addr || !ip)
		return 0;
	if (strcmp(addr, ip) == 0)
		return 1;
	size_t n = strlen(ip);
	return strncasecmp(addr, ip, n) == 0 && addr[n] == ':';
}
