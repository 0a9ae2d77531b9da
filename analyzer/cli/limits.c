/* limits.c: what `ingest` and `analyze` share about stopping: the byte
 * limits a user sets on the command line (sizes with units), and SIGINT /
 * SIGTERM turned into a flag that the pipeline polls, so that an interrupted
 * run commits what it has and leaves the file it was reading to a rerun. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static volatile sig_atomic_t stop_signal;

int iq_cli_size(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;
	if (!s || *s < '0' || *s > '9')
		return IQ_ERR_USAGE;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return IQ_ERR_USAGE;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	/* "512M", "512MB", "512MiB" and "4096B" mean the same kind of thing */
	if (shift && end[0] == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v == 0 || v > (unsigned long long)INT64_MAX >> shift)
		return IQ_ERR_USAGE;
	*out = (int64_t)(v << shift);
	return 0;
}

static void on_signal(int sig)
{
	stop_signal = sig;
}

void iq_signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* A second Ctrl-C gets the default action and ends the process at
	 * once; the database stays consistent either way. */
	sa.sa_flags = SA_RESETHAND | SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int iq_interrupted(void)
{
	return stop_signal != 0;
}
