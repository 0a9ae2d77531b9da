/* cmd_detect.c: `inquest detect --db FILE [--rules PATH]...`: runs the
 * rule packs' detectors over a database that `inquest ingest` filled and
 * stores the findings (then `inquest report` renders them). */
#include <string.h>

#include "../detect/detect.h"
#include "cli.h"
#include "pipeline.h"

int iq_cmd_detect(const struct iq_args *a)
{
	const char *db = iq_arg(a, "--db");
	int nr;
	const char *const *rules = iq_arg_all(a, "--rules", &nr);
	struct iq_ruleset rs;
	iq_rules_init(&rs);
	int rc = iq_rules_load_checked(&rs, rules, nr);
	if (rc) {
		iq_rules_release(&rs);
		return rc;
	}
	struct iq_store *s;
	struct iq_diag d = {{0}};
	if (iq_store_open(db, 0, &s, &d)) {
		iq_errorf("%s", d.msg);
		iq_rules_release(&rs);
		return IQ_EXIT_INPUT;
	}
	rc = iq_detect(s, &rs, &d);
	if (rc)
		iq_errorf("%s", d.msg);
	else {
		sqlite3_stmt *q;
		if (sqlite3_prepare_v2(iq_store_db(s), "SELECT pack, verdict FROM findings ORDER BY pack", -1, &q,
				       NULL) == SQLITE_OK) {
			while (sqlite3_step(q) == SQLITE_ROW)
				printf("%s: %s\n", sqlite3_column_text(q, 0), sqlite3_column_text(q, 1));
			sqlite3_finalize(q);
		}
	}
	iq_store_close(s);
	iq_rules_release(&rs);
	return rc ? iq_exit_of(rc) : IQ_EXIT_OK;
}
