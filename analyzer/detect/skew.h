/* skew.h: the decision of a node's clock offset from its bases (skew.c),
 * apart from the queries that measure them, for the unit tests. */
#ifndef IQ_SKEW_H
#define IQ_SKEW_H

#include <stdint.h>

/* The kinds of simultaneous observations, most precise first. */
enum iq_skew_kind {
	IQ_SKEW_CHRONY,     /* the node's NTP client's own offset */
	IQ_SKEW_COLLECTOR,  /* a collector's line quoting the node's `date` */
	IQ_SKEW_REQUESTS,   /* request ids in the LB's and a pod's logs */
	IQ_SKEW_ACCESS,     /* pod access lines matched to LB responses */
	IQ_SKEW_EVENTS,     /* kubelet events: firstTimestamp vs creationTimestamp */
	IQ_SKEW_DEATHS,     /* CUDA OOM lines vs the LB's first failure */
	IQ_SKEW_KINDS
};

/* One basis measured on one node: offset (node minus reference, ns), its
 * uncertainty (half-width), the samples and their spread, and whether
 * the samples agree among themselves. */
struct iq_skew_basis {
	int have;
	int64_t off, unc, spread;
	long samples;
	int agree;
};

/* What the bases of a node decide. */
enum iq_skew_status {
	IQ_SKEW_NONE = 0,       /* no basis: the offset could not be determined */
	IQ_SKEW_CORRECTED,      /* applied */
	IQ_SKEW_SMALL,          /* measured, within its uncertainty of 0 */
	IQ_SKEW_SPREAD,         /* the best basis' samples disagree */
	IQ_SKEW_DISAGREE,       /* two bases disagree */
	IQ_SKEW_IMPLAUSIBLE,    /* beyond what a synchronised fleet drifts */
};

struct iq_skew_result {
	enum iq_skew_status status;
	int best;               /* the basis that gave off, -1 for none */
	int other;              /* a basis that disagreed with it, or -1 */
	int64_t off, unc;
};

/* Offsets past this are never applied: NTP-synchronised fleets drift by
 * seconds, a clock hours or weeks off is a broken clock or a wrong basis. */
#define IQ_SKEW_PLAUSIBLE_NS (300LL * 1000000000LL)
/* An offset smaller than this (or than its uncertainty) is left alone. */
#define IQ_SKEW_MIN_NS (100LL * 1000000LL)

/* Decides from b[0..IQ_SKEW_KINDS): the most precise basis whose samples
 * agree gives the offset (the most precise of all, with status spread,
 * when none agrees); every other agreeing basis must agree with it within
 * their uncertainties (plus a tenth of a second); it is applied when it is
 * plausible and at least max(IQ_SKEW_MIN_NS, its uncertainty). */
void iq_skew_decide(const struct iq_skew_basis *b, struct iq_skew_result *r);

/* The name of a kind ("chrony", "events", ...) and of a status
 * ("corrected", "disagree", ...). */
const char *iq_skew_kind_name(int kind);
const char *iq_skew_status_name(enum iq_skew_status s);

#endif
