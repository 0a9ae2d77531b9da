/* skew.c: node clocks against the reference clock (the load balancer's,
 * the API server's, the collector's). A node's offset (node minus
 * reference) is measured only from one instant seen on both clocks; each
 * kind of such pair is a basis (skew.h):
 *   chrony     the node's NTP client: "System time : X seconds fast of NTP
 *              time" (chronyc tracking), "Offset: ..." (timedatectl
 *              timesync-status), in a file of that node;
 *   collector  a collector's log line (its clock) quoting the node's
 *              `date` read at that moment;
 *   requests   a request id the LB logged and a serving pod's line naming
 *              it, written while the request was in flight;
 *   access     a pod's access-log line matched by path and time to the
 *              LB's response, where there are no ids;
 *   events     a kubelet's event: firstTimestamp (its node's clock)
 *              against metadata.creationTimestamp (the API server's, as
 *              it stored the event);
 *   deaths     a worker's CUDA OOM line against the LB's first failed
 *              attempt to its pod (coarse: the pod fails a moment later).
 * A container's start as Kubernetes reports it against its first log line
 * is not a basis: logs are rotated and trimmed. Each basis gives an
 * estimate, its uncertainty, samples and spread; iq_skew_decide() takes
 * the most precise and applies it only when its samples and the other
 * bases agree and the offset is plausible. Every node gets a row saying
 * what was found, applied or not, and why. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boottime.h"
#include "nodes.h"
#include "skew.h"
#include "zones.h"
#include "internal.h"

#define PAIR_WINDOW NS(90)         /* the largest offset access pairs look for */
#define MAX_ACCESS 800             /* access lines sampled per pod */
#define MAX_PAIRS 1000000
#define MAX_NODES 256
#define MAX_IDS_PER_NODE 5000      /* request ids kept per node */
#define MS(x) ((int64_t)(x) * 1000000)

/* ------------------------------------------------------------ decision */

static const char *const kind_names[IQ_SKEW_KINDS] = {
	"chrony", "collector", "requests", "access", "events", "deaths",
};

const char *iq_skew_kind_name(int kind)
{
	return kind >= 0 && kind < IQ_SKEW_KINDS ? kind_names[kind] : "none";
}

const char *iq_skew_status_name(enum iq_skew_status s)
{
	switch (s) {
	case IQ_SKEW_CORRECTED: return "corrected";
	case IQ_SKEW_SMALL: return "small";
	case IQ_SKEW_SPREAD: return "spread";
	case IQ_SKEW_DISAGREE: return "disagree";
	case IQ_SKEW_IMPLAUSIBLE: return "implausible";
	case IQ_SKEW_NONE: break;
	}
	return "none";
}

void iq_skew_decide(const struct iq_skew_basis *b, struct iq_skew_result *r)
{
	memset(r, 0, sizeof *r);
	r->best = r->other = -1;
	/* the most precise basis whose samples agree; else the most precise */
	for (int pass = 0; pass < 2 && r->best < 0; pass++)
		for (int k = 0; k < IQ_SKEW_KINDS; k++)
			if (b[k].have && (pass || b[k].agree) && (r->best < 0 || b[k].unc < b[r->best].unc))
				r->best = k;
	if (r->best < 0) {
		r->status = IQ_SKEW_NONE;
		return;
	}
	const struct iq_skew_basis *x = &b[r->best];
	r->off = x->off;
	r->unc = x->unc;
	if (!x->agree) {
		r->status = IQ_SKEW_SPREAD;
		return;
	}
	for (int k = 0; k < IQ_SKEW_KINDS; k++) {
		if (k == r->best || !b[k].have || !b[k].agree)
			continue;
		if (llabs(b[k].off - x->off) > b[k].unc + x->unc + MS(100)) {
			r->other = k;
			r->status = IQ_SKEW_DISAGREE;
			return;
		}
	}
	if (llabs(x->off) > IQ_SKEW_PLAUSIBLE_NS)
		r->status = IQ_SKEW_IMPLAUSIBLE;
	else if (llabs(x->off) < IQ_SKEW_MIN_NS || llabs(x->off) < x->unc)
		r->status = IQ_SKEW_SMALL;
	else
		r->status = IQ_SKEW_CORRECTED;
}

/* ------------------------------------------------------------ helpers */

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int db_err(struct iq_store *s, struct iq_diag *d)
{
	return iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(iq_store_db(s)));
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

/* The q-quantile (0..1) of sorted v[0..n). */
static int64_t quant(const int64_t *v, size_t n, double q)
{
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

/* Sorts the samples and fills med/iqr of them. */
static void summarise(struct vec *a, int64_t *med, int64_t *iqr)
{
	qsort(a->v, a->n, sizeof *a->v, cmp64);
	*med = quant(a->v, a->n, 0.5);
	*iqr = quant(a->v, a->n, 0.75) - quant(a->v, a->n, 0.25);
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

static int alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Does text name node (whole, between non-alphanumerics)? */
static int names_node(const char *text, const char *node)
{
	size_t nl = strlen(node);
	for (const char *p = text; (p = strstr(p, node)) != NULL; p++)
		if ((p == text || !alnum(p[-1])) && !alnum(p[nl]))
			return 1;
	return 0;
}

/* The nodes whose clocks are measured, and what is known of each. */
struct node {
	char *name;
	struct iq_skew_basis b[IQ_SKEW_KINDS];
	char detail[IQ_SKEW_KINDS][200];
	int64_t applied;           /* already subtracted from its times */
	long req_ids;              /* request ids of its pods' lines kept */
	struct vec coll;           /* collector samples */
};

struct nodes {
	struct node *v;
	size_t n;
};

static struct node *node_named(struct nodes *ns, const char *name)
{
	for (size_t i = 0; name && i < ns->n; i++)
		if (strcmp(ns->v[i].name, name) == 0)
			return &ns->v[i];
	return NULL;
}

/* ------------------------------------------------------------ chrony */

/* "System time     : 2.704000000 seconds fast of NTP time" (chronyc
 * tracking) or "Offset: -12.345ms" (timedatectl timesync-status): 1 with
 * the node-minus-reference offset. */
static int ntp_offset(const char *t, int timesync, int64_t *off)
{
	const char *p = strstr(t, "System time");
	if (p) {
		p = strchr(p, ':');
		if (!p)
			return 0;
		char *end;
		double v = strtod(p + 1, &end);
		if (end == p + 1 || !strstr(end, "seconds"))
			return 0;
		if (strstr(end, "slow of NTP time"))
			v = -v;
		else if (!strstr(end, "fast of NTP time"))
			return 0;
		*off = (int64_t)llround(v * 1e9);
		return 1;
	}
	if (!timesync || !(p = strstr(t, "Offset:")))
		return 0;
	char *end;
	double v = strtod(p + 7, &end);
	if (end == p + 7)
		return 0;
	double unit = strncmp(end, "ms", 2) == 0 ? 1e-3 : strncmp(end, "us", 2) == 0 ? 1e-6
		    : strncmp(end, "ns", 2) == 0 ? 1e-9 : strncmp(end, "min", 3) == 0 ? 60 : *end == 's' ? 1 : 0;
	if (!unit)
		return 0;
	*off = (int64_t)llround(v * unit * 1e9);
	return 1;
}

/* chronyc tracking and timedatectl outputs are a dozen lines, a
 * collector's log a few hundred: the scan reads only files that small, not
 * every log line of the node once per node. */
static int by_chrony(struct iq_store *s, struct node *n, struct iq_diag *d)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s),
			       "SELECT r.text, f.path FROM files f CROSS JOIN records r"
			       " ON r.id BETWEEN f.first_record AND f.last_record"
			       " WHERE f.records <= 5000 AND coalesce(f.node, r.node) = ?1 AND +r.kind = 'log'"
			       " AND (instr(r.text, 'of NTP time') > 0 OR instr(r.text, 'Offset:') > 0)"
			       " ORDER BY r.id", -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_text(q, 1, n->name, -1, SQLITE_STATIC);
	struct vec v = {0};
	char file[160] = "";
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(q, 0);
		const char *path = (const char *)sqlite3_column_text(q, 1);
		int timesync = path && (strstr(path, "timesync") || strstr(path, "timedatectl"));
		int64_t off;
		if (t && ntp_offset(t, timesync, &off)) {
			push(&v, off);
			if (!*file && path) {
				const char *b = strrchr(path, '/');
				snprintf(file, sizeof file, "%s", b ? b + 1 : path);
			}
		}
	}
	sqlite3_finalize(q);
	if (v.n) {
		int64_t med, iqr;
		summarise(&v, &med, &iqr);
		struct iq_skew_basis *b = &n->b[IQ_SKEW_CHRONY];
		b->have = 1;
		b->off = med;
		b->spread = v.v[v.n - 1] - v.v[0];
		b->samples = (long)v.n;
		b->unc = MS(20);
		b->agree = b->spread <= MS(500);
		snprintf(n->detail[IQ_SKEW_CHRONY], sizeof n->detail[0],
			 "the node's NTP client's own offset (%s)", file);
	}
	free(v.v);
	return 0;
}

/* ------------------------------------------------------------ collector */

/* A collector's line quoting a node's clock: "... collecting NODE: remote
 * `date -u +%FT%T.%3NZ` = 2025-09-09T18:54:04.936Z": the time after "= "
 * with its zone. 1 with it. */
static int quoted_date(const char *t, int64_t *out)
{
	if (!strstr(t, "date"))
		return 0;
	const char *eq = strrchr(t, '=');
	if (!eq)
		return 0;
	eq++;
	while (*eq == ' ')
		eq++;
	size_t used = 0;
	int z = iq_time_parse_iso(eq, strlen(eq), out, &used);
	return z == 1 && used >= 19;
}

/* One pass over the collectors' own logs (plain files of no node). */
static int by_collector(struct iq_store *s, struct nodes *ns, struct iq_diag *d)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s),
			       "SELECT r.ts, r.text FROM files f CROSS JOIN records r"
			       " ON r.id BETWEEN f.first_record AND f.last_record"
			       " WHERE f.node IS NULL AND f.pod IS NULL AND f.format = 'plain'"
			       " AND +r.kind = 'log' AND r.ts IS NOT NULL AND instr(r.text, 'date') > 0"
			       " AND instr(r.text, '=') > 0 ORDER BY r.id", -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(q, 1);
		int64_t remote;
		if (!t || !quoted_date(t, &remote))
			continue;
		struct node *hit = NULL;
		int many = 0;
		for (size_t i = 0; i < ns->n; i++) {
			if (!names_node(t, ns->v[i].name))
				continue;
			many |= hit != NULL;
			hit = &ns->v[i];
		}
		if (hit && !many)
			push(&hit->coll, remote - sqlite3_column_int64(q, 0));
	}
	sqlite3_finalize(q);
	for (size_t i = 0; i < ns->n; i++) {
		struct node *n = &ns->v[i];
		if (!n->coll.n)
			continue;
		int64_t med, iqr;
		summarise(&n->coll, &med, &iqr);
		struct iq_skew_basis *b = &n->b[IQ_SKEW_COLLECTOR];
		b->have = 1;
		b->off = med;
		b->spread = n->coll.v[n->coll.n - 1] - n->coll.v[0];
		b->samples = (long)n->coll.n;
		/* the remote date is read a round trip after the line's time */
		b->unc = MS(250);
		b->agree = b->spread <= NS(1);
		snprintf(n->detail[IQ_SKEW_COLLECTOR], sizeof n->detail[0],
			 "the collector's log quoting the node's date");
	}
	return 0;
}

/* ------------------------------------------------------------ events */

static int by_events(struct iq_store *s, struct node *n, struct iq_diag *d)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s),
			       "SELECT first_ts, created_ts FROM k8s_events WHERE created_ts IS NOT NULL"
			       " AND first_ts IS NOT NULL AND (host = ?1 OR ?1 LIKE host || '.%')"
			       " AND (source IS NULL OR source = '' OR source = 'kubelet')",
			       -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_text(q, 1, n->name, -1, SQLITE_STATIC);
	struct vec v = {0};
	int fine = 0;   /* a first time with a fraction: the creation's is cut */
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t f = sqlite3_column_int64(q, 0), c = sqlite3_column_int64(q, 1);
		if (llabs(f - c) > NS(86400))
			continue;
		fine |= f % NS(1) != 0;
		push(&v, f - c);
	}
	sqlite3_finalize(q);
	if (v.n >= 3) {
		qsort(v.v, v.n, sizeof *v.v, cmp64);
		/* both stamps cut to the second: the difference of two cut times
		 * averages to the difference of the times, so the mean (of the
		 * central 80 %, against a stray event) and not the median */
		size_t lo = v.n / 10, hi = v.n - v.n / 10;
		double sum = 0;
		for (size_t i = lo; i < hi; i++)
			sum += (double)v.v[i];
		int64_t mean = (int64_t)llround(sum / (double)(hi - lo));
		if (fine)
			mean -= NS(1) / 2;  /* the API's stamp lost half a second on average */
		struct iq_skew_basis *b = &n->b[IQ_SKEW_EVENTS];
		b->have = 1;
		b->off = mean + n->applied;  /* first_ts moved with the node */
		b->spread = quant(v.v, v.n, 0.9) - quant(v.v, v.n, 0.1);
		b->samples = (long)v.n;
		b->unc = NS(1) / 2;
		/* two whole-second stamps differ by the offset give or take one */
		b->agree = b->spread <= NS(2) + NS(1) / 2;
		snprintf(n->detail[IQ_SKEW_EVENTS], sizeof n->detail[0],
			 "kubelet events' firstTimestamp against the API server's creationTimestamp");
	}
	free(v.v);
	return 0;
}

/* ------------------------------------------------------------ requests */

/* A request id in normal form: hex digits only, lower case, the first 16
 * of them ("5F1C7A2E-1B3D-..." -> "5f1c7a2e1b3d..."); AWS's
 * "Root=1-<time>-<id>" gives its id part. 0 when s is not an id. */
static int norm_id(const char *s, size_t n, char out[17])
{
	if (n > 7 && memcmp(s, "Root=1-", 7) == 0) {
		const char *dash = memchr(s + 7, '-', n - 7);
		if (dash) {
			n -= (size_t)(dash + 1 - s);
			s = dash + 1;
		}
	}
	size_t k = 0, hex = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) {
			hex++;
			if (k < 16)
				out[k++] = c;
		} else if (c != '-') {
			return 0;
		}
	}
	out[k] = '\0';
	return hex >= 16;
}

/* Feeds each id-like token of a pod's line to fn: runs of letters,
 * digits and '-', without an engine's prefix ("chatcmpl-", "cmpl-",
 * "req-") and a choice's "-0". */
static void id_tokens(const char *t, void (*fn)(void *, const char *), void *u)
{
	for (const char *p = t; *p;) {
		if (!alnum(*p)) {
			p++;
			continue;
		}
		const char *e = p;
		while (alnum(*e) || *e == '-')
			e++;
		const char *b = p;
		size_t n = (size_t)(e - p);
		p = e;
		if (n < 16)
			continue;
		/* a lower-case word and a dash in front: the engine's prefix */
		const char *dash = memchr(b, '-', n < 12 ? n : 12);
		if (dash && dash > b && (*b < '0' || *b > '9')) {
			int word = 1;
			for (const char *c = b; c < dash; c++)
				word &= *c >= 'a' && *c <= 'z';
			if (word && (size_t)(dash - b) > 1) {
				n -= (size_t)(dash + 1 - b);
				b = dash + 1;
			}
		}
		if (n > 2 && b[n - 2] == '-' && b[n - 1] >= '0' && b[n - 1] <= '9')
			n -= 2;
		char id[17];
		if (norm_id(b, n, id))
			fn(u, id);
	}
}

/* The pods' side of the request-id pairs: the first line of each id. */
struct ids {
	struct det_strs keys;
	int32_t *node;            /* per key: index into nodes */
	int64_t *ts;              /* per key: the line's time */
	size_t cap;
	struct nodes *ns;
	int32_t cur;              /* the node of the line being read */
	int64_t cur_ts;
};

static void add_id(void *u, const char *id)
{
	struct ids *x = u;
	struct node *n = &x->ns->v[x->cur];
	if (n->req_ids >= MAX_IDS_PER_NODE)
		return;
	int is_new;
	size_t k = det_strs_id(&x->keys, id, &is_new);
	if (!is_new)
		return;
	if (k >= x->cap) {
		x->cap = x->cap ? x->cap * 2 : 1024;
		x->node = iq_xrealloc(x->node, x->cap * sizeof *x->node);
		x->ts = iq_xrealloc(x->ts, x->cap * sizeof *x->ts);
	}
	x->node[k] = x->cur;
	x->ts[k] = x->cur_ts;
	n->req_ids++;
}

/* One pass over the serving pods' lines that may name a request, one over
 * the LB's requests with an id: for each id both logged, the pod's line
 * time t against the LB's response end e (cut to the LB's resolution) and
 * duration: t - start if the pod logs as the request arrives, t - end if
 * as it leaves. Whichever hypothesis the samples fit tighter decides. */
static int by_requests(struct iq_store *s, struct nodes *ns, struct iq_diag *d)
{
	sqlite3_stmt *q, *fq;
	/* file by file, so that a node whose ids are all kept (enough for its
	 * median) stops the reading of its files */
	if (sqlite3_prepare_v2(iq_store_db(s),
			       "SELECT node, first_record, last_record FROM files WHERE pod IS NOT NULL"
			       " AND node IS NOT NULL AND first_record IS NOT NULL AND last_record IS NOT NULL"
			       " ORDER BY first_record", -1, &fq, NULL) != SQLITE_OK)
		return db_err(s, d);
	if (sqlite3_prepare_v2(iq_store_db(s),
			       "SELECT r.ts, r.text FROM records r WHERE r.id BETWEEN ?1 AND ?2 AND +r.kind = 'log'"
			       " AND r.ts IS NOT NULL AND (instr(r.text, 'equest') > 0 OR instr(r.text, 'EQUEST') > 0"
			       " OR instr(r.text, 'req_id') > 0 OR instr(r.text, 'trace_id') > 0)"
			       " ORDER BY r.id", -1, &q, NULL) != SQLITE_OK) {
		sqlite3_finalize(fq);
		return db_err(s, d);
	}
	struct ids x = {.ns = ns};
	while (sqlite3_step(fq) == SQLITE_ROW) {
		struct node *n = node_named(ns, (const char *)sqlite3_column_text(fq, 0));
		if (!n || n->req_ids >= MAX_IDS_PER_NODE)
			continue;
		x.cur = (int32_t)(n - ns->v);
		sqlite3_reset(q);
		sqlite3_bind_int64(q, 1, sqlite3_column_int64(fq, 1));
		sqlite3_bind_int64(q, 2, sqlite3_column_int64(fq, 2));
		while (n->req_ids < MAX_IDS_PER_NODE && sqlite3_step(q) == SQLITE_ROW) {
			const char *t = (const char *)sqlite3_column_text(q, 1);
			if (!t)
				continue;
			x.cur_ts = sqlite3_column_int64(q, 0);
			id_tokens(t, add_id, &x);
		}
	}
	sqlite3_finalize(q);
	sqlite3_finalize(fq);
	int rc = 0;
	if (x.keys.n) {
		if (sqlite3_prepare_v2(iq_store_db(s), "SELECT ts, duration_s, request_id FROM http_requests"
				       " WHERE request_id IS NOT NULL AND ts IS NOT NULL", -1, &q, NULL) != SQLITE_OK) {
			rc = db_err(s, d);
		} else {
			struct resol res = {0};
			struct vec *dt = iq_xcalloc(ns->n, sizeof *dt), *du = iq_xcalloc(ns->n, sizeof *du);
			while (sqlite3_step(q) == SQLITE_ROW) {
				const char *rid = (const char *)sqlite3_column_text(q, 2);
				char id[17];
				int64_t end = sqlite3_column_int64(q, 0);
				count_res(&res, end);
				if (!rid || !norm_id(rid, strlen(rid), id))
					continue;
				size_t k = det_strs_find(&x.keys, id);
				if (k == SIZE_MAX)
					continue;
				double dur = sqlite3_column_type(q, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 1);
				push(&dt[x.node[k]], x.ts[k] - end);
				push(&du[x.node[k]], isfinite(dur) && dur >= 0 ? (int64_t)llround(dur * 1e9) : -1);
			}
			sqlite3_finalize(q);
			int64_t r = resolution(&res);
			for (size_t i = 0; i < ns->n; i++) {
				struct node *n = &ns->v[i];
				if (dt[i].n >= 5) {
					struct vec a = {0}, b = {0};
					for (size_t j = 0; j < dt[i].n; j++) {
						/* the LB cut its end time: the true end is half
						 * its resolution later on average */
						int64_t de = dt[i].v[j] - (r > 1000 ? r / 2 : 0);
						push(&b, de);
						if (du[i].v[j] >= 0)
							push(&a, de + du[i].v[j]);
					}
					int64_t ma = 0, ia = INT64_MAX, mb, ib;
					if (a.n * 10 >= dt[i].n * 9)
						summarise(&a, &ma, &ia);
					summarise(&b, &mb, &ib);
					int arrive = ia <= ib;
					int64_t med = arrive ? ma : mb, iqr = arrive ? ia : ib;
					size_t cnt = arrive ? a.n : b.n;
					struct iq_skew_basis *bs = &n->b[IQ_SKEW_REQUESTS];
					bs->have = 1;
					bs->off = med + n->applied;
					bs->spread = iqr;
					bs->samples = (long)cnt;
					bs->unc = MS(20) + (int64_t)(1.25 * (double)iqr / sqrt((double)cnt));
					bs->agree = iqr <= r * 3 / 4 + NS(1) / 4;
					snprintf(n->detail[IQ_SKEW_REQUESTS], sizeof n->detail[0],
						 "request ids in the load balancer's log and the pods' lines %s (LB times to %s)",
						 arrive ? "as requests arrived" : "as responses left",
						 r >= NS(1) ? "the second" : r >= 1000000 ? "the millisecond" : "the microsecond");
					free(a.v);
					free(b.v);
				}
				free(dt[i].v);
				free(du[i].v);
			}
			free(dt);
			free(du);
		}
	}
	det_strs_release(&x.keys);
	free(x.node);
	free(x.ts);
	return rc;
}

/* ------------------------------------------------------------ access */

/* The LB's requests to pod (address ip:port or its name, as HAProxy logs
 * it) between lo and hi: end time, path, duration, client. */
static int lb_requests(struct iq_store *s, const char *pod, const char *ip, int64_t lo, int64_t hi,
		       sqlite3_stmt **q, struct iq_diag *d)
{
	if (sqlite3_prepare_v2(iq_store_db(s),
			       "SELECT h.ts, coalesce(h.path, ''), h.duration_s, coalesce(h.client, '') FROM http_requests h"
			       " JOIN http_upstreams u ON u.record_id = h.record_id"
			       " WHERE h.ts BETWEEN ?1 AND ?2 AND (u.addr = ?3 OR u.addr LIKE ?3 || ':%' OR u.addr = ?4)"
			       " AND (u.status BETWEEN 200 AND 299 OR (u.status IS NULL AND h.status BETWEEN 200 AND 299))"
			       " ORDER BY h.ts LIMIT 400000", -1, q, NULL) != SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_int64(*q, 1, lo);
	sqlite3_bind_int64(*q, 2, hi);
	sqlite3_bind_text(*q, 3, ip, -1, SQLITE_STATIC);
	sqlite3_bind_text(*q, 4, pod, -1, SQLITE_STATIC);
	return 0;
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

/* A pod's line of an access (its time and the path, or the client's
 * address), or an LB's request to it (end time, duration, path, client). */
struct acc {
	int64_t t, dur;          /* dur < 0 unknown */
	char *path, *client;
};

static int cmp_acc(const void *a, const void *b)
{
	const struct acc *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

static void acc_free(struct acc *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].client);
	}
	free(v);
}

/* The IPv4 address after "client" in a line ("client":"10.1.2.3",
 * client=10.1.2.3, client_ip: 10.1.2.3): 1 with it in out. */
static int client_ip(const char *t, char out[16])
{
	const char *p = strstr(t, "client");
	if (!p)
		return 0;
	p += 6;
	for (int k = 0; k < 8 && *p && (*p < '0' || *p > '9'); k++)
		p++;
	size_t n = 0;
	int dots = 0;
	while (n < 15 && ((p[n] >= '0' && p[n] <= '9') || p[n] == '.'))
		dots += p[n++] == '.';
	if (dots != 3 || n < 7 || (p[n] >= '0' && p[n] <= '9'))
		return 0;
	memcpy(out, p, n);
	out[n] = '\0';
	return 1;
}

/* The differences of a pod's lines to the LB's requests to it within
 * PAIR_WINDOW: access lines (written as the response leaves) against the
 * responses of the same path (into end_p), and lines naming a client
 * against that client's requests, from their start (into start_c, the
 * line written as the request arrived) and end (end_c). Every pair of two
 * unrelated requests is noise that densest() must rise above. */
static int access_pairs(struct iq_store *s, const char *pod, const char *ip, struct vec *end_p,
			struct vec *start_c, struct vec *end_c, struct resol *res, struct iq_diag *d)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT r.ts, r.text FROM files f CROSS JOIN records r"
			       " ON r.id BETWEEN f.first_record AND f.last_record WHERE f.pod = ?1"
			       " AND +r.pod = ?1 AND r.ts IS NOT NULL AND +r.kind = 'log'"
			       " AND (instr(r.text, ' HTTP/') > 0 OR instr(r.text, 'client') > 0)"
			       " ORDER BY r.id LIMIT 20000", -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_text(q, 1, pod, -1, SQLITE_STATIC);
	struct acc *at = NULL;
	size_t na = 0;
	while (sqlite3_step(q) == SQLITE_ROW && na < 2 * MAX_ACCESS) {
		const char *t = (const char *)sqlite3_column_text(q, 1);
		struct iq_str p;
		char cip[16];
		if (!t)
			continue;
		int path = access_line(t, &p), cli = client_ip(t, cip);
		if (!path && !cli)
			continue;
		at = iq_xrealloc(at, (na + 1) * sizeof *at);
		at[na].t = sqlite3_column_int64(q, 0);
		at[na].dur = -1;
		at[na].path = path ? iq_xstrndup(p.p, p.n) : NULL;
		at[na++].client = cli ? iq_xstrdup(cip) : NULL;
	}
	sqlite3_finalize(q);
	if (na > 1)
		qsort(at, na, sizeof *at, cmp_acc);
	int rc = 0;
	if (na && !(rc = lb_requests(s, pod, ip, at[0].t - PAIR_WINDOW, at[na - 1].t + PAIR_WINDOW + NS(600),
				     &q, d))) {
		struct acc *lb = NULL;
		size_t nlb = 0, cap = 0;
		while (sqlite3_step(q) == SQLITE_ROW) {
			if (nlb == cap) {
				cap = cap ? cap * 2 : 256;
				lb = iq_xrealloc(lb, cap * sizeof *lb);
			}
			lb[nlb].t = sqlite3_column_int64(q, 0);
			double dur = sqlite3_column_type(q, 2) == SQLITE_NULL ? -1 : sqlite3_column_double(q, 2);
			lb[nlb].dur = dur >= 0 && dur < 3600 ? (int64_t)llround(dur * 1e9) : -1;
			struct iq_str up = url_path((const char *)sqlite3_column_text(q, 1));
			lb[nlb].path = iq_xstrndup(up.p, up.n);
			lb[nlb].client = iq_xstrdup((const char *)sqlite3_column_text(q, 3));
			count_res(res, lb[nlb].t);
			nlb++;
			/* a busy pod behind a coarse LB: give up early (see below) */
			double sofar = (double)(lb[nlb - 1].t - (at[0].t - PAIR_WINDOW)) / 1e9;
			if (nlb >= 4000 && sofar > 0 && (double)nlb / sofar * (double)resolution(res) / 1e9 >= 0.3)
				break;
		}
		sqlite3_finalize(q);
		/* unrelated pairs of a path land in the true difference's window
		 * at the pod's request rate times the LB's resolution: past 0.3
		 * no pile-up can be told from chance; clients or ids must do */
		double span = (double)(at[na - 1].t - at[0].t + 2 * PAIR_WINDOW) / 1e9;
		int paths = (double)nlb / span * (double)resolution(res) / 1e9 < 0.3;
		size_t first = 0;
		for (size_t i = 0; i < na && end_p->n + start_c->n < MAX_PAIRS; i++) {
			while (first < nlb && lb[first].t < at[i].t - PAIR_WINDOW)
				first++;
			/* a request ends after it starts: look past the window by
			 * the longest plausible duration for starts */
			for (size_t j = first; j < nlb && lb[j].t <= at[i].t + PAIR_WINDOW + NS(600); j++) {
				int near = lb[j].t <= at[i].t + PAIR_WINDOW;
				if (paths && near && at[i].path && strcmp(at[i].path, lb[j].path) == 0)
					push(end_p, at[i].t - lb[j].t);
				if (at[i].client && strcmp(at[i].client, lb[j].client) == 0) {
					if (near)
						push(end_c, at[i].t - lb[j].t);
					int64_t st = lb[j].dur >= 0 ? lb[j].t - lb[j].dur : IQ_TIME_NONE;
					if (st != IQ_TIME_NONE && llabs(at[i].t - st) <= PAIR_WINDOW)
						push(start_c, at[i].t - st);
				}
			}
		}
		acc_free(lb, nlb);
	}
	acc_free(at, na);
	return rc;
}

/* Where differences pile up: the window of width res holding the most of
 * them, when it holds at least 5 and clearly more than chance (pairs of
 * unrelated requests spread over the whole range): its start when the LB
 * cut its times to the second (the pair's true difference lies in the
 * next second), else its median. */
static int densest(struct vec *dv, int64_t res, int64_t width, int64_t *off, long *count)
{
	if (dv->n < 5)
		return 0;
	qsort(dv->v, dv->n, sizeof *dv->v, cmp64);
	size_t best = 0, bi = 0, j = 0;
	for (size_t i = 0; i < dv->n; i++) {
		while (j < dv->n && dv->v[j] < dv->v[i] + width)
			j++;
		if (j - i > best) {
			best = j - i;
			bi = i;
		}
	}
	double chance = (double)dv->n * (double)width / (double)(2 * PAIR_WINDOW);
	if (best < 5 || (double)best < 3.0 * chance + 5)
		return 0;
	*off = res > 1000000 && width <= res ? dv->v[bi] : dv->v[bi + best / 2];
	*count = (long)best;
	return 1;
}

static int by_access(struct iq_store *s, struct node *n, struct iq_diag *d)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT DISTINCT pod, pod_ip FROM pod_states"
			       " WHERE node = ?1 AND pod IS NOT NULL AND pod_ip IS NOT NULL ORDER BY pod",
			       -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_text(q, 1, n->name, -1, SQLITE_STATIC);
	char *pods[64], *ips[64];
	size_t np = 0;
	while (sqlite3_step(q) == SQLITE_ROW && np < IQ_ARRAY_LEN(pods)) {
		pods[np] = iq_xstrdup((const char *)sqlite3_column_text(q, 0));
		ips[np++] = iq_xstrdup((const char *)sqlite3_column_text(q, 1));
	}
	sqlite3_finalize(q);
	struct vec v[3] = {{0}};  /* path against end, client against start, against end */
	struct resol rs = {0};
	int rc = 0;
	for (size_t i = 0; i < np && !rc; i++)
		rc = access_pairs(s, pods[i], ips[i], &v[0], &v[1], &v[2], &rs, d);
	int64_t res = resolution(&rs);
	/* a client's line and its request pair up to the network's jitter */
	int64_t cw = res > MS(50) ? res : MS(50);
	static const char *const what[] = {
		"the pods' access-log lines matched by path and time to the load balancer's responses",
		"the pods' lines naming a client matched to that client's requests as they began",
		"the pods' lines naming a client matched to that client's requests as they ended",
	};
	int best = -1;
	int64_t boff = 0;
	long bcnt = 0;
	for (int k = 0; k < 3 && !rc; k++) {
		int64_t off;
		long cnt;
		if (densest(&v[k], res, k ? cw : res, &off, &cnt) && cnt > bcnt) {
			best = k;
			boff = off;
			bcnt = cnt;
		}
	}
	if (best >= 0) {
		struct iq_skew_basis *b = &n->b[IQ_SKEW_ACCESS];
		b->have = 1;
		b->off = boff + n->applied;
		b->samples = bcnt;
		b->spread = best ? cw : res;
		b->unc = (best ? cw : res) / 2 + MS(20);
		b->agree = 1;
		snprintf(n->detail[IQ_SKEW_ACCESS], sizeof n->detail[0], "%s", what[best]);
	}
	for (size_t i = 0; i < np; i++) {
		free(pods[i]);
		free(ips[i]);
	}
	for (int k = 0; k < 3; k++)
		free(v[k].v);
	return rc;
}

/* ------------------------------------------------------------ deaths */

/* CUDA OOM deaths against the LB's first attempt to the pod that failed
 * for want of it (502 closed/refused, 503 no upstream; not a 504, which
 * may time out before the death). */
static int by_deaths(struct iq_store *s, struct node *n, struct iq_diag *d)
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
	sqlite3_bind_text(q, 1, n->name, -1, SQLITE_STATIC);
	struct vec v = {0};
	int64_t last_death = IQ_TIME_NONE;
	while (sqlite3_step(q) == SQLITE_ROW) {
		if (sqlite3_column_type(q, 1) == SQLITE_NULL)
			continue;
		int64_t t = sqlite3_column_int64(q, 0);
		/* repeated OOM lines of one death count once */
		if (last_death != IQ_TIME_NONE && t - last_death < NS(IQ_OOM_MERGE_S))
			continue;
		last_death = t;
		push(&v, t - sqlite3_column_int64(q, 1));
	}
	sqlite3_finalize(q);
	if (v.n) {
		int64_t med, iqr;
		summarise(&v, &med, &iqr);
		struct iq_skew_basis *b = &n->b[IQ_SKEW_DEATHS];
		b->have = 1;
		/* the LB sees the pod fail 0 to 3 s after the line (the engine
		 * shuts down first): the middle of that, give or take 2 s */
		b->off = med + NS(1) / 2 + n->applied;
		b->samples = (long)v.n;
		b->spread = v.v[v.n - 1] - v.v[0];
		b->unc = NS(2);
		/* most deaths agree: a death the LB saw late (a pod it had
		 * stopped sending to) is a stray, not a disagreement; one
		 * death alone cannot tell a stray from an offset */
		size_t near = 0;
		for (size_t i = 0; i < v.n; i++)
			near += llabs(v.v[i] - med) <= NS(2);
		b->agree = near >= 2 && near * 2 > v.n;
		snprintf(n->detail[IQ_SKEW_DEATHS], sizeof n->detail[0],
			 "worker deaths against the load balancer's first failed response from the pod");
	}
	free(v.v);
	return 0;
}

/* ------------------------------------------------------------ applying */

/* Moves node's own times by delta: the records its files hold (and those
 * of files without a node that name it: a syslog host, a kernel log) of
 * the kinds written on its clock (its logs, kernel messages, GPU samples
 * of nvidia-smi; not Prometheus samples, stamped by the server), their
 * typed rows, and the files' time spans. */
static int apply(struct iq_store *s, const char *node, int64_t delta, struct iq_diag *d)
{
	static const char *const sql[] = {
		"CREATE TEMP TABLE IF NOT EXISTS skew_moved (id INTEGER PRIMARY KEY)",
		"DELETE FROM skew_moved",
		"INSERT INTO skew_moved SELECT r.id FROM files f CROSS JOIN records r"
		" ON r.id BETWEEN f.first_record AND f.last_record"
		" WHERE (f.node = ?1 OR (f.node IS NULL AND r.node = ?1)) AND r.ts IS NOT NULL"
		" AND r.kind IN ('log', 'kernel', 'gpu')"
		" AND coalesce(f.format, '') NOT IN ('prometheus-text', 'prometheus-json')",
		"UPDATE records SET ts = ts - ?2, ts_how = 'skew_corrected' WHERE id IN (SELECT id FROM skew_moved)",
		"UPDATE gpu_samples SET ts = ts - ?2 WHERE ts IS NOT NULL AND record_id IN (SELECT id FROM skew_moved)",
		"UPDATE kernel_events SET ts = ts - ?2 WHERE ts IS NOT NULL AND record_id IN (SELECT id FROM skew_moved)",
		/* a kubelet stamps its events and its containers' states on its
		 * node's clock (creationTimestamp is the API server's) */
		"INSERT OR IGNORE INTO skew_moved SELECT record_id FROM k8s_events WHERE host = ?1 OR ?1 LIKE host || '.%'",
		"UPDATE records SET ts = ts - ?2 WHERE ts IS NOT NULL AND kind = 'event' AND id IN (SELECT id FROM skew_moved)",
		"UPDATE k8s_events SET ts = ts - ?2, first_ts = first_ts - ?2, last_ts = last_ts - ?2"
		" WHERE record_id IN (SELECT id FROM skew_moved)",
		"UPDATE pod_states SET started_at = started_at - ?2, finished_at = finished_at - ?2,"
		" last_started_at = last_started_at - ?2, last_finished_at = last_finished_at - ?2 WHERE node = ?1",
		"UPDATE files SET first_ts = (SELECT min(ts) FROM records r WHERE r.id BETWEEN first_record AND last_record),"
		" last_ts = (SELECT max(ts) FROM records r WHERE r.id BETWEEN first_record AND last_record)"
		" WHERE id IN (SELECT DISTINCT r.file_id FROM records r JOIN skew_moved m ON m.id = r.id)",
	};
	for (size_t i = 0; i < IQ_ARRAY_LEN(sql); i++) {
		sqlite3_stmt *q;
		if (sqlite3_prepare_v2(iq_store_db(s), sql[i], -1, &q, NULL) != SQLITE_OK)
			return db_err(s, d);
		if (sqlite3_bind_parameter_count(q) >= 1)
			sqlite3_bind_text(q, 1, node, -1, SQLITE_STATIC);
		if (sqlite3_bind_parameter_count(q) >= 2)
			sqlite3_bind_int64(q, 2, delta);
		int rc = sqlite3_step(q);
		sqlite3_finalize(q);
		if (rc != SQLITE_DONE)
			return db_err(s, d);
	}
	return 0;
}

/* The bases of n as JSON: [{basis, offset_s, uncertainty_s, samples,
 * spread_s, agree, what}]. Caller frees. */
static char *bases_json(const struct node *n)
{
	json_t *a = json_array();
	for (int k = 0; k < IQ_SKEW_KINDS; k++) {
		const struct iq_skew_basis *b = &n->b[k];
		if (!b->have)
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "basis", json_string(kind_names[k]));
		json_object_set_new(o, "offset_s", json_real((double)b->off / 1e9));
		json_object_set_new(o, "uncertainty_s", json_real((double)b->unc / 1e9));
		json_object_set_new(o, "samples", json_integer(b->samples));
		json_object_set_new(o, "spread_s", json_real((double)b->spread / 1e9));
		json_object_set_new(o, "agree", json_boolean(b->agree));
		json_object_set_new(o, "what", json_string(n->detail[k]));
		json_array_append_new(a, o);
	}
	char *t = json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(a);
	return t;
}

/* Decides n's offset, moves its times by what changes, and stores its row;
 * *moved is set when times moved. */
static int record(struct iq_store *s, struct node *n, int *moved, struct iq_diag *d)
{
	struct iq_skew_result r;
	iq_skew_decide(n->b, &r);
	/* whole milliseconds: finer than any evidence a report cites */
	int64_t off = (r.off + (r.off >= 0 ? 500000 : -500000)) / 1000000 * 1000000;
	int64_t want = r.status == IQ_SKEW_CORRECTED ? off : 0;
	int rc;
	if (want != n->applied && (rc = apply(s, n->name, want - n->applied, d)) != 0)
		return rc;
	*moved |= want != n->applied;
	char basis[400];
	const char *bn = r.best >= 0 ? n->detail[r.best] : "";
	switch (r.status) {
	case IQ_SKEW_NONE:
		snprintf(basis, sizeof basis, "could not be determined: no event was seen on both this node's "
			 "clock and the reference");
		break;
	case IQ_SKEW_DISAGREE:
		snprintf(basis, sizeof basis, "not corrected: %s (%+.3f s) and %s (%+.3f s) disagree", bn,
			 (double)r.off / 1e9, n->detail[r.other], (double)n->b[r.other].off / 1e9);
		break;
	case IQ_SKEW_SPREAD:
		snprintf(basis, sizeof basis, "not corrected: the samples of %s disagree (spread %.3f s)", bn,
			 (double)n->b[r.best].spread / 1e9);
		break;
	case IQ_SKEW_IMPLAUSIBLE:
		snprintf(basis, sizeof basis, "not corrected: clocks disagree by %+.3f s by %s, more than an "
			 "NTP-synchronised node drifts", (double)r.off / 1e9, bn);
		break;
	case IQ_SKEW_SMALL:
		snprintf(basis, sizeof basis, "not corrected: within the uncertainty of %s", bn);
		break;
	case IQ_SKEW_CORRECTED:
		snprintf(basis, sizeof basis, "%s", bn);
		break;
	}
	char *bj = bases_json(n);
	sqlite3_stmt *w;
	if (sqlite3_prepare_v2(iq_store_db(s), "INSERT OR REPLACE INTO clock_skew"
			       " (node, offset_ns, applied_ns, samples, basis, spread_ns, uncertainty_ns, status, bases)"
			       " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)", -1, &w, NULL) != SQLITE_OK) {
		free(bj);
		return db_err(s, d);
	}
	sqlite3_bind_text(w, 1, n->name, -1, SQLITE_STATIC);
	if (r.status == IQ_SKEW_NONE) {
		sqlite3_bind_null(w, 2);
		sqlite3_bind_null(w, 6);
		sqlite3_bind_null(w, 7);
	} else {
		sqlite3_bind_int64(w, 2, off);
		sqlite3_bind_int64(w, 6, n->b[r.best].spread);
		sqlite3_bind_int64(w, 7, r.unc);
	}
	sqlite3_bind_int64(w, 3, want);
	sqlite3_bind_int64(w, 4, r.best >= 0 ? n->b[r.best].samples : 0);
	sqlite3_bind_text(w, 5, basis, -1, SQLITE_STATIC);
	sqlite3_bind_text(w, 8, iq_skew_status_name(r.status), -1, SQLITE_STATIC);
	sqlite3_bind_text(w, 9, bj, -1, SQLITE_STATIC);
	rc = sqlite3_step(w);
	sqlite3_finalize(w);
	free(bj);
	return rc == SQLITE_DONE ? 0 : db_err(s, d);
}

int iq_detect_skew(struct iq_store *s, struct iq_diag *d)
{
	/* the collector's folders give files their nodes; seconds since boot
	 * become wall time first, so that offsets move them with the rest of
	 * their node */
	int rc = iq_nodes_resolve(s, d);
	if (!rc)
		rc = iq_zones_resolve(s, d);
	if (!rc)
		rc = iq_boottime_resolve(s, d);
	if (rc)
		return rc;
	/* the nodes that run pods, wrote files of the bundle or report events */
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT n.node, coalesce(c.applied_ns, 0) FROM"
			       " (SELECT DISTINCT node FROM pod_states WHERE node IS NOT NULL"
			       "  UNION SELECT DISTINCT node FROM files WHERE node IS NOT NULL"
			       "  UNION SELECT DISTINCT host FROM k8s_events WHERE host IS NOT NULL AND host <> ''"
			       "   AND coalesce(source, 'kubelet') IN ('kubelet', '')) n"
			       " LEFT JOIN clock_skew c ON c.node = n.node ORDER BY 1", -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	struct nodes ns = {0};
	ns.v = iq_xcalloc(MAX_NODES, sizeof *ns.v);
	while (sqlite3_step(q) == SQLITE_ROW && ns.n < MAX_NODES) {
		ns.v[ns.n].name = iq_xstrdup((const char *)sqlite3_column_text(q, 0));
		ns.v[ns.n++].applied = sqlite3_column_int64(q, 1);
	}
	sqlite3_finalize(q);
	rc = by_collector(s, &ns, d);
	if (!rc)
		rc = by_requests(s, &ns, d);
	int moved = 0;
	for (size_t i = 0; i < ns.n && !rc; i++) {
		struct node *n = &ns.v[i];
		rc = by_chrony(s, n, d);
		if (!rc)
			rc = by_events(s, n, d);
		/* the coarse statistical bases, where nothing better is known */
		if (!rc && !n->b[IQ_SKEW_CHRONY].have && !n->b[IQ_SKEW_COLLECTOR].have && !n->b[IQ_SKEW_REQUESTS].have)
			rc = by_access(s, n, d);
		int any = 0;
		for (int k = 0; k < IQ_SKEW_KINDS; k++)
			any |= n->b[k].have && n->b[k].agree;
		/* deaths only where nothing else is known: a coarse basis */
		if (!rc && !any)
			rc = by_deaths(s, n, d);
		if (!rc)
			rc = record(s, n, &moved, d);
	}
	for (size_t i = 0; i < ns.n; i++) {
		free(ns.v[i].name);
		free(ns.v[i].coll.v);
	}
	free(ns.v);
	/* the moved records are skew_corrected now: one count for all nodes */
	if (!rc && moved && iq_store_recount_time_sources(s))
		rc = db_err(s, d);
	return rc;
}
