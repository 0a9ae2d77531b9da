/* cmd_rules.c: `inquest rules list|lint|test|explain|match`: the rule
 * packs, their checks, their own test cases, what they do in words, and
 * grep over plain files. Without PACK arguments the packs shipped inside
 * the binary are used; with them, the shipped shared definitions are
 * loaded first so that references resolve. */
/* realpath() is POSIX.1-2008 base, but glibc declares it for XSI only. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../bundle/bundle.h"
#include "../rules/rules.h"
#include "cli.h"
#include "pipeline.h"

/* Loads the shipped packs, or only the given files/directories. */
static int load(struct iq_ruleset *rs, int argc, char **argv)
{
	struct iq_diag d = {{0}};
	int rc = 0;
	if (argc == 0)
		rc = iq_rules_load_builtin(rs, &d);
	else
		rc = iq_rules_load_builtin_shared(rs, &d);
	for (int i = 0; i < argc && rc == 0; i++)
		rc = iq_rules_load_path(rs, argv[i], &d);
	if (rc) {
		fprintf(stderr, "%s\n", d.msg);
		return IQ_EXIT_RULES;
	}
	return 0;
}

static void list_pack(const struct iq_pack *p)
{
	printf("%s\t%s\t%s%s\n", iq_pack_id(p), iq_pack_file(p), iq_pack_is_shared(p) ? "(shared) " : "",
	       iq_pack_text(p, "title", "en"));
	for (int sec = 0; sec < IQ_SEC_COUNT; sec++)
		for (size_t j = 0; j < iq_pack_section_count(p, (enum iq_section)sec); j++) {
			const struct iq_signal *s = iq_pack_section_signal(p, (enum iq_section)sec, j);
			const char *ref = iq_signal_ref(s);
			printf("  %s\t%s%s%s%s\n", iq_signal_id(s),
			       sec == IQ_SEC_BOUNDARIES ? "(boundary) " : sec == IQ_SEC_FACTS ? "(fact) " : "",
			       iq_signal_text(s, "title", "en"), ref ? " -> " : "", ref ? ref : "");
		}
}

static int cmd_list(struct iq_ruleset *rs, int argc, char **argv)
{
	int rc = load(rs, argc, argv);
	for (size_t i = 0; rc == 0 && i < rs->nshared; i++)
		if (!iq_pack_is_base(rs->shared[i]))
			list_pack(rs->shared[i]);
	for (size_t i = 0; rc == 0 && i < rs->npacks; i++)
		list_pack(rs->packs[i]);
	return rc;
}

static int cmd_lint(struct iq_ruleset *rs, int argc, char **argv)
{
	long errors = 0, warnings = 0;
	if (argc == 0) {
		iq_rules_lint_builtin(rs, stderr, &errors, &warnings);
	} else {
		struct iq_diag d = {{0}};
		if (iq_rules_load_builtin_shared(rs, &d)) {
			fprintf(stderr, "%s\n", d.msg);
			return IQ_EXIT_RULES;
		}
		for (int i = 0; i < argc; i++)
			iq_rules_lint_path(rs, argv[i], stderr, &errors, &warnings);
	}
	printf("rules lint: %ld error%s, %ld warning%s\n", errors, errors == 1 ? "" : "s", warnings,
	       warnings == 1 ? "" : "s");
	return errors ? IQ_EXIT_RULES : IQ_EXIT_OK;
}

/* ---- explain ---- */

static void print_list(json_t *a)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) {
		char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		printf("%s%s", i ? ", " : "", t ? t : "?");
		free(t);
	}
}

static void explain_kinds(unsigned kinds)
{
	static const char *const names[] = {"log", "event", "http", "gpu", "kernel", "pod", "config"};
	if (!kinds) {
		printf("    applies to records of every kind\n");
		return;
	}
	printf("    applies to records of kind:");
	for (unsigned i = 0; i < IQ_ARRAY_LEN(names); i++)
		if (kinds & (1u << i))
			printf(" %s", names[i]);
	printf("\n");
}

static void explain_regex(json_t *obj, const char *lang)
{
	json_t *pats = json_object_get(obj, "patterns");
	size_t i;
	json_t *v;
	printf("    matches a record when %s of these PCRE2 regexes matches its text:\n",
	       json_array_size(pats) > 1 ? "any" : "this");
	json_array_foreach(pats, i, v)
		printf("      %zu. %s\n", i + 1, json_string_value(v));
	json_t *fields = json_object_get(obj, "fields");
	if (json_object_size(fields)) {
		const char *k;
		int first = 1;
		printf("    named captures become fields:");
		json_object_foreach(fields, k, v) {
			const char *t = json_string_value(v);
			printf("%s %s (%s%s%s)", first ? "" : ",", k, t ? t : "?",
			       t && strcmp(t, "size") == 0 ? ", also " : "",
			       t && strcmp(t, "size") == 0 ? "<name>_bytes" : "");
			first = 0;
		}
		printf("; other captures stay text\n");
	}
	(void)lang;
}

static void explain_exceptions(json_t *obj, const char *lang)
{
	json_t *exc = json_object_get(obj, "exceptions");
	size_t i;
	json_t *v;
	if (!json_array_size(exc))
		return;
	printf("    cancelled when one of these exceptions matches:\n");
	json_array_foreach(exc, i, v) {
		const char *pat = json_is_string(v) ? json_string_value(v)
			: json_string_value(json_object_get(v, "pattern"));
		const char *why = json_is_object(v) ? iq_item_text(v, "why", lang) : "";
		printf("      - %s%s%s\n", pat ? pat : "?", *why ? "  -- " : "", why);
	}
}

static void explain_signal(const struct iq_signal *s, const char *lang)
{
	static const char *const what[] = {"signal", "boundary", "fact"};
	const char *sev = iq_signal_severity(s);
	printf("  %s %s: %s%s%s%s\n", what[iq_signal_section(s)], iq_signal_id(s),
	       iq_signal_text(s, "title", lang), *sev ? " [" : "", sev, *sev ? "]" : "");
	const char *desc = iq_signal_text(s, "description", lang);
	if (*desc)
		printf("    %s\n", desc);
	json_t *obj = iq_signal_json(s);
	const struct iq_signal *t = iq_signal_target(s);
	if (iq_signal_ref(s)) {
		printf("    defined once as the shared signal %s%s%s; matched once per record and reported under every pack that refers to it\n",
		       iq_signal_ref(s), t ? "" : " (NOT LOADED)", "");
		if (t)
			obj = iq_signal_json(t);
	}
	const char *det = iq_signal_detector(s);
	if (det) {
		printf("    windowed detector '%s' over the database: it %s\n", det, iq_detector_desc(det));
		json_t *params = json_object_get(json_object_get(obj, "detector"), "params");
		const char *k;
		json_t *v;
		if (json_object_size(params)) {
			printf("    parameters:");
			int first = 1;
			json_object_foreach(params, k, v) {
				char *js = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
				printf("%s %s = %s", first ? "" : ",", k, js ? js : "?");
				free(js);
				first = 0;
			}
			printf("\n");
			json_object_foreach(params, k, v) {
				const char *kind, *edges;
				if (iq_detector_window(det, k, &kind, &edges))
					printf("    window %s: %s, %s\n", k, kind, edges);
			}
			json_t *why = json_object_get(json_object_get(obj, "detector"), "reasons");
			json_object_foreach(params, k, v) {
				const char *r = json_string_value(json_object_get(why, k));
				if (r)
					printf("    why %s: %s\n", k, r);
			}
		}
	} else {
		explain_kinds(iq_signal_kinds(s));
		explain_regex(obj, lang);
		explain_exceptions(obj, lang);
		if (t)
			explain_exceptions(iq_signal_json(s), lang);
	}
	const char *instead = iq_signal_text(s, "instead", lang);
	if (*instead)
		printf("    when present, the incident is instead: %s\n", instead);
	json_t *tests = json_object_get(obj, "tests");
	if (tests)
		printf("    proven by %zu line%s that must match and %zu that must not (inquest rules test)\n",
		       json_array_size(json_object_get(tests, "match")),
		       json_array_size(json_object_get(tests, "match")) == 1 ? "" : "s",
		       json_array_size(json_object_get(tests, "no_match")));
}

/* A condition's or a question's parameters, each with its reason. */
static void explain_params(json_t *c)
{
	const char *k;
	json_t *v;
	json_t *why = json_object_get(c, "reasons");
	json_object_foreach(json_object_get(c, "params"), k, v) {
		char *js = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
		const char *r = json_string_value(json_object_get(why, k));
		printf("    param %s = %s%s%s\n", k, js ? js : "?", r ? ": " : "", r ? r : "");
		free(js);
	}
}

static void explain_condition(json_t *c, const char *lang)
{
	printf("  condition %s: %s\n", iq_item_str(c, "id"), iq_item_text(c, "title", lang));
	const char *d = iq_item_text(c, "description", lang);
	if (*d)
		printf("    %s\n", d);
	printf("    decided by: %s\n", iq_item_text(c, "evidence", lang));
	if (json_array_size(json_object_get(c, "config_keys"))) {
		printf("    config keys: ");
		print_list(json_object_get(c, "config_keys"));
		printf("\n");
	}
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(c, "checks"), i, v) {
		char *js = json_dumps(json_object_get(v, "value"), JSON_ENCODE_ANY | JSON_COMPACT);
		printf("    check: %s %s%s%s\n", iq_item_str(v, "key"), iq_item_str(v, "op"), js ? " " : "",
		       js ? js : "");
		free(js);
	}
	explain_params(c);
}

static void explain_question(json_t *q, const char *lang)
{
	printf("  question %s: %s\n", iq_item_str(q, "id"), iq_item_text(q, "question", lang));
	printf("    answered by this read-only SQL over inquest.db (:pack is the pack's id):\n");
	const char *sql = iq_item_str(q, "sql");
	printf("      ");
	for (const char *p = sql; *p; p++) {
		putchar(*p);
		if (*p == '\n')
			printf("      ");
	}
	printf("\n    answer: %s\n", iq_item_text(q, "answer", lang));
	const char *empty = iq_item_text(q, "empty", lang);
	if (*empty)
		printf("    when the SQL finds nothing: %s\n", empty);
	explain_params(q);
}

static void explain_guidance(json_t *g, const char *lang)
{
	printf("  %s %s: %s\n    called for by: ", iq_item_str(g, "phase"), iq_item_str(g, "id"),
	       iq_item_text(g, "text", lang));
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(g, "for"), i, v)
		printf("%s%s", i ? ", " : "", json_string_value(v) ? json_string_value(v) : "?");
	printf("\n");
}

static void explain_pack(const struct iq_pack *p, const char *id, const char *lang, int *found)
{
	static const char *const items[] = {"conditions", "questions", "guidance"};
	if (!id) {
		const char *v = iq_pack_version(p);
		printf("%s %s%s(%s): %s%s\n", iq_pack_id(p), v, *v ? " " : "", iq_pack_file(p),
		       iq_pack_is_shared(p) ? "shared definitions: " : "", iq_pack_text(p, "title", lang));
		const char *def = iq_pack_text(p, "definition", lang);
		if (*def)
			printf("  %s\n", def);
		*found = 1;
	}
	for (int sec = 0; sec < IQ_SEC_COUNT; sec++) {
		size_t n = iq_pack_section_count(p, (enum iq_section)sec);
		if (!id && n)
			printf("%s:\n", iq_section_name((enum iq_section)sec));
		for (size_t i = 0; i < n; i++) {
			const struct iq_signal *s = iq_pack_section_signal(p, (enum iq_section)sec, i);
			if (id && strcmp(id, iq_signal_id(s)) != 0)
				continue;
			explain_signal(s, lang);
			*found = 1;
		}
	}
	for (size_t k = 0; k < IQ_ARRAY_LEN(items); k++) {
		size_t n = iq_pack_item_count(p, items[k]);
		if (!id && n)
			printf("%s:\n", items[k]);
		for (size_t i = 0; i < n; i++) {
			json_t *it = iq_pack_item(p, items[k], i);
			if (id && strcmp(id, iq_item_str(it, "id")) != 0)
				continue;
			*found = 1;
			if (k == 0)
				explain_condition(it, lang);
			else if (k == 1)
				explain_question(it, lang);
			else
				explain_guidance(it, lang);
		}
	}
	size_t nv = iq_pack_item_count(p, "verdicts");
	if (!id && nv) {
		printf("verdict (the first rule that holds decides; none holding means not_detected):\n");
		for (size_t i = 0; i < nv; i++) {
			json_t *v = iq_pack_item(p, "verdicts", i);
			const char *why = iq_item_text(v, "why", lang);
			printf("  %zu. %s when %s%s%s\n", i + 1, iq_item_str(v, "verdict"), iq_item_str(v, "when"),
			       *why ? "  -- " : "", why);
		}
	}
}

static int cmd_explain(struct iq_ruleset *rs, const char *lang, char **args)
{
	struct stat st;
	int rc = stat(args[0], &st) == 0 ? load(rs, 1, args) : load(rs, 0, NULL);
	if (rc)
		return rc;
	int found = 0, matched = 0;
	int from_path = stat(args[0], &st) == 0;
	for (size_t i = 0; i < rs->nshared + rs->npacks; i++) {
		const struct iq_pack *p = i < rs->nshared ? rs->shared[i] : rs->packs[i - rs->nshared];
		if (from_path ? iq_pack_is_base(p) : strcmp(iq_pack_id(p), args[0]) != 0)
			continue;
		matched = 1;
		explain_pack(p, args[1], lang, &found);
	}
	if (!matched) {
		iq_errorf("no rule pack '%s' (see inquest rules list)", args[0]);
		return IQ_EXIT_USAGE;
	}
	if (!found) {
		iq_errorf("pack '%s' has no signal, boundary, fact, condition, question or guidance '%s'",
			  args[0], args[1]);
		return IQ_EXIT_USAGE;
	}
	return IQ_EXIT_OK;
}

/* ---- match ---- */

struct hits {
	char **packs;           /* --pack ids to report, NULL for all */
	size_t npacks;
	struct iq_buf ids;      /* "a,b" */
	struct iq_buf explain;  /* one line per hit */
	int want_explain;
};

static int on_hit(void *u, const char *pack, const char *signal, const char *caps)
{
	struct hits *h = u;
	if (h->npacks) {
		int keep = 0;
		for (size_t i = 0; i < h->npacks; i++)
			keep |= strcmp(h->packs[i], pack) == 0;
		if (!keep)
			return 0;
	}
	/* a signal several packs report is listed once */
	size_t sl = strlen(signal);
	int seen = 0;
	for (const char *p = h->ids.p; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] ? 1 : 0))
		seen |= strcspn(p, ",") == sl && memcmp(p, signal, sl) == 0;
	if (!seen) {
		if (h->ids.len)
			iq_buf_addc(&h->ids, ',');
		iq_buf_adds(&h->ids, signal);
	}
	if (h->want_explain)
		iq_buf_printf(&h->explain, "\t%s/%s\t%s\n", pack, signal, caps);
	return 0;
}

/* One file being grepped: where its lines go, and what the run found. */
struct grep {
	struct iq_ruleset *rs;
	struct hits *h;
	const char *name;   /* as printed: FILE, or FILE!member */
	char *esc;          /* the escaped line */
	size_t esccap;
	long matched;       /* lines that matched, in all files */
	int error;          /* an input could not be read whole: exit 2 */
};

static int grep_line(void *u, long lineno, const char *line, size_t n, int truncated)
{
	struct grep *g = u;
	struct hits *h = g->h;
	IQ_UNUSED(truncated);
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_LOG);
	r.line = lineno;
	r.nlines = 1;
	r.text = iq_str_make(line, n);
	iq_buf_reset(&h->ids);
	iq_buf_reset(&h->explain);
	iq_rules_match(g->rs, &r, on_hit, h);
	if (!h->ids.len)
		return 0;
	if (g->esccap < n * 4 + 1) {
		g->esccap = n * 4 + 1;
		free(g->esc);
		g->esc = iq_xmalloc(g->esccap);
	}
	iq_escape_display(g->esc, g->esccap, line, n);
	printf("%s:%ld\t%s\t%s\n", g->name, lineno, h->ids.p, g->esc);
	if (h->explain.len)
		fputs(h->explain.p, stdout);
	g->matched++;
	return 0;
}

/* Greps a stream of bytes (read by more, as iq_member_read) line by line. */
static void grep_stream(struct grep *g, ssize_t (*more)(void *src, char *buf, size_t n, struct iq_diag *d),
			void *src)
{
	static char buf[65536];
	struct iq_lines l;
	struct iq_diag d = {{0}};
	ssize_t got;
	iq_lines_init(&l, IQ_MAX_LINE);
	iq_rules_set_source(g->rs, g->name);
	while ((got = more(src, buf, sizeof buf, &d)) > 0)
		iq_lines_feed(&l, buf, (size_t)got, grep_line, g);
	iq_lines_finish(&l, grep_line, g);
	iq_lines_release(&l);
	if (got < 0) {
		char esc[1024];
		iq_escape_display(esc, sizeof esc, g->name, strlen(g->name));
		iq_errorf("%s:%ld: %s (read stopped)", esc, l.lineno, d.msg);
		g->error = 1;
	}
}

static ssize_t member_more(void *src, char *buf, size_t n, struct iq_diag *d)
{
	return iq_member_read(src, buf, n, d);
}

/* A file given to match, and how the walker names it (its last path
 * component): members are printed under the name given. */
struct grep_arg {
	struct grep *g;
	const char *given;  /* trailing slashes removed */
	const char *base;   /* the walker's name of it */
};

/* path, a walker's name under the file given, as the user named it. */
static void given_name(const struct grep_arg *ga, const char *path, struct iq_buf *out)
{
	size_t bl = strlen(ga->base);
	if (strncmp(path, ga->base, bl) == 0 && path[bl] && strchr("!/", path[bl]))
		iq_buf_printf(out, "%s%s", ga->given, path + bl);
	else if (strcmp(path, ga->base) == 0)
		iq_buf_adds(out, ga->given);
	else
		iq_buf_adds(out, path);
}

static int grep_member(struct iq_member *m, void *u)
{
	struct grep_arg *ga = u;
	struct iq_buf name;
	iq_buf_init(&name);
	given_name(ga, m->path, &name);
	ga->g->name = name.p;
	grep_stream(ga->g, member_more, m);
	ga->g->name = NULL;
	iq_buf_release(&name);
	return 0;
}

/* The walker's problems: data lost or cut is an error, as grep's exit 2;
 * a link not followed is said only. */
static void grep_problem(const char *path, const char *msg, int kind, void *u)
{
	struct grep_arg *ga = u;
	char esc[1024], emsg[1024];
	struct iq_buf name;
	iq_buf_init(&name);
	given_name(ga, path, &name);
	iq_escape_display(esc, sizeof esc, name.p, name.len);
	iq_buf_release(&name);
	iq_escape_display(emsg, sizeof emsg, msg, strlen(msg));
	if (kind == IQ_PROBLEM_SKIPPED) {
		iq_warnf("%s: %s", esc, emsg);
	} else {
		iq_errorf("%s: %s", esc, emsg);
		ga->g->error = 1;
	}
}

/* Greps FILE ("-": stdin): whatever the walker makes of it (a plain file,
 * a directory, an archive, a compressed file). */
static void grep_path(struct grep *g, const char *path)
{
	char *given = iq_xstrdup(path);
	size_t n = strlen(given);
	while (n > 1 && given[n - 1] == '/')
		given[--n] = '\0';
	const char *slash = strrchr(given, '/');
	struct grep_arg ga = {g, given, strcmp(path, "-") == 0 ? "stdin" : slash ? slash + 1 : given};
	char *real = NULL;
	if (strcmp(ga.base, ".") == 0 || strcmp(ga.base, "..") == 0) {
		/* the walker names "." after the folder it is */
		real = realpath(given, NULL);
		if (real)
			ga.base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	}
	struct iq_walk_opts o = {.problem = grep_problem, .u = &ga};
	struct iq_diag d = {{0}};
	if (iq_bundle_walk(path, &o, grep_member, &d)) {
		iq_errorf("%s", d.msg);
		g->error = 1;
	}
	free(real);
	free(given);
}

/* Lines a signal could not decide (a PCRE2 limit) are not silently "no
 * match": a warning at the regex. */
static void warn_limit_hit(void *u, const struct iq_limit_hit *lh)
{
	char esc[1024];
	IQ_UNUSED(u);
	iq_escape_display(esc, sizeof esc, lh->msg, strlen(lh->msg));
	fprintf(stderr, "%s:%d:%d: warning: %s\n", lh->file, lh->line, lh->col, esc);
}

static int cmd_match(struct iq_ruleset *rs, const struct iq_args *a)
{
	struct hits h = {0};
	int npacks, rc = 0, nfiles = a->npos;
	char **argv = a->pos;
	const char *const *packs = iq_arg_all(a, "--pack", &npacks);
	char **paths = iq_xcalloc((size_t)npacks + 1, sizeof *paths);
	size_t npaths = 0;
	h.packs = iq_xcalloc((size_t)npacks + 1, sizeof *h.packs);
	h.want_explain = iq_arg_has(a, "--explain");
	iq_buf_init(&h.ids);
	iq_buf_init(&h.explain);
	for (int i = 0; i < npacks; i++) {
		struct stat st;
		if (stat(packs[i], &st) == 0)
			paths[npaths++] = (char *)packs[i];
		else
			h.packs[h.npacks++] = (char *)packs[i];
	}
	if (!rc)
		rc = load(rs, (int)npaths, paths);
	for (size_t i = 0; !rc && i < h.npacks; i++)
		if (!iq_rules_find(rs, h.packs[i])) {
			iq_errorf("no rule pack '%s' (see inquest rules list)", h.packs[i]);
			rc = IQ_EXIT_USAGE;
		}
	struct grep g = {rs, &h, NULL, NULL, 0, 0, 0};
	for (int i = 0; !rc && i < nfiles; i++)
		grep_path(&g, argv[i]);
	free(g.esc);
	/* grep's exit status: 0 a line matched, 1 none did, 2 an error */
	if (!rc)
		rc = g.error ? IQ_EXIT_USAGE : g.matched ? IQ_EXIT_OK : IQ_EXIT_VERDICT;
	iq_rules_set_source(rs, NULL);
	iq_rules_limit_hits(rs, warn_limit_hit, NULL, 1);
	iq_buf_release(&h.ids);
	iq_buf_release(&h.explain);
	free(h.packs);
	free(paths);
	return rc;
}

int iq_rules_load_checked(struct iq_ruleset *rs, const char *const *paths, int npaths)
{
	long errors = 0, warnings = 0;
	if (npaths) {
		/* the same check as `rules lint PACK...`, on a ruleset of its own */
		struct iq_ruleset lint;
		struct iq_diag d = {{0}};
		iq_rules_init(&lint);
		if (iq_rules_load_builtin_shared(&lint, &d) == 0)
			for (int i = 0; i < npaths; i++)
				iq_rules_lint_path(&lint, paths[i], stderr, &errors, &warnings);
		iq_rules_release(&lint);
	}
	if (errors) {
		iq_errorf("%ld error%s in the rule pack%s of --rules, as 'inquest rules lint' reports"
			  " them: nothing was run", errors, errors == 1 ? "" : "s", npaths == 1 ? "" : "s");
		return IQ_EXIT_RULES;
	}
	return iq_load_rules(rs, paths, npaths);
}

/* Runs fn on a fresh ruleset. */
static int with_rules(int (*fn)(struct iq_ruleset *rs, const struct iq_args *a),
		      const struct iq_args *a)
{
	struct iq_ruleset rs;
	iq_rules_init(&rs);
	int rc = fn(&rs, a);
	iq_rules_release(&rs);
	return rc;
}

static int run_list(struct iq_ruleset *rs, const struct iq_args *a)
{
	return cmd_list(rs, a->npos, a->pos);
}

static int run_lint(struct iq_ruleset *rs, const struct iq_args *a)
{
	return cmd_lint(rs, a->npos, a->pos);
}

static int run_test(struct iq_ruleset *rs, const struct iq_args *a)
{
	int rc = load(rs, a->npos, a->pos);
	if (rc)
		return rc;
	long passed = 0, failed = 0;
	iq_rules_test(rs, stdout, &passed, &failed);
	printf("rules: %ld passed, %ld failed\n", passed, failed);
	return failed ? IQ_EXIT_RULES : IQ_EXIT_OK;
}

static int run_explain(struct iq_ruleset *rs, const struct iq_args *a)
{
	char *args[2] = {a->pos[0], a->npos > 1 ? a->pos[1] : NULL};
	const char *lang = iq_arg(a, "--lang");
	return cmd_explain(rs, lang ? lang : "en", args);
}

int iq_cmd_rules_list(const struct iq_args *a) { return with_rules(run_list, a); }
int iq_cmd_rules_lint(const struct iq_args *a) { return with_rules(run_lint, a); }
int iq_cmd_rules_test(const struct iq_args *a) { return with_rules(run_test, a); }
int iq_cmd_rules_explain(const struct iq_args *a) { return with_rules(run_explain, a); }
int iq_cmd_rules_match(const struct iq_args *a) { return with_rules(cmd_match, a); }
