/* registry.c: the table of input formats built from formats.def, and
 * sniffing: every format scores the head of a file, the best one wins. */
#include <stdlib.h>
#include <string.h>

#include "parse.h"

#define IQ_FORMAT(sym) extern const struct iq_format iq_format_##sym;
#include "formats.def"
#undef IQ_FORMAT

static const struct iq_format *const formats[] = {
#define IQ_FORMAT(sym) &iq_format_##sym,
#include "formats.def"
#undef IQ_FORMAT
};

size_t iq_format_count(void)
{
	return IQ_ARRAY_LEN(formats);
}

const struct iq_format *iq_format_at(size_t i)
{
	return i < IQ_ARRAY_LEN(formats) ? formats[i] : NULL;
}

const struct iq_format *iq_format_find(const char *name)
{
	for (size_t i = 0; i < IQ_ARRAY_LEN(formats); i++)
		if (strcmp(formats[i]->name, name) == 0)
			return formats[i];
	return NULL;
}

/* A head is binary when it is mostly not text: control bytes, or NUL
 * bytes strewn through it (a program, an image). Long runs of NULs with
 * text between them are the zeroed blocks a crash or power loss leaves in
 * a log: that is a log. */
static int looks_binary(const char *head, size_t n, char *why, size_t whysz)
{
	size_t ctl = 0, nul = 0, runs = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)head[i];
		if (c == 0) {
			nul++;
			runs += i == 0 || head[i - 1] != 0;
		} else if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b && c != '\f') {
			ctl++;
		}
	}
	size_t text = n - nul;
	if (nul && (text < 32 || runs * 64 > text)) {
		snprintf(why, whysz, "binary: %zu NUL bytes in %zu runs in the first %zu", nul, runs, n);
		return 1;
	}
	if (text > 0 && ctl * 10 > text) {
		snprintf(why, whysz, "binary: %zu control bytes in the first %zu", ctl, n);
		return 1;
	}
	return 0;
}

const struct iq_format *iq_sniff(const char *path, const char *head, size_t n,
				 char *why, size_t whysz)
{
	const struct iq_format *best = NULL;
	int best_score = 0;
	char reason[256];

	why[0] = '\0';
	if (n == 0) {
		snprintf(why, whysz, "empty file");
		return NULL;
	}
	if (looks_binary(head, n, why, whysz))
		return NULL;
	/* the formats judge the text: a NUL run ends a line, as the line
	 * splitter hands the text around it on */
	char *copy = NULL;
	if (memchr(head, '\0', n)) {
		copy = iq_xmalloc(n);
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (head[i] != '\0')
				copy[k++] = head[i];
			else if (k && copy[k - 1] != '\n')
				copy[k++] = '\n';
		}
		head = copy;
		n = k;
	}
	for (size_t i = 0; i < IQ_ARRAY_LEN(formats); i++) {
		reason[0] = '\0';
		int s = formats[i]->sniff(path, head, n, reason, sizeof reason);
		if (s > best_score) {
			best_score = s;
			best = formats[i];
			snprintf(why, whysz, "%s", reason);
		}
	}
	if (!best)
		snprintf(why, whysz, "no format recognised the first lines");
	free(copy);
	return best;
}
