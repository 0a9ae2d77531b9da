/* refs.c: the evidence the postmortem cites. Each cited line gets a short
 * reference, E1, E2, ... in the order the document first cites it; the
 * body prints [E12] linked to one table at the end that holds the path
 * inside the bundle, the line, the time, the verbatim text and the
 * `inquest show` command that prints it with its context. */
#include <stdlib.h>
#include <string.h>

#include "report_int.h"

void iq_refs_init(struct iq_refs *rs)
{
	memset(rs, 0, sizeof *rs);
}

void iq_refs_release(struct iq_refs *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		free(rs->r[i].file);
		free(rs->r[i].time);
		free(rs->r[i].text);
		free(rs->r[i].summary);
	}
	free(rs->r);
	for (size_t i = 0; i < rs->nprefix; i++)
		free(rs->prefix[i]);
	free(rs->prefix);
	memset(rs, 0, sizeof *rs);
}

size_t iq_refs_add(struct iq_refs *rs, const char *file, long long line, long long nlines,
		   const char *time, const char *text, const char *summary)
{
	if (!file || !*file)
		return 0;
	for (size_t i = 0; i < rs->n; i++) {
		struct iq_ref *r = &rs->r[i];
		if (r->line == line && strcmp(r->file, file) == 0) {
			/* a later citation may know more of the same line */
			if (!*r->text && text && *text) {
				free(r->text);
				r->text = iq_xstrdup(text);
			}
			if (!*r->time && time && *time) {
				free(r->time);
				r->time = iq_xstrdup(time);
			}
			return i + 1;
		}
	}
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 64;
		rs->r = iq_xrealloc(rs->r, rs->cap * sizeof *rs->r);
	}
	struct iq_ref *r = &rs->r[rs->n++];
	r->file = iq_xstrdup(file);
	r->line = line;
	r->nlines = nlines > 1 ? nlines : 1;
	r->time = iq_xstrdup(time ? time : "");
	r->text = iq_xstrdup(text ? text : "");
	r->summary = summary && *summary ? iq_xstrdup(summary) : NULL;
	return rs->n;
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

size_t iq_refs_add_json(struct iq_refs *rs, json_t *ev)
{
	json_t *nl = json_object_get(ev, "nlines");
	return iq_refs_add(rs, jstr(ev, "file"), (long long)json_integer_value(json_object_get(ev, "line")),
			   json_is_integer(nl) ? (long long)json_integer_value(nl) : 1, jstr(ev, "time"),
			   jstr(ev, "text"), jstr(ev, "summary"));
}

void iq_refs_cite(FILE *out, size_t n)
{
	if (n)
		fprintf(out, "[E%zu](#e%zu)", n, n);
	else
		fputs("–", out);
}

void iq_refs_set_bundles(struct iq_refs *rs, json_t *paths)
{
	size_t i;
	json_t *p;
	json_array_foreach(paths, i, p) {
		const char *s = json_string_value(p);
		if (!s)
			continue;
		rs->prefix = iq_xrealloc(rs->prefix, (rs->nprefix + 1) * sizeof *rs->prefix);
		rs->prefix[rs->nprefix++] = iq_base_name(s);
	}
}

char *iq_base_name(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	const char *b = path + n;
	while (b > path && b[-1] != '/')
		b--;
	char *out = iq_xmalloc((size_t)(path + n - b) + 1);
	memcpy(out, b, (size_t)(path + n - b));
	out[path + n - b] = '\0';
	return out;
}

const char *iq_refs_rel(const struct iq_refs *rs, const char *file)
{
	/* with one bundle its name says nothing: the path inside it does */
	if (!file)
		return "";
	if (rs->nprefix != 1)
		return file;
	size_t n = strlen(rs->prefix[0]);
	if (strncmp(file, rs->prefix[0], n) == 0 && (file[n] == '!' || file[n] == '/') && file[n + 1])
		return file + n + 1;
	return file;
}

void iq_refs_table(FILE *out, const struct iq_refs *rs, const char *lang)
{
	fprintf(out, "## %s\n\n", iq_msg(lang, "h.evidence"));
	if (!rs->n) {
		fprintf(out, "%s\n\n", iq_msg(lang, "ev.none"));
		return;
	}
	fputs(iq_msg(lang, "ev.intro"), out);
	if (rs->nprefix == 1) {
		fprintf(out, " %s ", iq_msg(lang, "ev.root"));
		iq_md_codeput(out, rs->prefix[0], 200, 0);
		fputs(".", out);
	}
	fputs("\n\n", out);
	int summaries = 0;
	for (size_t i = 0; i < rs->n; i++)
		summaries |= rs->r[i].summary != NULL;
	fprintf(out, "| %s | %s | %s | %s | %s | ", iq_msg(lang, "col.ref"), iq_msg(lang, "col.file"),
		iq_msg(lang, "col.line"), iq_msg(lang, "col.time"), iq_msg(lang, "col.text"));
	if (summaries)
		fprintf(out, "%s | ", iq_msg(lang, "col.summary"));
	fprintf(out, "%s |\n| --- | --- | ---: | --- | --- | %s--- |\n", iq_msg(lang, "col.show"),
		summaries ? "--- | " : "");
	for (size_t i = 0; i < rs->n; i++) {
		const struct iq_ref *r = &rs->r[i];
		fprintf(out, "| <a id=\"e%zu\"></a>E%zu | ", i + 1, i + 1);
		iq_md_codeput(out, iq_refs_rel(rs, r->file), 1000, 1);
		if (r->nlines > 1)
			fprintf(out, " | %lld–%lld | ", r->line, r->line + r->nlines - 1);
		else
			fprintf(out, " | %lld | ", r->line);
		fputs(*r->time ? r->time : "–", out);
		fputs(" | ", out);
		if (*r->text)
			iq_md_put(out, r->text, 400);
		else
			fputs("–", out);
		if (summaries) {
			fputs(" | ", out);
			if (r->summary)
				iq_md_put(out, r->summary, 300);
		}
		fprintf(out, " | `inquest show E%zu` |\n", i + 1);
	}
	fputs("\n", out);
}
