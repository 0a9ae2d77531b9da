/* lint.c: the checks `inquest rules lint` makes beyond what loading needs:
 * unknown keys (one table of known keys per kind of object), translations,
 * ids, detector parameters, verdict expressions, guidance references, the
 * questions' SQL (prepared read-only against the embedded schema) and
 * regexes that blow PCRE2's match limit on their own test lines. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "rules_int.h"

extern const char iq_schema_sql[];

/* Known keys, per kind of object (NULL-terminated). */
static const char *const pack_keys[] = {"$schema", "id", "kind", "version", "title", "definition",
	"references", "signals", "boundaries", "facts", "conditions", "verdicts", "questions",
	"guidance", "impacts", "reports", NULL};
static const char *const regex_keys[] = {"id", "title", "description", "severity", "kinds",
	"patterns", "fields", "exceptions", "tests", "instead", NULL};
static const char *const detector_sig_keys[] = {"id", "title", "description", "severity",
	"detector", "instead", NULL};
static const char *const ref_keys[] = {"id", "ref", "title", "description", "severity", "kinds",
	"exceptions", "tests", "instead", NULL};
static const char *const detector_keys[] = {"name", "params", "windows", "reasons", "inputs", NULL};
static const char *const tests_keys[] = {"match", "no_match", NULL};
static const char *const case_keys[] = {"text", "source", "captures", "kind", "note", NULL};
static const char *const exception_keys[] = {"pattern", "why", "source", NULL};
static const char *const condition_keys[] = {"id", "title", "description", "evidence",
	"config_keys", "checks", "params", "reasons", NULL};
static const char *const check_keys[] = {"key", "op", "value", NULL};
static const char *const question_keys[] = {"id", "question", "sql", "answer", "empty", "params", "reasons", NULL};
static const char *const guidance_keys[] = {"id", "phase", "text", "for", "when", NULL};
static const char *const report_keys[] = {"verdict", "priority", "title", "summary", "root_cause",
	"root_cause_evidence", "trigger", "trigger_evidence", "sections", NULL};
static const char *const template_keys[] = {"en", "tr", "when", NULL};
static const char *const verdict_keys[] = {"verdict", "when", "why", NULL};

/* Members whose value is text in every language ({"en": ..., "tr": ...}). */
static const char *const localised_keys[] = {"title", "definition", "description", "instead",
	"evidence", "question", "answer", "empty", "text", "why", NULL};
static const char *const languages[] = {"en", "tr"};

static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return 1;
	return 0;
}

static void known_list(const char *const *list, char *buf, size_t bufsz)
{
	size_t n = 0;
	buf[0] = '\0';
	for (; *list && n < bufsz; list++)
		n += (size_t)snprintf(buf + n, bufsz - n, "%s%s", n ? ", " : "", *list);
}

static void check_localised(struct iq_lint *lc, json_t *v, const char *path, const char *what)
{
	char sub[320];
	if (!json_is_object(v)) {
		iq_lint_report(lc, 0, path, 0, NULL, "%s must be translated: {\"en\": ..., \"tr\": ...}", what);
		return;
	}
	for (size_t i = 0; i < IQ_ARRAY_LEN(languages); i++) {
		const char *t = json_string_value(json_object_get(v, languages[i]));
		if (!t || !*t)
			iq_lint_report(lc, 0, path, 0, NULL, "missing translation: %s has no \"%s\" text",
				       what, languages[i]);
	}
	const char *k;
	json_t *e;
	json_object_foreach(v, k, e) {
		snprintf(sub, sizeof sub, "%s.%s", path, k);
		if (strlen(k) != 2 || !json_is_string(e))
			iq_lint_report(lc, 0, sub, 1, NULL,
				       "%s: '%s' is not a language code with a text (en, tr, ...)", what, k);
	}
}

/* Unknown keys and translations of one object. */
static void check_object(struct iq_lint *lc, json_t *obj, const char *path, const char *const *keys,
			 const char *what)
{
	/* a test case's "text" is a log line, not prose */
	int prose = keys != case_keys;
	char sub[320], known[512];
	const char *k;
	json_t *v;
	if (!json_is_object(obj)) {
		iq_lint_report(lc, 0, path, 0, NULL, "%s must be an object", what);
		return;
	}
	json_object_foreach(obj, k, v) {
		snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", k);
		if (!in_list(keys, k)) {
			known_list(keys, known, sizeof known);
			iq_lint_report(lc, 0, sub, 1, NULL, "unknown key '%s' in %s (known: %s)", k, what, known);
		} else if (prose && in_list(localised_keys, k)) {
			char w[200];
			snprintf(w, sizeof w, "%s's \"%s\"", what, k);
			check_localised(lc, v, sub, w);
		}
	}
}

static int kebab(const char *s)
{
	if (!*s || *s == '-')
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-') ||
		    (*p == '-' && (p[1] == '-' || p[1] == '\0')))
			return 0;
	return 1;
}

/* The ids of a pack, to find duplicates and check references. */
struct ids {
	const char *id[512];
	const char *sec[512];
	size_t n;
};

static const char *ids_find(const struct ids *ids, const char *id)
{
	for (size_t i = 0; i < ids->n; i++)
		if (strcmp(ids->id[i], id) == 0)
			return ids->sec[i];
	return NULL;
}

static void ids_add(struct iq_lint *lc, struct ids *ids, const char *id, const char *sec,
		    const char *path)
{
	char sub[320];
	snprintf(sub, sizeof sub, "%s.id", path);
	const char *had = ids_find(ids, id);
	if (had)
		iq_lint_report(lc, 0, sub, 0, NULL, "duplicate id '%s' (already in \"%s\")", id, had);
	else if (ids->n < IQ_ARRAY_LEN(ids->id)) {
		ids->id[ids->n] = id;
		ids->sec[ids->n++] = sec;
	}
	if (!kebab(id))
		iq_lint_report(lc, 0, sub, 0, NULL, "id '%s' is not kebab-case (a-z, 0-9, '-')", id);
}

/* A detector's inputs: the tie detector's "faults" (signals of this pack
 * with patterns) and "workers" (signal ids of any pack); no other detector
 * takes inputs. */
static void check_inputs(struct iq_lint *lc, const struct iq_signal *s, json_t *det, const char *path)
{
	char sub[320];
	json_t *in = json_object_get(det, "inputs");
	int tie = strcmp(s->detector, "tie") == 0;
	snprintf(sub, sizeof sub, "%s.detector.inputs", path);
	if (!in) {
		snprintf(sub, sizeof sub, "%s.detector", path);
		if (tie)
			iq_lint_report(lc, 0, sub, 0, NULL, "detector 'tie' needs \"inputs\": {\"faults\": [SIGNAL, ...]}");
		return;
	}
	if (!tie || !json_is_object(in)) {
		iq_lint_report(lc, 0, sub, 0, NULL, tie ? "detector inputs must be an object"
						  : "detector '%s' takes no inputs", s->detector);
		return;
	}
	const char *k;
	json_t *v;
	json_object_foreach(in, k, v) {
		snprintf(sub, sizeof sub, "%s.detector.inputs.%s", path, k);
		int faults = strcmp(k, "faults") == 0;
		if (!faults && strcmp(k, "workers") != 0) {
			iq_lint_report(lc, 0, sub, 1, NULL, "unknown input '%s' of detector 'tie' (known: faults, workers)", k);
			continue;
		}
		if (!json_is_array(v) || json_array_size(v) == 0) {
			iq_lint_report(lc, 0, sub, 0, NULL, "input '%s' must be a non-empty array of signal ids", k);
			continue;
		}
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e) {
			const char *id = json_string_value(e);
			if (!id) {
				iq_lint_report(lc, 0, sub, 0, NULL, "input '%s' must be a non-empty array of signal ids", k);
				break;
			}
			if (!faults)
				continue;
			const struct iq_signal *f = NULL;
			for (size_t j = 0; j < iq_pack_signal_count(s->pack) && !f; j++)
				if (strcmp(iq_signal_id(iq_pack_signal(s->pack, j)), id) == 0)
					f = iq_pack_signal(s->pack, j);
			if (!f)
				iq_lint_report(lc, 0, sub, 0, NULL, "fault '%s' is not a signal of this pack", id);
			else if (iq_signal_detector(f))
				iq_lint_report(lc, 0, sub, 0, NULL, "fault '%s' is a detector's signal: name signals with patterns", id);
		}
	}
	if (!json_object_get(in, "faults")) {
		snprintf(sub, sizeof sub, "%s.detector.inputs", path);
		iq_lint_report(lc, 0, sub, 0, NULL, "detector 'tie' needs \"inputs\": {\"faults\": [SIGNAL, ...]}");
	}
}

static void check_detector(struct iq_lint *lc, const struct iq_signal *s, const char *path)
{
	char sub[320], known[512];
	json_t *det = json_object_get(s->obj, "detector");
	snprintf(sub, sizeof sub, "%s.detector", path);
	check_object(lc, det, sub, detector_keys, "a detector");
	check_inputs(lc, s, det, path);
	const char *const *params = iq_detector_params(s->detector);
	json_t *pj = json_object_get(det, "params");
	if (!params || !pj)
		return;
	if (!json_is_object(pj)) {
		snprintf(sub, sizeof sub, "%s.detector.params", path);
		iq_lint_report(lc, 0, sub, 0, NULL, "detector params must be an object");
		return;
	}
	const char *k;
	json_t *v;
	json_object_foreach(pj, k, v) {
		snprintf(sub, sizeof sub, "%s.detector.params.%s", path, k);
		if (!in_list(params, k)) {
			known_list(params, known, sizeof known);
			iq_lint_report(lc, 0, sub, 1, NULL, "unknown parameter '%s' of detector '%s' (known: %s)",
				       k, s->detector, known);
			continue;
		}
		int ok = json_is_number(v);
		if (json_is_array(v)) {
			size_t i;
			json_t *e;
			ok = json_array_size(v) > 0;
			json_array_foreach(v, i, e)
				ok &= json_is_number(e);
		}
		if (!ok)
			iq_lint_report(lc, 0, sub, 0, NULL,
				       "parameter '%s' of detector '%s' must be a number or an array of numbers",
				       k, s->detector);
		const char *kind, *edges;
		const char *said = json_string_value(json_object_get(json_object_get(det, "windows"), k));
		if (iq_detector_window(s->detector, k, &kind, &edges) && !said)
			iq_lint_report(lc, 0, sub, 1, NULL,
				       "'%s' of detector '%s' is a %s window: say so, \"windows\": {\"%s\": \"%s\"}",
				       k, s->detector, kind, k, kind);
	}
	/* the reason written beside a threshold: of a parameter the pack sets */
	json_t *why = json_object_get(det, "reasons");
	if (why && !json_is_object(why)) {
		snprintf(sub, sizeof sub, "%s.detector.reasons", path);
		iq_lint_report(lc, 0, sub, 0, NULL, "detector reasons must be an object: a parameter and its reason");
	}
	json_object_foreach(why, k, v) {
		snprintf(sub, sizeof sub, "%s.detector.reasons.%s", path, k);
		if (!json_object_get(pj, k))
			iq_lint_report(lc, 0, sub, 1, NULL, "a reason for '%s', which the detector's params do not set", k);
		else if (!json_is_string(v) || !*json_string_value(v))
			iq_lint_report(lc, 0, sub, 0, NULL, "the reason for '%s' must be a non-empty string", k);
	}
	/* the kind each window is, stated by the pack, must be the detector's */
	json_t *wj = json_object_get(det, "windows");
	if (wj && !json_is_object(wj)) {
		snprintf(sub, sizeof sub, "%s.detector.windows", path);
		iq_lint_report(lc, 0, sub, 0, NULL, "detector windows must be an object");
		return;
	}
	json_object_foreach(wj, k, v) {
		const char *kind, *edges;
		snprintf(sub, sizeof sub, "%s.detector.windows.%s", path, k);
		if (!iq_detector_window(s->detector, k, &kind, &edges))
			iq_lint_report(lc, 0, sub, 1, NULL, "'%s' is not a window of detector '%s'", k,
				       s->detector);
		else if (!json_is_string(v) || strcmp(json_string_value(v), kind) != 0)
			iq_lint_report(lc, 0, sub, 0, NULL,
				       "'%s' of detector '%s' is a %s window (%s), not %s", k, s->detector,
				       kind, edges, json_is_string(v) ? json_string_value(v) : "a string");
	}
}

/* A regex that hits PCRE2's match or depth limit on one of its own test
 * lines is an error: in a bundle it would silently never match. */
static void check_limits(struct iq_lint *lc, struct iq_ruleset *rs, const struct iq_signal *s)
{
	static const char *const lists[] = {"match", "no_match"};
	json_t *tests = json_object_get(s->obj, "tests");
	json_t *pats = json_object_get(s->obj, "patterns");
	pcre2_match_data *md = pcre2_match_data_create(64, NULL);
	(void)rs;
	for (size_t r = 0; r < s->nre + s->nexc; r++) {
		pcre2_code *re = r < s->nre ? s->re[r] : s->exc[r - s->nre];
		for (int l = 0; l < 2; l++) {
			size_t k;
			json_t *c;
			json_array_foreach(json_object_get(tests, lists[l]), k, c) {
				const char *t = json_is_string(c) ? json_string_value(c)
					: json_string_value(json_object_get(c, "text"));
				if (!t)
					continue;
				int rc = iq_rules_run_re(re, t, strlen(t), md);
				if (rc != PCRE2_ERROR_MATCHLIMIT && rc != PCRE2_ERROR_DEPTHLIMIT &&
				    rc != PCRE2_ERROR_HEAPLIMIT)
					continue;
				char path[320];
				/* the pattern's index in the JSON: compiled ones skip bad entries,
				 * but a pack with bad entries never gets here in load mode */
				if (r < s->nre && json_array_size(pats) == s->nre)
					snprintf(path, sizeof path, "%s.patterns[%zu]", s->path, r);
				else
					snprintf(path, sizeof path, "%s", s->path);
				PCRE2_UCHAR msg[160];
				pcre2_get_error_message(rc, msg, sizeof msg);
				iq_lint_report(lc, 0, path, 0, NULL,
					       "%s %zu of signal '%s' exceeds PCRE2's limits (%s) on its test line tests.%s[%zu]",
					       r < s->nre ? "pattern" : "exception", r < s->nre ? r + 1 : r - s->nre + 1,
					       s->id, (char *)msg, lists[l], k);
			}
		}
	}
	pcre2_match_data_free(md);
}

static void check_tests(struct iq_lint *lc, const struct iq_signal *s, const char *path)
{
	static const char *const lists[] = {"match", "no_match"};
	char sub[320];
	json_t *tests = json_object_get(s->obj, "tests");
	if (!tests) {
		if (s->nre && !s->detector)
			iq_lint_report(lc, 1, path, 0, NULL, "signal '%s' has no test cases", s->id);
		return;
	}
	snprintf(sub, sizeof sub, "%s.tests", path);
	check_object(lc, tests, sub, tests_keys, "\"tests\"");
	for (int l = 0; l < 2; l++) {
		json_t *list = json_object_get(tests, lists[l]);
		size_t k;
		json_t *c;
		if (list && !json_is_array(list)) {
			snprintf(sub, sizeof sub, "%s.tests.%s", path, lists[l]);
			iq_lint_report(lc, 0, sub, 0, NULL, "\"%s\" must be an array of lines", lists[l]);
		}
		json_array_foreach(list, k, c) {
			snprintf(sub, sizeof sub, "%s.tests.%s[%zu]", path, lists[l], k);
			if (json_is_string(c))
				continue;
			check_object(lc, c, sub, case_keys, "a test case");
			if (!json_is_string(json_object_get(c, "text")))
				iq_lint_report(lc, 0, sub, 0, NULL, "a test case needs a \"text\" string");
			json_t *kind = json_object_get(c, "kind");
			static const char *const kinds[] = {"log", "event", "http", "gpu", "kernel", "pod", "config", NULL};
			if (kind && (!json_is_string(kind) || !in_list(kinds, json_string_value(kind)))) {
				snprintf(sub, sizeof sub, "%s.tests.%s[%zu].kind", path, lists[l], k);
				iq_lint_report(lc, 0, sub, 0, NULL,
					       "unknown record kind (log, event, http, gpu, kernel, pod, config)");
			}
			json_t *caps = json_object_get(c, "captures");
			if (caps && (!json_is_object(caps) || l == 1)) {
				snprintf(sub, sizeof sub, "%s.tests.%s[%zu].captures", path, lists[l], k);
				iq_lint_report(lc, 0, sub, 0, NULL,
					       l ? "a no_match case has no captures" : "\"captures\" must be an object");
			}
		}
	}
	if (s->detector)
		iq_lint_report(lc, 0, sub, 1, NULL,
			       "signal '%s' is a windowed detector: line tests do not apply", s->id);
}

static void check_signal(struct iq_lint *lc, struct iq_ruleset *rs, struct iq_pack *p,
			 const struct iq_signal *s, struct ids *ids)
{
	char sub[320];
	const char *const *keys = s->ref ? ref_keys : json_object_get(s->obj, "detector") ? detector_sig_keys
										      : regex_keys;
	char what[160];
	snprintf(what, sizeof what, "%s entry '%s'", iq_section_name(s->section), s->id);
	check_object(lc, s->obj, s->path, keys, what);
	ids_add(lc, ids, s->id, iq_section_name(s->section), s->path);
	if (!s->ref && !json_object_get(s->obj, "title"))
		iq_lint_report(lc, 0, s->path, 0, NULL, "signal '%s' has no \"title\"", s->id);
	if (s->section == IQ_SEC_BOUNDARIES && !json_object_get(s->obj, "instead"))
		iq_lint_report(lc, 1, s->path, 0, NULL,
			       "boundary '%s' does not say what the incident is \"instead\"", s->id);
	const char *sev = json_string_value(json_object_get(s->obj, "severity"));
	static const char *const sevs[] = {"info", "warning", "error", "critical", NULL};
	if (json_object_get(s->obj, "severity") && (!sev || !in_list(sevs, sev))) {
		snprintf(sub, sizeof sub, "%s.severity", s->path);
		iq_lint_report(lc, 0, sub, 0, NULL, "severity is one of info, warning, error, critical");
	}
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(s->obj, "exceptions"), i, v) {
		snprintf(sub, sizeof sub, "%s.exceptions[%zu]", s->path, i);
		if (json_is_object(v))
			check_object(lc, v, sub, exception_keys, "an exception");
	}
	if (s->ref && s->target && s->kinds && (s->kinds & ~s->target->kinds) && s->target->kinds) {
		snprintf(sub, sizeof sub, "%s.kinds", s->path);
		iq_lint_report(lc, 1, sub, 0, NULL,
			       "ref '%s' lists kinds its shared signal does not apply to", s->ref);
	}
	if (s->detector)
		check_detector(lc, s, s->path);
	check_tests(lc, s, s->path);
	check_limits(lc, rs, s);
	(void)p;
}

/* ---- verdicts ---- */

struct when_check {
	struct iq_lint *lc;
	const struct iq_pack *p;
	const char *path;
	int data_ok;          /* data: terms allowed (not in verdicts) */
};

/* A data term's comparison: "=", "!=", "<", "<=", ">", ">=" and a value
 * (true, false, null, a number or a word), or none at all. */
static int data_op_ok(const char *s)
{
	if (!*s)
		return 1;
	if (*s == '!' && s[1] == '=')
		s += 2;
	else if (*s == '<' || *s == '>')
		s += s[1] == '=' ? 2 : 1;
	else if (*s == '=')
		s++;
	else
		return 0;
	if (!*s)
		return 0;
	for (; *s; s++)
		if (strchr("=!<>", *s))
			return 0;
	return 1;
}

static int when_term(void *u, const char *what, const char *id)
{
	struct when_check *w = u;
	if (strcmp(what, "data") == 0) {
		if (!w->data_ok) {
			iq_lint_report(w->lc, 0, w->path, 0, NULL,
				       "data:%s: a verdict cannot read answers (questions are answered after it)", id);
			return 0;
		}
		size_t qn = strcspn(id, ".=!<>");
		size_t kn = strcspn(id + qn, "=!<>");
		int found = 0;
		for (size_t i = 0; i < iq_pack_item_count(w->p, "questions"); i++) {
			const char *qid = iq_item_str(iq_pack_item(w->p, "questions", i), "id");
			found |= strlen(qid) == qn && strncmp(qid, id, qn) == 0;
		}
		if (!found || id[qn] != '.' || kn < 2)
			iq_lint_report(w->lc, 0, w->path, 0, NULL,
				       "data:%s: needs QUESTION.KEY with a question of the pack", id);
		else if (!data_op_ok(id + qn + kn))
			iq_lint_report(w->lc, 0, w->path, 0, NULL,
				       "data:%s: compare with =, !=, <, <=, > or >= and one value", id);
		return 0;
	}
	char cid[128];
	if (strcmp(what, "condition") == 0 && strchr(id, '=')) {
		/* condition:ID=false (found absent), condition:ID=null (unknown) */
		const char *eq = strchr(id, '=');
		if (strcmp(eq, "=false") && strcmp(eq, "=true") && strcmp(eq, "=null"))
			iq_lint_report(w->lc, 0, w->path, 0, NULL, "condition:%s: the value is true, false or null", id);
		snprintf(cid, sizeof cid, "%.*s", (int)(eq - id), id);
		id = cid;
	}
	static const char *const kinds[] = {"log", "event", "http", "gpu", "kernel", "pod", "config", NULL};
	if (strcmp(what, "missing") == 0) {
		if (!in_list(kinds, id))
			iq_lint_report(w->lc, 0, w->path, 0, NULL,
				       "missing:%s: not a record kind (log, event, http, gpu, kernel, pod, config)", id);
		return 0;
	}
	if (strcmp(what, "condition") == 0) {
		for (size_t i = 0; i < iq_pack_item_count(w->p, "conditions"); i++)
			if (strcmp(iq_item_str(iq_pack_item(w->p, "conditions", i), "id"), id) == 0)
				return 0;
		iq_lint_report(w->lc, 0, w->path, 0, NULL, "condition:%s: no such condition in the pack", id);
		return 0;
	}
	enum iq_section sec = strcmp(what, "signal") == 0 ? IQ_SEC_SIGNALS : IQ_SEC_BOUNDARIES;
	for (size_t i = 0; i < iq_pack_section_count(w->p, sec); i++)
		if (strcmp(iq_signal_id(iq_pack_section_signal(w->p, sec, i)), id) == 0)
			return 0;
	iq_lint_report(w->lc, 0, w->path, 0, NULL, "%s:%s: no such entry in \"%s\"", what, id,
		       iq_section_name(sec));
	return 0;
}

static void check_verdicts(struct iq_lint *lc, struct iq_pack *p)
{
	char path[64];
	json_t *vs = json_object_get(p->root, "verdicts");
	if (!vs) {
		if (!p->shared)
			iq_lint_report(lc, 1, "", 0, NULL, "pack '%s' has no \"verdicts\"", p->id);
		return;
	}
	if (!json_is_array(vs)) {
		iq_lint_report(lc, 0, "verdicts", 0, NULL, "\"verdicts\" must be an array");
		return;
	}
	size_t i;
	json_t *v;
	json_array_foreach(vs, i, v) {
		snprintf(path, sizeof path, "verdicts[%zu]", i);
		check_object(lc, v, path, verdict_keys, "a verdict rule");
		const char *verdict = json_string_value(json_object_get(v, "verdict"));
		char sub[96];
		snprintf(sub, sizeof sub, "%s.verdict", path);
		if (!iq_rules_verdict_known(verdict))
			iq_lint_report(lc, 0, sub, 0, NULL,
				       "unknown verdict '%s' (confirmed, oom_no_cascade, ruled_out_host_oom, ruled_out_flood, not_detected, inconclusive)",
				       verdict ? verdict : "");
		snprintf(sub, sizeof sub, "%s.when", path);
		const char *when = json_string_value(json_object_get(v, "when"));
		struct when_check w = {lc, p, sub, 0};
		if (!when || iq_rules_when_eval(when, when_term, &w) < 0)
			iq_lint_report(lc, 0, sub, 0, NULL,
				       "\"when\" must be an expression of signal:ID, boundary:ID, condition:ID, missing:KIND, always with not/and/or and parentheses");
	}
}

/* ---- questions ---- */

/* Functions that reach outside the database (files, shared libraries,
 * tokenizer pointers): denied even where a build of SQLite has them on. */
static const char *const denied_functions[] = {"load_extension", "fts3_tokenizer", "readfile",
	"writefile", "edit", NULL};

/* The authorizer; u, when not NULL, is an int counting denials (SQLite
 * fails a denied function with a plain SQLITE_ERROR, not SQLITE_AUTH). */
static int deny_writes(void *u, int action, const char *a, const char *b, const char *c, const char *d)
{
	int ok = 0;
	(void)a; (void)c; (void)d;
	switch (action) {
	case SQLITE_FUNCTION:
		/* b is the function's name */
		ok = 1;
		for (size_t i = 0; b && denied_functions[i]; i++)
			if (sqlite3_stricmp(b, denied_functions[i]) == 0)
				ok = 0;
		break;
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		ok = 1;
		break;
	default:
		break;
	}
	if (!ok && u)
		(*(int *)u)++;
	return ok ? SQLITE_OK : SQLITE_DENY;
}

int iq_rules_sql_guard(struct sqlite3 *db)
{
	return sqlite3_set_authorizer(db, deny_writes, NULL) == SQLITE_OK ? 0 : IQ_ERR_DB;
}

/* An empty database of the schema with the guard on, and its denials. */
struct sql_check {
	sqlite3 *db;
	int denied;
};

/* Opens c: 0, or -1 (then c->db is NULL). */
static int sql_check_open(struct sql_check *c)
{
	c->denied = 0;
	if (sqlite3_open(":memory:", &c->db) != SQLITE_OK ||
	    sqlite3_exec(c->db, iq_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_set_authorizer(c->db, deny_writes, &c->denied) != SQLITE_OK) {
		sqlite3_close(c->db);
		c->db = NULL;
		return -1;
	}
	return 0;
}

void iq_rules_sql_check_free(void *check)
{
	struct sql_check *c = check;
	if (!c)
		return;
	sqlite3_close(c->db);
	free(c);
}

/* The numeric "params" of a condition or a question, and the "reasons"
 * beside them: each reason of a parameter the item sets, and (a warning)
 * each parameter with its reason. */
static void check_params(struct iq_lint *lc, json_t *c, const char *path, const char *what)
{
	char sub[160];
	const char *pk;
	json_t *v;
	json_t *params = json_object_get(c, "params"), *why = json_object_get(c, "reasons");
	json_object_foreach(params, pk, v) {
		snprintf(sub, sizeof sub, "%s.params.%s", path, pk);
		if (!json_is_number(v))
			iq_lint_report(lc, 0, sub, 0, NULL, "a %s's parameter must be a number", what);
		else if (strcmp(what, "question") == 0 && !json_object_get(why, pk))
			iq_lint_report(lc, 0, sub, 1, NULL, "parameter '%s' has no reason beside it in \"reasons\"", pk);
	}
	json_object_foreach(why, pk, v) {
		snprintf(sub, sizeof sub, "%s.reasons.%s", path, pk);
		if (!json_object_get(params, pk))
			iq_lint_report(lc, 0, sub, 1, NULL, "a reason for '%s', which the %s's params do not set", pk, what);
		else if (!json_is_string(v) || !*json_string_value(v))
			iq_lint_report(lc, 0, sub, 0, NULL, "the reason for '%s' must be a non-empty string", pk);
	}
}

/* The one rs keeps, made at its first use; NULL when it cannot be made. */
static struct sql_check *sql_check_of(struct iq_ruleset *rs)
{
	if (!rs->sql_check) {
		struct sql_check *c = iq_xcalloc(1, sizeof *c);
		if (sql_check_open(c)) {
			free(c);
			return NULL;
		}
		rs->sql_check = c;
	}
	return rs->sql_check;
}

int iq_rules_guard_questions(struct iq_lint *lc, struct iq_ruleset *rs, struct iq_pack *p)
{
	json_t *qs = json_object_get(p->root, "questions");
	long before = lc->errors;
	size_t i;
	json_t *q;
	if (!json_array_size(qs))
		return 0;
	struct sql_check *c = sql_check_of(rs);
	if (!c) {
		iq_lint_report(lc, 0, "questions", 0, NULL,
			       "cannot check the questions' SQL: no database for it (out of memory?)");
		return IQ_ERR_RULES;
	}
	json_array_foreach(qs, i, q) {
		const char *sql = json_string_value(json_object_get(q, "sql"));
		char path[64];
		snprintf(path, sizeof path, "questions[%zu].sql", i);
		/* every statement of the text, not only the first */
		for (const char *s = sql; s && *s;) {
			sqlite3_stmt *st = NULL;
			const char *tail = NULL;
			c->denied = 0;
			int rc = sqlite3_prepare_v2(c->db, s, -1, &st, &tail);
			if (rc == SQLITE_AUTH || c->denied)
				iq_lint_report(lc, 0, path, 0, NULL,
					       "question SQL must be read-only: it may only SELECT (%s)",
					       sqlite3_errmsg(c->db));
			else if (rc == SQLITE_OK && st && !sqlite3_stmt_readonly(st))
				iq_lint_report(lc, 0, path, 0, NULL, "question SQL must be read-only");
			sqlite3_finalize(st);
			/* one that does not prepare cannot run; lint says why */
			if (rc != SQLITE_OK || !tail || tail == s || lc->errors > before)
				break;
			s = tail;
		}
	}
	return lc->errors > before ? IQ_ERR_RULES : 0;
}

/* Each {name} in the template must be a column of the statement. */
static void check_placeholders(struct iq_lint *lc, json_t *tmpl, sqlite3_stmt *st, const char *path)
{
	const char *k;
	json_t *v;
	json_object_foreach(tmpl, k, v) {
		const char *t = json_string_value(v);
		for (const char *p = t ? strchr(t, '{') : NULL; p; p = strchr(p + 1, '{')) {
			size_t n = strspn(p + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
			if (!n || p[1 + n] != '}')
				continue;
			int found = 0;
			for (int c = 0; st && c < sqlite3_column_count(st); c++) {
				const char *name = sqlite3_column_name(st, c);
				found |= name && strlen(name) == n && memcmp(name, p + 1, n) == 0;
			}
			if (!found) {
				char sub[640];
				snprintf(sub, sizeof sub, "%s.%s", path, k);
				iq_lint_report(lc, 0, sub, 0, NULL,
					       "placeholder {%.*s} is not a column of the question's SQL", (int)n, p + 1);
			}
		}
	}
}

static void check_question(struct iq_lint *lc, struct sql_check *c, json_t *q, const char *path)
{
	sqlite3 *db = c->db;
	char sub[320];
	const char *sql = json_string_value(json_object_get(q, "sql"));
	snprintf(sub, sizeof sub, "%s.sql", path);
	if (!sql) {
		iq_lint_report(lc, 0, path, 0, NULL, "question has no \"sql\" string");
		return;
	}
	if (!json_object_get(q, "question") || !json_object_get(q, "answer"))
		iq_lint_report(lc, 0, path, 0, NULL, "question needs \"question\" and \"answer\" texts");
	if (!db)
		return;
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	c->denied = 0;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, &tail);
	if (rc == SQLITE_AUTH || c->denied) {
		iq_lint_report(lc, 0, sub, 0, NULL, "question SQL must be read-only: it may only SELECT (%s)",
			       sqlite3_errmsg(db));
		return;
	}
	if (rc != SQLITE_OK) {
		iq_lint_report(lc, 0, sub, 0, NULL, "question SQL does not prepare: %s", sqlite3_errmsg(db));
		return;
	}
	if (!st) {
		iq_lint_report(lc, 0, sub, 0, NULL, "question SQL is empty");
		return;
	}
	if (!sqlite3_stmt_readonly(st))
		iq_lint_report(lc, 0, sub, 0, NULL, "question SQL must be read-only");
	while (tail && (*tail == ' ' || *tail == '\n' || *tail == '\t' || *tail == ';'))
		tail++;
	if (tail && *tail)
		iq_lint_report(lc, 0, sub, 0, NULL, "question SQL must be one statement (extra text: '%.40s')", tail);
	for (int i = 1; i <= sqlite3_bind_parameter_count(st); i++) {
		const char *name = sqlite3_bind_parameter_name(st, i);
		if (!name || strcmp(name, ":pack") != 0)
			iq_lint_report(lc, 0, sub, 0, NULL,
				       "unknown SQL parameter '%s' (only :pack, the pack's id, is bound)",
				       name ? name : "?");
	}
	snprintf(sub, sizeof sub, "%s.answer", path);
	check_placeholders(lc, json_object_get(q, "answer"), st, sub);
	sqlite3_finalize(st);
}

static void check_questions(struct iq_lint *lc, struct iq_pack *p, struct ids *ids)
{
	json_t *qs = json_object_get(p->root, "questions");
	if (!qs)
		return;
	struct sql_check c;
	if (sql_check_open(&c))
		iq_lint_report(lc, 1, "questions", 0, NULL,
			       "cannot check the SQL: no database of the schema (out of memory?)");
	size_t i;
	json_t *q;
	char path[64];
	json_array_foreach(qs, i, q) {
		snprintf(path, sizeof path, "questions[%zu]", i);
		check_object(lc, q, path, question_keys, "a question");
		const char *id = json_string_value(json_object_get(q, "id"));
		if (!id)
			iq_lint_report(lc, 0, path, 0, NULL, "question has no \"id\" string");
		else
			ids_add(lc, ids, id, "questions", path);
		check_question(lc, &c, q, path);
		check_params(lc, q, path, "question");
	}
	sqlite3_close(c.db);
}

/* ---- conditions, guidance, the rest ---- */

static void check_conditions(struct iq_lint *lc, struct iq_pack *p, struct ids *ids)
{
	static const char *const ops[] = {">=", "<=", ">", "<", "==", "!=", "contains", "not_contains",
					  "present", "absent", NULL};
	size_t i, k;
	json_t *c, *v;
	char path[64], sub[160];
	json_array_foreach(json_object_get(p->root, "conditions"), i, c) {
		snprintf(path, sizeof path, "conditions[%zu]", i);
		check_object(lc, c, path, condition_keys, "a condition");
		const char *id = json_string_value(json_object_get(c, "id"));
		if (!id)
			iq_lint_report(lc, 0, path, 0, NULL, "condition has no \"id\" string");
		else
			ids_add(lc, ids, id, "conditions", path);
		if (!json_object_get(c, "evidence"))
			iq_lint_report(lc, 0, path, 0, NULL, "condition '%s' does not say what \"evidence\" decides it",
				       id ? id : "?");
		check_params(lc, c, path, "condition");
		json_array_foreach(json_object_get(c, "checks"), k, v) {
			snprintf(sub, sizeof sub, "%s.checks[%zu]", path, k);
			check_object(lc, v, sub, check_keys, "a check");
			const char *op = json_string_value(json_object_get(v, "op"));
			if (!op || !in_list(ops, op)) {
				snprintf(sub, sizeof sub, "%s.checks[%zu].op", path, k);
				iq_lint_report(lc, 0, sub, 0, NULL,
					       "\"op\" is one of >=, <=, >, <, ==, !=, contains, not_contains, present, absent");
			}
		}
	}
}

static void check_guidance(struct iq_lint *lc, struct iq_pack *p, struct ids *ids)
{
	static const char *const phases[] = {"containment", "remediation", "prevention", NULL};
	size_t i, k;
	json_t *g, *v;
	char path[64], sub[160];
	json_array_foreach(json_object_get(p->root, "guidance"), i, g) {
		snprintf(path, sizeof path, "guidance[%zu]", i);
		check_object(lc, g, path, guidance_keys, "a guidance item");
		const char *id = json_string_value(json_object_get(g, "id"));
		if (id)
			ids_add(lc, ids, id, "guidance", path);
		else
			iq_lint_report(lc, 0, path, 0, NULL, "guidance item has no \"id\" string");
		const char *phase = json_string_value(json_object_get(g, "phase"));
		if (!phase || !in_list(phases, phase)) {
			snprintf(sub, sizeof sub, "%s.phase", path);
			iq_lint_report(lc, 0, sub, 0, NULL, "\"phase\" is containment, remediation or prevention");
		}
		json_t *wh = json_object_get(g, "when");
		if (wh) {
			snprintf(sub, sizeof sub, "%s.when", path);
			struct when_check w = {lc, p, sub, 1};
			if (!json_is_string(wh) || iq_rules_when_eval(json_string_value(wh), when_term, &w) < 0)
				iq_lint_report(lc, 0, sub, 0, NULL,
					       "\"when\" must be an expression of signal:ID, boundary:ID, condition:ID[=false|null], data:QUESTION.KEY[OP VALUE], missing:KIND, always with not/and/or and parentheses");
		}
		json_t *f = json_object_get(g, "for");
		if (!json_is_array(f) || !json_array_size(f)) {
			if (!wh)
				iq_lint_report(lc, 0, path, 0, NULL,
					       "guidance '%s' needs \"when\" (what in the findings calls for it) or \"for\"",
					       id ? id : "?");
			continue;
		}
		json_array_foreach(f, k, v) {
			const char *fid = json_string_value(v);
			const char *sec = fid ? ids_find(ids, fid) : NULL;
			snprintf(sub, sizeof sub, "%s.for[%zu]", path, k);
			if (!sec || strcmp(sec, "guidance") == 0)
				iq_lint_report(lc, 0, sub, 0, NULL,
					       "guidance '%s' is for '%s', which is no signal, boundary, condition or question of the pack",
					       id ? id : "?", fid ? fid : "");
		}
	}
}

/* A report text: one localised template, or a list of them, each with an
 * optional "when" (the first that holds and whose placeholders all
 * resolve is printed). */
static void check_templates(struct iq_lint *lc, struct iq_pack *p, json_t *v, const char *path)
{
	char sub[200];
	if (json_is_object(v)) {
		check_object(lc, v, path, template_keys, "a report text");
		json_t *wh = json_object_get(v, "when");
		json_t *copy = json_deep_copy(v);
		json_object_del(copy, "when");
		check_localised(lc, copy, path, "a report text");
		json_decref(copy);
		if (wh) {
			snprintf(sub, sizeof sub, "%s.when", path);
			struct when_check w = {lc, p, sub, 1};
			if (!json_is_string(wh) || iq_rules_when_eval(json_string_value(wh), when_term, &w) < 0)
				iq_lint_report(lc, 0, sub, 0, NULL, "\"when\" must be a when expression");
		}
		return;
	}
	if (!json_is_array(v) || !json_array_size(v)) {
		iq_lint_report(lc, 0, path, 0, NULL, "a report text is {\"en\", \"tr\"} or a list of them");
		return;
	}
	size_t i;
	json_t *t;
	json_array_foreach(v, i, t) {
		snprintf(sub, sizeof sub, "%s[%zu]", path, i);
		check_templates(lc, p, t, sub);
	}
}

static void check_reports(struct iq_lint *lc, struct iq_pack *p)
{
	static const char *const sections[] = {"impact", "detection", "failure_order", "load_shift",
		"signals", "oom_events", "sawtooth", "surge", "crash_loops", "conditions", "not", "timeline",
		"charts", "questions", "limits", "guidance", "lessons", NULL};
	json_t *rs = json_object_get(p->root, "reports");
	if (!rs)
		return;
	char path[64], sub[160];
	if (!json_is_array(rs)) {
		iq_lint_report(lc, 0, "reports", 0, NULL, "\"reports\" must be an array");
		return;
	}
	size_t i, k;
	json_t *r, *v;
	json_array_foreach(rs, i, r) {
		snprintf(path, sizeof path, "reports[%zu]", i);
		check_object(lc, r, path, report_keys, "a report");
		const char *verdict = json_string_value(json_object_get(r, "verdict"));
		if (!iq_rules_verdict_known(verdict)) {
			snprintf(sub, sizeof sub, "%s.verdict", path);
			iq_lint_report(lc, 0, sub, 0, NULL, "unknown verdict '%s'", verdict ? verdict : "");
		}
		if (!json_is_integer(json_object_get(r, "priority"))) {
			snprintf(sub, sizeof sub, "%s.priority", path);
			iq_lint_report(lc, 0, sub, 0, NULL, "\"priority\" is an integer: the highest report that holds is printed");
		}
		static const char *const texts[] = {"title", "summary", "root_cause", "trigger"};
		for (size_t t = 0; t < IQ_ARRAY_LEN(texts); t++) {
			json_t *x = json_object_get(r, texts[t]);
			snprintf(sub, sizeof sub, "%s.%s", path, texts[t]);
			if (x)
				check_templates(lc, p, x, sub);
			else if (t < 2)
				iq_lint_report(lc, 0, path, 0, NULL, "a report needs \"%s\"", texts[t]);
		}
		json_array_foreach(json_object_get(r, "sections"), k, v) {
			if (!json_is_string(v) || !in_list(sections, json_string_value(v))) {
				char known[400];
				known_list(sections, known, sizeof known);
				snprintf(sub, sizeof sub, "%s.sections[%zu]", path, k);
				iq_lint_report(lc, 0, sub, 0, NULL, "unknown section (known: %s)", known);
			}
		}
	}
}

void iq_rules_lint_pack(struct iq_lint *lc, struct iq_ruleset *rs, struct iq_pack *p)
{
	struct ids *ids = iq_xcalloc(1, sizeof *ids);
	check_object(lc, p->root, "", pack_keys, "the pack");
	if (!kebab(p->id))
		iq_lint_report(lc, 0, "id", 0, NULL, "pack id '%s' is not kebab-case", p->id);
	if (!json_object_get(p->root, "title"))
		iq_lint_report(lc, 0, "", 0, NULL, "pack '%s' has no \"title\"", p->id);
	if (!p->shared && !json_object_get(p->root, "definition"))
		iq_lint_report(lc, 0, "", 0, NULL, "pack '%s' has no \"definition\"", p->id);
	if (!json_is_string(json_object_get(p->root, "version")))
		iq_lint_report(lc, 1, "", 0, NULL, "pack '%s' has no \"version\" string", p->id);
	for (size_t i = 0; i < p->nall; i++)
		check_signal(lc, rs, p, &p->sig[i], ids);
	check_conditions(lc, p, ids);
	check_questions(lc, p, ids);
	check_guidance(lc, p, ids);
	check_verdicts(lc, p);
	check_reports(lc, p);
	size_t i;
	json_t *v;
	char path[64];
	json_array_foreach(json_object_get(p->root, "impacts"), i, v) {
		snprintf(path, sizeof path, "impacts[%zu]", i);
		check_localised(lc, v, path, "an impact");
	}
	json_array_foreach(json_object_get(p->root, "references"), i, v) {
		snprintf(path, sizeof path, "references[%zu]", i);
		if (!json_is_string(v))
			iq_lint_report(lc, 0, path, 0, NULL, "a reference is a string (a URL or a path)");
	}
	free(ids);
}
