/* prefilter.c: most records match no signal, and running every signal's
 * regexes over each of them is the matcher's main cost. Each pattern that
 * must contain a literal (at its top level, in every alternative) is
 * skipped unless one of its literals occurs in the text; all literals of
 * all packs are found in one pass over the text, through a table of their
 * first two (lower-cased) bytes. The test is case-insensitive, so it can
 * only let through more than the regex would match, never less. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "rules_int.h"

#define MIN_LIT 3

/* Appends c to the current literal run (lower-cased). */
static void run_add(char *run, size_t *rn, unsigned char c)
{
	if (*rn + 1 < IQ_LIT_MAX)
		run[(*rn)++] = (char)tolower(c);
}

/* Keeps the longest run of the current alternative. */
static void run_end(char *run, size_t *rn, char *best, size_t *bn)
{
	if (*rn > *bn) {
		memcpy(best, run, *rn);
		*bn = *rn;
	}
	*rn = 0;
}

/* Is \c (after a backslash) a literal character rather than a class,
 * anchor or back-reference? */
static int escaped_literal(unsigned char c)
{
	return c && !isalnum(c);
}

size_t iq_pf_extract(const char *pat, char out[][IQ_LIT_MAX], size_t max)
{
	char run[IQ_LIT_MAX], best[IQ_LIT_MAX];
	size_t rn = 0, bn = 0, nout = 0;
	/* extended mode and \Q...\E change what characters mean: no prefilter */
	if (strstr(pat, "(?x") || strstr(pat, "\\Q") || strstr(pat, "(*"))
		return 0;
	for (const unsigned char *p = (const unsigned char *)pat;; p++) {
		unsigned char c = *p;
		if (c == '\0' || c == '|') {
			run_end(run, &rn, best, &bn);
			if (bn < MIN_LIT || nout == max)
				return 0; /* an alternative with no usable literal */
			memcpy(out[nout], best, bn);
			out[nout][bn] = '\0';
			nout++;
			bn = 0;
			if (c == '\0')
				return nout;
			continue;
		}
		switch (c) {
		case '\\':
			if (escaped_literal(p[1])) {
				run_add(run, &rn, p[1]);
				p++;
			} else {
				run_end(run, &rn, best, &bn);
				if (p[1])
					p++;
			}
			break;
		case '(': {
			/* skip the group, whatever is inside */
			run_end(run, &rn, best, &bn);
			int depth = 0, cls = 0;
			for (; *p; p++) {
				if (*p == '\\' && p[1]) {
					p++;
					continue;
				}
				if (cls) {
					if (*p == ']')
						cls = 0;
					continue;
				}
				if (*p == '[')
					cls = 1;
				else if (*p == '(')
					depth++;
				else if (*p == ')' && --depth == 0)
					break;
			}
			if (!*p)
				return 0;
			break;
		}
		case '[':
			run_end(run, &rn, best, &bn);
			for (p++; *p && *p != ']'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				return 0;
			break;
		case '*':
		case '?':
		case '{':
			/* the atom before may be absent: it leaves the run */
			if (rn)
				rn--;
			run_end(run, &rn, best, &bn);
			if (c == '{')
				while (*p && *p != '}')
					p++;
			if (!*p)
				return 0;
			break;
		case '+':
			run_end(run, &rn, best, &bn);
			break;
		case '.':
		case '^':
		case '$':
			run_end(run, &rn, best, &bn);
			break;
		default:
			run_add(run, &rn, c);
		}
	}
}

static unsigned pair_of(unsigned char a, unsigned char b)
{
	return (unsigned)tolower(a) << 8 | (unsigned)tolower(b);
}

struct iq_prefilter *iq_pf_new(void)
{
	struct iq_prefilter *pf = iq_xcalloc(1, sizeof *pf);
	pf->head = iq_xmalloc(65536 * sizeof *pf->head);
	memset(pf->head, 0xff, 65536 * sizeof *pf->head);
	return pf;
}

void iq_pf_free(struct iq_prefilter *pf)
{
	if (!pf)
		return;
	free(pf->head);
	free(pf->lits);
	free(pf->next);
	free(pf->seen);
	free(pf);
}

uint32_t iq_pf_add(struct iq_prefilter *pf, const char *lit)
{
	size_t n = strlen(lit);
	for (uint32_t i = 0; i < pf->nlits; i++)
		if (strcmp(pf->lits[i].s, lit) == 0)
			return i;
	if (pf->nlits == pf->cap) {
		pf->cap = pf->cap ? pf->cap * 2 : 64;
		pf->lits = iq_xrealloc(pf->lits, pf->cap * sizeof *pf->lits);
		pf->next = iq_xrealloc(pf->next, pf->cap * sizeof *pf->next);
		pf->seen = iq_xrealloc(pf->seen, pf->cap * sizeof *pf->seen);
	}
	uint32_t id = (uint32_t)pf->nlits++;
	memcpy(pf->lits[id].s, lit, n + 1);
	pf->lits[id].n = (unsigned char)n;
	unsigned k = pair_of((unsigned char)lit[0], (unsigned char)lit[1]);
	pf->next[id] = pf->head[k];
	pf->head[k] = id;
	pf->seen[id] = 0;
	return id;
}

void iq_pf_scan(struct iq_prefilter *pf, const char *text, size_t n)
{
	const unsigned char *t = (const unsigned char *)text;
	pf->gen++;
	if (pf->gen == 0) {
		memset(pf->seen, 0, pf->nlits * sizeof *pf->seen);
		pf->gen = 1;
	}
	for (size_t i = 0; i + 1 < n; i++) {
		uint32_t id = pf->head[pair_of(t[i], t[i + 1])];
		for (; id != UINT32_MAX; id = pf->next[id]) {
			const struct iq_pf_lit *l = &pf->lits[id];
			if (pf->seen[id] == pf->gen || i + l->n > n)
				continue;
			size_t k = 2;
			while (k < l->n && tolower(t[i + k]) == (unsigned char)l->s[k])
				k++;
			if (k == l->n)
				pf->seen[id] = pf->gen;
		}
	}
}
