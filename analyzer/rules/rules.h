/* rules.h: rule packs: loading the JSON (jansson stays inside rules/),
 * compiling signal regexes with PCRE2 (JIT), matching records, and the
 * packs' own test cases. */
#ifndef IQ_RULES_H
#define IQ_RULES_H

#include <jansson.h>

#include "../parse/parse.h"

/* Types of named captures ("fields" in a signal): text as written; size
 * ("2.00 GiB", also <name>_bytes); int and count (integers, "1,234" allowed);
 * tokens (a token count, "32k" = 32768). */
enum iq_field_type { IQ_FIELD_TEXT = 0, IQ_FIELD_SIZE, IQ_FIELD_INT, IQ_FIELD_TOKENS };

/* The sections of a pack that hold signals (regex or windowed detector). */
enum iq_section {
	IQ_SEC_SIGNALS = 0,     /* recognition signals of the pattern */
	IQ_SEC_BOUNDARIES,      /* what rules the pattern out */
	IQ_SEC_FACTS,           /* lines tagged only to answer questions */
	IQ_SEC_COUNT
};

struct iq_signal;
struct iq_pack;
struct sqlite3;

/* All loaded packs. */
struct iq_ruleset {
	struct iq_pack **packs; /* pattern packs, in load order */
	size_t npacks;
	void *match_data;       /* pcre2_match_data, shared by all signals */
	struct iq_buf caps;     /* the captures of the last match, as JSON */
	struct iq_pack **shared; /* shared-definition packs ("kind": "shared") */
	size_t nshared;
	unsigned long gen;      /* numbers the matched records (memo of shared signals) */
	void *prefilter;        /* literals of every pattern, built at the first match */
	int pf_active;          /* the prefilter has scanned the text being matched */
	const char *source;     /* the file being matched, for limit reports (borrowed) */
	void *sql_check;        /* the empty schema database questions' SQL is checked on */
	long line;              /* line of the record being matched */
	/* watched literals (iq_rules_watch): their prefilter ids, which of
	 * them no signal shares, and what the last match found */
	const char *const *watch;
	size_t nwatch;
	uint32_t watch_id[32];
	uint32_t watch_only;
	long watched;
};

void iq_rules_init(struct iq_ruleset *rs);
void iq_rules_release(struct iq_ruleset *rs);

/* Loads the packs shipped inside the binary (every rules/ pack at build time). */
int iq_rules_load_builtin(struct iq_ruleset *rs, struct iq_diag *d);
/* Loads only the shipped shared-definition packs, marked as a base: refs of
 * packs loaded later resolve against them, but the test runner and lint
 * leave them out (a pack file of the same id replaces them). */
int iq_rules_load_builtin_shared(struct iq_ruleset *rs, struct iq_diag *d);
/* Loads a pack file, or every *.json in a directory (sorted). Errors name
 * the file (and line:column for JSON syntax) in d->msg; IQ_ERR_RULES. A
 * pack whose id is already loaded replaces the earlier one. */
int iq_rules_load_path(struct iq_ruleset *rs, const char *path, struct iq_diag *d);
/* Loads a pack from text; name is used in messages. */
int iq_rules_load_text(struct iq_ruleset *rs, const char *name, const char *text,
		       size_t n, struct iq_diag *d);

/* Called for each signal a record matches; captures is a JSON object text
 * (valid during the call), never NULL. Non-zero stops matching. */
typedef int (*iq_match_fn)(void *u, const char *pack, const char *signal,
			   const char *captures);

/* Matches the record's text against every signal that applies to its kind
 * (signals, boundaries and facts of every pattern pack). A shared signal is
 * matched once and reported under each pack that references it, with the
 * reference's id; an exception that matches cancels the signal.
 * Returns 0, fn's non-zero result, or IQ_ERR_NOMEM. */
int iq_rules_match(struct iq_ruleset *rs, const struct iq_record *r, iq_match_fn fn, void *u);
/* Literals (lower case, two bytes or more, at most 32; the array is kept,
 * not copied) whose presence in each record's text the matcher reports,
 * found in the pass that looks for the signals' literals: ASCII case
 * folded, anywhere in the text. After iq_rules_match, iq_rules_watched
 * gives the set found in that record's text (bit i for lits[i]), or -1
 * when the match did not scan the text (no signal applies to its kind). */
void iq_rules_watch(struct iq_ruleset *rs, const char *const *lits, size_t n);
long iq_rules_watched(const struct iq_ruleset *rs);

/* Names the file whose records are matched next (borrowed until the next
 * call or the release; NULL for none), so that a PCRE2 limit hit can say
 * where it happened first. */
void iq_rules_set_source(struct iq_ruleset *rs, const char *name);

/* A signal whose regexes hit a PCRE2 match, depth, heap or JIT stack limit
 * while matching records: those records count as not matched by it. */
struct iq_limit_hit {
	const char *pack;       /* pack id */
	const char *file;       /* the pack's file, as loaded ("rules/x.json") */
	const char *signal;     /* signal id */
	int line, col;          /* of the first regex that hit, in file */
	const char *limits;     /* "match limit", "match and depth limits"... */
	long lines;             /* records on which it was hit */
	const char *first;      /* "FILE:LINE" of the first such record, or "" */
	char msg[640];          /* "signal 'x': PCRE2 match limit hit on N lines (first: F:L)" */
};
typedef void (*iq_limit_fn)(void *u, const struct iq_limit_hit *h);

/* Calls fn (when not NULL) for each signal, of every pack and shared pack,
 * that hit a PCRE2 limit since the last reset, in load order; with reset
 * set, clears the counts afterwards. Returns how many signals hit one. The
 * hit is valid during the call. */
size_t iq_rules_limit_hits(struct iq_ruleset *rs, iq_limit_fn fn, void *u, int reset);

/* Accessors for reports. */
const char *iq_pack_id(const struct iq_pack *p);
const char *iq_pack_file(const struct iq_pack *p);
/* Localised text of the pack's key ("title", "definition"); falls back to
 * English. Never NULL. */
const char *iq_pack_text(const struct iq_pack *p, const char *key, const char *lang);
size_t iq_pack_signal_count(const struct iq_pack *p);
const struct iq_signal *iq_pack_signal(const struct iq_pack *p, size_t i);
const char *iq_signal_id(const struct iq_signal *s);
const char *iq_signal_text(const struct iq_signal *s, const char *key, const char *lang);
const struct iq_pack *iq_rules_find(const struct iq_ruleset *rs, const char *id);

/* Runs every test case of every pack (shared packs included, base packs
 * not): prints failures to out as "file:line:col: FAIL pack/signal ..." with
 * a diff of the captures, and adds to *passed and *failed. */
void iq_rules_test(struct iq_ruleset *rs, FILE *out, long *passed, long *failed);

/* More accessors (for detectors, reports and `inquest rules explain`).
 * Strings are borrowed from the pack; "" or NULL as stated. */
int iq_pack_is_shared(const struct iq_pack *p);
int iq_pack_is_base(const struct iq_pack *p);
const char *iq_pack_version(const struct iq_pack *p);          /* "" if none */
size_t iq_rules_shared_count(const struct iq_ruleset *rs);
const struct iq_pack *iq_rules_shared_pack(const struct iq_ruleset *rs, size_t i);
/* The signals of a section; iq_pack_signal(p, i) is section IQ_SEC_SIGNALS. */
size_t iq_pack_section_count(const struct iq_pack *p, enum iq_section sec);
const struct iq_signal *iq_pack_section_signal(const struct iq_pack *p, enum iq_section sec,
					       size_t i);
/* The signal, boundary or fact with that id, or NULL. */
const struct iq_signal *iq_pack_find_signal(const struct iq_pack *p, const char *id);
const char *iq_section_name(enum iq_section sec);  /* "signals", "boundaries", "facts" */
enum iq_section iq_signal_section(const struct iq_signal *s);
const char *iq_signal_severity(const struct iq_signal *s);   /* "" if none */
/* "common/cuda-oom" for a reference, else NULL; iq_signal_target gives the
 * shared signal it resolved to (NULL if none). */
const char *iq_signal_ref(const struct iq_signal *s);
const struct iq_signal *iq_signal_target(const struct iq_signal *s);
unsigned iq_signal_kinds(const struct iq_signal *s);  /* bit per enum iq_kind, 0 = all */
/* The windowed detector's name ("surge", ...) or NULL for a regex signal. */
const char *iq_signal_detector(const struct iq_signal *s);
/* A detector parameter: the number (0, or -1 when absent or not a number);
 * a list (how many numbers, up to max, were written to out; a single number
 * is a list of one). */
int iq_signal_param(const struct iq_signal *s, const char *key, double *out);
size_t iq_signal_param_list(const struct iq_signal *s, const char *key, double *out, size_t max);
/* The signal's JSON object (a reference's own object). Borrowed. */
json_t *iq_signal_json(const struct iq_signal *s);

/* The other sections: "conditions", "questions", "guidance", "verdicts",
 * "impacts", "references". Items are borrowed JSON. */
size_t iq_pack_item_count(const struct iq_pack *p, const char *section);
json_t *iq_pack_item(const struct iq_pack *p, const char *section, size_t i);
/* A string member of an item ("id", "sql", "when", "verdict", "phase"), or "". */
const char *iq_item_str(const json_t *item, const char *key);
/* A localised member of an item ("title", "question", "answer", "text"...),
 * falling back to English, or "". */
const char *iq_item_text(const json_t *item, const char *key, const char *lang);

/* Verdict logic. A "when" expression is built from terms signal:ID,
 * boundary:ID, condition:ID (present; condition:ID=false and =null for
 * found absent, unknown), missing:KIND (the bundle has no records of that
 * kind), data:QUESTION.KEY[OP VALUE] (a question's answer: true, non-zero,
 * non-empty without OP; OP is =, !=, <, <=, >, >=) and always, with not,
 * and, or and parentheses (rules/README.md). fn answers a term: what is
 * "signal", "boundary", "condition", "missing" or "data", id the rest of
 * the term; it returns 1 (holds) or 0. Verdicts answer data terms with 0:
 * the questions are answered after the verdict. */
typedef int (*iq_term_fn)(void *u, const char *what, const char *id);
/* 1 holds, 0 does not, IQ_ERR_RULES for a syntax error. */
int iq_rules_when_eval(const char *when, iq_term_fn fn, void *u);
/* The verdict of the pack's first "verdicts" rule that holds, or
 * "not_detected" when none does. */
const char *iq_pack_verdict(const struct iq_pack *p, iq_term_fn fn, void *u);
/* The index of the first verdict rule whose "when" holds, or -1. */
long iq_pack_verdict_rule(const struct iq_pack *p, iq_term_fn fn, void *u);
/* Is name one of the findings contract's verdicts? */
int iq_rules_verdict_known(const char *name);

/* Windowed detectors a pack may name, and the parameters each knows
 * (NULL-terminated), and what it does in words. NULL for an unknown name. */
size_t iq_detector_count(void);
const char *iq_detector_name(size_t i);
const char *const *iq_detector_params(const char *name);
const char *iq_detector_desc(const char *name);
/* Whether param of detector name is a window; then its kind (tumbling,
 * sliding, session) and where its edges lie, in words. */
int iq_detector_window(const char *name, const char *param, const char **kind, const char **edges);

/* Installs the authorizer that lets a question's SQL read and nothing else
 * (run it on the connection before preparing a pack's SQL). 0 or IQ_ERR_DB. */
int iq_rules_sql_guard(struct sqlite3 *db);

/* Lints a pack text: every error and warning goes to out as
 * "name:line:col: error: ..."; adds to *errors and *warnings. The pack is
 * added to rs when it loads (so that packs linted later can refer to its
 * shared signals). Returns 0 or IQ_ERR_RULES (errors found). */
int iq_rules_lint_text(struct iq_ruleset *rs, const char *name, const char *text, size_t n,
		       FILE *out, long *errors, long *warnings);
/* Lints the packs shipped inside the binary. */
int iq_rules_lint_builtin(struct iq_ruleset *rs, FILE *out, long *errors, long *warnings);
/* The same for a file, or every *.json in a directory (sorted). */
int iq_rules_lint_path(struct iq_ruleset *rs, const char *path, FILE *out, long *errors,
		       long *warnings);

#endif
