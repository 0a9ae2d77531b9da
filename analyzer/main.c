/* main.c: argv to the command table; nothing else lives here. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		iq_cmd_help(0, NULL);
		return IQ_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("inquest %s\n", IQ_VERSION);
		return IQ_EXIT_OK;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return iq_cmd_help(argc - 1, argv + 1);
	const struct iq_command *c = iq_command_find(argv[1]);
	if (!c) {
		iq_errorf("unknown command '%s'; see 'inquest help'", argv[1]);
		return IQ_EXIT_USAGE;
	}
	return c->run(argc - 1, argv + 1);
}
