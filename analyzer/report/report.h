/* report.h: the outputs. The findings document (findings.json) is built
 * from the database alone; each renderer turns it (and, for coverage,
 * charts and the unexplained-errors appendix, the database, read-only)
 * into one output format. */
#ifndef IQ_REPORT_H
#define IQ_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "../store/store.h"

/* Most timeline rows in findings.json and the postmortem. */
#define IQ_MAX_TIMELINE 500
/* findings.json's schema_version: raised when a key changes meaning or
 * goes away (schema/findings.schema.json, docs/findings.md). */
#define IQ_FINDINGS_SCHEMA_VERSION 2

struct iq_ruleset;
struct iq_refs;

/* Builds the findings document from the database (tool, bundle,
 * clock_skew, patterns from the findings table, timeline). Caller frees
 * with json_decref. NULL with d->msg on a database error. */
json_t *iq_report_build(struct iq_store *s, struct iq_diag *d);
/* The incident window {start, end, given, basis, first_signal,
 * last_signal, lead_s, tail_s}: the --since/--until of the run when it had
 * them (given), else from WINDOW_LEAD_S before the first present signal of
 * any of the patterns (as findings.json objects) to WINDOW_TAIL_S after the
 * last (or the end of the outage); clipped to the records' time span. */
json_t *iq_incident_window(struct iq_store *s, json_t *patterns);

/* Adds to each pattern of doc the guidance its pack's items call for
 * ("guidance": [{id, phase, when, why, holds}]): an item's "when" read over
 * the pattern's findings (signals, boundaries, conditions, the questions'
 * data). rs: the packs that ran (NULL adds nothing). */
void iq_report_guidance(json_t *doc, const struct iq_ruleset *rs);

/* Writes findings.json. */
int iq_render_json(json_t *doc, FILE *out);

/* How the postmortem is rendered. Every member may be NULL/0. */
struct iq_report_opts {
	const char *lang;             /* "en" (default) or "tr" */
	const char *charts_dir;       /* SVG charts are written there (created when
				       * missing); NULL writes none and links none */
	const char *charts_href;      /* how the Markdown links them; "charts" */
	const struct iq_ruleset *rs;  /* packs for titles, translations and
				       * guidance; NULL loads the built-in packs */
	struct iq_refs *refs_out;     /* when set, gets the references the
				       * document cited (E1, E2, ...); the caller
				       * releases it with iq_refs_release */
};

/* Writes postmortem.md from the findings document and the database
 * (read-only SELECTs). 0, or a negative iq_err when writing fails. */
int iq_render_postmortem(json_t *doc, struct iq_store *s, const struct iq_report_opts *o,
			 FILE *out);
/* Writes postmortem.md in lang; SVG charts go to charts/ beside the
 * database file (where `inquest analyze` writes postmortem.md), and the
 * built-in packs supply titles and guidance. */
int iq_render_md(json_t *doc, struct iq_store *s, const char *lang, FILE *out);
/* Writes postmortem.html from the postmortem's Markdown (md, n bytes, as
 * iq_render_postmortem wrote it): one self-contained page, the charts of
 * charts_dir (NULL: none) inline as SVG, no script and no request (a
 * Content-Security-Policy says so to the browser). */
int iq_render_html(const char *md, size_t n, const char *lang, const char *charts_dir, FILE *out);
/* Writes the short terminal summary (verdict, first OOM, order, impact,
 * top evidence); text from the bundle is escaped for the terminal. */
int iq_render_text(json_t *doc, const char *lang, FILE *out);

/* Writes the output of render to path atomically: a temporary file in the
 * same folder, renamed over path when complete. */
int iq_write_atomic(const char *path, int (*render)(void *u, FILE *f), void *u,
		    struct iq_diag *d);

/* Appends s (n bytes) to b as printable text: invalid UTF-8 and C1
 * controls as U+FFFD, other control characters as their control pictures
 * (U+2400..), a tab as a space. 0 or IQ_ERR_NOMEM. */
int iq_text_clean(struct iq_buf *b, const char *s, size_t n);
/* Appends s (n bytes, at most max of them, up to the first newline) to b
 * as inline Markdown text that renders as the text itself: cleaned
 * (iq_text_clean), Markdown specials backslash-escaped, HTML specials as
 * entities, '|' escaped for tables, autolinks broken; " …" marks a cut.
 * 0 or IQ_ERR_NOMEM. */
int iq_md_escape(struct iq_buf *b, const char *s, size_t n, size_t max);
/* Appends s (cut as iq_md_escape does) to b as a Markdown code span: no
 * escapes inside (a code span shows them), a fence longer than any run of
 * backticks in s; in_table escapes '|' as GFM table cells need. */
int iq_md_code(struct iq_buf *b, const char *s, size_t n, size_t max, int in_table);
/* Appends s, cleaned, to b as XML/HTML character data (also safe in
 * attributes). */
int iq_xml_escape(struct iq_buf *b, const char *s, size_t n);

/* Masks the variable tokens of a log line into a template (Drain-style):
 * UUIDs <UUID>, IPs (with port) <IP>, hex ids <HEX>, numbers (with
 * fractions, units of time like 12:03:04) <NUM>, quoted strings <STR>,
 * paths <PATH>; runs of blanks become one space. Writes at most outsz-1
 * bytes and a NUL into out; returns the length written. */
size_t iq_tpl_mask(const char *s, size_t n, char *out, size_t outsz);

#endif
