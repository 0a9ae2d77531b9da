/* cli.h: the subcommands, each in its own file (cmd_<verb>.c), the command
 * table they are listed in (commands.c), the option parser and help made
 * from that table (opts.c), and the small helpers they share. Only this
 * folder and main.c may exit(). */
#ifndef IQ_CLI_H
#define IQ_CLI_H

#include <stdio.h>

#include "../core/iq.h"

/* Exit statuses (the contract in README.md; the table in commands.c says
 * each in words for help, the man page and the README). */
enum {
	IQ_EXIT_OK = 0,
	IQ_EXIT_VERDICT = 1,
	IQ_EXIT_USAGE = 2,
	IQ_EXIT_INPUT = 3,
	IQ_EXIT_RULES = 4,
	IQ_EXIT_INCOMPLETE = 5, /* done, but the bundle could not be read whole */
	IQ_EXIT_INTERNAL = 70,
	IQ_EXIT_INTERRUPTED = 130, /* SIGINT or SIGTERM: 128 + SIGINT, as shells do */
};

/* ---- the command table ---- */

/* Option flags. */
enum {
	IQ_OPT_MANY = 1,     /* may be given more than once; every value is kept */
	IQ_OPT_REQUIRED = 2, /* the command cannot run without it */
	IQ_OPT_FILE = 4,     /* the value is a file (for completion) */
	IQ_OPT_DIR = 8,      /* the value is a directory (for completion) */
};

/* One option of a command. The parser, --help, the man page, the README
 * and the shell completions are all made from these rows. */
struct iq_opt {
	const char *name;    /* the spelling the synopsis shows: "--since", "-o" */
	const char *alias;   /* the other spelling ("--out", "-q"), or NULL */
	const char *arg;     /* the value's name ("T", "DIR"); NULL: a flag, or choices */
	const char *choices; /* "en|tr": the only values taken, or NULL for any */
	unsigned flags;      /* IQ_OPT_* */
	const char *help;    /* what it does: prose, '\n' between paragraphs */
};

/* How a command's positional arguments complete. */
enum { IQ_ARGS_FILES = 0, IQ_ARGS_NONE, IQ_ARGS_COMMANDS, IQ_ARGS_CHOICES };

struct iq_args;

/* One row of the command table (commands.c). Adding a command is adding a
 * row, its option list and its run function. */
struct iq_command {
	const char *name;         /* "analyze"; a verb of a group: "rules match" */
	int (*run)(const struct iq_args *a); /* NULL: a group of verbs */
	const char *args;         /* the positionals in the synopsis: "BUNDLE..." */
	int min_args, max_args;   /* how many it takes; max -1: any number */
	int complete;             /* IQ_ARGS_*: how its positionals complete */
	const char *arg_choices;  /* "bash|zsh": the only positionals taken, or NULL */
	const struct iq_opt *const *opts; /* NULL-terminated */
	const char *summary;      /* one line, for `inquest help` */
	const char *help;         /* what it does: prose, '\n' between paragraphs */
};

/* The table, in the order help lists it; n rows. */
const struct iq_command *iq_commands(size_t *n);
/* The command named by argv[0] (and argv[1] for a verb of a group); *used
 * is how many words named it. NULL when none does. */
const struct iq_command *iq_command_lookup(int argc, char **argv, int *used);
const struct iq_command *iq_command_find(const char *name);

/* The exit statuses in words, for help, the man page and the README. */
struct iq_exit_row {
	int code;
	const char *what;
};
const struct iq_exit_row *iq_exit_rows(size_t *n);

/* Runs inquest on its command line (main.c's whole job); the exit status. */
int iq_cli_main(int argc, char **argv);

/* ---- the parsed command line (opts.c) ---- */

struct iq_argval {
	const char **v;   /* the values given, in order (borrowed from argv) */
	int n;
};

struct iq_args {
	const struct iq_command *cmd;
	char **pos;       /* positionals, in order (borrowed from argv) */
	int npos;
	struct iq_argval *vals; /* one a row of cmd->opts */
};

#define IQ_ARGS_HELP (-1) /* iq_args_parse printed the help: exit 0 */

/* Parses argv (the words after the command's name) by c's option rows into
 * a: "--opt value", "--opt=value", the alias; choices checked; required
 * options and the number of positionals checked. Returns 0 (release a
 * with iq_args_release), IQ_ARGS_HELP after printing c's help for -h or
 * --help, or IQ_EXIT_USAGE after printing what is wrong (with "did you
 * mean" for an unknown option) and the usage. */
int iq_args_parse(const struct iq_command *c, int argc, char **argv, struct iq_args *a);
void iq_args_release(struct iq_args *a);
/* The last value of option name (its primary spelling, as in the row), ""
 * for a flag given, NULL when not given. Asking for an option the row
 * does not list is a bug: it aborts. */
const char *iq_arg(const struct iq_args *a, const char *name);
int iq_arg_has(const struct iq_args *a, const char *name);
/* Every value of a repeatable option; *n of them. */
const char *const *iq_arg_all(const struct iq_args *a, const char *name, int *n);

/* Prints "inquest: CMD: <what is wrong>", the usage and where the help
 * is, to stderr. The caller returns IQ_EXIT_USAGE. */
void iq_usage_error(const struct iq_command *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The candidate closest to word when it is close enough to be a typo of
 * it, or NULL; NULL candidates are passed over. */
const char *iq_suggest(const char *word, const char *const *cands, size_t n);
/* Whether v is one of choices ("en|tr"). */
int iq_choice_ok(const char *choices, const char *v);

/* ---- help, docs and completion, made from the table ---- */

size_t iq_opt_count(const struct iq_command *c);
const char *iq_opt_metavar(const struct iq_opt *o); /* arg, else choices, else NULL */
void iq_opt_synopsis(const struct iq_opt *o, char *out, size_t cap); /* "[--lang en|tr]" */
void iq_opt_label(const struct iq_opt *o, char *out, size_t cap);    /* "-o, --out DIR" */
/* "inquest CMD ARGS [OPTIONS]" wrapped at width, ending with a newline;
 * it starts at column lead (after "usage: ", 7). */
void iq_synopsis(const struct iq_command *c, FILE *f, int lead, int width);
/* text wrapped at width, lines indented by indent, the first from col. */
void iq_wrap(FILE *f, const char *text, int col, int indent, int width);
/* c's --help: usage, what it does, its options. */
void iq_help_command(const struct iq_command *c, FILE *f);
/* The verbs of group c with their summaries. */
void iq_help_verbs(const struct iq_command *c, FILE *f);

int iq_cmd_analyze(const struct iq_args *a);
int iq_cmd_ingest(const struct iq_args *a);
int iq_cmd_query(const struct iq_args *a);
int iq_cmd_report(const struct iq_args *a);
int iq_cmd_sniff(const struct iq_args *a);
int iq_cmd_timeline(const struct iq_args *a);
int iq_cmd_detect(const struct iq_args *a);
int iq_cmd_parse(const struct iq_args *a);
int iq_cmd_rules_list(const struct iq_args *a);
int iq_cmd_rules_lint(const struct iq_args *a);
int iq_cmd_rules_test(const struct iq_args *a);
int iq_cmd_rules_explain(const struct iq_args *a);
int iq_cmd_rules_match(const struct iq_args *a);
int iq_cmd_help(const struct iq_args *a);
int iq_cmd_completion(const struct iq_args *a);
int iq_cmd_show(const struct iq_args *a);

/* `inquest --version`: the version, the commit it was built from, the
 * packs built in and the libraries' versions. */
int iq_print_version(void);
/* The man page's generated part and the README's (inquest help --man,
 * --markdown; docs.c). */
void iq_docs_man(FILE *f);
void iq_docs_markdown(FILE *f);

struct iq_ruleset;
/* Loads the shipped packs and the --rules paths after running the pack
 * lint on those (errors and warnings to stderr as `rules lint` prints
 * them): 0, or IQ_EXIT_RULES when the lint or the load found an error.
 * analyze, ingest and detect refuse a pack that rules lint rejects. */
int iq_rules_load_checked(struct iq_ruleset *rs, const char *const *paths, int npaths);

/* The progress line of ingest and analyze (progress.c): on stderr, only
 * when it is a terminal and not --quiet; redrawn in place. */
struct iq_progress {
	int on;         /* drawing at all */
	double t0;      /* when the run began */
	double last;    /* when the line was last drawn */
	int64_t total;  /* bytes of the bundle being read, -1 unknown */
	size_t shown;   /* characters on the line now, 0: none */
};
void iq_progress_init(struct iq_progress *p, int quiet);
/* Redraws the line (at most five times a second unless force): bytes
 * read of p->total, files, records, seconds. p may be NULL. */
void iq_progress_tick(struct iq_progress *p, int64_t bytes, long files, long records, int force);
/* Shows what the run is doing now ("detecting"). */
void iq_progress_note(struct iq_progress *p, const char *what);
/* Wipes the line, before other output or at the end. */
void iq_progress_clear(struct iq_progress *p);

/* Makes folder dir and its parents as needed (paths.c). 0, IQ_ERR_USAGE
 * when a file stands where a folder is needed ("'x' is a file, not a
 * folder"), or IQ_ERR_INPUT; d->msg says which path. */
int iq_make_dirs(const char *dir, struct iq_diag *d);
/* The same for the folder a file is to be written in; IQ_ERR_USAGE also
 * when file itself is a folder. */
int iq_make_parent(const char *file, struct iq_diag *d);

/* iq_make_dirs / iq_make_parent for the value of option opt, which takes
 * what ("the folder to write ... into"); prints what is wrong. 0, or the
 * exit status (IQ_EXIT_USAGE for a file given for a folder). */
int iq_output_dir(const struct iq_args *a, const char *opt, const char *what, const char *dir);
int iq_output_file(const struct iq_args *a, const char *opt, const char *what, const char *file);

/* Maps an iq_err to the exit status. */
int iq_exit_of(int err);

/* Parses a size: digits with an optional unit K, M, G or T (1024-based;
 * "512M", "512MB", "512MiB"). Returns 0 with *out set, or IQ_ERR_USAGE
 * for anything else, 0 and sizes over INT64_MAX included. */
int iq_cli_size(const char *s, int64_t *out);

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
