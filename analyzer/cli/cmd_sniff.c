/* cmd_sniff.c: `inquest sniff FILE...`: the format of each file, or of
 * each member of an archive, and why, one line each:
 * PATH<TAB>FORMAT<TAB>REASON, PATH as given ("logs/a/messages",
 * "b.tgz!var/log/messages"). FORMAT is "unknown" when none matched. */
#include <string.h>

#include "../bundle/bundle.h"
#include "../parse/parse.h"
#include "cli.h"

static void problem(const char *path, const char *msg, int kind, void *u)
{
	IQ_UNUSED(u);
	IQ_UNUSED(kind);
	char esc[1024], emsg[1024];
	iq_escape_display(esc, sizeof esc, path, strlen(path));
	/* the message may quote the bundle too (a link's target) */
	iq_escape_display(emsg, sizeof emsg, msg, strlen(msg));
	iq_warnf("%s: %s", esc, emsg);
}

static int on_member(struct iq_member *m, void *u)
{
	IQ_UNUSED(u);
	static char head[IQ_HEAD_BYTES];
	size_t n = 0;
	struct iq_diag d = {{0}};
	while (n < sizeof head) {
		ssize_t got = iq_member_read(m, head + n, sizeof head - n, &d);
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	char why[256], esc[2048], wesc[512];
	const struct iq_format *f = iq_sniff(m->path, head, n, why, sizeof why);
	iq_escape_display(esc, sizeof esc, m->path, strlen(m->path));
	iq_escape_display(wesc, sizeof wesc, why, strlen(why));
	printf("%s\t%s\t%s\n", esc, f ? f->name : "unknown", wesc);
	return 0;
}

int iq_cmd_sniff(const struct iq_args *a)
{
	int status = IQ_EXIT_OK;
	char **argv = a->pos;
	for (int i = 0; i < a->npos; i++) {
		struct iq_diag d = {{0}};
		struct iq_walk_opts o = {.problem = problem, .path_as_given = 1};
		int rc = iq_bundle_walk(argv[i], &o, on_member, &d);
		if (rc) {
			iq_errorf("%s", d.msg);
			status = IQ_EXIT_INPUT;
		}
	}
	return status;
}
