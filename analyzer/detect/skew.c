/* skew.c: node clocks against the reference clock (the load balancer's).
 * A worker's death is written twice: its CUDA OOM line on its node's clock,
 * and the LB's first 502 from its pod IP on the reference clock. The
 * median difference per node is its offset (node minus reference). An
 * offset past the LB's one-second resolution is subtracted from the node's
 * times, so that every time in the findings is reference time. */
#include <stdlib.h>
#include <string.h>

#include "boottime.h"
#include "internal.h"

#define SKEW_MIN_NS NS(2)   /* below this the LB's whole seconds hide it */

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
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
			return iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(iq_store_db(s)));
		sqlite3_bind_text(q, 1, node, -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 2, delta);
		int rc = sqlite3_step(q);
		sqlite3_finalize(q);
		if (rc != SQLITE_DONE)
			return iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(iq_store_db(s)));
	}
	return 0;
}

int iq_detect_skew(struct iq_store *s, struct iq_diag *d)
{
	/* seconds since boot become wall time first, so that the offsets
	 * below move them with the rest of their node */
	int brc = iq_boottime_resolve(s, d);
	if (brc)
		return brc;
	/* one sample per CUDA OOM death: its node time, and the first 502
	 * from the pod's IP within a minute around it */
	static const char sql[] =
		"SELECT r.node, r.ts,"
		" (SELECT min(h.ts) FROM http_upstreams u JOIN http_requests h ON h.record_id = u.record_id"
		"   JOIN pod_states p ON (u.addr = p.pod_ip OR u.addr LIKE p.pod_ip || ':%')"
		"   WHERE p.pod = r.pod AND u.status = 502 AND h.ts BETWEEN r.ts - 60000000000 AND r.ts + 60000000000)"
		" FROM records r WHERE r.id IN (SELECT DISTINCT record_id FROM signal_matches WHERE signal = 'cuda-oom')"
		" AND r.node IS NOT NULL AND r.pod IS NOT NULL AND r.ts IS NOT NULL ORDER BY r.node, r.ts";
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), sql, -1, &q, NULL) != SQLITE_OK)
		return iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(iq_store_db(s)));
	char node[256] = "";
	int64_t v[256];
	size_t n = 0;
	int64_t last_death = IQ_TIME_NONE;
	int rc = 0;
	for (;;) {
		int more = sqlite3_step(q) == SQLITE_ROW;
		const char *nd = more ? (const char *)sqlite3_column_text(q, 0) : NULL;
		if (!more || strcmp(nd, node) != 0) {
			if (n) {
				qsort(v, n, sizeof *v, cmp64);
				int64_t off = v[n / 2];
				/* the 502 follows the death by up to the LB's resolution: take
				 * the offset to the nearest half second */
				off = (off + (off >= 0 ? NS(1) / 2 : -NS(1) / 2)) / (NS(1) / 2) * (NS(1) / 2);
				char basis[256];
				snprintf(basis, sizeof basis, "median of %zu worker deaths against the load balancer's "
					 "first 502 from the same pod", n);
				sqlite3_stmt *w;
				int64_t applied = 0;
				if (sqlite3_prepare_v2(iq_store_db(s), "SELECT applied_ns FROM clock_skew WHERE node = ?1",
						       -1, &w, NULL) == SQLITE_OK) {
					sqlite3_bind_text(w, 1, node, -1, SQLITE_STATIC);
					if (sqlite3_step(w) == SQLITE_ROW)
						applied = sqlite3_column_int64(w, 0);
					sqlite3_finalize(w);
				}
				/* offsets measured on already-corrected times add to what was applied */
				int64_t total = applied + off;
				int64_t want = llabs(total) >= SKEW_MIN_NS ? total : 0;
				if (want != applied && (rc = apply(s, node, want - applied, d)) != 0)
					break;
				if (sqlite3_prepare_v2(iq_store_db(s), "INSERT OR REPLACE INTO clock_skew VALUES (?1,?2,?3,?4,?5)",
						       -1, &w, NULL) == SQLITE_OK) {
					sqlite3_bind_text(w, 1, node, -1, SQLITE_STATIC);
					sqlite3_bind_int64(w, 2, total);
					sqlite3_bind_int64(w, 3, want);
					sqlite3_bind_int64(w, 4, (sqlite3_int64)n);
					sqlite3_bind_text(w, 5, basis, -1, SQLITE_TRANSIENT);
					sqlite3_step(w);
					sqlite3_finalize(w);
				}
			}
			if (!more)
				break;
			snprintf(node, sizeof node, "%s", nd);
			n = 0;
			last_death = IQ_TIME_NONE;
		}
		if (sqlite3_column_type(q, 2) == SQLITE_NULL)
			continue;
		int64_t t = sqlite3_column_int64(q, 1);
		/* repeated OOM lines of one death count once */
		if (last_death != IQ_TIME_NONE && t - last_death < NS(IQ_OOM_MERGE_S))
			continue;
		last_death = t;
		if (n < IQ_ARRAY_LEN(v))
			v[n++] = t - sqlite3_column_int64(q, 2);
	}
	sqlite3_finalize(q);
	return rc;
}
