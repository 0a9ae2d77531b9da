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

/* "./inquest-<name>" with archive suffixes removed from the bundle name
 * ("inquest-stdin" for '-'). */
static char *default_dir(const char *bundle)
{
	if (strcmp(bundle, "-") == 0)
		bundle = "stdin";
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

/* ---- --fail-on ---- */

/* The verdicts of the design's contract, any pattern's without a verdict
 * list of its own. */
static const char *const verdicts[] = {"confirmed", "oom_no_cascade", "ruled_out_host_oom",
				       "ruled_out_flood", "not_detected", "inconclusive"};

/* Whether pattern p can reach verdict v (n bytes): one of its verdict
 * rules, or not_detected (none holding); any verdict of the contract for
 * a pack without rules of its own. */
static int can_reach(const struct iq_pack *p, const char *v, size_t n)
{
	size_t nv = iq_pack_item_count(p, "verdicts");
	if (n == strlen("not_detected") && strncmp(v, "not_detected", n) == 0)
		return 1;
	for (size_t i = 0; i < (nv ? nv : IQ_ARRAY_LEN(verdicts)); i++) {
		const char *w = nv ? iq_item_str(iq_pack_item(p, "verdicts", i), "verdict") : verdicts[i];
		if (w && strlen(w) == n && strncmp(w, v, n) == 0)
			return 1;
	}
	return 0;
}

static const struct iq_pack *pattern_of(const struct iq_ruleset *rs, const char *id, size_t n)
{
	for (size_t i = 0; i < rs->npacks; i++) {
		const char *pid = iq_pack_id(rs->packs[i]);
		if (strlen(pid) == n && strncmp(pid, id, n) == 0)
			return rs->packs[i];
	}
	return NULL;
}

/* One item of a --fail-on list: VERDICT, or PATTERN=VERDICT. */
struct fail_item {
	const char *pat, *verdict;
	size_t plen, vlen;
};

/* Splits the item at s (up to a comma); returns the length it takes. */
static size_t fail_item_at(const char *s, struct fail_item *it)
{
	size_t n = strcspn(s, ",");
	const char *eq = memchr(s, '=', n);
	it->pat = eq ? s : NULL;
	it->plen = eq ? (size_t)(eq - s) : 0;
	it->verdict = eq ? eq + 1 : s;
	it->vlen = eq ? n - it->plen - 1 : n;
	return n;
}

/* Checks every --fail-on value against the loaded packs: 0, or
 * IQ_EXIT_USAGE after saying which item is wrong. */
static int fail_on_check(const struct iq_args *a, const struct iq_ruleset *rs,
			 const char *const *vals, int nvals)
{
	for (int k = 0; k < nvals; k++) {
		const char *s = vals[k];
		for (;;) {
			struct fail_item it;
			size_t n = fail_item_at(s, &it);
			char *item = iq_xstrndup(s, n);
			int bad = 0;
			if (!it.vlen || (it.pat && !it.plen)) {
				iq_usage_error(a->cmd, "--fail-on takes VERDICT or PATTERN=VERDICT, comma-separated;"
					       " '%s' has an empty one", vals[k]);
				bad = 1;
			} else if (it.pat && !pattern_of(rs, it.pat, it.plen)) {
				const char *ids[64];
				size_t ni = 0;
				for (size_t i = 0; i < rs->npacks && ni < IQ_ARRAY_LEN(ids); i++)
					ids[ni++] = iq_pack_id(rs->packs[i]);
				char *pat = iq_xstrndup(it.pat, it.plen);
				const char *sug = iq_suggest(pat, ids, ni);
				iq_usage_error(a->cmd, "--fail-on: no pattern '%s'%s%s%s (see inquest rules list)", pat,
					       sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
				free(pat);
				bad = 1;
			} else {
				int ok = 0;
				for (size_t i = 0; i < rs->npacks; i++)
					if (!it.pat || rs->packs[i] == pattern_of(rs, it.pat, it.plen))
						ok |= can_reach(rs->packs[i], it.verdict, it.vlen);
				if (!ok) {
					char *v = iq_xstrndup(it.verdict, it.vlen);
					const char *sug = iq_suggest(v, verdicts, IQ_ARRAY_LEN(verdicts));
					if (it.pat) {
						/* the verdicts that pattern has, in words */
						const struct iq_pack *pp = pattern_of(rs, it.pat, it.plen);
						struct iq_buf w;
						iq_buf_init(&w);
						for (size_t i = 0; i < IQ_ARRAY_LEN(verdicts); i++)
							if (can_reach(pp, verdicts[i], strlen(verdicts[i])))
								iq_buf_printf(&w, "%s%s", w.len ? ", " : "", verdicts[i]);
						iq_usage_error(a->cmd, "--fail-on: pattern '%.*s' has no verdict '%s' (its"
							       " verdicts: %s)", (int)it.plen, it.pat, v, w.p ? w.p : "");
						iq_buf_release(&w);
					} else
						iq_usage_error(a->cmd, "--fail-on: no pattern has a verdict '%s'%s%s%s (confirmed,"
							       " oom_no_cascade, ruled_out_host_oom, ruled_out_flood,"
							       " not_detected, inconclusive)", v, sug ? "; did you mean '" : "",
							       sug ? sug : "", sug ? "'?" : "");
					free(v);
					bad = 1;
				}
			}
			free(item);
			if (bad)
				return IQ_EXIT_USAGE;
			if (!s[n])
				break;
			s += n + 1;
		}
	}
	return 0;
}

/* Says on stderr each pattern whose verdict one of the items names, and
 * the item; returns how many. */
static int fail_on_hits(json_t *doc, const char *const *vals, int nvals)
{
	size_t i;
	json_t *p;
	int hits = 0;
	json_array_foreach(json_object_get(doc, "patterns"), i, p) {
		const char *id = json_string_value(json_object_get(p, "id"));
		const char *v = json_string_value(json_object_get(p, "verdict"));
		for (int k = 0; k < nvals && id && v; k++) {
			int hit = 0;
			for (const char *s = vals[k]; !hit;) {
				struct fail_item it;
				size_t n = fail_item_at(s, &it);
				hit = it.vlen == strlen(v) && strncmp(it.verdict, v, it.vlen) == 0 &&
				      (!it.pat || (it.plen == strlen(id) && strncmp(it.pat, id, it.plen) == 0));
				if (!s[n])
					break;
				s += n + 1;
			}
			if (hit) {
				iq_errorf("--fail-on %s: %s is %s (exit 1)", vals[k], id, v);
				hits++;
				break;
			}
		}
	}
	return hits;
}

int iq_cmd_analyze(const struct iq_args *a)
{
	const char *dir = iq_arg(a, "-o"), *lang = iq_arg(a, "--lang");
	char **bundles = a->pos;
	int nb = a->npos, nfail = 0, rc = IQ_EXIT_OK;
	int quiet = iq_arg_has(a, "--quiet"), stats = iq_arg_has(a, "--stats");
	const char *const *fail_on = iq_arg_all(a, "--fail-on", &nfail);
	struct iq_stage_times times;
	memset(&times, 0, sizeof times);
	double wall0 = iq_wall_seconds();
	char *dir_alloc = NULL;
	struct iq_store *s = NULL;
	json_t *doc = NULL;
	struct iq_ruleset rs;
	iq_rules_init(&rs);
	char dbtmp[4096], dbpath[4096], fpath[4096], mpath[4096], hpath[4096];
	struct iq_ingest_opts io;
	struct iq_progress pg;
	iq_ingest_opts_init(&io);

	if (!lang)
		lang = "en";
	if (iq_ingest_args(a, &io))
		return IQ_EXIT_USAGE;
	iq_progress_init(&pg, quiet);
	io.progress = &pg;
	for (int i = 0; i < nb; i++) {
		if (strcmp(bundles[i], "-") == 0) {
			for (int k = i + 1; k < nb; k++)
				if (strcmp(bundles[k], "-") == 0) {
					iq_usage_error(a->cmd, "'-' (stdin) can be read once, not twice");
					rc = IQ_EXIT_USAGE;
					goto out;
				}
		} else if (access(bundles[i], R_OK) != 0) {
			iq_errorf("cannot open '%s': %s", bundles[i], strerror(errno));
			rc = IQ_EXIT_INPUT;
			goto out;
		}
	}
	/* a pack with errors stops the run before anything is written */
	rc = iq_rules_load_checked(&rs, io.rules, io.nrules);
	if (!rc)
		rc = fail_on_check(a, &rs, fail_on, nfail);
	if (rc)
		goto out;
	if (!dir)
		dir = dir_alloc = default_dir(bundles[0]);
	rc = iq_output_dir(a, "-o", "the folder to write inquest.db, findings.json and postmortem.md into",
			   dir);
	if (rc)
		goto out;
	if (stats)
		io.timing = &times;
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
	int incomplete = rc == IQ_EXIT_INCOMPLETE;
	if (incomplete)
		rc = IQ_EXIT_OK;
	if (rc)
		goto out; /* interrupted too: the outputs of a previous run stay */
	double t0 = iq_wall_seconds();
	iq_progress_note(&pg, "detecting and writing the postmortem");
	if (iq_detect(s, &rs, &d)) {
		iq_progress_clear(&pg);
		iq_errorf("%s", d.msg);
		rc = IQ_EXIT_INTERNAL;
		goto out;
	}
	times.detect_s = iq_wall_seconds() - t0;
	t0 = iq_wall_seconds();
	if (!(doc = iq_report_build(s, &d))) {
		iq_progress_clear(&pg);
		iq_errorf("%s", d.msg);
		rc = IQ_EXIT_INTERNAL;
		goto out;
	}
	iq_report_guidance(doc, &rs);
	if (iq_interrupted()) {
		iq_progress_clear(&pg);
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
	iq_progress_clear(&pg);
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
	if (fail_on_hits(doc, fail_on, nfail))
		rc = IQ_EXIT_VERDICT;
	/* the verdict asked about comes first; the warnings said what was lost */
	if (rc == IQ_EXIT_OK && incomplete)
		rc = IQ_EXIT_INCOMPLETE;
out:
	iq_progress_clear(&pg);
	if (s) {
		iq_store_close(s);
		remove_db(dbtmp);
	}
	json_decref(doc);
	iq_rules_release(&rs);
	free(dir_alloc);
	return rc;
}
