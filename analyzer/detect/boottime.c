/* boottime.c: raw dmesg's seconds since boot become wall time, from a boot
 * time found elsewhere in the bundle. A kernel record that carries both a
 * wall time and its seconds since boot (journald's __REALTIME_TIMESTAMP
 * with _SOURCE_MONOTONIC_TIMESTAMP, a kern.log line with "[uptime]", the
 * boot-time files of parse/boot_time.c, the "Linux version" line printed
 * at boot) says when its node booted; so does the same kernel message
 * printed both ways, boot-relative in dmesg and with a wall clock in
 * kern.log or the journal. A boot time is its node's: a file without a
 * node takes only its own lines' (never another host's, whatever the
 * bundle holds). Records no boot time reaches keep ts_how
 * 'boot_relative'; converted ones get 'boot_anchored', and meta gets a
 * "boot_time <file>" row saying which boot time and why. */
#include <stdlib.h>
#include <string.h>

#include "../core/iqtime.h"
#include "boottime.h"

#define NSEC(s) ((int64_t)(s) * IQ_NS_PER_SEC)
#define REBOOT_GAP NSEC(120)   /* estimates further apart are two boots */
#define SNAP NSEC(2)           /* a per-file estimate this close to a boot is it */
#define MAX_EST 4096

/* One estimate of a boot time: node, value, precision class (0 best). */
struct est {
	char *node;
	int64_t boot;
	int cls;
	const char *basis;
};

/* A boot of a node: its estimate and where it came from. */
struct boot {
	const char *node;
	int64_t boot;
	const char *basis;
};

static const char *const basis_of[] = {
	"journald kernel entries (__REALTIME_TIMESTAMP minus _SOURCE_MONOTONIC_TIMESTAMP)",
	"a boot time file (/proc/stat btime, uptime -s, who -b)",
	"kernel log lines carrying both the wall clock and the uptime",
	"the kernel's 'Linux version' line printed at boot",
	"/proc/uptime against the file's mtime (to the second)",
	"uptime output (to the minute)",
};

static int db_err(struct iq_store *s, struct iq_diag *d)
{
	return iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(iq_store_db(s)));
}

static int cmp_est(const void *a, const void *b)
{
	const struct est *x = a, *y = b;
	int c = strcmp(x->node, y->node);
	if (c)
		return c;
	return x->boot < y->boot ? -1 : x->boot > y->boot;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static char *dup_col(sqlite3_stmt *q, int col)
{
	const unsigned char *t = sqlite3_column_text(q, col);
	return iq_xstrdup(t ? (const char *)t : "");
}

/* Whose boot a record tells: its node, or for a file without one the file
 * itself (" file <id>", which no node name can be). */
#define BOOT_KEY "CASE WHEN coalesce(f.node, r.node, '') = '' THEN ' file ' || f.id" \
		 " ELSE coalesce(f.node, r.node) END"

/* The node-wide estimates: records with a wall time and seconds since
 * boot, and "Linux version" lines (printed at 0.000000). */
static int gather(struct iq_store *s, struct est **out, size_t *n, struct iq_diag *d)
{
	static const char sql[] =
		"SELECT " BOOT_KEY ","
		"  r.ts - CAST(round(coalesce(k.boot_s, 0) * 1000000) AS INTEGER) * 1000,"
		"  CASE WHEN k.boot_s IS NULL THEN 3"
		"       WHEN f.format = 'journald-json' THEN 0"
		"       WHEN f.format = 'boot-time' AND k.boot_s = 0 THEN 1"
		"       WHEN f.format = 'boot-time' AND k.facility = 'proc-uptime' THEN 4"
		"       WHEN f.format = 'boot-time' THEN 5 ELSE 2 END"
		" FROM kernel_events k JOIN records r ON r.id = k.record_id JOIN files f ON f.id = r.file_id"
		" WHERE r.ts IS NOT NULL AND r.ts_how <> 'boot_anchored'"
		"  AND (k.boot_s IS NOT NULL OR r.text LIKE 'Linux version %')";
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), sql, -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && *n < MAX_EST) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			*out = iq_xrealloc(*out, cap * sizeof **out);
		}
		struct est *e = &(*out)[(*n)++];
		e->node = dup_col(q, 0);
		e->boot = sqlite3_column_int64(q, 1);
		e->cls = sqlite3_column_int(q, 2);
		e->basis = basis_of[e->cls];
	}
	sqlite3_finalize(q);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_err(s, d);
}

/* Groups sorted estimates into boots: per node, estimates closer than
 * REBOOT_GAP are one boot, valued by the median of its most precise
 * class. */
static size_t cluster(struct est *e, size_t n, struct boot *b)
{
	size_t nb = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && strcmp(e[j].node, e[i].node) == 0 && e[j].boot - e[j - 1].boot <= REBOOT_GAP)
			j++;
		int best = 99;
		for (size_t k = i; k < j; k++)
			if (e[k].cls < best)
				best = e[k].cls;
		int64_t *v = iq_xmalloc((j - i) * sizeof *v);
		size_t m = 0;
		for (size_t k = i; k < j; k++)
			if (e[k].cls == best)
				v[m++] = e[k].boot;
		qsort(v, m, sizeof *v, cmp64);
		b[nb].node = e[i].node;
		b[nb].boot = v[m / 2];
		b[nb].basis = basis_of[best];
		nb++;
		free(v);
		i = j;
	}
	return nb;
}

/* The median estimate from kernel messages of file fid also printed with
 * a wall clock elsewhere on its node; 0 when there is none. */
static int same_message(struct iq_store *s, int64_t fid, const char *node, int64_t *boot,
			long *count, struct iq_diag *d)
{
	static const char sql[] =
		"SELECT w.ts - CAST(round(k.boot_s * 1000000) AS INTEGER) * 1000"
		" FROM records r JOIN kernel_events k ON k.record_id = r.id"
		" JOIN iq_bt_wall w ON w.text = r.text"
		" WHERE r.file_id = ?1 AND r.ts IS NULL AND r.ts_how = 'boot_relative'"
		"  AND k.boot_s IS NOT NULL AND length(r.text) >= 24 AND w.node = ?2"
		" LIMIT 1000";
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), sql, -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_int64(q, 1, fid);
	sqlite3_bind_text(q, 2, node, -1, SQLITE_STATIC);
	int64_t v[1000];
	size_t n = 0;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		v[n++] = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		return db_err(s, d);
	*count = (long)n;
	if (n) {
		qsort(v, n, sizeof *v, cmp64);
		*boot = v[n / 2];
	}
	return 0;
}

/* Converts file fid's boot-relative records with boot time boot. */
static int convert(struct iq_store *s, int64_t fid, const char *path, int64_t boot,
		   const char *basis, long *converted, struct iq_diag *d)
{
	static const char *const sql[] = {
		"UPDATE records SET ts = ?2 + (SELECT CAST(round(k.boot_s * 1000000) AS INTEGER) * 1000"
		"  FROM kernel_events k WHERE k.record_id = records.id), ts_how = 'boot_anchored'"
		" WHERE file_id = ?1 AND ts IS NULL AND ts_how = 'boot_relative'"
		"  AND id IN (SELECT record_id FROM kernel_events WHERE boot_s IS NOT NULL)",
		"UPDATE kernel_events SET ts = (SELECT ts FROM records r WHERE r.id = kernel_events.record_id)"
		" WHERE ts IS NULL AND record_id IN (SELECT id FROM records WHERE file_id = ?1"
		"  AND ts_how = 'boot_anchored')",
	};
	for (size_t i = 0; i < IQ_ARRAY_LEN(sql); i++) {
		sqlite3_stmt *q;
		if (sqlite3_prepare_v2(iq_store_db(s), sql[i], -1, &q, NULL) != SQLITE_OK)
			return db_err(s, d);
		sqlite3_bind_int64(q, 1, fid);
		if (i == 0)
			sqlite3_bind_int64(q, 2, boot);
		int rc = sqlite3_step(q);
		long moved = i == 0 ? sqlite3_changes(iq_store_db(s)) : 0;
		*converted += moved;
		sqlite3_finalize(q);
		if (rc != SQLITE_DONE ||
		    iq_store_move_time_source(s, "boot_relative", "boot_anchored", moved))
			return db_err(s, d);
	}
	char key[1200], val[512], t[IQ_TIME_BUF];
	snprintf(key, sizeof key, "boot_time %s", path);
	snprintf(val, sizeof val, "%s from %s", iq_time_fmt_ms(boot, t), basis);
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
			       -1, &q, NULL) != SQLITE_OK)
		return db_err(s, d);
	sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, val, -1, SQLITE_STATIC);
	int rc = sqlite3_step(q);
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? 0 : db_err(s, d);
}

/* The boot of node a file with the latest seconds since boot maxb and
 * mtime belongs to: the latest that had booted by the time the file was
 * written (the latest of all without an mtime). NULL when the node has
 * none. */
static const struct boot *pick(const struct boot *b, size_t nb, const char *node, int64_t mtime,
			       int64_t maxb)
{
	const struct boot *best = NULL, *latest = NULL;
	for (size_t i = 0; i < nb; i++) {
		if (strcmp(b[i].node, node) != 0)
			continue;
		latest = &b[i];
		if (mtime == IQ_TIME_NONE || b[i].boot + maxb <= mtime + NSEC(300))
			best = &b[i];
	}
	return best ? best : latest;
}

int iq_boottime_resolve(struct iq_store *s, struct iq_diag *d)
{
	sqlite3 *db = iq_store_db(s);
	/* from the kernel messages to their records (CROSS JOIN keeps that
	 * order): the other way round is a scan of every record */
	static const char files_sql[] =
		"SELECT r.file_id, f.path, " BOOT_KEY ", f.mtime,"
		"  CAST(round(max(k.boot_s) * 1000000) AS INTEGER) * 1000"
		" FROM kernel_events k CROSS JOIN records r ON r.id = k.record_id"
		" JOIN files f ON f.id = r.file_id"
		" WHERE r.ts IS NULL AND r.ts_how = 'boot_relative' AND k.boot_s IS NOT NULL"
		" GROUP BY r.file_id ORDER BY r.file_id";
	sqlite3_stmt *fq;
	if (sqlite3_prepare_v2(db, files_sql, -1, &fq, NULL) != SQLITE_OK)
		return db_err(s, d);
	int rc = sqlite3_step(fq);
	if (rc != SQLITE_ROW) {   /* nothing is boot-relative: the common case */
		sqlite3_finalize(fq);
		return rc == SQLITE_DONE ? 0 : db_err(s, d);
	}
	struct est *e = NULL;
	size_t ne = 0;
	struct boot *b = NULL;
	long converted = 0;
	int err = iq_store_exec(s, "SAVEPOINT iq_boottime;"
				"CREATE TEMP TABLE IF NOT EXISTS iq_bt_wall (node TEXT, text TEXT, ts INTEGER);"
				"DELETE FROM iq_bt_wall;"
				"INSERT INTO iq_bt_wall SELECT " BOOT_KEY ", r.text, r.ts"
				" FROM kernel_events k JOIN records r ON r.id = k.record_id"
				" JOIN files f ON f.id = r.file_id"
				" WHERE r.ts IS NOT NULL AND k.boot_s IS NULL AND length(r.text) >= 24;"
				"CREATE INDEX IF NOT EXISTS temp.iq_bt_wall_text ON iq_bt_wall(text);", d);
	if (!err)
		err = gather(s, &e, &ne, d);
	size_t nb = 0;
	if (!err) {
		qsort(e, ne, sizeof *e, cmp_est);
		b = iq_xmalloc((ne ? ne : 1) * sizeof *b);
		nb = cluster(e, ne, b);
	}
	for (; !err && rc == SQLITE_ROW; rc = sqlite3_step(fq)) {
		int64_t fid = sqlite3_column_int64(fq, 0);
		char *path = dup_col(fq, 1), *node = dup_col(fq, 2);
		int64_t mtime = sqlite3_column_type(fq, 3) == SQLITE_NULL ? IQ_TIME_NONE
									: sqlite3_column_int64(fq, 3);
		int64_t maxb = sqlite3_column_int64(fq, 4);
		int64_t boot = 0;
		long same = 0;
		char basis[512];
		err = same_message(s, fid, node, &boot, &same, d);
		if (!err && same) {
			/* the same messages with a wall clock: this file's boot; a
			 * more precise boot estimate within SNAP is that boot */
			snprintf(basis, sizeof basis, "%ld kernel messages also written with a wall clock", same);
			for (size_t i = 0; i < nb; i++)
				if (!strcmp(b[i].node, node) && llabs(b[i].boot - boot) <= SNAP) {
					boot = b[i].boot;
					snprintf(basis, sizeof basis, "%s, matched by %ld kernel messages also "
						 "written with a wall clock", b[i].basis, same);
					break;
				}
			err = convert(s, fid, path, boot, basis, &converted, d);
		} else if (!err) {
			const struct boot *k = pick(b, nb, node, mtime, maxb);
			if (k)
				err = convert(s, fid, path, k->boot, k->basis, &converted, d);
		}
		free(path);
		free(node);
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE && !err)
		err = db_err(s, d);
	sqlite3_finalize(fq);
	for (size_t i = 0; i < ne; i++)
		free(e[i].node);
	free(e);
	free(b);
	if (!err)
		err = iq_store_exec(s, "DROP TABLE IF EXISTS temp.iq_bt_wall; RELEASE iq_boottime;", d);
	else
		iq_store_exec(s, "ROLLBACK TO iq_boottime; RELEASE iq_boottime;", NULL);
	return err;
}
