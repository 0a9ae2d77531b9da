/* rules.h: rule packs: loading the JSON (jansson stays inside rules/),
 * compiling signal regexes with PCRE2 (JIT), matching records, and the
 * packs' own test cases. */
#ifndef IQ_RULES_H
#define IQ_RULES_H

#include <jansson.h>

#include "../parse/parse.h"

enum iq_field_type { IQ_FIELD_TEXT = 0, IQ_FIELD_SIZE, IQ_FIELD_INT };

struct iq_signal;
struct iq_pack;

/* All loaded packs. */
struct iq_ruleset {
	struct iq_pack **packs;
	size_t npacks;
	void *match_data;       /* pcre2_match_data, shared by all signals */
	struct iq_buf caps;     /* the captures of the last match, as JSON */
};

void iq_rules_init(struct iq_ruleset *rs);
void iq_rules_release(struct iq_ruleset *rs);

/* Loads the packs shipped inside the binary (every rules/ pack at build time). */
int iq_rules_load_builtin(struct iq_ruleset *rs, struct iq_diag *d);
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

/* Matches the record's text against every signal that applies to its kind.
 * Returns 0, fn's non-zero result, or IQ_ERR_NOMEM. */
int iq_rules_match(struct iq_ruleset *rs, const struct iq_record *r, iq_match_fn fn, void *u);

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

/* Runs every test case of every pack: prints failures to out and adds to
 * *passed and *failed. */
void iq_rules_test(struct iq_ruleset *rs, FILE *out, long *passed, long *failed);

#endif
