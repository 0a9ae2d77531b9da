/* detect.h: detectors over the database and the verdict of each rule
 * pack. The result of each pack is stored in the findings table as the
 * pattern object of findings.json. */
#ifndef IQ_DETECT_H
#define IQ_DETECT_H

#include "../rules/rules.h"
#include "../store/store.h"

/* Most evidence items kept per signal (count still says how many). */
#define IQ_MAX_EVIDENCE 50

/* CUDA OOM lines of one file this close to an OOM event are the same death. */
#define IQ_OOM_MERGE_S 60

/* Estimates each node's clock offset against the load balancer and
 * corrects the node's times by it (clock_skew table). Run before iq_detect.
 * Returns 0 or IQ_ERR_DB. */
int iq_detect_skew(struct iq_store *s, struct iq_diag *d);

/* Runs every pack of rs over the database and replaces its findings.
 * Returns 0 or IQ_ERR_DB with d->msg. */
int iq_detect(struct iq_store *s, struct iq_ruleset *rs, struct iq_diag *d);

#endif
