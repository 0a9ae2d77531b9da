/* store.c: the database writer. One connection, one open transaction at a
 * time committed every IQ_BATCH records, prepared statements for every
 * insert, indexes built after the load. Records, HTTP requests and their
 * upstream attempts, the rows of nearly every line, are held back and
 * inserted IQ_ROWS to a statement: most of an INSERT's cost is the
 * statement's own (step, cursor, reset), not the row's. WAL with synchronous=OFF keeps the
 * file consistent when a run is killed: a commit is all or nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

extern const char iq_schema_sql[];
extern const char iq_index_sql[];

#define IQ_BATCH 200000
/* rows per multi-row INSERT; records held back (a multiple of IQ_ROWS) */
#define IQ_ROWS 32
#define IQ_PEND 64

enum stmt_id {
	ST_FILE_FIND, ST_FILE_ADD, ST_FILE_END, ST_RECORD, ST_HTTP, ST_UPSTREAM,
	ST_GPU, ST_EVENT, ST_KERNEL, ST_POD, ST_CONFIG, ST_MATCH, ST_SKIP, ST_PROBLEM, ST_META,
	ST_NEXT_ID, ST_ERROR, ST_HOW_ADD, ST_QUOTE, ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_FILE_FIND] = "SELECT id, status, coalesce(first_record, 0) FROM files WHERE path = ?1",
	[ST_FILE_ADD] = "INSERT INTO files(path, bundle, format, sniff_reason, mtime, node,"
			" namespace, pod, container, restart, first_record)"
			" VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
	[ST_FILE_END] = "UPDATE files SET lines_read=?2, lines_parsed=?3, lines_skipped=?4,"
			" records=?5, cut_lines=?6, bytes=?7, status=?8, error=?9, last_record=?10,"
			" first_ts=?11, last_ts=?12, nul_bytes=?13 WHERE id=?1",
	[ST_RECORD] = "INSERT INTO records(id, file_id, line, nlines, ts, ts_how, ts_raw, kind,"
		      " node, namespace, pod, container, stream, severity, text)"
		      " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)",
	[ST_HTTP] = "INSERT INTO http_requests VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
	[ST_UPSTREAM] = "INSERT INTO http_upstreams VALUES (?1,?2,?3,?4,?5)",
	[ST_GPU] = "INSERT INTO gpu_samples VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)",
	[ST_EVENT] = "INSERT INTO k8s_events VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)",
	[ST_KERNEL] = "INSERT INTO kernel_events VALUES (?1,?2,?3,?4,?5,?6)",
	[ST_POD] = "INSERT INTO pod_states VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,"
		   "?17,?18,?19,?20,?21,?22,?23)",
	[ST_CONFIG] = "INSERT INTO config_settings VALUES (?1,?2,?3,?4,?5)",
	[ST_QUOTE] = "INSERT OR REPLACE INTO quotes VALUES (?1,?2,?3,?4,?5)",
	[ST_MATCH] = "INSERT OR IGNORE INTO signal_matches VALUES (?1,?2,?3,?4)",
	[ST_SKIP] = "INSERT INTO skips VALUES (?1,?2,?3,?4,?5) ON CONFLICT(file_id, reason)"
		    " DO UPDATE SET lines = lines + excluded.lines",
	/* a rerun over the same bundle meets the same problems again */
	[ST_PROBLEM] = "INSERT INTO problems(path, message) SELECT ?1, ?2 WHERE NOT EXISTS"
		       " (SELECT 1 FROM problems WHERE path = ?1 AND message = ?2)",
	[ST_META] = "INSERT OR REPLACE INTO meta VALUES (?1, ?2)",
	[ST_NEXT_ID] = "SELECT coalesce(max(id), 0) + 1 FROM records",
	[ST_ERROR] = "INSERT OR IGNORE INTO error_records VALUES (?1)",
	[ST_HOW_ADD] = "INSERT INTO time_sources VALUES (?1, ?2) ON CONFLICT(ts_how)"
		       " DO UPDATE SET records = records + excluded.records",
};

/* The multi-row forms of three inserts: the single-row SQL's VALUES tuple
 * repeated IQ_ROWS times. */
enum { MR_RECORD, MR_HTTP, MR_UPSTREAM, MR_COUNT };
static const struct {
	int one;  /* the single-row statement */
	int ncol;
	const char *head;
} multi_row[MR_COUNT] = {
	[MR_RECORD] = {ST_RECORD, 15, "INSERT INTO records(id, file_id, line, nlines, ts, ts_how,"
				      " ts_raw, kind, node, namespace, pod, container, stream,"
				      " severity, text) VALUES "},
	[MR_HTTP] = {ST_HTTP, 12, "INSERT INTO http_requests VALUES "},
	[MR_UPSTREAM] = {ST_UPSTREAM, 5, "INSERT INTO http_upstreams VALUES "},
};

/* A record held back until its batch is flushed. */
struct pend {
	int64_t id, file_id;
	const struct iq_ident *fid;
	const struct iq_record *r;
};

struct iq_store {
	sqlite3 *db;
	sqlite3_stmt *st[ST_COUNT];
	sqlite3_stmt *mr[MR_COUNT];
	/* records held back (their memory is the caller's until flushed) and
	 * the id the next record gets */
	struct pend pend[IQ_PEND];
	int npend;
	int64_t next_id;
	/* the file being written: its last record and time span */
	int64_t cur_file, cur_last, cur_min_ts, cur_max_ts;
	int in_tx;
	int scratch;
	long pending;
	int readonly;
	/* records stored per time source since time_sources was last written */
	long long how_n[IQ_TS_ASSUMED_ZONE + 1];
};

sqlite3 *iq_store_db(struct iq_store *s)
{
	return s->db;
}

int iq_store_exec(struct iq_store *s, const char *sql, struct iq_diag *d)
{
	char *err = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &err) != SQLITE_OK) {
		iq_diag_set(d, IQ_ERR_DB, "database: %s", err ? err : "error");
		sqlite3_free(err);
		return IQ_ERR_DB;
	}
	return 0;
}

static int begin_tx(struct iq_store *s)
{
	if (s->in_tx)
		return 0;
	if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return IQ_ERR_DB;
	s->in_tx = 1;
	s->pending = 0;
	return 0;
}

static int flush(struct iq_store *s);

/* Adds the records counted per time source to time_sources. */
static int flush_how(struct iq_store *s)
{
	for (size_t i = 0; i < IQ_ARRAY_LEN(s->how_n); i++) {
		if (!s->how_n[i])
			continue;
		sqlite3_stmt *q = s->st[ST_HOW_ADD];
		sqlite3_bind_text(q, 1, iq_ts_how_name((enum iq_ts_how)i), -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 2, s->how_n[i]);
		int rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE)
			return IQ_ERR_DB;
		s->how_n[i] = 0;
	}
	return 0;
}

static int commit_tx(struct iq_store *s)
{
	if (!s->in_tx)
		return 0;
	if (flush(s) || flush_how(s))
		return IQ_ERR_DB;
	s->in_tx = 0;
	return sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : IQ_ERR_DB;
}

/* "INSERT ... VALUES " then IQ_ROWS tuples of ncol numbered parameters. */
static char *multi_row_sql(int m)
{
	int ncol = multi_row[m].ncol;
	size_t cap = strlen(multi_row[m].head) + (size_t)IQ_ROWS * (size_t)ncol * 8 + 16;
	char *sql = iq_xmalloc(cap);
	size_t n = (size_t)snprintf(sql, cap, "%s", multi_row[m].head);
	for (int row = 0; row < IQ_ROWS; row++)
		for (int c = 0; c < ncol; c++)
			n += (size_t)snprintf(sql + n, cap - n, "%s?%d%s",
					      c ? "," : row ? ",(" : "(", row * ncol + c + 1,
					      c == ncol - 1 ? ")" : "");
	return sql;
}

static int64_t query_next_id(struct iq_store *s)
{
	sqlite3_stmt *q = s->st[ST_NEXT_ID];
	int64_t v = 1;
	if (sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_int64(q, 0);
	sqlite3_reset(q);
	return v;
}

/* IQ_PROF_SQL set in the environment: every statement of this connection
 * that ran longer than 20 ms, with its time, on stderr (a developer's
 * tool: tests/bench/README.md). */
static int prof_cb(unsigned t, void *c, void *p, void *x)
{
	(void)t;
	(void)c;
	sqlite3_int64 ns = *(sqlite3_int64 *)x;
	if (ns > 20000000) {
		const char *sql = sqlite3_sql((sqlite3_stmt *)p);
		fprintf(stderr, "inquest: sql %.3f s: %.300s\n", (double)ns / 1e9, sql ? sql : "?");
	}
	return 0;
}

int iq_store_open(const char *path, int readonly, struct iq_store **out, struct iq_diag *d)
{
	struct iq_store *s = iq_xcalloc(1, sizeof *s);
	/* Allocation statistics cost a mutex per malloc and nothing reads
	 * them; this has to happen before SQLite initialises (later calls
	 * fail harmlessly). A connection is used by one thread at a time. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	int flags = (readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
		    SQLITE_OPEN_NOMUTEX;
	s->readonly = readonly;
	if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
		iq_diag_set(d, IQ_ERR_INPUT, "cannot open database '%s': %s", path,
			    s->db ? sqlite3_errmsg(s->db) : "out of memory");
		sqlite3_close(s->db);
		free(s);
		return IQ_ERR_INPUT;
	}
	sqlite3_busy_timeout(s->db, 5000);
	if (getenv("IQ_PROF_SQL"))
		sqlite3_trace_v2(s->db, SQLITE_TRACE_PROFILE, prof_cb, NULL);
	sqlite3_stmt *q;
	int version = -1;
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &q, NULL) == SQLITE_OK) {
		if (sqlite3_step(q) == SQLITE_ROW)
			version = sqlite3_column_int(q, 0);
		sqlite3_finalize(q);
	}
	if (version < 0) {
		iq_diag_set(d, IQ_ERR_INPUT, "'%s' is not an inquest database: %s", path,
			    sqlite3_errmsg(s->db));
		goto fail;
	}
	if (readonly) {
		if (version != IQ_SCHEMA_VERSION) {
			iq_diag_set(d, IQ_ERR_INPUT, "'%s' has schema version %d, this inquest reads %d",
				    path, version, IQ_SCHEMA_VERSION);
			goto fail;
		}
		*out = s;
		return 0;
	}
	if (version != 0 && version != IQ_SCHEMA_VERSION) {
		iq_diag_set(d, IQ_ERR_INPUT, "'%s' has schema version %d, this inquest writes %d",
			    path, version, IQ_SCHEMA_VERSION);
		goto fail;
	}
	/* page_size before anything else touches the file, cache_size after. */
	char pragmas[256];
	snprintf(pragmas, sizeof pragmas,
		 "PRAGMA page_size=65536; PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;"
		 " PRAGMA cache_size=-2048; PRAGMA temp_store=FILE;"
		 " PRAGMA user_version=%d;", IQ_SCHEMA_VERSION);
	if (iq_store_exec(s, pragmas, d) || iq_store_exec(s, iq_schema_sql, d))
		goto fail;
	/* error_records and time_sources are complete only when kept from the
	 * first record on: a database written by an older inquest lacks the
	 * marker, and the report computes them from the records instead */
	if (iq_store_exec(s, "INSERT OR IGNORE INTO meta SELECT 'summaries', '1'"
			  " WHERE NOT EXISTS (SELECT 1 FROM records)", d))
		goto fail;
	for (int i = 0; i < ST_COUNT; i++) {
		if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
				       &s->st[i], NULL) != SQLITE_OK) {
			iq_diag_set(d, IQ_ERR_INTERNAL, "database: %s in: %s", sqlite3_errmsg(s->db),
				    stmt_sql[i]);
			goto fail;
		}
	}
	for (int i = 0; i < MR_COUNT; i++) {
		char *sql = multi_row_sql(i);
		int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->mr[i], NULL);
		free(sql);
		if (rc != SQLITE_OK) {
			iq_diag_set(d, IQ_ERR_INTERNAL, "database: %s in: %s", sqlite3_errmsg(s->db),
				    multi_row[i].head);
			goto fail;
		}
	}
	s->next_id = query_next_id(s);
	*out = s;
	return 0;
fail:
	iq_store_close(s);
	return d && strstr(d->msg, "database:") == d->msg ? IQ_ERR_DB : IQ_ERR_INPUT;
}

int iq_store_scratch(struct iq_store *s, struct iq_diag *d)
{
	if (commit_tx(s))
		return iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(s->db));
	s->scratch = 1;
	return iq_store_exec(s, "PRAGMA journal_mode=OFF; PRAGMA locking_mode=EXCLUSIVE;", d);
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **iq_store_done_paths(struct iq_store *s, size_t *n)
{
	sqlite3_stmt *q;
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT path FROM files WHERE status <> 'reading'", -1, &q,
			       NULL) != SQLITE_OK)
		return NULL;
	while (sqlite3_step(q) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			v = iq_xrealloc(v, cap * sizeof *v);
		}
		v[(*n)++] = iq_xstrdup((const char *)sqlite3_column_text(q, 0));
	}
	sqlite3_finalize(q);
	if (*n)
		qsort(v, *n, sizeof *v, cmp_path);
	return v;
}

void iq_store_paths_free(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

int iq_store_close(struct iq_store *s)
{
	if (!s)
		return 0;
	int rc = commit_tx(s);
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(s->st[i]);
	for (int i = 0; i < MR_COUNT; i++)
		sqlite3_finalize(s->mr[i]);
	if (!s->readonly)
		sqlite3_exec(s->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL); /* one standalone file */
	sqlite3_close(s->db);
	free(s);
	return rc;
}

/* Record strings stay valid until the statement has stepped (the caller's
 * record outlives the call), so SQLite need not copy them: SQLITE_STATIC.
 * Every parameter of a statement is bound on every use (NULL when
 * unknown), so no clear_bindings is needed between rows. */
static void bind_str(sqlite3_stmt *q, int i, struct iq_str v)
{
	if (v.n)
		sqlite3_bind_text(q, i, v.p, (int)v.n, SQLITE_STATIC);
	else
		sqlite3_bind_null(q, i);
}

static void bind_cstr(sqlite3_stmt *q, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(q, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(q, i);
}

static void bind_time(sqlite3_stmt *q, int i, int64_t t)
{
	if (t == IQ_TIME_NONE)
		sqlite3_bind_null(q, i);
	else
		sqlite3_bind_int64(q, i, t);
}

static void bind_real(sqlite3_stmt *q, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(q, i);
	else
		sqlite3_bind_double(q, i, v);
}

/* Binds an int whose -1 means unknown. */
static void bind_int_known(sqlite3_stmt *q, int i, int v)
{
	if (v < 0)
		sqlite3_bind_null(q, i);
	else
		sqlite3_bind_int(q, i, v);
}

/* Binds an int whose 0 means unknown. */
static void bind_int_nz(sqlite3_stmt *q, int i, int v)
{
	if (v)
		sqlite3_bind_int(q, i, v);
	else
		sqlite3_bind_null(q, i);
}

static int step(struct iq_store *s, sqlite3_stmt *q)
{
	int rc = sqlite3_step(q);
	sqlite3_reset(q);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		iq_errorf("database: %s", sqlite3_errmsg(s->db));
		return IQ_ERR_DB;
	}
	return 0;
}

int iq_store_file_begin(struct iq_store *s, const char *path, const char *bundle,
			const char *format, const char *reason, int64_t mtime,
			const struct iq_ident *id, int64_t *file_id, int *already)
{
	*already = 0;
	if (begin_tx(s) || flush(s))
		return IQ_ERR_DB;
	sqlite3_stmt *q = s->st[ST_FILE_FIND];
	sqlite3_bind_text(q, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(q) == SQLITE_ROW) {
		int64_t old = sqlite3_column_int64(q, 0);
		const char *status = (const char *)sqlite3_column_text(q, 1);
		int reading = status && strcmp(status, "reading") == 0;
		int64_t first = sqlite3_column_int64(q, 2);
		sqlite3_reset(q);
		if (!reading) {
			*already = 1;
			*file_id = old;
			return 0;
		}
		/* left half-read by an interrupted run: read it again */
		if (iq_store_file_forget(s, old, first))
			return IQ_ERR_DB;
		char sql[96];
		snprintf(sql, sizeof sql, "DELETE FROM files WHERE id = %lld;", (long long)old);
		if (iq_store_exec(s, sql, NULL))
			return IQ_ERR_DB;
	} else {
		sqlite3_reset(q);
	}
	q = s->st[ST_FILE_ADD];
	bind_cstr(q, 1, path);
	bind_cstr(q, 2, bundle);
	bind_cstr(q, 3, format);
	bind_cstr(q, 4, reason);
	bind_time(q, 5, mtime);
	bind_str(q, 6, id->node);
	bind_str(q, 7, id->ns);
	bind_str(q, 8, id->pod);
	bind_str(q, 9, id->container);
	bind_int_known(q, 10, id->restart);
	sqlite3_bind_int64(q, 11, s->next_id);
	if (step(s, q))
		return IQ_ERR_DB;
	*file_id = sqlite3_last_insert_rowid(s->db);
	s->cur_file = *file_id;
	s->cur_last = 0;
	s->cur_min_ts = s->cur_max_ts = IQ_TIME_NONE;
	return 0;
}

int iq_store_file_forget(struct iq_store *s, int64_t file_id, int64_t first_record)
{
	/* A file's records are consecutive ids from first_record on (one
	 * writer writes one file at a time), so the rowid range bounds each
	 * scan. */
	char sub[160], sql[3200];
	if (begin_tx(s) || flush(s) || flush_how(s))
		return IQ_ERR_DB;
	snprintf(sub, sizeof sub, "SELECT id FROM records WHERE id >= %lld AND file_id = %lld",
		 (long long)first_record, (long long)file_id);
	snprintf(sql, sizeof sql,
		 "UPDATE time_sources SET records = records - (SELECT count(*) FROM records"
		 " WHERE id >= %lld AND file_id = %lld AND ts_how = time_sources.ts_how);"
		 "DELETE FROM error_records WHERE record_id IN (%s);"
		 "DELETE FROM signal_matches WHERE record_id IN (%s);"
		 "DELETE FROM http_upstreams WHERE record_id IN (%s);"
		 "DELETE FROM http_requests WHERE record_id IN (%s);"
		 "DELETE FROM gpu_samples WHERE record_id IN (%s);"
		 "DELETE FROM k8s_events WHERE record_id IN (%s);"
		 "DELETE FROM kernel_events WHERE record_id IN (%s);"
		 "DELETE FROM pod_states WHERE record_id IN (%s);"
		 "DELETE FROM config_settings WHERE record_id IN (%s);"
		 "DELETE FROM quotes WHERE record_id IN (%s);"
		 "DELETE FROM records WHERE id >= %lld AND file_id = %lld;"
		 "DELETE FROM skips WHERE file_id = %lld;",
		 (long long)first_record, (long long)file_id, sub, sub, sub, sub, sub, sub, sub, sub, sub, sub,
		 (long long)first_record, (long long)file_id, (long long)file_id);
	if (file_id == s->cur_file) {
		s->cur_last = 0;
		s->cur_min_ts = s->cur_max_ts = IQ_TIME_NONE;
	}
	if (iq_store_exec(s, sql, NULL))
		return IQ_ERR_DB;
	s->next_id = query_next_id(s); /* the ids go to the next file, as before */
	return 0;
}

int iq_store_file_inherit_restart(struct iq_store *s, const char *path, int restart)
{
	sqlite3_stmt *q;
	if (restart < 0)
		return 0;
	if (flush(s) || sqlite3_prepare_v2(s->db, "UPDATE files SET restart = ?2 WHERE path = ?1 AND restart IS NULL",
					   -1, &q, NULL) != SQLITE_OK)
		return IQ_ERR_DB;
	sqlite3_bind_text(q, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_int(q, 2, restart);
	int rc = sqlite3_step(q) == SQLITE_DONE ? 0 : IQ_ERR_DB;
	sqlite3_finalize(q);
	return rc;
}

int64_t iq_store_first_record(struct iq_store *s, int64_t file_id)
{
	sqlite3_stmt *q;
	int64_t v = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT coalesce(first_record, 0) FROM files WHERE id = ?1", -1,
			       &q, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(q, 1, file_id);
	if (sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

static struct iq_str pick(struct iq_str a, struct iq_str b)
{
	return a.n ? a : b;
}

static void bind_record(sqlite3_stmt *q, int base, const void *item)
{
	const struct pend *p = item;
	const struct iq_record *r = p->r;
	sqlite3_bind_int64(q, base + 1, p->id);
	sqlite3_bind_int64(q, base + 2, p->file_id);
	sqlite3_bind_int64(q, base + 3, r->line);
	sqlite3_bind_int64(q, base + 4, r->nlines);
	bind_time(q, base + 5, r->ts);
	sqlite3_bind_text(q, base + 6, iq_ts_how_name(r->ts_how), -1, SQLITE_STATIC);
	bind_str(q, base + 7, r->ts_raw);
	sqlite3_bind_text(q, base + 8, iq_kind_name(r->kind), -1, SQLITE_STATIC);
	bind_str(q, base + 9, pick(r->id.node, p->fid->node));
	bind_str(q, base + 10, pick(r->id.ns, p->fid->ns));
	bind_str(q, base + 11, pick(r->id.pod, p->fid->pod));
	bind_str(q, base + 12, pick(r->id.container, p->fid->container));
	bind_str(q, base + 13, r->stream);
	bind_str(q, base + 14, r->severity);
	sqlite3_bind_text(q, base + 15, r->text.p ? r->text.p : "", (int)r->text.n, SQLITE_STATIC);
}

static void bind_http(sqlite3_stmt *q, int base, const void *item)
{
	const struct pend *p = item;
	const struct iq_record *r = p->r;
	const struct iq_http *h = &r->u.http;
	sqlite3_bind_int64(q, base + 1, p->id);
	bind_time(q, base + 2, r->ts);
	bind_str(q, base + 3, h->client);
	bind_str(q, base + 4, h->method);
	bind_str(q, base + 5, h->path);
	bind_int_nz(q, base + 6, h->status);
	if (h->bytes_sent >= 0)
		sqlite3_bind_int64(q, base + 7, h->bytes_sent);
	else
		sqlite3_bind_null(q, base + 7);
	bind_real(q, base + 8, h->duration_s);
	bind_str(q, base + 9, h->upstream_name);
	bind_str(q, base + 10, h->request_id);
	bind_str(q, base + 11, h->host);
	bind_str(q, base + 12, h->user_agent);
}

/* An upstream attempt: the record and the attempt's number. */
struct attempt {
	const struct pend *p;
	int i;
};

static void bind_upstream(sqlite3_stmt *q, int base, const void *item)
{
	const struct attempt *a = item;
	const struct iq_http *h = &a->p->r->u.http;
	sqlite3_bind_int64(q, base + 1, a->p->id);
	sqlite3_bind_int(q, base + 2, a->i);
	bind_str(q, base + 3, h->upstream_addr[a->i]);
	bind_int_nz(q, base + 4, h->upstream_status[a->i]);
	bind_real(q, base + 5, h->upstream_time_s[a->i]);
}

typedef void bind_fn(sqlite3_stmt *q, int base, const void *item);

/* Inserts n items (size bytes each) as rows of table m: IQ_ROWS at a time
 * through the multi-row statement, the rest one by one. */
static int insert_rows(struct iq_store *s, int m, int n, bind_fn *bind, const void *items,
		       size_t size)
{
	const char *it = items;
	int ncol = multi_row[m].ncol, k = 0;
	for (; k + IQ_ROWS <= n; k += IQ_ROWS) {
		for (int j = 0; j < IQ_ROWS; j++)
			bind(s->mr[m], j * ncol, it + (size_t)(k + j) * size);
		if (step(s, s->mr[m]))
			return IQ_ERR_DB;
	}
	for (; k < n; k++) {
		bind(s->st[multi_row[m].one], 0, it + (size_t)k * size);
		if (step(s, s->st[multi_row[m].one]))
			return IQ_ERR_DB;
	}
	return 0;
}

/* Writes the records held back, with their HTTP rows. */
static int flush(struct iq_store *s)
{
	int n = s->npend;
	if (!n)
		return 0;
	s->npend = 0;
	struct pend http[IQ_PEND];
	struct attempt ups[IQ_PEND * IQ_MAX_UPSTREAMS];
	int nh = 0, nu = 0;
	for (int k = 0; k < n; k++) {
		const struct pend *p = &s->pend[k];
		if (p->r->kind != IQ_KIND_HTTP)
			continue;
		http[nh++] = *p;
		for (int i = 0; i < p->r->u.http.n_upstreams && i < IQ_MAX_UPSTREAMS; i++)
			ups[nu++] = (struct attempt){p, i};
	}
	if (insert_rows(s, MR_RECORD, n, bind_record, s->pend, sizeof *s->pend) ||
	    insert_rows(s, MR_HTTP, nh, bind_http, http, sizeof *http) ||
	    insert_rows(s, MR_UPSTREAM, nu, bind_upstream, ups, sizeof *ups))
		return IQ_ERR_DB;
	return 0;
}

int iq_store_flush(struct iq_store *s)
{
	return flush(s);
}

int iq_store_record(struct iq_store *s, int64_t file_id, const struct iq_ident *fid,
		    const struct iq_record *r, int64_t *record_id)
{
	if (begin_tx(s))
		return IQ_ERR_DB;
	if (s->npend == IQ_PEND && flush(s))
		return IQ_ERR_DB;
	int64_t id = s->next_id++;
	s->pend[s->npend++] = (struct pend){id, file_id, fid, r};
	if ((size_t)r->ts_how < IQ_ARRAY_LEN(s->how_n))
		s->how_n[r->ts_how]++;
	*record_id = id;
	struct iq_str node = pick(r->id.node, fid->node);
	sqlite3_stmt *q;
	if (file_id == s->cur_file) {
		s->cur_last = id;
		if (r->ts != IQ_TIME_NONE) {
			if (s->cur_min_ts == IQ_TIME_NONE || r->ts < s->cur_min_ts)
				s->cur_min_ts = r->ts;
			if (s->cur_max_ts == IQ_TIME_NONE || r->ts > s->cur_max_ts)
				s->cur_max_ts = r->ts;
		}
	}
	switch (r->kind) {
	case IQ_KIND_HTTP:
		break; /* with its record, at the flush */
	case IQ_KIND_GPU: {
		const struct iq_gpu *g = &r->u.gpu;
		q = s->st[ST_GPU];
		sqlite3_bind_int64(q, 1, id);
		bind_time(q, 2, r->ts);
		bind_str(q, 3, node);
		bind_int_known(q, 4, g->index);
		bind_str(q, 5, g->uuid);
		bind_str(q, 6, g->pci_bus);
		bind_str(q, 7, g->name);
		bind_real(q, 8, g->mem_used_mib);
		bind_real(q, 9, g->mem_total_mib);
		bind_real(q, 10, g->mem_free_mib);
		bind_real(q, 11, g->util_gpu_pct);
		bind_real(q, 12, g->util_mem_pct);
		bind_real(q, 13, g->temp_c);
		bind_real(q, 14, g->power_w);
		if (step(s, q))
			return IQ_ERR_DB;
		break;
	}
	case IQ_KIND_EVENT: {
		const struct iq_event *e = &r->u.event;
		q = s->st[ST_EVENT];
		sqlite3_bind_int64(q, 1, id);
		bind_time(q, 2, r->ts);
		bind_str(q, 3, pick(e->object_ns, r->id.ns));
		bind_str(q, 4, e->object_kind);
		bind_str(q, 5, e->object_name);
		bind_str(q, 6, e->type);
		bind_str(q, 7, e->reason);
		bind_str(q, 8, e->message);
		sqlite3_bind_int64(q, 9, e->count);
		bind_time(q, 10, e->first_ts);
		bind_time(q, 11, e->last_ts);
		bind_str(q, 12, e->source);
		bind_str(q, 13, e->host);
		bind_time(q, 14, e->created_ts);
		if (step(s, q))
			return IQ_ERR_DB;
		break;
	}
	case IQ_KIND_KERNEL: {
		const struct iq_kernel *k = &r->u.kernel;
		q = s->st[ST_KERNEL];
		sqlite3_bind_int64(q, 1, id);
		bind_time(q, 2, r->ts);
		bind_str(q, 3, node);
		bind_str(q, 4, k->host);
		bind_str(q, 5, k->facility);
		bind_real(q, 6, k->boot_s);
		if (step(s, q))
			return IQ_ERR_DB;
		break;
	}
	case IQ_KIND_POD: {
		const struct iq_pod *p = &r->u.pod;
		q = s->st[ST_POD];
		sqlite3_bind_int64(q, 1, id);
		bind_time(q, 2, r->ts);
		bind_str(q, 3, pick(p->ns, r->id.ns));
		bind_str(q, 4, pick(p->name, r->id.pod));
		bind_str(q, 5, p->uid);
		bind_str(q, 6, pick(p->node, node));
		bind_str(q, 7, p->pod_ip);
		bind_str(q, 8, p->phase);
		bind_str(q, 9, p->container);
		bind_str(q, 10, p->container_id);
		bind_str(q, 11, p->image);
		bind_int_known(q, 12, p->restart_count);
		bind_int_known(q, 13, p->ready);
		bind_str(q, 14, p->state);
		bind_str(q, 15, p->reason);
		bind_int_known(q, 16, p->exit_code);
		bind_time(q, 17, p->started_at);
		bind_time(q, 18, p->finished_at);
		bind_str(q, 19, p->last_reason);
		bind_int_known(q, 20, p->last_exit_code);
		bind_time(q, 21, p->last_started_at);
		bind_time(q, 22, p->last_finished_at);
		bind_time(q, 23, p->ready_since);
		if (step(s, q))
			return IQ_ERR_DB;
		break;
	}
	case IQ_KIND_CONFIG: {
		const struct iq_config *c = &r->u.config;
		q = s->st[ST_CONFIG];
		sqlite3_bind_int64(q, 1, id);
		bind_str(q, 2, c->scope);
		sqlite3_bind_text(q, 3, c->key.p ? c->key.p : "", (int)c->key.n, SQLITE_STATIC);
		bind_str(q, 4, c->value);
		bind_str(q, 5, c->source);
		if (step(s, q))
			return IQ_ERR_DB;
		break;
	}
	case IQ_KIND_LOG:
		break;
	}
	for (int k = 0, n = 0; k < r->nquotes && k < IQ_MAX_QUOTES; k++) {
		const struct iq_quote *qt = &r->quote[k];
		if (!qt->what || !qt->text.n)
			continue;
		q = s->st[ST_QUOTE];
		sqlite3_bind_int64(q, 1, id);
		sqlite3_bind_int(q, 2, n++);
		sqlite3_bind_text(q, 3, qt->what, -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 4, qt->line);
		bind_str(q, 5, qt->text);
		if (step(s, q))
			return IQ_ERR_DB;
	}
	if (++s->pending >= IQ_BATCH) {
		if (commit_tx(s) || begin_tx(s))
			return IQ_ERR_DB;
	}
	return 0;
}

int iq_store_error_record(struct iq_store *s, int64_t record_id)
{
	sqlite3_stmt *q = s->st[ST_ERROR];
	sqlite3_bind_int64(q, 1, record_id);
	return step(s, q);
}

int iq_store_recount_time_sources(struct iq_store *s)
{
	if (commit_tx(s))
		return IQ_ERR_DB;
	return iq_store_exec(s, "DELETE FROM time_sources; INSERT INTO time_sources"
			     " SELECT ts_how, count(*) FROM records GROUP BY ts_how", NULL);
}

int iq_store_move_time_source(struct iq_store *s, const char *from, const char *to, long long n)
{
	if (!n)
		return 0;
	if (commit_tx(s))
		return IQ_ERR_DB;
	sqlite3_stmt *q = s->st[ST_HOW_ADD];
	for (int k = 0; k < 2; k++) {
		sqlite3_bind_text(q, 1, k ? to : from, -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 2, k ? n : -n);
		int rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE)
			return IQ_ERR_DB;
	}
	return 0;
}

int iq_store_match(struct iq_store *s, int64_t record_id, const char *pack,
		   const char *signal, const char *captures)
{
	sqlite3_stmt *q = s->st[ST_MATCH];
	sqlite3_bind_int64(q, 1, record_id);
	bind_cstr(q, 2, pack);
	bind_cstr(q, 3, signal);
	bind_cstr(q, 4, captures);
	return step(s, q);
}

int iq_store_skip(struct iq_store *s, int64_t file_id, const char *reason,
		  long lines, long first_line, const char *example, size_t n)
{
	sqlite3_stmt *q = s->st[ST_SKIP];
	sqlite3_bind_int64(q, 1, file_id);
	bind_cstr(q, 2, reason);
	sqlite3_bind_int64(q, 3, lines);
	sqlite3_bind_int64(q, 4, first_line);
	if (example)
		sqlite3_bind_text(q, 5, example, (int)(n > 4096 ? 4096 : n), SQLITE_STATIC);
	else
		sqlite3_bind_null(q, 5);
	return step(s, q);
}

int iq_store_file_end(struct iq_store *s, int64_t file_id, const struct iq_file_stats *st,
		      int64_t bytes, const char *status, const char *error)
{
	if (flush(s))
		return IQ_ERR_DB;
	sqlite3_stmt *q = s->st[ST_FILE_END];
	sqlite3_bind_int64(q, 1, file_id);
	sqlite3_bind_int64(q, 2, st->lines_read);
	sqlite3_bind_int64(q, 3, st->lines_parsed);
	sqlite3_bind_int64(q, 4, st->lines_skipped);
	sqlite3_bind_int64(q, 5, st->records);
	sqlite3_bind_int64(q, 6, st->cut_lines);
	sqlite3_bind_int64(q, 7, bytes);
	bind_cstr(q, 8, status);
	bind_cstr(q, 9, error);
	int cur = file_id == s->cur_file && s->cur_last;
	if (cur)
		sqlite3_bind_int64(q, 10, s->cur_last);
	else
		sqlite3_bind_null(q, 10);
	bind_time(q, 11, cur ? s->cur_min_ts : IQ_TIME_NONE);
	bind_time(q, 12, cur ? s->cur_max_ts : IQ_TIME_NONE);
	sqlite3_bind_int64(q, 13, st->nul_bytes);
	if (step(s, q))
		return IQ_ERR_DB;
	if (st->nul_bytes > 0) {
		/* bytes dropped are a problem of the bundle the report lists */
		char msg[200];
		snprintf(msg, sizeof msg, "%ld NUL bytes (zeroed blocks, as a crash or power loss leaves) "
			 "dropped from %ld lines; the text between them was read", st->nul_bytes, st->nul_lines);
		sqlite3_stmt *p;
		if (sqlite3_prepare_v2(s->db, "INSERT INTO problems(path, message) SELECT path, ?2 FROM files"
				       " WHERE id = ?1", -1, &p, NULL) != SQLITE_OK)
			return IQ_ERR_DB;
		sqlite3_bind_int64(p, 1, file_id);
		sqlite3_bind_text(p, 2, msg, -1, SQLITE_TRANSIENT);
		int rc = sqlite3_step(p);
		sqlite3_finalize(p);
		if (rc != SQLITE_DONE)
			return IQ_ERR_DB;
	}
	return 0;
}

int iq_store_problem(struct iq_store *s, const char *path, const char *msg)
{
	if (begin_tx(s))
		return IQ_ERR_DB;
	sqlite3_stmt *q = s->st[ST_PROBLEM];
	bind_cstr(q, 1, path);
	bind_cstr(q, 2, msg);
	return step(s, q);
}

int iq_store_meta(struct iq_store *s, const char *key, const char *value)
{
	if (begin_tx(s))
		return IQ_ERR_DB;
	sqlite3_stmt *q = s->st[ST_META];
	bind_cstr(q, 1, key);
	bind_cstr(q, 2, value);
	return step(s, q);
}

int iq_store_commit(struct iq_store *s)
{
	return commit_tx(s);
}

int iq_store_finish(struct iq_store *s)
{
	if (commit_tx(s))
		return IQ_ERR_DB;
	if (iq_store_exec(s, iq_index_sql, NULL))
		return IQ_ERR_DB;
	/* the load is over: let the report's reader threads open their own
	 * connections (the exclusive lock goes at the next access) */
	if (s->scratch)
		return iq_store_exec(s, "PRAGMA locking_mode=NORMAL; SELECT count(*) FROM sqlite_master;",
				     NULL);
	return 0;
}
