/* paths.c: where the commands write: folders made as needed, with their
 * parents, and a clear error when a file stands where a folder is needed
 * (or a folder where a file is), rather than an error opening something
 * inside it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

int iq_make_dirs(const char *dir, struct iq_diag *d)
{
	char *p = iq_xstrdup(dir);
	size_t n = strlen(p);
	int rc = 0;
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	/* each prefix ending before a '/', then the whole */
	for (size_t i = 1; i <= n && !rc; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		char c = p[i];
		p[i] = '\0';
		struct stat st;
		if (stat(p, &st) == 0) {
			if (!S_ISDIR(st.st_mode))
				rc = iq_diag_set(d, IQ_ERR_USAGE, "'%s' is a file, not a folder", p);
		} else if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			rc = iq_diag_set(d, IQ_ERR_INPUT, "cannot create the folder '%s': %s", p, strerror(errno));
		}
		p[i] = c;
	}
	free(p);
	return rc;
}

int iq_make_parent(const char *file, struct iq_diag *d)
{
	struct stat st;
	if (stat(file, &st) == 0 && S_ISDIR(st.st_mode))
		return iq_diag_set(d, IQ_ERR_USAGE, "'%s' is a folder, not a file", file);
	const char *slash = strrchr(file, '/');
	if (!slash || slash == file)
		return 0;
	char *dir = iq_xstrndup(file, (size_t)(slash - file));
	int rc = iq_make_dirs(dir, d);
	free(dir);
	return rc;
}

/* Says what make_dirs or make_parent found, as a usage error when the
 * user gave a file for a folder (or the reverse); the exit status. */
static int said(const struct iq_args *a, int rc, const char *opt, const char *what,
		const struct iq_diag *d)
{
	if (rc == IQ_ERR_USAGE) {
		iq_usage_error(a->cmd, "%s takes %s: %s", opt, what, d->msg);
		return IQ_EXIT_USAGE;
	}
	iq_errorf("%s", d->msg);
	return IQ_EXIT_INPUT;
}

int iq_output_dir(const struct iq_args *a, const char *opt, const char *what, const char *dir)
{
	struct iq_diag d = {{0}};
	int rc = iq_make_dirs(dir, &d);
	return rc ? said(a, rc, opt, what, &d) : 0;
}

int iq_output_file(const struct iq_args *a, const char *opt, const char *what, const char *file)
{
	struct iq_diag d = {{0}};
	int rc = iq_make_parent(file, &d);
	return rc ? said(a, rc, opt, what, &d) : 0;
}
