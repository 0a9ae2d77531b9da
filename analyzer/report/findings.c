/* findings.c: the findings document (findings.json; its contract is
 * docs/findings.md and schema/findings.schema.json), built from the
 * database: bundle coverage, the patterns the detectors stored, and the
 * timeline of tagged records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "report_int.h"

static json_t *col_text(sqlite3_stmt *q, int col)
{
	const char *t = (const char *)sqlite3_column_text(q, col);
	if (!t)
		return json_null();
	json_t *s = json_string(t);
	if (!s) {
		/* invalid UTF-8 from a log: keep the ASCII, mark the rest */
		size_t n = strlen(t);
		char *c = iq_xmalloc(n + 1);
		for (size_t i = 0; i < n; i++)
			c[i] = (unsigned char)t[i] < 0x80 ? t[i] : '?';
		c[n] = '\0';
		s = json_string(c);
		free(c);
	}
	return s;
}

static json_t *col_time(sqlite3_stmt *q, int col)
{
	if (sqlite3_column_type(q, col) == SQLITE_NULL)
		return json_null();
	char b[IQ_TIME_BUF];
	return json_string(iq_time_fmt_ms(sqlite3_column_int64(q, col), b));
}

static sqlite3_stmt *prep(struct iq_store *s, const char *sql, struct iq_diag *d)
{
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(iq_store_db(s), sql, -1, &q, NULL) != SQLITE_OK) {
		iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(iq_store_db(s)));
		return NULL;
	}
	return q;
}

static json_t *bundle_json(struct iq_store *s, struct iq_diag *d)
{
	json_t *b = json_object();
	sqlite3_stmt *q = prep(s, "SELECT value FROM meta WHERE key = 'bundles'", d);
	if (!q)
		goto fail;
	json_t *paths = NULL;
	if (sqlite3_step(q) == SQLITE_ROW)
		paths = json_loads((const char *)sqlite3_column_text(q, 0), 0, NULL);
	sqlite3_finalize(q);
	if (!paths)
		paths = json_array();
	json_object_set_new(b, "paths", paths);
	/* the names to quote: a path of the analysing machine is nobody's business */
	json_t *names = json_array();
	size_t i;
	json_t *e;
	json_array_foreach(paths, i, e) {
		char *n = iq_base_name(json_string_value(e) ? json_string_value(e) : "");
		json_array_append_new(names, json_string(n));
		free(n);
	}
	json_object_set_new(b, "names", names);
	q = prep(s, "SELECT count(*), coalesce(sum(bytes),0), coalesce(sum(records),0),"
		    " coalesce(sum(lines_skipped),0) FROM files", d);
	if (!q)
		goto fail;
	if (sqlite3_step(q) == SQLITE_ROW) {
		json_object_set_new(b, "files", json_integer(sqlite3_column_int64(q, 0)));
		json_object_set_new(b, "bytes", json_integer(sqlite3_column_int64(q, 1)));
		json_object_set_new(b, "records", json_integer(sqlite3_column_int64(q, 2)));
		json_object_set_new(b, "unparsed_lines", json_integer(sqlite3_column_int64(q, 3)));
	}
	sqlite3_finalize(q);
	q = prep(s, "SELECT path FROM files WHERE format IS NULL ORDER BY path", d);
	if (!q)
		goto fail;
	json_t *unk = json_array();
	while (sqlite3_step(q) == SQLITE_ROW)
		json_array_append_new(unk, col_text(q, 0));
	sqlite3_finalize(q);
	json_object_set_new(b, "unknown_files", unk);
	q = prep(s, "SELECT format, count(*) FROM files WHERE format IS NOT NULL"
		    " GROUP BY format ORDER BY format", d);
	if (!q)
		goto fail;
	json_t *fm = json_object();
	while (sqlite3_step(q) == SQLITE_ROW)
		json_object_set_new(fm, (const char *)sqlite3_column_text(q, 0),
				    json_integer(sqlite3_column_int64(q, 1)));
	sqlite3_finalize(q);
	json_object_set_new(b, "formats", fm);
	return b;
fail:
	json_decref(b);
	return NULL;
}

static json_t *patterns_json(struct iq_store *s, struct iq_diag *d)
{
	sqlite3_stmt *q = prep(s, "SELECT json FROM findings ORDER BY pack", d);
	if (!q)
		return NULL;
	json_t *a = json_array();
	while (sqlite3_step(q) == SQLITE_ROW) {
		json_t *p = json_loads((const char *)sqlite3_column_text(q, 0), 0, NULL);
		if (p)
			json_array_append_new(a, p);
	}
	sqlite3_finalize(q);
	return a;
}

/* The tagged records, in time order, at most IQ_MAX_TIMELINE of them;
 * *total gets how many there are. */
static json_t *timeline_json(struct iq_store *s, struct iq_diag *d, long long *total)
{
	sqlite3_stmt *cq = prep(s, "SELECT count(*) FROM records WHERE id IN (SELECT record_id FROM signal_matches)", d);
	if (!cq)
		return NULL;
	*total = sqlite3_step(cq) == SQLITE_ROW ? sqlite3_column_int64(cq, 0) : 0;
	sqlite3_finalize(cq);
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "SELECT r.ts, r.node, r.pod, f.format, r.kind, r.text,"
		 " (SELECT group_concat(signal, ',') FROM (SELECT DISTINCT signal FROM signal_matches m"
		 "   WHERE m.record_id = r.id ORDER BY signal)),"
		 " f.path, r.line"
		 " FROM records r JOIN files f ON f.id = r.file_id"
		 " WHERE r.id IN (SELECT record_id FROM signal_matches)"
		 " ORDER BY r.ts IS NULL, r.ts, f.path, r.line LIMIT %d",
		 IQ_MAX_TIMELINE);
	sqlite3_stmt *q = prep(s, sql, d);
	if (!q)
		return NULL;
	json_t *a = json_array();
	while (sqlite3_step(q) == SQLITE_ROW) {
		json_t *e = json_object();
		json_object_set_new(e, "time", col_time(q, 0));
		json_object_set_new(e, "node", col_text(q, 1));
		json_object_set_new(e, "pod", col_text(q, 2));
		json_object_set_new(e, "source", col_text(q, 3));
		json_object_set_new(e, "kind", col_text(q, 4));
		json_object_set_new(e, "text", col_text(q, 5));
		json_t *tags = json_array();
		const char *t = (const char *)sqlite3_column_text(q, 6);
		while (t && *t) {
			const char *c = strchr(t, ',');
			size_t n = c ? (size_t)(c - t) : strlen(t);
			json_array_append_new(tags, json_stringn(t, n));
			t = c ? c + 1 : t + n;
		}
		json_object_set_new(e, "tags", tags);
		json_object_set_new(e, "file", col_text(q, 7));
		json_object_set_new(e, "line", json_integer(sqlite3_column_int64(q, 8)));
		json_array_append_new(a, e);
	}
	sqlite3_finalize(q);
	return a;
}

/* clock_skew: each node's offset from the reference clock (node minus
 * reference, seconds; null when nothing measured it), whether it was
 * applied, what it rests on and why it was or was not applied. */
static json_t *skew_json(struct iq_store *s)
{
	json_t *a = json_array();
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT node, offset_ns, applied_ns, samples, basis, spread_ns,"
			       " uncertainty_ns, status, bases FROM clock_skew ORDER BY node", -1, &q, NULL) != SQLITE_OK)
		return a;
	while (sqlite3_step(q) == SQLITE_ROW) {
		json_t *o = json_object();
		json_object_set_new(o, "node", col_text(q, 0));
		json_object_set_new(o, "offset_s", sqlite3_column_type(q, 1) == SQLITE_NULL ? json_null()
				    : json_real((double)sqlite3_column_int64(q, 1) / 1e9));
		json_object_set_new(o, "basis", col_text(q, 4));
		json_object_set_new(o, "corrected", json_boolean(sqlite3_column_int64(q, 2) != 0));
		json_object_set_new(o, "status", col_text(q, 7));
		json_object_set_new(o, "samples", json_integer(sqlite3_column_int64(q, 3)));
		json_object_set_new(o, "spread_s", sqlite3_column_type(q, 5) == SQLITE_NULL ? json_null()
				    : json_real((double)sqlite3_column_int64(q, 5) / 1e9));
		json_object_set_new(o, "uncertainty_s", sqlite3_column_type(q, 6) == SQLITE_NULL ? json_null()
				    : json_real((double)sqlite3_column_int64(q, 6) / 1e9));
		const char *bj = (const char *)sqlite3_column_text(q, 8);
		json_t *b = bj ? json_loads(bj, 0, NULL) : NULL;
		json_object_set_new(o, "bases", b ? b : json_array());
		json_array_append_new(a, o);
	}
	sqlite3_finalize(q);
	return a;
}

/* The incident window's margins: the lead-up the questions search (the
 * ten minutes before the first CUDA OOM) and a tail for the recovery. */
#define WINDOW_LEAD_S 600
#define WINDOW_TAIL_S 300

static int64_t meta_int(struct iq_store *s, const char *key)
{
	sqlite3_stmt *q;
	int64_t v = IQ_TIME_NONE;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1",
			       -1, &q, NULL) != SQLITE_OK)
		return v;
	sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

/* The earliest (or latest) time t of a present signal or boundary seen so
 * far: which one it is goes to *who. */
struct edge {
	int64_t t;
	const char *pattern, *id;
};

static void edge_take(struct edge *e, int64_t t, const char *pattern, const char *id, int latest)
{
	if (t == IQ_TIME_NONE)
		return;
	if (e->t == IQ_TIME_NONE || (latest ? t > e->t : t < e->t))
		*e = (struct edge){t, pattern, id};
}

static json_t *edge_json(const struct edge *e)
{
	if (e->t == IQ_TIME_NONE)
		return json_null();
	char b[IQ_TIME_BUF];
	return json_pack("{s:s, s:s, s:s}", "pattern", e->pattern, "signal", e->id, "time",
			 iq_time_fmt_ms(e->t, b));
}

json_t *iq_incident_window(struct iq_store *s, json_t *patterns)
{
	struct edge first = {IQ_TIME_NONE, NULL, NULL}, last = {IQ_TIME_NONE, NULL, NULL};
	size_t i, k;
	json_t *p, *sg;
	/* the patterns that were found first; all of them when none was */
	for (int pass = 0; pass < 2 && first.t == IQ_TIME_NONE; pass++) {
	json_array_foreach(patterns, i, p) {
		const char *pid = json_string_value(json_object_get(p, "id"));
		const char *verdict = json_string_value(json_object_get(p, "verdict"));
		if (pass == 0 && (!verdict || strcmp(verdict, "not_detected") == 0 ||
				  strcmp(verdict, "inconclusive") == 0))
			continue;
		json_array_foreach(json_object_get(p, "signals"), k, sg) {
			if (!json_is_true(json_object_get(sg, "present")))
				continue;
			const char *id = json_string_value(json_object_get(sg, "id"));
			edge_take(&first, iq_json_time(sg, "first"), pid, id, 0);
			edge_take(&last, iq_json_time(sg, "last"), pid, id, 1);
		}
		json_t *ph = json_object_get(p, "phases");
		edge_take(&last, iq_json_time(json_object_get(ph, "outage_ends"), "time"), pid,
			  "outage-ends", 1);
	}
	}
	int64_t since = meta_int(s, "scope_since"), until = meta_int(s, "scope_until");
	int given = since != IQ_TIME_NONE || until != IQ_TIME_NONE;
	int64_t lo = IQ_TIME_NONE, hi = IQ_TIME_NONE;
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT min(first_ts), max(last_ts) FROM files", -1, &q,
			       NULL) == SQLITE_OK) {
		if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
			lo = sqlite3_column_int64(q, 0);
			hi = sqlite3_column_int64(q, 1);
		}
		sqlite3_finalize(q);
	}
	int64_t start = IQ_TIME_NONE, end = IQ_TIME_NONE;
	const char *basis;
	if (given) {
		start = since != IQ_TIME_NONE ? since : lo;
		end = until != IQ_TIME_NONE ? until : hi;
		basis = "given: the --since/--until of the run";
	} else if (first.t != IQ_TIME_NONE) {
		start = first.t - (int64_t)WINDOW_LEAD_S * 1000000000;
		end = last.t + (int64_t)WINDOW_TAIL_S * 1000000000;
		basis = "inferred: from 10 min before the first signal to 5 min after the last";
	} else {
		basis = "none: no signal of any pattern";
	}
	/* no wider than the records the bundle holds */
	if (start != IQ_TIME_NONE && lo != IQ_TIME_NONE && start < lo)
		start = lo;
	if (end != IQ_TIME_NONE && hi != IQ_TIME_NONE && end > hi)
		end = hi;
	char b1[IQ_TIME_BUF], b2[IQ_TIME_BUF];
	json_t *w = json_object();
	json_object_set_new(w, "start", start == IQ_TIME_NONE ? json_null()
							      : json_string(iq_time_fmt_ms(start, b1)));
	json_object_set_new(w, "end", end == IQ_TIME_NONE ? json_null()
							  : json_string(iq_time_fmt_ms(end, b2)));
	json_object_set_new(w, "given", json_boolean(given));
	json_object_set_new(w, "basis", json_string(basis));
	json_object_set_new(w, "first_signal", edge_json(&first));
	json_object_set_new(w, "last_signal", edge_json(&last));
	json_object_set_new(w, "lead_s", json_integer(given ? 0 : WINDOW_LEAD_S));
	json_object_set_new(w, "tail_s", json_integer(given ? 0 : WINDOW_TAIL_S));
	return w;
}

json_t *iq_report_build(struct iq_store *s, struct iq_diag *d)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "schema_version", json_integer(IQ_FINDINGS_SCHEMA_VERSION));
	json_t *tool = json_object();
	json_object_set_new(tool, "name", json_string("inquest"));
	json_object_set_new(tool, "version", json_string(IQ_VERSION));
	json_object_set_new(doc, "tool", tool);
	json_t *b = bundle_json(s, d);
	json_t *p = b ? patterns_json(s, d) : NULL;
	long long total = 0;
	json_t *t = p ? timeline_json(s, d, &total) : NULL;
	if (!t) {
		json_decref(b);
		json_decref(p);
		json_decref(doc);
		return NULL;
	}
	json_object_set_new(doc, "bundle", b);
	json_object_set_new(doc, "clock_skew", skew_json(s));
	json_object_set_new(doc, "incident_window", iq_incident_window(s, p));
	json_object_set_new(doc, "patterns", p);
	json_object_set_new(doc, "timeline", t);
	/* a list cut short says so */
	json_object_set_new(doc, "timeline_total", json_integer(total));
	json_object_set_new(doc, "timeline_truncated", json_boolean((size_t)total > json_array_size(t)));
	return doc;
}

int iq_render_json(json_t *doc, FILE *out)
{
	if (json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0)
		return IQ_ERR_INTERNAL;
	fputc('\n', out);
	return 0;
}

int iq_write_atomic(const char *path, int (*render)(void *u, FILE *f), void *u,
		    struct iq_diag *d)
{
	size_t n = strlen(path) + 16;
	char *tmp = iq_xmalloc(n);
	snprintf(tmp, n, "%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		int rc = iq_diag_set(d, IQ_ERR_INPUT, "cannot write '%s': %s", tmp, strerror(errno));
		free(tmp);
		return rc;
	}
	int rc = render(u, f);
	if (fclose(f) != 0 && !rc)
		rc = iq_diag_set(d, IQ_ERR_INPUT, "cannot write '%s': %s", tmp, strerror(errno));
	if (!rc && rename(tmp, path) != 0)
		rc = iq_diag_set(d, IQ_ERR_INPUT, "cannot rename '%s' to '%s': %s", tmp, path,
				 strerror(errno));
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}
