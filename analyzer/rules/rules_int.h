/* rules_int.h: what the files of rules/ share and nobody else sees: the
 * compiled pack and signal, the diagnostics sink that both loading (first
 * error wins) and lint (every error printed) write to, and the JSON
 * position scanner that turns a path such as signals[2].patterns[0] into
 * file:line:column. */
#ifndef IQ_RULES_INT_H
#define IQ_RULES_INT_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "rules.h"

#define IQ_RULES_MATCH_LIMIT 1000000
#define IQ_RULES_DEPTH_LIMIT 10000

struct iq_field {
	char *name;
	enum iq_field_type type;
};

/* The literal prefilter (prefilter.c). */
#define IQ_LIT_MAX 32          /* longest literal kept, with its NUL */
#define IQ_PF_ALTS 8           /* alternatives of a pattern with literals */
#define IQ_PF_LEARN (4u << 20) /* text bytes whose byte pairs pick the anchors */

struct iq_pf_lit {
	char s[IQ_LIT_MAX];    /* lower case */
	unsigned char n;
	unsigned char anchor;  /* offset of the byte pair it is found by */
};

struct iq_prefilter {
	uint32_t *head;        /* first literal of each anchor pair, 65536 */
	uint32_t *next;        /* the next literal with the same anchor pair */
	uint64_t *bits;        /* the anchor pairs in use: 65536 bits, 8 KiB */
	unsigned char first[256]; /* bytes (either case) an anchor pair starts with */
	unsigned kinds;        /* record kinds some regex applies to (bit per iq_kind) */
	unsigned always;       /* kinds some regex without literals applies to */
	uint32_t nseen;        /* literals found in the current text */
	/* the anchor pairs by nibbles, for the SIMD scan: bucket bits of the
	 * first byte's low and high nibble, and of the second byte's */
	unsigned char lo1[16], hi1[16], lo2[16], hi2[16];
	int simd;              /* the CPU has SSSE3 */
	struct iq_pf_lit *lits;
	uint32_t *seen;        /* == gen when found in the current text */
	size_t nlits, cap;
	uint32_t gen;
	/* byte-pair counts of the first IQ_PF_LEARN bytes scanned; then each
	 * literal's anchor becomes its pair seen least often (NULL after) */
	uint32_t *pairs;
	size_t learn_left;
};

/* The literals one of a pattern's alternatives must contain (nalt == 0:
 * none known, the regex always runs). */
struct iq_pat_lits {
	unsigned char nalt;
	char lit[IQ_PF_ALTS][IQ_LIT_MAX];
	uint32_t id[IQ_PF_ALTS];
};

/* Fills out with one literal per top-level alternative of pat; returns how
 * many, or 0 when some alternative has none (or pat is in a mode where
 * characters do not mean themselves). */
size_t iq_pf_extract(const char *pat, char out[][IQ_LIT_MAX], size_t max);
struct iq_prefilter *iq_pf_new(void);
void iq_pf_free(struct iq_prefilter *pf);
/* Adds a literal (lower case, >= 2 bytes) and returns its id. */
uint32_t iq_pf_add(struct iq_prefilter *pf, const char *lit);
/* Marks the literals found in text (pf->seen[id] == pf->gen). */
void iq_pf_scan(struct iq_prefilter *pf, const char *text, size_t n);

struct iq_signal {
	char *id;
	char *path;             /* JSON path in the pack: "signals[2]" */
	json_t *obj;            /* the signal's JSON (borrowed from the pack) */
	struct iq_pack *pack;   /* the pack it belongs to */
	enum iq_section section;
	unsigned kinds;         /* bit per enum iq_kind; 0 = every kind */
	pcre2_code **re;
	struct iq_pat_lits *lits; /* per pattern, for the prefilter */
	size_t nre;
	pcre2_code **exc;       /* exceptions: a match cancels the signal */
	size_t nexc;
	struct iq_field *fields;
	size_t nfields;
	const char *detector;   /* borrowed from obj; NULL unless windowed */
	char *ref;              /* "common/cuda-oom" for a reference */
	struct iq_signal *target; /* the shared signal a reference resolves to */
	/* A shared signal is matched once per record: the result of the
	 * record numbered memo_gen. */
	unsigned long memo_gen;
	int memo_hit;
	struct iq_buf memo;
	/* PCRE2 limits hit while matching records (iq_rules_limit_hits) */
	long limit_lines;       /* records on which one of its regexes hit one */
	unsigned limit_kinds;   /* bit per IQ_LIM_* */
	unsigned long limit_gen; /* the record last counted */
	char *limit_path;       /* JSON path of the first regex that hit */
	char *limit_first;      /* "FILE:LINE" of the first record */
};

/* The PCRE2 limits a match can hit (bits of iq_signal.limit_kinds). */
enum { IQ_LIM_MATCH = 1, IQ_LIM_DEPTH = 2, IQ_LIM_HEAP = 4, IQ_LIM_JIT_STACK = 8 };

struct iq_pack {
	char *file;
	char *id;
	char *text;             /* the raw JSON, for positions */
	size_t ntext;
	json_t *root;
	int shared;             /* "kind": "shared": definitions for refs */
	int base;               /* loaded only so that refs resolve */
	int linted;             /* loaded by this lint run */
	struct iq_signal *sig;  /* signals, then boundaries, then facts */
	size_t nall;
	size_t off[IQ_SEC_COUNT], n[IQ_SEC_COUNT];
};

/* Where diagnostics go. With out == NULL (loading) the first error is
 * kept in d and later ones are dropped; with out set (lint) each error and
 * warning is printed as "file:line:col: error: msg". */
struct iq_lint {
	const char *file;
	const char *text;
	size_t ntext;
	FILE *out;
	struct iq_diag *d;
	long errors, warnings;
};

/* Reports at the JSON value (key = 0) or member name (key = 1) at path;
 * extra, when not NULL, is printed on the following lines (lint only). */
void iq_lint_report(struct iq_lint *lc, int warn, const char *path, int key, const char *extra,
		    const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Finds the value at path ("signals[2].patterns[0]", "" for the root) in
 * the JSON text, or the member name with key = 1. Sets 1-based *line and
 * *col (columns count UTF-8 characters, as jansson's do) and returns 0, or
 * -1 when the path is not there (then *line and *col are 1). */
int iq_json_pos(const char *text, size_t n, const char *path, int key, int *line, int *col);

/* Compiles a regex for a pack; NULL after reporting at path. */
pcre2_code *iq_rules_compile_re(struct iq_lint *lc, const char *what, const char *pat,
				const char *path);

/* The shared match context (match and depth limits). */
pcre2_match_context *iq_rules_match_ctx(void);

/* pcre2_match of re over all of text with the shared limits; when the JIT
 * runs out of stack, again without it. The pcre2_match result. */
int iq_rules_run_re(pcre2_code *re, const char *text, size_t n, pcre2_match_data *md);

/* The check loading makes of a pack's questions: every statement of each
 * "sql" must prepare read-only under iq_rules_sql_guard against the
 * schema (a database rs keeps for it). Reports at questions[i].sql;
 * 0 or IQ_ERR_RULES. */
int iq_rules_guard_questions(struct iq_lint *lc, struct iq_ruleset *rs, struct iq_pack *p);
/* Frees the database iq_rules_guard_questions keeps (NULL is fine). */
void iq_rules_sql_check_free(void *check);

/* Lint checks beyond what loading checks: keys, translations, ids,
 * verdicts, guidance, questions' SQL. */
void iq_rules_lint_pack(struct iq_lint *lc, struct iq_ruleset *rs, struct iq_pack *p);

#endif
