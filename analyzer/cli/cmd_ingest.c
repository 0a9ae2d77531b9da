/* cmd_ingest.c: `inquest ingest BUNDLE... --db FILE [--rules PATH]...`:
 * parse bundles into a database, nothing else. Also the ingest half of
 * `inquest analyze`, and the options the two share. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ingest.h"
#include "pipeline.h"

/* Adds the bundle paths to meta 'bundles' (a JSON array, no duplicates). */
static int note_bundles(struct iq_store *s, char **bundles, int n)
{
	sqlite3_stmt *q;
	json_t *a = NULL;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT value FROM meta WHERE key='bundles'", -1, &q,
			       NULL) == SQLITE_OK) {
		if (sqlite3_step(q) == SQLITE_ROW)
			a = json_loads((const char *)sqlite3_column_text(q, 0), 0, NULL);
		sqlite3_finalize(q);
	}
	if (!json_is_array(a)) {
		json_decref(a);
		a = json_array();
	}
	for (int i = 0; i < n; i++) {
		size_t j;
		json_t *v;
		int seen = 0;
		json_array_foreach(a, j, v)
			seen |= strcmp(json_string_value(v), bundles[i]) == 0;
		if (!seen)
			json_array_append_new(a, json_string(bundles[i]));
	}
	char *text = json_dumps(a, JSON_COMPACT);
	int rc = iq_store_meta(s, "bundles", text);
	free(text);
	json_decref(a);
	return rc;
}

int iq_ingest_run(struct iq_store *s, struct iq_ruleset *rs, char **bundles, int n,
		  const struct iq_ingest_opts *o)
{
	struct iq_ingest_stats st;
	memset(&st, 0, sizeof st);
	int rc = iq_store_meta(s, "inquest_version", IQ_VERSION);
	/* what a time written without a zone was taken in */
	if (!rc)
		rc = iq_store_meta(s, "default_zone", iq_time_default_zone());
	if (!rc)
		rc = note_bundles(s, bundles, n);
	/* the scope, for the incident window of the report */
	char v[32];
	if (!rc && o->scope.since != IQ_TIME_NONE) {
		snprintf(v, sizeof v, "%lld", (long long)o->scope.since);
		rc = iq_store_meta(s, "scope_since", v);
	}
	if (!rc && o->scope.until != IQ_TIME_NONE) {
		snprintf(v, sizeof v, "%lld", (long long)o->scope.until);
		rc = iq_store_meta(s, "scope_until", v);
	}
	if (!rc && !o->scoped)
		rc = iq_store_exec(s, "DELETE FROM meta WHERE key IN ('scope_since', 'scope_until')", NULL);
	/* --tz decides every zone-less time; detect/zones.c then leaves them */
	if (!rc && o->tz_given)
		rc = iq_store_meta(s, "tz_option", iq_time_default_zone());
	for (int i = 0; i < n && !rc; i++) {
		struct iq_diag d = {{0}};
		long known = st.files_known, already = st.files_already;
		rc = iq_ingest_bundle(s, rs, bundles[i], o, &st, &d);
		iq_progress_clear(o->progress);
		if (rc == IQ_ERR_INTR)
			break;
		if (rc) {
			iq_errorf("%s", d.msg);
			return iq_exit_of(rc);
		}
		if (st.files_known == known && st.files_already == already) {
			/* nothing in this bundle could be read: say so, naming it */
			char esc[1024];
			iq_escape_display(esc, sizeof esc, bundles[i], strlen(bundles[i]));
			iq_errorf("'%s': nothing to analyze: %s", esc,
				  st.last_why[0] ? st.last_why : "no files in it");
			return IQ_EXIT_INPUT;
		}
	}
	if (rc == IQ_ERR_INTR || (!rc && iq_interrupted())) {
		/* keep what is done; the file being read stays 'reading' */
		if (iq_store_commit(s)) {
			iq_errorf("database error");
			return IQ_EXIT_INTERNAL;
		}
		iq_errorf("interrupted; %ld files complete, rerun to finish", st.files_done);
		return IQ_EXIT_INTERRUPTED;
	}
	if (!rc) {
		double t0 = o->timing ? iq_wall_seconds() : 0;
		rc = iq_store_finish(s);
		if (o->timing)
			o->timing->index_s += iq_wall_seconds() - t0;
	}
	if (rc) {
		iq_errorf("database error");
		return IQ_EXIT_INTERNAL;
	}
	if (!o->quiet)
		fprintf(stderr, "inquest: %ld files read (%ld already in the database), %ld records, "
				"%ld signal matches, %lld bytes\n",
			st.files, st.files_already, st.records, st.matches, (long long)st.bytes);
	if (st.lost || st.cut) {
		/* never silenced: the findings rest on part of the bundle */
		iq_warnf("the bundle was not read whole: %ld damaged, truncated or unreadable, %ld cut at a"
			 " limit (the warnings above; the coverage lists them); the results cover what"
			 " could be read", st.lost, st.cut);
		return IQ_EXIT_INCOMPLETE;
	}
	return IQ_EXIT_OK;
}

/* The value of a time option, or IQ_TIME_NONE; 0 or IQ_EXIT_USAGE. */
static int time_arg(const struct iq_args *a, const char *name, int64_t *t)
{
	const char *v = iq_arg(a, name);
	if (v && iq_time_parse_arg(v, t)) {
		iq_usage_error(a->cmd, "%s takes an RFC 3339 time (2026-11-30T14:12:00Z) or a date, not '%s'",
			       name, v);
		return IQ_EXIT_USAGE;
	}
	return 0;
}

static int size_arg(const struct iq_args *a, const char *name, int64_t *out)
{
	const char *v = iq_arg(a, name);
	if (v && iq_cli_size(v, out)) {
		iq_usage_error(a->cmd, "%s takes a size in bytes greater than 0, with an optional unit"
			       " (K, M, G, T: 1024-based), like 512M or 8G; not '%s'", name, v);
		return IQ_EXIT_USAGE;
	}
	return 0;
}

/* A name option (--namespace, --node, --pod): not empty. */
static int name_arg(const struct iq_args *a, const char *name, const char **out)
{
	const char *v = iq_arg(a, name);
	if (v && !*v) {
		iq_usage_error(a->cmd, "%s needs a name, not ''", name);
		return IQ_EXIT_USAGE;
	}
	if (v)
		*out = v;
	return 0;
}

int iq_ingest_args(const struct iq_args *a, struct iq_ingest_opts *o)
{
	if (time_arg(a, "--since", &o->scope.since) || time_arg(a, "--until", &o->scope.until) ||
	    name_arg(a, "--namespace", &o->scope.ns) || name_arg(a, "--node", &o->scope.node) ||
	    name_arg(a, "--pod", &o->scope.pod) ||
	    size_arg(a, "--max-member-bytes", &o->max_member_bytes) ||
	    size_arg(a, "--max-bundle-bytes", &o->max_bundle_bytes))
		return IQ_EXIT_USAGE;
	o->scoped = o->scope.since != IQ_TIME_NONE || o->scope.until != IQ_TIME_NONE || o->scope.ns ||
		    o->scope.node || o->scope.pod;
	const char *tz = iq_arg(a, "--tz");
	if (tz) {
		struct iq_diag d = {{0}};
		if (!*tz) {
			iq_usage_error(a->cmd, "--tz needs a zone: UTC, an offset such as +03:00, or a name"
				       " such as Europe/Istanbul");
			return IQ_EXIT_USAGE;
		}
		if (iq_time_set_default_zone(tz, &d)) {
			iq_usage_error(a->cmd, "--tz: %s", d.msg);
			return IQ_EXIT_USAGE;
		}
		o->tz_given = 1;
	}
	const char *j = iq_arg(a, "--jobs");
	if (j) {
		char *end = NULL;
		long v = strtol(j, &end, 10);
		if (!*j || *end || v < 1 || v > 64) {
			iq_usage_error(a->cmd, "--jobs takes a number of parser threads from 1 to 64, not '%s'",
				       j);
			return IQ_EXIT_USAGE;
		}
		o->jobs = (int)v;
	}
	o->quiet = iq_arg_has(a, "--quiet");
	o->rules = iq_arg_all(a, "--rules", &o->nrules);
	return 0;
}

int iq_cmd_ingest(const struct iq_args *a)
{
	const char *db = iq_arg(a, "--db");
	int rc, stats = iq_arg_has(a, "--stats");
	struct iq_ingest_opts io;
	struct iq_progress pg;
	struct iq_stage_times times = {0};
	double wall0 = iq_wall_seconds();
	iq_ingest_opts_init(&io);
	if (iq_ingest_args(a, &io))
		return IQ_EXIT_USAGE;
	iq_progress_init(&pg, io.quiet);
	io.progress = &pg;
	struct iq_ruleset rs;
	int mrc = iq_output_file(a, "--db", "the database file to fill", db);
	if (mrc)
		return mrc;
	iq_rules_init(&rs);
	if (stats)
		io.timing = &times;
	rc = iq_rules_load_checked(&rs, io.rules, io.nrules);
	if (!rc) {
		struct iq_store *s;
		struct iq_diag d = {{0}};
		/* A new database is built beside its name without a journal
		 * (written once, not twice through the WAL) and renamed when
		 * complete: a killed run leaves no half database behind. */
		char tmp[4200];
		int fresh = access(db, F_OK) != 0 && errno == ENOENT;
		snprintf(tmp, sizeof tmp, "%s.tmp", db);
		if (fresh)
			unlink(tmp);
		int orc = iq_store_open(fresh ? tmp : db, 0, &s, &d);
		if (!orc && fresh && iq_store_scratch(s, &d)) {
			iq_store_close(s);
			orc = IQ_ERR_DB;
		}
		if (orc) {
			iq_errorf("%s", d.msg);
			rc = IQ_EXIT_INPUT;
		} else {
			iq_signals_install();
			rc = iq_ingest_run(s, &rs, a->pos, a->npos, &io);
			if (iq_store_close(s) == 0 && fresh && rename(tmp, db) != 0) {
				iq_errorf("cannot rename '%s' to '%s': %s", tmp, db, strerror(errno));
				rc = IQ_EXIT_INPUT;
			}
			if (stats)
				iq_print_stage_times(&times, iq_wall_seconds() - wall0);
		}
	}
	iq_rules_release(&rs);
	return rc;
}
