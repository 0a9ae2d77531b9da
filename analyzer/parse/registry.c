/* registry.c: the table of input formats built from formats.def, and
 * sniffing: every format scores the head of a file, the best one wins. */
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

/* A head is binary when it holds NUL bytes or mostly non-text bytes. */
static int looks_binary(const char *head, size_t n, char *why, size_t whysz)
{
	size_t ctl = 0, nul = 0;
	size_t lim = n < 8192 ? n : 8192;
	for (size_t i = 0; i < lim; i++) {
		unsigned char c = (unsigned char)head[i];
		if (c == 0)
			nul++;
		else if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b && c != '\f')
			ctl++;
	}
	if (nul > 0 && nul * 100 > lim) {
		snprintf(why, whysz, "binary: %zu NUL bytes in the first %zu", nul, lim);
		return 1;
	}
	if (lim > 0 && ctl * 10 > lim) {
		snprintf(why, whysz, "binary: %zu control bytes in the first %zu", ctl, lim);
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
	return best;
}
