/* util.c: queries and JSON pieces every detector uses. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int det_prep(struct det *x, const char *sql, sqlite3_stmt **q)
{
	if (sqlite3_prepare_v2(x->db, sql, -1, q, NULL) != SQLITE_OK)
		return iq_diag_set(x->d, IQ_ERR_DB, "database: %s in: %.200s", sqlite3_errmsg(x->db), sql);
	return 0;
}

int det_value_unset(const char *v)
{
	static const char *const unset[] = {"", "None", "none", "null", "Null", "NULL", "~", "nil", "unset", "NaN"};
	if (!v)
		return 1;
	for (size_t i = 0; i < IQ_ARRAY_LEN(unset); i++)
		if (strcmp(v, unset[i]) == 0)
			return 1;
	return 0;
}

json_t *det_setting(json_t *set, const char *key)
{
	size_t i;
	json_t *o;
	json_array_foreach(set, i, o)
		if (strcmp(json_string_value(json_object_get(o, "key")), key) == 0 &&
		    !json_is_false(json_object_get(o, "configured")))
			return o;
	return NULL;
}

int det_fail(struct det *x, const char *what)
{
	return iq_diag_set(x->d, IQ_ERR_DB, "database: %s while reading %s", sqlite3_errmsg(x->db), what);
}

json_t *det_time_ns(int64_t t)
{
	if (t == IQ_TIME_NONE)
		return json_null();
	char b[IQ_TIME_BUF];
	return json_string(iq_time_fmt_ms(t, b));
}

json_t *det_time(sqlite3_stmt *q, int col)
{
	if (sqlite3_column_type(q, col) == SQLITE_NULL)
		return json_null();
	return det_time_ns(sqlite3_column_int64(q, col));
}

json_t *det_text(sqlite3_stmt *q, int col)
{
	return det_str((const char *)sqlite3_column_text(q, col));
}

json_t *det_str(const char *t)
{
	if (!t)
		return json_null();
	json_t *s = json_string(t);
	if (!s) {
		/* invalid UTF-8 from a log must not make the JSON invalid */
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

/* A JSON string of the first line of t, cut at max bytes (on a UTF-8
 * character boundary) with "…". */
static json_t *line_cut(const char *t, size_t max)
{
	if (!t)
		return json_null();
	size_t n = strcspn(t, "\n");
	int cut = n > max;
	if (cut) {
		n = max;
		while (n > 0 && ((unsigned char)t[n] & 0xC0) == 0x80)
			n--;
	}
	while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t' || t[n - 1] == '\r'))
		n--;
	char *c = iq_xmalloc(n + 4);
	memcpy(c, t, n);
	if (cut)
		memcpy(c + n, "\xe2\x80\xa6", 3);
	c[n + (cut ? 3 : 0)] = '\0';
	json_t *s = det_str(c);
	free(c);
	return s;
}

#define EV_TEXT_MAX 400

json_t *det_evidence(struct det *x, sqlite3_stmt *q, int col, const char *what)
{
	int64_t rid = sqlite3_column_int64(q, col + 4);
	json_t *e = json_object();
	json_object_set_new(e, "file", det_text(q, col));
	if (!x->ev_q && det_prep(x, "SELECT r.nlines, qt.line, qt.text, k.count, k.first_ts, k.last_ts"
				 " FROM records r LEFT JOIN quotes qt"
				 " ON qt.record_id = r.id AND qt.n = coalesce((SELECT n FROM quotes"
				 "  WHERE record_id = ?1 AND what = ?2), 0)"
				 " LEFT JOIN k8s_events k ON k.record_id = r.id WHERE r.id = ?1", &x->ev_q)) {
		json_decref(e);
		return NULL;
	}
	sqlite3_reset(x->ev_q);
	sqlite3_bind_int64(x->ev_q, 1, rid);
	sqlite3_bind_text(x->ev_q, 2, what ? what : "", -1, SQLITE_STATIC);
	long nlines = 1;
	int quoted = 0;
	if (sqlite3_step(x->ev_q) == SQLITE_ROW) {
		nlines = (long)sqlite3_column_int64(x->ev_q, 0);
		quoted = sqlite3_column_type(x->ev_q, 1) != SQLITE_NULL;
	}
	if (quoted) {
		/* a structured record: the line that says it, the record's own
		 * text (a restatement) as the summary */
		json_object_set_new(e, "line", json_integer(sqlite3_column_int64(x->ev_q, 1)));
		json_object_set_new(e, "nlines", json_integer(1));
		json_object_set_new(e, "time", det_time(q, col + 2));
		json_t *text = line_cut((const char *)sqlite3_column_text(x->ev_q, 2), EV_TEXT_MAX);
		json_t *sum = line_cut((const char *)sqlite3_column_text(q, col + 3), EV_TEXT_MAX);
		json_object_set_new(e, "text", text);
		if (json_equal(text, sum))
			json_decref(sum); /* the quote is the record's own first line */
		else
			json_object_set_new(e, "summary", sum);
	} else {
		json_object_set_new(e, "line", json_integer(sqlite3_column_int64(q, col + 1)));
		json_object_set_new(e, "nlines", json_integer(nlines > 0 ? nlines : 1));
		json_object_set_new(e, "time", det_time(q, col + 2));
		json_object_set_new(e, "text", line_cut((const char *)sqlite3_column_text(q, col + 3), EV_TEXT_MAX));
	}
	/* an event the reporter coalesced: when it was first and last seen */
	if (sqlite3_column_type(x->ev_q, 3) != SQLITE_NULL && sqlite3_column_int64(x->ev_q, 3) > 1) {
		json_t *seen = json_object();
		json_object_set_new(seen, "first", det_time(x->ev_q, 4));
		json_object_set_new(seen, "last", det_time(x->ev_q, 5));
		json_object_set_new(seen, "count", json_integer(sqlite3_column_int64(x->ev_q, 3)));
		json_object_set_new(e, "seen", seen);
	}
	sqlite3_reset(x->ev_q);
	return e;
}

json_t *det_evidence_what(struct det *x, int64_t record_id, const char *what)
{
	sqlite3_stmt *q;
	json_t *e = NULL;
	if (det_prep(x, "SELECT f.path, r.line, r.ts, r.text, r.id FROM records r JOIN files f ON f.id = r.file_id"
		     " WHERE r.id = ?1", &q))
		return NULL;
	sqlite3_bind_int64(q, 1, record_id);
	if (sqlite3_step(q) == SQLITE_ROW)
		e = det_evidence(x, q, 0, what);
	sqlite3_finalize(q);
	return e;
}

json_t *det_evidence_of(struct det *x, int64_t record_id)
{
	return det_evidence_what(x, record_id, NULL);
}

double det_param(struct det *x, const char *signal, const char *key, double def)
{
	for (size_t i = 0; i < iq_pack_signal_count(x->pack); i++) {
		const struct iq_signal *s = iq_pack_signal(x->pack, i);
		if (strcmp(iq_signal_id(s), signal) != 0)
			continue;
		json_t *v = json_object_get(json_object_get(json_object_get(iq_signal_json(s), "detector"),
							    "params"), key);
		if (json_is_number(v))
			return json_number_value(v);
	}
	return def;
}

double det_item_param(struct det *x, const char *section, const char *id, const char *key, double def)
{
	for (size_t i = 0; i < iq_pack_item_count(x->pack, section); i++) {
		json_t *c = iq_pack_item(x->pack, section, i);
		if (strcmp(iq_item_str(c, "id"), id) != 0)
			continue;
		json_t *v = json_object_get(json_object_get(c, "params"), key);
		return json_is_number(v) ? json_number_value(v) : def;
	}
	return def;
}

size_t det_param_list(struct det *x, const char *signal, const char *key, double *out, size_t max)
{
	for (size_t i = 0; i < iq_pack_signal_count(x->pack); i++) {
		const struct iq_signal *s = iq_pack_signal(x->pack, i);
		if (strcmp(iq_signal_id(s), signal) != 0)
			continue;
		json_t *v = json_object_get(json_object_get(json_object_get(iq_signal_json(s), "detector"),
							    "params"), key);
		size_t n = 0;
		if (json_is_number(v) && max)
			out[n++] = json_number_value(v);
		size_t k;
		json_t *e;
		json_array_foreach(v, k, e)
			if (json_is_number(e) && n < max)
				out[n++] = json_number_value(e);
		return n;
	}
	return 0;
}

json_t *det_signal(const char *id, long count, int64_t first, int64_t last, json_t *evidence)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_string(id));
	json_object_set_new(o, "present", json_boolean(count > 0));
	json_object_set_new(o, "count", json_integer(count));
	json_object_set_new(o, "first", det_time_ns(first));
	json_object_set_new(o, "last", det_time_ns(last));
	json_object_set_new(o, "evidence", evidence ? evidence : json_array());
	return o;
}

int64_t det_scalar(struct det *x, const char *sql, int64_t def)
{
	sqlite3_stmt *q;
	int64_t v = def;
	if (det_prep(x, sql, &q))
		return def;
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}
