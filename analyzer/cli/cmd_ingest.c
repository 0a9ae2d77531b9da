/* cmd_ingest.c: `inquest ingest BUNDLE... --db FILE [--rules PATH]...`:
 * parse bundles into a database, nothing else. Also the ingest half of
 * `inquest analyze`. */
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
	return IQ_EXIT_OK;
}

int iq_ingest_option(const char *cmd, int argc, char **argv, int *i,
		     struct iq_ingest_opts *o, int *bad)
{
	const char *a = argv[*i];
	int64_t *dst;
	const char **sdst = NULL;
	if (strcmp(a, "--since") == 0 || strcmp(a, "--until") == 0) {
		int64_t *t = a[2] == 's' ? &o->scope.since : &o->scope.until;
		if (*i + 1 >= argc || iq_time_parse_arg(argv[*i + 1], t)) {
			iq_errorf("%s: %s takes an RFC 3339 time (2026-11-30T14:12:00Z) or a date%s%s%s", cmd,
				  a, *i + 1 < argc ? ", not '" : "", *i + 1 < argc ? argv[*i + 1] : "",
				  *i + 1 < argc ? "'" : "");
			*bad = 1;
		} else {
			o->scoped = 1;
		}
		if (*i + 1 < argc)
			++*i;
		return 1;
	}
	if (strcmp(a, "--tz") == 0) {
		struct iq_diag d = {{0}};
		if (*i + 1 >= argc) {
			iq_errorf("%s: --tz needs a zone: UTC, an offset such as +03:00, or a name such as"
				  " Europe/Istanbul", cmd);
			*bad = 1;
		} else if (iq_time_set_default_zone(argv[++*i], &d)) {
			iq_errorf("%s: --tz: %s", cmd, d.msg);
			*bad = 1;
		} else {
			o->tz_given = 1;
		}
		return 1;
	}
	if (strcmp(a, "--namespace") == 0 || strcmp(a, "-n") == 0)
		sdst = &o->scope.ns;
	else if (strcmp(a, "--node") == 0)
		sdst = &o->scope.node;
	else if (strcmp(a, "--pod") == 0)
		sdst = &o->scope.pod;
	if (sdst) {
		if (*i + 1 >= argc || !argv[*i + 1][0]) {
			iq_errorf("%s: %s needs a name", cmd, a);
			*bad = 1;
			return 1;
		}
		*sdst = argv[++*i];
		o->scoped = 1;
		return 1;
	}
	if (strcmp(a, "--jobs") == 0 || strcmp(a, "-j") == 0) {
		char *end = NULL;
		long v = *i + 1 < argc ? strtol(argv[*i + 1], &end, 10) : 0;
		if (*i + 1 >= argc || !end || *end || v < 1 || v > 64) {
			iq_errorf("%s: %s takes a number of parser threads from 1 to 64%s%s%s", cmd, a,
				  *i + 1 < argc ? ", not '" : "", *i + 1 < argc ? argv[*i + 1] : "",
				  *i + 1 < argc ? "'" : "");
			*bad = 1;
			if (*i + 1 < argc)
				++*i;
			return 1;
		}
		o->jobs = (int)v;
		++*i;
		return 1;
	}
	if (strcmp(a, "--max-member-bytes") == 0)
		dst = &o->max_member_bytes;
	else if (strcmp(a, "--max-bundle-bytes") == 0)
		dst = &o->max_bundle_bytes;
	else
		return 0;
	if (*i + 1 >= argc) {
		iq_errorf("%s: %s needs a size, like 512M or 8G", cmd, a);
		*bad = 1;
		return 1;
	}
	if (iq_size_option(cmd, a, argv[++*i], dst))
		*bad = 1;
	return 1;
}

int iq_cmd_ingest(int argc, char **argv)
{
	const char *db = NULL;
	char **bundles = iq_xcalloc((size_t)argc, sizeof *bundles);
	char **rules = iq_xcalloc((size_t)argc, sizeof *rules);
	int nb = 0, nr = 0, rc, bad = 0, stats = 0;
	struct iq_ingest_opts io = {0};
	struct iq_stage_times times = {0};
	double wall0 = iq_wall_seconds();
	iq_ingest_opts_init(&io);
	for (int i = 1; i < argc; i++) {
		if (iq_ingest_option("ingest", argc, argv, &i, &io, &bad))
			continue;
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			db = argv[++i];
		else if (strcmp(argv[i], "--rules") == 0 && i + 1 < argc)
			rules[nr++] = argv[++i];
		else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0)
			io.quiet = 1;
		else if (strcmp(argv[i], "--stats") == 0)
			stats = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
			iq_errorf("ingest: unknown option '%s'", argv[i]);
			bad = 1;
			break;
		} else
			bundles[nb++] = argv[i];
	}
	if (bad || !db || nb == 0) {
		iq_usage_of("ingest");
		rc = IQ_EXIT_USAGE;
		goto out;
	}
	struct iq_ruleset rs;
	iq_rules_init(&rs);
	io.rules = rules;
	io.nrules = nr;
	if (stats)
		io.timing = &times;
	rc = iq_load_rules(&rs, rules, nr);
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
			rc = iq_ingest_run(s, &rs, bundles, nb, &io);
			if (iq_store_close(s) == 0 && fresh && rename(tmp, db) != 0) {
				iq_errorf("cannot rename '%s' to '%s': %s", tmp, db, strerror(errno));
				rc = IQ_EXIT_INPUT;
			}
			if (stats)
				iq_print_stage_times(&times, iq_wall_seconds() - wall0);
		}
	}
	iq_rules_release(&rs);
out:
	free(bundles);
	free(rules);
	return rc;
}
