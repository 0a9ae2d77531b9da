/* errfilter.c: which records the unexplained-errors appendix considers,
 * the filter of iq_tpl_sql (report/templates.c) in C: an error or warning
 * severity, or for log, kernel and event records one of the error words in
 * the text, ASCII case folded as LIKE does. The ingest applies it to every
 * record no line signal tagged (the error_records table); the report's
 * fallback scan of older databases applies it to the stored columns. Both
 * must agree with the SQL, which the postmortem prints. */
#include <ctype.h>
#include <string.h>

#include "store.h"

/* severity IN ('ERROR', 'WARN', ...) of iq_tpl_sql. */
int iq_error_severity(const char *s, size_t n)
{
	static const char *const by_first[][4] = {
		{"ERROR", "E", "Error", NULL}, {"WARN", "WARNING", "W", "Warning"}, {"error", "err", NULL, NULL},
		{"CRITICAL", NULL, NULL, NULL}, {"FATAL", "F", NULL, NULL}, {"warning", NULL, NULL, NULL},
		{"fatal", NULL, NULL, NULL}, {"critical", "crit", NULL, NULL},
	};
	static const char first[] = "EWeCFwfc";
	if (!s || !n || n > 8)
		return 0;
	const char *f = strchr(first, s[0]);
	if (!f || !*f)
		return 0;
	for (int i = 0; i < 4 && by_first[f - first][i]; i++)
		if (strlen(by_first[f - first][i]) == n && memcmp(by_first[f - first][i], s, n) == 0)
			return 1;
	return 0;
}

/* The words of iq_tpl_sql's LIKEs, lower case, once for both lists below. */
#define ERROR_WORDS(X) \
	X("error") X("exception") X("traceback") X("fatal") X("panic") X("failed") X("refused") X("timed out")

/* Each word, its length, and the offset of the byte the vector test pairs
 * with the first (its last). */
#define WORD_ENTRY(w) {w, sizeof w - 1, sizeof w - 2},
static const struct {
	const char *w;
	size_t len, far;
} words[] = {ERROR_WORDS(WORD_ENTRY)};

#define WORD_NAME(w) w,
const char *const iq_error_word[IQ_ERROR_WORDS] = {ERROR_WORDS(WORD_NAME)};
_Static_assert(sizeof words / sizeof *words == IQ_ERROR_WORDS, "IQ_ERROR_WORDS is the word count");

/* Is one of the words at s (n bytes left), ASCII case folded as LIKE does? */
static int word_at(const unsigned char *s, size_t n)
{
	for (size_t k = 0; k < IQ_ARRAY_LEN(words); k++) {
		size_t l = words[k].len, i = 0;
		if (l > n || (s[0] | 0x20) != (unsigned char)words[k].w[0])
			continue;
		while (i < l && (s[i] < 0x80 ? (unsigned char)tolower(s[i]) : s[i]) == (unsigned char)words[k].w[i])
			i++;
		if (i == l)
			return 1;
	}
	return 0;
}

typedef unsigned char v16 __attribute__((vector_size(16)));

static v16 load16(const unsigned char *p)
{
	v16 v;
	memcpy(&v, p, sizeof v);
	return v | (unsigned char)0x20;
}

static v16 splat(unsigned char c)
{
	v16 v;
	memset(&v, c, sizeof v);
	return v;
}

/* Candidate positions among the sixteen at b (which has 24 readable
 * bytes): a word's first two letters there and its last letter "far"
 * bytes on (all folded with 0x20). One byte per position, nonzero for a
 * candidate; returns whether there is any. */
static int candidates(const unsigned char *b, unsigned char out[16])
{
	const v16 A = splat('a'), C = splat('c'), D = splat('d'), E = splat('e'), F = splat('f');
	const v16 I = splat('i'), K = splat('k'), L = splat('l'), N = splat('n'), P = splat('p');
	const v16 R = splat('r'), T = splat('t'), X = splat('x');
	v16 v0 = load16(b), v1 = load16(b + 1), v4 = load16(b + 4), v5 = load16(b + 5);
	v16 v6 = load16(b + 6), v8 = load16(b + 8);
	v16 m = (v16)((v0 == E) & (((v1 == R) & (v4 == R)) | ((v1 == X) & (v8 == N)))) |
		(v16)((v0 == T) & (((v1 == R) & (v8 == K)) | ((v1 == I) & (v8 == T)))) |
		(v16)((v0 == F) & (v1 == A) & ((v4 == L) | (v5 == D))) |
		(v16)((v0 == P) & (v1 == A) & (v4 == C)) |
		(v16)((v0 == R) & (v1 == E) & (v6 == D));
	uint64_t lo, hi;
	memcpy(&lo, &m, 8);
	memcpy(&hi, (const char *)&m + 8, 8);
	memcpy(out, &m, 16);
	return (lo | hi) != 0;
}

/* Does s (n bytes) hold one of the words? Sixteen positions at a time
 * (the last ones from a zero-padded copy: a zero byte is no letter), the
 * candidates checked one by one. */
static int has_word(const unsigned char *s, size_t n)
{
	unsigned char m[16];
	size_t i = 0;
	for (; i + 24 <= n; i += 16)
		if (candidates(s + i, m))
			for (size_t j = 0; j < 16; j++)
				if (m[j] && word_at(s + i + j, n - i - j))
					return 1;
	unsigned char pad[48] = {0};
	memcpy(pad, s + i, n - i);
	for (size_t k = 0; k < n - i; k += 16)
		if (candidates(pad + k, m))
			for (size_t j = 0; j < 16 && k + j < n - i; j++)
				if (m[j] && word_at(s + i + k + j, n - i - k - j))
					return 1;
	return 0;
}

/* r.text LIKE '%error%' OR ... : LIKE reads the text up to its first NUL. */
int iq_error_words(const char *text, size_t n)
{
	if (!text)
		return 0;
	const char *z = memchr(text, '\0', n);
	return has_word((const unsigned char *)text, z ? (size_t)(z - text) : n);
}

int iq_kind_has_text(enum iq_kind kind)
{
	return kind == IQ_KIND_LOG || kind == IQ_KIND_KERNEL || kind == IQ_KIND_EVENT;
}

int iq_error_like(int text_kind, const char *sev, size_t sevn, const char *text, size_t n)
{
	return iq_error_severity(sev, sevn) || (text_kind && iq_error_words(text, n));
}
