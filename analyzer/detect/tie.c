/* tie.c: the "tie" detector: a fault is the incident's only where it
 * struck the workers. Each record of the signals the detector's
 * inputs.faults names (this pack's) is set against the deaths of GPU
 * workers on the same node: the end of a container instance that was
 * restarted (the last line of N.log when a later N+k.log exists) and a
 * container status's last termination (lastState.terminated.finishedAt).
 * A death from before_s before the fault to after_s after it is tied to
 * it. A worker is a container whose lines match one of inputs.workers
 * (any pack's signals); when no container's do, every container counts,
 * and the finding says so. A fault whose node is not known ties only in
 * a bundle of one node. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ties listed in the findings; every one is counted */
#define MAX_TIES 20
#define MAX_DEATHS_PER_TIE 8

struct death {
	char *pod, *container, *node;
	int64_t ts;
	int64_t record_id;
	const char *basis; /* "last-line", "last-terminated" */
};

struct deaths {
	struct death *v;
	size_t n, cap;
};

static void deaths_add(struct deaths *d, sqlite3_stmt *q, const char *basis)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 16;
		d->v = iq_xrealloc(d->v, d->cap * sizeof *d->v);
	}
	struct death *e = &d->v[d->n++];
	const unsigned char *c = sqlite3_column_text(q, 1);
	const unsigned char *n = sqlite3_column_text(q, 2);
	e->pod = iq_xstrdup((const char *)sqlite3_column_text(q, 0));
	e->container = c ? iq_xstrdup((const char *)c) : NULL;
	e->node = n ? iq_xstrdup((const char *)n) : NULL;
	e->ts = sqlite3_column_int64(q, 3);
	e->record_id = sqlite3_column_int64(q, 4);
	e->basis = basis;
}

static void deaths_free(struct deaths *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].pod);
		free(d->v[i].container);
		free(d->v[i].node);
	}
	free(d->v);
}

/* The JSON array of the strings of a detector input, or NULL. */
static json_t *input(const struct iq_signal *s, const char *key)
{
	json_t *v = json_object_get(json_object_get(json_object_get(iq_signal_json(s), "detector"), "inputs"), key);
	return json_is_array(v) ? v : NULL;
}

/* "?2, ?3, ..." placeholders for n values from first on, into buf. */
static void placeholders(char *buf, size_t size, size_t n, int first)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && len + 8 < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s?%d", i ? ", " : "", first + (int)i);
}

static void bind_list(sqlite3_stmt *q, json_t *list, int first)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
		sqlite3_bind_text(q, first + (int)i, json_string_value(v), -1, SQLITE_STATIC);
}

/* The rows (pod, container, node, ts, record id) of sql, the workers
 * bound from ?1, as deaths of basis. */
static int collect(struct det *x, const char *sql, json_t *workers, const char *basis, struct deaths *out)
{
	sqlite3_stmt *q;
	int rc = det_prep(x, sql, &q);
	if (rc)
		return rc;
	bind_list(q, workers, 1);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		deaths_add(out, q, basis);
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? 0 : det_fail(x, basis);
}

/* The deaths of workers (every container's when workers is NULL). */
static int load_deaths(struct det *x, json_t *workers, struct deaths *out)
{
	char in[512], sql[2048];
	placeholders(in, sizeof in, json_array_size(workers), 1);
	/* the workers: containers with a line of a worker signal */
	char with[800] = "";
	if (workers)
		snprintf(with, sizeof with,
			 "WITH wk AS (SELECT DISTINCT r.pod, r.container FROM signal_matches m JOIN records r"
			 " ON r.id = m.record_id WHERE r.pod IS NOT NULL AND m.signal IN (%s)) ", in);
	/* a restarted instance's last line */
	snprintf(sql, sizeof sql,
		 "%sSELECT f.pod, f.container, coalesce(r.node, f.node), r.ts, r.id FROM"
		 " (SELECT pod, container, restart, max(last_ts) AS t, last_record FROM files"
		 "   WHERE pod IS NOT NULL AND restart IS NOT NULL AND last_ts IS NOT NULL AND records > 0"
		 "   GROUP BY pod, container, restart) f0"
		 " JOIN files f ON f.pod = f0.pod AND f.container IS f0.container AND f.restart = f0.restart"
		 "  AND f.last_record = f0.last_record"
		 " JOIN records r ON r.id = f0.last_record"
		 " WHERE r.ts IS NOT NULL AND EXISTS (SELECT 1 FROM files g WHERE g.pod = f0.pod"
		 "  AND g.container IS f0.container AND g.restart > f0.restart)",
		 with);
	if (workers) {
		size_t len = strlen(sql);
		snprintf(sql + len, sizeof sql - len,
			 " AND EXISTS (SELECT 1 FROM wk WHERE wk.pod = f0.pod AND wk.container IS f0.container)");
	}
	int rc = collect(x, sql, workers, "last-line", out);
	if (rc)
		return rc;
	/* a container status's last termination */
	snprintf(sql, sizeof sql,
		 "%sSELECT s.pod, s.container, s.node, s.last_finished_at, s.record_id FROM pod_states s"
		 " WHERE s.last_finished_at IS NOT NULL AND s.pod IS NOT NULL%s",
		 with, workers ? " AND EXISTS (SELECT 1 FROM wk WHERE wk.pod = s.pod AND wk.container IS s.container)" : "");
	return collect(x, sql, workers, "last-terminated", out);
}

static int same_node(const char *a, const char *b, int one_node)
{
	if (a && b)
		return strcmp(a, b) == 0;
	return one_node;
}

static int same_container(const struct death *a, const struct death *b)
{
	return strcmp(a->pod, b->pod) == 0 &&
	       (a->container && b->container ? strcmp(a->container, b->container) == 0 : a->container == b->container);
}

static json_t *death_json(struct det *x, const struct death *e, int64_t fault_ts)
{
	json_t *o = json_object();
	json_object_set_new(o, "pod", det_str(e->pod));
	json_object_set_new(o, "container", det_str(e->container));
	json_object_set_new(o, "node", det_str(e->node));
	json_object_set_new(o, "time", det_time_ns(e->ts));
	json_object_set_new(o, "basis", json_string(e->basis));
	json_object_set_new(o, "gap_s", json_real(round((double)(e->ts - fault_ts) / 1e6) / 1e3));
	json_t *ev = det_evidence_what(x, e->record_id, strcmp(e->basis, "last-terminated") == 0 ? "last_reason" : NULL);
	json_object_set_new(o, "evidence", ev ? ev : json_null());
	return o;
}

/* Does the bundle name at most one node? */
static int one_node(struct det *x)
{
	return det_scalar(x, "SELECT count(*) FROM (SELECT node FROM files WHERE node IS NOT NULL"
			     " UNION SELECT node FROM records WHERE kind = 'kernel' AND node IS NOT NULL)", 0) <= 1;
}

int det_tie(struct det *x, const struct iq_signal *sig)
{
	const char *id = iq_signal_id(sig);
	double before = det_param(x, id, "before_s", 60), after = det_param(x, id, "after_s", 300);
	json_t *faults = input(sig, "faults"), *workers = input(sig, "workers");
	struct deaths ds = {0};
	json_t *out = json_object();
	json_object_set_new(x->pat, "ties", out);
	json_t *ties = json_array();
	json_object_set_new(out, "signal", json_string(id));
	json_object_set_new(out, "faults", json_incref(faults ? faults : json_array()));
	json_object_set_new(out, "ties", ties);
	/* workers recognised by their lines; else every container */
	int known = 0;
	if (workers && json_array_size(workers)) {
		char in[512], sql[700];
		placeholders(in, sizeof in, json_array_size(workers), 1);
		snprintf(sql, sizeof sql, "SELECT EXISTS (SELECT 1 FROM signal_matches m JOIN records r ON r.id = m.record_id"
			 " WHERE r.pod IS NOT NULL AND m.signal IN (%s))", in);
		sqlite3_stmt *q;
		int rc = det_prep(x, sql, &q);
		if (rc)
			return rc;
		bind_list(q, workers, 1);
		if (sqlite3_step(q) == SQLITE_ROW)
			known = sqlite3_column_int(q, 0);
		sqlite3_finalize(q);
	}
	json_object_set_new(out, "workers_recognised", json_boolean(known));
	int rc = load_deaths(x, known ? workers : NULL, &ds);
	long tied = 0, untied = 0;
	int64_t first = IQ_TIME_NONE, last = IQ_TIME_NONE;
	json_t *ev = json_array();
	if (!rc && faults && json_array_size(faults)) {
		int single = one_node(x);
		char in[512], sql[1024];
		placeholders(in, sizeof in, json_array_size(faults), 2);
		snprintf(sql, sizeof sql,
			 "SELECT f.path, r.line, r.ts, r.text, r.id, m.signal, coalesce(r.node, f.node)"
			 " FROM signal_matches m JOIN records r ON r.id = m.record_id JOIN files f ON f.id = r.file_id"
			 " WHERE m.pack = ?1 AND m.signal IN (%s) AND r.ts IS NOT NULL ORDER BY r.ts, r.id",
			 in);
		sqlite3_stmt *q;
		rc = det_prep(x, sql, &q);
		if (!rc) {
			sqlite3_bind_text(q, 1, x->pack_id, -1, SQLITE_STATIC);
			bind_list(q, faults, 2);
			int64_t prev = -1;
			while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
				int64_t rid = sqlite3_column_int64(q, 4);
				if (rid == prev)
					continue; /* a record matched by two fault signals */
				prev = rid;
				int64_t ts = sqlite3_column_int64(q, 2);
				const char *node = (const char *)sqlite3_column_text(q, 6);
				size_t hit[MAX_DEATHS_PER_TIE], nh = 0;
				for (size_t i = 0; i < ds.n && nh < MAX_DEATHS_PER_TIE; i++) {
					const struct death *e = &ds.v[i];
					if (e->ts < ts - NS(before) || e->ts > ts + NS(after) ||
					    !same_node(node, e->node, single))
						continue;
					int dup = 0;
					for (size_t k = 0; k < nh && !dup; k++)
						dup = same_container(&ds.v[hit[k]], e);
					if (!dup)
						hit[nh++] = i;
				}
				if (!nh) {
					untied++;
					continue;
				}
				tied++;
				if (first == IQ_TIME_NONE)
					first = ts;
				last = ts;
				if (json_array_size(ties) >= MAX_TIES)
					continue;
				json_t *fe = det_evidence(x, q, 0, NULL);
				json_t *t = json_object();
				json_t *fault = json_object();
				json_object_set_new(fault, "signal", det_text(q, 5));
				json_object_set_new(fault, "node", det_text(q, 6));
				json_object_set_new(fault, "time", det_time_ns(ts));
				json_object_set_new(fault, "evidence", fe ? json_incref(fe) : json_null());
				json_object_set_new(t, "fault", fault);
				json_t *dl = json_array();
				for (size_t k = 0; k < nh; k++) {
					json_t *dj = death_json(x, &ds.v[hit[k]], ts);
					json_t *de = json_object_get(dj, "evidence");
					if (k == 0 && fe && json_array_size(ev) + 2 <= IQ_MAX_EVIDENCE) {
						json_array_append(ev, fe);
						if (json_is_object(de))
							json_array_append(ev, de);
					}
					json_array_append_new(dl, dj);
				}
				json_decref(fe);
				json_object_set_new(t, "deaths", dl);
				json_array_append_new(ties, t);
			}
			sqlite3_finalize(q);
			rc = rc == SQLITE_DONE ? 0 : det_fail(x, "faults");
		}
	}
	deaths_free(&ds);
	json_object_set_new(out, "tied", json_integer(tied));
	json_object_set_new(out, "untied", json_integer(untied));
	json_array_append_new(json_object_get(x->pat, "signals"), det_signal(id, tied, first, last, ev));
	return rc;
}
