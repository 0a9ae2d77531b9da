/* collect.c: the binary the end-to-end suites run in place of inquest
 * (tests/e2e/run.sh): it runs $IQ_REAL_BIN with the same arguments, and
 * after an `analyze -o DIR` copies the findings.json it wrote into
 * $IQ_COLLECT, so that run.sh checks every findings.json the suites made
 * against schema/findings.schema.json. Any other command is exec'd as it
 * is (same pid, same signals); for analyze, SIGINT and SIGTERM are passed
 * on to it and its exit status is returned. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile pid_t child;

static void pass_on(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static int copy(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb");
	if (!in)
		return -1;
	FILE *out = fopen(to, "wb");
	if (!out) {
		fclose(in);
		return -1;
	}
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	return fclose(out);
}

int main(int argc, char **argv)
{
	const char *real = getenv("IQ_REAL_BIN");
	if (!real || !*real) {
		fprintf(stderr, "collect: IQ_REAL_BIN is not set\n");
		return 2;
	}
	const char *dir = getenv("IQ_COLLECT");
	if (argc < 2 || strcmp(argv[1], "analyze") != 0 || !dir || !*dir) {
		execv(real, argv);
		fprintf(stderr, "collect: cannot run %s: %s\n", real, strerror(errno));
		return 127;
	}
	const char *out = NULL;
	for (int i = 2; i + 1 < argc; i++)
		if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--out") == 0)
			out = argv[i + 1];
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = pass_on;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	child = fork();
	if (child < 0)
		return 70;
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execv(real, argv);
		_exit(127);
	}
	int st;
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return 70;
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (out) {
		char from[4096], to[4096];
		snprintf(from, sizeof from, "%s/findings.json", out);
		snprintf(to, sizeof to, "%s/%ld-%ld.json", dir, (long)getpid(), (long)time(NULL));
		if (access(from, R_OK) == 0)
			copy(from, to);
	}
	return rc;
}
