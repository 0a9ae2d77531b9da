/* main.c: argv to the command table; nothing else lives here. */
#include "cli/cli.h"

int main(int argc, char **argv)
{
	return iq_cli_main(argc, argv);
}
