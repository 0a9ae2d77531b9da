/* ingest.h: the ingest step shared by `ingest` and `analyze`. */
#ifndef IQ_INGEST_H
#define IQ_INGEST_H

#include "cli.h"
#include "pipeline.h"

/* Ingests the bundles into s; prints errors; returns an exit status:
 * IQ_EXIT_INCOMPLETE when all went well but data was lost or cut (a
 * damaged archive, a file read in part, a size limit), after a warning
 * that --quiet does not silence. On SIGINT/SIGTERM (iq_interrupted()) it
 * commits what is done, prints "interrupted; N files complete, rerun to
 * finish" and returns IQ_EXIT_INTERRUPTED. */
int iq_ingest_run(struct iq_store *s, struct iq_ruleset *rs, char **bundles, int n,
		  const struct iq_ingest_opts *o);

/* Reads the options ingest and analyze share (the scope, --tz, --jobs,
 * the limits, --quiet, --rules) from a into o (set by
 * iq_ingest_opts_init); prints what is wrong. 0 or IQ_EXIT_USAGE. */
int iq_ingest_args(const struct iq_args *a, struct iq_ingest_opts *o);

#endif
