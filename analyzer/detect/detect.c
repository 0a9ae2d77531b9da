/* detect.c: runs the detectors for each rule pack and stores the pattern
 * object of findings.json in the findings table. Signals defined by
 * regexes are read from signal_matches; the windowed ones (crash loops,
 * the 5xx surge, the GPU memory sawtooth, the cascade) come from their
 * detectors. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static json_t *time_json(sqlite3_stmt *q, int col)
{
	if (sqlite3_column_type(q, col) == SQLITE_NULL)
		return json_null();
	char b[IQ_TIME_BUF];
	return json_string(iq_time_fmt_ms(sqlite3_column_int64(q, col), b));
}

static int prep(struct iq_store *s, const char *sql, sqlite3_stmt **q, struct iq_diag *d)
{
	if (sqlite3_prepare_v2(iq_store_db(s), sql, -1, q, NULL) != SQLITE_OK)
		return iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(iq_store_db(s)));
	return 0;
}

/* The signal object of findings.json for one signal of a pack. */
static int signal_json(struct det *x, const char *signal, json_t **out)
{
	sqlite3_stmt *q;
	int rc = prep(x->s,
		      "SELECT f.path, r.line, r.ts, r.text, r.id FROM signal_matches m"
		      " JOIN records r ON r.id = m.record_id JOIN files f ON f.id = r.file_id"
		      " WHERE m.pack = ?1 AND m.signal = ?2"
		      " ORDER BY r.ts IS NULL, r.ts, f.path, r.line",
		      &q, x->d);
	if (rc)
		return rc;
	sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
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
		if (count < IQ_MAX_EVIDENCE) {
			json_t *e = det_evidence(x, q, 0, NULL);
			if (e)
				json_array_append_new(ev, e);
		}
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

/* Signals whose findings come from a detector, not from regex matches. */
static int detector_signal(const char *id)
{
	static const char *const ids[] = {"crashloop", "lb-5xx-surge", "gpu-mem-sawtooth", "cascade"};
	for (size_t i = 0; i < IQ_ARRAY_LEN(ids); i++)
		if (strcmp(ids[i], id) == 0)
			return 1;
	return 0;
}

static int store_findings(struct iq_store *s, const char *id, const char *verdict, json_t *o,
			  struct iq_diag *d)
{
	char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	sqlite3_stmt *q;
	int rc = prep(s, "INSERT OR REPLACE INTO findings VALUES (?1, ?2, ?3)", &q, d);
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

/* The GPU OOM cascade: every detector, then the verdict. */
static int cascade_pack(struct det *x)
{
	static const char *const keys[] = {"boundaries", "oom_events", "cascade", "lb_5xx_surge",
					   "sawtooth", "conditions", "questions", "limits", "impact", "recovery", "phases"};
	for (size_t i = 0; i < IQ_ARRAY_LEN(keys); i++)
		json_object_set_new(x->pat, keys[i], json_null());
	int (*const steps[])(struct det *) = {
		det_oom, det_http, det_crashloop, det_surge, det_sawtooth, det_cascade, det_boundaries,
		det_impact, det_recovery, det_conditions, det_questions, det_limits, det_phases, det_verdict,
	};
	for (size_t i = 0; i < IQ_ARRAY_LEN(steps); i++) {
		int rc = steps[i](x);
		if (rc)
			return rc;
	}
	return 0;
}

/* A signal of another pattern whose detector runs there: a tie. */
static int other_detector(const struct iq_signal *s)
{
	const char *d = iq_signal_detector(s);
	return d && strcmp(d, "tie") == 0;
}

/* Any other pattern: its regex signals, the tie detectors its signals
 * name, its boundaries, and the verdict its rules give. */
static int other_pack(struct det *x)
{
	for (size_t i = 0; i < iq_pack_signal_count(x->pack); i++) {
		const struct iq_signal *s = iq_pack_signal(x->pack, i);
		if (other_detector(s)) {
			int rc = det_tie(x, s);
			if (rc)
				return rc;
		}
	}
	json_t *b = json_array();
	json_object_set_new(x->pat, "boundaries", b);
	for (size_t i = 0; i < iq_pack_section_count(x->pack, IQ_SEC_BOUNDARIES); i++) {
		json_t *sj;
		const char *id = iq_signal_id(iq_pack_section_signal(x->pack, IQ_SEC_BOUNDARIES, i));
		int rc = signal_json(x, id, &sj);
		if (rc)
			return rc;
		json_object_del(sj, "first");
		json_object_del(sj, "last");
		json_object_set_new(sj, "attributed_to", json_array());
		json_array_append_new(b, sj);
	}
	return det_verdict_rules(x);
}

/* Does the bundle hold log lines from pod containers: a file whose path
 * names a pod (a container log) with records? */
static long container_logs(struct iq_store *s)
{
	sqlite3_stmt *q;
	long n = 0;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT EXISTS (SELECT 1 FROM files WHERE pod IS NOT NULL AND records > 0)",
			       -1, &q, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(q) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

static int pack_findings(struct iq_store *s, const struct iq_pack *p, long logs, struct iq_diag *d)
{
	struct det x;
	memset(&x, 0, sizeof x);
	x.s = s;
	x.db = iq_store_db(s);
	x.pack = p;
	x.pack_id = iq_pack_id(p);
	x.d = d;
	x.f.first_oom = IQ_TIME_NONE;
	x.f.surge_start = x.f.surge_end = IQ_TIME_NONE;
	x.f.container_logs = logs;
	x.pat = json_object();
	json_object_set_new(x.pat, "id", json_string(x.pack_id));
	json_object_set_new(x.pat, "title", json_string(iq_pack_text(p, "title", "en")));
	json_object_set_new(x.pat, "verdict", json_null());
	json_object_set_new(x.pat, "confidence", json_null());
	json_object_set_new(x.pat, "summary", json_null());
	json_t *sigs = json_array();
	json_object_set_new(x.pat, "signals", sigs);
	int rc = 0;
	int cascade = strcmp(x.pack_id, "gpu-oom-cascade") == 0;
	for (size_t i = 0; i < iq_pack_signal_count(p) && !rc; i++) {
		const char *sid = iq_signal_id(iq_pack_signal(p, i));
		if (cascade ? detector_signal(sid) : other_detector(iq_pack_signal(p, i)))
			continue;
		json_t *sj;
		rc = signal_json(&x, sid, &sj);
		if (rc)
			break;
		json_array_append_new(sigs, sj);
	}
	if (!rc && cascade) {
		rc = cascade_pack(&x);
	} else if (!rc) {
		rc = other_pack(&x);
	}
	if (!rc)
		rc = store_findings(s, x.pack_id, json_string_value(json_object_get(x.pat, "verdict")), x.pat, d);
	if (cascade && !json_object_get(x.pat, "oom_events"))
		json_decref(x.ooms);
	det_http_free(x.http);
	sqlite3_finalize(x.ev_q);
	json_decref(x.pat);
	return rc;
}

int iq_detect(struct iq_store *s, struct iq_ruleset *rs, struct iq_diag *d)
{
	int rc = iq_store_exec(s, "BEGIN; DELETE FROM findings;", d);
	if (!rc)
		rc = iq_detect_skew(s, d);
	long logs = rc ? 0 : container_logs(s);
	for (size_t i = 0; i < rs->npacks && !rc; i++)
		rc = pack_findings(s, rs->packs[i], logs, d);
	if (!rc)
		rc = iq_store_exec(s, "COMMIT", d);
	else
		iq_store_exec(s, "ROLLBACK", NULL);
	return rc;
}
