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
#include "../store/store.h"
#include "cli.h"

struct filt {
	const char *since, *until, *ns, *node, *pod, *tag, *format, *window;
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

static int parse_args(int argc, char **argv, const char **db, struct filt *f)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--all")) {
			f->all = 1;
			continue;
		}
		if (!v)
			return -1;
		if (!strcmp(a, "--db"))
			*db = v;
		else if (!strcmp(a, "--since"))
			f->since = v;
		else if (!strcmp(a, "--until"))
			f->until = v;
		else if (!strcmp(a, "--namespace"))
			f->ns = v;
		else if (!strcmp(a, "--node"))
			f->node = v;
		else if (!strcmp(a, "--pod"))
			f->pod = v;
		else if (!strcmp(a, "--tag"))
			f->tag = v;
		else if (!strcmp(a, "--format"))
			f->format = v;
		else if (!strcmp(a, "--window"))
			f->window = v;
		else if (!strcmp(a, "--limit"))
			f->limit = strtol(v, NULL, 10);
		else
			return -1;
		i++;
	}
	return *db ? 0 : -1;
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
	if (*until == IQ_TIME_NONE)
		*until = b;
	return 0;
}

int iq_cmd_timeline(int argc, char **argv)
{
	const char *db = NULL;
	struct filt f = {.format = "text", .limit = 10000};
	if (parse_args(argc, argv, &db, &f) != 0 ||
	    (strcmp(f.format, "text") && strcmp(f.format, "md") && strcmp(f.format, "json") &&
	     strcmp(f.format, "csv")) || (f.window && strcmp(f.window, "incident"))) {
		iq_usage_of("timeline");
		return IQ_EXIT_USAGE;
	}
	int64_t since = IQ_TIME_NONE, until = IQ_TIME_NONE;
	if ((f.since && iq_time_parse_arg(f.since, &since)) || (f.until && iq_time_parse_arg(f.until, &until))) {
		iq_errorf("timeline: --since/--until take RFC 3339 times (2026-11-30T14:12:00Z) or dates");
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
