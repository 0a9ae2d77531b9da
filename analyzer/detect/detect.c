/* detect.c: for each rule pack, the signals found in the database with
 * their evidence, the CUDA OOM events, and the verdict. The windowed
 * detectors (surges, sawtooth, cascade order, boundaries) build on the
 * same queries. */
#include <stdlib.h>
#include <string.h>

#include "detect.h"

static json_t *time_json(sqlite3_stmt *q, int col)
{
	if (sqlite3_column_type(q, col) == SQLITE_NULL)
		return json_null();
	char b[IQ_TIME_BUF];
	return json_string(iq_time_fmt_ms(sqlite3_column_int64(q, col), b));
}

static json_t *text_json(sqlite3_stmt *q, int col)
{
	const char *t = (const char *)sqlite3_column_text(q, col);
	if (!t)
		return json_null();
	/* invalid UTF-8 in a log line must not make the JSON invalid */
	json_t *s = json_string(t);
	if (!s) {
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

/* Evidence object from columns file, line, ts, text at col.. col+3. */
static json_t *evidence_json(sqlite3_stmt *q, int col)
{
	json_t *e = json_object();
	json_object_set_new(e, "file", text_json(q, col));
	json_object_set_new(e, "line", json_integer(sqlite3_column_int64(q, col + 1)));
	json_object_set_new(e, "time", time_json(q, col + 2));
	json_object_set_new(e, "text", text_json(q, col + 3));
	return e;
}

static int prep(struct iq_store *s, const char *sql, sqlite3_stmt **q, struct iq_diag *d)
{
	if (sqlite3_prepare_v2(iq_store_db(s), sql, -1, q, NULL) != SQLITE_OK)
		return iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(iq_store_db(s)));
	return 0;
}

/* The signal object of findings.json for one signal of a pack. */
static int signal_json(struct iq_store *s, const char *pack, const char *signal, json_t **out,
		       struct iq_diag *d)
{
	sqlite3_stmt *q;
	int rc = prep(s,
		      "SELECT f.path, r.line, r.ts, r.text FROM signal_matches m"
		      " JOIN records r ON r.id = m.record_id JOIN files f ON f.id = r.file_id"
		      " WHERE m.pack = ?1 AND m.signal = ?2"
		      " ORDER BY r.ts IS NULL, r.ts, f.path, r.line",
		      &q, d);
	if (rc)
		return rc;
	sqlite3_bind_text(q, 1, pack, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, signal, -1, SQLITE_STATIC);
	json_t *ev = json_array();
	long count = 0;
	json_t *first = json_null(), *last = json_null();
	while (sqlite3_step(q) == SQLITE_ROW) {
		if (sqlite3_column_type(q, 2) != SQLITE_NULL) {
			if (json_is_null(first)) {
				json_decref(first);
				first = time_json(q, 2);
			}
			json_decref(last);
			last = time_json(q, 2);
		}
		if (count < IQ_MAX_EVIDENCE)
			json_array_append_new(ev, evidence_json(q, 0));
		count++;
	}
	sqlite3_finalize(q);
	json_t *o = json_object();
	json_object_set_new(o, "id", json_string(signal));
	json_object_set_new(o, "present", json_boolean(count > 0));
	json_object_set_new(o, "count", json_integer(count));
	json_object_set_new(o, "first", first);
	json_object_set_new(o, "last", last);
	json_object_set_new(o, "evidence", ev);
	*out = o;
	return 0;
}

static json_t *capture_int(json_t *caps, const char *key)
{
	json_t *v = json_object_get(caps, key);
	return json_is_integer(v) ? json_incref(v) : json_null();
}

/* One oom_events entry per CUDA OOM record, in time order. */
static int oom_events_json(struct iq_store *s, const char *pack, json_t **out, struct iq_diag *d)
{
	sqlite3_stmt *q;
	int rc = prep(s,
		      "SELECT f.path, r.line, r.ts, r.text, r.pod, r.node, r.container, m.captures"
		      " FROM signal_matches m JOIN records r ON r.id = m.record_id"
		      " JOIN files f ON f.id = r.file_id"
		      " WHERE m.pack = ?1 AND m.signal = 'cuda-oom'"
		      " ORDER BY r.ts IS NULL, r.ts, f.path, r.line",
		      &q, d);
	if (rc)
		return rc;
	sqlite3_bind_text(q, 1, pack, -1, SQLITE_STATIC);
	json_t *a = json_array();
	while (sqlite3_step(q) == SQLITE_ROW) {
		/* One event per worker death: a traceback often repeats the
		 * message (worker, then engine), so further OOM lines of the same
		 * file within IQ_OOM_MERGE_S of an event belong to it. */
		const char *file = (const char *)sqlite3_column_text(q, 0);
		int merged = 0;
		if (sqlite3_column_type(q, 2) != SQLITE_NULL) {
			int64_t t = sqlite3_column_int64(q, 2);
			for (size_t k = json_array_size(a); k-- > 0 && !merged;) {
				json_t *prev = json_array_get(a, k);
				json_t *pe = json_array_get(json_object_get(prev, "evidence"), 0);
				json_t *pt = json_object_get(prev, "_ts");
				if (json_is_integer(pt) && t - json_integer_value(pt) <= IQ_OOM_MERGE_S * IQ_NS_PER_SEC &&
				    strcmp(json_string_value(json_object_get(pe, "file")), file) == 0) {
					json_array_append_new(json_object_get(prev, "evidence"), evidence_json(q, 0));
					merged = 1;
				}
			}
		}
		if (merged)
			continue;
		json_t *caps = json_loads(sqlite3_column_text(q, 7) ? (const char *)sqlite3_column_text(q, 7) : "{}", 0, NULL);
		json_t *e = json_object();
		json_object_set_new(e, "pod", text_json(q, 4));
		json_object_set_new(e, "node", text_json(q, 5));
		json_object_set_new(e, "container", text_json(q, 6));
		json_object_set_new(e, "time", time_json(q, 2));
		const char *text = (const char *)sqlite3_column_text(q, 3);
		const char *fw = "unknown";
		if (text && (strstr(text, "PyTorch") || strstr(text, "torch.") ||
			     strstr(text, "Tried to allocate")))
			fw = "pytorch";
		else if (text && strstr(text, "OOM when allocating"))
			fw = "tensorflow";
		else if (text && strstr(text, "RESOURCE_EXHAUSTED"))
			fw = "jax";
		else if (text && strstr(text, "TensorRT"))
			fw = "tensorrt-llm";
		json_object_set_new(e, "framework", json_string(fw));
		json_object_set_new(e, "tried_bytes", capture_int(caps, "tried_bytes"));
		json_object_set_new(e, "capacity_bytes", capture_int(caps, "capacity_bytes"));
		json_object_set_new(e, "free_bytes", capture_int(caps, "free_bytes"));
		json_object_set_new(e, "allocated_bytes", capture_int(caps, "allocated_bytes"));
		json_t *ru = capture_int(caps, "reserved_unallocated_bytes");
		json_t *res = json_object_get(caps, "reserved_bytes");
		json_t *alloc = json_object_get(caps, "allocated_bytes");
		if (json_is_null(ru) && json_is_integer(res) && json_is_integer(alloc)) {
			/* old message: reserved in total = allocated + reserved-unallocated */
			json_decref(ru);
			ru = json_integer(json_integer_value(res) - json_integer_value(alloc));
		}
		json_object_set_new(e, "reserved_unallocated_bytes", ru);
		json_t *ev = json_array();
		json_array_append_new(ev, evidence_json(q, 0));
		json_object_set_new(e, "evidence", ev);
		if (sqlite3_column_type(q, 2) != SQLITE_NULL)
			json_object_set_new(e, "_ts", json_integer(sqlite3_column_int64(q, 2)));
		json_array_append_new(a, e);
		json_decref(caps);
	}
	sqlite3_finalize(q);
	size_t k;
	json_t *e;
	json_array_foreach(a, k, e)
		json_object_del(e, "_ts");
	*out = a;
	return 0;
}

static int pack_findings(struct iq_store *s, const struct iq_pack *p, struct iq_diag *d)
{
	const char *id = iq_pack_id(p);
	json_t *o = json_object();
	json_object_set_new(o, "id", json_string(id));
	json_object_set_new(o, "title", json_string(iq_pack_text(p, "title", "en")));
	json_t *sigs = json_array();
	long oom = 0;
	int rc = 0;
	for (size_t i = 0; i < iq_pack_signal_count(p) && !rc; i++) {
		json_t *sj;
		const char *sid = iq_signal_id(iq_pack_signal(p, i));
		rc = signal_json(s, id, sid, &sj, d);
		if (rc)
			break;
		if (strcmp(sid, "cuda-oom") == 0)
			oom = (long)json_integer_value(json_object_get(sj, "count"));
		json_array_append_new(sigs, sj);
	}
	json_t *ooms = NULL;
	if (!rc)
		rc = oom_events_json(s, id, &ooms, d);
	if (rc) {
		json_decref(o);
		json_decref(sigs);
		return rc;
	}
	/* Until the windowed detectors land, the verdict only knows whether
	 * CUDA OOM happened at all. */
	const char *verdict = oom ? "oom_no_cascade" : "not_detected";
	char summary[512];
	if (oom) {
		json_t *first = json_array_get(ooms, 0);
		const char *pod = json_string_value(json_object_get(first, "pod"));
		snprintf(summary, sizeof summary,
			 "%ld CUDA out-of-memory error%s found in %zu worker death%s, the first in %s at %s.",
			 oom, oom == 1 ? "" : "s", json_array_size(ooms), json_array_size(ooms) == 1 ? "" : "s",
			 pod ? pod : "an unknown pod",
			 json_is_string(json_object_get(first, "time")) ? json_string_value(json_object_get(first, "time")) : "an unknown time");
	} else {
		snprintf(summary, sizeof summary, "No CUDA out-of-memory error was found in the bundle.");
	}
	json_object_set_new(o, "verdict", json_string(verdict));
	json_object_set_new(o, "confidence", json_real(oom ? 0.5 : 0.0));
	json_object_set_new(o, "summary", json_string(summary));
	json_object_set_new(o, "signals", sigs);
	json_object_set_new(o, "boundaries", json_array());
	json_object_set_new(o, "oom_events", ooms);
	json_object_set_new(o, "cascade", json_null());
	json_object_set_new(o, "lb_5xx_surge", json_null());
	json_object_set_new(o, "sawtooth", json_array());
	json_object_set_new(o, "conditions", json_array());
	json_object_set_new(o, "questions", json_array());
	json_t *impact = json_object();
	json_object_set_new(impact, "failed_requests", json_null());
	json_object_set_new(impact, "unavailability", json_null());
	json_object_set_new(impact, "dropped_streams", json_null());
	json_object_set_new(o, "impact", impact);
	json_object_set_new(o, "recovery", json_array());

	char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	sqlite3_stmt *q;
	rc = prep(s, "INSERT OR REPLACE INTO findings VALUES (?1, ?2, ?3)", &q, d);
	if (!rc) {
		sqlite3_bind_text(q, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, verdict, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 3, text, -1, SQLITE_STATIC);
		if (sqlite3_step(q) != SQLITE_DONE)
			rc = iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(iq_store_db(s)));
		sqlite3_finalize(q);
	}
	free(text);
	return rc;
}

int iq_detect(struct iq_store *s, struct iq_ruleset *rs, struct iq_diag *d)
{
	int rc = iq_store_exec(s, "BEGIN; DELETE FROM findings;", d);
	for (size_t i = 0; i < rs->npacks && !rc; i++)
		rc = pack_findings(s, rs->packs[i], d);
	if (!rc)
		rc = iq_store_exec(s, "COMMIT", d);
	else
		iq_store_exec(s, "ROLLBACK", NULL);
	return rc;
}
