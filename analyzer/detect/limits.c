/* limits.c: the memory limits the bundle measured. Before each CUDA OOM
 * death its worker completed batches (the engine's periodic stats in the
 * same log, so on the same clock) and then died in one (the crash dump's
 * scheduler state); with the KV cache's capacity the engine logged, these
 * give the largest batch and tokens in flight that completed, the
 * smallest that failed, and the settings to propose, each with its
 * arithmetic and evidence. For vision models the batch is images: the
 * request log's images and resolutions, swept for what was in flight. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A decimal string ("97.3", "0.9735") as num / den. 0 when it is none. */
static int decimal(const char *s, int64_t *num, int64_t *den)
{
	*num = 0;
	*den = 1;
	int digits = 0, frac = 0;
	for (; s && *s; s++) {
		if (*s == '.' && !frac) {
			frac = 1;
			continue;
		}
		if (*s < '0' || *s > '9' || *den > (int64_t)1 << 40)
			return 0;
		*num = *num * 10 + (*s - '0');
		if (frac)
			*den *= 10;
		digits++;
	}
	return digits > 0;
}

struct lim_pick {
	long value;
	int64_t rec;
	const char *pod;
	int64_t t;
	char frac[32];            /* the KV share as written */
};

static json_t *pick_json(const struct lim_pick *p, struct det *x, const char *key)
{
	if (p->rec < 0)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "value", json_integer(p->value));
	if (key)
		json_object_set_new(o, key, json_string(p->frac));
	json_object_set_new(o, "pod", det_str(p->pod));
	json_object_set_new(o, "time", det_time_ns(p->t));
	json_t *ev = json_array();
	json_t *e = det_evidence_of(x, p->rec);
	if (e)
		json_array_append_new(ev, e);
	json_object_set_new(o, "evidence", ev);
	return o;
}

/* The nearest match of signal in file within 60 s of t: its record,
 * captures (caller frees) and time; -1 when none. */
static int64_t near_match(struct det *x, const char *signal, const char *file, int64_t t, json_t **caps,
			  int64_t *ts)
{
	sqlite3_stmt *q;
	int64_t rec = -1;
	*caps = NULL;
	if (det_prep(x, "SELECT r.id, m.captures, r.ts FROM signal_matches m JOIN records r ON r.id = m.record_id"
		     " JOIN files f ON f.id = r.file_id WHERE m.pack = ?1 AND m.signal = ?2 AND f.path = ?3"
		     " AND r.ts BETWEEN ?4 - 60000000000 AND ?4 + 60000000000 ORDER BY abs(r.ts - ?4), r.id LIMIT 1", &q))
		return -1;
	sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, signal, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 3, file, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 4, t);
	if (sqlite3_step(q) == SQLITE_ROW) {
		rec = sqlite3_column_int64(q, 0);
		const char *c = (const char *)sqlite3_column_text(q, 1);
		*caps = json_loads(c ? c : "{}", 0, NULL);
		*ts = sqlite3_column_int64(q, 2);
	}
	sqlite3_finalize(q);
	return rec;
}

static const char *setting_value(struct det *x, const char *key)
{
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(x->pat, "settings"), i, o)
		if (strcmp(json_string_value(json_object_get(o, "key")), key) == 0)
			return json_string_value(json_object_get(o, "value"));
	return NULL;
}

static long round_down(long v, long m)
{
	long r = v / m * m;
	return r > 0 ? r : (v > 0 ? v : 0);
}

static void proposal(json_t *a, const char *setting, long value, const char *current, json_t *inputs,
		     const char *arith, json_t *ev)
{
	json_t *o = json_object();
	json_object_set_new(o, "setting", json_string(setting));
	json_object_set_new(o, "value", json_integer(value));
	json_object_set_new(o, "current", current ? json_string(current) : json_null());
	json_object_set_new(o, "inputs", inputs);
	json_object_set_new(o, "arithmetic", json_string(arith));
	json_object_set_new(o, "evidence", ev ? ev : json_array());
	json_array_append_new(a, o);
}

/* Records in nc that what could not be computed: the sources it needs
 * (stable ids the report words in its language) and why, in English. */
static void not_computed(json_t *nc, const char *what, const char *need1, const char *need2, const char *why)
{
	json_t *o = json_object();
	json_object_set_new(o, "what", json_string(what));
	json_t *n = json_array();
	json_array_append_new(n, json_string(need1));
	if (need2)
		json_array_append_new(n, json_string(need2));
	json_object_set_new(o, "needs", n);
	json_object_set_new(o, "reason", json_string(why));
	json_array_append_new(nc, o);
}

static void add_ev(json_t *ev, json_t *pick)
{
	json_t *e = json_array_get(json_object_get(pick, "evidence"), 0);
	if (e)
		json_array_append(ev, e);
}

/* ---- vision: images and pixels in flight ---- */

struct mm_req {
	int64_t rec, adm, fin;    /* fin -1: still in flight at the death */
	long images;
	int64_t pixels;
	size_t id;                /* in the death's interned ids */
};

struct mm_evt {
	int64_t t;
	int admit;                /* 0: a finish, ordered first at the same time */
	size_t i;
};

static int mm_evt_cmp(const void *a, const void *b)
{
	const struct mm_evt *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->admit != y->admit)
		return x->admit - y->admit;
	return (x->i > y->i) - (x->i < y->i);
}

struct mm_fin {
	size_t id;
	int64_t ts;
};

static int mm_fin_cmp(const void *a, const void *b)
{
	const struct mm_fin *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The images of a request and their pixels, from its "image_sizes" list
 * ("1920x1080", "1280x720"). */
static long mm_sizes(const char *s, int64_t *pixels)
{
	long n = 0;
	*pixels = 0;
	while (s && *s) {
		char *end;
		if (*s < '0' || *s > '9') {
			s++;
			continue;
		}
		long long w = strtoll(s, &end, 10);
		if (*end != 'x' || end[1] < '0' || end[1] > '9') {
			s = end;
			continue;
		}
		long long h = strtoll(end + 1, &end, 10);
		if (w > 0 && h > 0 && w < (1LL << 20) && h < (1LL << 20)) {
			*pixels += w * h;
			n++;
		}
		s = end;
	}
	return n;
}

struct mm_pick {
	int64_t value;
	long requests;
	const char *pod;
	int64_t t;
	json_t *ev;               /* owned */
	int set;
};

static void mm_pick_set(struct mm_pick *p, int64_t value, long requests, const char *pod, int64_t t, json_t *ev)
{
	json_decref(p->ev);
	*p = (struct mm_pick){value, requests, pod, t, ev, 1};
}

/* The evidence of a moment: the death's line (for a failed set), then the
 * request-log lines of up to 5 of the requests in flight, the most pixels
 * first. */
static json_t *mm_evidence(struct det *x, struct mm_req *r, size_t n, int64_t at, json_t *death_ev)
{
	json_t *ev = json_array();
	if (death_ev)
		json_array_append(ev, death_ev);
	size_t top[5];
	size_t ntop = 0;
	for (size_t i = 0; i < n; i++) {
		int live = at < 0 ? r[i].fin < 0 : r[i].adm <= at && (r[i].fin < 0 || r[i].fin > at);
		if (!live)
			continue;
		/* insertion into the five largest, ties to the earlier */
		size_t j = ntop < 5 ? ntop++ : 5;
		while (j > 0 && r[top[j - 1]].pixels < r[i].pixels) {
			if (j < 5)
				top[j] = top[j - 1];
			j--;
		}
		if (j < 5)
			top[j] = i;
	}
	/* in time order, as the log has them */
	for (size_t a = 1; a < ntop; a++)
		for (size_t b = a; b > 0 && top[b] < top[b - 1]; b--) {
			size_t tmp = top[b];
			top[b] = top[b - 1];
			top[b - 1] = tmp;
		}
	for (size_t k = 0; k < ntop; k++) {
		json_t *e = det_evidence_of(x, r[top[k]].rec);
		if (e)
			json_array_append_new(ev, e);
	}
	return ev;
}

static json_t *mm_pick_json(struct mm_pick *p)
{
	if (!p->set)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "value", json_integer(p->value));
	json_object_set_new(o, "requests", json_integer(p->requests));
	json_object_set_new(o, "pod", det_str(p->pod));
	json_object_set_new(o, "time", det_time_ns(p->t));
	json_object_set_new(o, "evidence", p->ev);
	p->ev = NULL;
	return o;
}

/* The latest value of a fact's integer capture, with its evidence. */
static long fact_value(struct det *x, const char *signal, const char *key, json_t **ev)
{
	sqlite3_stmt *q;
	long v = -1;
	*ev = NULL;
	char path[64];
	snprintf(path, sizeof path, "$.%s", key);
	if (det_prep(x, "SELECT r.id, json_extract(m.captures, ?3) FROM signal_matches m JOIN records r"
		     " ON r.id = m.record_id WHERE m.pack = ?1 AND m.signal = ?2 ORDER BY r.ts DESC, r.id DESC LIMIT 1", &q))
		return -1;
	sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, signal, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 3, path, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 1) == SQLITE_INTEGER) {
		v = (long)sqlite3_column_int64(q, 1);
		*ev = det_evidence_of(x, sqlite3_column_int64(q, 0));
	}
	sqlite3_finalize(q);
	return v;
}

static int64_t budget(int64_t ok, int64_t bad, int have_ok, int have_bad)
{
	if (have_ok && have_bad)
		return ok < bad - 1 ? ok : bad - 1;
	return have_ok ? ok : bad - 1;
}

/* limits.vision, or NULL when no request log of images is in the bundle.
 * Per CUDA OOM death, over its worker's log before it: every moment a
 * request was admitted in the window whose requests in flight all
 * finished (completed), and the requests still in flight at the death
 * (failed). Appends the proposals to props and what it could not say to
 * nc. */
static json_t *vision_limits(struct det *x, double window, json_t *props, json_t *nc)
{
	if (det_scalar(x, "SELECT count(*) FROM signal_matches WHERE signal = 'mm-request'", 0) <= 0)
		return NULL;
	struct mm_pick ok_i = {0}, ok_p = {0}, bad_i = {0}, bad_p = {0};
	long logged = 0;
	sqlite3_stmt *q = NULL;
	det_prep(x, "SELECT r.id, r.ts, json_extract(m.captures, '$.event'), json_extract(m.captures, '$.request_id'),"
		 " json_extract(m.captures, '$.image_sizes') FROM signal_matches m JOIN records r ON r.id = m.record_id"
		 " JOIN files f ON f.id = r.file_id WHERE m.pack = ?1 AND m.signal = 'mm-request' AND f.path = ?2"
		 " AND r.ts < ?3 ORDER BY r.ts, r.id", &q);
	size_t i;
	json_t *o;
	json_array_foreach(x->ooms, i, o) {
		const char *pod = json_string_value(json_object_get(o, "pod"));
		const char *ts = json_string_value(json_object_get(o, "time"));
		json_t *oev = json_array_get(json_object_get(o, "evidence"), 0);
		const char *file = json_string_value(json_object_get(oev, "file"));
		int64_t t;
		if (!q || !ts || !file || iq_time_parse_iso(ts, strlen(ts), &t, NULL) < 0)
			continue;
		sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, file, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(q, 3, t);
		struct mm_req *r = NULL;
		struct mm_fin *fn = NULL;
		size_t nr = 0, cr = 0, nf = 0, cf = 0;
		struct det_strs ids = {0};
		while (sqlite3_step(q) == SQLITE_ROW) {
			const char *ev = (const char *)sqlite3_column_text(q, 2);
			const char *id = (const char *)sqlite3_column_text(q, 3);
			if (!ev || !id)
				continue;
			int is_new;
			size_t k = det_strs_id(&ids, id, &is_new);
			if (strcmp(ev, "admitted") == 0) {
				if (nr == cr) {
					cr = cr ? 2 * cr : 64;
					r = iq_xrealloc(r, cr * sizeof *r);
				}
				int64_t px;
				long n = mm_sizes((const char *)sqlite3_column_text(q, 4), &px);
				r[nr++] = (struct mm_req){sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), -1, n, px, k};
			} else {
				if (nf == cf) {
					cf = cf ? 2 * cf : 64;
					fn = iq_xrealloc(fn, cf * sizeof *fn);
				}
				fn[nf++] = (struct mm_fin){k, sqlite3_column_int64(q, 1)};
			}
		}
		sqlite3_reset(q);
		logged += (long)nr;
		qsort(fn, nf, sizeof *fn, mm_fin_cmp);
		for (size_t k = 0; k < nr; k++) {
			/* its first "finished" at or after its admission */
			size_t lo = 0, hi = nf;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (fn[mid].id < r[k].id || (fn[mid].id == r[k].id && fn[mid].ts < r[k].adm))
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < nf && fn[lo].id == r[k].id)
				r[k].fin = fn[lo].ts;
		}
		/* the moments: each admission in the window, over what is in flight
		 * then (a request finished at that very time is no longer) */
		struct mm_evt *evs = iq_xmalloc((2 * nr + 1) * sizeof *evs);
		size_t ne = 0;
		for (size_t k = 0; k < nr; k++) {
			evs[ne++] = (struct mm_evt){r[k].adm, 1, k};
			if (r[k].fin >= 0)
				evs[ne++] = (struct mm_evt){r[k].fin, 0, k};
		}
		qsort(evs, ne, sizeof *evs, mm_evt_cmp);
		int64_t best_i = -1, best_p = -1, at_i = 0, at_p = 0;
		long req_i = 0, req_p = 0;
		long live_n = 0, live_reqs = 0, live_open = 0;
		int64_t live_px = 0;
		for (size_t e = 0; e < ne; e++) {
			const struct mm_req *rq = &r[evs[e].i];
			long sign = evs[e].admit ? 1 : -1;
			live_n += sign * rq->images;
			live_px += sign * rq->pixels;
			live_reqs += sign;
			live_open += evs[e].admit && rq->fin < 0;
			int64_t a = evs[e].t;
			if (!evs[e].admit || a < t - (int64_t)(window * 1e9) || live_open ||
			    (e + 1 < ne && evs[e + 1].admit && evs[e + 1].t == a))
				continue;
			if (live_n > best_i)
				best_i = live_n, at_i = a, req_i = live_reqs;
			if (live_px > best_p)
				best_p = live_px, at_p = a, req_p = live_reqs;
		}
		free(evs);
		if (best_i >= 0 && (!ok_i.set || best_i > ok_i.value))
			mm_pick_set(&ok_i, best_i, req_i, pod, at_i, mm_evidence(x, r, nr, at_i, NULL));
		if (best_p >= 0 && (!ok_p.set || best_p > ok_p.value))
			mm_pick_set(&ok_p, best_p, req_p, pod, at_p, mm_evidence(x, r, nr, at_p, NULL));
		long n = 0, reqs = 0;
		int64_t px = 0;
		for (size_t k = 0; k < nr; k++)
			if (r[k].fin < 0)
				n += r[k].images, px += r[k].pixels, reqs++;
		if (reqs && (!bad_i.set || n < bad_i.value))
			mm_pick_set(&bad_i, n, reqs, pod, t, mm_evidence(x, r, nr, -1, oev));
		if (reqs && (!bad_p.set || px < bad_p.value))
			mm_pick_set(&bad_p, px, reqs, pod, t, mm_evidence(x, r, nr, -1, oev));
		free(r);
		free(fn);
		det_strs_release(&ids);
	}
	sqlite3_finalize(q);

	json_t *cur_lev, *cur_pev;
	long cur_lim = fact_value(x, "mm-limit-per-prompt", "image_limit", &cur_lev);
	long cur_px = fact_value(x, "mm-max-pixels", "max_pixels", &cur_pev);
	char cur[32], ar[640];
	long k = bad_i.set ? bad_i.requests : 0;
	if (k > 0) {
		/* images per prompt: the fewest-image batch that died, its requests
		 * capped so that together they hold no more than what completed */
		int64_t ib = budget(ok_i.value, bad_i.value, ok_i.set, bad_i.set);
		long per = (long)(ib / k);
		long n = per > 1 ? per : 1;
		int clamped = cur_lim > 0 && n > cur_lim;
		if (clamped)
			n = cur_lim;
		json_t *in = json_object();
		json_object_set_new(in, "largest_completed", ok_i.set ? json_integer(ok_i.value) : json_null());
		json_object_set_new(in, "smallest_failed", json_integer(bad_i.value));
		json_object_set_new(in, "failed_requests", json_integer(k));
		snprintf(ar, sizeof ar, "the batch that died with the fewest images held %lld in %ld requests; "
			 "min(most images in flight that completed %s, fewest that failed %lld - 1) = %lld images over "
			 "those %ld requests: %lld / %ld = %ld image(s) per prompt%s%s", (long long)bad_i.value, k,
			 ok_i.set ? (snprintf(cur, sizeof cur, "%lld", (long long)ok_i.value), cur) : "none",
			 (long long)bad_i.value, (long long)ib, k, (long long)ib, k, per,
			 per < 1 ? "; at least 1" : "", clamped ? "; the current setting is lower and stays" : "");
		json_t *ev = json_array();
		json_t *e1 = json_array_get(ok_i.ev, 0), *e2 = json_array_get(bad_i.ev, 1);
		if (e1)
			json_array_append(ev, e1);
		if (e2)
			json_array_append(ev, e2);
		if (cur_lev)
			json_array_append(ev, cur_lev);
		snprintf(cur, sizeof cur, "%ld", cur_lim);
		proposal(props, "--limit-mm-per-prompt", n, cur_lim > 0 ? cur : NULL, in, ar, ev);
		/* pixels per image: n images for each of those requests within the
		 * pixels that completed, down to whole 28 x 28 patches */
		int64_t pb = budget(ok_p.value, bad_p.value, ok_p.set, bad_p.set);
		int64_t m = pb / ((int64_t)k * n);
		int64_t mr = m / 784 * 784 > 0 ? m / 784 * 784 : (m > 0 ? m : 0);
		int pclamped = cur_px > 0 && mr > cur_px;
		if (pclamped)
			mr = cur_px;
		in = json_object();
		json_object_set_new(in, "largest_completed", ok_p.set ? json_integer(ok_p.value) : json_null());
		json_object_set_new(in, "smallest_failed", bad_p.set ? json_integer(bad_p.value) : json_null());
		json_object_set_new(in, "failed_requests", json_integer(k));
		json_object_set_new(in, "images_per_prompt", json_integer(n));
		snprintf(ar, sizeof ar, "%ld requests of %ld image(s) each within min(most pixels in flight that "
			 "completed %lld, fewest that failed %lld - 1) = %lld pixels: %lld / (%ld x %ld) = %lld pixels "
			 "per image; rounded down to whole 28 x 28 patches (a multiple of 784): %lld%s", k, n,
			 (long long)(ok_p.set ? ok_p.value : 0), (long long)(bad_p.set ? bad_p.value : 0), (long long)pb,
			 (long long)pb, k, n, (long long)m, (long long)(pclamped ? m / 784 * 784 : mr),
			 pclamped ? "; the current setting is lower and stays" : "");
		ev = json_array();
		e1 = json_array_get(ok_p.ev, 0);
		e2 = json_array_get(bad_p.ev, 1);
		if (e1)
			json_array_append(ev, e1);
		if (e2)
			json_array_append(ev, e2);
		if (cur_pev)
			json_array_append(ev, cur_pev);
		snprintf(cur, sizeof cur, "%ld", cur_px);
		proposal(props, "max_pixels", (long)mr, cur_px > 0 ? cur : NULL, in, ar, ev);
	} else {
		const char *why = "no vision request was in flight when a worker died";
		not_computed(nc, "--limit-mm-per-prompt", "mm-failed", NULL, why);
		not_computed(nc, "max_pixels", "mm-failed", NULL, why);
	}
	const char *no_ok = "no moment in the window before a death when every vision request in flight finished";
	const char *no_bad = "no vision request was in flight when a worker died";
	if (!ok_i.set)
		not_computed(nc, "vision.images_in_flight.largest_completed", "mm-completed", NULL, no_ok);
	if (!bad_i.set)
		not_computed(nc, "vision.images_in_flight.smallest_failed", "mm-failed", NULL, no_bad);
	if (!ok_p.set)
		not_computed(nc, "vision.pixels_in_flight.largest_completed", "mm-completed", NULL, no_ok);
	if (!bad_p.set)
		not_computed(nc, "vision.pixels_in_flight.smallest_failed", "mm-failed", NULL, no_bad);
	json_t *v = json_object();
	json_object_set_new(v, "requests_logged", json_integer(logged));
	json_t *im = json_object();
	json_object_set_new(im, "largest_completed", mm_pick_json(&ok_i));
	json_object_set_new(im, "smallest_failed", mm_pick_json(&bad_i));
	json_object_set_new(v, "images_in_flight", im);
	json_t *pp = json_object();
	json_object_set_new(pp, "largest_completed", mm_pick_json(&ok_p));
	json_object_set_new(pp, "smallest_failed", mm_pick_json(&bad_p));
	json_object_set_new(v, "pixels_in_flight", pp);
	json_t *c = json_object();
	json_object_set_new(c, "limit_mm_per_prompt", cur_lim > 0 ? json_integer(cur_lim) : json_null());
	json_object_set_new(c, "max_pixels", cur_px > 0 ? json_integer(cur_px) : json_null());
	json_t *cev = json_array();
	if (cur_lev)
		json_array_append_new(cev, cur_lev);
	if (cur_pev)
		json_array_append_new(cev, cur_pev);
	json_object_set_new(c, "evidence", cev);
	json_object_set_new(v, "current", c);
	return v;
}

int det_limits(struct det *x)
{
	if (!json_array_size(x->ooms)) {
		json_object_set_new(x->pat, "limits", json_null());
		return 0;
	}
	double window = det_param(x, "max-batch-and-seq", "window_s", 600);
	sqlite3_stmt *q;
	/* the KV cache's capacity: the smallest any engine logged */
	int64_t cap = -1, blocks = -1, cap_rec = -1;
	long block_size = 16;
	const char *bs = setting_value(x, "block_size");
	int bs_set = bs && atol(bs) > 0;
	if (bs_set)
		block_size = atol(bs);
	const char *basis = NULL;
	if (det_prep(x, "SELECT r.id, json_extract(m.captures, '$.kv_tokens'), json_extract(m.captures, '$.gpu_blocks')"
		     " FROM signal_matches m JOIN records r ON r.id = m.record_id WHERE m.pack = ?1"
		     " AND m.signal = 'kv-cache-size' ORDER BY r.ts, r.id", &q) == 0) {
		sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
		while (sqlite3_step(q) == SQLITE_ROW) {
			int tok = sqlite3_column_type(q, 1) != SQLITE_NULL;
			int64_t c = tok ? sqlite3_column_int64(q, 1) : sqlite3_column_int64(q, 2) * block_size;
			if (c <= 0 || (cap >= 0 && c >= cap))
				continue;
			cap = c;
			cap_rec = sqlite3_column_int64(q, 0);
			blocks = tok ? -1 : sqlite3_column_int64(q, 2);
			basis = tok ? "the engine's GPU KV cache size in tokens"
				    : bs_set ? "GPU blocks times the block_size setting"
					     : "GPU blocks times vLLM's default block size, 16";
		}
		sqlite3_finalize(q);
	}
	json_t *kv = json_object();
	json_object_set_new(kv, "capacity_tokens", cap >= 0 ? json_integer(cap) : json_null());
	json_object_set_new(kv, "gpu_blocks", blocks >= 0 ? json_integer(blocks) : json_null());
	json_object_set_new(kv, "block_size", blocks >= 0 ? json_integer(block_size) : json_null());
	json_object_set_new(kv, "basis", basis ? json_string(basis) : json_null());
	json_t *kev = json_array();
	json_t *e = cap_rec >= 0 ? det_evidence_of(x, cap_rec) : NULL;
	if (e)
		json_array_append_new(kev, e);
	json_t *conc = json_null();
	if (det_prep(x, "SELECT r.id, json_extract(m.captures, '$.tokens_per_request'),"
		     " json_extract(m.captures, '$.concurrency') FROM signal_matches m JOIN records r ON r.id = m.record_id"
		     " WHERE m.pack = ?1 AND m.signal = 'kv-max-concurrency' ORDER BY r.ts, r.id LIMIT 1", &q) == 0) {
		sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
		if (sqlite3_step(q) == SQLITE_ROW) {
			json_decref(conc);
			conc = json_object();
			json_object_set_new(conc, "tokens_per_request", json_integer(sqlite3_column_int64(q, 1)));
			json_object_set_new(conc, "concurrency", det_text(q, 2));
			e = det_evidence_of(x, sqlite3_column_int64(q, 0));
			if (e)
				json_array_append_new(kev, e);
		}
		sqlite3_finalize(q);
	}
	json_object_set_new(kv, "max_concurrency", conc);
	json_object_set_new(kv, "evidence", kev);

	/* per death: what its worker completed before it, and what failed */
	struct lim_pick ok_b = {-1, -1, NULL, 0, ""}, bad_b = {-1, -1, NULL, 0, ""};
	struct lim_pick ok_t = {-1, -1, NULL, 0, ""}, bad_t = {-1, -1, NULL, 0, ""};
	long step_tokens = -1, best_mnbt = -1;
	json_t *step = json_null();
	const char *cur_mnbt = setting_value(x, "max_num_batched_tokens");
	size_t i;
	json_t *o;
	sqlite3_stmt *sq = NULL;
	det_prep(x, "SELECT json_extract(m.captures, '$.running'), json_extract(m.captures, '$.kv_cache_pct'), r.id, r.ts"
		 " FROM signal_matches m JOIN records r ON r.id = m.record_id JOIN files f ON f.id = r.file_id"
		 " WHERE m.pack = ?1 AND m.signal = 'engine-batch' AND f.path = ?2 AND r.ts >= ?3 AND r.ts < ?4"
		 " ORDER BY r.ts, r.id", &sq);
	json_array_foreach(x->ooms, i, o) {
		const char *pod = json_string_value(json_object_get(o, "pod"));
		const char *ts = json_string_value(json_object_get(o, "time"));
		const char *file = json_string_value(json_object_get(json_array_get(json_object_get(o, "evidence"), 0), "file"));
		int64_t t;
		if (!ts || !file || iq_time_parse_iso(ts, strlen(ts), &t, NULL) < 0)
			continue;
		if (sq) {
			sqlite3_bind_text(sq, 1, x->pack_id, -1, SQLITE_STATIC);
			sqlite3_bind_text(sq, 2, file, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int64(sq, 3, t - (int64_t)(window * 1e9));
			sqlite3_bind_int64(sq, 4, t);
			while (sqlite3_step(sq) == SQLITE_ROW) {
				long run = (long)sqlite3_column_int64(sq, 0);
				if (sqlite3_column_type(sq, 0) != SQLITE_NULL && run > ok_b.value)
					ok_b = (struct lim_pick){run, sqlite3_column_int64(sq, 2), pod, sqlite3_column_int64(sq, 3), ""};
				const char *pct = (const char *)sqlite3_column_text(sq, 1);
				int64_t num, den;
				if (cap >= 0 && decimal(pct, &num, &den)) {
					long tok = (long)(num * cap / (den * 100));
					if (tok > ok_t.value) {
						ok_t = (struct lim_pick){tok, sqlite3_column_int64(sq, 2), pod, sqlite3_column_int64(sq, 3), ""};
						snprintf(ok_t.frac, sizeof ok_t.frac, "%s", pct);
					}
				}
			}
			sqlite3_reset(sq);
		}
		json_t *caps;
		int64_t cts;
		int64_t rec = near_match(x, "engine-crash-stats", file, t, &caps, &cts);
		if (rec >= 0) {
			json_t *r = json_object_get(caps, "running");
			if (json_is_integer(r) && (bad_b.value < 0 || json_integer_value(r) < bad_b.value))
				bad_b = (struct lim_pick){(long)json_integer_value(r), rec, pod, cts, ""};
			const char *u = json_string_value(json_object_get(caps, "kv_usage"));
			int64_t num, den;
			if (cap >= 0 && decimal(u, &num, &den)) {
				long tok = (long)(num * cap / den);
				if (bad_t.value < 0 || tok < bad_t.value) {
					bad_t = (struct lim_pick){tok, rec, pod, cts, ""};
					snprintf(bad_t.frac, sizeof bad_t.frac, "%s", u);
				}
			}
		}
		json_decref(caps);
		/* the step: tokens scheduled, the allocation that failed, what was free */
		rec = near_match(x, "engine-crash-step", file, t, &caps, &cts);
		long s = -1;
		if (rec >= 0 && json_is_integer(json_object_get(caps, "scheduled_tokens")))
			s = (long)json_integer_value(json_object_get(caps, "scheduled_tokens"));
		json_decref(caps);
		if (s <= 0 && cur_mnbt && atol(cur_mnbt) > 0)
			s = atol(cur_mnbt);
		json_t *tr = json_object_get(o, "tried_bytes"), *fr = json_object_get(o, "free_bytes");
		if (s <= 0 || !json_is_integer(tr) || !json_is_integer(fr) || json_integer_value(tr) <= 0 ||
		    json_integer_value(fr) >= json_integer_value(tr))
			continue;
		long fit = (long)((double)s * (double)json_integer_value(fr) / (double)json_integer_value(tr));
		if (best_mnbt >= 0 && fit >= best_mnbt)
			continue;
		best_mnbt = fit;
		step_tokens = s;
		json_decref(step);
		step = json_object();
		json_object_set_new(step, "scheduled_tokens", json_integer(s));
		json_object_set_new(step, "scheduled_from", json_string(rec >= 0 ? "crash dump" : "max_num_batched_tokens"));
		json_object_set(step, "tried_bytes", tr);
		json_object_set(step, "free_bytes", fr);
		json_object_set_new(step, "pod", det_str(pod));
		json_object_set_new(step, "time", det_time_ns(t));
		json_t *sev = json_array();
		json_t *oe = json_array_get(json_object_get(o, "evidence"), 0);
		if (oe)
			json_array_append(sev, oe);
		e = rec >= 0 ? det_evidence_of(x, rec) : NULL;
		if (e)
			json_array_append_new(sev, e);
		json_object_set_new(step, "evidence", sev);
	}
	sqlite3_finalize(sq);

	json_t *lim = json_object();
	json_object_set_new(lim, "window_s", json_real(window));
	json_t *b = json_object();
	json_object_set_new(b, "largest_completed", pick_json(&ok_b, x, NULL));
	json_object_set_new(b, "smallest_failed", pick_json(&bad_b, x, NULL));
	json_object_set_new(lim, "batch", b);
	json_t *tk = json_object();
	json_object_set_new(tk, "largest_completed", pick_json(&ok_t, x, "kv_cache_pct"));
	json_object_set_new(tk, "smallest_failed", pick_json(&bad_t, x, "kv_cache_usage"));
	json_object_set_new(lim, "tokens_in_flight", tk);
	json_object_set_new(lim, "kv_cache", kv);
	json_object_set_new(lim, "failed_step", step);

	/* the settings to propose */
	json_t *props = json_array();
	char ar[512];
	long seqs = -1;
	if (ok_b.value > 0 || bad_b.value > 1) {
		long m = ok_b.value > 0 && bad_b.value > 1 ? (ok_b.value < bad_b.value - 1 ? ok_b.value : bad_b.value - 1)
			 : ok_b.value > 0 ? ok_b.value : bad_b.value - 1;
		seqs = round_down(m, 8);
		json_t *in = json_object();
		json_object_set_new(in, "largest_completed", ok_b.value > 0 ? json_integer(ok_b.value) : json_null());
		json_object_set_new(in, "smallest_failed", bad_b.value > 0 ? json_integer(bad_b.value) : json_null());
		if (ok_b.value > 0 && bad_b.value > 1)
			snprintf(ar, sizeof ar, "min(largest batch that completed %ld, smallest that failed %ld - 1) = %ld; "
				 "rounded down to a multiple of 8: %ld", ok_b.value, bad_b.value, m, seqs);
		else if (ok_b.value > 0)
			snprintf(ar, sizeof ar, "largest batch that completed: %ld; rounded down to a multiple of 8: %ld",
				 ok_b.value, seqs);
		else
			snprintf(ar, sizeof ar, "smallest batch that failed %ld - 1 = %ld; rounded down to a multiple of 8: %ld",
				 bad_b.value, m, seqs);
		json_t *ev = json_array();
		add_ev(ev, json_object_get(b, "largest_completed"));
		add_ev(ev, json_object_get(b, "smallest_failed"));
		proposal(props, "--max-num-seqs", seqs, setting_value(x, "max_num_seqs"), in, ar, ev);
	}
	long mnbt = -1;
	if (best_mnbt > 0) {
		mnbt = round_down(best_mnbt, 256);
		json_t *in = json_object();
		json_object_set(in, "scheduled_tokens", json_object_get(step, "scheduled_tokens"));
		json_object_set(in, "tried_bytes", json_object_get(step, "tried_bytes"));
		json_object_set(in, "free_bytes", json_object_get(step, "free_bytes"));
		snprintf(ar, sizeof ar, "the failed step scheduled %ld tokens and tried to allocate %lld bytes with %lld free: "
			 "%ld x %lld / %lld = %ld tokens would have fit; rounded down to a multiple of 256: %ld", step_tokens,
			 (long long)json_integer_value(json_object_get(step, "tried_bytes")),
			 (long long)json_integer_value(json_object_get(step, "free_bytes")), step_tokens,
			 (long long)json_integer_value(json_object_get(step, "free_bytes")),
			 (long long)json_integer_value(json_object_get(step, "tried_bytes")), best_mnbt, mnbt);
		proposal(props, "--max-num-batched-tokens", mnbt, cur_mnbt, in, ar,
			 json_deep_copy(json_object_get(step, "evidence")));
	}
	long mlen = -1;
	if (cap > 0 && seqs > 0) {
		long per = (long)(cap / seqs);
		mlen = per >= 1024 ? round_down(per, 1024) : round_down(per, 256);
		const char *cur = setting_value(x, "max_model_len");
		long curv = cur ? atol(cur) : 0;
		if (curv > 0 && mlen > curv)
			mlen = curv;
		json_t *in = json_object();
		json_object_set_new(in, "capacity_tokens", json_integer(cap));
		json_object_set_new(in, "max_num_seqs", json_integer(seqs));
		snprintf(ar, sizeof ar, "a full batch of %ld sequences of max-model-len tokens fits the KV cache: "
			 "%lld / %ld = %ld; rounded down to a multiple of %d: %ld%s", seqs, (long long)cap, seqs, per,
			 per >= 1024 ? 1024 : 256, mlen, curv > 0 && mlen == curv ? " (the current setting)" : "");
		proposal(props, "--max-model-len", mlen, cur, in, ar, json_deep_copy(kev));
	}
	if (mlen > 0 || mnbt > 0) {
		long adm = mlen > 0 && mnbt > 0 ? (mlen < mnbt ? mlen : mnbt) : mlen > 0 ? mlen : mnbt;
		json_t *in = json_object();
		json_object_set_new(in, "max_model_len", mlen > 0 ? json_integer(mlen) : json_null());
		json_object_set_new(in, "max_num_batched_tokens", mnbt > 0 ? json_integer(mnbt) : json_null());
		snprintf(ar, sizeof ar, "a prompt longer than one step's budget or a sequence's share of the KV cache is "
			 "refused at the gateway: min(%ld, %ld) = %ld", mlen > 0 ? mlen : adm, mnbt > 0 ? mnbt : adm, adm);
		proposal(props, "prompt-token-admission-limit", adm, NULL, in, ar, NULL);
	}
	if (seqs > 0) {
		/* the serving pods: those whose engine logged its batches */
		sqlite3_stmt *pq;
		long pods = 0;
		if (det_prep(x, "SELECT count(DISTINCT r.pod) FROM signal_matches m JOIN records r ON r.id = m.record_id"
			     " WHERE m.pack = ?1 AND m.signal = 'engine-batch'", &pq) == 0) {
			sqlite3_bind_text(pq, 1, x->pack_id, -1, SQLITE_STATIC);
			if (sqlite3_step(pq) == SQLITE_ROW)
				pods = (long)sqlite3_column_int64(pq, 0);
			sqlite3_finalize(pq);
		}
		if (pods <= 0)
			pods = x->f.lb_pods > 0 ? x->f.lb_pods : x->f.oom_pods;
		long thr = 2 * seqs * (pods > 0 ? pods : 1);
		json_t *in = json_object();
		json_object_set_new(in, "max_num_seqs", json_integer(seqs));
		json_object_set_new(in, "pods", json_integer(pods > 0 ? pods : 1));
		snprintf(ar, sizeof ar, "answer 429 past %ld running and as many waiting per serving pod: 2 x %ld x %ld pods = %ld "
			 "requests in flight at the load balancer", seqs, seqs, pods > 0 ? pods : 1, thr);
		proposal(props, "429-threshold", thr, NULL, in, ar, NULL);
	}
	json_object_set_new(lim, "proposals", props);

	/* what the bundle could not say, and which source it lacked */
	json_t *nc = json_array();
	const char *no_stats = "no engine stats line (running requests, KV cache use) in the window before a death";
	const char *no_crash = "no crash dump with the scheduler's state of the step that died";
	const char *no_kv = "no KV cache size line (vLLM's \"GPU KV cache size\" or \"# GPU blocks\")";
	if (ok_b.rec < 0)
		not_computed(nc, "batch.largest_completed", "engine-stats", NULL, no_stats);
	if (bad_b.rec < 0)
		not_computed(nc, "batch.smallest_failed", "crash-stats", NULL, no_crash);
	if (ok_t.rec < 0)
		not_computed(nc, "tokens_in_flight.largest_completed", cap < 0 ? "kv-cache" : "engine-stats", NULL,
			     cap < 0 ? no_kv : no_stats);
	if (bad_t.rec < 0)
		not_computed(nc, "tokens_in_flight.smallest_failed", cap < 0 ? "kv-cache" : "crash-stats", NULL,
			     cap < 0 ? no_kv : no_crash);
	if (seqs <= 0)
		not_computed(nc, "--max-num-seqs", "engine-stats", "crash-stats",
			     "neither a completed batch nor a failed one was logged");
	if (mnbt <= 0)
		not_computed(nc, "--max-num-batched-tokens", "failed-step", NULL,
			     "no failed step with its tokens scheduled (crash dump or max_num_batched_tokens setting) "
			     "and the allocation that failed with the memory free (the CUDA OOM message)");
	if (mlen <= 0)
		not_computed(nc, "--max-model-len", cap < 0 ? "kv-cache" : "max-num-seqs", NULL,
			     cap < 0 ? no_kv : "it divides the KV cache by --max-num-seqs, which could not be computed");
	if (mlen <= 0 && mnbt <= 0)
		not_computed(nc, "prompt-token-admission-limit", "token-limits", NULL,
			     "neither --max-model-len nor --max-num-batched-tokens could be computed");
	if (seqs <= 0)
		not_computed(nc, "429-threshold", "max-num-seqs", NULL,
			     "it scales --max-num-seqs, which could not be computed");
	json_t *vis = vision_limits(x, window, props, nc);
	json_object_set_new(lim, "vision", vis ? vis : json_null());
	json_object_set_new(lim, "not_computed", nc);
	json_object_set_new(x->pat, "limits", lim);
	return 0;
}
