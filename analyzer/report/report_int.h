/* report_int.h: what the renderers of report/ share and nobody else needs:
 * the message catalogue, Markdown helpers, chart data and the SVG and
 * Mermaid writers, the unexplained-errors appendix. */
#ifndef IQ_REPORT_INT_H
#define IQ_REPORT_INT_H

#include "../core/iqtime.h"
#include "report.h"

/* ---- i18n.c: the report's own words ---- */

/* The text of message key in lang ("en", "tr"), falling back to English,
 * then to the key itself. Never NULL; static storage. */
const char *iq_msg(const char *lang, const char *key);

/* A built-in guidance item, used when no pack carries "guidance". */
struct iq_guide {
	const char *id;
	const char *phase;       /* containment, remediation, prevention */
	const char *for_ids[6];  /* findings that call for it, NULL-terminated */
	const char *en, *tr;
};
size_t iq_guide_count(void);
const struct iq_guide *iq_guide_at(size_t i);

/* Turkish sentence for question id from its data, into b; 0 when the id
 * has no template (the caller shows the detector's English answer). */
int iq_question_answer_tr(struct iq_buf *b, const char *id, json_t *data);
/* Turkish arithmetic of a proposed limit (findings' limits.proposals[i])
 * rebuilt from its inputs, into b; 0 when the setting has no template
 * (the caller shows the detector's English arithmetic). */
int iq_limit_arith_tr(struct iq_buf *b, json_t *proposal);
/* Turkish for a phase basis or detail sentence the detectors write in
 * English, or NULL when it is not known. */
const char *iq_basis_tr(const char *en);

/* ---- md.c helpers used by the other renderers ---- */

/* Escaped inline text (iq_md_escape) written to out. */
void iq_md_put(FILE *out, const char *s, size_t max);
/* s as a code span (iq_md_code) written to out. */
void iq_md_codeput(FILE *out, const char *s, size_t max, int in_table);
/* Time of member k of o (RFC 3339) in UTC ns, or IQ_TIME_NONE. */
int64_t iq_json_time(json_t *o, const char *k);
/* The clock offset of node from doc's clock_skew (node minus reference),
 * in ns; 0 when unknown. Subtract it from a node's time. */
/* "6 min 52 s" in lang into out (size IQ_DUR_BUF). */
#define IQ_DUR_BUF 64
char *iq_fmt_dur(int64_t ns, const char *lang, char *out);

/* ---- story.c: which pattern the postmortem tells, in the pack's words ---- */

struct iq_pack;
/* The report the postmortem is written as: of the packs' "reports", the
 * one with the highest priority whose verdict its pattern reached. Sets
 * *pat (the finding), *pack and *report (the pack's JSON, borrowed);
 * returns 0 (all NULL) when none holds: no known incident pattern. */
int iq_report_primary(json_t *doc, const struct iq_ruleset *rs, json_t **pat,
		      const struct iq_pack **pack, json_t **report);
/* The value at path in the finding pat ("a.b.0.c": members, array
 * indexes, array elements by "id", "*" maps the rest over an array), or in
 * another pattern of doc with "@ID." first. New reference, or NULL. */
json_t *iq_finding_path(json_t *doc, json_t *pat, const char *path);
/* Evaluates a when expression over the finding pat (signal:, boundary:,
 * condition:[=false|null], data:QUESTION.KEY[OP VALUE]); every term read is
 * appended to terms ({term, value, holds}) when it is not NULL. 1 or 0 (a
 * syntax error is 0). */
int iq_finding_when(json_t *doc, json_t *pat, const char *when, json_t *terms);
/* Appends a report text (one template {en, tr, when?} or a list: the first
 * whose when holds and whose placeholders all resolve) to out, Markdown-
 * escaped when md is set. 1 when one was written, else 0. */
int iq_report_text(struct iq_buf *out, json_t *tmpl, json_t *doc, json_t *pat, const char *lang, int md);

/* ---- refs.c: the evidence the postmortem cites ---- */

struct iq_ref {
	char *file;           /* path as in the database ("b.tgz!x/y.log") */
	long long line, nlines;
	char *time, *text;    /* "" when unknown */
	char *summary;        /* NULL when none */
};
struct iq_refs {
	struct iq_ref *r;     /* r[k] is E(k+1) */
	size_t n, cap;
	char **prefix;        /* the bundles' file names */
	size_t nprefix;
};
void iq_refs_init(struct iq_refs *rs);
void iq_refs_release(struct iq_refs *rs);
/* The number (E<n>, from 1) of the cited line file:line, added at the end
 * when it is new; 0 (nothing cited) for an empty file. Strings are copied. */
size_t iq_refs_add(struct iq_refs *rs, const char *file, long long line, long long nlines,
		   const char *time, const char *text, const char *summary);
/* The same for an evidence object {file, line, nlines, time, text, summary}. */
size_t iq_refs_add_json(struct iq_refs *rs, json_t *ev);
/* Writes the citation of E<n>: "[En](#en)", or "–" for 0. */
void iq_refs_cite(FILE *out, size_t n);
/* The bundles the paths start with (findings' bundle.paths). */
void iq_refs_set_bundles(struct iq_refs *rs, json_t *paths);
/* file relative to its bundle's root when there is one bundle (the name
 * says nothing then), else file itself. Borrowed from file. */
const char *iq_refs_rel(const struct iq_refs *rs, const char *file);
/* The file name of a path ("/x/y/b.tar.gz" -> "b.tar.gz"). Caller frees. */
char *iq_base_name(const char *path);
/* The evidence section: one row per reference, in number order. */
void iq_refs_table(FILE *out, const struct iq_refs *rs, const char *lang);

/* ---- charts.c / svg.c ---- */

#define IQ_CHART_SERIES 8
#define IQ_CHART_MARKS 48
#define IQ_CHART_MAX_BUCKETS 240
#define IQ_MERMAID_POINTS 30

struct iq_series {
	char name[96];
	double y[IQ_CHART_MAX_BUCKETS]; /* NAN where there is no data */
};

struct iq_mark {
	int64_t t;
	int series;      /* which series it sits on, -1 none */
	char label[48];
};

/* A time chart: nb buckets of step ns from t0, one value per series. */
struct iq_chart {
	const char *name;     /* file name without .svg */
	char title[160];
	char ylabel[96];
	char xlabel[64];
	int bars;             /* bars instead of lines */
	int64_t t0, step;
	size_t nb;
	struct iq_series *ser;
	size_t nser;
	double ymin, ymax;    /* the value axis; values below ymin sit at its foot */
	int stacked;          /* bars: the series stacked, one colour each */
	int panels;           /* lines: one panel per series (small multiples) */
	char below_label[96]; /* what a value below ymin means, or "" */
	double hline;         /* a reference line (100 %), or < 0 for none */
	char hline_label[48];
	struct iq_mark marks[IQ_CHART_MARKS];
	size_t nmarks;
	int64_t band0, band1; /* a shaded window, or IQ_TIME_NONE */
	char band_label[64];
};

#define IQ_LANE_SPANS 48
struct iq_span {
	int64_t t0, t1;
	int down;             /* 0 serving, 1 down (dead or restarting) */
};
struct iq_lane {
	char name[96];
	struct iq_span spans[IQ_LANE_SPANS];
	size_t nspans;
	int64_t deaths[IQ_LANE_SPANS];
	size_t ndeaths;
};
#define IQ_GANTT_LANES 16
struct iq_gantt {
	char title[160];
	int64_t t0, t1;
	struct iq_lane lanes[IQ_GANTT_LANES];
	size_t nlanes;
};

/* Writes the chart as a standalone SVG document. */
int iq_svg_chart(const struct iq_chart *c, const char *lang, FILE *out);
int iq_svg_gantt(const struct iq_gantt *g, const char *lang, FILE *out);

/* The charts section of the postmortem: queries the database for the
 * series (bounded), writes the Mermaid blocks to out and, when charts_dir
 * is set, the SVG files, linked as charts_href/NAME.svg. */
void iq_charts_section(FILE *out, json_t *doc, json_t *pat, struct iq_store *s,
		       const char *lang, const char *charts_dir, const char *charts_href);

/* ---- templates.c ---- */

/* One read of the records for the postmortem: the unexplained-errors
 * table (the rows iq_tpl_sql selects, in record order) and the count of
 * records per time source other than "explicit". _start begins it (in a
 * thread of its own, on a connection of its own, when the database is a
 * file) and never returns NULL; _wait waits for it (or reads now); the
 * other calls wait first. Caller frees with iq_tpl_scan_free. */
struct iq_tpl_scan;
struct iq_tpl_scan *iq_tpl_scan_start(struct iq_store *s);
void iq_tpl_scan_wait(struct iq_tpl_scan *sc);
void iq_tpl_scan_free(struct iq_tpl_scan *sc);
/* The i-th time source (in name order) and its count; returns how many
 * there are (then *how and *n are set only for i below that). */
size_t iq_tpl_scan_ts_how(struct iq_tpl_scan *sc, size_t i, const char **how, long long *n);
/* The unexplained-errors appendix: error and warning records no signal
 * explained, grouped into templates (bounded memory), the top ones as a
 * table. */
void iq_tpl_appendix(FILE *out, struct iq_tpl_scan *sc, const char *lang, struct iq_refs *refs);
/* How many records the read kept (and, in *overflow when not NULL, how
 * many of them fell outside the templates kept). */
long iq_tpl_scan_records(struct iq_tpl_scan *sc, long *overflow);
/* Every template of the read, one a line with all it holds, in the
 * appendix's order (for tests: the appendix shows the first few only). */
void iq_tpl_dump(FILE *out, struct iq_tpl_scan *sc);
/* The SQL that selects those records (for the reproduce section). */
extern const char iq_tpl_sql[];

#endif
