/* replay.c: runs a libFuzzer target without libFuzzer: feeds each file named
 * on the command line to LLVMFuzzerTestOneInput, once, in order. `make
 * fuzz-replay` (and so `make check`) uses it on the committed corpus and
 * crash inputs under ASan and UBSan, so a sanitizer report fails the run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/common_interface_defs.h>

#include "fuzz.h"

static const char *current;   /* the input being run, for the death report */

/* Called by the sanitizers before they end the process (with
 * ASAN_OPTIONS=handle_abort=1 also on a broken FUZZ_CHECK). */
static void say_current(void)
{
	if (current)
		fprintf(stderr, "replay: the input was %s\n", current);
}

/* Reads all of path into a buffer of exactly its size (so that ASan sees a
 * read past the end of the input); caller frees. NULL on error. */
static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p = NULL;
	size_t len = 0, cap = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 4096;
			unsigned char *q = realloc(p, cap);
			if (!q)
				goto fail;
			p = q;
		}
		size_t got = fread(p + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f))
		goto fail;
	fclose(f);
	/* exact size: the target must not read past the input */
	unsigned char *exact = malloc(len ? len : 1);
	if (!exact) {
		free(p);
		return NULL;
	}
	memcpy(exact, p, len);
	free(p);
	*n = len;
	return exact;
fail:
	free(p);
	fclose(f);
	return NULL;
}

int main(int argc, char **argv)
{
	int bad = 0;
	__sanitizer_set_death_callback(say_current);
	for (int i = 1; i < argc; i++) {
		size_t n = 0;
		unsigned char *p = slurp(argv[i], &n);
		if (!p) {
			fprintf(stderr, "replay: cannot read '%s': %s\n", argv[i], strerror(errno));
			bad = 1;
			continue;
		}
		current = argv[i];
		if (getenv("FUZZ_REPLAY_VERBOSE"))
			fprintf(stderr, "replay: %s (%zu bytes)\n", argv[i], n);
		LLVMFuzzerTestOneInput(p, n);
		current = NULL;
		free(p);
	}
	fprintf(stderr, "replay: %d inputs%s\n", argc - 1, bad ? ", some unreadable" : "");
	return bad;
}
