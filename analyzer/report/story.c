/* story.c: which pattern a postmortem tells, and in whose words. Each
 * pack's "reports" give, per verdict the pack can reach, the title and the
 * sentences of the report (templates whose {placeholders} read the
 * findings) and its sections; the postmortem is the one with the highest
 * priority whose pack reached its verdict. Also the "when" language read
 * over a finding (for the templates and for guidance), and the guidance the
 * findings call for, with the reason, added to findings.json. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../rules/rules.h"
#include "report_int.h"

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* The pack of a pattern's finding p, or NULL. */
static const struct iq_pack *pack_of(const struct iq_ruleset *rs, json_t *p)
{
	return rs ? iq_rules_find(rs, str(p, "id")) : NULL;
}

static json_t *pattern_of(json_t *doc, const char *id, size_t n)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(doc, "patterns"), i, p) {
		const char *pid = str(p, "id");
		if (strlen(pid) == n && strncmp(pid, id, n) == 0)
			return p;
	}
	return NULL;
}

int iq_report_primary(json_t *doc, const struct iq_ruleset *rs, json_t **pat,
		      const struct iq_pack **pack, json_t **report)
{
	*pat = NULL;
	*pack = NULL;
	*report = NULL;
	long best = 0;
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(doc, "patterns"), i, p) {
		const struct iq_pack *pk = pack_of(rs, p);
		for (size_t k = 0; pk && k < iq_pack_item_count(pk, "reports"); k++) {
			json_t *r = iq_pack_item(pk, "reports", k);
			long prio = (long)json_integer_value(json_object_get(r, "priority"));
			if (strcmp(iq_item_str(r, "verdict"), str(p, "verdict")) != 0)
				continue;
			if (!*report || prio > best) {
				*pat = p;
				*pack = pk;
				*report = r;
				best = prio;
			}
		}
	}
	return *report != NULL;
}

/* ---- paths into a finding ---- */

static json_t *step(json_t *cur, const char *seg, size_t n)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : sizeof buf - 1), seg);
	if (json_is_object(cur))
		return json_object_get(cur, buf);
	if (!json_is_array(cur))
		return NULL;
	char *end;
	long k = strtol(buf, &end, 10);
	if (*buf && !*end)
		return k >= 0 ? json_array_get(cur, (size_t)k) : NULL;
	size_t i;
	json_t *e;
	json_array_foreach(cur, i, e)
		if (strcmp(str(e, "id"), buf) == 0)
			return e;
	return NULL;
}

/* Resolves path from cur; "*" maps the rest over an array. New reference. */
static json_t *walk(json_t *cur, const char *path)
{
	while (cur && *path) {
		size_t n = strcspn(path, ".");
		if (n == 1 && *path == '*') {
			if (!json_is_array(cur))
				return NULL;
			json_t *out = json_array();
			size_t i;
			json_t *e;
			json_array_foreach(cur, i, e) {
				json_t *v = path[1] ? walk(e, path + 2) : json_incref(e);
				if (v && !json_is_null(v))
					json_array_append(out, v);
				json_decref(v);
			}
			return out;
		}
		cur = step(cur, path, n);
		path += n + (path[n] == '.');
	}
	return cur ? json_incref(cur) : NULL;
}

json_t *iq_finding_path(json_t *doc, json_t *pat, const char *path)
{
	if (path[0] == '@') {
		size_t n = strcspn(path + 1, ".");
		pat = pattern_of(doc, path + 1, n);
		path += 1 + n + (path[1 + n] == '.');
	}
	return walk(pat, path);
}

/* ---- the when language over a finding ---- */

struct term_ctx {
	json_t *doc, *pat;
	json_t *terms;   /* every term read: {term, value, holds} */
};

static int truthy(json_t *v)
{
	if (json_is_true(v))
		return 1;
	if (json_is_number(v))
		return json_number_value(v) != 0;
	if (json_is_string(v))
		return *json_string_value(v) != 0;
	if (json_is_array(v))
		return json_array_size(v) > 0;
	return json_is_object(v) && json_object_size(v) > 0;
}

/* Compares v with the literal lit under op ("=", "!=", "<", ...). */
static int compare(json_t *v, const char *op, const char *lit)
{
	int eq;
	double x = 0, y;
	char *end;
	y = strtod(lit, &end);
	int num = *lit && !*end;
	if (strcmp(lit, "true") == 0)
		eq = json_is_true(v);
	else if (strcmp(lit, "false") == 0)
		eq = json_is_false(v);
	else if (strcmp(lit, "null") == 0)
		eq = !v || json_is_null(v);
	else if (num && json_is_number(v))
		eq = (x = json_number_value(v)) == y;
	else
		eq = json_is_string(v) && strcmp(json_string_value(v), lit) == 0;
	if (strcmp(op, "=") == 0)
		return eq;
	if (strcmp(op, "!=") == 0)
		return !eq;
	if (!num || !json_is_number(v))
		return 0;
	x = json_number_value(v);
	if (strcmp(op, "<") == 0)
		return x < y;
	if (strcmp(op, "<=") == 0)
		return x <= y;
	if (strcmp(op, ">") == 0)
		return x > y;
	return strcmp(op, ">=") == 0 && x >= y;
}

static int term(void *u, const char *what, const char *id)
{
	struct term_ctx *c = u;
	json_t *value = NULL;
	int holds = 0;
	char buf[256];
	if (strcmp(what, "data") == 0) {
		/* data:QUESTION.KEY[OP VALUE]: questions.QUESTION.data.KEY */
		size_t qn = strcspn(id, ".");
		size_t kn = strcspn(id + qn, "=!<>");
		char path[300];
		snprintf(path, sizeof path, "questions.%.*s.data.%.*s", (int)qn, id,
			 (int)(kn > 0 ? kn - 1 : 0), id + qn + (id[qn] == '.'));
		value = iq_finding_path(c->doc, c->pat, path);
		const char *op = id + qn + kn;
		if (!*op) {
			holds = truthy(value);
		} else {
			size_t on = strspn(op, "=!<>");
			snprintf(buf, sizeof buf, "%.*s", (int)on, op);
			holds = compare(value, buf, op + on);
		}
	} else if (strcmp(what, "missing") == 0) {
		holds = 0; /* the bundle's kinds are the verdicts' business */
	} else {
		const char *sec = strcmp(what, "signal") == 0 ? "signals"
				  : strcmp(what, "boundary") == 0 ? "boundaries" : "conditions";
		const char *eq = strchr(id, '=');
		snprintf(buf, sizeof buf, "%.*s", (int)(eq ? (size_t)(eq - id) : strlen(id)), id);
		json_t *f = step(json_object_get(c->pat, sec), buf, strlen(buf));
		json_t *pr = json_object_get(f, "present");
		value = json_incref(pr ? pr : json_null());
		holds = eq ? compare(pr, "=", eq + 1) : json_is_true(pr);
	}
	if (c->terms) {
		snprintf(buf, sizeof buf, "%s:%s", what, id);
		json_array_append_new(c->terms, json_pack("{s:s, s:O, s:b}", "term", buf, "value",
							  value ? value : json_null(), "holds", holds));
	}
	json_decref(value);
	return holds;
}

int iq_finding_when(json_t *doc, json_t *pat, const char *when, json_t *terms)
{
	struct term_ctx c = {doc, pat, terms};
	int v = iq_rules_when_eval(when, term, &c);
	return v < 0 ? 0 : v;
}

/* ---- templates ---- */

/* A placeholder's value as text: "{path}" or "{path|gib}", "{path|pct}",
 * "{path|join}", "{answer:QUESTION}". 0 when it does not resolve. */
static int placeholder(struct iq_buf *out, const char *ph, size_t n, json_t *doc, json_t *pat,
		       const char *lang)
{
	char key[256];
	snprintf(key, sizeof key, "%.*s", (int)(n < sizeof key ? n : sizeof key - 1), ph);
	if (strncmp(key, "answer:", 7) == 0) {
		json_t *q = step(json_object_get(pat, "questions"), key + 7, strlen(key + 7));
		if (!q)
			return 0;
		if (strcmp(lang, "en") != 0 && iq_question_answer_tr(out, key + 7, json_object_get(q, "data")))
			return 1;
		if (!*str(q, "answer"))
			return 0;
		iq_buf_adds(out, str(q, "answer"));
		return 1;
	}
	char *bar = strchr(key, '|');
	const char *filter = "";
	if (bar) {
		*bar = '\0';
		filter = bar + 1;
	}
	json_t *v = iq_finding_path(doc, pat, key);
	int ok = 1;
	if (!v || json_is_null(v)) {
		ok = 0;
	} else if (strcmp(filter, "gib") == 0 && json_is_number(v)) {
		iq_buf_printf(out, "%.2f GiB", json_number_value(v) / 1073741824.0);
	} else if (strcmp(filter, "pct") == 0 && json_is_number(v)) {
		iq_buf_printf(out, "%.0f %%", json_number_value(v) * 100);
	} else if (json_is_array(v)) {
		/* a list, each value once, in order */
		size_t i, k = 0;
		json_t *e;
		ok = json_array_size(v) > 0;
		json_array_foreach(v, i, e) {
			const char *s = json_string_value(e);
			char num[64];
			if (!s && json_is_number(e))
				snprintf(num, sizeof num, "%g", json_number_value(e)), s = num;
			if (!s)
				continue;
			int dup = 0;
			for (size_t j = 0; j < i && !dup; j++)
				dup = json_equal(json_array_get(v, j), e);
			if (!dup)
				iq_buf_printf(out, "%s%s", k++ ? ", " : "", s);
		}
		ok = ok && k > 0;
	} else if (json_is_string(v)) {
		ok = *json_string_value(v) != 0;
		iq_buf_adds(out, json_string_value(v));
	} else if (json_is_integer(v)) {
		iq_buf_printf(out, "%lld", (long long)json_integer_value(v));
	} else if (json_is_real(v)) {
		double d = json_real_value(v);
		iq_buf_printf(out, fabs(d - round(d)) < 1e-9 ? "%.0f" : "%.2f", d);
	} else if (json_is_boolean(v)) {
		iq_buf_adds(out, iq_msg(lang, json_is_true(v) ? "yes" : "no"));
	} else {
		ok = 0;
	}
	json_decref(v);
	return ok;
}

/* Fills one template (the lang text of t) into out, escaped for Markdown
 * when md is set; 0 when a placeholder does not resolve. */
static int fill(struct iq_buf *out, json_t *t, json_t *doc, json_t *pat, const char *lang, int md)
{
	json_t *tx = json_object_get(t, lang);
	const char *s = json_string_value(tx) ? json_string_value(tx) : str(t, "en");
	if (!*s)
		return 0;
	struct iq_buf plain;
	iq_buf_init(&plain);
	int ok = 1;
	while (*s && ok) {
		const char *o = strchr(s, '{');
		const char *c = o ? strchr(o, '}') : NULL;
		if (!o || !c) {
			iq_buf_adds(&plain, s);
			break;
		}
		iq_buf_add(&plain, s, (size_t)(o - s));
		ok = placeholder(&plain, o + 1, (size_t)(c - o - 1), doc, pat, lang);
		s = c + 1;
	}
	if (ok) {
		if (md)
			iq_md_escape(out, plain.p ? plain.p : "", plain.len, 4000);
		else
			iq_buf_add(out, plain.p ? plain.p : "", plain.len);
	}
	iq_buf_release(&plain);
	return ok;
}

int iq_report_text(struct iq_buf *out, json_t *tmpl, json_t *doc, json_t *pat, const char *lang, int md)
{
	if (json_is_object(tmpl))
		tmpl = json_pack("[O]", tmpl);
	else
		json_incref(tmpl);
	size_t i;
	json_t *t;
	int done = 0;
	json_array_foreach(tmpl, i, t) {
		const char *when = str(t, "when");
		if (*when && !iq_finding_when(doc, pat, when, NULL))
			continue;
		if (fill(out, t, doc, pat, lang, md)) {
			done = 1;
			break;
		}
	}
	json_decref(tmpl);
	return done;
}

/* ---- guidance ---- */

void iq_report_guidance(json_t *doc, const struct iq_ruleset *rs)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(doc, "patterns"), i, p) {
		const struct iq_pack *pk = pack_of(rs, p);
		if (!pk)
			continue;
		json_t *list = json_array();
		for (size_t k = 0; k < iq_pack_item_count(pk, "guidance"); k++) {
			json_t *g = iq_pack_item(pk, "guidance", k);
			const char *when = iq_item_str(g, "when");
			char fallback[1024];
			if (!*when) {
				/* a pack without "when": its "for" signals, boundaries and
				 * conditions found (a question's existence calls for nothing) */
				size_t n = 0, j;
				json_t *f;
				fallback[0] = '\0';
				json_array_foreach(json_object_get(g, "for"), j, f) {
					const char *id = json_string_value(f);
					const char *what = iq_pack_find_signal(pk, id ? id : "")
						? (iq_signal_section(iq_pack_find_signal(pk, id)) == IQ_SEC_BOUNDARIES ? "boundary" : "signal")
						: "condition";
					if (id && n < sizeof fallback)
						n += (size_t)snprintf(fallback + n, sizeof fallback - n, "%s%s:%s",
								      n ? " or " : "", what, id);
				}
				when = fallback;
			}
			json_t *terms = json_array();
			if (*when && iq_finding_when(doc, p, when, terms)) {
				struct iq_buf why;
				iq_buf_init(&why);
				iq_buf_printf(&why, "%s: ", when);
				json_t *holds = json_array();
				size_t j;
				json_t *t;
				json_array_foreach(terms, j, t) {
					char *v = json_dumps(json_object_get(t, "value"), JSON_ENCODE_ANY | JSON_COMPACT);
					const char *tm = str(t, "term");
					/* what was read: "present" of a finding, or the question's key */
					const char *key = "present";
					if (strncmp(tm, "data:", 5) == 0) {
						size_t kn = strcspn(tm, "=!<>");
						const char *dot = tm + kn;
						while (dot > tm && dot[-1] != '.')
							dot--;
						static char kb[128];
						snprintf(kb, sizeof kb, "%.*s", (int)(tm + kn - dot), dot);
						key = kb;
					}
					iq_buf_printf(&why, "%s%s %s (%s: %.200s)", j ? "; " : "", tm,
						      json_is_true(json_object_get(t, "holds")) ? "holds" : "does not hold",
						      key, v ? v : "null");
					free(v);
					if (json_is_true(json_object_get(t, "holds")))
						json_array_append_new(holds, json_pack("{s:s, s:O}", "term", str(t, "term"),
										       "value", json_object_get(t, "value")));
				}
				json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:o}", "id", iq_item_str(g, "id"),
								      "phase", iq_item_str(g, "phase"), "when", when,
								      "why", why.p ? why.p : when, "holds", holds));
				iq_buf_release(&why);
			}
			json_decref(terms);
		}
		json_object_set_new(p, "guidance", list);
	}
}
