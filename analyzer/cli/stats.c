/* stats.c: `--stats`, the per-stage breakdown of a run, so that a slower
 * build shows where it lost the time. CPU seconds for the ingest stages
 * (they run on their own threads, at the same time), wall seconds for the
 * rest. */
#include <time.h>

#include "cli.h"
#include "pipeline.h"

double iq_wall_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void iq_print_stage_times(const struct iq_stage_times *t, double total_wall_s)
{
	fprintf(stderr,
		"inquest: stats (ingest stages in CPU seconds on their threads, the rest wall):\n"
		"  read    %8.3f s cpu   archive reading, decompression, sniffing\n"
		"  parse   %8.3f s cpu   line splitting and parsing\n"
		"  match   %8.3f s cpu   rule packs: literal prefilter and PCRE2\n"
		"  store   %8.3f s cpu   SQLite inserts and commits\n"
		"  ingest  %8.3f s wall  the stages above, overlapped\n"
		"  index   %8.3f s wall  index build after the load\n"
		"  detect  %8.3f s wall  detectors and verdicts\n"
		"  report  %8.3f s wall  findings.json, postmortem.md, charts\n"
		"  total   %8.3f s wall\n",
		t->read_s, t->parse_s, t->match_s, t->store_s, t->ingest_wall_s, t->index_s,
		t->detect_s, t->report_s, total_wall_s);
}
