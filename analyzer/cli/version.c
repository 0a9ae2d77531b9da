/* version.c: `inquest --version`: what a bug report needs to say which
 * inquest it was: the version, the commit it was built from (baked in by
 * the Makefile from git describe), the rule packs built in, and the
 * versions of the libraries it runs with. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <archive.h>
#include <isa-l.h>
#include <jansson.h>
#include <pcre2.h>
#include <sqlite3.h>
#include <yaml.h>

#include "../rules/rules.h"
#include "cli.h"

/* $(O)/build_info.c, written by the Makefile: "" when the tree was not a
 * git checkout (a source tarball). */
extern const char iq_build_commit[];

static void pack_line(const struct iq_pack *p, int *first)
{
	const char *v = iq_pack_version(p);
	printf("%s%s%s%s", *first ? "" : ", ", iq_pack_id(p), *v ? " " : "", v);
	*first = 0;
}

int iq_print_version(void)
{
	printf("inquest %s (%s%s)\n", IQ_VERSION, iq_build_commit[0] ? "commit " : "commit unknown: not built from a git checkout",
	       iq_build_commit);
	struct iq_ruleset rs;
	struct iq_diag d = {{0}};
	iq_rules_init(&rs);
	if (iq_rules_load_builtin(&rs, &d) == 0) {
		int first = 1;
		printf("rule packs: ");
		for (size_t i = 0; i < rs.nshared; i++)
			pack_line(rs.shared[i], &first);
		for (size_t i = 0; i < rs.npacks; i++)
			pack_line(rs.packs[i], &first);
		printf("\n");
	} else {
		printf("rule packs: cannot load the built-in packs: %s\n", d.msg);
	}
	iq_rules_release(&rs);
	char pcre[64] = "?";
	pcre2_config(PCRE2_CONFIG_VERSION, pcre);
	printf("SQLite %s, PCRE2 %s, %s, jansson %s, libyaml %s, ISA-L %d.%d.%d\n",
	       sqlite3_libversion(), pcre, archive_version_details(), jansson_version_str(),
	       yaml_get_version_string(), ISAL_MAJOR_VERSION, ISAL_MINOR_VERSION, ISAL_PATCH_VERSION);
	return IQ_EXIT_OK;
}
