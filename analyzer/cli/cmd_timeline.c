/* cmd_timeline.c: `inquest timeline --db FILE [--since T] [--until T]
 * [--namespace NS] [--node N] [--pod P] [--tag SIGNAL] [--all]
 * [--window incident] [--format text|md|json|csv] [--limit N]`: the merged
 * timeline from the database, in time order. By default only records that
 * matched a signal; --all lists every record in the window. --window
 * incident bounds it by the incident window of the findings (what
 * --since/--until do not set themselves). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../report/report.h"
#include "../rules/rules.h"
#include "../store/store.h"
#include "cli.h"

struct filt {
	const char *ns, *node, *pod, *tag, *format, *window;
	int all;
	long limit;
};

static void csv_field(const char *s)
{
	if (!s)
		return;
	if (strpbrk(s, ",\"\n\r") == NULL) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

/* A Markdown table cell: inline text that renders as itself (code when
 * set: a code span, for a file:line to copy). */
static void md_field(const char *s, int code)
{
	struct iq_buf b;
	iq_buf_init(&b);
	size_t n = s ? strlen(s) : 0;
	int rc = code ? iq_md_code(&b, s ? s : "", n, 2000, 1) : iq_md_escape(&b, s ? s : "", n, 400);
	if (rc == 0 && b.p)
		fputs(b.p, stdout);
	iq_buf_release(&b);
}

static int parse_limit(const struct iq_args *a, long *limit)
{
	const char *v = iq_arg(a, "--limit");
	char *end = NULL;
	if (!v)
		return 0;
	*limit = strtol(v, &end, 10);
	if (!*v || *end || *limit < 1) {
		iq_usage_error(a->cmd, "--limit takes a number of records greater than 0, not '%s'", v);
		return IQ_EXIT_USAGE;
	}
	return 0;
}

/* The signal ids a --tag may name: those the database holds matches of,
 * and those of the packs built in (a signal that matched nothing is
 * known, its timeline empty). Adds them to ids (caller frees each). */
static void known_signals(struct iq_store *s, char ***ids, size_t *n)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT DISTINCT signal FROM signal_matches", -1, &q, NULL) ==
	    SQLITE_OK) {
		while (sqlite3_step(q) == SQLITE_ROW) {
			*ids = iq_xrealloc(*ids, (*n + 1) * sizeof **ids);
			(*ids)[(*n)++] = iq_xstrdup((const char *)sqlite3_column_text(q, 0));
		}
		sqlite3_finalize(q);
	}
	struct iq_ruleset rs;
	struct iq_diag d = {{0}};
	iq_rules_init(&rs);
	if (iq_rules_load_builtin(&rs, &d) == 0)
		for (size_t i = 0; i < rs.nshared + rs.npacks; i++) {
			const struct iq_pack *p = i < rs.nshared ? rs.shared[i] : rs.packs[i - rs.nshared];
			for (int sec = 0; sec < IQ_SEC_COUNT; sec++)
				for (size_t j = 0; j < iq_pack_section_count(p, (enum iq_section)sec); j++) {
					*ids = iq_xrealloc(*ids, (*n + 1) * sizeof **ids);
					(*ids)[(*n)++] = iq_xstrdup(
						iq_signal_id(iq_pack_section_signal(p, (enum iq_section)sec, j)));
				}
		}
	iq_rules_release(&rs);
}

/* An unknown --tag is a usage error, with the closest known signal;
 * a known one that matched nothing is said on stderr. 0 or the status. */
static int check_tag(const struct iq_args *a, struct iq_store *s, const char *tag)
{
	char **ids = NULL;
	size_t n = 0, in_db = 0;
	int known = 0, rc = 0;
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT count(*) FROM signal_matches WHERE signal = ?1", -1, &q,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, tag, -1, SQLITE_STATIC);
		if (sqlite3_step(q) == SQLITE_ROW)
			in_db = (size_t)sqlite3_column_int64(q, 0);
		sqlite3_finalize(q);
	}
	known_signals(s, &ids, &n);
	for (size_t i = 0; i < n; i++)
		known |= strcmp(ids[i], tag) == 0;
	if (!known) {
		const char *sug = iq_suggest(tag, (const char *const *)ids, n);
		iq_usage_error(a->cmd, "--tag: no signal '%s'%s%s%s (inquest rules list shows them)", tag,
			       sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
		rc = IQ_EXIT_USAGE;
	} else if (!in_db) {
		iq_errorf("timeline: no record of this database matched signal '%s'", tag);
	}
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	return rc;
}

/* Narrows [*since, *until] (IQ_TIME_NONE: not given) to the incident
 * window of the findings stored in s; 0, or -1 after an error message. */
static int window_bounds(struct iq_store *s, int64_t *since, int64_t *until)
{
	sqlite3_stmt *q;
	json_t *pats = json_array();
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT json FROM findings ORDER BY pack", -1, &q,
			       NULL) == SQLITE_OK) {
		while (sqlite3_step(q) == SQLITE_ROW) {
			json_t *p = json_loads((const char *)sqlite3_column_text(q, 0), 0, NULL);
			if (p)
				json_array_append_new(pats, p);
		}
		sqlite3_finalize(q);
	}
	if (!json_array_size(pats)) {
		json_decref(pats);
		iq_errorf("timeline: --window incident needs findings: run 'inquest detect' on the "
			  "database first");
		return -1;
	}
	json_t *w = iq_incident_window(s, pats);
	int64_t a = IQ_TIME_NONE, b = IQ_TIME_NONE;
	const char *ws = json_string_value(json_object_get(w, "start"));
	const char *we = json_string_value(json_object_get(w, "end"));
	int ok = ws && we && !iq_time_parse_arg(ws, &a) && !iq_time_parse_arg(we, &b);
	if (!ok)
		iq_errorf("timeline: no incident window: %s", json_string_value(json_object_get(w, "basis")));
	json_decref(w);
	json_decref(pats);
	if (!ok)
		return -1;
	if (*since == IQ_TIME_NONE)
		*since = a;
	/* the window's times are written to the millisecond: its end covers
	 * the whole of its last millisecond, so that the record it was clipped
	 * to (14:32:02.361441 for an end of 14:32:02.361) is inside */
	if (*until == IQ_TIME_NONE)
		*until = b + 999999;
	return 0;
}

int iq_cmd_timeline(const struct iq_args *a)
{
	const char *db = iq_arg(a, "--db");
	struct filt f = {.format = "text", .limit = 10000};
	f.ns = iq_arg(a, "--namespace");
	f.node = iq_arg(a, "--node");
	f.pod = iq_arg(a, "--pod");
	f.tag = iq_arg(a, "--tag");
	f.window = iq_arg(a, "--window");
	f.all = iq_arg_has(a, "--all");
	if (iq_arg(a, "--format"))
		f.format = iq_arg(a, "--format");
	if (parse_limit(a, &f.limit))
		return IQ_EXIT_USAGE;
	int64_t since = IQ_TIME_NONE, until = IQ_TIME_NONE;
	const char *ts[2] = {iq_arg(a, "--since"), iq_arg(a, "--until")};
	int64_t *tv[2] = {&since, &until};
	for (int i = 0; i < 2; i++)
		if (ts[i] && iq_time_parse_arg(ts[i], tv[i])) {
			iq_usage_error(a->cmd, "%s takes an RFC 3339 time (2026-11-30T14:12:00Z) or a date,"
				       " not '%s'", i ? "--until" : "--since", ts[i]);
			return IQ_EXIT_USAGE;
		}
	struct iq_store *s;
	struct iq_diag d = {{0}};
	if (iq_store_open(db, 1, &s, &d)) {
		iq_errorf("%s", d.msg);
		return IQ_EXIT_INPUT;
	}
	if (f.window && window_bounds(s, &since, &until)) {
		iq_store_close(s);
		return IQ_EXIT_INPUT;
	}
	int trc = f.tag ? check_tag(a, s, f.tag) : 0;
	if (trc) {
		iq_store_close(s);
		return trc;
	}
	sqlite3_stmt *q;
	const char *sql =
		"SELECT time, node, pod, source, kind, tags, file, line, text FROM timeline"
		" WHERE (?1 IS NULL OR ts >= ?1) AND (?2 IS NULL OR ts <= ?2)"
		" AND (?3 IS NULL OR namespace = ?3) AND (?4 IS NULL OR node = ?4) AND (?5 IS NULL OR pod = ?5)"
		" AND (?6 IS NULL OR record_id IN (SELECT record_id FROM signal_matches WHERE signal = ?6))"
		" AND (?7 OR record_id IN (SELECT record_id FROM signal_matches))"
		" ORDER BY ts IS NULL, ts, file, line LIMIT ?8";
	if (sqlite3_prepare_v2(iq_store_db(s), sql, -1, &q, NULL) != SQLITE_OK) {
		iq_errorf("timeline: %s", sqlite3_errmsg(iq_store_db(s)));
		iq_store_close(s);
		return IQ_EXIT_INTERNAL;
	}
	if (since != IQ_TIME_NONE)
		sqlite3_bind_int64(q, 1, since);
	if (until != IQ_TIME_NONE)
		sqlite3_bind_int64(q, 2, until);
	const char *strs[] = {f.ns, f.node, f.pod, f.tag};
	for (int i = 0; i < 4; i++)
		if (strs[i])
			sqlite3_bind_text(q, 3 + i, strs[i], -1, SQLITE_STATIC);
	sqlite3_bind_int(q, 7, f.all);
	sqlite3_bind_int64(q, 8, f.limit > 0 ? f.limit : 10000);
	static const char *const cols[] = {"time", "node", "pod", "source", "kind", "tags", "file", "line", "text"};
	json_t *rows = strcmp(f.format, "json") == 0 ? json_array() : NULL;
	if (!strcmp(f.format, "csv"))
		puts("time,node,pod,source,kind,tags,file,line,text");
	else if (!strcmp(f.format, "md"))
		puts("| time (UTC) | node | pod | signals | evidence | text |\n| --- | --- | --- | --- | --- | --- |");
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *v[9];
		for (int c = 0; c < 9; c++)
			v[c] = (const char *)sqlite3_column_text(q, c);
		if (rows) {
			json_t *o = json_object();
			for (int c = 0; c < 9; c++) {
				json_t *j = c == 7 ? json_integer(sqlite3_column_int64(q, c))
					: v[c] ? json_string(v[c]) : json_null();
				json_object_set_new(o, cols[c], j ? j : json_string("(invalid UTF-8)"));
			}
			json_array_append_new(rows, o);
		} else if (!strcmp(f.format, "csv")) {
			for (int c = 0; c < 9; c++) {
				if (c)
					putchar(',');
				csv_field(v[c]);
			}
			putchar('\n');
		} else if (!strcmp(f.format, "md")) {
			printf("| %s | ", v[0] ? v[0] : "unknown");
			md_field(v[1], 0);
			fputs(" | ", stdout);
			md_field(v[2], 0);
			fputs(" | ", stdout);
			md_field(v[5], 0);
			fputs(" | ", stdout);
			char ref[4200];
			snprintf(ref, sizeof ref, "%s:%s", v[6] ? v[6] : "", v[7] ? v[7] : "");
			md_field(ref, 1);
			fputs(" | ", stdout);
			md_field(v[8], 0);
			puts(" |");
		} else {
			/* everything from the bundle escaped for the terminal */
			char esc[4096], node[256], pod[256], file[4096];
			const char *t = v[8] ? v[8] : "";
			iq_escape_display(esc, sizeof esc, t, strlen(t) > 300 ? 300 : strlen(t));
			iq_escape_display(node, sizeof node, v[1] ? v[1] : "-", strlen(v[1] ? v[1] : "-"));
			iq_escape_display(pod, sizeof pod, v[2] ? v[2] : "-", strlen(v[2] ? v[2] : "-"));
			iq_escape_display(file, sizeof file, v[6] ? v[6] : "", strlen(v[6] ? v[6] : ""));
			printf("%s  %-14s %-20s %-18s %s:%s\n    %s\n", v[0] ? v[0] : "(no time)               ",
			       node, pod, v[5] ? v[5] : "", file, v[7], esc);
		}
	}
	sqlite3_finalize(q);
	if (rows) {
		json_dumpf(rows, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(rows);
	}
	iq_store_close(s);
	return IQ_EXIT_OK;
}
