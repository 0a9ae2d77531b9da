/* commands.c: the command table and `inquest help`. help lists only
 * commands that work. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct iq_command commands[] = {
	{"analyze", iq_cmd_analyze,
	 "analyze BUNDLE... [-o DIR] [--rules PATH]... [--lang en|tr] [--jobs N] [--quiet]"
	 " [--fail-on VERDICT[,VERDICT]] [--since T] [--until T] [--namespace NS] [--node N] [--tz ZONE]"
	 " [--pod P] [--max-member-bytes N] [--max-bundle-bytes N] [--stats]",
	 "Ingest the bundle, run the rule packs and write inquest.db, findings.json\n"
	 "and postmortem.md into DIR (default ./inquest-<bundle name>/).\n"
	 "--jobs N: parser threads (default: the cores); the results are the same\n"
	 "for any N. --since/--until T (RFC 3339 or a date), --namespace, --node,\n"
	 "--pod: keep only records of that window / attributed to that name (or\n"
	 "to none); the others are counted as skipped lines with the reason.\n"
	 "--tz ZONE: times written without a zone are in ZONE (UTC, +03:00,\n"
	 "Europe/Istanbul), not UTC.\n"
	 "--stats: CPU and wall seconds per stage (read, parse, match, store,\n"
	 "index, detect, report) on stderr.\n"
	 "--max-member-bytes N: read at most N decompressed bytes of each file\n"
	 "(default 8G); --max-bundle-bytes N: at most N in all (default 64G). N\n"
	 "takes K, M, G, T. What a limit cuts off is a warning and a problem in\n"
	 "the coverage; past a file's limit the rest of the bundle is still read.\n"
	 "SIGINT/SIGTERM stop the run with exit 130 and leave the previous\n"
	 "outputs in DIR as they were."},
	{"ingest", iq_cmd_ingest,
	 "ingest BUNDLE... --db FILE [--rules PATH]... [--jobs N] [--tz ZONE] [--since T] [--until T]"
	 " [--namespace NS] [--node N] [--pod P] [--max-member-bytes N] [--max-bundle-bytes N]"
	 " [--stats]",
	 "Parse the bundle into the database only. Files already ingested are not\n"
	 "read again, so re-ingesting a bundle adds no duplicates. The limits,\n"
	 "scope and --jobs are those of analyze. SIGINT/SIGTERM commit the files\n"
	 "read so far and exit\n"
	 "130; a rerun reads the file that was cut and the rest."},
	{"report", iq_cmd_report, "report --db FILE [--format md|json|text] [--lang en|tr] [-o FILE]",
	 "Render the postmortem (md), the findings (json) or a short terminal summary\n"
	 "(text) again from an existing database, read-only. With -o, the SVG charts\n"
	 "go to charts/ beside FILE."},
	{"detect", iq_cmd_detect, "detect --db FILE [--rules PATH]...",
	 "Run the rule packs' detectors over a database filled by ingest and store\n"
	 "the findings (render them with inquest report)."},
	{"timeline", iq_cmd_timeline,
	 "timeline --db FILE [--since T] [--until T] [--namespace NS] [--node N] [--pod P] [--tag SIGNAL] [--all] [--window incident] [--format text|md|json|csv] [--limit N]",
	 "The merged timeline in time order: records that matched a signal (every\n"
	 "record with --all), filtered by time window, namespace, node, pod or signal;\n"
	 "--window incident keeps the incident window of the findings."},
	{"query", iq_cmd_query, "query --db FILE [--format table|csv|json] SQL",
	 "Run read-only SQL against a database and print the rows."},
	{"sniff", iq_cmd_sniff, "sniff FILE...",
	 "Say which format each file (or each member of an archive) is, and why."},
	{"parse", iq_cmd_parse, "parse [--format NAME] FILE",
	 "Print the records a format makes of a plain file, one JSON object a line\n"
	 "(for rule authors and the parser table tests)."},
	{"rules", iq_cmd_rules,
	 "rules list|lint|test [PACK...] | explain PACK [ID] [--lang en|tr] | match [--pack PACK]... [--explain] FILE...",
	 "list: the packs and their signals. lint: check packs (JSON, regexes, keys,\n"
	 "ids, refs, translations, question SQL); errors as FILE:LINE:COL, exit 4.\n"
	 "test: run every test case the packs carry; prints 'rules: N passed, N\n"
	 "failed' and exits 4 on a failure. explain: what a pack, or one of its\n"
	 "signals, conditions, questions or guidance items, does, in words.\n"
	 "match: grep with the packs: FILE:LINE<TAB>signals<TAB>text for each\n"
	 "matching line of plain files ('-' is stdin); --explain adds captures.\n"
	 "PACK is a file or directory of packs (rules/README.md); without one the\n"
	 "packs built into the binary are used."},
	{"show", iq_cmd_show, "show REF [-C N] [--db FILE] [--bundle PATH] [--rules PATH]...",
	 "Print a line the postmortem cites, with N lines of context (default 3):\n"
	 "REF is E12 (its evidence table) or PATH:LINE. Read from the bundle\n"
	 "(nested archives and .gz members too) when it is found, else from the\n"
	 "database. --db defaults to ./inquest.db (the folder analyze wrote)."},
	{"help", iq_cmd_help, "help [COMMAND]", "Show this help, or one command's."},
};

const struct iq_command *iq_command_find(const char *name)
{
	for (size_t i = 0; i < IQ_ARRAY_LEN(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

void iq_usage_of(const char *cmd)
{
	const struct iq_command *c = iq_command_find(cmd);
	if (c)
		fprintf(stderr, "usage: inquest %s\n", c->synopsis);
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

int iq_cmd_help(int argc, char **argv)
{
	if (argc >= 2) {
		const struct iq_command *c = iq_command_find(argv[1]);
		if (!c) {
			iq_errorf("unknown command '%s'", argv[1]);
			return IQ_EXIT_USAGE;
		}
		printf("usage: inquest %s\n\n%s\n", c->synopsis, c->help);
		return IQ_EXIT_OK;
	}
	printf("inquest %s: analyze a GPU inference incident bundle\n\nusage:\n", IQ_VERSION);
	for (size_t i = 0; i < IQ_ARRAY_LEN(commands); i++)
		printf("  inquest %s\n", commands[i].synopsis);
	printf("  inquest --version\n\n"
	       "exit status: 0 done, 1 --fail-on verdict reached, 2 usage, 3 unreadable\n"
	       "input, 4 rule pack error, 70 internal error.\n");
	return IQ_EXIT_OK;
}
