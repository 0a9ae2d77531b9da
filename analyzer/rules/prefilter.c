/* prefilter.c: most records match no signal, and running every signal's
 * regexes over each of them is the matcher's main cost. Each pattern that
 * must contain a literal (at its top level, in every alternative) is
 * skipped unless one of its literals occurs in the text; all literals of
 * all packs are found in one pass over the text: each literal is found by
 * its rarest (lower-cased) byte pair, and the scan tests every position's
 * byte against the set of bytes such pairs start with (sixteen at a time
 * where the CPU has SSSE3). The pairs start as guessed from letter ranks;
 * after the first IQ_PF_LEARN bytes of text they are chosen again from the
 * pairs that text had (relearn). The test is case-insensitive, so it can
 * only let through more than the regex would match, never less. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define IQ_PF_SIMD 1
#include <immintrin.h>
#else
#define IQ_PF_SIMD 0
#endif

#include "rules_int.h"

#define MIN_LIT 3

/* Appends c to the current literal run (lower-cased). */
static void run_add(char *run, size_t *rn, unsigned char c)
{
	if (*rn + 1 < IQ_LIT_MAX)
		run[(*rn)++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
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

/* Does pat hold a backtracking or option verb "(*...)"? A mark, (*MARK:x)
 * or (*:x), only names the path that matched (rules.c reads it as a
 * field): a group the scan below skips like any other. */
static int has_verb(const char *pat)
{
	for (const char *p = strstr(pat, "(*"); p; p = strstr(p + 2, "(*"))
		if (strncmp(p + 2, "MARK:", 5) != 0 && p[2] != ':')
			return 1;
	return 0;
}

size_t iq_pf_extract(const char *pat, char out[][IQ_LIT_MAX], size_t max)
{
	char run[IQ_LIT_MAX], best[IQ_LIT_MAX];
	size_t rn = 0, bn = 0, nout = 0;
	/* extended mode and \Q...\E change what characters mean, and a verb
	 * such as (*ACCEPT) or (*UTF) changes what matches: no prefilter */
	if (strstr(pat, "(?x") || strstr(pat, "\\Q") || has_verb(pat))
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

/* ASCII lower case, as PCRE2's caseless matching outside UTF mode; built
 * by the compiler, so that parser threads share it without a race. */
#define LC(c) ((c) >= 'A' && (c) <= 'Z' ? (c) | 0x20 : (c))
#define LC4(b) LC(b), LC(b + 1), LC(b + 2), LC(b + 3)
#define LC16(b) LC4(b), LC4(b + 4), LC4(b + 8), LC4(b + 12)
#define LC64(b) LC16(b), LC16(b + 16), LC16(b + 32), LC16(b + 48)
static const unsigned char lower_of[256] = {LC64(0), LC64(64), LC64(128), LC64(192)};

static unsigned pair_of(unsigned char a, unsigned char b)
{
	return (unsigned)lower_of[a] << 8 | lower_of[b];
}

/* How often a (lower-case) byte turns up in log text, roughly: letters by
 * their English frequency, digits and the separators logs are made of. The
 * prefilter finds each literal by its rarest byte pair, so that most
 * positions of a text miss the bitmap at once. */
static unsigned common(unsigned char c)
{
	static const char by_freq[] = " etaoinsrlcdhum0123456789:.-=/,_pfgywbv\"[]()kx'jqz";
	const char *p = memchr(by_freq, c, sizeof by_freq - 1);
	return p ? (unsigned)(sizeof by_freq - (size_t)(p - by_freq)) : 1;
}

/* Each anchor pair (both cases of each byte) goes into one of eight
 * buckets: a position is a candidate when, in some bucket, the nibbles of
 * its byte and of the next one are all present. That lets through more
 * than the pairs themselves (nibbles of different pairs of a bucket mix),
 * never less; check_at tests the pair exactly. */
static void mark_pair(struct iq_prefilter *pf, unsigned char a, unsigned char b, unsigned bucket)
{
	unsigned char bit = (unsigned char)(1u << (bucket & 7));
	pf->first[a] = 1;
	pf->lo1[a & 15] |= bit;
	pf->hi1[a >> 4] |= bit;
	pf->lo2[b & 15] |= bit;
	pf->hi2[b >> 4] |= bit;
}

static unsigned char upper_of(unsigned char c)
{
	return (unsigned char)(c >= 'a' && c <= 'z' ? c - 32 : c);
}

struct iq_prefilter *iq_pf_new(void)
{
	struct iq_prefilter *pf = iq_xcalloc(1, sizeof *pf);
	pf->head = iq_xmalloc(65536 * sizeof *pf->head);
	memset(pf->head, 0xff, 65536 * sizeof *pf->head);
	pf->bits = iq_xcalloc(65536 / 64, sizeof *pf->bits);
	pf->pairs = iq_xcalloc(65536, sizeof *pf->pairs);
	pf->learn_left = IQ_PF_LEARN;
#if IQ_PF_SIMD
	__builtin_cpu_init();
	pf->simd = __builtin_cpu_supports("ssse3");
#endif
	return pf;
}

void iq_pf_free(struct iq_prefilter *pf)
{
	if (!pf)
		return;
	free(pf->head);
	free(pf->bits);
	free(pf->pairs);
	free(pf->lits);
	free(pf->next);
	free(pf->seen);
	free(pf);
}

/* Puts the pair at offset at of literal id into the chains and the
 * bucket's nibble sets, in both cases of each byte. */
static void link_lit(struct iq_prefilter *pf, uint32_t id, size_t at, unsigned bucket)
{
	struct iq_pf_lit *lit = &pf->lits[id];
	unsigned char a = (unsigned char)lit->s[at], b = (unsigned char)lit->s[at + 1];
	unsigned k = pair_of(a, b);
	lit->anchor = (unsigned char)at;
	pf->next[id] = pf->head[k];
	pf->head[k] = id;
	pf->bits[k >> 6] |= 1ull << (k & 63);
	mark_pair(pf, a, b, bucket);
	mark_pair(pf, upper_of(a), b, bucket);
	mark_pair(pf, a, upper_of(b), bucket);
	mark_pair(pf, upper_of(a), upper_of(b), bucket);
}

/* Before any text is seen: the pair whose bytes are rarer in logs in
 * general (the first of equals), in the bucket of its first byte's high
 * nibble. */
static void link_static(struct iq_prefilter *pf, uint32_t id)
{
	const struct iq_pf_lit *lit = &pf->lits[id];
	size_t best = 0;
	unsigned best_score = ~0u;
	for (size_t i = 0; i + 1 < lit->n; i++) {
		/* the first byte is what the scan tests at every position */
		unsigned sc = common((unsigned char)lit->s[i]) * 64 + common((unsigned char)lit->s[i + 1]);
		if (sc < best_score) {
			best_score = sc;
			best = i;
		}
	}
	link_lit(pf, id, best, (unsigned char)lit->s[best] >> 4);
}

/* A byte pair of the learnt text and how often it occurred. */
struct seen_pair {
	unsigned char a, b;
	int covered;       /* already a candidate of the buckets so far */
	uint32_t count;
};

/* Would pair p be a candidate of bucket bk with (x, y) and their upper
 * cases added to it? */
static int passes(const struct iq_prefilter *pf, const struct seen_pair *p, unsigned bk,
		  unsigned char x, unsigned char y)
{
	unsigned char X = upper_of(x), Y = upper_of(y);
	int lo1 = (pf->lo1[p->a & 15] >> bk & 1) || (p->a & 15) == (x & 15) || (p->a & 15) == (X & 15);
	int hi1 = (pf->hi1[p->a >> 4] >> bk & 1) || p->a >> 4 == x >> 4 || p->a >> 4 == X >> 4;
	int lo2 = (pf->lo2[p->b & 15] >> bk & 1) || (p->b & 15) == (y & 15) || (p->b & 15) == (Y & 15);
	int hi2 = (pf->hi2[p->b >> 4] >> bk & 1) || p->b >> 4 == y >> 4 || p->b >> 4 == Y >> 4;
	return lo1 && hi1 && lo2 && hi2;
}

/* How often the text had the pair (a, b) in any case. */
static uint64_t folded_count(const struct iq_prefilter *pf, unsigned char a, unsigned char b)
{
	unsigned char A = upper_of(a), B = upper_of(b);
	uint64_t n = pf->pairs[a << 8 | b];
	if (A != a)
		n += pf->pairs[A << 8 | b];
	if (B != b)
		n += pf->pairs[a << 8 | B];
	if (A != a && B != b)
		n += pf->pairs[A << 8 | B];
	return n;
}

/* The text learnt from is enough: each literal in turn gets the pair and
 * bucket that add the fewest candidate positions in that text (positions
 * the scan stops at: nibbles of several pairs of a bucket mix, so a rare
 * pair in a crowded bucket can cost more than a commoner one alone).
 * Which literals a text contains is the same for any choice; only the
 * number of positions checked changes. */
static void relearn(struct iq_prefilter *pf)
{
	size_t np = 0;
	for (unsigned k = 0; k < 65536; k++)
		np += pf->pairs[k] != 0;
	struct seen_pair *sp = iq_xmalloc((np ? np : 1) * sizeof *sp);
	np = 0;
	for (unsigned k = 0; k < 65536; k++)
		if (pf->pairs[k])
			sp[np++] = (struct seen_pair){(unsigned char)(k >> 8), (unsigned char)k, 0,
						      pf->pairs[k]};
	memset(pf->head, 0xff, 65536 * sizeof *pf->head);
	memset(pf->bits, 0, 65536 / 64 * sizeof *pf->bits);
	memset(pf->first, 0, sizeof pf->first);
	memset(pf->lo1, 0, sizeof pf->lo1);
	memset(pf->hi1, 0, sizeof pf->hi1);
	memset(pf->lo2, 0, sizeof pf->lo2);
	memset(pf->hi2, 0, sizeof pf->hi2);
	for (uint32_t id = 0; id < pf->nlits; id++) {
		const unsigned char *s = (const unsigned char *)pf->lits[id].s;
		size_t best_at = 0;
		unsigned best_bk = 0;
		uint64_t best_cost = UINT64_MAX;
		for (size_t i = 0; i + 1 < pf->lits[id].n; i++)
			for (unsigned bk = 0; bk < 8; bk++) {
				/* a position with the pair itself costs a
				 * walk of its chain as well */
				uint64_t cost = 2 * (uint64_t)folded_count(pf, s[i], s[i + 1]);
				for (size_t j = 0; j < np && cost < best_cost; j++)
					if (!sp[j].covered && passes(pf, &sp[j], bk, s[i], s[i + 1]))
						cost += sp[j].count;
				if (cost < best_cost) {
					best_cost = cost;
					best_at = i;
					best_bk = bk;
				}
			}
		for (size_t j = 0; j < np; j++)
			if (!sp[j].covered && passes(pf, &sp[j], best_bk, s[best_at], s[best_at + 1]))
				sp[j].covered = 1;
		link_lit(pf, id, best_at, best_bk);
	}
	free(sp);
	free(pf->pairs);
	pf->pairs = NULL;
	pf->learn_left = 0;
}

/* Counts the text's byte pairs as they are (the scan sees both cases). */
static void learn(struct iq_prefilter *pf, const unsigned char *t, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		pf->pairs[(unsigned)t[i] << 8 | t[i + 1]]++;
	if (n < pf->learn_left)
		pf->learn_left -= n;
	else
		relearn(pf);
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
	link_static(pf, id);
	pf->seen[id] = 0;
	return id;
}

/* The literals whose anchor pair starts at t[i] (i + 1 < n). */
static inline void check_at(struct iq_prefilter *pf, const unsigned char *t, size_t n, size_t i)
{
	unsigned k = pair_of(t[i], t[i + 1]);
	if (!(pf->bits[k >> 6] >> (k & 63) & 1))
		return;
	for (uint32_t id = pf->head[k]; id != UINT32_MAX; id = pf->next[id]) {
		const struct iq_pf_lit *l = &pf->lits[id];
		if (pf->seen[id] == pf->gen || i < l->anchor || i - l->anchor + l->n > n)
			continue;
		const unsigned char *at = t + i - l->anchor;
		size_t j = 0;
		while (j < l->n && lower_of[at[j]] == (unsigned char)l->s[j])
			j++;
		if (j == l->n) {
			pf->seen[id] = pf->gen;
			pf->nseen++;
		}
	}
}

#if IQ_PF_SIMD
/* The candidate bucket bits of the sixteen bytes at v. */
__attribute__((target("ssse3"))) static inline __m128i nibble_sets(__m128i v, __m128i lo, __m128i hi)
{
	const __m128i nib = _mm_set1_epi8(0x0f);
	return _mm_and_si128(_mm_shuffle_epi8(lo, _mm_and_si128(v, nib)),
			     _mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16(v, 4), nib)));
}

/* Sixteen positions at a time: four table shuffles say where an anchor
 * pair may start (the "double shufti" of Hyperscan). Returns where the
 * scalar loop takes over. */
__attribute__((target("ssse3"))) static size_t scan_simd(struct iq_prefilter *pf,
							  const unsigned char *t, size_t n)
{
	const __m128i lo1 = _mm_loadu_si128((const __m128i *)(const void *)pf->lo1);
	const __m128i hi1 = _mm_loadu_si128((const __m128i *)(const void *)pf->hi1);
	const __m128i lo2 = _mm_loadu_si128((const __m128i *)(const void *)pf->lo2);
	const __m128i hi2 = _mm_loadu_si128((const __m128i *)(const void *)pf->hi2);
	const __m128i zero = _mm_setzero_si128();
	size_t i = 0;
	for (; i + 17 <= n; i += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)(t + i));
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(t + i + 1));
		__m128i c = _mm_and_si128(nibble_sets(a, lo1, hi1), nibble_sets(b, lo2, hi2));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(c, zero)) ^ 0xffffu;
		while (m) {
			unsigned k = (unsigned)__builtin_ctz(m);
			m &= m - 1;
			check_at(pf, t, n, i + k);
		}
	}
	return i;
}
#endif

void iq_pf_scan(struct iq_prefilter *pf, const char *text, size_t n)
{
	const unsigned char *t = (const unsigned char *)text;
	pf->gen++;
	pf->nseen = 0;
	if (pf->gen == 0) {
		memset(pf->seen, 0, pf->nlits * sizeof *pf->seen);
		pf->gen = 1;
	}
	if (pf->learn_left)
		learn(pf, t, n);
	size_t i = 0;
#if IQ_PF_SIMD
	if (pf->simd)
		i = scan_simd(pf, t, n);
#endif
	/* most bytes start no anchor pair: one table look each */
	const unsigned char *first = pf->first;
	for (; i + 1 < n; i++)
		if (first[t[i]])
			check_at(pf, t, n, i);
}
