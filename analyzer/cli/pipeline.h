/* pipeline.h: bundle -> sniff -> parse -> match -> store, for ingest and
 * analyze. */
#ifndef IQ_PIPELINE_H
#define IQ_PIPELINE_H

#include "../rules/rules.h"
#include "../store/store.h"

struct iq_ingest_stats {
	long files;            /* files read in this run */
	long files_already;    /* files skipped: already in the database */
	long records;
	long matches;
	int64_t bytes;
	long files_known;      /* files read with a recognised format */
	long files_done;       /* files read to their end (or stored as done) in this run */
	char last_why[256];    /* why the last unrecognised file was not read */
	long lost;             /* problems that lost data: damaged, truncated, unreadable */
	long cut;              /* problems that left data unread at a limit */
};

/* CPU seconds per pipeline stage (wall for ingest as a whole and for the
 * stages after it), for `--stats`. */
struct iq_stage_times {
	double read_s;        /* walker: archive reading, decompression, sniffing */
	double parse_s;       /* parsers: line splitting and parsing, matching excluded */
	double match_s;       /* parsers: the rule packs' prefilter and PCRE2 */
	double store_s;       /* writer: SQLite inserts and commits */
	double index_s;       /* index build after the load (wall) */
	double ingest_wall_s; /* the ingest as a whole (wall) */
	double detect_s;      /* detectors (wall) */
	double report_s;      /* findings and reports (wall) */
};

/* What to keep (--since/--until/--namespace/--node/--pod): a record timed
 * outside [since, until], or attributed to another namespace, node or pod,
 * is left out and its lines are counted as skipped with the reason. Records
 * without a time, or not attributed to any pod (a load balancer line for a
 * --pod scope), are kept. */
struct iq_scope {
	int64_t since, until;      /* IQ_TIME_NONE: open */
	const char *ns, *node, *pod; /* NULL: any */
};

/* How to ingest: 0 limits take the walker's defaults (bundle.h). */
struct iq_ingest_opts {
	int quiet;
	int64_t max_member_bytes;  /* --max-member-bytes */
	int64_t max_bundle_bytes;  /* --max-bundle-bytes */
	int jobs;                  /* parser threads (--jobs); 0 means 1 */
	const char *const *rules;  /* --rules paths, loaded again for each parser */
	int nrules;
	struct iq_stage_times *timing; /* NULL unless --stats */
	struct iq_scope scope;     /* since/until IQ_TIME_NONE when not given */
	int scoped;                /* any part of scope given */
	int tz_given;              /* --tz named the zone of zone-less times */
	struct iq_progress *progress; /* the progress line, NULL: none */
};

/* Reads every file of the bundle at path into s, tagging records with the
 * signals of rs (o->jobs parser threads; those after the first load their
 * own copy of the packs from o->rules). Problems inside the bundle are stored and do not fail the
 * run; returns IQ_ERR_INPUT (d->msg names the bundle) when the bundle
 * cannot be opened at all, IQ_ERR_DB on database errors, IQ_ERR_INTR when
 * iq_interrupted() became true: the file being read is left in status
 * 'reading' (nothing is committed here; the caller commits). */
int iq_ingest_bundle(struct iq_store *s, struct iq_ruleset *rs, const char *path,
		     const struct iq_ingest_opts *o, struct iq_ingest_stats *st,
		     struct iq_diag *d);

/* Loads the shipped packs plus each --rules path; on error prints it and
 * returns IQ_EXIT_RULES, else 0. */
int iq_load_rules(struct iq_ruleset *rs, const char *const *paths, int npaths);
/* The same without printing: returns 0 or the iq_err with d->msg. */
int iq_load_rules_quiet(struct iq_ruleset *rs, const char *const *paths, int npaths,
			struct iq_diag *d);

/* Sets o to the defaults: no limits, no scope, --jobs as iq_default_jobs. */
void iq_ingest_opts_init(struct iq_ingest_opts *o);

/* The default of --jobs: the cores online, 1 to 16. */
int iq_default_jobs(void);

#endif
