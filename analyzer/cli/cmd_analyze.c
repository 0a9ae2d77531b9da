/* cmd_analyze.c: `inquest analyze BUNDLE... [-o DIR]`: ingest, detect and
 * report in one go. DIR gets inquest.db, findings.json and postmortem.md;
 * each is written under a temporary name and renamed into place, so a
 * second run replaces the outputs whole. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../detect/detect.h"
#include "../report/report.h"
#include "cli.h"
#include "ingest.h"

struct render_ctx {
	json_t *doc;
	struct iq_store *s;
	struct iq_report_opts opts;
	char *md;          /* the postmortem's Markdown, rendered once */
	size_t mdlen;
};

static int render_json(void *u, FILE *f)
{
	struct render_ctx *c = u;
	return iq_render_json(c->doc, f);
}

static int render_md(void *u, FILE *f)
{
	struct render_ctx *c = u;
	return fwrite(c->md, 1, c->mdlen, f) == c->mdlen ? 0 : IQ_ERR_INPUT;
}

static int render_html(void *u, FILE *f)
{
	struct render_ctx *c = u;
	return iq_render_html(c->md, c->mdlen, c->opts.lang, c->opts.charts_dir, f);
}

/* "./inquest-<name>" with archive suffixes removed from the bundle name. */
static char *default_dir(const char *bundle)
{
	size_t n = strlen(bundle);
	while (n > 1 && bundle[n - 1] == '/')
		n--;
	const char *b = bundle + n;
	while (b > bundle && b[-1] != '/')
		b--;
	size_t bl = (size_t)(bundle + n - b);
	static const char *const sfx[] = {".tar.gz", ".tar.zst", ".tar.xz", ".tar.bz2", ".tgz",
					  ".tar", ".zip", ".gz", ".zst", ".xz"};
	for (size_t i = 0; i < IQ_ARRAY_LEN(sfx); i++) {
		size_t sl = strlen(sfx[i]);
		if (bl > sl && strncmp(b + bl - sl, sfx[i], sl) == 0) {
			bl -= sl;
			break;
		}
	}
	char *out = iq_xmalloc(bl + 16);
	snprintf(out, bl + 16, "inquest-%.*s", (int)bl, b);
	return out;
}

static void remove_db(const char *path)
{
	char p[4200];
	unlink(path);
	snprintf(p, sizeof p, "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof p, "%s-shm", path);
	unlink(p);
}

/* Does any pattern's verdict appear in the comma-separated list? */
static int verdict_hit(json_t *doc, const char *list)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(doc, "patterns"), i, p) {
		const char *v = json_string_value(json_object_get(p, "verdict"));
		size_t vl = strlen(v);
		for (const char *s = list; *s;) {
			const char *c = strchr(s, ',');
			size_t n = c ? (size_t)(c - s) : strlen(s);
			if (n == vl && strncmp(s, v, n) == 0)
				return 1;
			s += n + (c ? 1 : 0);
		}
	}
	return 0;
}

static int known_verdicts(const char *list)
{
	static const char *const v[] = {"confirmed", "oom_no_cascade", "ruled_out_host_oom",
					"ruled_out_flood", "not_detected", "inconclusive"};
	for (const char *s = list; *s;) {
		const char *c = strchr(s, ',');
		size_t n = c ? (size_t)(c - s) : strlen(s);
		int ok = 0;
		for (size_t i = 0; i < IQ_ARRAY_LEN(v); i++)
			ok |= strlen(v[i]) == n && strncmp(v[i], s, n) == 0;
		if (!ok)
			return 0;
		s += n + (c ? 1 : 0);
	}
	return 1;
}

int iq_cmd_analyze(int argc, char **argv)
{
	const char *dir = NULL, *lang = "en", *fail_on = NULL;
	char **bundles = iq_xcalloc((size_t)argc, sizeof *bundles);
	char **rules = iq_xcalloc((size_t)argc, sizeof *rules);
	int nb = 0, nr = 0, quiet = 0, rc = IQ_EXIT_OK, usage = 0, stats = 0;
	struct iq_stage_times times;
	memset(&times, 0, sizeof times);
	double wall0 = iq_wall_seconds();
	char *dir_alloc = NULL;
	struct iq_store *s = NULL;
	json_t *doc = NULL;
	struct iq_ruleset rs;
	iq_rules_init(&rs);
	char dbtmp[4096], dbpath[4096], fpath[4096], mpath[4096], hpath[4096];
	struct iq_ingest_opts io = {0};
	iq_ingest_opts_init(&io);

	for (int i = 1; i < argc; i++) {
		if (iq_ingest_option("analyze", argc, argv, &i, &io, &usage))
			continue;
		if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--out") == 0) && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--rules") == 0 && i + 1 < argc)
			rules[nr++] = argv[++i];
		else if (strcmp(argv[i], "--lang") == 0 && i + 1 < argc)
			lang = argv[++i];
		else if (strcmp(argv[i], "--fail-on") == 0 && i + 1 < argc)
			fail_on = argv[++i];
		else if (strcmp(argv[i], "--stats") == 0)
			stats = 1;
		else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0)
			io.quiet = quiet = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
			iq_errorf("analyze: unknown option '%s'", argv[i]);
			usage = 1;
		} else
			bundles[nb++] = argv[i];
	}
	if (strcmp(lang, "en") != 0 && strcmp(lang, "tr") != 0) {
		iq_errorf("analyze: --lang takes en or tr, not '%s'", lang);
		usage = 1;
	}
	if (fail_on && !known_verdicts(fail_on)) {
		iq_errorf("analyze: --fail-on takes verdicts (confirmed, oom_no_cascade, ruled_out_host_oom,"
			  " ruled_out_flood, not_detected, inconclusive), not '%s'", fail_on);
		usage = 1;
	}
	if (usage || nb == 0) {
		iq_usage_of("analyze");
		rc = IQ_EXIT_USAGE;
		goto out;
	}
	for (int i = 0; i < nb; i++) {
		if (access(bundles[i], R_OK) != 0) {
			iq_errorf("cannot open '%s': %s", bundles[i], strerror(errno));
			rc = IQ_EXIT_INPUT;
			goto out;
		}
	}
	if (!dir)
		dir = dir_alloc = default_dir(bundles[0]);
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		iq_errorf("cannot create '%s': %s", dir, strerror(errno));
		rc = IQ_EXIT_INPUT;
		goto out;
	}
	io.rules = rules;
	io.nrules = nr;
	if (stats)
		io.timing = &times;
	rc = iq_load_rules(&rs, rules, nr);
	if (rc)
		goto out;
	snprintf(dbtmp, sizeof dbtmp, "%s/inquest.db.tmp", dir);
	snprintf(dbpath, sizeof dbpath, "%s/inquest.db", dir);
	snprintf(fpath, sizeof fpath, "%s/findings.json", dir);
	snprintf(mpath, sizeof mpath, "%s/postmortem.md", dir);
	snprintf(hpath, sizeof hpath, "%s/postmortem.html", dir);
	remove_db(dbtmp);
	struct iq_diag d = {{0}};
	if (iq_store_open(dbtmp, 0, &s, &d) || iq_store_scratch(s, &d)) {
		iq_errorf("%s", d.msg);
		rc = IQ_EXIT_INPUT;
		goto out;
	}
	iq_signals_install();
	rc = iq_ingest_run(s, &rs, bundles, nb, &io);
	if (rc)
		goto out; /* interrupted too: the outputs of a previous run stay */
	double t0 = iq_wall_seconds();
	if (iq_detect(s, &rs, &d)) {
		iq_errorf("%s", d.msg);
		rc = IQ_EXIT_INTERNAL;
		goto out;
	}
	times.detect_s = iq_wall_seconds() - t0;
	t0 = iq_wall_seconds();
	if (!(doc = iq_report_build(s, &d))) {
		iq_errorf("%s", d.msg);
		rc = IQ_EXIT_INTERNAL;
		goto out;
	}
	iq_report_guidance(doc, &rs);
	if (iq_interrupted()) {
		iq_errorf("interrupted; no output written, rerun to finish");
		rc = IQ_EXIT_INTERRUPTED;
		goto out;
	}
	char charts[4200];
	snprintf(charts, sizeof charts, "%s/charts", dir);
	struct render_ctx rctx = {doc, s, {lang, charts, "charts", &rs, NULL}, NULL, 0};
	/* the Markdown once, in memory: postmortem.html is made from it */
	FILE *mf = open_memstream(&rctx.md, &rctx.mdlen);
	int mrc = mf ? iq_render_postmortem(doc, s, &rctx.opts, mf) : IQ_ERR_NOMEM;
	if (mf && fclose(mf) != 0)
		mrc = IQ_ERR_NOMEM;
	if (mrc || iq_write_atomic(fpath, render_json, &rctx, &d) ||
	    iq_write_atomic(mpath, render_md, &rctx, &d) || iq_write_atomic(hpath, render_html, &rctx, &d)) {
		iq_errorf("%s", mrc ? "cannot render the postmortem" : d.msg);
		free(rctx.md);
		rc = IQ_EXIT_INPUT;
		goto out;
	}
	free(rctx.md);
	times.report_s = iq_wall_seconds() - t0;
	iq_store_close(s);
	s = NULL;
	if (rename(dbtmp, dbpath) != 0) {
		iq_errorf("cannot rename '%s' to '%s': %s", dbtmp, dbpath, strerror(errno));
		rc = IQ_EXIT_INPUT;
		goto out;
	}
	if (!quiet) {
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(doc, "patterns"), i, p)
			printf("%s: %s: %s\n", json_string_value(json_object_get(p, "id")),
			       json_string_value(json_object_get(p, "verdict")),
			       json_string_value(json_object_get(p, "summary")));
		printf("postmortem: %s\n            %s\nfindings:   %s\ndatabase:   %s\n", mpath, hpath, fpath, dbpath);
	}
	if (stats)
		iq_print_stage_times(&times, iq_wall_seconds() - wall0);
	if (fail_on && verdict_hit(doc, fail_on))
		rc = IQ_EXIT_VERDICT;
out:
	if (s) {
		iq_store_close(s);
		remove_db(dbtmp);
	}
	json_decref(doc);
	iq_rules_release(&rs);
	free(dir_alloc);
	free(bundles);
	free(rules);
	return rc;
}
