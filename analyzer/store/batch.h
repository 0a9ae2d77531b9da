/* batch.h: records copied out of a parser's buffers, with their signal
 * matches, so that a thread other than the parser's can store them. A
 * batch owns one arena that holds every string of its records. */
#ifndef IQ_BATCH_H
#define IQ_BATCH_H

#include "../parse/parse.h"

struct iq_batch_match {
	const char *pack, *signal;  /* borrowed from the ruleset, which outlives the batch */
	size_t caps_off;            /* into caps; IQ_BATCH_NOCAPS when the signal has none */
};

#define IQ_BATCH_NOCAPS ((size_t)-1)

struct iq_batch_rec {
	struct iq_record r;         /* every slice points into the arena */
	uint32_t first_match;       /* index into matches */
	uint32_t nmatches;
	int unexplained;            /* iq_error_like and no match */
};

struct iq_batch {
	struct iq_batch *next;      /* for the queue that carries it */
	struct iq_batch_rec *recs;
	size_t n, cap;
	struct iq_batch_match *matches;
	size_t nmatches, mcap;
	char *arena;                /* never moves while it holds records */
	size_t used, acap;
	struct iq_buf caps;         /* the matches' captures, NUL-separated */
};

/* A batch holds at most IQ_BATCH_RECORDS records and, unless it has a
 * single record, IQ_BATCH_BYTES bytes of strings. */
#define IQ_BATCH_RECORDS 4096
#define IQ_BATCH_BYTES (1u << 20)

/* A new, empty batch; iq_batch_free frees it (NULL is allowed). */
struct iq_batch *iq_batch_new(void);
void iq_batch_free(struct iq_batch *b);
/* Empties b for reuse, keeping its memory. */
void iq_batch_clear(struct iq_batch *b);

/* Copies r, its strings included, to the end of b. Returns 0, or 1 when b
 * is full (nothing is copied: store b and add r to a new batch); an empty
 * batch always takes the record, however large. */
int iq_batch_add(struct iq_batch *b, const struct iq_record *r);

/* Adds a signal match to the last record added; captures (a JSON object
 * or NULL) is copied. */
void iq_batch_add_match(struct iq_batch *b, const char *pack, const char *signal,
			const char *captures);

/* The captures of m (a JSON object), or NULL. */
const char *iq_batch_captures(const struct iq_batch *b, const struct iq_batch_match *m);

/* Bytes of memory b holds, for bounding queues. */
size_t iq_batch_bytes(const struct iq_batch *b);

#endif
