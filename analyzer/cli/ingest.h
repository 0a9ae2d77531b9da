/* ingest.h: the ingest step shared by `ingest` and `analyze`. */
#ifndef IQ_INGEST_H
#define IQ_INGEST_H

#include "pipeline.h"

/* Ingests the bundles into s; prints errors; returns an exit status. */
int iq_ingest_run(struct iq_store *s, struct iq_ruleset *rs, char **bundles, int n, int quiet);

#endif
