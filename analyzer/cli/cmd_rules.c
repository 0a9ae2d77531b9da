/* cmd_rules.c: `inquest rules list|test [PACK...]`: the rule packs and
 * their own test cases. Without PACK arguments the packs shipped inside
 * the binary are used. */
#include <stdio.h>
#include <string.h>

#include "../rules/rules.h"
#include "cli.h"

/* Loads the shipped packs, or only the given files/directories. */
static int load(struct iq_ruleset *rs, int argc, char **argv)
{
	struct iq_diag d = {{0}};
	int rc = 0;
	if (argc == 0)
		rc = iq_rules_load_builtin(rs, &d);
	for (int i = 0; i < argc && rc == 0; i++)
		rc = iq_rules_load_path(rs, argv[i], &d);
	if (rc) {
		fprintf(stderr, "%s\n", d.msg);
		return IQ_EXIT_RULES;
	}
	return 0;
}

int iq_cmd_rules(int argc, char **argv)
{
	if (argc < 2) {
		iq_usage_of("rules");
		return IQ_EXIT_USAGE;
	}
	const char *verb = argv[1];
	struct iq_ruleset rs;
	iq_rules_init(&rs);
	int rc;
	if (strcmp(verb, "list") == 0) {
		rc = load(&rs, argc - 2, argv + 2);
		for (size_t i = 0; rc == 0 && i < rs.npacks; i++) {
			const struct iq_pack *p = rs.packs[i];
			printf("%s\t%s\t%s\n", iq_pack_id(p), iq_pack_file(p), iq_pack_text(p, "title", "en"));
			for (size_t j = 0; j < iq_pack_signal_count(p); j++) {
				const struct iq_signal *s = iq_pack_signal(p, j);
				printf("  %s\t%s\n", iq_signal_id(s), iq_signal_text(s, "title", "en"));
			}
		}
	} else if (strcmp(verb, "test") == 0) {
		rc = load(&rs, argc - 2, argv + 2);
		if (rc == 0) {
			long passed = 0, failed = 0;
			iq_rules_test(&rs, stdout, &passed, &failed);
			printf("rules: %ld passed, %ld failed\n", passed, failed);
			rc = failed ? IQ_EXIT_RULES : IQ_EXIT_OK;
		}
	} else {
		iq_errorf("unknown 'rules' verb '%s' (list, test)", verb);
		rc = IQ_EXIT_USAGE;
	}
	iq_rules_release(&rs);
	return rc;
}
