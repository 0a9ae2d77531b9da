/* ingest.h: the ingest step shared by `ingest` and `analyze`. */
#ifndef IQ_INGEST_H
#define IQ_INGEST_H

#include "pipeline.h"

/* Ingests the bundles into s; prints errors; returns an exit status. On
 * SIGINT/SIGTERM (iq_interrupted()) it commits what is done, prints
 * "interrupted; N files complete, rerun to finish" and returns
 * IQ_EXIT_INTERRUPTED. */
int iq_ingest_run(struct iq_store *s, struct iq_ruleset *rs, char **bundles, int n,
		  const struct iq_ingest_opts *o);

/* Parses an option shared by ingest and analyze (--max-member-bytes N,
 * --max-bundle-bytes N) at argv[*i] into o, advancing *i past its value.
 * Returns 1 when it was one (0 on success in *bad, IQ_ERR_USAGE printed),
 * 0 when argv[*i] is something else. */
int iq_ingest_option(const char *cmd, int argc, char **argv, int *i,
		     struct iq_ingest_opts *o, int *bad);

#endif
