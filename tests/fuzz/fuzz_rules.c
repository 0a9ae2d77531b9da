/* fuzz_rules.c: libFuzzer target of the rule-pack loader: iq_rules_load_text
 * on the input; a pack that loads runs its own test cases and is matched
 * against a few fixed records and a record made of the input, and the PCRE2
 * limit hits of those matches are checked. */
#include <string.h>

#include "../../analyzer/rules/rules.h"
#include "fuzz.h"

static uint64_t sink_hash = 1469598103934665603ull;

/* Captures must be the JSON object text rules.h promises. */
static int on_match(void *u, const char *pack, const char *signal, const char *captures)
{
	IQ_UNUSED(u);
	FUZZ_CHECK(pack && signal && captures);
	fuzz_hash(&sink_hash, pack, strlen(pack));
	fuzz_hash(&sink_hash, signal, strlen(signal));
	json_error_t je;
	json_t *v = json_loads(captures, 0, &je);
	if (!v)
		fprintf(stderr, "captures are not JSON (%s): %s\n", je.text, captures);
	FUZZ_CHECK(v != NULL);
	FUZZ_CHECK(json_is_object(v));
	json_decref(v);
	return 0;
}

static void match_text(struct iq_ruleset *rs, enum iq_kind kind, const char *text, size_t n)
{
	struct iq_record r;
	iq_record_init(&r, kind);
	r.line = 1;
	r.nlines = 1;
	r.text = iq_str_make(text, n);
	FUZZ_CHECK(iq_rules_match(rs, &r, on_match, NULL) == 0);
}

/* A PCRE2 limit hit names a real place and counts at least one line. */
static void on_limit(void *u, const struct iq_limit_hit *h)
{
	IQ_UNUSED(u);
	FUZZ_CHECK(h->pack && h->file && h->signal && h->limits && h->first);
	FUZZ_CHECK(h->line >= 1 && h->col >= 1 && h->lines >= 1);
	FUZZ_CHECK(memchr(h->msg, '\0', sizeof h->msg) != NULL);
	FUZZ_CHECK(strncmp(h->msg, "signal '", 8) == 0);
	fuzz_hash(&sink_hash, h->msg, strlen(h->msg));
}

static void touch_texts(const char *s)
{
	FUZZ_CHECK(s != NULL);
	fuzz_hash(&sink_hash, s, strlen(s));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const lines[] = {
		"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB "
		"(GPU 0; 23.65 GiB total capacity; 20.81 GiB already allocated; 1.66 GiB free; "
		"21.00 GiB reserved in total by PyTorch)",
		"Back-off restarting failed container app in pod web-0_default(0a1b)",
		"NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
		"upstream prematurely closed connection 99999999999999999999999 bytes",
		"caf\xc3\xa9 \xe2\x82\xac 12345678901234567890123 GiB \xff\xfe",
		"",
	};
	struct iq_ruleset rs;
	struct iq_diag d;
	FILE *devnull;

	iq_rules_init(&rs);
	d.msg[0] = '\0';
	int rc = iq_rules_load_text(&rs, "fuzz.json", (const char *)data, size, &d);
	FUZZ_CHECK(memchr(d.msg, '\0', sizeof d.msg) != NULL);
	if (rc) {
		FUZZ_CHECK(rc < 0 && rs.npacks + iq_rules_shared_count(&rs) == 0);
		FUZZ_CHECK(d.msg[0] != '\0');
		iq_rules_release(&rs);
		return 0;
	}
	FUZZ_CHECK(rs.npacks + iq_rules_shared_count(&rs) == 1);

	devnull = fopen("/dev/null", "w");
	FUZZ_CHECK(devnull != NULL);
	long passed = 0, failed = 0;
	iq_rules_test(&rs, devnull, &passed, &failed);
	FUZZ_CHECK(passed >= 0 && failed >= 0);
	fclose(devnull);

	iq_rules_set_source(&rs, "fuzz.log");
	for (size_t i = 0; i < IQ_ARRAY_LEN(lines); i++)
		for (int k = IQ_KIND_LOG; k <= IQ_KIND_CONFIG; k++)
			match_text(&rs, (enum iq_kind)k, lines[i], strlen(lines[i]));
	match_text(&rs, IQ_KIND_LOG, (const char *)data, size);
	iq_rules_set_source(&rs, NULL);
	/* the one pack loaded: a pattern pack or a shared one */
	const struct iq_pack *p = rs.npacks ? rs.packs[0] : iq_rules_shared_pack(&rs, 0);
	size_t hit = iq_rules_limit_hits(&rs, on_limit, NULL, 1);
	FUZZ_CHECK(hit <= iq_pack_section_count(p, IQ_SEC_SIGNALS) +
			  iq_pack_section_count(p, IQ_SEC_BOUNDARIES) +
			  iq_pack_section_count(p, IQ_SEC_FACTS));
	FUZZ_CHECK(iq_rules_limit_hits(&rs, NULL, NULL, 0) == 0);

	FUZZ_CHECK(iq_pack_is_shared(p) == !rs.npacks);
	FUZZ_CHECK(iq_pack_is_shared(p) || iq_rules_find(&rs, iq_pack_id(p)) == p);
	touch_texts(iq_pack_file(p));
	touch_texts(iq_pack_text(p, "title", "tr"));
	touch_texts(iq_pack_text(p, "definition", "xx"));
	for (size_t i = 0; i < iq_pack_signal_count(p); i++) {
		const struct iq_signal *s = iq_pack_signal(p, i);
		touch_texts(iq_signal_id(s));
		touch_texts(iq_signal_text(s, "title", "en"));
		touch_texts(iq_signal_text(s, "title", "tr"));
	}

	/* the same pack again replaces the first */
	rc = iq_rules_load_text(&rs, "fuzz-again.json", (const char *)data, size, &d);
	FUZZ_CHECK(rc == 0 && rs.npacks + iq_rules_shared_count(&rs) == 1);
	match_text(&rs, IQ_KIND_LOG, lines[0], strlen(lines[0]));
	iq_rules_release(&rs);
	return 0;
}
