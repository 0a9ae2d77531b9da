/* md.c: postmortem.md, the document an SRE pastes into the incident doc.
 * Everything in it comes from the findings document and the database; log
 * text is escaped so that it can never break the Markdown around it. */
#include <string.h>

#include "report.h"

/* Writes log text for a Markdown table cell: one line, at most max bytes,
 * control characters shown as escapes, Markdown and HTML specials
 * neutralised. */
static void md_cell(FILE *out, const char *s, size_t max)
{
	char esc[2048];
	size_t n = strlen(s);
	const char *nl = strchr(s, '\n');
	if (nl)
		n = (size_t)(nl - s);
	int cut = n > max;
	iq_escape_display(esc, sizeof esc, s, cut ? max : n);
	for (const char *p = esc; *p; p++) {
		switch (*p) {
		case '|': fputs("\\|", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '`': case '*': case '_': case '[': case ']': case '#': case '~':
			fputc('\\', out);
			fputc(*p, out);
			break;
		case '\\': fputs("\\\\", out); break;
		default: fputc(*p, out);
		}
	}
	if (cut || nl)
		fputs(" …", out);
}

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static void evidence_ref(FILE *out, json_t *e)
{
	fputc('`', out);
	char esc[1024];
	const char *f = str(e, "file");
	iq_escape_display(esc, sizeof esc, f, strlen(f));
	for (char *p = esc; *p; p++)
		if (*p == '`')
			*p = '\'';
	fprintf(out, "%s:%lld`", esc, (long long)json_integer_value(json_object_get(e, "line")));
}

static void section_summary(FILE *out, json_t *pat)
{
	fprintf(out, "## Summary\n\n**Verdict: `%s`** (confidence %.2f). %s\n\n", str(pat, "verdict"),
		json_real_value(json_object_get(pat, "confidence")), str(pat, "summary"));
}

static void section_signals(FILE *out, json_t *pat)
{
	fprintf(out, "## Signals\n\n| signal | present | count | first | last | first evidence |\n"
		     "| --- | --- | ---: | --- | --- | --- |\n");
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(pat, "signals"), i, s) {
		fprintf(out, "| `%s` | %s | %lld | %s | %s | ", str(s, "id"),
			json_is_true(json_object_get(s, "present")) ? "yes" : "no",
			(long long)json_integer_value(json_object_get(s, "count")),
			*str(s, "first") ? str(s, "first") : "–", *str(s, "last") ? str(s, "last") : "–");
		json_t *e = json_array_get(json_object_get(s, "evidence"), 0);
		if (e)
			evidence_ref(out, e);
		else
			fputs("–", out);
		fputs(" |\n", out);
	}
	fputc('\n', out);
	json_t *ooms = json_object_get(pat, "oom_events");
	if (json_array_size(ooms)) {
		fprintf(out, "### CUDA out-of-memory events\n\n| time (UTC) | node | pod | tried | free | "
			     "capacity | evidence |\n| --- | --- | --- | ---: | ---: | ---: | --- |\n");
		json_t *o;
		json_array_foreach(ooms, i, o) {
			fprintf(out, "| %s | ", *str(o, "time") ? str(o, "time") : "unknown");
			md_cell(out, *str(o, "node") ? str(o, "node") : "?", 64);
			fputs(" | ", out);
			md_cell(out, *str(o, "pod") ? str(o, "pod") : "?", 64);
			const char *keys[] = {"tried_bytes", "free_bytes", "capacity_bytes"};
			for (int k = 0; k < 3; k++) {
				json_t *v = json_object_get(o, keys[k]);
				if (json_is_integer(v))
					fprintf(out, " | %.2f GiB", (double)json_integer_value(v) / 1073741824.0);
				else
					fputs(" | –", out);
			}
			fputs(" | ", out);
			evidence_ref(out, json_array_get(json_object_get(o, "evidence"), 0));
			fputs(" |\n", out);
		}
		fputc('\n', out);
	}
}

static void section_timeline(FILE *out, json_t *doc)
{
	json_t *tl = json_object_get(doc, "timeline");
	fprintf(out, "## Timeline\n\nRecords that matched a signal, merged across sources, in UTC.\n\n");
	if (!json_array_size(tl)) {
		fputs("_No record matched a signal._\n\n", out);
		return;
	}
	fputs("| time (UTC) | node | pod | signals | evidence | text |\n| --- | --- | --- | --- | --- | --- |\n", out);
	size_t i;
	json_t *e;
	json_array_foreach(tl, i, e) {
		fprintf(out, "| %s | ", *str(e, "time") ? str(e, "time") : "unknown");
		md_cell(out, str(e, "node"), 64);
		fputs(" | ", out);
		md_cell(out, str(e, "pod"), 64);
		fputs(" | ", out);
		size_t j;
		json_t *t;
		json_array_foreach(json_object_get(e, "tags"), j, t)
			fprintf(out, "%s`%s`", j ? ", " : "", json_string_value(t));
		fputs(" | ", out);
		evidence_ref(out, e);
		fputs(" | ", out);
		md_cell(out, str(e, "text"), 200);
		fputs(" |\n", out);
	}
	if (json_array_size(tl) >= IQ_MAX_TIMELINE)
		fprintf(out, "\n_Only the first %d rows are shown; `inquest query` the `timeline` view for all._\n",
			IQ_MAX_TIMELINE);
	fputc('\n', out);
}

static void section_coverage(FILE *out, json_t *doc, struct iq_store *s)
{
	json_t *b = json_object_get(doc, "bundle");
	fprintf(out, "## Coverage\n\n%lld files, %lld bytes, %lld records; %lld lines skipped.\n\n",
		(long long)json_integer_value(json_object_get(b, "files")),
		(long long)json_integer_value(json_object_get(b, "bytes")),
		(long long)json_integer_value(json_object_get(b, "records")),
		(long long)json_integer_value(json_object_get(b, "unparsed_lines")));
	sqlite3_stmt *q;
	fputs("| format | files | lines read | parsed | skipped | records |\n| --- | ---: | ---: | ---: | ---: | ---: |\n", out);
	if (sqlite3_prepare_v2(iq_store_db(s),
			       "SELECT coalesce(format, '(' || status || ')'), count(*), sum(lines_read),"
			       " sum(lines_parsed), sum(lines_skipped), sum(records) FROM files"
			       " GROUP BY 1 ORDER BY 1", -1, &q, NULL) == SQLITE_OK) {
		while (sqlite3_step(q) == SQLITE_ROW)
			fprintf(out, "| %s | %lld | %lld | %lld | %lld | %lld |\n", sqlite3_column_text(q, 0),
				sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2),
				sqlite3_column_int64(q, 3), sqlite3_column_int64(q, 4),
				sqlite3_column_int64(q, 5));
		sqlite3_finalize(q);
	}
	fputc('\n', out);
	if (sqlite3_prepare_v2(iq_store_db(s),
			       "SELECT f.path, k.reason, k.lines, k.first_line, k.example FROM skips k"
			       " JOIN files f ON f.id = k.file_id ORDER BY k.lines DESC, f.path LIMIT 100",
			       -1, &q, NULL) == SQLITE_OK) {
		int any = 0;
		while (sqlite3_step(q) == SQLITE_ROW) {
			if (!any)
				fputs("### Lines skipped, by reason\n\n| file | reason | lines | first line | example |\n"
				      "| --- | --- | ---: | ---: | --- |\n", out);
			any = 1;
			fputs("| ", out);
			md_cell(out, (const char *)sqlite3_column_text(q, 0), 300);
			fprintf(out, " | %s | %lld | %lld | ", sqlite3_column_text(q, 1),
				sqlite3_column_int64(q, 2), sqlite3_column_int64(q, 3));
			const char *ex = (const char *)sqlite3_column_text(q, 4);
			md_cell(out, ex ? ex : "", 120);
			fputs(" |\n", out);
		}
		if (any)
			fputc('\n', out);
		sqlite3_finalize(q);
	}
	json_t *unk = json_object_get(b, "unknown_files");
	if (json_array_size(unk)) {
		fputs("### Files not recognised\n\n", out);
		size_t i;
		json_t *u;
		json_array_foreach(unk, i, u) {
			fputs("- ", out);
			md_cell(out, json_string_value(u), 300);
			fputc('\n', out);
		}
		fputc('\n', out);
	}
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT path, message FROM problems ORDER BY id", -1, &q,
			       NULL) == SQLITE_OK) {
		int any = 0;
		while (sqlite3_step(q) == SQLITE_ROW) {
			if (!any)
				fputs("### Problems reading the bundle\n\n", out);
			any = 1;
			fputs("- ", out);
			md_cell(out, (const char *)sqlite3_column_text(q, 0), 300);
			fputs(": ", out);
			md_cell(out, (const char *)sqlite3_column_text(q, 1), 300);
			fputc('\n', out);
		}
		if (any)
			fputc('\n', out);
		sqlite3_finalize(q);
	}
	if (sqlite3_prepare_v2(iq_store_db(s),
			       "SELECT ts_how, count(*) FROM records WHERE ts_how NOT IN ('explicit')"
			       " GROUP BY ts_how ORDER BY ts_how", -1, &q, NULL) == SQLITE_OK) {
		int any = 0;
		while (sqlite3_step(q) == SQLITE_ROW) {
			if (!any)
				fputs("### Times not written in full in the logs\n\n", out);
			any = 1;
			const char *how = (const char *)sqlite3_column_text(q, 0);
			const char *what = strcmp(how, "assumed_utc") == 0 ? "had no time zone: taken as UTC"
				: strcmp(how, "year_inferred") == 0 ? "had no year: taken from the file's date in the bundle"
				: strcmp(how, "boot_relative") == 0 ? "are seconds since boot: no boot time was found, so they are not on the timeline"
				: strcmp(how, "none") == 0 ? "have no time at all"
				: "took the time of the record before them";
			fprintf(out, "- %lld records %s (`%s`).\n", sqlite3_column_int64(q, 1), what, how);
		}
		if (any)
			fputc('\n', out);
		sqlite3_finalize(q);
	}
}

int iq_render_md(json_t *doc, struct iq_store *s, const char *lang, FILE *out)
{
	IQ_UNUSED(lang);
	json_t *pats = json_object_get(doc, "patterns");
	json_t *main = NULL;
	size_t i;
	json_t *p;
	json_array_foreach(pats, i, p)
		if (strcmp(str(p, "id"), "gpu-oom-cascade") == 0)
			main = p;
	if (!main)
		main = json_array_get(pats, 0);
	const char *first = NULL;
	json_t *tl = json_object_get(doc, "timeline");
	if (json_array_size(tl))
		first = str(json_array_get(tl, 0), "time");
	fprintf(out, "# Postmortem: %s\n\n", main ? str(main, "title") : "incident");
	fprintf(out, "- **Date:** %.10s\n", first && *first ? first : "unknown");
	fprintf(out, "- **Status:** draft, generated by inquest %s from ", IQ_VERSION);
	json_t *paths = json_object_get(json_object_get(doc, "bundle"), "paths");
	json_array_foreach(paths, i, p) {
		fputs(i ? ", " : "", out);
		md_cell(out, json_string_value(p), 200);
	}
	fputs("\n- **Times:** UTC\n\n", out);
	if (main) {
		section_summary(out, main);
		section_signals(out, main);
	}
	section_timeline(out, doc);
	section_coverage(out, doc, s);
	fputs("## Reproduce\n\nEvery figure above comes from `inquest.db`, for example:\n\n"
	      "```sh\n# every CUDA out-of-memory line, in time order\n"
	      "inquest query --db inquest.db \"SELECT time, node, pod, file, line FROM timeline"
	      " WHERE tags LIKE '%cuda-oom%' ORDER BY ts\"\n```\n", out);
	return 0;
}
