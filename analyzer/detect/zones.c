/* zones.c: times written without a zone, given the zone the bundle says
 * their node was in. Parsers take such times as UTC (ts_how assumed_utc,
 * or year_inferred for syslog and klog, which have neither year nor zone)
 * unless --tz named a zone. When it did not, a node's etc/timezone or
 * timedatectl record (parse/timezone.c) names the zone of that node's
 * zone-less times, and a zone file with no node identity that of every
 * node without one of its own. Those records' times (and the typed rows'
 * copies, and the files' time spans) are moved from that zone's wall clock
 * to UTC, assumed_utc becomes assumed_zone, and meta "zone NODE" says
 * which zone from which file; that row also keeps a second run from moving
 * them again. Runs before the boot-time and clock-skew estimates. */
#include <string.h>

#include "internal.h"
#include "zones.h"

static int db_err(struct iq_store *s, struct iq_diag *d)
{
	return iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(iq_store_db(s)));
}

static void local_to_utc(sqlite3_context *c, int argc, sqlite3_value **v)
{
	(void)argc;
	if (sqlite3_value_type(v[0]) == SQLITE_NULL) {
		sqlite3_result_null(c);
		return;
	}
	sqlite3_result_int64(c, iq_time_from_local(sqlite3_value_int64(v[0])));
}

/* Moves the zone-less times of the files whose node is `node` (every file
 * whose node has no zone of its own when node is "") into zone. */
static int apply(struct iq_store *s, const char *node, const char *zone, const char *from,
		 struct iq_diag *d)
{
	sqlite3 *db = iq_store_db(s);
	struct iq_diag zd = {{0}};
	if (iq_time_set_default_zone(zone, &zd))
		return 0; /* a zone this machine does not know: the times stay UTC */
	static const char *const sql[] = {
		"CREATE TEMP TABLE IF NOT EXISTS zone_files (id INTEGER PRIMARY KEY)",
		"DELETE FROM zone_files",
		"INSERT INTO zone_files SELECT id FROM files WHERE CASE WHEN ?1 = ''"
		" THEN coalesce(node, '') NOT IN (SELECT substr(key, 6) FROM meta WHERE key LIKE 'zone %')"
		" ELSE node = ?1 END",
		"UPDATE records SET ts = iq_local_to_utc(ts),"
		" ts_how = CASE ts_how WHEN 'assumed_utc' THEN 'assumed_zone' ELSE ts_how END"
		" WHERE file_id IN (SELECT id FROM zone_files) AND ts IS NOT NULL"
		" AND ts_how IN ('assumed_utc', 'year_inferred')",
		"UPDATE http_requests SET ts = (SELECT ts FROM records r WHERE r.id = record_id)"
		" WHERE record_id IN (SELECT r.id FROM records r JOIN zone_files z ON z.id = r.file_id)",
		"UPDATE gpu_samples SET ts = (SELECT ts FROM records r WHERE r.id = record_id)"
		" WHERE record_id IN (SELECT r.id FROM records r JOIN zone_files z ON z.id = r.file_id)",
		"UPDATE kernel_events SET ts = (SELECT ts FROM records r WHERE r.id = record_id)"
		" WHERE record_id IN (SELECT r.id FROM records r JOIN zone_files z ON z.id = r.file_id)",
		"UPDATE files SET"
		" first_ts = (SELECT min(ts) FROM records r WHERE r.file_id = files.id),"
		" last_ts = (SELECT max(ts) FROM records r WHERE r.file_id = files.id)"
		" WHERE id IN (SELECT id FROM zone_files)",
		"INSERT OR REPLACE INTO meta VALUES ('zone ' || ?1, ?2)",
	};
	char val[512];
	snprintf(val, sizeof val, "%s from %s", zone, from);
	int rc = 0;
	for (size_t i = 0; i < sizeof sql / sizeof *sql && !rc; i++) {
		sqlite3_stmt *q;
		if (sqlite3_prepare_v2(db, sql[i], -1, &q, NULL) != SQLITE_OK) {
			rc = db_err(s, d);
			break;
		}
		if (sqlite3_bind_parameter_count(q) >= 1)
			sqlite3_bind_text(q, 1, node, -1, SQLITE_STATIC);
		if (sqlite3_bind_parameter_count(q) >= 2)
			sqlite3_bind_text(q, 2, val, -1, SQLITE_STATIC);
		int r = sqlite3_step(q);
		while (r == SQLITE_ROW)
			r = sqlite3_step(q);
		if (r != SQLITE_DONE)
			rc = db_err(s, d);
		sqlite3_finalize(q);
	}
	iq_time_set_default_zone(NULL, &zd);
	return rc;
}

int iq_zones_resolve(struct iq_store *s, struct iq_diag *d)
{
	sqlite3 *db = iq_store_db(s);
	sqlite3_stmt *q;
	/* --tz decided the zone of every file already */
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM meta WHERE key = 'tz_option'", -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	int given = sqlite3_step(q) == SQLITE_ROW;
	sqlite3_finalize(q);
	if (given)
		return 0;
	if (sqlite3_create_function(db, "iq_local_to_utc", 1, SQLITE_UTF8, NULL, local_to_utc, NULL,
				    NULL) != SQLITE_OK)
		return db_err(s, d);
	/* one zone per node, the first in bundle order; nodes first, "" last */
	static const char sql[] =
		"SELECT coalesce(f.node, r.node, '') AS n, c.value, f.path || ':' || r.line, min(r.id)"
		" FROM config_settings c JOIN records r ON r.id = c.record_id JOIN files f ON f.id = r.file_id"
		" WHERE c.key = 'timezone' AND c.scope = 'node'"
		" AND 'zone ' || coalesce(f.node, r.node, '') NOT IN (SELECT key FROM meta)"
		" GROUP BY n ORDER BY n = '', n";
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	static char node[64][128], zone[64][80], from[64][256];
	size_t n = 0;
	while (sqlite3_step(q) == SQLITE_ROW && n < 64) {
		snprintf(node[n], sizeof node[n], "%s", (const char *)sqlite3_column_text(q, 0));
		snprintf(zone[n], sizeof zone[n], "%s", (const char *)sqlite3_column_text(q, 1));
		snprintf(from[n], sizeof from[n], "%s", (const char *)sqlite3_column_text(q, 2));
		n++;
	}
	sqlite3_finalize(q);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = apply(s, node[i], zone[i], from[i], d);
	if (!rc && n && iq_store_recount_time_sources(s))
		rc = db_err(s, d);
	return rc;
}
