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
	IQ_EXIT_INTERRUPTED = 130, /* SIGINT or SIGTERM: 128 + SIGINT, as shells do */
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
int iq_cmd_timeline(int argc, char **argv);
int iq_cmd_detect(int argc, char **argv);
int iq_cmd_parse(int argc, char **argv);
int iq_cmd_rules(int argc, char **argv);
int iq_cmd_show(int argc, char **argv);
int iq_cmd_help(int argc, char **argv);

const struct iq_command *iq_command_find(const char *name);
void iq_usage_of(const char *cmd);

/* Maps an iq_err to the exit status. */
int iq_exit_of(int err);

/* Parses a size: digits with an optional unit K, M, G or T (1024-based;
 * "512M", "512MB", "512MiB"). Returns 0 with *out set, or IQ_ERR_USAGE
 * for anything else, 0 and sizes over INT64_MAX included. */
int iq_cli_size(const char *s, int64_t *out);

/* iq_cli_size for the value val of option opt of command cmd; prints
 * the usage error itself. Returns 0 or IQ_ERR_USAGE. */
int iq_size_option(const char *cmd, const char *opt, const char *val, int64_t *out);

/* Catches SIGINT and SIGTERM into a flag (a second one kills as usual);
 * iq_interrupted() says whether one came. The pipeline polls it between
 * members and while reading one. */
void iq_signals_install(void);

struct iq_stage_times;
/* Seconds on the monotonic clock. */
double iq_wall_seconds(void);
/* Prints the --stats breakdown to stderr. */
void iq_print_stage_times(const struct iq_stage_times *t, double total_wall_s);
int iq_interrupted(void);

#endif
