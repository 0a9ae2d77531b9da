/* cli.h: the subcommands, each in its own file (cmd_<verb>.c), and the
 * small helpers they share. Only this folder and main.c may exit(). */
#ifndef IQ_CLI_H
#define IQ_CLI_H

#include "../core/iq.h"

/* Exit statuses (the contract in README.md). */
enum {
	IQ_EXIT_OK = 0,
	IQ_EXIT_VERDICT = 1,
	IQ_EXIT_USAGE = 2,
	IQ_EXIT_INPUT = 3,
	IQ_EXIT_RULES = 4,
	IQ_EXIT_INTERNAL = 70,
};

struct iq_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis;
	const char *help;
};

int iq_cmd_analyze(int argc, char **argv);
int iq_cmd_ingest(int argc, char **argv);
int iq_cmd_query(int argc, char **argv);
int iq_cmd_report(int argc, char **argv);
int iq_cmd_sniff(int argc, char **argv);
int iq_cmd_parse(int argc, char **argv);
int iq_cmd_rules(int argc, char **argv);
int iq_cmd_help(int argc, char **argv);

const struct iq_command *iq_command_find(const char *name);
void iq_usage_of(const char *cmd);

/* Maps an iq_err to the exit status. */
int iq_exit_of(int err);

#endif
