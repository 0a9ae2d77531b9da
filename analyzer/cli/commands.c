/* commands.c: the command table, every command's options, the exit
 * statuses in words, and `inquest help`. The parser, --help, the man page,
 * the README's usage section and the shell completions are all made from
 * these rows (opts.c, docs.c, cmd_completion.c); a test keeps the docs
 * equal to them. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* ---- options shared by several commands ---- */

static const struct iq_opt o_db = {
	"--db", NULL, "FILE", NULL, IQ_OPT_REQUIRED | IQ_OPT_FILE,
	"The database: inquest.db, as analyze writes it into its output folder. Opened read-only."};
static const struct iq_opt o_db_ingest = {
	"--db", NULL, "FILE", NULL, IQ_OPT_REQUIRED | IQ_OPT_FILE,
	"The database to fill (its folder is created if missing). A new one is built as FILE.tmp and renamed to FILE once complete, so "
	"a killed first run leaves no half database under the name; an existing one is added to."};
static const struct iq_opt o_db_detect = {
	"--db", NULL, "FILE", NULL, IQ_OPT_REQUIRED | IQ_OPT_FILE,
	"The database ingest filled; the findings are stored into it."};
static const struct iq_opt o_rules = {
	"--rules", NULL, "PATH", NULL, IQ_OPT_MANY | IQ_OPT_FILE,
	"A rule pack (JSON) or a folder of packs, loaded after the shipped ones (a pack whose id is "
	"loaded already replaces it). It is checked as inquest rules lint checks it: a pack with "
	"errors is refused, with the same FILE:LINE:COL messages, and exit 4."};
static const struct iq_opt o_lang = {
	"--lang", NULL, NULL, "en|tr", 0, "The language of the postmortem (default en)."};
static const struct iq_opt o_quiet = {
	"--quiet", "-q", NULL, NULL, 0,
	"No progress line, no summary and no warnings, but those saying that data was lost or cut (a damaged or "
	"truncated archive, a file read only in part, a size limit reached): they are always "
	"printed."};
static const struct iq_opt o_stats = {
	"--stats", NULL, NULL, NULL, 0,
	"Print where the time went, on stderr: CPU seconds of the ingest stages on their threads "
	"(read, parse, match, store) and wall seconds of the rest (index, detect, report)."};
static const struct iq_opt o_jobs = {
	"--jobs", "-j", "N", NULL, 0,
	"Parser threads, 1 to 64 (default: the cores online, at most 16). The walker (archive "
	"reading and decompression), the parsers and the one database writer run at the same "
	"time; the writer takes the files in the order the walker met them, so the database and "
	"every output are the same for any N."};
static const struct iq_opt o_since = {
	"--since", NULL, "T", NULL, 0,
	"Keep only records timed at or after T (RFC 3339 such as 2026-11-30T14:10:00Z, or a "
	"date). Records without a time (configs, pod statuses) are kept. The lines of the records "
	"left out are counted as skipped, with the scope as the reason (the coverage shows them)."};
static const struct iq_opt o_until = {
	"--until", NULL, "T", NULL, 0, "Keep only records timed at or before T; as --since."};
static const struct iq_opt o_namespace = {
	"--namespace", "-n", "NS", NULL, 0,
	"Keep only records attributed to namespace NS, or to none; the others are counted as "
	"skipped lines, with the reason."};
static const struct iq_opt o_node = {
	"--node", NULL, "N", NULL, 0, "Keep only records attributed to node N, or to none."};
static const struct iq_opt o_pod = {
	"--pod", NULL, "P", NULL, 0,
	"Keep only records attributed to pod P, or to none (load-balancer lines are kept)."};
static const struct iq_opt o_tz = {
	"--tz", NULL, "ZONE", NULL, 0,
	"Times written without a zone (nvidia-smi CSV, syslog, klog, serving-engine prefixes) are "
	"in ZONE: UTC, a fixed offset such as +03:00, or a zone name such as Europe/Istanbul (with "
	"its daylight saving rules, from the system zoneinfo). Without --tz, a node's etc/timezone "
	"file or timedatectl output in the bundle gives the zone of that node's zone-less times (a "
	"zone file with no node, that of every node without one of its own; meta rows 'zone NODE' "
	"say which came from where), and the times no zone file covers are taken as UTC. With "
	"--tz, even --tz UTC, the bundle's zone files are not used. The coverage counts these "
	"records (assumed_utc, assumed_zone)."};
static const struct iq_opt o_max_member = {
	"--max-member-bytes", NULL, "N", NULL, 0,
	"Read at most N decompressed bytes of each file (default 8G): a file over it is read up to "
	"the limit and gets status cut, and the rest of the bundle is still read. N takes K, M, G, "
	"T (1024-based)."};
static const struct iq_opt o_max_bundle = {
	"--max-bundle-bytes", NULL, "N", NULL, 0,
	"Read at most N decompressed bytes of the whole bundle (default 64G): the walk stops there. "
	"What a limit cuts off is a warning, a problem in the coverage, and exit 5."};

#define INGEST_OPTS &o_jobs, &o_since, &o_until, &o_namespace, &o_node, &o_pod, &o_tz, \
	&o_max_member, &o_max_bundle, &o_quiet, &o_stats

/* ---- analyze ---- */

static const struct iq_opt o_out_dir = {
	"-o", "--out", "DIR", NULL, IQ_OPT_DIR,
	"Where the outputs go: inquest.db, findings.json, postmortem.md, postmortem.html and charts/ (default "
	"./inquest-<bundle name>/). Created if missing, with its parents; a file there is an "
	"error. Each output is written "
	"under a temporary name and renamed into place, so a second run replaces them whole."};
static const struct iq_opt o_fail_on = {
	"--fail-on", NULL, "[PATTERN=]VERDICT[,...]", NULL, IQ_OPT_MANY,
	"Exit 1 when a pattern reached one of these verdicts: VERDICT for any pattern, "
	"PATTERN=VERDICT for that pattern only (gpu-oom-cascade=confirmed); a comma-separated "
	"list, or the option repeated. The verdicts: confirmed, oom_no_cascade, "
	"ruled_out_host_oom, ruled_out_flood, not_detected, inconclusive (inquest rules explain "
	"PATTERN lists those a pattern can reach). Each pattern that made the exit 1, and the "
	"verdict, is printed on stderr, --quiet or not. An unknown pattern or verdict, or an empty "
	"list, is a usage error. Exit 1 takes precedence over exit 5."};
static const struct iq_opt *const analyze_opts[] = {
	&o_out_dir, &o_rules, &o_lang, &o_fail_on, INGEST_OPTS, NULL};
static const struct iq_opt *const ingest_opts[] = {&o_db_ingest, &o_rules, INGEST_OPTS, NULL};
static const struct iq_opt *const detect_opts[] = {&o_db_detect, &o_rules, NULL};

/* ---- report ---- */

static const struct iq_opt o_format_report = {
	"--format", NULL, NULL, "md|html|json|text", 0,
	"md: the postmortem (the default); html: the same postmortem as one self-contained page "
	"(charts inline, nothing fetched); json: the findings, as findings.json; text: a short "
	"summary for the terminal."};
static const struct iq_opt o_out_file = {
	"-o", "--out", "FILE", NULL, IQ_OPT_FILE,
	"Write to FILE rather than stdout; its folder is created if missing. The Markdown's SVG "
	"charts go to charts/ beside it (on stdout it carries its Mermaid charts only)."};
static const struct iq_opt *const report_opts[] = {&o_db, &o_format_report, &o_lang, &o_out_file,
						    NULL};

/* ---- timeline ---- */

static const struct iq_opt o_tl_since = {
	"--since", NULL, "T", NULL, 0, "Only records at or after T (RFC 3339 or a date)."};
static const struct iq_opt o_tl_until = {
	"--until", NULL, "T", NULL, 0, "Only records at or before T."};
static const struct iq_opt o_tl_namespace = {
	"--namespace", "-n", "NS", NULL, 0, "Only records of namespace NS."};
static const struct iq_opt o_tl_node = {"--node", NULL, "N", NULL, 0, "Only records of node N."};
static const struct iq_opt o_tl_pod = {"--pod", NULL, "P", NULL, 0, "Only records of pod P."};
static const struct iq_opt o_tag = {
	"--tag", NULL, "SIGNAL", NULL, 0,
	"Only records that matched signal SIGNAL. A signal that no pack defines and the database "
	"does not hold is an error (with the closest known one); one that matched nothing here "
	"is said on stderr."};
static const struct iq_opt o_all = {
	"--all", NULL, NULL, NULL, 0,
	"Every record in the window, not only those that matched a signal."};
static const struct iq_opt o_window = {
	"--window", NULL, NULL, "incident", 0,
	"Keep the records inside the incident window of the findings (incident_window in "
	"findings.json): the run's --since/--until when it had them, else from 10 minutes before "
	"the first signal of a pattern that was found to 5 minutes after its last, clipped to the "
	"bundle's records (bounds included). A --since or --until given here replaces that bound."};
static const struct iq_opt o_format_tl = {
	"--format", NULL, NULL, "text|md|json|csv", 0, "How the rows are printed (default text)."};
static const struct iq_opt o_limit = {
	"--limit", NULL, "N", NULL, 0, "At most N records (default 10000)."};
/* ---- show ---- */

static const struct iq_opt o_show_db = {
	"--db", NULL, "FILE", NULL, IQ_OPT_FILE,
	"The database analyze wrote (default inquest.db in the current folder)."};
static const struct iq_opt o_context = {
	"-C", NULL, "N", NULL, 0, "Lines of context before and after the cited line (default 3)."};
static const struct iq_opt o_show_bundle = {
	"--bundle", NULL, "PATH", NULL, IQ_OPT_FILE,
	"Where the bundle is now, when it moved since analyze read it; without it the path the "
	"database names is tried, and the database's own copy of the lines when the bundle is gone."};
static const struct iq_opt o_show_rules = {
	"--rules", NULL, "PATH", NULL, IQ_OPT_MANY | IQ_OPT_FILE,
	"The packs analyze was run with, when it had --rules: E-numbers depend on them."};
static const struct iq_opt *const show_opts[] = {&o_show_db, &o_context, &o_show_bundle, &o_show_rules, NULL};

static const struct iq_opt *const timeline_opts[] = {
	&o_db, &o_tl_since, &o_tl_until, &o_tl_namespace, &o_tl_node, &o_tl_pod, &o_tag, &o_all,
	&o_window, &o_format_tl, &o_limit, NULL};

/* ---- query ---- */

static const struct iq_opt o_db_query = {
	"--db", NULL, "FILE", NULL, IQ_OPT_FILE,
	"The database (inquest.db of an analyze output folder), opened read-only. Needed to run "
	"SQL."};
static const struct iq_opt o_format_query = {
	"--format", NULL, NULL, "table|csv|json", 0,
	"table (the default): a header and one row a line, columns aligned on a terminal and "
	"separated by tabs when piped; csv; json: an array of objects."};
static const struct iq_opt o_schema = {
	"--schema", NULL, NULL, NULL, 0,
	"List the tables and views with their columns, types and what the schema's comments "
	"(schema/001_core.sql) say of them; with a TABLE, only that one. With --db, those of that "
	"database; without, those built into inquest. --format csv or json gives them as rows "
	"(name, kind, type, comment)."};
static const struct iq_opt *const query_opts[] = {&o_db_query, &o_format_query, &o_schema, NULL};

/* ---- parse ---- */

static const struct iq_opt o_parse_format = {
	"--format", NULL, "NAME", NULL, 0,
	"Parse as format NAME (see Formats in the README); default: sniffed from the content, "
	"with the path as a hint."};
static const struct iq_opt o_path = {
	"--path", NULL, "PATH", NULL, 0,
	"The file's path inside a bundle, for sniffing and for the identity the path gives "
	"(node, namespace, pod, container: var/log/pods/NS_POD_UID/CONTAINER/0.log)."};
static const struct iq_opt o_mtime = {
	"--mtime", NULL, "T", NULL, 0,
	"The file's date (RFC 3339 or a date), which bounds the years given to times written without one; "
	"'none' for no date. Without it, the file's own modification time."};
static const struct iq_opt *const parse_opts[] = {&o_parse_format, &o_path, &o_mtime, NULL};

/* ---- rules ---- */

static const struct iq_opt o_pack = {
	"--pack", NULL, "PACK", NULL, IQ_OPT_MANY,
	"Report only the signals of this pack: an id (inquest rules list), or a pack file or folder "
	"to load and use. Repeatable."};
static const struct iq_opt o_explain = {
	"--explain", NULL, NULL, NULL, 0,
	"After each matching line, one line a signal: the pack, the signal and its captures as "
	"JSON."};
static const struct iq_opt *const explain_opts[] = {&o_lang, NULL};
static const struct iq_opt *const match_opts[] = {&o_pack, &o_explain, NULL};

/* ---- help ---- */

static const struct iq_opt o_man = {
	"--man", NULL, NULL, NULL, 0,
	"Print the man page's SYNOPSIS and COMMANDS sections (roff), as docs/inquest.1 holds them."};
static const struct iq_opt o_markdown = {
	"--markdown", NULL, NULL, NULL, 0,
	"Print the README's command reference (Markdown), as README.md holds it."};
static const struct iq_opt *const help_opts[] = {&o_man, &o_markdown, NULL};

static const struct iq_opt *const no_opts[] = {NULL};

/* ---- the table ---- */

static const struct iq_command commands[] = {
	{"analyze", iq_cmd_analyze, "BUNDLE...", 1, -1, IQ_ARGS_FILES, NULL, analyze_opts,
	 "ingest, detect and report in one go",
	 "Read the bundles (a directory, .tar, .tar.gz/.tgz, .zip, .tar.zst, .tar.xz, a single .gz "
	 "file, archives nested in archives, gzip-rotated members such as app.log.1.gz; '-' is stdin, named stdin, streamed when it is "
	 "a pipe) without extracting anything to disk, parse every file into one database, run the "
	 "rule packs, and write inquest.db, findings.json, postmortem.md, postmortem.html and charts/ into DIR. "
	 "Prints each pattern's verdict and where the outputs are.\n"
	 "A bundle cut short or damaged is read as far as it goes: the files before the damage are "
	 "analysed, warnings say what was lost (even with --quiet), the coverage section of the "
	 "postmortem says where the bundle broke, and the exit status is 5. On a terminal a "
	 "progress line on stderr shows the bytes read of the bundle's size, the files, records "
	 "and time; it is never drawn when stderr is not a terminal. SIGINT/SIGTERM stop the run with exit 130 and "
	 "leave the previous outputs in DIR as they were."},
	{"ingest", iq_cmd_ingest, "BUNDLE...", 1, -1, IQ_ARGS_FILES, NULL, ingest_opts,
	 "parse bundles into a database only",
	 "Parse bundles into the database only. A file already in the database is not read again, "
	 "so ingesting the same bundle twice adds no duplicates; a file an interrupted run left "
	 "half-read is read again from the start. A file with the same bytes as one read before, "
	 "and no node, namespace, pod or container that differs (kubelet's "
	 "/var/log/containers/*.log copied by a collector that followed the links), is counted "
	 "once: the copy gets status duplicate, naming the original. The progress line, --quiet "
	 "and exit 5 are those of analyze. SIGINT/SIGTERM commit the "
	 "files read so far and exit 130; a rerun reads the file that was cut and the rest."},
	{"detect", iq_cmd_detect, "", 0, 0, IQ_ARGS_NONE, NULL, detect_opts,
	 "run the rule packs over a database",
	 "Run the rule packs' detectors over a database filled by ingest, store the findings "
	 "(render them with inquest report) and print each pattern's verdict."},
	{"report", iq_cmd_report, "", 0, 0, IQ_ARGS_NONE, NULL, report_opts,
	 "render the postmortem, the findings or a summary again",
	 "Render the postmortem (md, or html as one self-contained page), the findings (json) or a "
	 "short terminal summary (text) again from an existing database, read-only."},
	{"show", iq_cmd_show, "REF", 1, 1, IQ_ARGS_NONE, NULL, show_opts,
	 "print a line the postmortem cites, with its context",
	 "Print the line a postmortem cites with N lines of context, from the bundle (through "
	 "nested archives and .gz members) or, when the bundle is gone, from the database. REF is "
	 "what the postmortem prints: E12 (its evidence table) or PATH:LINE (the path inside the "
	 "bundle, or as the database names it)."},
	{"timeline", iq_cmd_timeline, "", 0, 0, IQ_ARGS_NONE, NULL, timeline_opts,
	 "the merged timeline, filtered",
	 "The merged timeline in time order: the records that matched a signal (every record with "
	 "--all), filtered by time window, namespace, node, pod or signal."},
	{"query", iq_cmd_query, "[SQL | TABLE]", 0, 1, IQ_ARGS_NONE, NULL, query_opts,
	 "read-only SQL over a database",
	 "Run read-only SQL against a database and print the rows. The connection is read-only and "
	 "an authorizer refuses anything but reading; the pragmas that only read are allowed "
	 "(PRAGMA table_info(records), pragma_table_info('records'), index_list, table_list). "
	 "--schema [TABLE] describes the tables and views instead."},
	{"sniff", iq_cmd_sniff, "FILE...", 1, -1, IQ_ARGS_FILES, NULL, no_opts,
	 "which format each file is, and why",
	 "Say which format each file, or each member of an archive, is, and why: "
	 "PATH<TAB>FORMAT<TAB>REASON, PATH as given (an archive's members as "
	 "bundle.tgz!var/log/messages). The format is read from the content; the name is only a "
	 "hint, so a log renamed to x.txt is still recognised."},
	{"parse", iq_cmd_parse, "FILE", 1, 1, IQ_ARGS_FILES, NULL, parse_opts,
	 "the records a format makes of a file",
	 "Print the records one format makes of a file ('-' is stdin; a gzip, zstd, xz or bzip2 file is "
	 "read decompressed, as analyze reads it), one JSON object a line, and on stderr the line "
	 "accounting (for rule authors and the parser table tests)."},
	{"rules", NULL, "list|lint|test|explain|match ...", 1, -1, IQ_ARGS_NONE, NULL, no_opts,
	 "the rule packs: list, lint, test, explain, match",
	 "The rule packs. PACK is a pack file or a folder of packs (rules/README.md); without one "
	 "the packs built into the binary are used."},
	{"rules list", iq_cmd_rules_list, "[PACK...]", 0, -1, IQ_ARGS_FILES, NULL, no_opts,
	 "the packs and their signals", "List the packs and their signals, boundaries and facts."},
	{"rules lint", iq_cmd_rules_lint, "[PACK...]", 0, -1, IQ_ARGS_FILES, NULL, no_opts,
	 "check packs",
	 "Check packs: JSON, regexes, keys, ids, references, translations, question SQL. Errors "
	 "and warnings as FILE:LINE:COL with the line and a caret; exit 4 when there is an error. "
	 "analyze, ingest and detect run the same check on their --rules packs."},
	{"rules test", iq_cmd_rules_test, "[PACK...]", 0, -1, IQ_ARGS_FILES, NULL, no_opts,
	 "run the packs' own test cases",
	 "Run every test case the packs carry (lines that must match, with the captures expected, "
	 "and lines that must not); prints 'rules: N passed, N failed' and exits 4 on a failure."},
	{"rules explain", iq_cmd_rules_explain, "PACK [ID]", 1, 2, IQ_ARGS_FILES, NULL, explain_opts,
	 "what a pack or one of its items does, in words",
	 "Say what a pack, or one of its signals, conditions, questions or guidance items, does, in "
	 "words: its regexes and captures, its detector and parameters, the verdict rules."},
	{"rules match", iq_cmd_rules_match, "FILE...", 1, -1, IQ_ARGS_FILES, NULL, match_opts,
	 "grep with the packs",
	 "Grep with the packs: FILE:LINE<TAB>signals<TAB>text for each line that matches a signal. "
	 "A FILE may be a plain file, '-' (stdin), a directory or an archive as analyze reads them "
	 "(members are named FILE!member, compressed members are decompressed); lines are matched "
	 "as text, the way grep or zgrep would. Exit status as grep's: 0 when a line matched, 1 "
	 "when none did, 2 on an error, such as a file that cannot be read or an archive cut short "
	 "(4 for a pack with errors)."},
	{"help", iq_cmd_help, "[COMMAND...]", 0, 2, IQ_ARGS_COMMANDS, NULL, help_opts,
	 "this help, or a command's",
	 "Show the commands, or one command's help (as inquest COMMAND --help does)."},
	{"completion", iq_cmd_completion, "bash|zsh", 1, 1, IQ_ARGS_CHOICES, "bash|zsh", no_opts,
	 "a shell completion script",
	 "Print a completion script for bash or zsh, made from the same tables as this help. Load "
	 "it with: source <(inquest completion bash), or for zsh save it as _inquest in a folder "
	 "of $fpath."},
};

static const struct iq_exit_row exits[] = {
	{IQ_EXIT_OK, "the command did its job, whatever the verdict"},
	{IQ_EXIT_VERDICT, "--fail-on was given and a pattern reached one of those verdicts (stderr "
			  "names the pattern and the verdict); for rules match, as grep's 1, no line "
			  "matched"},
	{IQ_EXIT_USAGE, "usage error (stderr says what is wrong); for rules match, as grep's 2, also "
			"an input that could not be read whole"},
	{IQ_EXIT_INPUT, "an input could not be read at all (missing path, unreadable bundle or "
			"database)"},
	{IQ_EXIT_RULES, "a rule pack has errors"},
	{IQ_EXIT_INCOMPLETE, "analyze or ingest did their job, but the bundle could not be read "
			     "whole: an archive or a file is damaged or cut short, or a size limit "
			     "was reached (the warnings, which --quiet does not silence, and the "
			     "coverage say what was lost); --fail-on's exit 1 takes precedence"},
	{IQ_EXIT_INTERNAL, "internal error"},
	{IQ_EXIT_INTERRUPTED, "interrupted (SIGINT, SIGTERM); rerun to finish"},
};

const struct iq_command *iq_commands(size_t *n)
{
	*n = IQ_ARRAY_LEN(commands);
	return commands;
}

const struct iq_exit_row *iq_exit_rows(size_t *n)
{
	*n = IQ_ARRAY_LEN(exits);
	return exits;
}

const struct iq_command *iq_command_find(const char *name)
{
	for (size_t i = 0; i < IQ_ARRAY_LEN(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* The verb of group g named v ("rules" + "match"), or NULL. */
static const struct iq_command *verb_of(const struct iq_command *g, const char *v)
{
	size_t gl = strlen(g->name);
	for (size_t i = 0; i < IQ_ARRAY_LEN(commands); i++)
		if (strncmp(commands[i].name, g->name, gl) == 0 && commands[i].name[gl] == ' ' &&
		    strcmp(commands[i].name + gl + 1, v) == 0)
			return &commands[i];
	return NULL;
}

const struct iq_command *iq_command_lookup(int argc, char **argv, int *used)
{
	const struct iq_command *c = argc > 0 ? iq_command_find(argv[0]) : NULL;
	*used = 1;
	if (c && !c->run && argc > 1) {
		const struct iq_command *v = verb_of(c, argv[1]);
		if (v) {
			*used = 2;
			return v;
		}
	}
	return c;
}

void iq_help_verbs(const struct iq_command *g, FILE *f)
{
	size_t gl = strlen(g->name);
	for (size_t i = 0; i < IQ_ARRAY_LEN(commands); i++)
		if (strncmp(commands[i].name, g->name, gl) == 0 && commands[i].name[gl] == ' ')
			fprintf(f, "  %-22s %s\n", commands[i].name, commands[i].summary);
}

/* The names a mistyped word may have meant: top-level commands, or the
 * verbs of group g. */
static const char *suggest_command(const char *word, const struct iq_command *g)
{
	const char *names[IQ_ARRAY_LEN(commands)];
	size_t n = 0, gl = g ? strlen(g->name) : 0;
	for (size_t i = 0; i < IQ_ARRAY_LEN(commands); i++) {
		const char *nm = commands[i].name;
		if (g && strncmp(nm, g->name, gl) == 0 && nm[gl] == ' ')
			names[n++] = nm + gl + 1;
		else if (!g && !strchr(nm, ' '))
			names[n++] = nm;
	}
	return iq_suggest(word, names, n);
}

static void help_overview(FILE *f)
{
	fprintf(f, "inquest %s: explain an outage of a GPU inference cluster from its incident "
		   "bundle\n\nusage: inquest COMMAND [ARGS] [OPTIONS]\n\ncommands:\n", IQ_VERSION);
	for (size_t i = 0; i < IQ_ARRAY_LEN(commands); i++)
		if (!strchr(commands[i].name, ' '))
			fprintf(f, "  %-22s %s\n", commands[i].name, commands[i].summary);
		else
			fprintf(f, "    %-20s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'inquest COMMAND --help' or 'inquest help COMMAND' shows a command's options;\n"
		   "'inquest --version' the version, the packs and the libraries.\n\nexit status:\n");
	for (size_t i = 0; i < IQ_ARRAY_LEN(exits); i++) {
		fprintf(f, "  %-4d", exits[i].code);
		iq_wrap(f, exits[i].what, 6, 6, 79);
	}
}

int iq_cmd_help(const struct iq_args *a)
{
	if (iq_arg_has(a, "--man")) {
		iq_docs_man(stdout);
		return IQ_EXIT_OK;
	}
	if (iq_arg_has(a, "--markdown")) {
		iq_docs_markdown(stdout);
		return IQ_EXIT_OK;
	}
	if (a->npos == 0) {
		help_overview(stdout);
		return IQ_EXIT_OK;
	}
	int used;
	const struct iq_command *c = iq_command_lookup(a->npos, a->pos, &used);
	if (!c || used < a->npos) {
		const char *word = c ? a->pos[1] : a->pos[0];
		const char *sug = suggest_command(word, c);
		iq_usage_error(a->cmd, "no command '%s%s%s'%s%s%s", c ? c->name : "", c ? " " : "", word,
			       sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
		return IQ_EXIT_USAGE;
	}
	iq_help_command(c, stdout);
	return IQ_EXIT_OK;
}

int iq_exit_of(int err)
{
	switch (err) {
	case IQ_OK: return IQ_EXIT_OK;
	case IQ_ERR_USAGE: return IQ_EXIT_USAGE;
	case IQ_ERR_INPUT: return IQ_EXIT_INPUT;
	case IQ_ERR_RULES: return IQ_EXIT_RULES;
	default: return IQ_EXIT_INTERNAL;
	}
}

int iq_cli_main(int argc, char **argv)
{
	if (argc < 2) {
		iq_errorf("needs a command; the commands:");
		help_overview(stderr);
		return IQ_EXIT_USAGE;
	}
	const char *first = argv[1];
	if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0 ||
	    strcmp(first, "version") == 0)
		return iq_print_version();
	if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
		help_overview(stdout);
		return IQ_EXIT_OK;
	}
	int used;
	const struct iq_command *c = iq_command_lookup(argc - 1, argv + 1, &used);
	if (!c) {
		const char *sug = first[0] == '-' ? NULL : suggest_command(first, NULL);
		iq_errorf("%s '%s'%s%s%s (see 'inquest help')", first[0] == '-' ? "unknown option"
			  : "unknown command", first, sug ? "; did you mean '" : "", sug ? sug : "",
			  sug ? "'?" : "");
		return IQ_EXIT_USAGE;
	}
	if (!c->run) {
		/* a group named without one of its verbs */
		const char *v = used < argc - 1 ? argv[1 + used] : NULL;
		if (v && (strcmp(v, "-h") == 0 || strcmp(v, "--help") == 0)) {
			iq_help_command(c, stdout);
			return IQ_EXIT_OK;
		}
		const char *sug = v ? suggest_command(v, c) : NULL;
		if (v)
			iq_usage_error(c, "no verb '%s'%s%s%s", v, sug ? "; did you mean '" : "",
				       sug ? sug : "", sug ? "'?" : "");
		else
			iq_usage_error(c, "needs a verb: %s", c->args);
		return IQ_EXIT_USAGE;
	}
	struct iq_args a;
	int rc = iq_args_parse(c, argc - 1 - used, argv + 1 + used, &a);
	if (rc)
		return rc == IQ_ARGS_HELP ? IQ_EXIT_OK : rc;
	rc = c->run(&a);
	iq_args_release(&a);
	return rc;
}
