/* cmd_report.c: `inquest report --db FILE [--format md|json|text] [--lang
 * en|tr] [-o FILE]`: renders the outputs again from an existing database,
 * opened read-only. With -o, the Markdown's charts go to charts/ beside
 * FILE; on stdout the Markdown carries its Mermaid charts only. */
#include <stdlib.h>
#include <string.h>

#include "../report/report.h"
#include "../rules/rules.h"
#include "cli.h"

struct report_ctx {
	json_t *doc;
	struct iq_store *s;
	const char *format;
	struct iq_report_opts opts;
};

static int render(void *u, FILE *f)
{
	struct report_ctx *c = u;
	if (strcmp(c->format, "json") == 0)
		return iq_render_json(c->doc, f);
	if (strcmp(c->format, "text") == 0)
		return iq_render_text(c->doc, c->opts.lang, f);
	if (strcmp(c->format, "html") == 0) {
		/* the Markdown first, in memory, and its charts beside -o */
		char *md = NULL;
		size_t n = 0;
		FILE *mf = open_memstream(&md, &n);
		int rc = mf ? iq_render_postmortem(c->doc, c->s, &c->opts, mf) : IQ_ERR_NOMEM;
		if (mf)
			fclose(mf);
		if (!rc)
			rc = iq_render_html(md, n, c->opts.lang, c->opts.charts_dir, f);
		free(md);
		return rc;
	}
	return iq_render_postmortem(c->doc, c->s, &c->opts, f);
}

/* "DIR/charts" for an output file DIR/NAME ("charts" for a bare NAME).
 * Caller frees. */
static char *charts_beside(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	char *dir = iq_xmalloc(n + 16);
	if (slash)
		snprintf(dir, n + 16, "%.*s/charts", (int)(n ? n : 1), n ? path : "/");
	else
		snprintf(dir, n + 16, "charts");
	return dir;
}

int iq_cmd_report(const struct iq_args *a)
{
	const char *db = iq_arg(a, "--db"), *format = iq_arg(a, "--format"), *lang = iq_arg(a, "--lang");
	const char *out = iq_arg(a, "-o");
	int rc = IQ_EXIT_OK;
	if (!format)
		format = "md";
	if (!lang)
		lang = "en";
	struct iq_diag d = {{0}};
	struct iq_store *s = NULL;
	int mrc = out ? iq_output_file(a, "-o", "the file to write the report to", out) : 0;
	if (mrc)
		return mrc;
	if (iq_store_open(db, 1, &s, &d)) {
		iq_errorf("%s", d.msg);
		return IQ_EXIT_INPUT;
	}
	json_t *doc = iq_report_build(s, &d);
	if (!doc) {
		iq_errorf("%s", d.msg);
		iq_store_close(s);
		return IQ_EXIT_INPUT;
	}
	/* the packs built in: their guidance, titles and report texts */
	struct iq_ruleset rs;
	iq_rules_init(&rs);
	int have_rs = iq_rules_load_builtin(&rs, &d) == 0;
	iq_report_guidance(doc, have_rs ? &rs : NULL);
	char *charts = out && (strcmp(format, "md") == 0 || strcmp(format, "html") == 0) ? charts_beside(out) : NULL;
	struct report_ctx c = {doc, s, format, {lang, charts, "charts", have_rs ? &rs : NULL, NULL}};
	if (out) {
		if (iq_write_atomic(out, render, &c, &d)) {
			iq_errorf("%s", d.msg);
			rc = IQ_EXIT_INPUT;
		}
	} else if (render(&c, stdout) || fflush(stdout) != 0) {
		iq_errorf("cannot write the report to stdout");
		rc = IQ_EXIT_INPUT;
	}
	free(charts);
	iq_rules_release(&rs);
	json_decref(doc);
	iq_store_close(s);
	return rc;
}
