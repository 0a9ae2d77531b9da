/* md.c: postmortem.md, the document an SRE reads first and pastes into the
 * incident doc, in the shape of the usual SRE postmortem templates
 * (summary, impact, detection, root cause, timeline, questions, actions).
 * Everything in it comes from the findings document and the database
 * (read-only); log text is escaped so that it can never break the
 * Markdown around it. Words are the catalogue's (i18n.c), in en or tr. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../rules/rules.h"
#include "report_int.h"

/* ---- escaping (esc.c escapes, these write) ---- */

void iq_md_put(FILE *out, const char *s, size_t max)
{
	struct iq_buf b;
	iq_buf_init(&b);
	if (s && iq_md_escape(&b, s, strlen(s), max) == 0 && b.p)
		fputs(b.p, out);
	iq_buf_release(&b);
}

void iq_md_codeput(FILE *out, const char *s, size_t max, int in_table)
{
	struct iq_buf b;
	iq_buf_init(&b);
	if (iq_md_code(&b, s ? s : "", s ? strlen(s) : 0, max, in_table) == 0 && b.p)
		fputs(b.p, out);
	iq_buf_release(&b);
}

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static long long num(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

int64_t iq_json_time(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	int64_t t;
	if (!s || iq_time_parse_iso(s, strlen(s), &t, NULL) < 0)
		return IQ_TIME_NONE;
	return t;
}

char *iq_fmt_dur(int64_t ns, const char *lang, char *out)
{
	const char *neg = ns < 0 ? "-" : "";
	if (ns < 0)
		ns = -ns;
	int64_t ms = ns / 1000000;
	int64_t s = ms / 1000, m = s / 60, h = m / 60;
	if (h)
		snprintf(out, IQ_DUR_BUF, iq_msg(lang, "dur.hms"), neg, (long long)h, (long long)(m % 60),
			 (long long)(s % 60));
	else if (m)
		snprintf(out, IQ_DUR_BUF, iq_msg(lang, "dur.ms"), neg, (long long)m, (long long)(s % 60));
	else if (s >= 10)
		snprintf(out, IQ_DUR_BUF, iq_msg(lang, "dur.s"), neg, (long long)s);
	else
		snprintf(out, IQ_DUR_BUF, iq_msg(lang, "dur.sf"), neg, (double)ms / 1000.0);
	return out;
}

/* ---- the document ---- */

struct pm {
	FILE *out;
	json_t *doc, *pat;
	struct iq_store *s;
	const char *lang;
	const struct iq_pack *pack;
	const struct iq_report_opts *o;
	struct iq_tpl_scan *scan;   /* the one read of the records */
	struct iq_refs refs;        /* what the document cites, E1, E2, ... */
	json_t *report;             /* the pack's report the document is (NULL:
				     * no known pattern) */
	json_t *data;               /* where impact, phases and the timeline's
				     * figures come from: pat, or a pattern
				     * that has them */
	const struct iq_ruleset *rs; /* the packs */
};

#define M(key) iq_msg(p->lang, key)

static json_t *pack_item(struct pm *p, const char *section, const char *id)
{
	if (!p->pack)
		return NULL;
	for (size_t i = 0; i < iq_pack_item_count(p->pack, section); i++) {
		json_t *it = iq_pack_item(p->pack, section, i);
		if (strcmp(iq_item_str(it, "id"), id) == 0)
			return it;
	}
	return NULL;
}

/* The localised title of a signal, boundary or condition, or "". */
static const char *title_of(struct pm *p, const char *id)
{
	if (!p->pack)
		return "";
	const struct iq_signal *sg = iq_pack_find_signal(p->pack, id);
	if (sg)
		return iq_signal_text(sg, "title", p->lang);
	json_t *it = pack_item(p, "conditions", id);
	return it ? iq_item_text(it, "title", p->lang) : "";
}

static void put(struct pm *p, const char *s, size_t max)
{
	iq_md_put(p->out, s, max);
}

/* s as a code span in running text, and in a table cell. */
static void code(struct pm *p, const char *s)
{
	iq_md_codeput(p->out, s, 200, 0);
}

static void tcode(struct pm *p, const char *s)
{
	iq_md_codeput(p->out, s, 200, 1);
}

static void time_or_dash(struct pm *p, const char *t)
{
	fputs(*t ? t : "–", p->out);
}

/* The short reference [E12] of one evidence object. */
static void cite(struct pm *p, json_t *e)
{
	iq_refs_cite(p->out, iq_refs_add_json(&p->refs, e));
}

/* Up to max evidence references of an evidence list, ", "-separated. */
static void refs(struct pm *p, json_t *ev, size_t max)
{
	size_t i;
	json_t *e;
	if (json_is_object(ev)) {
		cite(p, ev);
		return;
	}
	json_array_foreach(ev, i, e) {
		if (i == max) {
			fprintf(p->out, " (+%zu)", json_array_size(ev) - max);
			break;
		}
		fputs(i ? ", " : "", p->out);
		cite(p, e);
	}
	if (!json_array_size(ev) && !json_is_object(ev))
		fputs("–", p->out);
}

/* A quoted log line under a bullet: the reference and the escaped text. */
static void quote_line(struct pm *p, json_t *e, const char *indent)
{
	if (!e)
		return;
	fprintf(p->out, "%s> ", indent);
	cite(p, e);
	fputs(" ", p->out);
	put(p, str(e, "text"), 240);
	fputs("\n", p->out);
}

static void gib(struct pm *p, json_t *v)
{
	if (json_is_integer(v))
		fprintf(p->out, "%.2f GiB", (double)json_integer_value(v) / 1073741824.0);
	else
		fputs(M("unknown"), p->out);
}

static const char *gib_str(struct pm *p, json_t *v, char *b, size_t n)
{
	if (json_is_integer(v))
		snprintf(b, n, "%.2f GiB", (double)json_integer_value(v) / 1073741824.0);
	else
		snprintf(b, n, "%s", M("unknown"));
	return b;
}

/* s escaped for inline Markdown, in one of a few rotating buffers (for
 * the arguments of one catalogue format). */
static const char *E(const char *s)
{
	static char ring[8][640];
	static unsigned next;
	char *out = ring[next++ % 8];
	struct iq_buf b;
	iq_buf_init(&b);
	if (s && iq_md_escape(&b, s, strlen(s), 200) == 0 && b.p)
		snprintf(out, sizeof ring[0], "%s", b.p);
	else
		out[0] = '\0';
	iq_buf_release(&b);
	return out;
}

static const char *verdict_name(struct pm *p, const char *v)
{
	char key[64];
	snprintf(key, sizeof key, "verdict.%s", v);
	const char *t = iq_msg(p->lang, key);
	return strcmp(t, key) == 0 ? v : t;
}

/* The incident window: its span and how it was found. */
static void window_line(struct pm *p)
{
	json_t *w = json_object_get(p->doc, "incident_window");
	if (!w)
		return;
	const char *start = str(w, "start"), *end = str(w, "end");
	fprintf(p->out, "- **%s:** ", M("meta.window"));
	if (*start && *end)
		fprintf(p->out, "%s – %s (", start, end);
	if (json_is_true(json_object_get(w, "given"))) {
		fputs(M("window.given"), p->out);
	} else if (*start) {
		json_t *f = json_object_get(w, "first_signal"), *l = json_object_get(w, "last_signal");
		char fs[96], ls[96];
		snprintf(fs, sizeof fs, "`%s`", str(f, "signal"));
		snprintf(ls, sizeof ls, "`%s`", str(l, "signal"));
		fprintf(p->out, M("window.inferred"), fs, str(f, "time"),
			(int)(json_integer_value(json_object_get(w, "lead_s")) / 60), ls, str(l, "time"),
			(int)(json_integer_value(json_object_get(w, "tail_s")) / 60));
	} else {
		fputs(M("window.none"), p->out);
	}
	fputs(*start && *end ? ")\n" : "\n", p->out);
}

/* Is section name one of the report's? The report of no known pattern
 * has its own few. */
static int has(struct pm *p, const char *name)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(p->report, "sections"), i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
			return 1;
	return 0;
}

/* A report text of the pack (summary, root_cause, ...), escaped; 0 when
 * the report has none that the findings fill. */
static int report_text(struct pm *p, const char *key, size_t max)
{
	struct iq_buf b;
	iq_buf_init(&b);
	int ok = p->report && iq_report_text(&b, json_object_get(p->report, key), p->doc, p->pat, p->lang, 1);
	if (ok && b.p)
		fprintf(p->out, "%.*s", (int)(b.len < max ? b.len : max), b.p);
	iq_buf_release(&b);
	return ok;
}

static void header(struct pm *p)
{
	json_t *pat = p->pat;
	fprintf(p->out, "# %s: ", M("title"));
	if (!p->report || !report_text(p, "title", 300))
		fputs(M(p->report ? "incident" : "unknown.title"), p->out);
	fputs("\n\n", p->out);
	const char *date = str(json_object_get(json_object_get(p->data, "phases"), "outage_begins"), "time");
	if (!*date)
		date = str(json_array_get(json_object_get(p->doc, "timeline"), 0), "time");
	fprintf(p->out, "- **%s:** %.10s\n", M("meta.date"), *date ? date : M("unknown"));
	fprintf(p->out, "- **%s:** ", M("meta.status"));
	fprintf(p->out, M("meta.draft"), IQ_VERSION);
	fprintf(p->out, "\n- **%s:** ", M("meta.bundle"));
	size_t i;
	json_t *e;
	/* by its file name: the analysing machine's paths are no one's business */
	json_array_foreach(json_object_get(json_object_get(p->doc, "bundle"), "paths"), i, e) {
		fputs(i ? ", " : "", p->out);
		char *name = iq_base_name(json_string_value(e) ? json_string_value(e) : "");
		code(p, name);
		free(name);
	}
	fprintf(p->out, "\n- **%s:** %s\n", M("meta.times"), M("meta.utc"));
	window_line(p);
	if (pat) {
		fprintf(p->out, "- **%s:** ", M("meta.verdict"));
		code(p, str(pat, "id"));
		fputs(" ", p->out);
		code(p, str(pat, "verdict"));
		fprintf(p->out, " (%s %.2f)\n", M("confidence"), json_number_value(json_object_get(pat, "confidence")));
	}
	json_array_foreach(json_object_get(p->doc, "patterns"), i, e) {
		if (e == pat)
			continue;
		fprintf(p->out, "- **%s:** ", M("meta.other"));
		code(p, str(e, "id"));
		/* the other patterns' verdicts say whether they happened, in their own terms */
		const char *v = str(e, "verdict");
		fputs(" ", p->out);
		code(p, v);
		if (strcmp(p->lang, "en") == 0) {
			fputs(" — ", p->out);
			put(p, str(e, "summary"), 200);
		}
		fputc('\n', p->out);
	}
	fprintf(p->out, "\n> ✍ %s\n\n", M("prompt.legend"));
}

static int64_t phase_t(struct pm *p, const char *name)
{
	return iq_json_time(json_object_get(json_object_get(p->data, "phases"), name), "time");
}

static void section_summary(struct pm *p)
{
	json_t *pat = p->pat;
	fprintf(p->out, "## %s\n\n", M("h.summary"));
	if (!report_text(p, "summary", 4000))
		put(p, str(pat, "summary"), 600);
	/* what made it likely: the conditions found */
	size_t i, k = 0;
	json_t *c;
	struct iq_buf why;
	iq_buf_init(&why);
	json_array_foreach(has(p, "conditions") ? json_object_get(pat, "conditions") : NULL, i, c) {
		if (!json_is_true(json_object_get(c, "present")))
			continue;
		const char *t = title_of(p, str(c, "id"));
		if (k++)
			iq_buf_adds(&why, ", ");
		iq_md_escape(&why, *t ? t : str(c, "id"), strlen(*t ? t : str(c, "id")), 120);
	}
	if (k)
		fprintf(p->out, " %s %s.", M("sum.contrib"), why.p ? why.p : "");
	iq_buf_release(&why);
	int64_t b = phase_t(p, "outage_begins"), e = phase_t(p, "outage_ends");
	json_t *imp = json_object_get(p->data, "impact");
	json_t *ph = json_object_get(p->data, "phases");
	if (b != IQ_TIME_NONE && e != IQ_TIME_NONE && json_is_integer(json_object_get(imp, "failed_requests"))) {
		char d[IQ_DUR_BUF];
		fputs(" ", p->out);
		fprintf(p->out, M("sum.long"), iq_fmt_dur(e - b, p->lang, d),
			E(str(json_object_get(ph, "outage_begins"), "time")),
			E(str(json_object_get(ph, "outage_ends"), "time")), num(imp, "failed_requests"));
	} else if (json_is_integer(json_object_get(imp, "failed_requests"))) {
		fputs(" ", p->out);
		fprintf(p->out, M("sum.failed"), num(imp, "failed_requests"));
	}
	fputs("\n\n", p->out);
	if (strcmp(p->lang, "en") == 0 && *str(pat, "summary")) {
		fputs("_Detector summary:_ ", p->out);
		put(p, str(pat, "summary"), 600);
		fputs("\n\n", p->out);
	}
}

/* The report of a bundle where no pattern holds: what was looked for. */
static void section_checked(struct pm *p)
{
	fprintf(p->out, "## %s\n\n", M("h.summary"));
	size_t n = json_array_size(json_object_get(p->doc, "patterns"));
	fprintf(p->out, M("unknown.summary"), n);
	json_t *imp = json_object_get(p->data, "impact");
	if (json_integer_value(json_object_get(imp, "failed_requests")) > 0) {
		fputs(" ", p->out);
		fprintf(p->out, M("sum.failed"), num(imp, "failed_requests"));
	}
	fprintf(p->out, "\n\n## %s\n\n", M("h.checked"));
	fprintf(p->out, "| %s | %s | %s | %s |\n| --- | --- | --- | --- |\n", M("col.pattern"), M("col.verdict"),
		M("col.checked"), M("col.found"));
	size_t i;
	json_t *pt;
	json_array_foreach(json_object_get(p->doc, "patterns"), i, pt) {
		const struct iq_pack *pk = p->rs ? iq_rules_find(p->rs, str(pt, "id")) : NULL;
		const char *t = pk ? iq_pack_text(pk, "title", p->lang) : str(pt, "title");
		fputs("| ", p->out);
		put(p, *t ? t : str(pt, "id"), 120);
		fputs(" (", p->out);
		tcode(p, str(pt, "id"));
		fputs(") | ", p->out);
		tcode(p, str(pt, "verdict"));
		fputs(" | ", p->out);
		const char *secs[] = {"signals", "boundaries", "conditions"};
		int k = 0;
		for (int sgi = 0; sgi < 3; sgi++) {
			size_t j;
			json_t *x;
			json_array_foreach(json_object_get(pt, secs[sgi]), j, x) {
				fputs(k++ ? ", " : "", p->out);
				tcode(p, str(x, "id"));
			}
		}
		fputs(" | ", p->out);
		k = 0;
		for (int sgi = 0; sgi < 3; sgi++) {
			size_t j;
			json_t *x;
			json_array_foreach(json_object_get(pt, secs[sgi]), j, x) {
				if (!json_is_true(json_object_get(x, "present")))
					continue;
				fputs(k++ ? ", " : "", p->out);
				tcode(p, str(x, "id"));
				fputs(" ", p->out);
				refs(p, json_object_get(x, "evidence"), 1);
			}
		}
		if (!k)
			fputs(M("unknown.nothing"), p->out);
		fputs(" |\n", p->out);
	}
	fprintf(p->out, "\n%s\n\n", M("unknown.next"));
	json_t *miss = json_object_get(p->data, "sources_missing");
	if (json_array_size(miss)) {
		fprintf(p->out, "%s ", M("unknown.missing"));
		json_array_foreach(miss, i, pt) {
			fputs(i ? ", " : "", p->out);
			if (json_is_string(pt))
				put(p, json_string_value(pt), 200);
			else
				put(p, str(pt, "source"), 200);
		}
		fputs(".\n\n", p->out);
	}
}

static void section_impact(struct pm *p)
{
	json_t *pat = p->data, *imp = json_object_get(pat, "impact");
	fprintf(p->out, "## %s\n\n", M("h.impact"));
	if (!json_is_object(imp)) {
		fprintf(p->out, "%s\n\n", M("impact.none"));
		return;
	}
	fprintf(p->out, "- **%s:** %lld\n", M("impact.failed"), num(imp, "failed_requests"));
	json_t *un = json_object_get(imp, "unavailability");
	fprintf(p->out, "- **%s:** ", M("impact.unavail"));
	if (json_is_object(un)) {
		char d[IQ_DUR_BUF];
		fprintf(p->out, "%s – %s (%s)\n", str(un, "start"), str(un, "end"),
			iq_fmt_dur(iq_json_time(un, "end") - iq_json_time(un, "start"), p->lang, d));
	} else {
		fprintf(p->out, "%s\n", M("impact.nounavail"));
	}
	json_t *ds = json_object_get(imp, "dropped_streams");
	if (json_is_integer(ds))
		fprintf(p->out, "- **%s:** %lld\n", M("impact.streams"), (long long)json_integer_value(ds));
	else
		fprintf(p->out, "- **%s:** %s\n", M("impact.streams"), M("unknown"));
	int64_t b = phase_t(p, "outage_begins"), e = phase_t(p, "outage_ends");
	if (b != IQ_TIME_NONE && e != IQ_TIME_NONE) {
		char d[IQ_DUR_BUF];
		fprintf(p->out, "- **%s:** %s\n", M("impact.outage"), iq_fmt_dur(e - b, p->lang, d));
	}
	json_t *cas = json_object_get(pat, "cascade");
	if (json_is_object(cas))
		fprintf(p->out, "- **%s:** %lld / %lld\n", M("impact.pods"), num(cas, "pods_affected"),
			num(cas, "nodes_affected"));
	json_t *sg = json_object_get(pat, "lb_5xx_surge");
	if (json_is_object(sg)) {
		fprintf(p->out, "- **%s:** ", M("impact.surge"));
		fprintf(p->out, M("impact.surgefmt"), E(str(sg, "start")), E(str(sg, "end")),
			num(sg, "peak_per_minute"), num(sg, "count_502"), num(sg, "count_503"),
			num(sg, "count_504"));
		fputs("\n", p->out);
	}
	fputs("\n", p->out);
}

static const char *const phases[] = {"outage_begins", "detected", "mitigated", "outage_ends"};

static void basis(struct pm *p, const char *b)
{
	const char *t = strcmp(p->lang, "en") == 0 ? NULL : iq_basis_tr(b);
	put(p, t ? t : b, 300);
}

static void section_detection(struct pm *p)
{
	json_t *ph = json_object_get(p->data, "phases");
	fprintf(p->out, "## %s\n\n", M("h.detection"));
	if (!json_is_object(ph)) {
		fprintf(p->out, "%s\n\n", M("det.none"));
	} else {
		fprintf(p->out, "| %s | %s | %s | %s |\n| --- | --- | --- | --- |\n", M("col.phase"),
			M("col.time"), M("col.basis"), M("col.evidence"));
		for (size_t i = 0; i < IQ_ARRAY_LEN(phases); i++) {
			json_t *x = json_object_get(ph, phases[i]);
			char key[64];
			snprintf(key, sizeof key, "phase.%s", phases[i]);
			fprintf(p->out, "| **%s** | ", M(key));
			time_or_dash(p, str(x, "time"));
			fputs(" | ", p->out);
			if (json_is_object(x))
				basis(p, str(x, "basis"));
			else
				fputs(M("det.notfound"), p->out);
			fputs(" | ", p->out);
			refs(p, json_object_get(x, "evidence"), 2);
			fputs(" |\n", p->out);
		}
		fputs("\n", p->out);
		int64_t b = phase_t(p, "outage_begins"), d = phase_t(p, "detected"),
			m = phase_t(p, "mitigated"), e = phase_t(p, "outage_ends");
		char x[IQ_DUR_BUF];
		if (b != IQ_TIME_NONE && d != IQ_TIME_NONE)
			fprintf(p->out, "- **%s:** %s\n", M("det.ttd"), iq_fmt_dur(d - b, p->lang, x));
		if (b != IQ_TIME_NONE && m != IQ_TIME_NONE)
			fprintf(p->out, "- **%s:** %s\n", M("det.ttm"), iq_fmt_dur(m - b, p->lang, x));
		if (b != IQ_TIME_NONE && e != IQ_TIME_NONE)
			fprintf(p->out, "- **%s:** %s\n", M("det.dur"), iq_fmt_dur(e - b, p->lang, x));
		fputs("\n", p->out);
	}
	fprintf(p->out, "> ✍ **%s** %s\n\n", M("prompt.team"), M("prompt.detection"));
}

static json_t *oom_of(struct pm *p, const char *pod, const char *time)
{
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(p->pat, "oom_events"), i, o)
		if (strcmp(str(o, "pod"), pod) == 0 && strcmp(str(o, "time"), time) == 0)
			return o;
	return NULL;
}

/* The evidence list (or object) at a path of the report ("x_evidence"). */
static json_t *report_evidence(struct pm *p, const char *key)
{
	const char *path = p->report ? iq_item_str(p->report, key) : "";
	return *path ? iq_finding_path(p->doc, p->pat, path) : NULL;
}

static void section_root_cause(struct pm *p)
{
	json_t *pat = p->pat;
	fprintf(p->out, "## %s\n\n", M("h.root"));
	json_t *ooms = json_object_get(pat, "oom_events");
	json_t *o;
	fprintf(p->out, "**%s** ", M("root.cause"));
	if (report_text(p, "root_cause", 4000)) {
		fputs("\n\n", p->out);
		json_t *ev = report_evidence(p, "root_cause_evidence");
		json_t *first = json_is_array(ev) ? json_array_get(ev, 0) : ev;
		if (json_is_object(first)) {
			quote_line(p, first, "");
			fputs("\n", p->out);
		}
		json_decref(ev);
	} else {
		fprintf(p->out, "%s\n\n", M("root.unknown"));
	}
	fprintf(p->out, "**%s** ", M("root.trigger"));
	if (report_text(p, "trigger", 4000)) {
		json_t *ev = report_evidence(p, "trigger_evidence");
		if (ev) {
			fputs(" ", p->out);
			refs(p, ev, 2);
		}
		json_decref(ev);
		fputs("\n\n", p->out);
	} else {
		fprintf(p->out, "%s\n\n", M("root.notrigger"));
	}
	json_t *order = json_object_get(json_object_get(pat, "cascade"), "failure_order");
	if (has(p, "failure_order") && json_array_size(order)) {
		fprintf(p->out, "### %s\n\n| # | %s | %s | %s | %s | %s |\n| ---: | --- | --- | --- | ---: | --- |\n",
			M("root.order"), M("col.pod"), M("col.node"), M("col.oomtime"), M("col.tried"),
			M("col.evidence"));
		size_t i;
		json_t *f;
		json_array_foreach(order, i, f) {
			json_t *ev = oom_of(p, str(f, "pod"), str(f, "time"));
			fprintf(p->out, "| %zu | ", i + 1);
			put(p, str(f, "pod"), 64);
			fputs(" | ", p->out);
			put(p, str(f, "node"), 64);
			fprintf(p->out, " | %s | ", str(f, "time"));
			if (ev)
				gib(p, json_object_get(ev, "tried_bytes"));
			else
				fputs("–", p->out);
			fputs(" | ", p->out);
			refs(p, ev ? json_object_get(ev, "evidence") : NULL, 1);
			fputs(" |\n", p->out);
		}
		fputs("\n", p->out);
	}
	json_t *ls = json_object_get(json_object_get(pat, "cascade"), "load_shift");
	if (has(p, "load_shift") && json_array_size(ls)) {
		fprintf(p->out, "%s\n\n", M("root.shift"));
		size_t i;
		json_t *x;
		json_array_foreach(ls, i, x) {
			fputs("- ", p->out);
			fprintf(p->out, M("root.shiftfmt"), E(str(x, "after_pod")), E(str(x, "survivor")),
				json_number_value(json_object_get(x, "share_before")) * 100,
				json_number_value(json_object_get(x, "share_after")) * 100);
			fputs("\n", p->out);
		}
		fputs("\n", p->out);
	}
	/* signals */
	size_t i;
	json_t *s;
	if (has(p, "signals")) {
	fprintf(p->out, "### %s\n\n| %s | %s | %s | %s | %s | %s |\n| --- | --- | ---: | --- | --- | --- |\n",
		M("root.signals"), M("col.signal"), M("col.found"), M("col.count"), M("col.first"),
		M("col.last"), M("col.evidence"));
	json_array_foreach(json_object_get(pat, "signals"), i, s) {
		const char *t = title_of(p, str(s, "id"));
		fputs("| ", p->out);
		tcode(p, str(s, "id"));
		if (*t) {
			fputs(" ", p->out);
			put(p, t, 120);
		}
		fprintf(p->out, " | %s | %lld | ", M(json_is_true(json_object_get(s, "present")) ? "yes" : "no"),
			num(s, "count"));
		time_or_dash(p, str(s, "first"));
		fputs(" | ", p->out);
		time_or_dash(p, str(s, "last"));
		fputs(" | ", p->out);
		refs(p, json_object_get(s, "evidence"), 2);
		fputs(" |\n", p->out);
	}
	fputs("\n", p->out);
	}
	if (has(p, "oom_events") && json_array_size(ooms)) {
		fprintf(p->out, "### %s\n\n| %s | %s | %s | %s | %s | %s | %s |\n"
				"| --- | --- | --- | ---: | ---: | ---: | --- |\n",
			M("root.ooms"), M("col.time"), M("col.node"), M("col.pod"), M("col.tried"),
			M("col.free"), M("col.capacity"), M("col.evidence"));
		json_array_foreach(ooms, i, o) {
			fprintf(p->out, "| %s | ", *str(o, "time") ? str(o, "time") : M("unknown"));
			put(p, str(o, "node"), 64);
			fputs(" | ", p->out);
			put(p, str(o, "pod"), 64);
			const char *keys[] = {"tried_bytes", "free_bytes", "capacity_bytes"};
			for (int k = 0; k < 3; k++) {
				fputs(" | ", p->out);
				gib(p, json_object_get(o, keys[k]));
			}
			fputs(" | ", p->out);
			refs(p, json_object_get(o, "evidence"), 1);
			fputs(" |\n", p->out);
		}
		fputs("\n", p->out);
	}
	json_t *saw = json_object_get(pat, "sawtooth");
	if (has(p, "sawtooth") && json_array_size(saw)) {
		fprintf(p->out, "### %s\n\n", M("root.saw"));
		json_array_foreach(saw, i, s) {
			fputs("- ", p->out);
			put(p, str(s, "node"), 64);
			fputs(" ", p->out);
			code(p, str(s, "gpu"));
			fputs(": ", p->out);
			fprintf(p->out, M("root.sawfmt"), num(s, "cycles"),
				json_number_value(json_object_get(s, "peak_ratio")) * 100,
				json_array_size(json_object_get(s, "deaths")));
			fputs(" ", p->out);
			refs(p, json_object_get(s, "evidence"), 2);
			fputs("\n", p->out);
		}
		fputs("\n", p->out);
	}
	json_t *sg = json_object_get(pat, "lb_5xx_surge");
	if (has(p, "surge") && json_is_object(sg)) {
		fprintf(p->out, "### %s\n\n", M("root.surge"));
		fprintf(p->out, M("impact.surgefmt"), E(str(sg, "start")), E(str(sg, "end")),
			num(sg, "peak_per_minute"), num(sg, "count_502"), num(sg, "count_503"),
			num(sg, "count_504"));
		fputs(" ", p->out);
		refs(p, json_object_get(sg, "evidence"), 2);
		fputs("\n\n", p->out);
		json_t *up = json_object_get(sg, "per_upstream");
		if (json_array_size(up)) {
			fprintf(p->out, "| %s | %s | %s |\n| --- | ---: | ---: |\n", M("col.upstream"),
				M("col.attempts"), M("col.failed"));
			json_array_foreach(up, i, s) {
				fputs("| ", p->out);
				put(p, str(s, "upstream"), 80);
				fprintf(p->out, " | %lld | %lld |\n", num(s, "attempts"), num(s, "failed"));
			}
			fputs("\n", p->out);
		}
	}
	json_t *cl = json_object_get(pat, "crash_loops");
	if (has(p, "crash_loops") && json_array_size(cl)) {
		fprintf(p->out, "### %s\n\n", M("root.crash"));
		json_array_foreach(cl, i, s) {
			fputs("- ", p->out);
			put(p, str(s, "pod"), 64);
			fputs(": ", p->out);
			fprintf(p->out, M("root.crashfmt"), num(s, "restarts"), num(s, "backoff_events"));
			fputs(" ", p->out);
			refs(p, json_object_get(s, "evidence"), 2);
			fputs("\n", p->out);
		}
		fputs("\n", p->out);
	}
}

static void condition_list(struct pm *p, int want_true, int want_null, const char *head)
{
	size_t i, k = 0;
	json_t *c;
	json_array_foreach(json_object_get(p->pat, "conditions"), i, c) {
		json_t *pr = json_object_get(c, "present");
		int is_null = !json_is_boolean(pr);
		if (want_null ? !is_null : (is_null || json_is_true(pr) != want_true))
			continue;
		if (!k++)
			fprintf(p->out, "**%s**\n\n", M(head));
		const char *t = title_of(p, str(c, "id"));
		fputs("- ", p->out);
		if (*t) {
			fputs("**", p->out);
			put(p, t, 160);
			fputs("** ", p->out);
		}
		fputs("(", p->out);
		code(p, str(c, "id"));
		fputs("): ", p->out);
		put(p, str(c, "detail"), 400);
		if (json_array_size(json_object_get(c, "evidence"))) {
			fputs(" ", p->out);
			refs(p, json_object_get(c, "evidence"), 2);
		}
		fputs("\n", p->out);
	}
	if (k)
		fputs("\n", p->out);
}

static void section_conditions(struct pm *p)
{
	fprintf(p->out, "## %s\n\n", M("h.conditions"));
	if (!json_array_size(json_object_get(p->pat, "conditions"))) {
		fprintf(p->out, "%s\n\n", M("cond.none"));
		return;
	}
	condition_list(p, 1, 0, "cond.found");
	condition_list(p, 0, 0, "cond.notfound");
	condition_list(p, 0, 1, "cond.unknown");
}

/* A number of the flood boundary, NAN when null. */
static double fnum(json_t *b, const char *k)
{
	json_t *v = json_object_get(b, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Why the flood was ruled in (its figures) or out (each test it failed,
 * with the figure and the threshold of the pack). */
static void flood_why(struct pm *p, json_t *b, int present)
{
	const struct iq_signal *sg = p->pack ? iq_pack_find_signal(p->pack, "ingress-flood") : NULL;
	json_t *par = sg ? json_object_get(json_object_get(iq_signal_json(sg), "detector"), "params") : NULL;
#define PAR(k, d) (json_is_number(json_object_get(par, k)) ? json_number_value(json_object_get(par, k)) : (d))
	double share = fnum(b, "top_client_share"), rate = fnum(b, "requests_per_s");
	double base = fnum(b, "baseline_requests_per_s"), rise = fnum(b, "rate_rise");
	double refused = fnum(b, "refused_share"), busiest = fnum(b, "busiest_client_share");
	if (present) {
		fprintf(p->out, M("flood.yes"), num(b, "heavy_clients"), share * 100, rate);
		if (!isnan(base) && !isnan(rise))
			fprintf(p->out, M("flood.yes.rise"), rise, base);
		if (!isnan(refused))
			fprintf(p->out, M("flood.yes.refused"), refused * 100);
		fprintf(p->out, "%s", M("flood.yes.up"));
		return;
	}
	size_t i;
	json_t *r;
	int n = 0;
	json_array_foreach(json_object_get(b, "reasons"), i, r) {
		const char *c = json_string_value(r);
		if (!c)
			continue;
		fputs(n++ ? "; " : "", p->out);
		if (strcmp(c, "no_window") == 0)
			fprintf(p->out, "%s", M("flood.no.window"));
		else if (strcmp(c, "no_heavy_client") == 0)
			fprintf(p->out, M("flood.no.heavy"), busiest * 100, PAR("heavy_factor", 10));
		else if (strcmp(c, "many_clients") == 0)
			fprintf(p->out, M("flood.no.many"), num(b, "heavy_clients"), PAR("max_clients", 10));
		else if (strcmp(c, "low_share") == 0)
			fprintf(p->out, M("flood.no.share"), num(b, "heavy_clients"), share * 100,
				PAR("min_client_share", 0.5) * 100);
		else if (strcmp(c, "no_rise") == 0)
			fprintf(p->out, M("flood.no.rise"), rate, rise, base, PAR("min_rate_rise", 5));
		else if (strcmp(c, "not_refused") == 0)
			fprintf(p->out, M("flood.no.refused"), refused * 100);
		else if (strcmp(c, "cuda_oom") == 0)
			fprintf(p->out, "%s", M("flood.no.oom"));
		else if (strcmp(c, "gpu_sawtooth") == 0)
			fprintf(p->out, "%s", M("flood.no.sawtooth"));
		else if (strcmp(c, "host_oom") == 0)
			fprintf(p->out, "%s", M("flood.no.hostoom"));
		else
			put(p, c, 64);
	}
	fputs(".", p->out);
#undef PAR
}

static void section_boundaries(struct pm *p)
{
	fprintf(p->out, "## %s\n\n", M("h.not"));
	json_t *bs = json_object_get(p->pat, "boundaries");
	if (!json_array_size(bs) && json_array_size(json_object_get(p->doc, "patterns")) < 2) {
		fprintf(p->out, "%s\n\n", M("not.none"));
		return;
	}
	size_t i;
	json_t *b;
	json_array_foreach(bs, i, b) {
		const char *id = str(b, "id");
		const char *t = title_of(p, id);
		int present = json_is_true(json_object_get(b, "present"));
		fputs("- **", p->out);
		code(p, id);
		fputs("**", p->out);
		if (*t) {
			fputs(" ", p->out);
			put(p, t, 160);
		}
		fputs(": ", p->out);
		json_t *att = json_object_get(b, "attributed_to");
		int worker = 0;
		size_t j;
		json_t *a;
		json_array_foreach(att, j, a)
			worker |= json_is_true(json_object_get(a, "serving_worker"));
		if (strcmp(id, "host-oom") == 0 && present && !worker) {
			fprintf(p->out, "**%s** — ", M("not.out"));
			fprintf(p->out, M("not.hostoom.other"), num(b, "count"));
			json_array_foreach(att, j, a) {
				fputs(j ? ", " : " ", p->out);
				put(p, *str(a, "process") ? str(a, "process") : str(a, "pod"), 64);
				fputs(" (", p->out);
				put(p, str(a, "node"), 64);
				fprintf(p->out, ", %s)", str(a, "time"));
			}
			fputs(".", p->out);
		} else if (strcmp(id, "ingress-flood") == 0 && json_object_get(b, "reasons")) {
			fprintf(p->out, "**%s** — ", M(present ? "not.in" : "not.out"));
			flood_why(p, b, present);
		} else if (present) {
			fprintf(p->out, "**%s** — ", M("not.in"));
			fprintf(p->out, M("not.seen"), num(b, "count"));
			const struct iq_signal *sg = p->pack ? iq_pack_find_signal(p->pack, id) : NULL;
			const char *inst = sg ? iq_signal_text(sg, "instead", p->lang) : "";
			if (*inst) {
				fprintf(p->out, " %s ", M("not.instead"));
				put(p, inst, 300);
				fputs(".", p->out);
			}
		} else {
			fprintf(p->out, "**%s** — %s", M("not.out"), M("not.unseen"));
		}
		if (json_array_size(json_object_get(b, "evidence"))) {
			fputs(" ", p->out);
			refs(p, json_object_get(b, "evidence"), 2);
		}
		fputs("\n", p->out);
	}
	/* the other patterns that did not happen, in their own terms */
	json_array_foreach(json_object_get(p->doc, "patterns"), i, b) {
		const char *v = str(b, "verdict");
		if (b == p->pat || strcmp(v, "confirmed") == 0 || strcmp(v, "oom_no_cascade") == 0)
			continue;
		const struct iq_pack *pk = p->rs ? iq_rules_find(p->rs, str(b, "id")) : NULL;
		const char *t = pk ? iq_pack_text(pk, "title", p->lang) : str(b, "title");
		fputs("- **", p->out);
		put(p, *t ? t : str(b, "id"), 160);
		fputs("** (", p->out);
		code(p, str(b, "id"));
		fputs("): ", p->out);
		code(p, v);
		fprintf(p->out, " (%s)", verdict_name(p, v));
		if (strcmp(p->lang, "en") == 0 && *str(b, "summary")) {
			fputs(" — ", p->out);
			put(p, str(b, "summary"), 300);
		}
		fputs("\n", p->out);
	}
	fputs("\n", p->out);
}

/* ---- timeline ---- */

struct trow {
	int64_t t;
	int prio;             /* order among rows of the same time */
	size_t seq;
	const char *mark;     /* catalogue text, or NULL */
	char tag[48];
	char *node, *pod, *what, *file;
	long long line, nlines;
	char *etext;          /* the evidence's own text, when not what */
	char etime[IQ_TIME_BUF];
};

struct rows {
	struct trow *r;
	size_t n, cap;
};

static struct trow *row_add(struct rows *rs, int64_t t, int prio)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 64;
		rs->r = iq_xrealloc(rs->r, rs->cap * sizeof *rs->r);
	}
	struct trow *r = &rs->r[rs->n];
	memset(r, 0, sizeof *r);
	r->t = t;
	r->prio = prio;
	r->seq = rs->n++;
	return r;
}

static char *dup_or_empty(const char *s)
{
	return iq_xstrdup(s ? s : "");
}

static int row_cmp(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void row_ev(struct trow *r, json_t *e)
{
	r->file = dup_or_empty(str(e, "file"));
	r->line = num(e, "line");
	r->nlines = num(e, "nlines");
	r->etext = dup_or_empty(str(e, "text"));
	snprintf(r->etime, sizeof r->etime, "%s", str(e, "time"));
}

#define TL_DB_ROWS 400
#define TL_SHOWN 250
#define TL_QUIET_NS (5 * 60 * IQ_NS_PER_SEC)

static void tl_from_db(struct pm *p, struct rows *rs)
{
	/* the pattern's own signals and boundaries: what the story is made of */
	json_t *ids = json_array();
	const char *secs[] = {"signals", "boundaries"};
	for (int k = 0; k < 2; k++) {
		size_t i;
		json_t *s;
		json_array_foreach(json_object_get((p->pat ? p->pat : p->data), secs[k]), i, s)
			json_array_append_new(ids, json_string(str(s, "id")));
	}
	char *idtxt = json_dumps(ids, JSON_COMPACT);
	json_decref(ids);
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "SELECT r.ts, r.node, r.pod, (SELECT min(m.signal) FROM signal_matches m"
		 " WHERE m.record_id = r.id AND m.pack = ?1 AND m.signal IN (SELECT value FROM json_each(?2))),"
		 " f.path, r.line, substr(r.text, 1, 600)"
		 " FROM records r JOIN files f ON f.id = r.file_id"
		 " WHERE r.ts IS NOT NULL AND r.id IN (SELECT record_id FROM signal_matches"
		 " WHERE pack = ?1 AND signal IN (SELECT value FROM json_each(?2)))"
		 " ORDER BY r.ts, f.path, r.line LIMIT %d", TL_DB_ROWS);
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(p->s), sql, -1, &q, NULL) != SQLITE_OK) {
		free(idtxt);
		return;
	}
	sqlite3_bind_text(q, 1, str((p->pat ? p->pat : p->data), "id"), -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, idtxt, -1, SQLITE_STATIC);
	int first_oom = 1;
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *node = (const char *)sqlite3_column_text(q, 1);
		const char *tag = (const char *)sqlite3_column_text(q, 3);
		struct trow *r = row_add(rs, sqlite3_column_int64(q, 0), 2);
		r->node = dup_or_empty(node);
		r->pod = dup_or_empty((const char *)sqlite3_column_text(q, 2));
		snprintf(r->tag, sizeof r->tag, "%s", tag ? tag : "");
		r->file = dup_or_empty((const char *)sqlite3_column_text(q, 4));
		r->line = sqlite3_column_int64(q, 5);
		r->what = dup_or_empty((const char *)sqlite3_column_text(q, 6));
		if (tag && strcmp(tag, "cuda-oom") == 0) {
			r->mark = M(first_oom ? "tl.firstoom" : "tl.death");
			first_oom = 0;
		} else if (tag && strcmp(tag, "host-oom") == 0) {
			r->mark = M("tl.hostkill");
		}
	}
	sqlite3_finalize(q);
	free(idtxt);
}

static void tl_from_findings(struct pm *p, struct rows *rs)
{
	json_t *ph = json_object_get(p->data, "phases");
	for (size_t i = 0; i < IQ_ARRAY_LEN(phases); i++) {
		json_t *x = json_object_get(ph, phases[i]);
		int64_t t = iq_json_time(x, "time");
		if (t == IQ_TIME_NONE)
			continue;
		char key[64];
		snprintf(key, sizeof key, "tl.%s", phases[i]);
		struct trow *r = row_add(rs, t, i == 3 ? 3 : 0);
		r->mark = M(key);
		const char *b = str(x, "basis");
		const char *tb = strcmp(p->lang, "en") == 0 ? NULL : iq_basis_tr(b);
		r->what = iq_xstrdup(tb ? tb : b);
		json_t *e = json_array_get(json_object_get(x, "evidence"), 0);
		r->node = iq_xstrdup("");
		r->pod = iq_xstrdup("");
		if (e)
			row_ev(r, e);
	}
	json_t *sg = json_object_get(p->data, "lb_5xx_surge");
	if (json_is_object(sg)) {
		json_t *ev = json_object_get(sg, "evidence");
		for (int k = 0; k < 2; k++) {
			int64_t t = iq_json_time(sg, k ? "end" : "start");
			if (t == IQ_TIME_NONE)
				continue;
			struct trow *r = row_add(rs, t, 1);
			r->mark = M(k ? "tl.surgeend" : "tl.surgestart");
			char b[160];
			snprintf(b, sizeof b, M("tl.surgefmt"), num(sg, "peak_per_minute"));
			r->what = iq_xstrdup(b);
			r->node = iq_xstrdup("");
			r->pod = iq_xstrdup("");
			json_t *e = json_array_get(ev, k ? json_array_size(ev) - 1 : 0);
			if (e)
				row_ev(r, e);
		}
	}
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(p->data, "recovery"), i, x) {
		int64_t t = iq_json_time(x, "ready");
		if (t == IQ_TIME_NONE)
			continue;
		struct trow *r = row_add(rs, t, 1);
		r->mark = M("tl.ready");
		char b[256];
		char key[64];
		snprintf(key, sizeof key, "rb.%s", str(x, "ready_basis"));
		snprintf(b, sizeof b, M("tl.readyfmt"), num(x, "restart"),
			 json_number_value(json_object_get(x, "restart_to_ready_s")), M(key));
		r->what = iq_xstrdup(b);
		r->node = dup_or_empty(str(x, "node"));
		r->pod = dup_or_empty(str(x, "pod"));
		json_t *e = json_array_get(json_object_get(x, "evidence"), 0);
		if (e)
			row_ev(r, e);
	}
}

static void tl_print(struct pm *p, const struct trow *r, int from_log)
{
	char tb[IQ_TIME_BUF];
	fprintf(p->out, "| %s | ", iq_time_fmt_ms(r->t, tb));
	if (*r->node)
		put(p, r->node, 64);
	fputs(" | ", p->out);
	if (*r->pod)
		put(p, r->pod, 64);
	fputs(" | ", p->out);
	if (r->mark)
		fprintf(p->out, "**%s** ", r->mark);
	if (*r->tag) {
		tcode(p, r->tag);
		fputs(" ", p->out);
	}
	put(p, r->what ? r->what : "", from_log ? 160 : 300);
	fputs(" | ", p->out);
	if (r->file && *r->file)
		iq_refs_cite(p->out, iq_refs_add(&p->refs, r->file, r->line, r->nlines,
						 r->etext ? r->etime : iq_time_fmt_ms(r->t, tb),
						 r->etext ? r->etext : r->what, NULL));
	else
		fputs("–", p->out);
	fputs(" |\n", p->out);
}

static void section_timeline(struct pm *p)
{
	fprintf(p->out, "## %s\n\n", M("h.timeline"));
	struct rows rs = {0};
	tl_from_db(p, &rs);
	tl_from_findings(p, &rs);
	if (!rs.n) {
		fprintf(p->out, "%s\n\n", M("tl.none"));
		return;
	}
	qsort(rs.r, rs.n, sizeof *rs.r, row_cmp);
	fputs(M("tl.intro"), p->out);
	/* detect already moved corrected nodes' times in the database */
	size_t si;
	json_t *sk;
	json_array_foreach(json_object_get(p->doc, "clock_skew"), si, sk)
		if (json_is_true(json_object_get(sk, "corrected"))) {
			fprintf(p->out, " %s", M("tl.skew"));
			break;
		}
	fprintf(p->out, "\n\n| %s | %s | %s | %s | %s |\n| --- | --- | --- | --- | --- |\n",
		M("col.time"), M("col.node"), M("col.pod"), M("col.event"), M("col.evidence"));
	size_t shown = 0, folded = 0;
	int64_t last_t = IQ_TIME_NONE;
	const struct trow *fold_of = NULL;
	for (size_t i = 0; i < rs.n && shown < TL_SHOWN; i++) {
		const struct trow *r = &rs.r[i];
		/* a run of the same unmarked signal on the same pod: show two, fold the rest */
		int same = i >= 2 && !r->mark && *r->tag && !rs.r[i - 1].mark && !rs.r[i - 2].mark &&
			   strcmp(r->tag, rs.r[i - 1].tag) == 0 && strcmp(r->tag, rs.r[i - 2].tag) == 0 &&
			   strcmp(r->pod, rs.r[i - 1].pod) == 0 && strcmp(r->pod, rs.r[i - 2].pod) == 0 &&
			   strcmp(r->node, rs.r[i - 1].node) == 0 && strcmp(r->node, rs.r[i - 2].node) == 0;
		if (same) {
			folded++;
			fold_of = r;
			last_t = r->t;
			continue;
		}
		if (folded) {
			char tb[IQ_TIME_BUF];
			fprintf(p->out, "| … | | | _");
			fprintf(p->out, M("tl.folded"), folded, E(fold_of->tag), iq_time_fmt_ms(fold_of->t, tb));
			fputs("_ | |\n", p->out);
			folded = 0;
		}
		if (last_t != IQ_TIME_NONE && r->t - last_t >= TL_QUIET_NS) {
			char d[IQ_DUR_BUF];
			fprintf(p->out, "| … | | | _");
			fprintf(p->out, M("tl.quiet"), iq_fmt_dur(r->t - last_t, p->lang, d));
			fputs("_ | |\n", p->out);
		}
		tl_print(p, r, *r->tag != 0);
		last_t = r->t;
		shown++;
	}
	if (folded) {
		char tb[IQ_TIME_BUF];
		fprintf(p->out, "| … | | | _");
		fprintf(p->out, M("tl.folded"), folded, E(fold_of->tag), iq_time_fmt_ms(fold_of->t, tb));
		fputs("_ | |\n", p->out);
	}
	fputs("\n", p->out);
	if (shown >= TL_SHOWN || rs.n >= TL_DB_ROWS)
		fprintf(p->out, "%s\n\n", M("tl.more"));
	for (size_t i = 0; i < rs.n; i++) {
		free(rs.r[i].node);
		free(rs.r[i].pod);
		free(rs.r[i].what);
		free(rs.r[i].file);
		free(rs.r[i].etext);
	}
	free(rs.r);
}

/* ---- questions ---- */

static void section_questions(struct pm *p)
{
	fprintf(p->out, "## %s\n\n", M("h.questions"));
	json_t *qs = json_object_get(p->pat, "questions");
	if (!json_array_size(qs)) {
		fprintf(p->out, "%s\n\n", M("q.none"));
		return;
	}
	size_t i;
	json_t *q;
	json_array_foreach(qs, i, q) {
		json_t *it = pack_item(p, "questions", str(q, "id"));
		const char *text = it ? iq_item_text(it, "question", p->lang) : "";
		fprintf(p->out, "### %zu. ", i + 1);
		put(p, *text ? text : str(q, "question"), 300);
		fputs("\n\n", p->out);
		code(p, str(q, "id"));
		fputs(" — ", p->out);
		struct iq_buf b;
		iq_buf_init(&b);
		if (strcmp(p->lang, "en") != 0 &&
		    iq_question_answer_tr(&b, str(q, "id"), json_object_get(q, "data")))
			put(p, b.p, 800);
		else
			put(p, str(q, "answer"), 800);
		iq_buf_release(&b);
		fputs("\n\n", p->out);
		json_t *ev = json_object_get(q, "evidence");
		size_t j;
		json_t *e;
		json_array_foreach(ev, j, e) {
			if (j == 3)
				break;
			if (j)
				fputs(">\n", p->out);
			quote_line(p, e, "");
		}
		if (json_array_size(ev))
			fputs("\n", p->out);
	}
}

/* ---- limits computed from the evidence ---- */

/* A catalogue text by key, or NULL when the catalogue has none. */
static const char *msg_or_null(struct pm *p, const char *key)
{
	const char *t = iq_msg(p->lang, key);
	return strcmp(t, key) == 0 ? NULL : t;
}

/* One measure cell: the value in bold, what it was read from, the pod,
 * the time and the evidence; or why the bundle could not say. */
static void limit_pick(struct pm *p, json_t *pick, const char *note_fmt, const char *note, json_t *nc,
		       const char *what)
{
	if (!json_is_object(pick)) {
		fprintf(p->out, "%s", M("lim.notinbundle"));
		size_t i;
		json_t *n;
		json_array_foreach(nc, i, n) {
			if (strcmp(str(n, "what"), what) != 0)
				continue;
			char key[64];
			const char *id = json_string_value(json_array_get(json_object_get(n, "needs"), 0));
			snprintf(key, sizeof key, "lim.needs.%s", id ? id : "");
			const char *t = msg_or_null(p, key);
			fputs(": ", p->out);
			put(p, t ? t : str(n, "reason"), 300);
		}
		return;
	}
	fprintf(p->out, "**%lld**", num(pick, "value"));
	if (note_fmt && note && *note)
		fprintf(p->out, note_fmt, E(note));
	fputs(" — ", p->out);
	put(p, str(pick, "pod"), 64);
	fprintf(p->out, ", %s, ", str(pick, "time"));
	refs(p, json_object_get(pick, "evidence"), 2);
}

/* The one-line reason of a not_computed entry, in the report's language. */
static void limit_reason(struct pm *p, json_t *n)
{
	size_t i;
	json_t *id;
	json_array_foreach(json_object_get(n, "needs"), i, id) {
		char key[64];
		snprintf(key, sizeof key, "lim.needs.%s", json_string_value(id) ? json_string_value(id) : "");
		const char *t = msg_or_null(p, key);
		fputs(i ? M("lim.and") : "", p->out);
		put(p, t ? t : str(n, "reason"), 300);
		if (!t)
			break;
	}
}

static void limit_setting_name(struct pm *p, const char *setting)
{
	char key[96];
	snprintf(key, sizeof key, "lim.set.%s", setting);
	const char *t = msg_or_null(p, key);
	if (t) {
		fputs(t, p->out);
	} else {
		/* a flag name inside a code span, where escapes would show */
		fputs("`", p->out);
		for (const char *c = setting; *c && c - setting < 64; c++)
			fputc((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' ? *c : '?',
			      p->out);
		fputs("`", p->out);
	}
}

static void section_limits(struct pm *p)
{
	json_t *lim = json_object_get(p->pat, "limits");
	fprintf(p->out, "## %s\n\n", M("h.limits"));
	if (!json_is_object(lim)) {
		fprintf(p->out, "%s\n\n", M("lim.none"));
		return;
	}
	json_t *nc = json_object_get(lim, "not_computed");
	fprintf(p->out, M("lim.intro"), json_number_value(json_object_get(lim, "window_s")));
	if (json_is_object(json_object_get(lim, "vision")))
		fprintf(p->out, " %s", M("lim.visionintro"));
	fputs("\n\n", p->out);
	json_t *b = json_object_get(lim, "batch"), *tk = json_object_get(lim, "tokens_in_flight");
	json_t *kv = json_object_get(lim, "kv_cache");
	char capn[64] = "";
	if (json_is_integer(json_object_get(kv, "capacity_tokens")))
		snprintf(capn, sizeof capn, "%lld", num(kv, "capacity_tokens"));
	fprintf(p->out, "| %s | %s | %s |\n| --- | --- | --- |\n", M("lim.col.measure"), M("lim.col.ok"),
		M("lim.col.bad"));
	fprintf(p->out, "| %s | ", M("lim.row.batch"));
	limit_pick(p, json_object_get(b, "largest_completed"), NULL, NULL, nc, "batch.largest_completed");
	fputs(" | ", p->out);
	limit_pick(p, json_object_get(b, "smallest_failed"), NULL, NULL, nc, "batch.smallest_failed");
	fprintf(p->out, " |\n| %s | ", M("lim.row.tokens"));
	json_t *ok = json_object_get(tk, "largest_completed"), *bad = json_object_get(tk, "smallest_failed");
	char note[96];
	snprintf(note, sizeof note, "%s %% × %s", str(ok, "kv_cache_pct"), capn);
	limit_pick(p, ok, " (%s)", note, nc, "tokens_in_flight.largest_completed");
	fputs(" | ", p->out);
	snprintf(note, sizeof note, "%s × %s", str(bad, "kv_cache_usage"), capn);
	limit_pick(p, bad, " (%s)", note, nc, "tokens_in_flight.smallest_failed");
	fputs(" |\n", p->out);
	/* vision: the batch is images and their pixels */
	json_t *vis = json_object_get(lim, "vision");
	if (json_is_object(vis)) {
		const char *parts[] = {"images_in_flight", "pixels_in_flight"};
		for (int k = 0; k < 2; k++) {
			char key[64], what[96];
			snprintf(key, sizeof key, "lim.row.%s", parts[k]);
			fprintf(p->out, "| %s | ", M(key));
			for (int j = 0; j < 2; j++) {
				const char *side = j ? "smallest_failed" : "largest_completed";
				json_t *pk = json_object_get(json_object_get(vis, parts[k]), side);
				snprintf(what, sizeof what, "vision.%s.%s", parts[k], side);
				snprintf(note, sizeof note, M("lim.inreqs"), num(pk, "requests"));
				limit_pick(p, pk, "%s", note, nc, what);
				fputs(j ? " |\n" : " | ", p->out);
			}
		}
	}
	fputs("\n", p->out);

	/* the KV cache and the step that failed */
	fprintf(p->out, "- **%s:** ", M("lim.kv"));
	if (*capn) {
		fprintf(p->out, M("lim.kvfmt"), capn);
		const char *bs = str(kv, "basis");
		if (*bs) {
			char key[160];
			snprintf(key, sizeof key, "lim.basis.%s", bs);
			const char *t = msg_or_null(p, key);
			fputs(" (", p->out);
			put(p, t ? t : bs, 200);
			if (json_is_integer(json_object_get(kv, "gpu_blocks")))
				fprintf(p->out, ": %lld × %lld", num(kv, "gpu_blocks"), num(kv, "block_size"));
			fputs(")", p->out);
		}
		json_t *mc = json_object_get(kv, "max_concurrency");
		if (json_is_object(mc)) {
			fputs("; ", p->out);
			fprintf(p->out, M("lim.concfmt"), E(str(mc, "concurrency")), num(mc, "tokens_per_request"));
		}
		fputs(". ", p->out);
		refs(p, json_object_get(kv, "evidence"), 2);
	} else {
		fputs(M("lim.notinbundle"), p->out);
		fputs(": ", p->out);
		put(p, M("lim.needs.kv-cache"), 300);
		fputs(".", p->out);
	}
	fputs("\n", p->out);
	json_t *st = json_object_get(lim, "failed_step");
	if (json_is_object(st)) {
		char a[64], f[64];
		fprintf(p->out, "- **%s:** ", M("lim.step"));
		fprintf(p->out, M("lim.stepfmt"), E(str(st, "pod")), E(str(st, "time")), num(st, "scheduled_tokens"),
			M(strcmp(str(st, "scheduled_from"), "crash dump") == 0 ? "lim.from.dump" : "lim.from.setting"),
			gib_str(p, json_object_get(st, "tried_bytes"), a, sizeof a),
			gib_str(p, json_object_get(st, "free_bytes"), f, sizeof f));
		fputs(" ", p->out);
		refs(p, json_object_get(st, "evidence"), 2);
		fputs("\n", p->out);
	}
	json_t *vcur = json_object_get(vis, "current");
	if (json_is_object(vis)) {
		fprintf(p->out, "- **%s:** ", M("lim.vision"));
		fprintf(p->out, M("lim.visionfmt"), num(vis, "requests_logged"));
		fputs(" ", p->out);
		json_t *l = json_object_get(vcur, "limit_mm_per_prompt"), *mp = json_object_get(vcur, "max_pixels");
		if (json_is_integer(l))
			fprintf(p->out, "`--limit-mm-per-prompt image=%lld`", (long long)json_integer_value(l));
		else
			fputs(M("lim.nolimit"), p->out);
		fputs(", ", p->out);
		if (json_is_integer(mp))
			fprintf(p->out, "`max_pixels` %lld", (long long)json_integer_value(mp));
		else
			fputs(M("lim.nomaxpixels"), p->out);
		fputs(".", p->out);
		if (json_array_size(json_object_get(vcur, "evidence"))) {
			fputs(" ", p->out);
			refs(p, json_object_get(vcur, "evidence"), 1);
		}
		fputs("\n", p->out);
	}
	fputs("\n", p->out);

	/* the settings to propose */
	fprintf(p->out, "### %s\n\n", M("lim.proposals"));
	json_t *props = json_object_get(lim, "proposals");
	if (json_array_size(props)) {
		fprintf(p->out, "| %s | %s | %s | %s | %s |\n| --- | ---: | ---: | --- | --- |\n", M("lim.col.setting"),
			M("lim.col.current"), M("lim.col.proposed"), M("lim.col.arith"), M("col.evidence"));
		size_t i;
		json_t *o;
		json_array_foreach(props, i, o) {
			fputs("| ", p->out);
			limit_setting_name(p, str(o, "setting"));
			fputs(" | ", p->out);
			if (json_is_string(json_object_get(o, "current")))
				put(p, str(o, "current"), 64);
			else
				fputs("–", p->out);
			fprintf(p->out, " | **%lld**", num(o, "value"));
			char key[96];
			snprintf(key, sizeof key, "lim.unit.%s", str(o, "setting"));
			const char *u = msg_or_null(p, key);
			if (u)
				fprintf(p->out, " %s", u);
			fputs(" | ", p->out);
			struct iq_buf ab;
			iq_buf_init(&ab);
			if (strcmp(p->lang, "en") != 0 && iq_limit_arith_tr(&ab, o))
				put(p, ab.p, 700);
			else
				put(p, str(o, "arithmetic"), 700);
			iq_buf_release(&ab);
			fputs(" | ", p->out);
			refs(p, json_object_get(o, "evidence"), 2);
			fputs(" |\n", p->out);
		}
		fputs("\n", p->out);
	} else {
		fprintf(p->out, "%s\n\n", M("lim.noproposals"));
	}
	/* what could not be computed, and why */
	size_t i, k = 0;
	json_t *n;
	json_array_foreach(nc, i, n) {
		const char *what = str(n, "what");
		if (strchr(what, '.'))
			continue; /* a measure: said in its cell */
		if (!k++)
			fprintf(p->out, "**%s**\n\n", M("lim.notcomputed"));
		fputs("- ", p->out);
		limit_setting_name(p, what);
		fputs(": ", p->out);
		limit_reason(p, n);
		fputs(".\n", p->out);
	}
	if (k)
		fputs("\n", p->out);
	fprintf(p->out, "%s\n\n", M("lim.caveat"));
}

/* ---- guidance and action items ---- */

static const char *const guide_phases[] = {"containment", "remediation", "prevention"};

/* The text of a guidance item of the pack, in the report's language. */
static const char *guide_text(struct pm *p, const char *id)
{
	json_t *it = pack_item(p, "guidance", id);
	return it ? iq_item_text(it, "text", p->lang) : "";
}

/* The guidance the findings call for (findings.json's "guidance" of the
 * pattern: the pack's "when" held over its answers), by phase, with what
 * called for it; then the action items. */
static void section_guidance(struct pm *p)
{
	json_t *gl = json_object_get(p->pat, "guidance");
	fprintf(p->out, "## %s\n\n%s\n\n", M("h.guidance"), M("g.intro"));
	for (size_t ph = 0; ph < IQ_ARRAY_LEN(guide_phases); ph++) {
		char key[64];
		snprintf(key, sizeof key, "g.%s", guide_phases[ph]);
		fprintf(p->out, "### %s\n\n", M(key));
		size_t k = 0, i;
		json_t *g;
		json_array_foreach(gl, i, g) {
			const char *text = guide_text(p, str(g, "id"));
			if (strcmp(str(g, "phase"), guide_phases[ph]) != 0 || !*text)
				continue;
			k++;
			fputs("- ", p->out);
			put(p, text, 600);
			fprintf(p->out, " — _%s_", M("g.calledby"));
			size_t j;
			json_t *h;
			json_array_foreach(json_object_get(g, "holds"), j, h) {
				fputs(j ? ", " : " ", p->out);
				code(p, str(h, "term"));
			}
			fputs("\n", p->out);
		}
		fprintf(p->out, "%s\n", k ? "" : M("g.nothing"));
		if (!k)
			fputs("\n", p->out);
	}
	fprintf(p->out, "## %s\n\n", M("h.actions"));
	fprintf(p->out, "%s\n\n", M("a.intro"));
	for (size_t ph = 0; ph < IQ_ARRAY_LEN(guide_phases); ph++) {
		char key[64];
		snprintf(key, sizeof key, "g.%s", guide_phases[ph]);
		size_t i;
		json_t *g;
		json_array_foreach(gl, i, g) {
			const char *text = guide_text(p, str(g, "id"));
			if (strcmp(str(g, "phase"), guide_phases[ph]) != 0 || !*text)
				continue;
			fprintf(p->out, "- [ ] **%s:** ", M(key));
			put(p, text, 600);
			fputs(" (", p->out);
			code(p, str(g, "id"));
			fprintf(p->out, ") — %s\n", M("a.owner"));
		}
	}
	fprintf(p->out, "- [ ] %s — %s\n\n", M("a.review"), M("a.owner"));
}

static void section_lessons(struct pm *p)
{
	fprintf(p->out, "## %s\n\n", M("h.lessons"));
	const char *keys[][2] = {{"l.well", "l.wellq"}, {"l.wrong", "l.wrongq"}, {"l.lucky", "l.luckyq"}};
	for (size_t i = 0; i < IQ_ARRAY_LEN(keys); i++)
		fprintf(p->out, "### %s ✍\n\n> ✍ **%s** %s\n\n", M(keys[i][0]), M("prompt.team"),
			M(keys[i][1]));
}

/* ---- coverage ---- */

static void section_coverage(struct pm *p)
{
	FILE *out = p->out;
	json_t *b = json_object_get(p->doc, "bundle");
	fprintf(out, "## %s\n\n", M("h.coverage"));
	fprintf(out, M("cov.intro"), num(b, "files"), num(b, "bytes"), num(b, "records"),
		num(b, "unparsed_lines"));
	fputs("\n\n", out);
	sqlite3_stmt *q;
	sqlite3 *db = iq_store_db(p->s);
	fprintf(out, "| %s | %s | %s | %s | %s | %s |\n| --- | ---: | ---: | ---: | ---: | ---: |\n",
		M("col.format"), M("col.files"), M("col.read"), M("col.parsed"), M("col.skipped"),
		M("col.records"));
	if (sqlite3_prepare_v2(db, "SELECT coalesce(format, '(' || status || ')'), count(*), sum(lines_read),"
				   " sum(lines_parsed), sum(lines_skipped), sum(records) FROM files"
				   " GROUP BY 1 ORDER BY 1", -1, &q, NULL) == SQLITE_OK) {
		while (sqlite3_step(q) == SQLITE_ROW) {
			fputs("| ", out);
			put(p, (const char *)sqlite3_column_text(q, 0), 64);
			fprintf(out, " | %lld | %lld | %lld | %lld | %lld |\n", sqlite3_column_int64(q, 1),
				sqlite3_column_int64(q, 2), sqlite3_column_int64(q, 3),
				sqlite3_column_int64(q, 4), sqlite3_column_int64(q, 5));
		}
		sqlite3_finalize(q);
	}
	fputc('\n', out);
	json_t *unk = json_object_get(b, "unknown_files");
	fprintf(out, "### %s\n\n", M("cov.unknown"));
	if (json_array_size(unk)) {
		size_t i;
		json_t *u;
		json_array_foreach(unk, i, u) {
			if (i == 100) {
				fprintf(out, "- … (+%zu)\n", json_array_size(unk) - 100);
				break;
			}
			fputs("- ", out);
			put(p, iq_refs_rel(&p->refs, json_string_value(u) ? json_string_value(u) : ""), 300);
			fputc('\n', out);
		}
		fputc('\n', out);
	} else {
		fprintf(out, "%s\n\n", M("cov.nounknown"));
	}
	fprintf(out, "### %s\n\n", M("cov.skips"));
	int any = 0;
	if (sqlite3_prepare_v2(db, "SELECT f.path, k.reason, k.lines, k.first_line, k.example FROM skips k"
				   " JOIN files f ON f.id = k.file_id ORDER BY k.lines DESC, f.path, k.reason"
				   " LIMIT 100", -1, &q, NULL) == SQLITE_OK) {
		while (sqlite3_step(q) == SQLITE_ROW) {
			if (!any)
				fprintf(out, "| %s | %s | %s | %s | %s |\n| --- | --- | ---: | --- | --- |\n",
					M("col.file"), M("col.reason"), M("col.lines"), M("col.firstline"),
					M("col.example"));
			any = 1;
			fputs("| ", out);
			put(p, iq_refs_rel(&p->refs, (const char *)sqlite3_column_text(q, 0)), 300);
			fputs(" | ", out);
			put(p, (const char *)sqlite3_column_text(q, 1), 80);
			fprintf(out, " | %lld | ", sqlite3_column_int64(q, 2));
			const char *ex = (const char *)sqlite3_column_text(q, 4);
			iq_refs_cite(out, iq_refs_add(&p->refs, (const char *)sqlite3_column_text(q, 0),
						      sqlite3_column_int64(q, 3), 1, "", ex, NULL));
			fputs(" | ", out);
			put(p, ex ? ex : "", 120);
			fputs(" |\n", out);
		}
		sqlite3_finalize(q);
	}
	fprintf(out, "%s\n", any ? "" : M("cov.noskips"));
	if (!any)
		fputc('\n', out);
	any = 0;
	if (sqlite3_prepare_v2(db, "SELECT path, message FROM problems ORDER BY id LIMIT 100", -1, &q,
			       NULL) == SQLITE_OK) {
		while (sqlite3_step(q) == SQLITE_ROW) {
			if (!any)
				fprintf(out, "### %s\n\n", M("cov.problems"));
			any = 1;
			fputs("- ", out);
			put(p, iq_refs_rel(&p->refs, (const char *)sqlite3_column_text(q, 0)), 300);
			fputs(": ", out);
			put(p, (const char *)sqlite3_column_text(q, 1), 300);
			fputc('\n', out);
		}
		if (any)
			fputc('\n', out);
		sqlite3_finalize(q);
	}
	/* records per time source but "explicit" (SELECT ts_how, count(*) FROM
	 * records WHERE ts_how <> 'explicit' GROUP BY ts_how), from the scan */
	const char *how;
	long long nhow;
	size_t hows = iq_tpl_scan_ts_how(p->scan, 0, &how, &nhow);
	for (size_t k = 0; k < hows; k++) {
		iq_tpl_scan_ts_how(p->scan, k, &how, &nhow);
		if (!k)
			fprintf(out, "### %s\n\n", M("cov.times"));
		char key[64];
		snprintf(key, sizeof key, "tshow.%s", how);
		const char *what = iq_msg(p->lang, key);
		if (strcmp(what, key) == 0)
			what = M("tshow.inherited");
		fprintf(out, "- %lld %s (", nhow, what);
		code(p, how);
		fputs(").\n", out);
	}
	if (hows)
		fputc('\n', out);
	fprintf(out, "### %s\n\n", M("cov.skew"));
	json_t *sk = json_object_get(p->doc, "clock_skew");
	if (json_array_size(sk)) {
		fprintf(out, "| %s | %s | %s | %s | %s | %s | %s |\n| --- | ---: | ---: | ---: | ---: | --- | --- |\n",
			M("col.node"), M("col.offset"), M("col.skewunc"), M("col.spread"), M("col.samples"),
			M("col.applied"), M("col.basis"));
		size_t i;
		json_t *e;
		json_array_foreach(sk, i, e) {
			fputs("| ", out);
			put(p, str(e, "node"), 64);
			if (json_is_number(json_object_get(e, "offset_s")))
				fprintf(out, " | %+.3f | %.3f | %.3f | %lld | %s | ", json_number_value(json_object_get(e, "offset_s")),
					json_number_value(json_object_get(e, "uncertainty_s")),
					json_number_value(json_object_get(e, "spread_s")),
					(long long)json_integer_value(json_object_get(e, "samples")),
					json_is_true(json_object_get(e, "corrected")) ? M("yes") : M("no"));
			else
				fprintf(out, " | – | – | – | 0 | %s | ", M("no"));
			put(p, str(e, "basis"), 200);
			fputs(" |\n", out);
		}
		fprintf(out, "\n%s\n\n", M("cov.skewnote"));
	} else {
		fprintf(out, "%s\n\n", M("cov.noskew"));
	}
	fprintf(out, "### %s\n\n", M("cov.missing"));
	json_t *miss = json_object_get(p->pat, "sources_missing");
	if (json_array_size(miss)) {
		size_t i;
		json_t *e;
		json_array_foreach(miss, i, e) {
			fputs("- ", out);
			if (json_is_string(e)) {
				put(p, json_string_value(e), 200);
			} else {
				char *t = json_dumps(e, JSON_COMPACT);
				put(p, t ? t : "", 300);
				free(t);
			}
			fputc('\n', out);
		}
		fputc('\n', out);
	} else {
		fprintf(out, "%s\n\n", M("cov.nomissing"));
	}
}

/* ---- reproduce ---- */

/* The SQL to check the figures; need says which report it belongs to:
 * "oom" one with CUDA OOM events, "host-oom" one whose pattern has that
 * finding, NULL every report. */
static const struct {
	const char *key;
	const char *sql;
	const char *need;
} repro[] = {
	{"rep.oom", "SELECT time, node, pod, file, line FROM timeline WHERE record_id IN"
		    " (SELECT record_id FROM signal_matches WHERE signal = 'cuda-oom') ORDER BY ts", "oom"},
	{"rep.order", "SELECT pod, node, min(time) AS first_oom FROM timeline WHERE record_id IN"
		      " (SELECT record_id FROM signal_matches WHERE signal = 'cuda-oom')"
		      " GROUP BY pod ORDER BY first_oom", "oom"},
	{"rep.failed", "SELECT count(*) AS failed_requests FROM http_requests WHERE status >= 500", NULL},
	{"rep.5xx", "SELECT strftime('%H:%M', ts / 1000000000, 'unixepoch') AS minute, count(*) AS n_5xx"
		    " FROM http_requests WHERE status >= 500 GROUP BY minute ORDER BY minute", NULL},
	{"rep.upstream", "SELECT strftime('%H:%M', h.ts / 1000000000, 'unixepoch') AS minute, u.addr,"
			 " count(*) AS attempts, sum(u.status >= 500) AS failed FROM http_upstreams u"
			 " JOIN http_requests h ON h.record_id = u.record_id GROUP BY minute, u.addr"
			 " ORDER BY minute, u.addr", NULL},
	{"rep.gpu", "SELECT node, gpu_index, max(mem_used_mib) AS peak_mib, max(mem_total_mib) AS total_mib,"
		    " round(100.0 * max(mem_used_mib / mem_total_mib), 1) AS peak_pct FROM gpu_samples"
		    " GROUP BY node, gpu_index ORDER BY node, gpu_index", NULL},
	{"rep.host", "SELECT time, node, file, line, text FROM timeline WHERE record_id IN"
		     " (SELECT record_id FROM signal_matches WHERE signal = 'host-oom') ORDER BY ts", "host-oom"},
	{"rep.findings", "SELECT pack, verdict FROM findings ORDER BY pack", NULL},
};

/* Does the report's pattern have a signal or boundary id? */
static int pack_item_signal(struct pm *p, const char *id)
{
	return p->report && p->pack && iq_pack_find_signal(p->pack, id) != NULL;
}

static void section_reproduce(struct pm *p)
{
	fprintf(p->out, "## %s\n\n%s\n\n", M("h.reproduce"), M("rep.intro"));
	fputs("```sh\n", p->out);
	int k = 0;
	for (size_t i = 0; i < IQ_ARRAY_LEN(repro); i++) {
		const char *need = repro[i].need;
		if (need && strcmp(need, "oom") == 0 && !(p->report && has(p, "oom_events")))
			continue;
		if (need && strcmp(need, "host-oom") == 0 &&
		    !pack_item_signal(p, need))
			continue;
		fprintf(p->out, "%s# %s\ninquest query --db inquest.db \"%s\"\n", k++ ? "\n" : "",
			M(repro[i].key), repro[i].sql);
	}
	fprintf(p->out, "\n# %s\ninquest query --db inquest.db \"%s\"\n```\n\n", M("rep.tpl"), iq_tpl_sql);
}

int iq_render_postmortem(json_t *doc, struct iq_store *s, const struct iq_report_opts *o,
			 FILE *out)
{
	struct iq_report_opts def = {0};
	if (!o)
		o = &def;
	struct pm pm;
	memset(&pm, 0, sizeof pm);
	pm.out = out;
	pm.doc = doc;
	pm.s = s;
	pm.lang = o->lang && strcmp(o->lang, "tr") == 0 ? "tr" : "en";
	pm.o = o;
	iq_refs_init(&pm.refs);
	iq_refs_set_bundles(&pm.refs, json_object_get(json_object_get(doc, "bundle"), "paths"));
	struct pm *p = &pm;
	struct iq_ruleset own;
	int own_used = 0;
	pm.rs = o->rs;
	if (!pm.rs) {
		struct iq_diag d = {{0}};
		iq_rules_init(&own);
		own_used = 1;
		if (iq_rules_load_builtin(&own, &d) == 0)
			pm.rs = &own;
	}
	/* the report the findings call for, in its pack's words */
	iq_report_primary(doc, pm.rs, &pm.pat, &pm.pack, &pm.report);
	/* impact, phases and charts from the pattern, or one that has them */
	pm.data = json_is_object(json_object_get(pm.pat, "phases")) ? pm.pat : NULL;
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(doc, "patterns"), i, e)
		if (!pm.data && json_is_object(json_object_get(e, "phases")))
			pm.data = e;
	/* the read of all records runs while the sections before the
	 * coverage are written */
	pm.scan = iq_tpl_scan_start(s);
	header(p);
	if (!json_array_size(json_object_get(doc, "patterns"))) {
		fprintf(out, "%s\n\n", M("nopattern"));
	} else if (!pm.report) {
		section_checked(p);
		section_impact(p);
		section_timeline(p);
		iq_charts_section(out, doc, pm.data, s, pm.lang, o->charts_dir,
				  o->charts_href ? o->charts_href : "charts");
	} else {
		section_summary(p);
		if (has(p, "impact"))
			section_impact(p);
		if (has(p, "detection"))
			section_detection(p);
		section_root_cause(p);
		if (has(p, "conditions"))
			section_conditions(p);
		if (has(p, "not"))
			section_boundaries(p);
		if (has(p, "timeline"))
			section_timeline(p);
		if (has(p, "charts"))
			iq_charts_section(out, doc, pm.data, s, pm.lang, o->charts_dir,
					  o->charts_href ? o->charts_href : "charts");
		if (has(p, "questions"))
			section_questions(p);
		if (has(p, "limits"))
			section_limits(p);
		if (has(p, "guidance"))
			section_guidance(p);
		if (has(p, "lessons"))
			section_lessons(p);
	}
	section_coverage(p);
	section_reproduce(p);
	iq_tpl_appendix(out, pm.scan, pm.lang, &pm.refs);
	iq_tpl_scan_free(pm.scan);
	iq_refs_table(out, &pm.refs, pm.lang);
	if (o->refs_out)
		*o->refs_out = pm.refs;
	else
		iq_refs_release(&pm.refs);
	if (own_used)
		iq_rules_release(&own);
	return ferror(out) ? IQ_ERR_INPUT : 0;
}

int iq_render_md(json_t *doc, struct iq_store *s, const char *lang, FILE *out)
{
	/* charts/ beside the database: where analyze writes postmortem.md */
	const char *db = sqlite3_db_filename(iq_store_db(s), "main");
	char *dir = NULL;
	if (db && *db) {
		const char *slash = strrchr(db, '/');
		size_t n = slash ? (size_t)(slash - db) : 1;
		dir = iq_xmalloc(n + 8);
		snprintf(dir, n + 8, "%.*s/charts", (int)n, slash ? db : ".");
	}
	struct iq_report_opts o = {lang, dir, "charts", NULL, NULL};
	int rc = iq_render_postmortem(doc, s, &o, out);
	free(dir);
	return rc;
}
