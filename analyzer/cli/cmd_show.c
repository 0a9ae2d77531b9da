/* cmd_show.c: `inquest show REF [-C N] [--db FILE] [--bundle PATH]
 * [--rules PATH]...`: prints a line the postmortem cites, with N lines of
 * context, from the bundle (through nested archives and .gz members) or,
 * when the bundle is not there, from the database. REF is what the
 * postmortem prints: E12 (its evidence table) or PATH:LINE (the path
 * inside the bundle, or as the database names it). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bundle/bundle.h"
#include "../report/report.h"
#include "../report/report_int.h"
#include "../rules/rules.h"
#include "../store/store.h"
#include "cli.h"
#include "pipeline.h"

struct target {
	char *file;            /* as in files.path */
	char *bundle;          /* files.bundle: the bundle's file name */
	long long line, nlines;
	long context;
};

/* The cited line of E<n>: the postmortem rendered again, in memory, from
 * the same database and packs, gives the same numbers. */
static int resolve_eref(struct iq_store *s, const struct iq_ruleset *rs, long n, struct target *t)
{
	struct iq_diag d = {{0}};
	json_t *doc = iq_report_build(s, &d);
	if (!doc) {
		iq_errorf("show: %s", d.msg);
		return IQ_EXIT_INPUT;
	}
	iq_report_guidance(doc, rs);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct iq_refs refs;
	memset(&refs, 0, sizeof refs);
	struct iq_report_opts o = {"en", NULL, NULL, rs, &refs};
	int rc = f ? iq_render_postmortem(doc, s, &o, f) : IQ_ERR_NOMEM;
	if (f)
		fclose(f);
	free(buf);
	json_decref(doc);
	if (rc) {
		iq_errorf("show: cannot render the postmortem again");
		return IQ_EXIT_INTERNAL;
	}
	if (n < 1 || (size_t)n > refs.n) {
		iq_errorf("show: the postmortem cites E1 to E%zu, not E%ld", refs.n, n);
		iq_refs_release(&refs);
		return IQ_EXIT_USAGE;
	}
	const struct iq_ref *r = &refs.r[n - 1];
	t->file = iq_xstrdup(r->file);
	t->line = r->line;
	t->nlines = r->nlines;
	iq_refs_release(&refs);
	return 0;
}

/* The file of PATH (as the database names it, or inside one of its
 * bundles: "b.tgz!" or "dir/" before it); 0, or an exit status after a
 * message. */
static int resolve_path(struct iq_store *s, const char *path, struct target *t)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s),
			       "SELECT path FROM files WHERE path = ?1 OR (substr(path, length(bundle) + 1, 1) IN ('!', '/')"
			       " AND substr(path, length(bundle) + 2) = ?1) ORDER BY path = ?1 DESC, path LIMIT 3",
			       -1, &q, NULL) != SQLITE_OK) {
		iq_errorf("show: database: %s", sqlite3_errmsg(iq_store_db(s)));
		return IQ_EXIT_INPUT;
	}
	sqlite3_bind_text(q, 1, path, -1, SQLITE_STATIC);
	int n = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *p = (const char *)sqlite3_column_text(q, 0);
		if (n == 0)
			t->file = iq_xstrdup(p);
		else if (n == 1 && strcmp(t->file, path) != 0) {
			char e1[1024], e2[1024];
			iq_escape_display(e1, sizeof e1, t->file, strlen(t->file));
			iq_escape_display(e2, sizeof e2, p, strlen(p));
			iq_errorf("show: '%s' is in more than one bundle (%s, %s): give the path as the evidence table "
				  "of a single bundle does, with the bundle's name and '!' first", path, e1, e2);
			sqlite3_finalize(q);
			return IQ_EXIT_USAGE;
		}
		n++;
	}
	sqlite3_finalize(q);
	if (!n) {
		char e[1024];
		iq_escape_display(e, sizeof e, path, strlen(path));
		iq_errorf("show: no file '%s' in the database", e);
		return IQ_EXIT_INPUT;
	}
	return 0;
}

/* A line of the bundle as it is written, but that no byte of it can act
 * on the terminal: control characters as their control pictures, invalid
 * UTF-8 as U+FFFD (iq_text_clean). */
static void put_clean(const char *s, size_t n)
{
	struct iq_buf b;
	iq_buf_init(&b);
	if (iq_text_clean(&b, s, n) == 0 && b.p)
		fwrite(b.p, 1, b.len, stdout);
	iq_buf_release(&b);
}

static void print_line(long long no, const char *s, size_t n, const struct target *t)
{
	size_t show = n > 1000 ? 1000 : n;
	while (show < n && show > 0 && ((unsigned char)s[show] & 0xC0) == 0x80)
		show--;
	int cited = no >= t->line && no < t->line + t->nlines;
	printf("%s%7lld  ", cited ? ">" : " ", no);
	put_clean(s, show);
	fputs(show < n ? " …\n" : "\n", stdout);
}

struct walk_ctx {
	const struct target *t;
	const char *inner;     /* the file's path after its bundle's name */
	int found;
	long long last;        /* the last line printed */
};

static int on_line(void *u, long lineno, const char *s, size_t n, int truncated)
{
	struct walk_ctx *w = u;
	(void)truncated;
	long long lo = w->t->line - w->t->context, hi = w->t->line + w->t->nlines - 1 + w->t->context;
	if (lineno < lo)
		return 0;
	if (lineno > hi)
		return 1; /* past the context: stop reading */
	print_line(lineno, s, n, w->t);
	w->last = lineno;
	return 0;
}

static int on_member(struct iq_member *m, void *u)
{
	struct walk_ctx *w = u;
	const char *p = m->path + strcspn(m->path, "!/");
	if (!*p || strcmp(p + 1, w->inner) != 0)
		return 0;
	w->found = 1;
	struct iq_lines lines;
	iq_lines_init(&lines, 1 << 20);
	char buf[65536];
	struct iq_diag d = {{0}};
	ssize_t n;
	int stop = 0;
	while (!stop && (n = iq_member_read(m, buf, sizeof buf, &d)) > 0)
		stop = iq_lines_feed(&lines, buf, (size_t)n, on_line, w);
	if (!stop)
		iq_lines_finish(&lines, on_line, w);
	iq_lines_release(&lines);
	return 1; /* the one file: the walk can stop */
}

static void quiet_problem(const char *path, const char *msg, int kind, void *u)
{
	(void)path;
	(void)msg;
	(void)kind;
	(void)u;
}

/* Prints from the bundle at path; 1 when the file was in it. */
static int from_bundle(const char *path, const struct target *t)
{
	struct walk_ctx w = {t, t->file + strlen(t->bundle) + 1, 0, 0};
	struct iq_walk_opts o = {0};
	o.problem = quiet_problem;
	o.u = &w;
	struct iq_diag d = {{0}};
	if (strlen(t->file) <= strlen(t->bundle))
		return 0;
	iq_bundle_walk(path, &o, on_member, &d);
	if (w.found && w.last < t->line)
		printf("        (the file has %s lines)\n", w.last ? "fewer" : "no such");
	return w.found;
}

/* Prints the records around the line from the database. */
static int from_db(struct iq_store *s, const struct target *t)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s),
			       "SELECT r.line, r.nlines, r.text FROM records r JOIN files f ON f.id = r.file_id"
			       " WHERE f.path = ?1 AND r.line + max(r.nlines, 1) > ?2 AND r.line <= ?3 ORDER BY r.line",
			       -1, &q, NULL) != SQLITE_OK)
		return IQ_EXIT_INPUT;
	sqlite3_bind_text(q, 1, t->file, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 2, t->line - t->context);
	sqlite3_bind_int64(q, 3, t->line + t->nlines - 1 + t->context);
	int any = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		long long line = sqlite3_column_int64(q, 0);
		const char *text = (const char *)sqlite3_column_text(q, 2);
		/* a record of several lines (a traceback) holds them joined, not
		 * always from consecutive lines: the rest unnumbered */
		const char *p = text ? text : "";
		const char *nl = strchr(p, '\n');
		print_line(line, p, nl ? (size_t)(nl - p) : strlen(p), t);
		while (nl) {
			p = nl + 1;
			nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			fputs("      +  ", stdout);
			put_clean(p, n > 1000 ? 1000 : n);
			fputs("\n", stdout);
		}
		any = 1;
	}
	sqlite3_finalize(q);
	if (!any)
		printf("        (no record of the database is at these lines: they were skipped, see the coverage)\n");
	return 0;
}

/* The bundle's path: --bundle, the path analyze was given (relative to
 * here), or a file of that name beside the database or one folder up. */
static char *find_bundle(struct iq_store *s, const char *given, const char *db, const char *name)
{
	if (given)
		return access(given, R_OK) == 0 ? iq_xstrdup(given) : NULL;
	sqlite3_stmt *q;
	char *found = NULL;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT j.value FROM meta, json_each(meta.value) j WHERE meta.key = 'bundles'",
			       -1, &q, NULL) == SQLITE_OK) {
		while (!found && sqlite3_step(q) == SQLITE_ROW) {
			const char *p = (const char *)sqlite3_column_text(q, 0);
			char *base = p ? iq_base_name(p) : NULL;
			if (p && base && strcmp(base, name) == 0 && access(p, R_OK) == 0)
				found = iq_xstrdup(p);
			free(base);
		}
		sqlite3_finalize(q);
	}
	const char *slash = strrchr(db, '/');
	int dn = slash ? (int)(slash - db) : 1;
	const char *dir = slash ? db : ".";
	for (int up = 0; !found && up < 2; up++) {
		size_t n = strlen(db) + strlen(name) + 8;
		char *p = iq_xmalloc(n);
		snprintf(p, n, "%.*s/%s%s", dn, dir, up ? "../" : "", name);
		if (access(p, R_OK) == 0)
			found = p;
		else
			free(p);
	}
	return found;
}

int iq_cmd_show(const struct iq_args *a)
{
	const char *db = iq_arg(a, "--db"), *ref = a->pos[0], *bundle = iq_arg(a, "--bundle");
	const char *ctxs = iq_arg(a, "-C");
	int nr = 0, rc = IQ_EXIT_OK;
	const char *const *rules = iq_arg_all(a, "--rules", &nr);
	struct target t = {NULL, NULL, 0, 1, 3};
	if (!db)
		db = "inquest.db";
	if (ctxs) {
		char *end;
		t.context = strtol(ctxs, &end, 10);
		if (!*ctxs || *end || t.context < 0 || t.context > 100000) {
			iq_usage_error(a->cmd, "-C takes a number of lines, not '%s'", ctxs);
			return IQ_EXIT_USAGE;
		}
	}
	struct iq_store *s = NULL;
	struct iq_diag d = {{0}};
	struct iq_ruleset rs;
	iq_rules_init(&rs);
	if (iq_store_open(db, 1, &s, &d)) {
		iq_errorf("show: %s (run it in the folder analyze wrote, or give --db)", d.msg);
		rc = IQ_EXIT_INPUT;
		goto out;
	}
	if ((ref[0] == 'E' || ref[0] == 'e') && ref[1] && strspn(ref + 1, "0123456789") == strlen(ref + 1)) {
		if ((rc = iq_load_rules(&rs, rules, nr)))
			goto out;
		rc = resolve_eref(s, &rs, strtol(ref + 1, NULL, 10), &t);
	} else {
		const char *colon = strrchr(ref, ':');
		char *end = NULL;
		t.line = colon ? strtoll(colon + 1, &end, 10) : 0;
		if (!colon || !end || *end || t.line < 1) {
			iq_errorf("show: REF is E<number> (the postmortem's evidence) or PATH:LINE, not '%s'", ref);
			rc = IQ_EXIT_USAGE;
			goto out;
		}
		char *path = iq_xmalloc((size_t)(colon - ref) + 1);
		memcpy(path, ref, (size_t)(colon - ref));
		path[colon - ref] = '\0';
		rc = resolve_path(s, path, &t);
		free(path);
	}
	if (rc)
		goto out;
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), "SELECT bundle FROM files WHERE path = ?1", -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, t.file, -1, SQLITE_STATIC);
		if (sqlite3_step(q) == SQLITE_ROW)
			t.bundle = iq_xstrdup((const char *)sqlite3_column_text(q, 0));
		sqlite3_finalize(q);
	}
	if (!t.bundle)
		t.bundle = iq_xstrdup("");
	char *bpath = find_bundle(s, bundle, db, t.bundle);
	put_clean(t.file, strlen(t.file));
	if (t.nlines > 1)
		printf(":%lld-%lld", t.line, t.line + t.nlines - 1);
	else
		printf(":%lld", t.line);
	if (bpath && (printf("  (from the bundle)\n"), from_bundle(bpath, &t))) {
		/* printed */
	} else {
		if (bpath)
			printf("        (not found in the bundle: from the database, as parsed)\n");
		else
			printf("  (the bundle is not here: from the database, as parsed)\n");
		rc = from_db(s, &t);
	}
	free(bpath);
	if (fflush(stdout) != 0)
		rc = IQ_EXIT_INPUT;
out:
	free(t.file);
	free(t.bundle);
	iq_rules_release(&rs);
	iq_store_close(s);
	return rc;
}
