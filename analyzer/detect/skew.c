/* skew.c: node clocks against the reference clock (the load balancer's).
 * Events both sides record give a node's offset (node minus reference),
 * best first:
 *  1. requests: a serving pod's access-log line for a request ("POST
 *     /v1/completions HTTP/1.1" 200) is written as the response leaves,
 *     on the node's clock; the load balancer logs the same response on
 *     its own (every LB parser gives the response's end: Envoy/HAProxy's
 *     start + duration). The offset is where the differences between the
 *     two pile up, in a window as wide as the LB's time resolution.
 *  2. deaths: a worker's CUDA OOM line on its node's clock against the
 *     LB's first failed attempt (5xx) to its pod within a minute.
 *  3. starts: a container's first log line against the start Kubernetes
 *     reported for it (pods.json startedAt; those times came through the
 *     API server).
 * An offset past SKEW_MIN is subtracted from the node's times, so that
 * every time in the findings is reference time. */
#include <stdlib.h>
#include <string.h>

#include "boottime.h"
#include "zones.h"
#include "internal.h"

#define SKEW_MIN_NS NS(2)          /* below this whole-second LBs hide it */
#define PAIR_WINDOW NS(90)         /* the largest offset looked for */
#define MAX_ACCESS 800             /* access lines sampled per pod */
#define MAX_PAIRS 1000000
#define MAX_NODES 256

struct est {
	int64_t off;
	long samples;
	char basis[256];
};

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int db_err(struct iq_store *s, struct iq_diag *d)
{
	return iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(iq_store_db(s)));
}

static int apply(struct iq_store *s, const char *node, int64_t delta, struct iq_diag *d)
{
	static const char *const sql[] = {
		("UPDATE records SET ts = ts - ?2, ts_how = 'skew_corrected' WHERE node = ?1 AND ts IS NOT NULL"
		 " AND kind IN ('log', 'kernel', 'gpu')"),
		"UPDATE gpu_samples SET ts = ts - ?2 WHERE node = ?1 AND ts IS NOT NULL",
		"UPDATE kernel_events SET ts = ts - ?2 WHERE node = ?1 AND ts IS NOT NULL",
	};
	for (size_t i = 0; i < IQ_ARRAY_LEN(sql); i++) {
		sqlite3_stmt *q;
		if (sqlite3_prepare_v2(iq_store_db(s), sql[i], -1, &q, NULL) != SQLITE_OK)
			return db_err(s, d);
		sqlite3_bind_text(q, 1, node, -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 2, delta);
		int rc = sqlite3_step(q);
		sqlite3_finalize(q);
		if (rc != SQLITE_DONE)
			return db_err(s, d);
	}
	return 0;
}

/* Growable int64 array. */
struct vec {
	int64_t *v;
	size_t n, cap;
};

static void push(struct vec *a, int64_t x)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 256;
		a->v = iq_xrealloc(a->v, a->cap * sizeof *a->v);
	}
	a->v[a->n++] = x;
}

/* A request id in normal form: hex digits only, lower case ("5F1C7A2E-1B3D-"
 * -> "5f1c7a2e1b3d"); AWS's "Root=1-<time>-<id>" gives its id part. Writes
 * at most outsz - 1 characters; returns how many. */
static size_t norm_id(const char *s, size_t n, char *out, size_t outsz)
{
	if (n > 7 && memcmp(s, "Root=1-", 7) == 0) {
		const char *dash = memchr(s + 7, '-', n - 7);
		if (dash) {
			n -= (size_t)(dash + 1 - s);
			s = dash + 1;
		}
	}
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < outsz; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))
			out[k++] = c;
		else if (c != '-')
			return 0;   /* not an id of hex digits and dashes */
	}
	out[k] = '\0';
	return k;
}

/* The id of a vLLM "Received request <id>" line, the LB's X-Request-Id
 * when the request carried one: "cmpl-<id>-0", "chatcmpl-<id>". */
static size_t engine_id(const char *t, char *out, size_t outsz)
{
	const char *p = strstr(t, "Received request ");
	if (!p)
		return 0;
	p += 17;
	const char *e = p;
	while (*e && *e != ':' && *e != ' ' && *e != ',' && *e != '.')
		e++;
	size_t n = (size_t)(e - p);
	if (n > 5 && memcmp(p, "cmpl-", 5) == 0) {
		p += 5;
		n -= 5;
	} else if (n > 9 && memcmp(p, "chatcmpl-", 9) == 0) {
		p += 9;
		n -= 9;
	} else {
		return 0;
	}
	if (n > 2 && p[n - 2] == '-' && p[n - 1] >= '0' && p[n - 1] <= '9')
		n -= 2;     /* the "-0" of a choice */
	return norm_id(p, n, out, outsz);
}

/* How finely the LB's times are written: counts of whole seconds and
 * whole milliseconds among them. */
struct resol {
	long n, sec, ms;
};

static void count_res(struct resol *r, int64_t t)
{
	r->n++;
	r->sec += t % NS(1) == 0;
	r->ms += t % 1000000 == 0;
}

/* The resolution most (90 %) of the LB's times are written to. */
static int64_t resolution(const struct resol *r)
{
	if (r->n && r->sec * 10 >= r->n * 9)
		return NS(1);
	if (r->n && r->ms * 10 >= r->n * 9)
		return 1000000;
	return 1000;
}

/* The LB's requests to pod (address ip:port or its name, as HAProxy logs
 * it) between lo and hi: end time, duration, path, request id. */
static int lb_requests(struct iq_store *s, const char *pod, const char *ip, int64_t lo, int64_t hi,
		       int ok_only, sqlite3_stmt **q, struct iq_diag *d)
{
	char sql[640];
	snprintf(sql, sizeof sql,
		 "SELECT h.ts, h.duration_s, coalesce(h.path, ''), h.request_id FROM http_requests h"
		 " JOIN http_upstreams u ON u.record_id = h.record_id"
		 " WHERE h.ts BETWEEN ?1 AND ?2 AND (u.addr = ?3 OR u.addr LIKE ?3 || ':%%' OR u.addr = ?4)%s"
		 " ORDER BY h.ts LIMIT 400000",
		 ok_only ? " AND (u.status BETWEEN 200 AND 299 OR (u.status IS NULL AND h.status BETWEEN 200 AND 299))"
			 : "");
	if (sqlite3_prepare_v2(iq_store_db(s), sql, -1, q, NULL) != SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_int64(*q, 1, lo);
	sqlite3_bind_int64(*q, 2, hi);
	sqlite3_bind_text(*q, 3, ip, -1, SQLITE_STATIC);
	sqlite3_bind_text(*q, 4, pod, -1, SQLITE_STATIC);
	return 0;
}

/* An id and a time, sorted by id for the join. */
struct idt {
	char id[40];
	int64_t t;
};

static int cmp_idt(const void *a, const void *b)
{
	return strcmp(((const struct idt *)a)->id, ((const struct idt *)b)->id);
}

/* Prepares the query of a pod's timed log lines holding needle, up to
 * limit in file order: through its files' id ranges (CROSS JOIN and the
 * unary + keep the planner on them rather than an automatic index).
 * Returns 0 with *q (caller finalizes), or nonzero. */
static int pod_lines(struct iq_store *s, const char *pod, const char *needle, int limit,
		     sqlite3_stmt **q)
{
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT r.ts, r.text FROM files f CROSS JOIN records r"
			       " ON r.id BETWEEN f.first_record AND f.last_record WHERE f.pod = ?1"
			       " AND +r.pod = ?1 AND r.ts IS NOT NULL AND +r.kind = 'log'"
			       " AND instr(r.text, ?2) > 0 ORDER BY r.id LIMIT ?3",
			       -1, q, NULL) != SQLITE_OK)
		return 1;
	sqlite3_bind_text(*q, 1, pod, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(*q, 2, needle, -1, SQLITE_STATIC);
	sqlite3_bind_int(*q, 3, limit);
	return 0;
}

/* Basis 1a for one pod: the engine's "Received request <id>" lines
 * (node clock, just after the request arrived) joined by id to the LB's
 * requests (start = end - duration): one difference per request. */
static int id_pairs(struct iq_store *s, const char *pod, const char *ip, struct vec *diffs,
		    struct resol *res, struct iq_diag *d)
{
	sqlite3_stmt *q;
	if (pod_lines(s, pod, "Received request ", MAX_ACCESS, &q))
		return db_err(s, d);
	struct idt *node = NULL;
	size_t nn = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(q, 1);
		struct idt x;
		if (!t || engine_id(t, x.id, sizeof x.id) < 16)
			continue;
		x.t = sqlite3_column_int64(q, 0);
		node = iq_xrealloc(node, (nn + 1) * sizeof *node);
		node[nn++] = x;
	}
	sqlite3_finalize(q);
	int rc = 0;
	if (nn) {
		int64_t lo = node[0].t, hi = node[nn - 1].t;
		qsort(node, nn, sizeof *node, cmp_idt);
		rc = lb_requests(s, pod, ip, lo - PAIR_WINDOW, hi + PAIR_WINDOW + NS(120), 0, &q, d);
		while (!rc && sqlite3_step(q) == SQLITE_ROW) {
			const char *rid = (const char *)sqlite3_column_text(q, 3);
			struct idt key;
			if (!rid || sqlite3_column_type(q, 1) == SQLITE_NULL ||
			    norm_id(rid, strlen(rid), key.id, sizeof key.id) < 16)
				continue;
			/* the engine's id may hold only a prefix of the LB's (or
			 * the other way round): the shorter decides */
			size_t lo_i = 0, hi_i = nn;
			while (lo_i < hi_i) {
				size_t mid = (lo_i + hi_i) / 2;
				if (strcmp(node[mid].id, key.id) < 0)
					lo_i = mid + 1;
				else
					hi_i = mid;
			}
			for (size_t k = lo_i ? lo_i - 1 : 0; k < nn && k <= lo_i; k++) {
				size_t a = strlen(node[k].id), b = strlen(key.id);
				if (strncmp(node[k].id, key.id, a < b ? a : b) != 0)
					continue;
				int64_t end = sqlite3_column_int64(q, 0);
				int64_t start = end - (int64_t)(sqlite3_column_double(q, 1) * 1e9 + 0.5);
				count_res(res, end);
				push(diffs, node[k].t - start);
				break;
			}
		}
		if (!rc)
			sqlite3_finalize(q);
	}
	free(node);
	return rc;
}

/* The path of an access-log line ("... \"POST /v1/completions HTTP/1.1\"
 * 200 ..."): 1 with the slice when the line is one with a 2xx status. */
static int access_line(const char *t, struct iq_str *path)
{
	const char *h = strstr(t, " HTTP/1.");
	if (!h)
		h = strstr(t, " HTTP/2");
	if (!h)
		return 0;
	const char *q = h;
	while (q > t && q[-1] != '"')
		q--;
	if (q == t)
		return 0;
	const char *sp = memchr(q, ' ', (size_t)(h - q));
	if (!sp || sp + 1 >= h)
		return 0;
	const char *e = strchr(h, '"');
	if (!e || e[1] != ' ' || e[2] != '2')
		return 0;
	*path = iq_str_make(sp + 1, (size_t)(h - sp - 1));
	return 1;
}

/* The path part of an LB's path ("https://host:443/v1/x" -> "/v1/x"). */
static struct iq_str url_path(const char *p)
{
	const char *s = strstr(p, "://");
	if (s) {
		const char *sl = strchr(s + 3, '/');
		p = sl ? sl : "/";
	}
	const char *qm = strchr(p, '?');
	return iq_str_make(p, qm ? (size_t)(qm - p) : strlen(p));
}

struct lbreq {
	int64_t ts;
	char *path;
};

/* Sorts the access times t[0..n) and their paths together, by time, then
 * by path (a stable, deterministic order). */
struct tpath {
	int64_t t;
	char *path;
};

static int cmp_tpath(const void *a, const void *b)
{
	const struct tpath *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return strcmp(x->path, y->path);
}

static void sort_by_time(int64_t *t, char **paths, size_t n)
{
	if (n < 2)
		return;
	struct tpath *v = iq_xmalloc(n * sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = (struct tpath){t[i], paths[i]};
	qsort(v, n, sizeof *v, cmp_tpath);
	for (size_t i = 0; i < n; i++) {
		t[i] = v[i].t;
		paths[i] = v[i].path;
	}
	free(v);
}

/* Basis 1b for one pod, without request ids: differences between its
 * access lines (written as the response leaves) and the LB's successful
 * responses from it with the same path, within PAIR_WINDOW; every pair of
 * two unrelated requests is noise that densest() must rise above. */
static int access_pairs(struct iq_store *s, const char *pod, const char *ip, struct vec *diffs,
			struct resol *res, struct iq_diag *d)
{
	sqlite3_stmt *q;
	if (pod_lines(s, pod, " HTTP/", 20000, &q))
		return db_err(s, d);
	struct vec at = {0};
	char **paths = NULL;
	size_t np = 0, pcap = 0;
	while (sqlite3_step(q) == SQLITE_ROW && at.n < MAX_ACCESS) {
		const char *t = (const char *)sqlite3_column_text(q, 1);
		struct iq_str p;
		if (!t || !access_line(t, &p))
			continue;
		push(&at, sqlite3_column_int64(q, 0));
		if (np == pcap) {
			pcap = pcap ? pcap * 2 : 256;
			paths = iq_xrealloc(paths, pcap * sizeof *paths);
		}
		paths[np++] = iq_xstrndup(p.p, p.n);
	}
	sqlite3_finalize(q);
	/* read in file order (the scan stops at the limit); the pairing
	 * below wants time order */
	sort_by_time(at.v, paths, at.n);
	int rc = 0;
	if (at.n && !(rc = lb_requests(s, pod, ip, at.v[0] - PAIR_WINDOW, at.v[at.n - 1] + PAIR_WINDOW, 1, &q, d))) {
		struct lbreq *lb = NULL;
		size_t nlb = 0, cap = 0;
		while (sqlite3_step(q) == SQLITE_ROW) {
			if (nlb == cap) {
				cap = cap ? cap * 2 : 256;
				lb = iq_xrealloc(lb, cap * sizeof *lb);
			}
			lb[nlb].ts = sqlite3_column_int64(q, 0);
			struct iq_str up = url_path((const char *)sqlite3_column_text(q, 2));
			lb[nlb].path = iq_xstrndup(up.p, up.n);
			count_res(res, lb[nlb].ts);
			nlb++;
			/* a busy pod behind a coarse LB: give up early (see below) */
			double sofar = (double)(lb[nlb - 1].ts - (at.v[0] - PAIR_WINDOW)) / 1e9;
			if (nlb >= 2000 && sofar > 0 && (double)nlb / sofar * (double)resolution(res) / 1e9 >= 0.3)
				break;
		}
		sqlite3_finalize(q);
		/* unrelated pairs land in the true difference's window at the
		 * pod's request rate times the LB's resolution: past 0.3 no
		 * pile-up can be told from chance (an LB cutting to the second
		 * in front of a busy pod); request ids must do */
		double span = (double)(at.v[at.n - 1] - at.v[0] + 2 * PAIR_WINDOW) / 1e9;
		double rate = (double)nlb / span;
		size_t first = 0;
		if (rate * (double)resolution(res) / 1e9 >= 0.3)
			at.n = 0;
		for (size_t i = 0; i < at.n && diffs->n < MAX_PAIRS; i++) {
			int64_t a = at.v[i];
			while (first < nlb && lb[first].ts < a - PAIR_WINDOW)
				first++;
			for (size_t j = first; j < nlb && lb[j].ts <= a + PAIR_WINDOW; j++)
				if (strcmp(paths[i], lb[j].path) == 0)
					push(diffs, a - lb[j].ts);
		}
		for (size_t j = 0; j < nlb; j++)
			free(lb[j].path);
		free(lb);
	}
	for (size_t i = 0; i < np; i++)
		free(paths[i]);
	free(paths);
	free(at.v);
	return rc;
}

/* Where differences pile up: the window of width res holding the most of
 * them, when it holds at least 5 and clearly more than chance (pairs of
 * unrelated requests spread over the whole range): its start when the LB
 * cut its times to the second (the pair's true difference lies in the
 * next second), else its median. */
static int densest(struct vec *dv, int64_t res, int64_t *off, long *count)
{
	if (dv->n < 5)
		return 0;
	qsort(dv->v, dv->n, sizeof *dv->v, cmp64);
	size_t best = 0, bi = 0, j = 0;
	for (size_t i = 0; i < dv->n; i++) {
		while (j < dv->n && dv->v[j] < dv->v[i] + res)
			j++;
		if (j - i > best) {
			best = j - i;
			bi = i;
		}
	}
	double chance = (double)dv->n * (double)res / (double)(2 * PAIR_WINDOW);
	if (best < 5 || (double)best < 3.0 * chance + 5)
		return 0;
	*off = res > 1000000 ? dv->v[bi] : dv->v[bi + best / 2];
	*count = (long)best;
	return 1;
}

/* Exact pairs (by id): the true difference is skew plus the engine's own
 * delay, and plus up to res for an LB that cut its times: the low end
 * (2nd percentile, robust to a stray pair) when res is coarse, else the
 * median. */
static int64_t exact_offset(struct vec *dv, int64_t res)
{
	qsort(dv->v, dv->n, sizeof *dv->v, cmp64);
	return res > 1000000 ? dv->v[dv->n / 50] : dv->v[dv->n / 2];
}

static const char *res_name(int64_t res)
{
	return res >= NS(1) ? "the second" : res >= 1000000 ? "the millisecond" : "the microsecond";
}

static int by_requests(struct iq_store *s, const char *node, struct est *e, struct iq_diag *d)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT DISTINCT pod, pod_ip FROM pod_states"
			       " WHERE node = ?1 AND pod IS NOT NULL AND pod_ip IS NOT NULL ORDER BY pod",
			       -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_text(q, 1, node, -1, SQLITE_STATIC);
	char *pods[64], *ips[64];
	size_t np = 0;
	while (sqlite3_step(q) == SQLITE_ROW && np < IQ_ARRAY_LEN(pods)) {
		pods[np] = iq_xstrdup((const char *)sqlite3_column_text(q, 0));
		ips[np++] = iq_xstrdup((const char *)sqlite3_column_text(q, 1));
	}
	sqlite3_finalize(q);
	struct vec dv = {0};
	struct resol rs = {0};
	int rc = 0;
	for (size_t i = 0; i < np && !rc; i++)
		rc = access_pairs(s, pods[i], ips[i], &dv, &rs, d);
	int64_t off, res = resolution(&rs);
	long n;
	if (!rc && densest(&dv, res, &off, &n)) {
		/* the response left the pod before the LB logged it: a lower
		 * bound of the offset by the network's delay */
		e->off = off;
		e->samples = n;
		snprintf(e->basis, sizeof e->basis, "%ld requests in the serving pods' access logs matched "
			 "by time to the load balancer's responses (to %s)", n, res_name(res));
	} else if (!rc) {
		dv.n = 0;
		memset(&rs, 0, sizeof rs);
		for (size_t i = 0; i < np && !rc; i++)
			rc = id_pairs(s, pods[i], ips[i], &dv, &rs, d);
		if (!rc && dv.n >= 5) {
			/* the request reached the pod after the LB began it: an
			 * upper bound by the engine's delay */
			res = resolution(&rs);
			e->off = exact_offset(&dv, res);
			e->samples = (long)dv.n;
			snprintf(e->basis, sizeof e->basis, "%zu requests matched by request id: the load "
				 "balancer's start (to %s) against the engine's 'Received request' line",
				 dv.n, res_name(res));
		}
	}
	for (size_t i = 0; i < np; i++) {
		free(pods[i]);
		free(ips[i]);
	}
	free(dv.v);
	return rc;
}

/* Basis 2: CUDA OOM deaths against the LB's first attempt to the pod
 * that failed for want of it (502 closed/refused, 503 no upstream; not a
 * 504, which may time out before the death). */
static int by_deaths(struct iq_store *s, const char *node, struct est *e, struct iq_diag *d)
{
	static const char sql[] =
		"SELECT r.ts,"
		" (SELECT min(h.ts) FROM http_requests h JOIN http_upstreams u ON u.record_id = h.record_id"
		"   JOIN pod_states p ON (u.addr = p.pod_ip OR u.addr LIKE p.pod_ip || ':%' OR u.addr = p.pod)"
		"   WHERE p.pod = r.pod AND h.ts BETWEEN r.ts - 60000000000 AND r.ts + 60000000000"
		"    AND (u.status IN (502, 503) OR (u.status IS NULL AND h.status IN (502, 503))))"
		" FROM records r WHERE r.id IN (SELECT DISTINCT record_id FROM signal_matches WHERE signal = 'cuda-oom')"
		" AND r.node = ?1 AND r.pod IS NOT NULL AND r.ts IS NOT NULL ORDER BY r.ts";
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), sql, -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_text(q, 1, node, -1, SQLITE_STATIC);
	int64_t v[256];
	size_t n = 0;
	int64_t last_death = IQ_TIME_NONE;
	while (sqlite3_step(q) == SQLITE_ROW) {
		if (sqlite3_column_type(q, 1) == SQLITE_NULL)
			continue;
		int64_t t = sqlite3_column_int64(q, 0);
		/* repeated OOM lines of one death count once */
		if (last_death != IQ_TIME_NONE && t - last_death < NS(IQ_OOM_MERGE_S))
			continue;
		last_death = t;
		if (n < IQ_ARRAY_LEN(v))
			v[n++] = t - sqlite3_column_int64(q, 1);
	}
	sqlite3_finalize(q);
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, cmp64);
	int64_t off = v[n / 2];
	/* the failure follows the death by up to the LB's resolution: the
	 * nearest half second */
	e->off = (off + (off >= 0 ? NS(1) / 2 : -NS(1) / 2)) / (NS(1) / 2) * (NS(1) / 2);
	e->samples = (long)n;
	snprintf(e->basis, sizeof e->basis, "median of %zu worker deaths against the load balancer's "
		 "first failed response from the same pod", n);
	return 0;
}

/* Basis 3: each container's first log line against its reported start. */
static int by_starts(struct iq_store *s, const char *node, struct est *e, struct iq_diag *d)
{
	static const char sql[] =
		"SELECT (SELECT min(f2.first_ts) FROM files f2"
		"         WHERE f2.pod = f.pod AND f2.container = f.container AND f2.restart = f.restart),"
		"  (SELECT CASE WHEN p.restart_count = f.restart THEN p.started_at"
		"               WHEN p.restart_count - 1 = f.restart THEN p.last_started_at END"
		"     FROM pod_states p WHERE p.pod = f.pod AND p.container = f.container"
		"     ORDER BY p.record_id DESC LIMIT 1)"
		" FROM (SELECT DISTINCT pod, container, restart FROM files"
		"       WHERE node = ?1 AND pod IS NOT NULL AND container IS NOT NULL AND restart IS NOT NULL) f";
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), sql, -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_text(q, 1, node, -1, SQLITE_STATIC);
	int64_t v[512];
	size_t n = 0;
	int whole = 1;
	while (sqlite3_step(q) == SQLITE_ROW && n < IQ_ARRAY_LEN(v)) {
		if (sqlite3_column_type(q, 0) == SQLITE_NULL || sqlite3_column_type(q, 1) == SQLITE_NULL)
			continue;
		int64_t st = sqlite3_column_int64(q, 1);
		whole &= st % NS(1) == 0;
		v[n++] = sqlite3_column_int64(q, 0) - st;
	}
	sqlite3_finalize(q);
	if (n < 2)
		return 0;
	qsort(v, n, sizeof *v, cmp64);
	/* startedAt is cut to the second: the line is 0..1 s after it */
	e->off = v[n / 2] - (whole ? NS(1) / 2 : 0);
	e->samples = (long)n;
	snprintf(e->basis, sizeof e->basis, "median of %zu container starts Kubernetes reported against "
		 "each container's first log line", n);
	return 0;
}

/* Stores node's offset off (measured on times already moved by what
 * clock_skew says was applied) and moves the node's times; *moved is set
 * when it did. */
static int record(struct iq_store *s, const char *node, const struct est *e, int *moved,
		  struct iq_diag *d)
{
	sqlite3 *db = iq_store_db(s);
	sqlite3_stmt *w;
	int64_t applied = 0;
	if (sqlite3_prepare_v2(db, "SELECT applied_ns FROM clock_skew WHERE node = ?1", -1, &w, NULL) != SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_text(w, 1, node, -1, SQLITE_STATIC);
	if (sqlite3_step(w) == SQLITE_ROW)
		applied = sqlite3_column_int64(w, 0);
	sqlite3_finalize(w);
	/* whole milliseconds: finer than any evidence a report cites */
	int64_t off = (e->off + (e->off >= 0 ? 500000 : -500000)) / 1000000 * 1000000;
	int64_t total = applied + off;
	int64_t want = llabs(total) >= SKEW_MIN_NS ? total : 0;
	int rc;
	if (want != applied && (rc = apply(s, node, want - applied, d)) != 0)
		return rc;
	*moved |= want != applied;
	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO clock_skew VALUES (?1,?2,?3,?4,?5)", -1, &w, NULL) !=
	    SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_text(w, 1, node, -1, SQLITE_STATIC);
	sqlite3_bind_int64(w, 2, total);
	sqlite3_bind_int64(w, 3, want);
	sqlite3_bind_int64(w, 4, (sqlite3_int64)e->samples);
	sqlite3_bind_text(w, 5, e->basis, -1, SQLITE_STATIC);
	rc = sqlite3_step(w);
	sqlite3_finalize(w);
	return rc == SQLITE_DONE ? 0 : db_err(s, d);
}

int iq_detect_skew(struct iq_store *s, struct iq_diag *d)
{
	/* seconds since boot become wall time first, so that the offsets
	 * below move them with the rest of their node */
	int rc = iq_zones_resolve(s, d);
	if (!rc)
		rc = iq_boottime_resolve(s, d);
	if (rc)
		return rc;
	/* the nodes that run pods: those whose clocks the LB can see */
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT DISTINCT node FROM pod_states WHERE node IS NOT NULL"
			       " UNION SELECT DISTINCT node FROM files WHERE node IS NOT NULL AND pod IS NOT NULL"
			       " ORDER BY 1", -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	char *nodes[MAX_NODES];
	size_t nn = 0;
	while (sqlite3_step(q) == SQLITE_ROW && nn < MAX_NODES)
		nodes[nn++] = iq_xstrdup((const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
	int moved = 0;
	for (size_t i = 0; i < nn && !rc; i++) {
		struct est e = {.samples = 0};
		rc = by_requests(s, nodes[i], &e, d);
		if (!rc && !e.samples)
			rc = by_deaths(s, nodes[i], &e, d);
		if (!rc && !e.samples)
			rc = by_starts(s, nodes[i], &e, d);
		if (!rc && e.samples)
			rc = record(s, nodes[i], &e, &moved, d);
	}
	for (size_t i = 0; i < nn; i++)
		free(nodes[i]);
	/* the moved records are skew_corrected now: one count for all nodes */
	if (!rc && moved && iq_store_recount_time_sources(s))
		rc = db_err(s, d);
	return rc;
}
