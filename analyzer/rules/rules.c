/* rules.c: loading rule packs from JSON, compiling their signal regexes
 * with PCRE2 (JIT), matching records, and running the packs' test cases.
 * See rules/README.md for the pack format. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <dirent.h>
#include <errno.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

#define MATCH_LIMIT 1000000
#define DEPTH_LIMIT 10000

struct field {
	char *name;
	enum iq_field_type type;
};

struct iq_signal {
	char *id;
	json_t *obj;            /* the signal's JSON (borrowed from the pack) */
	unsigned kinds;         /* bit per enum iq_kind; 0 = every kind */
	pcre2_code **re;
	size_t nre;
	struct field *fields;
	size_t nfields;
};

struct iq_pack {
	char *file;
	char *id;
	json_t *root;
	struct iq_signal *sig;
	size_t nsig;
};

static pcre2_match_context *match_ctx;

void iq_rules_init(struct iq_ruleset *rs)
{
	memset(rs, 0, sizeof *rs);
}

static void pack_free(struct iq_pack *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nsig; i++) {
		struct iq_signal *s = &p->sig[i];
		for (size_t j = 0; j < s->nre; j++)
			pcre2_code_free(s->re[j]);
		free(s->re);
		for (size_t j = 0; j < s->nfields; j++)
			free(s->fields[j].name);
		free(s->fields);
		free(s->id);
	}
	free(p->sig);
	free(p->file);
	free(p->id);
	json_decref(p->root);
	free(p);
}

void iq_rules_release(struct iq_ruleset *rs)
{
	for (size_t i = 0; i < rs->npacks; i++)
		pack_free(rs->packs[i]);
	free(rs->packs);
	if (rs->match_data)
		pcre2_match_data_free(rs->match_data);
	iq_buf_release(&rs->caps);
	memset(rs, 0, sizeof *rs);
}

static int kind_bit(const char *name, unsigned *bit)
{
	static const char *const names[] = {"log", "event", "http", "gpu", "kernel", "pod", "config"};
	for (unsigned i = 0; i < IQ_ARRAY_LEN(names); i++)
		if (strcmp(name, names[i]) == 0) {
			*bit = 1u << i;
			return 0;
		}
	return -1;
}

static int compile_signal(struct iq_pack *p, struct iq_signal *s, json_t *obj, struct iq_diag *d)
{
	json_t *id = json_object_get(obj, "id");
	if (!json_is_string(id))
		return iq_diag_set(d, IQ_ERR_RULES, "%s: a signal has no \"id\" string", p->file);
	s->id = iq_xstrdup(json_string_value(id));
	s->obj = obj;
	json_t *kinds = json_object_get(obj, "kinds");
	size_t i;
	json_t *v;
	json_array_foreach(kinds, i, v) {
		unsigned bit;
		if (!json_is_string(v) || kind_bit(json_string_value(v), &bit))
			return iq_diag_set(d, IQ_ERR_RULES,
					   "%s: signal '%s': unknown record kind in \"kinds\" (log, event, http, gpu, kernel, pod, config)",
					   p->file, s->id);
		s->kinds |= bit;
	}
	json_t *fields = json_object_get(obj, "fields");
	if (json_is_object(fields)) {
		const char *k;
		s->fields = iq_xcalloc(json_object_size(fields), sizeof *s->fields);
		json_object_foreach(fields, k, v) {
			const char *t = json_string_value(v);
			enum iq_field_type ty;
			if (t && strcmp(t, "size") == 0)
				ty = IQ_FIELD_SIZE;
			else if (t && strcmp(t, "int") == 0)
				ty = IQ_FIELD_INT;
			else if (t && strcmp(t, "text") == 0)
				ty = IQ_FIELD_TEXT;
			else
				return iq_diag_set(d, IQ_ERR_RULES,
						   "%s: signal '%s': field '%s' has unknown type (size, int, text)",
						   p->file, s->id, k);
			s->fields[s->nfields].name = iq_xstrdup(k);
			s->fields[s->nfields].type = ty;
			s->nfields++;
		}
	}
	json_t *pats = json_object_get(obj, "patterns");
	if (!pats)
		return 0; /* a windowed detector: nothing to compile */
	if (!json_is_array(pats) || json_array_size(pats) == 0)
		return iq_diag_set(d, IQ_ERR_RULES, "%s: signal '%s': \"patterns\" must be a non-empty array of strings",
				   p->file, s->id);
	s->re = iq_xcalloc(json_array_size(pats), sizeof *s->re);
	json_array_foreach(pats, i, v) {
		if (!json_is_string(v))
			return iq_diag_set(d, IQ_ERR_RULES, "%s: signal '%s': pattern %zu is not a string",
					   p->file, s->id, i + 1);
		int err;
		PCRE2_SIZE off;
		const char *pat = json_string_value(v);
		pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
					       PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &err, &off, NULL);
		if (!re) {
			PCRE2_UCHAR msg[256];
			pcre2_get_error_message(err, msg, sizeof msg);
			return iq_diag_set(d, IQ_ERR_RULES,
					   "%s: error: invalid regex in signal '%s' (pattern %zu) at offset %zu: %s\n  %s\n  %*s^",
					   p->file, s->id, i + 1, (size_t)off, (char *)msg, pat, (int)off, "");
		}
		pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
		s->re[s->nre++] = re;
	}
	return 0;
}

static int add_pack(struct iq_ruleset *rs, struct iq_pack *p)
{
	for (size_t i = 0; i < rs->npacks; i++)
		if (strcmp(rs->packs[i]->id, p->id) == 0) {
			pack_free(rs->packs[i]);
			rs->packs[i] = p;
			return 0;
		}
	rs->packs = iq_xrealloc(rs->packs, (rs->npacks + 1) * sizeof *rs->packs);
	rs->packs[rs->npacks++] = p;
	return 0;
}

static void ensure_match_data(struct iq_ruleset *rs)
{
	if (!rs->match_data)
		rs->match_data = pcre2_match_data_create(64, NULL);
	if (!match_ctx) {
		match_ctx = pcre2_match_context_create(NULL);
		pcre2_set_match_limit(match_ctx, MATCH_LIMIT);
		pcre2_set_depth_limit(match_ctx, DEPTH_LIMIT);
	}
}

int iq_rules_load_text(struct iq_ruleset *rs, const char *name, const char *text, size_t n,
		       struct iq_diag *d)
{
	json_error_t je;
	json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return iq_diag_set(d, IQ_ERR_RULES, "%s:%d:%d: error: %s", name, je.line, je.column,
				   je.text);
	struct iq_pack *p = iq_xcalloc(1, sizeof *p);
	p->file = iq_xstrdup(name);
	p->root = root;
	int rc = 0;
	json_t *id = json_object_get(root, "id");
	if (!json_is_object(root) || !json_is_string(id)) {
		rc = iq_diag_set(d, IQ_ERR_RULES, "%s: error: a pack is an object with an \"id\" string", name);
		goto fail;
	}
	p->id = iq_xstrdup(json_string_value(id));
	json_t *sigs = json_object_get(root, "signals");
	if (!json_is_array(sigs)) {
		rc = iq_diag_set(d, IQ_ERR_RULES, "%s: error: pack '%s' has no \"signals\" array", name, p->id);
		goto fail;
	}
	p->sig = iq_xcalloc(json_array_size(sigs), sizeof *p->sig);
	size_t i;
	json_t *v;
	json_array_foreach(sigs, i, v) {
		if (!json_is_object(v)) {
			rc = iq_diag_set(d, IQ_ERR_RULES, "%s: error: signal %zu is not an object", name, i + 1);
			goto fail;
		}
		p->nsig++;
		rc = compile_signal(p, &p->sig[i], v, d);
		if (rc)
			goto fail;
	}
	ensure_match_data(rs);
	return add_pack(rs, p);
fail:
	pack_free(p);
	return rc;
}

static int load_file(struct iq_ruleset *rs, const char *path, struct iq_diag *d)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return iq_diag_set(d, IQ_ERR_RULES, "cannot open rule pack '%s': %s", path, strerror(errno));
	struct iq_buf b;
	iq_buf_init(&b);
	char chunk[65536];
	size_t got;
	while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (b.len + got > (64u << 20)) {
			fclose(f);
			iq_buf_release(&b);
			return iq_diag_set(d, IQ_ERR_RULES, "%s: rule pack larger than 64 MiB", path);
		}
		if (iq_buf_add(&b, chunk, got)) {
			fclose(f);
			iq_buf_release(&b);
			return iq_diag_set(d, IQ_ERR_NOMEM, "out of memory");
		}
	}
	fclose(f);
	int rc = iq_rules_load_text(rs, path, b.p ? b.p : "", b.len, d);
	iq_buf_release(&b);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int iq_rules_load_path(struct iq_ruleset *rs, const char *path, struct iq_diag *d)
{
	DIR *dir = opendir(path);
	if (!dir)
		return load_file(rs, path, d);
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0 && e->d_name[0] != '.') {
			names = iq_xrealloc(names, (n + 1) * sizeof *names);
			size_t pl = strlen(path) + l + 2;
			names[n] = iq_xmalloc(pl);
			snprintf(names[n], pl, "%s/%s", path, e->d_name);
			n++;
		}
	}
	closedir(dir);
	qsort(names, n, sizeof *names, cmp_str);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = load_file(rs, names[i], d);
		free(names[i]);
	}
	free(names);
	return rc;
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
		int rc = iq_rules_load_text(rs, f->name, f->text, strlen(f->text), d);
		if (rc)
			return rc;
	}
	return 0;
}

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

static const struct field *field_of(const struct iq_signal *s, const char *name)
{
	for (size_t i = 0; i < s->nfields; i++)
		if (strcmp(s->fields[i].name, name) == 0)
			return &s->fields[i];
	return NULL;
}

/* Writes the named captures of the last match as a JSON object. */
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
		const struct field *f = field_of(s, name);
		if (!first)
			iq_buf_addc(out, ',');
		first = 0;
		json_escape(out, name, strlen(name));
		iq_buf_addc(out, ':');
		if (f && f->type == IQ_FIELD_INT) {
			long long x = 0;
			for (size_t k = 0; k < vn && v[k] >= '0' && v[k] <= '9'; k++)
				x = x * 10 + (v[k] - '0');
			iq_buf_printf(out, "%lld", x);
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
	iq_buf_addc(out, '}');
}

/* Matches one signal; 1 matched (captures in out), 0 not, <0 error. */
static int match_signal(struct iq_ruleset *rs, const struct iq_signal *s, const char *text,
			size_t n, struct iq_buf *out)
{
	pcre2_match_data *md = rs->match_data;
	for (size_t i = 0; i < s->nre; i++) {
		int rc = pcre2_match(s->re[i], (PCRE2_SPTR)text, n, 0, 0, md, match_ctx);
		if (rc >= 0) {
			captures_json(s, s->re[i], md, text, out);
			return 1;
		}
		/* match-limit and depth-limit errors count as no match; lint
		 * reports such regexes */
	}
	return 0;
}

int iq_rules_match(struct iq_ruleset *rs, const struct iq_record *r, iq_match_fn fn, void *u)
{
	struct iq_buf *caps = &rs->caps;
	unsigned bit = 1u << r->kind;
	const char *text = r->text.p ? r->text.p : "";
	for (size_t i = 0; i < rs->npacks; i++) {
		struct iq_pack *p = rs->packs[i];
		for (size_t j = 0; j < p->nsig; j++) {
			const struct iq_signal *s = &p->sig[j];
			if (!s->nre || (s->kinds && !(s->kinds & bit)))
				continue;
			if (match_signal(rs, s, text, r->text.n, caps) == 1) {
				int rc = fn(u, p->id, s->id, caps->p);
				if (rc)
					return rc;
			}
		}
	}
	return 0;
}

const char *iq_pack_id(const struct iq_pack *p) { return p->id; }
const char *iq_pack_file(const struct iq_pack *p) { return p->file; }
size_t iq_pack_signal_count(const struct iq_pack *p) { return p->nsig; }
const struct iq_signal *iq_pack_signal(const struct iq_pack *p, size_t i) { return &p->sig[i]; }
const char *iq_signal_id(const struct iq_signal *s) { return s->id; }

static const char *localised(json_t *obj, const char *key, const char *lang)
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
	return localised(s->obj, key, lang);
}

const struct iq_pack *iq_rules_find(const struct iq_ruleset *rs, const char *id)
{
	for (size_t i = 0; i < rs->npacks; i++)
		if (strcmp(rs->packs[i]->id, id) == 0)
			return rs->packs[i];
	return NULL;
}

/* Compares expected captures (a JSON object) with the captures JSON text;
 * writes the first difference into why. */
static int captures_equal(json_t *want, const char *got_text, char *why, size_t whysz)
{
	json_t *got = json_loads(got_text, 0, NULL);
	const char *k;
	json_t *v;
	int ok = 1;
	json_object_foreach(want, k, v) {
		json_t *g = json_object_get(got, k);
		if (!g || !json_equal(g, v)) {
			char *ws = json_dumps(v, JSON_ENCODE_ANY);
			char *gs = g ? json_dumps(g, JSON_ENCODE_ANY) : NULL;
			snprintf(why, whysz, "capture '%s': want %s, got %s", k, ws ? ws : "?",
				 gs ? gs : "(none)");
			free(ws);
			free(gs);
			ok = 0;
			break;
		}
	}
	json_decref(got);
	return ok;
}

void iq_rules_test(struct iq_ruleset *rs, FILE *out, long *passed, long *failed)
{
	struct iq_buf caps;
	iq_buf_init(&caps);
	ensure_match_data(rs);
	for (size_t i = 0; i < rs->npacks; i++) {
		struct iq_pack *p = rs->packs[i];
		for (size_t j = 0; j < p->nsig; j++) {
			struct iq_signal *s = &p->sig[j];
			json_t *tests = json_object_get(s->obj, "tests");
			size_t k;
			json_t *c;
			json_array_foreach(json_object_get(tests, "match"), k, c) {
				const char *text = json_is_string(c) ? json_string_value(c)
					: json_string_value(json_object_get(c, "text"));
				char why[512] = "";
				int ok = text && match_signal(rs, s, text, strlen(text), &caps) == 1;
				if (!ok)
					snprintf(why, sizeof why, "did not match");
				else if (json_is_object(c) && json_object_get(c, "captures"))
					ok = captures_equal(json_object_get(c, "captures"), caps.p, why, sizeof why);
				if (ok) {
					(*passed)++;
				} else {
					(*failed)++;
					fprintf(out, "FAIL %s: %s/%s match case %zu: %s\n  line: %s\n", p->file,
						p->id, s->id, k + 1, why, text ? text : "(no text)");
					if (caps.len)
						fprintf(out, "  captures: %s\n", caps.p);
				}
			}
			json_array_foreach(json_object_get(tests, "no_match"), k, c) {
				const char *text = json_is_string(c) ? json_string_value(c)
					: json_string_value(json_object_get(c, "text"));
				if (text && match_signal(rs, s, text, strlen(text), &caps) == 0) {
					(*passed)++;
				} else {
					(*failed)++;
					fprintf(out, "FAIL %s: %s/%s no_match case %zu: matched\n  line: %s\n  captures: %s\n",
						p->file, p->id, s->id, k + 1, text ? text : "(no text)",
						caps.p ? caps.p : "");
				}
			}
		}
	}
	iq_buf_release(&caps);
}
