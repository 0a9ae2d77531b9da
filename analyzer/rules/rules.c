/* rules.c: loading rule packs from JSON, compiling their signal regexes
 * with PCRE2 (JIT), resolving references to shared signals, matching
 * records, and running the packs' test cases. See rules/README.md for the
 * pack format; lint.c adds the checks only `inquest rules lint` makes. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rules_int.h"

/* test_case: the case gives another result with the literal prefilter */
#define IQ_PF_MISMATCH 2

static pcre2_match_context *match_ctx;

/* The JSON Schema of packs sits beside them in rules/ (and the build embeds
 * every .json there) but is no pack. */
static int not_a_pack(const char *name)
{
	size_t n = strlen(name);
	return n >= 16 && strcmp(name + n - 16, "pack.schema.json") == 0;
}

pcre2_match_context *iq_rules_match_ctx(void)
{
	if (!match_ctx) {
		match_ctx = pcre2_match_context_create(NULL);
		pcre2_set_match_limit(match_ctx, IQ_RULES_MATCH_LIMIT);
		pcre2_set_depth_limit(match_ctx, IQ_RULES_DEPTH_LIMIT);
	}
	return match_ctx;
}

void iq_rules_init(struct iq_ruleset *rs)
{
	memset(rs, 0, sizeof *rs);
}

static void pack_free(struct iq_pack *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nall; i++) {
		struct iq_signal *s = &p->sig[i];
		for (size_t j = 0; j < s->nre; j++)
			pcre2_code_free(s->re[j]);
		free(s->lits);
		free(s->re);
		for (size_t j = 0; j < s->nexc; j++)
			pcre2_code_free(s->exc[j]);
		free(s->exc);
		for (size_t j = 0; j < s->nfields; j++)
			free(s->fields[j].name);
		free(s->fields);
		free(s->id);
		free(s->path);
		free(s->ref);
		free(s->limit_path);
		free(s->limit_first);
		iq_buf_release(&s->memo);
	}
	free(p->sig);
	free(p->file);
	free(p->id);
	free(p->text);
	json_decref(p->root);
	free(p);
}

void iq_rules_release(struct iq_ruleset *rs)
{
	for (size_t i = 0; i < rs->npacks; i++)
		pack_free(rs->packs[i]);
	free(rs->packs);
	for (size_t i = 0; i < rs->nshared; i++)
		pack_free(rs->shared[i]);
	free(rs->shared);
	if (rs->match_data)
		pcre2_match_data_free(rs->match_data);
	iq_buf_release(&rs->caps);
	iq_pf_free(rs->prefilter);
	iq_rules_sql_check_free(rs->sql_check);
	memset(rs, 0, sizeof *rs);
}

/* ---- diagnostics ---- */

void iq_lint_report(struct iq_lint *lc, int warn, const char *path, int key, const char *extra,
		    const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	int line = 1, col = 1;
	if (path)
		iq_json_pos(lc->text, lc->ntext, path, key, &line, &col);
	const char *what = warn ? "warning" : "error";
	if (warn)
		lc->warnings++;
	else
		lc->errors++;
	if (lc->out) {
		fprintf(lc->out, "%s:%d:%d: %s: %s\n", lc->file, line, col, what, msg);
		if (extra)
			fprintf(lc->out, "%s", extra);
		return;
	}
	if (!warn && lc->errors == 1)
		iq_diag_set(lc->d, IQ_ERR_RULES, "%s:%d:%d: %s: %s%s%s", lc->file, line, col, what, msg,
			    extra ? "\n" : "", extra ? extra : "");
}

/* ---- compiling ---- */

static const char *const kind_names[] = {"log", "event", "http", "gpu", "kernel", "pod", "config"};

static int kind_bit(const char *name, unsigned *bit)
{
	for (unsigned i = 0; i < IQ_ARRAY_LEN(kind_names); i++)
		if (strcmp(name, kind_names[i]) == 0) {
			*bit = 1u << i;
			return 0;
		}
	return -1;
}

pcre2_code *iq_rules_compile_re(struct iq_lint *lc, const char *what, const char *pat,
				const char *path)
{
	int err;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
				       PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &err, &off, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof msg);
		/* The pattern with a caret under PCRE2's offset (offsets count
		 * bytes; the caret lines up for ASCII patterns). */
		size_t plen = strlen(pat);
		char *extra = iq_xmalloc(plen + (size_t)off + 16);
		snprintf(extra, plen + (size_t)off + 16, "  %s\n  %*s^\n", pat, (int)off, "");
		iq_lint_report(lc, 0, path, 0, extra, "invalid regex in %s at offset %zu: %s", what,
			       (size_t)off, (char *)msg);
		free(extra);
		return NULL;
	}
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
	return re;
}

static struct iq_pack *find_in(struct iq_pack **v, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i]->id, id) == 0)
			return v[i];
	return NULL;
}

/* The shared signal "pack/signal" names, or NULL. */
static struct iq_signal *find_shared(struct iq_ruleset *rs, const char *ref)
{
	const char *slash = strchr(ref, '/');
	if (!slash)
		return NULL;
	for (size_t i = 0; i < rs->nshared; i++) {
		struct iq_pack *p = rs->shared[i];
		if (strlen(p->id) != (size_t)(slash - ref) || memcmp(p->id, ref, (size_t)(slash - ref)))
			continue;
		for (size_t j = 0; j < p->nall; j++)
			if (strcmp(p->sig[j].id, slash + 1) == 0)
				return &p->sig[j];
	}
	return NULL;
}

static void compile_fields(struct iq_lint *lc, struct iq_signal *s, json_t *fields, const char *path)
{
	const char *k;
	json_t *v;
	char sub[256];
	if (!fields)
		return;
	if (!json_is_object(fields)) {
		snprintf(sub, sizeof sub, "%s.fields", path);
		iq_lint_report(lc, 0, sub, 0, NULL, "signal '%s': \"fields\" must be an object", s->id);
		return;
	}
	s->fields = iq_xcalloc(json_object_size(fields) + 1, sizeof *s->fields);
	json_object_foreach(fields, k, v) {
		const char *t = json_string_value(v);
		enum iq_field_type ty;
		if (t && strcmp(t, "size") == 0)
			ty = IQ_FIELD_SIZE;
		else if (t && (strcmp(t, "int") == 0 || strcmp(t, "count") == 0))
			ty = IQ_FIELD_INT;
		else if (t && strcmp(t, "tokens") == 0)
			ty = IQ_FIELD_TOKENS;
		else if (t && strcmp(t, "text") == 0)
			ty = IQ_FIELD_TEXT;
		else {
			snprintf(sub, sizeof sub, "%s.fields.%s", path, k);
			iq_lint_report(lc, 0, sub, 0, NULL,
				       "signal '%s': field '%s' has unknown type (size, int, count, tokens, text)",
				       s->id, k);
			continue;
		}
		s->fields[s->nfields].name = iq_xstrdup(k);
		s->fields[s->nfields].type = ty;
		s->nfields++;
	}
}

static void compile_exceptions(struct iq_lint *lc, struct iq_signal *s, json_t *exc, const char *path)
{
	char sub[256], what[200];
	size_t i;
	json_t *v;
	if (!exc)
		return;
	if (!json_is_array(exc)) {
		snprintf(sub, sizeof sub, "%s.exceptions", path);
		iq_lint_report(lc, 0, sub, 0, NULL, "signal '%s': \"exceptions\" must be an array", s->id);
		return;
	}
	s->exc = iq_xcalloc(json_array_size(exc) + 1, sizeof *s->exc);
	json_array_foreach(exc, i, v) {
		const char *pat = json_is_string(v) ? json_string_value(v)
			: json_string_value(json_object_get(v, "pattern"));
		if (json_is_string(v))
			snprintf(sub, sizeof sub, "%s.exceptions[%zu]", path, i);
		else
			snprintf(sub, sizeof sub, "%s.exceptions[%zu].pattern", path, i);
		if (!pat) {
			iq_lint_report(lc, 0, sub, 0, NULL,
				       "signal '%s': exception %zu is not a regex string or {\"pattern\": ...}",
				       s->id, i + 1);
			continue;
		}
		snprintf(what, sizeof what, "exception %zu of signal '%s'", i + 1, s->id);
		pcre2_code *re = iq_rules_compile_re(lc, what, pat, sub);
		if (re)
			s->exc[s->nexc++] = re;
	}
}

static const char *const detector_names[] = {"surge", "sawtooth", "crashloop", "cascade",
					       "host-oom", "ingress-flood", "tie"};

static void compile_signal(struct iq_lint *lc, struct iq_ruleset *rs, struct iq_pack *p,
			   struct iq_signal *s, json_t *obj, const char *path, enum iq_section sec)
{
	char sub[256], what[200];
	s->obj = obj;
	s->pack = p;
	s->section = sec;
	s->path = iq_xstrdup(path);
	json_t *ref = json_object_get(obj, "ref");
	json_t *id = json_object_get(obj, "id");
	json_t *pats = json_object_get(obj, "patterns");
	json_t *det = json_object_get(obj, "detector");
	if (ref) {
		snprintf(sub, sizeof sub, "%s.ref", path);
		const char *r = json_string_value(ref);
		const char *slash = r ? strchr(r, '/') : NULL;
		if (!slash || slash == r || !slash[1]) {
			iq_lint_report(lc, 0, sub, 0, NULL,
				       "\"ref\" must name a shared signal as \"PACK/SIGNAL\" (e.g. \"common/cuda-oom\")");
			s->id = iq_xstrdup(json_is_string(id) ? json_string_value(id) : "?");
		} else {
			s->ref = iq_xstrdup(r);
			s->id = iq_xstrdup(json_is_string(id) ? json_string_value(id) : slash + 1);
			if (p->shared)
				iq_lint_report(lc, 0, sub, 0, NULL,
					       "a shared pack defines signals; it cannot refer to '%s'", r);
			else if (!(s->target = find_shared(rs, r)))
				iq_lint_report(lc, 0, sub, 0, NULL,
					       "dangling ref '%s': no loaded shared pack defines it", r);
		}
	} else if (!json_is_string(id)) {
		iq_lint_report(lc, 0, path, 0, NULL, "an entry of \"%s\" has no \"id\" string",
			       iq_section_name(sec));
		s->id = iq_xstrdup("?");
	} else {
		s->id = iq_xstrdup(json_string_value(id));
	}
	if ((ref != NULL) + (pats != NULL) + (det != NULL) != 1)
		iq_lint_report(lc, 0, path, 0, NULL,
			       "signal '%s' needs exactly one of \"patterns\", \"detector\" or \"ref\"", s->id);
	json_t *kinds = json_object_get(obj, "kinds");
	size_t i;
	json_t *v;
	if (kinds && !json_is_array(kinds)) {
		snprintf(sub, sizeof sub, "%s.kinds", path);
		iq_lint_report(lc, 0, sub, 0, NULL, "signal '%s': \"kinds\" must be an array", s->id);
	}
	json_array_foreach(kinds, i, v) {
		unsigned bit;
		if (!json_is_string(v) || kind_bit(json_string_value(v), &bit)) {
			snprintf(sub, sizeof sub, "%s.kinds[%zu]", path, i);
			iq_lint_report(lc, 0, sub, 0, NULL,
				       "signal '%s': unknown record kind in \"kinds\" (log, event, http, gpu, kernel, pod, config)",
				       s->id);
			continue;
		}
		s->kinds |= bit;
	}
	compile_fields(lc, s, json_object_get(obj, "fields"), path);
	compile_exceptions(lc, s, json_object_get(obj, "exceptions"), path);
	if (det) {
		const char *name = json_string_value(json_object_get(det, "name"));
		snprintf(sub, sizeof sub, "%s.detector%s", path, name ? ".name" : "");
		int known = 0;
		for (size_t k = 0; name && k < IQ_ARRAY_LEN(detector_names); k++)
			known |= strcmp(name, detector_names[k]) == 0;
		if (!json_is_object(det) || !name)
			iq_lint_report(lc, 0, sub, 0, NULL,
				       "signal '%s': \"detector\" must be {\"name\": ..., \"params\": {...}}", s->id);
		else if (!known)
			iq_lint_report(lc, 0, sub, 0, NULL,
				       "signal '%s': unknown detector '%s' (surge, sawtooth, crashloop, cascade, host-oom, ingress-flood, tie)",
				       s->id, name);
		else
			s->detector = name;
	}
	if (!pats)
		return;
	if (!json_is_array(pats) || json_array_size(pats) == 0) {
		snprintf(sub, sizeof sub, "%s.patterns", path);
		iq_lint_report(lc, 0, sub, 0, NULL,
			       "signal '%s': \"patterns\" must be a non-empty array of strings", s->id);
		return;
	}
	s->re = iq_xcalloc(json_array_size(pats), sizeof *s->re);
	s->lits = iq_xcalloc(json_array_size(pats), sizeof *s->lits);
	json_array_foreach(pats, i, v) {
		snprintf(sub, sizeof sub, "%s.patterns[%zu]", path, i);
		if (!json_is_string(v)) {
			iq_lint_report(lc, 0, sub, 0, NULL, "signal '%s': pattern %zu is not a string",
				       s->id, i + 1);
			continue;
		}
		snprintf(what, sizeof what, "signal '%s' (pattern %zu)", s->id, i + 1);
		pcre2_code *re = iq_rules_compile_re(lc, what, json_string_value(v), sub);
		if (re) {
			struct iq_pat_lits *pl = &s->lits[s->nre];
			pl->nalt = (unsigned char)iq_pf_extract(json_string_value(v), pl->lit, IQ_PF_ALTS);
			if (!pl->nalt)
				iq_lint_report(lc, 1, sub, 0, NULL,
					       "signal '%s': pattern %zu has no literal of %d or more characters "
					       "outside groups in each of its (at most %d) alternatives: it runs "
					       "on every record the prefilter would skip", s->id, i + 1, 3,
					       IQ_PF_ALTS);
			s->re[s->nre++] = re;
		}
	}
}

/* Compiles a pack from text; NULL (errors reported to lc) when it cannot
 * be used. */
static struct iq_pack *compile_pack(struct iq_lint *lc, struct iq_ruleset *rs, const char *text,
				    size_t n)
{
	json_error_t je;
	json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		lc->errors++;
		if (lc->out)
			fprintf(lc->out, "%s:%d:%d: error: %s\n", lc->file, je.line, je.column, je.text);
		else
			iq_diag_set(lc->d, IQ_ERR_RULES, "%s:%d:%d: error: %s", lc->file, je.line,
				    je.column, je.text);
		return NULL;
	}
	struct iq_pack *p = iq_xcalloc(1, sizeof *p);
	p->file = iq_xstrdup(lc->file);
	p->root = root;
	p->text = iq_xstrndup(text, n);
	p->ntext = n;
	long before = lc->errors;
	json_t *id = json_object_get(root, "id");
	if (!json_is_object(root) || !json_is_string(id)) {
		iq_lint_report(lc, 0, json_is_object(root) && id ? "id" : "", 0, NULL,
			       "a pack is an object with an \"id\" string");
		pack_free(p);
		return NULL;
	}
	p->id = iq_xstrdup(json_string_value(id));
	json_t *kind = json_object_get(root, "kind");
	if (kind && !(json_is_string(kind) && (strcmp(json_string_value(kind), "pattern") == 0 ||
					      strcmp(json_string_value(kind), "shared") == 0)))
		iq_lint_report(lc, 0, "kind", 0, NULL, "pack '%s': \"kind\" is \"pattern\" or \"shared\"", p->id);
	p->shared = kind && json_is_string(kind) && strcmp(json_string_value(kind), "shared") == 0;
	json_t *sec[IQ_SEC_COUNT];
	size_t total = 0;
	for (int k = 0; k < IQ_SEC_COUNT; k++) {
		sec[k] = json_object_get(root, iq_section_name((enum iq_section)k));
		if (sec[k] && !json_is_array(sec[k])) {
			iq_lint_report(lc, 0, iq_section_name((enum iq_section)k), 0, NULL,
				       "pack '%s': \"%s\" must be an array", p->id,
				       iq_section_name((enum iq_section)k));
			sec[k] = NULL;
		}
		if (p->shared && k != IQ_SEC_SIGNALS && sec[k]) {
			iq_lint_report(lc, 0, iq_section_name((enum iq_section)k), 1, NULL,
				       "shared pack '%s' holds only \"signals\"", p->id);
			sec[k] = NULL;
		}
		total += json_array_size(sec[k]);
	}
	if (!sec[IQ_SEC_SIGNALS])
		iq_lint_report(lc, 0, "", 0, NULL, "pack '%s' has no \"signals\" array", p->id);
	p->sig = iq_xcalloc(total + 1, sizeof *p->sig);
	for (int k = 0; k < IQ_SEC_COUNT; k++) {
		size_t i;
		json_t *v;
		p->off[k] = p->nall;
		json_array_foreach(sec[k], i, v) {
			char path[64];
			snprintf(path, sizeof path, "%s[%zu]", iq_section_name((enum iq_section)k), i);
			if (!json_is_object(v)) {
				iq_lint_report(lc, 0, path, 0, NULL, "%s entry %zu is not an object",
					       iq_section_name((enum iq_section)k), i + 1);
				continue;
			}
			compile_signal(lc, rs, p, &p->sig[p->nall++], v, path, (enum iq_section)k);
			p->n[k]++;
		}
	}
	if (lc->errors > before && !lc->out) {
		pack_free(p);
		return NULL;
	}
	return p;
}

/* Points every reference at the current shared packs (after one of them
 * was added or replaced). */
static void relink(struct iq_ruleset *rs)
{
	for (size_t i = 0; i < rs->npacks; i++) {
		struct iq_pack *p = rs->packs[i];
		for (size_t j = 0; j < p->nall; j++)
			if (p->sig[j].ref)
				p->sig[j].target = find_shared(rs, p->sig[j].ref);
	}
}

static void add_pack(struct iq_ruleset *rs, struct iq_pack *p)
{
	/* the literals change with the packs: rebuilt at the next match */
	iq_pf_free(rs->prefilter);
	rs->prefilter = NULL;
	struct iq_pack ***v = p->shared ? &rs->shared : &rs->packs;
	size_t *n = p->shared ? &rs->nshared : &rs->npacks;
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i]->id, p->id) == 0) {
			pack_free((*v)[i]);
			(*v)[i] = p;
			if (p->shared)
				relink(rs);
			return;
		}
	*v = iq_xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = p;
	if (p->shared)
		relink(rs);
}

static void ensure_match_data(struct iq_ruleset *rs)
{
	if (!rs->match_data)
		rs->match_data = pcre2_match_data_create(64, NULL);
	iq_rules_match_ctx();
}

int iq_rules_load_text(struct iq_ruleset *rs, const char *name, const char *text, size_t n,
		       struct iq_diag *d)
{
	struct iq_lint lc = {.file = name, .text = text, .ntext = n, .d = d};
	struct iq_pack *p = compile_pack(&lc, rs, text, n);
	if (!p)
		return IQ_ERR_RULES;
	/* SQL that would write, attach or reach outside: refused here, not
	 * only by lint */
	if (iq_rules_guard_questions(&lc, rs, p)) {
		pack_free(p);
		return IQ_ERR_RULES;
	}
	ensure_match_data(rs);
	add_pack(rs, p);
	return 0;
}

int iq_rules_lint_text(struct iq_ruleset *rs, const char *name, const char *text, size_t n,
		       FILE *out, long *errors, long *warnings)
{
	struct iq_lint lc = {.file = name, .text = text, .ntext = n, .out = out};
	struct iq_pack *p = compile_pack(&lc, rs, text, n);
	if (p) {
		struct iq_pack *old = find_in(p->shared ? rs->shared : rs->packs,
					      p->shared ? rs->nshared : rs->npacks, p->id);
		if (old && old->linted)
			iq_lint_report(&lc, 0, "id", 0, NULL, "duplicate pack id '%s' (also in %s)", p->id,
				       old->file);
		iq_rules_lint_pack(&lc, rs, p);
		p->linted = 1;
		ensure_match_data(rs);
		add_pack(rs, p);
	}
	*errors += lc.errors;
	*warnings += lc.warnings;
	return lc.errors ? IQ_ERR_RULES : 0;
}

/* Reads a whole file into b (at most 64 MiB). */
static int read_file(const char *path, struct iq_buf *b, struct iq_diag *d)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return iq_diag_set(d, IQ_ERR_RULES, "cannot open rule pack '%s': %s", path, strerror(errno));
	char chunk[65536];
	size_t got;
	while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (b->len + got > (64u << 20)) {
			fclose(f);
			return iq_diag_set(d, IQ_ERR_RULES, "%s: rule pack larger than 64 MiB", path);
		}
		if (iq_buf_add(b, chunk, got)) {
			fclose(f);
			return iq_diag_set(d, IQ_ERR_NOMEM, "out of memory");
		}
	}
	fclose(f);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Calls fn for path, or for every *.json in the directory path (sorted),
 * with the file's text; stops at fn's first non-zero result. */
static int each_file(const char *path, int (*fn)(void *u, const char *file, const char *text, size_t n),
		     void *u, struct iq_diag *d)
{
	char **names = NULL;
	size_t n = 0;
	DIR *dir = opendir(path);
	if (!dir) {
		names = iq_xmalloc(sizeof *names);
		names[n++] = iq_xstrdup(path);
	} else {
		struct dirent *e;
		while ((e = readdir(dir)) != NULL) {
			size_t l = strlen(e->d_name);
			if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0 && e->d_name[0] != '.' &&
			    !not_a_pack(e->d_name)) {
				names = iq_xrealloc(names, (n + 1) * sizeof *names);
				size_t pl = strlen(path) + l + 2;
				names[n] = iq_xmalloc(pl);
				snprintf(names[n], pl, "%s/%s", path, e->d_name);
				n++;
			}
		}
		closedir(dir);
		if (n)
			qsort(names, n, sizeof *names, cmp_str);
	}
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (!rc) {
			struct iq_buf b;
			iq_buf_init(&b);
			rc = read_file(names[i], &b, d);
			if (!rc)
				rc = fn(u, names[i], b.p ? b.p : "", b.len);
			iq_buf_release(&b);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

struct load_ctx {
	struct iq_ruleset *rs;
	struct iq_diag *d;
	FILE *out;
	long *errors, *warnings;
};

static int load_one(void *u, const char *file, const char *text, size_t n)
{
	struct load_ctx *c = u;
	return iq_rules_load_text(c->rs, file, text, n, c->d);
}

int iq_rules_load_path(struct iq_ruleset *rs, const char *path, struct iq_diag *d)
{
	struct load_ctx c = {rs, d, NULL, NULL, NULL};
	return each_file(path, load_one, &c, d);
}

static int lint_one(void *u, const char *file, const char *text, size_t n)
{
	struct load_ctx *c = u;
	iq_rules_lint_text(c->rs, file, text, n, c->out, c->errors, c->warnings);
	return 0; /* go on with the next file */
}

int iq_rules_lint_path(struct iq_ruleset *rs, const char *path, FILE *out, long *errors,
		       long *warnings)
{
	struct iq_diag d = {{0}};
	struct load_ctx c = {rs, &d, out, errors, warnings};
	int rc = each_file(path, lint_one, &c, &d);
	if (rc) {
		fprintf(out, "%s\n", d.msg);
		(*errors)++;
	}
	return *errors ? IQ_ERR_RULES : 0;
}

/* The shipped packs, embedded at build time. */
struct iq_embedded_file {
	const char *name;
	const char *text;
};
extern const struct iq_embedded_file iq_builtin_rules[];

int iq_rules_load_builtin(struct iq_ruleset *rs, struct iq_diag *d)
{
	for (const struct iq_embedded_file *f = iq_builtin_rules; f->name; f++) {
		if (not_a_pack(f->name))
			continue;
		int rc = iq_rules_load_text(rs, f->name, f->text, strlen(f->text), d);
		if (rc)
			return rc;
	}
	return 0;
}

int iq_rules_lint_builtin(struct iq_ruleset *rs, FILE *out, long *errors, long *warnings)
{
	for (const struct iq_embedded_file *f = iq_builtin_rules; f->name; f++)
		if (!not_a_pack(f->name))
			iq_rules_lint_text(rs, f->name, f->text, strlen(f->text), out, errors, warnings);
	return *errors ? IQ_ERR_RULES : 0;
}

int iq_rules_load_builtin_shared(struct iq_ruleset *rs, struct iq_diag *d)
{
	for (const struct iq_embedded_file *f = iq_builtin_rules; f->name; f++) {
		if (not_a_pack(f->name))
			continue;
		json_t *root = json_loads(f->text, 0, NULL);
		const char *kind = json_string_value(json_object_get(root, "kind"));
		const char *id = json_string_value(json_object_get(root, "id"));
		int shared = kind && id && strcmp(kind, "shared") == 0;
		int rc = shared ? iq_rules_load_text(rs, f->name, f->text, strlen(f->text), d) : 0;
		if (shared && rc == 0) {
			struct iq_pack *p = find_in(rs->shared, rs->nshared, id);
			if (p)
				p->base = 1;
		}
		json_decref(root);
		if (rc)
			return rc;
	}
	ensure_match_data(rs);
	return 0;
}

/* ---- matching ---- */

static void json_escape(struct iq_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	iq_buf_addc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			iq_buf_addc(b, '\\');
			iq_buf_addc(b, (char)c);
		} else if (c < 0x20) {
			char e[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
			iq_buf_add(b, e, 6);
		} else {
			iq_buf_addc(b, (char)c);
		}
	}
	iq_buf_addc(b, '"');
}

static const struct iq_field *field_of(const struct iq_signal *s, const char *name)
{
	for (size_t i = 0; i < s->nfields; i++)
		if (strcmp(s->fields[i].name, name) == 0)
			return &s->fields[i];
	return NULL;
}

/* An integer from a capture: digits with ',' or '_' separators; with
 * tokens, a k/K suffix multiplies by 1024. */
static long long parse_int(const char *v, size_t vn, int tokens)
{
	long long x = 0;
	size_t k = 0;
	int neg = vn && v[0] == '-';
	if (neg)
		k++;
	for (; k < vn; k++) {
		if (v[k] >= '0' && v[k] <= '9') {
			if (x < 100000000000000000LL)
				x = x * 10 + (v[k] - '0');
		} else if (v[k] != ',' && v[k] != '_') {
			break;
		}
	}
	if (tokens && k < vn && (v[k] == 'k' || v[k] == 'K'))
		x *= 1024;
	return neg ? -x : x;
}

/* A pattern may name the path it matched with a mark, (*MARK:key=value):
 * the pair becomes a text field of the match (the framework of an OOM
 * message, say), unless a named group called key captured something. A
 * mark that is not key=value with key made of [a-z0-9_] is ignored. */
static void mark_field(pcre2_match_data *md, struct iq_buf *out, int first)
{
	const char *m = (const char *)pcre2_get_mark(md);
	const char *eq = m ? strchr(m, '=') : NULL;
	if (!eq || eq == m || eq - m >= 64)
		return;
	for (const char *c = m; c < eq; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return;
	char key[64];
	memcpy(key, m, (size_t)(eq - m));
	key[eq - m] = '\0';
	PCRE2_SIZE len;
	if (pcre2_substring_length_byname(md, (PCRE2_SPTR)key, &len) == 0)
		return;
	if (!first)
		iq_buf_addc(out, ',');
	json_escape(out, key, strlen(key));
	iq_buf_addc(out, ':');
	json_escape(out, eq + 1, strlen(eq + 1));
}

/* Writes the named captures of the last match, and the field its mark
 * names, as a JSON object. */
static void captures_json(const struct iq_signal *s, pcre2_code *re, pcre2_match_data *md,
			  const char *subj, struct iq_buf *out)
{
	uint32_t count, size;
	PCRE2_SPTR table;
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
	int first = 1;
	iq_buf_reset(out);
	iq_buf_addc(out, '{');
	pcre2_pattern_info(re, PCRE2_INFO_NAMECOUNT, &count);
	pcre2_pattern_info(re, PCRE2_INFO_NAMEENTRYSIZE, &size);
	pcre2_pattern_info(re, PCRE2_INFO_NAMETABLE, &table);
	uint32_t npairs = pcre2_get_ovector_count(md);
	for (uint32_t i = 0; i < count; i++) {
		PCRE2_SPTR e = table + i * size;
		unsigned grp = ((unsigned)e[0] << 8) | e[1];
		const char *name = (const char *)e + 2;
		if (grp >= npairs || ov[2 * grp] == PCRE2_UNSET)
			continue;
		const char *v = subj + ov[2 * grp];
		size_t vn = ov[2 * grp + 1] - ov[2 * grp];
		const struct iq_field *f = field_of(s, name);
		if (!first)
			iq_buf_addc(out, ',');
		first = 0;
		json_escape(out, name, strlen(name));
		iq_buf_addc(out, ':');
		if (f && (f->type == IQ_FIELD_INT || f->type == IQ_FIELD_TOKENS)) {
			iq_buf_printf(out, "%lld", parse_int(v, vn, f->type == IQ_FIELD_TOKENS));
			continue;
		}
		json_escape(out, v, vn);
		if (f && f->type == IQ_FIELD_SIZE) {
			char key[160];
			int64_t bytes = iq_parse_size(v, vn);
			snprintf(key, sizeof key, "%s_bytes", name);
			iq_buf_addc(out, ',');
			json_escape(out, key, strlen(key));
			if (bytes >= 0)
				iq_buf_printf(out, ":%lld", (long long)bytes);
			else
				iq_buf_adds(out, ":null");
		}
	}
	mark_field(md, out, first);
	iq_buf_addc(out, '}');
}

/* The IQ_LIM_* bit of a pcre2_match result, 0 for any other. */
static unsigned limit_bit(int rc)
{
	switch (rc) {
	case PCRE2_ERROR_MATCHLIMIT:
		return IQ_LIM_MATCH;
	case PCRE2_ERROR_DEPTHLIMIT:
		return IQ_LIM_DEPTH;
	case PCRE2_ERROR_HEAPLIMIT:
		return IQ_LIM_HEAP;
	case PCRE2_ERROR_JIT_STACKLIMIT:
		return IQ_LIM_JIT_STACK;
	default:
		return 0;
	}
}

/* JIT code recurses on the machine stack (32 KiB by default) where the
 * interpreter keeps its frames on the heap: a regex the JIT cannot finish
 * for want of stack is run again by the interpreter, so that only the
 * match, depth and heap limits decide. */
int iq_rules_run_re(pcre2_code *re, const char *text, size_t n, pcre2_match_data *md)
{
	iq_rules_match_ctx();
	int rc = pcre2_match(re, (PCRE2_SPTR)text, n, 0, 0, md, match_ctx);
	if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
		rc = pcre2_match(re, (PCRE2_SPTR)text, n, 0, PCRE2_NO_JIT, md, match_ctx);
	return rc;
}

/* Counts a PCRE2 limit hit by regex i of s's "patterns" (exc = 0) or
 * "exceptions" (exc = 1) on the record being matched: once per record, and
 * the first one remembers which regex and where. */
static void limit_hit(struct iq_ruleset *rs, struct iq_signal *s, unsigned bit, int exc, size_t i)
{
	s->limit_kinds |= bit;
	if (s->limit_gen == rs->gen && s->limit_lines)
		return;
	s->limit_gen = rs->gen;
	if (s->limit_lines++)
		return;
	char path[320];
	if (!exc)
		snprintf(path, sizeof path, "%s.patterns[%zu]", s->path, i);
	else
		snprintf(path, sizeof path, "%s.exceptions[%zu]%s", s->path, i,
			 json_is_string(json_array_get(json_object_get(s->obj, "exceptions"), i))
				 ? "" : ".pattern");
	free(s->limit_path);
	s->limit_path = iq_xstrdup(path);
	free(s->limit_first);
	s->limit_first = NULL;
	if (rs->source) {
		size_t n = strlen(rs->source) + 24;
		s->limit_first = iq_xmalloc(n);
		snprintf(s->limit_first, n, "%s:%ld", rs->source, rs->line);
	}
}

/* Does one of s's exceptions match? An exception that hits a PCRE2 limit
 * does not cancel the signal (and the hit is counted). */
static int excepted(struct iq_ruleset *rs, struct iq_signal *s, const char *text, size_t n)
{
	for (size_t i = 0; i < s->nexc; i++) {
		int rc = iq_rules_run_re(s->exc[i], text, n, rs->match_data);
		if (rc >= 0)
			return 1;
		unsigned bit = limit_bit(rc);
		if (bit)
			limit_hit(rs, s, bit, 1, i);
	}
	return 0;
}

/* Matches one regex signal; 1 matched (captures in out), 0 not. A regex
 * that hits a PCRE2 limit counts as not matching; the hit is counted for
 * iq_rules_limit_hits. */
static int match_regex(struct iq_ruleset *rs, struct iq_signal *s, const char *text,
		       size_t n, struct iq_buf *out)
{
	pcre2_match_data *md = rs->match_data;
	const struct iq_prefilter *pf = rs->pf_active ? rs->prefilter : NULL;
	for (size_t i = 0; i < s->nre; i++) {
		if (pf && s->lits[i].nalt) {
			int seen = 0;
			for (unsigned a = 0; a < s->lits[i].nalt && !seen; a++)
				seen = pf->seen[s->lits[i].id[a]] == pf->gen;
			if (!seen)
				continue; /* none of its literals is in the text */
		}
		int rc = iq_rules_run_re(s->re[i], text, n, md);
		if (rc >= 0) {
			captures_json(s, s->re[i], md, text, out);
			return !excepted(rs, s, text, n);
		}
		unsigned bit = limit_bit(rc);
		if (bit)
			limit_hit(rs, s, bit, 0, i);
	}
	return 0;
}

/* Matches a signal of a pattern pack against the record numbered rs->gen:
 * 1 with *caps set (valid until the next match), 0 not. A reference uses
 * its shared signal's result, computed once per record. */
static int eval_signal(struct iq_ruleset *rs, struct iq_signal *s, const char *text,
		       size_t n, const char **caps)
{
	if (s->target) {
		struct iq_signal *t = s->target;
		if (t->memo_gen != rs->gen) {
			t->memo_gen = rs->gen;
			t->memo_hit = t->nre && match_regex(rs, t, text, n, &t->memo) == 1;
		}
		if (!t->memo_hit || excepted(rs, s, text, n))
			return 0;
		*caps = t->memo.p;
		return 1;
	}
	if (!s->nre || match_regex(rs, s, text, n, &rs->caps) != 1)
		return 0;
	*caps = rs->caps.p;
	return 1;
}

static unsigned effective_kinds(const struct iq_signal *s)
{
	if (s->kinds || !s->target)
		return s->kinds;
	return s->target->kinds;
}

static int match_all(struct iq_ruleset *rs, const struct iq_record *r, unsigned bit, const char *text,
		     iq_match_fn fn, void *u);
static struct iq_prefilter *prefilter_of(struct iq_ruleset *rs);

/* Gives every pattern's literals an id in a new prefilter. */
static void pf_signals(struct iq_prefilter *pf, struct iq_pack *p)
{
	for (size_t j = 0; j < p->nall; j++) {
		struct iq_signal *s = &p->sig[j];
		if (s->nre || s->target) {
			unsigned k = effective_kinds(s);
			pf->kinds |= k ? k : ~0u;
			/* a regex the prefilter knows no literal of runs on
			 * every record of its kinds */
			const struct iq_signal *r = s->target ? s->target : s;
			for (size_t i = 0; i < r->nre; i++)
				if (!r->lits[i].nalt)
					pf->always |= k ? k : ~0u;
		}
		for (size_t i = 0; i < s->nre; i++)
			for (unsigned a = 0; a < s->lits[i].nalt; a++)
				s->lits[i].id[a] = iq_pf_add(pf, s->lits[i].lit[a]);
	}
}

static struct iq_prefilter *prefilter_of(struct iq_ruleset *rs)
{
	if (!rs->prefilter) {
		struct iq_prefilter *pf = iq_pf_new();
		for (size_t i = 0; i < rs->npacks; i++)
			pf_signals(pf, rs->packs[i]);
		for (size_t i = 0; i < rs->nshared; i++)
			pf_signals(pf, rs->shared[i]);
		size_t before = pf->nlits;
		rs->watch_only = 0;
		for (size_t k = 0; k < rs->nwatch; k++) {
			rs->watch_id[k] = iq_pf_add(pf, rs->watch[k]);
			/* new to the prefilter, and not a repeat of an earlier word */
			int fresh = rs->watch_id[k] >= before;
			for (size_t i = 0; i < k && fresh; i++)
				fresh = rs->watch_id[i] != rs->watch_id[k];
			if (fresh)
				rs->watch_only |= 1u << k;
		}
		rs->prefilter = pf;
	}
	return rs->prefilter;
}

int iq_rules_match(struct iq_ruleset *rs, const struct iq_record *r, iq_match_fn fn, void *u)
{
	unsigned bit = 1u << r->kind;
	const char *text = r->text.p ? r->text.p : "";
	struct iq_prefilter *pf = prefilter_of(rs);
	rs->watched = -1;
	/* no regex looks at this kind of record (load balancer lines, GPU
	 * samples): nothing can match */
	if (!(pf->kinds & bit))
		return 0;
	rs->gen++;
	rs->line = r->line;
	iq_pf_scan(pf, text, r->text.n);
	uint32_t nsig = pf->nseen;
	if (rs->nwatch) {
		long found = 0;
		for (size_t k = 0; k < rs->nwatch; k++)
			if (pf->seen[rs->watch_id[k]] == pf->gen) {
				found |= 1L << k;
				nsig -= rs->watch_only >> k & 1;
			}
		rs->watched = found;
	}
	/* no literal in the text: only regexes without literals could match */
	if (!nsig && !(pf->always & bit))
		return 0;
	rs->pf_active = 1;
	int rc = match_all(rs, r, bit, text, fn, u);
	rs->pf_active = 0;
	return rc;
}

void iq_rules_watch(struct iq_ruleset *rs, const char *const *lits, size_t n)
{
	rs->watch = lits;
	rs->nwatch = n < 32 ? n : 32;
	rs->watched = -1;
	if (rs->prefilter) { /* built without them: again at the next match */
		iq_pf_free(rs->prefilter);
		rs->prefilter = NULL;
	}
}

long iq_rules_watched(const struct iq_ruleset *rs)
{
	return rs->nwatch ? rs->watched : -1;
}

static int match_all(struct iq_ruleset *rs, const struct iq_record *r, unsigned bit, const char *text,
		     iq_match_fn fn, void *u)
{
	for (size_t i = 0; i < rs->npacks; i++) {
		struct iq_pack *p = rs->packs[i];
		for (size_t j = 0; j < p->nall; j++) {
			struct iq_signal *s = &p->sig[j];
			unsigned kinds = effective_kinds(s);
			const char *caps;
			if (kinds && !(kinds & bit))
				continue;
			if (eval_signal(rs, s, text, r->text.n, &caps) == 1) {
				int rc = fn(u, p->id, s->id, caps);
				if (rc)
					return rc;
			}
		}
	}
	return 0;
}

/* ---- accessors ---- */

const char *iq_pack_id(const struct iq_pack *p) { return p->id; }
const char *iq_pack_file(const struct iq_pack *p) { return p->file; }
size_t iq_pack_signal_count(const struct iq_pack *p) { return p->n[IQ_SEC_SIGNALS]; }
const struct iq_signal *iq_pack_signal(const struct iq_pack *p, size_t i) { return &p->sig[p->off[IQ_SEC_SIGNALS] + i]; }
const char *iq_signal_id(const struct iq_signal *s) { return s->id; }
int iq_pack_is_shared(const struct iq_pack *p) { return p->shared; }
int iq_pack_is_base(const struct iq_pack *p) { return p->base; }
size_t iq_rules_shared_count(const struct iq_ruleset *rs) { return rs->nshared; }
const struct iq_pack *iq_rules_shared_pack(const struct iq_ruleset *rs, size_t i) { return rs->shared[i]; }
size_t iq_pack_section_count(const struct iq_pack *p, enum iq_section sec) { return p->n[sec]; }
enum iq_section iq_signal_section(const struct iq_signal *s) { return s->section; }
const char *iq_signal_ref(const struct iq_signal *s) { return s->ref; }
const struct iq_signal *iq_signal_target(const struct iq_signal *s) { return s->target; }
unsigned iq_signal_kinds(const struct iq_signal *s) { return effective_kinds(s); }
const char *iq_signal_detector(const struct iq_signal *s) { return s->detector; }
json_t *iq_signal_json(const struct iq_signal *s) { return s->obj; }

const struct iq_signal *iq_pack_section_signal(const struct iq_pack *p, enum iq_section sec, size_t i)
{
	return &p->sig[p->off[sec] + i];
}

const char *iq_section_name(enum iq_section sec)
{
	static const char *const names[] = {"signals", "boundaries", "facts"};
	return sec < IQ_SEC_COUNT ? names[sec] : "?";
}

const struct iq_signal *iq_pack_find_signal(const struct iq_pack *p, const char *id)
{
	for (size_t i = 0; i < p->nall; i++)
		if (strcmp(p->sig[i].id, id) == 0)
			return &p->sig[i];
	return NULL;
}

const char *iq_pack_version(const struct iq_pack *p)
{
	const char *v = json_string_value(json_object_get(p->root, "version"));
	return v ? v : "";
}

const char *iq_signal_severity(const struct iq_signal *s)
{
	const char *v = json_string_value(json_object_get(s->obj, "severity"));
	if (!v && s->target)
		v = json_string_value(json_object_get(s->target->obj, "severity"));
	return v ? v : "";
}

int iq_signal_param(const struct iq_signal *s, const char *key, double *out)
{
	json_t *v = json_object_get(json_object_get(json_object_get(s->obj, "detector"), "params"), key);
	if (!json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return 0;
}

size_t iq_signal_param_list(const struct iq_signal *s, const char *key, double *out, size_t max)
{
	json_t *v = json_object_get(json_object_get(json_object_get(s->obj, "detector"), "params"), key);
	if (json_is_number(v)) {
		if (max)
			out[0] = json_number_value(v);
		return max ? 1 : 0;
	}
	size_t n = 0, i;
	json_t *e;
	json_array_foreach(v, i, e)
		if (json_is_number(e) && n < max)
			out[n++] = json_number_value(e);
	return n;
}

static const char *localised(const json_t *obj, const char *key, const char *lang)
{
	json_t *v = json_object_get(obj, key);
	if (json_is_string(v))
		return json_string_value(v);
	const char *t = json_string_value(json_object_get(v, lang ? lang : "en"));
	if (!t)
		t = json_string_value(json_object_get(v, "en"));
	return t ? t : "";
}

const char *iq_pack_text(const struct iq_pack *p, const char *key, const char *lang)
{
	return localised(p->root, key, lang);
}

const char *iq_signal_text(const struct iq_signal *s, const char *key, const char *lang)
{
	const char *t = localised(s->obj, key, lang);
	if (!*t && s->target)
		t = localised(s->target->obj, key, lang);
	return t;
}

const struct iq_pack *iq_rules_find(const struct iq_ruleset *rs, const char *id)
{
	return find_in(rs->packs, rs->npacks, id);
}

size_t iq_pack_item_count(const struct iq_pack *p, const char *section)
{
	return json_array_size(json_object_get(p->root, section));
}

json_t *iq_pack_item(const struct iq_pack *p, const char *section, size_t i)
{
	return json_array_get(json_object_get(p->root, section), i);
}

const char *iq_item_str(const json_t *item, const char *key)
{
	const char *v = json_string_value(json_object_get(item, key));
	return v ? v : "";
}

const char *iq_item_text(const json_t *item, const char *key, const char *lang)
{
	return localised(item, key, lang);
}

/* ---- detectors and verdicts ---- */

/* A parameter that is a window, its kind and where its edges lie. The
 * kinds: tumbling (fixed buckets), sliding (a span measured from each
 * event), session (events joined while the gap between them stays within
 * the parameter) and sequence (events in time order). Every time compared
 * is a UTC time corrected for the node's clock skew, and the order the
 * rows were stored in does not matter. */
struct window_decl {
	const char *param, *kind, *edges;
};

static const struct detector {
	const char *name;
	const char *params[8];
	const char *desc;
	struct window_decl windows[4];
} detectors[] = {
	{"surge", {"window_s", "baseline_s", "factor", "min_count", "min_ratio", "max_gap_s", NULL},
	 "counts load-balancer 5xx responses (500-599) per window_s seconds; a surge is found "
	 "at a window holding at least min_count of them, factor times the mean of the "
	 "baseline_s before it and min_ratio of its requests; it is the whole episode around "
	 "that window: earlier and later windows whose 5xx stand above the baseline's noise "
	 "(mean + 2 sqrt(mean)) belong to it, quiet gaps of up to max_gap_s allowed, and it "
	 "runs from its first 5xx to its last",
	 {{"window_s", "tumbling", "buckets [k x window_s, (k+1) x window_s) of UTC time: a response "
				  "exactly on a boundary counts in the later bucket"},
	  {"baseline_s", "sliding", "the buckets that start at most baseline_s before the bucket "
				    "tested (bound included), the bucket itself left out"},
	  {"max_gap_s", "session", "the surge goes on across quiet buckets spanning up to max_gap_s "
				   "(bound included); a longer quiet spell ends it"}}},
	{"sawtooth", {"peak_ratio", "drop_ratio", "drop_window_s", NULL},
	 "follows each GPU's used/total memory; a cycle is a climb to at least peak_ratio "
	 "followed within drop_window_s seconds by a fall of at least drop_ratio (the worker "
	 "died and its memory was freed); each drop is tied to the CUDA OOM death it follows",
	 {{"drop_window_s", "sliding", "a fall at most drop_window_s after the peak sample (bound "
				       "included) ends a cycle; a later one does not"}}},
	{"crashloop", {"min_restarts", NULL},
	 "reports a pod the kubelet backed off (BackOff events), or whose containers restarted "
	 "at least min_restarts times (pod status, container log files N.log)",
	 {{NULL, NULL, NULL}}},
	{"cascade", {"min_pods", "max_gap_s", "shift_window_s", NULL},
	 "orders the serving pods by their first CUDA OOM and reports a cascade when at least "
	 "min_pods pods died of it, each within max_gap_s of the previous one, and (where the "
	 "load balancer's upstreams can be tied to pods) a survivor's share of requests rose "
	 "in the shift_window_s after a death",
	 {{"max_gap_s", "session", "deaths in time order (a sequence: the failure order); one at most "
				   "max_gap_s after the previous (bound included) continues the cascade, "
				   "a later one ends it"},
	  {"shift_window_s", "sliding", "each survivor's share of requests in the shift_window_s before "
					"a death against the shift_window_s after it"}}},
	{"host-oom", {NULL},
	 "attributes kernel OOM-killer kills and OOMKilled container states to node, pod, "
	 "container and process; it rules the pattern out only when serving workers were killed",
	 {{NULL, NULL, NULL}}},
	{"ingress-flood", {"heavy_factor", "max_clients", "min_client_share", "min_rate_rise", "min_refused_share",
			   "baseline_s", NULL},
	 "in the 5xx surge (or the busiest minute of 429s), reports a flood when at most max_clients "
	 "clients each sent heavy_factor times the typical client's requests (the median client of the "
	 "baseline_s before) and together min_client_share of the requests, the request rate rose "
	 "min_rate_rise times over the baseline's, the load balancer itself refused min_refused_share "
	 "of the failed requests (where its log names upstreams), and no worker died: no CUDA OOM, no "
	 "GPU memory sawtooth, no serving worker killed by the host; each test that fails is named in "
	 "the boundary's reasons",
	 {{NULL, NULL, NULL}}},
	{"tie", {"before_s", "after_s", NULL},
	 "ties each record of the signals its inputs.faults names (this pack's) to the deaths of "
	 "GPU workers on the same node from before_s before it to after_s after it: a restarted "
	 "container instance's last line, or a container status's last termination; a worker is a "
	 "container with a line of one of inputs.workers (any pack's signals), every container when "
	 "none has one; a fault whose node is unknown ties only in a bundle of one node",
	 {{"before_s", "sliding", "a death at most before_s before the fault (bound included): the "
				  "worker's last line can be written just before the driver reports"},
	  {"after_s", "sliding", "a death at most after_s after the fault (bound included)"}}},
};

size_t iq_detector_count(void) { return IQ_ARRAY_LEN(detectors); }
const char *iq_detector_name(size_t i) { return i < IQ_ARRAY_LEN(detectors) ? detectors[i].name : NULL; }

static const struct detector *detector_of(const char *name)
{
	for (size_t i = 0; name && i < IQ_ARRAY_LEN(detectors); i++)
		if (strcmp(detectors[i].name, name) == 0)
			return &detectors[i];
	return NULL;
}

const char *const *iq_detector_params(const char *name)
{
	const struct detector *d = detector_of(name);
	return d ? d->params : NULL;
}

const char *iq_detector_desc(const char *name)
{
	const struct detector *d = detector_of(name);
	return d ? d->desc : NULL;
}

int iq_detector_window(const char *name, const char *param, const char **kind, const char **edges)
{
	const struct detector *d = detector_of(name);
	for (size_t i = 0; d && i < IQ_ARRAY_LEN(d->windows) && d->windows[i].param; i++)
		if (strcmp(d->windows[i].param, param) == 0) {
			*kind = d->windows[i].kind;
			*edges = d->windows[i].edges;
			return 1;
		}
	return 0;
}

int iq_rules_verdict_known(const char *name)
{
	static const char *const verdicts[] = {"confirmed", "oom_no_cascade", "ruled_out_host_oom",
					       "ruled_out_flood", "not_detected", "inconclusive"};
	for (size_t i = 0; name && i < IQ_ARRAY_LEN(verdicts); i++)
		if (strcmp(name, verdicts[i]) == 0)
			return 1;
	return 0;
}

/* The "when" language: a recursive-descent evaluator over words and
 * parentheses. */
struct when {
	const char *s;
	iq_term_fn fn;
	void *u;
	int err;
};

static void when_ws(struct when *w)
{
	while (*w->s == ' ' || *w->s == '\t' || *w->s == '\n')
		w->s++;
}

/* Consumes the next word (letters, digits, '-', '_', ':', '.', and the
 * comparison of a data term: '=', '!', '<', '>') into buf. */
static void when_word(struct when *w, char *buf, size_t bufsz)
{
	when_ws(w);
	size_t n = 0;
	const char *p = w->s;
	while (isalnum((unsigned char)*p) || (*p && strchr("-_:.=!<>", *p))) {
		if (n + 1 < bufsz)
			buf[n++] = *p;
		p++;
	}
	buf[n] = '\0';
	w->s = p;
}

static int when_or(struct when *w);

static int when_atom(struct when *w)
{
	char word[128];
	when_ws(w);
	if (*w->s == '(') {
		w->s++;
		int v = when_or(w);
		when_ws(w);
		if (*w->s != ')')
			w->err = 1;
		else
			w->s++;
		return v;
	}
	when_word(w, word, sizeof word);
	if (strcmp(word, "not") == 0)
		return !when_atom(w);
	if (strcmp(word, "always") == 0)
		return 1;
	char *colon = strchr(word, ':');
	if (!colon || !colon[1]) {
		w->err = 1;
		return 0;
	}
	*colon = '\0';
	if (strcmp(word, "signal") && strcmp(word, "boundary") && strcmp(word, "condition") &&
	    strcmp(word, "missing") && strcmp(word, "data")) {
		w->err = 1;
		return 0;
	}
	return w->fn(w->u, word, colon + 1) ? 1 : 0;
}

static int when_and(struct when *w)
{
	int v = when_atom(w);
	char word[16];
	while (!w->err) {
		const char *save = w->s;
		when_word(w, word, sizeof word);
		if (strcmp(word, "and") != 0) {
			w->s = save;
			break;
		}
		v = when_atom(w) && v;
	}
	return v;
}

static int when_or(struct when *w)
{
	int v = when_and(w);
	char word[16];
	while (!w->err) {
		const char *save = w->s;
		when_word(w, word, sizeof word);
		if (strcmp(word, "or") != 0) {
			w->s = save;
			break;
		}
		v = when_and(w) || v;
	}
	return v;
}

int iq_rules_when_eval(const char *when, iq_term_fn fn, void *u)
{
	struct when w = {when ? when : "", fn, u, 0};
	int v = when_or(&w);
	when_ws(&w);
	if (w.err || *w.s)
		return IQ_ERR_RULES;
	return v;
}

long iq_pack_verdict_rule(const struct iq_pack *p, iq_term_fn fn, void *u)
{
	for (size_t i = 0; i < iq_pack_item_count(p, "verdicts"); i++) {
		json_t *it = iq_pack_item(p, "verdicts", i);
		if (iq_rules_when_eval(iq_item_str(it, "when"), fn, u) == 1)
			return (long)i;
	}
	return -1;
}

const char *iq_pack_verdict(const struct iq_pack *p, iq_term_fn fn, void *u)
{
	long i = iq_pack_verdict_rule(p, fn, u);
	return i < 0 ? "not_detected" : iq_item_str(iq_pack_item(p, "verdicts", (size_t)i), "verdict");
}

/* ---- the packs' own test cases ---- */

/* Prints the expected captures that differ from the got ones as a diff. */
static int captures_diff(json_t *want, const char *got_text, FILE *out, int print)
{
	json_t *got = json_loads(got_text ? got_text : "{}", 0, NULL);
	const char *k;
	json_t *v;
	int ok = 1;
	json_object_foreach(want, k, v) {
		json_t *g = json_object_get(got, k);
		if (g && json_equal(g, v))
			continue;
		ok = 0;
		if (!print)
			break;
		char *ws = json_dumps(v, JSON_ENCODE_ANY);
		char *gs = g ? json_dumps(g, JSON_ENCODE_ANY) : NULL;
		fprintf(out, "  - %s: %s\n  + %s: %s\n", k, ws ? ws : "?", k, gs ? gs : "(none)");
		free(ws);
		free(gs);
	}
	json_decref(got);
	return ok;
}

/* Runs one case: 1 the signal matched (captures in *caps). */
static int test_case(struct iq_ruleset *rs, struct iq_signal *s, json_t *c, const char **text,
		     const char **caps, int *badkind)
{
	*text = json_is_string(c) ? json_string_value(c) : json_string_value(json_object_get(c, "text"));
	*caps = NULL;
	*badkind = 0;
	if (!*text)
		return 0;
	const char *kind = json_string_value(json_object_get(c, "kind"));
	unsigned bit = 1u << IQ_KIND_LOG, kinds = effective_kinds(s);
	if (kind && kind_bit(kind, &bit)) {
		*badkind = 1;
		return 0;
	}
	if (kind && kinds && !(kinds & bit))
		return 0;
	/* The literal prefilter must never change a result: the case runs
	 * with it too, and a difference is a failure of its own. */
	size_t n = strlen(*text);
	const char *fast_caps;
	rs->gen++;
	iq_pf_scan(prefilter_of(rs), *text, n);
	rs->pf_active = 1;
	int fast = eval_signal(rs, s, *text, n, &fast_caps);
	rs->pf_active = 0;
	rs->gen++;
	int plain = eval_signal(rs, s, *text, n, caps);
	return fast == plain ? plain : IQ_PF_MISMATCH;
}

static void test_pack(struct iq_ruleset *rs, struct iq_pack *p, FILE *out, long *passed, long *failed)
{
	static const char *const lists[] = {"match", "no_match"};
	for (size_t j = 0; j < p->nall; j++) {
		struct iq_signal *s = &p->sig[j];
		json_t *tests = json_object_get(s->obj, "tests");
		for (int want = 1; want >= 0; want--) {
			const char *list = lists[1 - want];
			size_t k;
			json_t *c;
			json_array_foreach(json_object_get(tests, list), k, c) {
				const char *text, *caps;
				int badkind;
				int got = test_case(rs, s, c, &text, &caps, &badkind);
				json_t *wcaps = json_object_get(c, "captures");
				int ok = !badkind && text && got == want && got != IQ_PF_MISMATCH &&
					 (!want || !wcaps || captures_diff(wcaps, caps, out, 0));
				if (ok) {
					(*passed)++;
					continue;
				}
				(*failed)++;
				char path[256];
				int line, col;
				snprintf(path, sizeof path, "%s.tests.%s[%zu]", s->path, list, k);
				iq_json_pos(p->text, p->ntext, path, 0, &line, &col);
				const char *why = badkind ? "unknown record kind"
					: got == IQ_PF_MISMATCH ? "the literal prefilter changes the result (a bug)"
					: !text ? "no text"
					: got != want ? (want ? "did not match" : "matched")
					: "captures differ";
				const char *src = json_string_value(json_object_get(c, "source"));
				fprintf(out, "%s:%d:%d: FAIL %s/%s %s case %zu: %s%s%s%s\n", p->file, line, col,
					p->id, s->id, list, k + 1, why, src ? " (" : "", src ? src : "",
					src ? ")" : "");
				fprintf(out, "  line: %s\n", text ? text : "(no text)");
				if (got && want && wcaps) {
					fprintf(out, "  captures (- expected, + got):\n");
					captures_diff(wcaps, caps, out, 1);
				} else if (got && caps) {
					fprintf(out, "  captures: %s\n", caps);
				}
			}
		}
	}
}

void iq_rules_test(struct iq_ruleset *rs, FILE *out, long *passed, long *failed)
{
	ensure_match_data(rs);
	for (size_t i = 0; i < rs->nshared; i++)
		if (!rs->shared[i]->base)
			test_pack(rs, rs->shared[i], out, passed, failed);
	for (size_t i = 0; i < rs->npacks; i++)
		if (!rs->packs[i]->base)
			test_pack(rs, rs->packs[i], out, passed, failed);
	/* limits its own cases hit are lint's to report, not a bundle's */
	iq_rules_limit_hits(rs, NULL, NULL, 1);
}

/* ---- PCRE2 limit hits ---- */

void iq_rules_set_source(struct iq_ruleset *rs, const char *name)
{
	rs->source = name;
}

/* "match limit", "match and depth limits", ... for a set of IQ_LIM_* bits. */
static void limit_names(unsigned bits, char *out, size_t n)
{
	static const char *const names[] = {"match", "depth", "heap", "JIT stack"};
	size_t len = 0, count = 0, total = 0;
	for (unsigned b = 0; b < 4; b++)
		total += (bits >> b) & 1;
	out[0] = '\0';
	for (unsigned b = 0; b < 4; b++) {
		if (!((bits >> b) & 1))
			continue;
		count++;
		const char *sep = count == 1 ? "" : count == total ? " and " : ", ";
		int w = snprintf(out + len, n - len, "%s%s", sep, names[b]);
		if (w < 0 || (size_t)w >= n - len)
			return;
		len += (size_t)w;
	}
	snprintf(out + len, n - len, total > 1 ? " limits" : " limit");
}

static size_t pack_limit_hits(struct iq_pack *p, iq_limit_fn fn, void *u, int reset)
{
	size_t found = 0;
	for (size_t j = 0; j < p->nall; j++) {
		struct iq_signal *s = &p->sig[j];
		if (!s->limit_lines)
			continue;
		found++;
		if (fn) {
			struct iq_limit_hit h;
			char names[64];
			memset(&h, 0, sizeof h);
			h.pack = p->id;
			h.file = p->file;
			h.signal = s->id;
			iq_json_pos(p->text, p->ntext, s->limit_path, 0, &h.line, &h.col);
			limit_names(s->limit_kinds, names, sizeof names);
			h.limits = names;
			h.lines = s->limit_lines;
			h.first = s->limit_first ? s->limit_first : "";
			snprintf(h.msg, sizeof h.msg, "signal '%s': PCRE2 %s hit on %ld line%s%s%s%s",
				 s->id, names, s->limit_lines, s->limit_lines == 1 ? "" : "s",
				 h.first[0] ? " (first: " : "", h.first, h.first[0] ? ")" : "");
			fn(u, &h);
		}
		if (reset) {
			s->limit_lines = 0;
			s->limit_kinds = 0;
			s->limit_gen = 0;
			free(s->limit_path);
			s->limit_path = NULL;
			free(s->limit_first);
			s->limit_first = NULL;
		}
	}
	return found;
}

size_t iq_rules_limit_hits(struct iq_ruleset *rs, iq_limit_fn fn, void *u, int reset)
{
	size_t found = 0;
	for (size_t i = 0; i < rs->npacks; i++)
		found += pack_limit_hits(rs->packs[i], fn, u, reset);
	for (size_t i = 0; i < rs->nshared; i++)
		found += pack_limit_hits(rs->shared[i], fn, u, reset);
	return found;
}
