/* report.h: the outputs. The findings document (findings.json) is built
 * from the database alone; each renderer turns it (and, for coverage, the
 * database) into one output format. */
#ifndef IQ_REPORT_H
#define IQ_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "../store/store.h"

/* Most timeline rows in findings.json and the postmortem. */
#define IQ_MAX_TIMELINE 500

/* Builds the findings document from the database (tool, bundle,
 * clock_skew, patterns from the findings table, timeline). Caller frees
 * with json_decref. NULL with d->msg on a database error. */
json_t *iq_report_build(struct iq_store *s, struct iq_diag *d);

/* Writes findings.json. */
int iq_render_json(json_t *doc, FILE *out);
/* Writes postmortem.md; lang "en" (others fall back to it for now). */
int iq_render_md(json_t *doc, struct iq_store *s, const char *lang, FILE *out);

/* Writes the output of render to path atomically: a temporary file in the
 * same folder, renamed over path when complete. */
int iq_write_atomic(const char *path, int (*render)(void *u, FILE *f), void *u,
		    struct iq_diag *d);

#endif
