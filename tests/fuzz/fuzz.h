/* fuzz.h: what the libFuzzer targets in tests/fuzz/ share: the entry point
 * libFuzzer (or replay.c) calls, and the check that turns a broken
 * invariant into an abort() with the place it broke. */
#ifndef IQ_FUZZ_H
#define IQ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Runs one input; always returns 0 (libFuzzer reserves other values). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts, naming the broken invariant, when cond is false. Unlike assert()
 * it stays on whatever NDEBUG says: these checks are the point. */
#define FUZZ_CHECK(cond)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: fuzz invariant broken: %s\n", \
				__FILE__, __LINE__, #cond);                   \
			abort();                                              \
		}                                                             \
	} while (0)

/* FNV-1a over n bytes, folded into *h: a summary of what a callback saw,
 * which also makes ASan look at every byte. */
static inline void fuzz_hash(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		*h ^= b[i];
		*h *= 1099511628211ull;
	}
}

#endif
