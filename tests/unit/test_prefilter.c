/* test_prefilter.c: the literal prefilter finds exactly the literals a
 * plain case-insensitive search finds, at every offset of texts of every
 * length (the SIMD scan, its scalar tail and the scalar path alike, with
 * the anchors it starts with and with those it learns from text), so it
 * can never hide a match from the regexes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../analyzer/rules/rules_int.h"

static const char *const lits[] = {
	"cuda out of memory", "crashloopbackoff", "137", "killed", "started ", "xid (",
	"oom-kill:constraint=", "running: ", "\" with crashloopbackoff", "ab", "zz", ": ",
};

static int naive_has(const char *t, size_t n, const char *lit)
{
	size_t k = strlen(lit);
	for (size_t i = 0; i + k <= n; i++) {
		size_t j = 0;
		while (j < k) {
			unsigned char c = (unsigned char)t[i + j];
			if (c >= 'A' && c <= 'Z')
				c = (unsigned char)(c + 32);
			if (c != (unsigned char)lit[j])
				break;
			j++;
		}
		if (j == k)
			return 1;
	}
	return 0;
}

/* Text like a log's, where the literals' first pairs are the common ones
 * ("st", "ru", ": ") and a few literals occur whole. */
static void learn_from(struct iq_prefilter *pf, size_t bytes)
{
	static const char line[] = "Started stage: running the store; status: ok, rusty stuff "
				   "killed 0 Xid (13) ";
	pf->learn_left = bytes;
	while (pf->learn_left)
		iq_pf_scan(pf, line, sizeof line - 1);
	assert_null(pf->pairs);
}

/* learned: the anchors come from learn_from's text, not the defaults */
static struct iq_prefilter *make_learned(uint32_t *ids, int simd, int learned)
{
	struct iq_prefilter *pf = iq_pf_new();
	for (size_t i = 0; i < IQ_ARRAY_LEN(lits); i++)
		ids[i] = iq_pf_add(pf, lits[i]);
	if (!simd)
		pf->simd = 0;
	if (learned)
		learn_from(pf, 4096);
	else
		pf->learn_left = 0; /* these tests scan a few MB: keep the defaults */
	return pf;
}

static struct iq_prefilter *make(uint32_t *ids, int simd)
{
	return make_learned(ids, simd, 0);
}

static void check_text(struct iq_prefilter *pf, const uint32_t *ids, const char *t, size_t n)
{
	iq_pf_scan(pf, t, n);
	uint32_t found = 0;
	for (size_t i = 0; i < IQ_ARRAY_LEN(lits); i++) {
		int got = pf->seen[ids[i]] == pf->gen;
		int want = naive_has(t, n, lits[i]);
		if (got != want)
			fail_msg("literal '%s' in text of %zu bytes: prefilter %d, search %d", lits[i], n, got,
				 want);
		found += (uint32_t)want;
	}
	assert_int_equal(pf->nseen, found);
}

/* Every literal at every offset of texts up to 80 bytes, in upper and
 * lower case, with noise around it. */
static void run_offsets(int simd, int learned)
{
	uint32_t ids[IQ_ARRAY_LEN(lits)];
	struct iq_prefilter *pf = make_learned(ids, simd, learned);
	char t[128];
	unsigned seed = 7;
	for (size_t li = 0; li < IQ_ARRAY_LEN(lits); li++) {
		size_t k = strlen(lits[li]);
		for (size_t n = k; n <= 80; n++) {
			for (size_t off = 0; off + k <= n; off++) {
				for (size_t i = 0; i < n; i++) {
					seed = seed * 1103515245u + 12345u;
					t[i] = (char)("qwjhv-_ 0123456789.\"XYZ"[(seed >> 16) % 23]);
				}
				memcpy(t + off, lits[li], k);
				if (off & 1)
					for (size_t i = off; i < off + k; i++)
						if (t[i] >= 'a' && t[i] <= 'z')
							t[i] = (char)(t[i] - 32);
				check_text(pf, ids, t, n);
			}
		}
	}
	iq_pf_free(pf);
}

static void test_every_offset_simd(void **state)
{
	(void)state;
	run_offsets(1, 0);
}

static void test_every_offset_learned(void **state)
{
	(void)state;
	run_offsets(1, 1);
	run_offsets(0, 1);
}

static void test_every_offset_scalar(void **state)
{
	(void)state;
	run_offsets(0, 0);
}

/* Random texts over a small alphabet make near misses (prefixes of
 * literals, anchor pairs without the rest) at every position. */
static void near_misses(int learned)
{
	uint32_t ids[IQ_ARRAY_LEN(lits)];
	struct iq_prefilter *pf = make_learned(ids, 1, learned);
	struct iq_prefilter *ps = make_learned(ids, 0, learned);
	char t[300];
	unsigned seed = 11;
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)(round % 300);
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			t[i] = "abzZ137 :kKilLed\"xXid("[(seed >> 16) % 22];
		}
		check_text(pf, ids, t, n);
		check_text(ps, ids, t, n);
	}
	iq_pf_free(pf);
	iq_pf_free(ps);
}

static void test_near_misses(void **state)
{
	(void)state;
	near_misses(0);
	near_misses(1);
}

/* After learning, a literal is not found by a pair its text was full of
 * when it has a rarer one; and a literal seen during learning counts. */
static void test_learned_anchors(void **state)
{
	(void)state;
	uint32_t ids[IQ_ARRAY_LEN(lits)];
	struct iq_prefilter *pf = make_learned(ids, 1, 0);
	const struct iq_pf_lit *running = &pf->lits[ids[7]];
	assert_string_equal(running->s, "running: ");
	assert_int_equal(running->anchor, 6); /* "g:" by the default ranks */
	pf->learn_left = 4096;
	static const char text[] = "worker running: ok; running: ok; ng: gg: g: ";
	size_t fed = 0;
	while (pf->learn_left) {
		iq_pf_scan(pf, text, sizeof text - 1);
		assert_int_equal(pf->seen[ids[7]], pf->gen);
		fed += sizeof text - 1;
	}
	assert_true(fed >= 4096);
	assert_null(pf->pairs);
	assert_int_not_equal(running->anchor, 6);
	check_text(pf, ids, text, sizeof text - 1);
	check_text(pf, ids, "RUNNING: x", 10);
	check_text(pf, ids, "runnin: g: ", 11);
	iq_pf_free(pf);
}

/* High bytes (UTF-8, binary) are never mistaken for ASCII letters. */
static void test_high_bytes(void **state)
{
	(void)state;
	uint32_t ids[IQ_ARRAY_LEN(lits)];
	struct iq_prefilter *pf = make(ids, 1);
	char t[64];
	for (int b = 128; b < 256; b++) {
		memset(t, b, sizeof t);
		check_text(pf, ids, t, sizeof t);
		memcpy(t + 20, "KILLED", 6);
		check_text(pf, ids, t, sizeof t);
	}
	iq_pf_free(pf);
}

/* Literals per top-level alternative; a mark is skipped like a group, a
 * verb that changes what matches leaves the pattern without literals. */
static void test_extract_marks_and_verbs(void **state)
{
	(void)state;
	char out[IQ_PF_ALTS][IQ_LIT_MAX];
	assert_int_equal(iq_pf_extract("(*MARK:framework=hip)HIP error: out|(*:x)hipErrorOutOfMemory", out,
				       IQ_PF_ALTS), 2);
	assert_string_equal(out[0], "hip error: out");
	assert_string_equal(out[1], "hiperroroutofmemory");
	assert_int_equal(iq_pf_extract("CUDA error(*ACCEPT) out of memory", out, IQ_PF_ALTS), 0);
	assert_int_equal(iq_pf_extract("(*UTF)CUDA error: out of memory", out, IQ_PF_ALTS), 0);
	assert_int_equal(iq_pf_extract("cuda|x", out, IQ_PF_ALTS), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_offset_simd),
		cmocka_unit_test(test_every_offset_scalar),
		cmocka_unit_test(test_every_offset_learned),
		cmocka_unit_test(test_learned_anchors),
		cmocka_unit_test(test_near_misses),
		cmocka_unit_test(test_high_bytes),
		cmocka_unit_test(test_extract_marks_and_verbs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
