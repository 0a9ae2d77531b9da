/* driver.c: runs one format over one input: line splitting, the parser's
 * begin/line/end, the line accounting every file gets, and the look-ahead
 * that settles the year of a file's yearless dates (iq_years) before the
 * parser sees them. */
#include <stdlib.h>
#include <string.h>

#include "../bundle/bundle.h"
#include "parse.h"

struct run {
	const struct iq_format *f;
	struct iq_parse_ctx *ctx;     /* the caller's, with our counting sink */
	struct iq_sink outer;         /* the caller's sink */
	void *st;
	struct iq_file_stats *stats;
	struct iq_years years;
	/* lines held back while the first yearless date's year is open:
	 * each a long line number, a size_t length and the bytes */
	int holding;
	struct iq_buf held;
	long nheld;
	struct iq_years_scan scan;
};

/* Lines a format with no yearless date among them is held back for. */
#define HOLD_DATELESS 10000

static int count_record(void *u, const struct iq_record *r)
{
	struct run *run = u;
	int rc = run->outer.record(run->outer.u, r);
	if (rc == IQ_RECORD_DROPPED)
		return 0; /* its lines went through ctx->sink.skip */
	run->stats->records++;
	run->stats->lines_parsed += r->nlines > 0 ? r->nlines : 1;
	return rc;
}

static void count_skip(void *u, long first, long count, const char *reason,
		       const char *text, size_t n)
{
	struct run *run = u;
	run->stats->lines_skipped += count;
	run->outer.skip(run->outer.u, first, count, reason, text, n);
}

/* Ends the look-ahead: the first yearless date's year from anchor (the
 * first time with its year, IQ_TIME_NONE for none) or the file's date,
 * then the held lines go to the parser. */
static int release(struct run *run, int64_t anchor)
{
	run->holding = 0;
	run->years.first_year =
		iq_years_scan_first(&run->scan, anchor != IQ_TIME_NONE ? anchor : run->years.limit);
	int rc = 0;
	for (size_t off = 0; off < run->held.len && !rc;) {
		long lineno;
		size_t n;
		memcpy(&lineno, run->held.p + off, sizeof lineno);
		memcpy(&n, run->held.p + off + sizeof lineno, sizeof n);
		off += sizeof lineno + sizeof n;
		rc = run->f->line(run->st, run->ctx, lineno, run->held.p + off, n);
		off += n;
	}
	iq_buf_release(&run->held);
	run->nheld = 0;
	return rc;
}

static int on_line(void *u, long lineno, const char *s, size_t n, int truncated)
{
	struct run *run = u;
	run->stats->lines_read = lineno;
	if (truncated == IQ_LINE_NUL) {
		count_skip(run, lineno, 1, "NUL bytes only (a zeroed block)", NULL, 0);
		return 0;
	}
	if (run->holding) {
		struct iq_yearless d;
		int64_t t = IQ_TIME_NONE;
		int rc;
		switch (run->f->dates(s, n, &d, &t)) {
		case IQ_DATES_YEAR:
			if ((rc = release(run, t)) != 0)
				return rc;
			return run->f->line(run->st, run->ctx, lineno, s, n);
		case IQ_DATES_YEARLESS:
			iq_years_scan_add(&run->scan, &d);
			break;
		case IQ_DATES_LIMIT:
			iq_years_limit(&run->years, t);
			break;
		case IQ_DATES_NONE:
			break;
		}
		if (iq_buf_add(&run->held, &lineno, sizeof lineno) ||
		    iq_buf_add(&run->held, &n, sizeof n) || iq_buf_add(&run->held, s, n))
			return IQ_ERR_NOMEM;
		run->nheld++;
		if (run->held.len >= IQ_YEAR_LOOKAHEAD || (!run->scan.n && run->nheld >= HOLD_DATELESS))
			return release(run, IQ_TIME_NONE);
		return 0;
	}
	return run->f->line(run->st, run->ctx, lineno, s, n);
}

int64_t iq_parse_yearless(const struct iq_parse_ctx *ctx, const struct iq_yearless *d)
{
	if (ctx->years)
		return iq_years_place(ctx->years, d);
	struct iq_years y;
	iq_years_init(&y, ctx->mtime);
	return iq_years_place(&y, d);
}

void iq_parse_year_seen(const struct iq_parse_ctx *ctx, int64_t t)
{
	if (ctx->years)
		iq_years_seen(ctx->years, t);
}

void iq_parse_year_limit(const struct iq_parse_ctx *ctx, int64_t t)
{
	if (ctx->years)
		iq_years_limit(ctx->years, t);
}

int iq_parse_run(const struct iq_format *f, struct iq_parse_ctx *ctx,
		 const char *head, size_t n, iq_read_fn rd, void *src,
		 struct iq_file_stats *st, struct iq_diag *d)
{
	struct run run = {.f = f, .ctx = ctx, .outer = ctx->sink, .stats = st};
	struct iq_lines lines;
	int rc = 0;
	char *chunk = NULL;

	memset(st, 0, sizeof *st);
	run.st = iq_xcalloc(1, f->state_size ? f->state_size : 1);
	ctx->sink.record = count_record;
	ctx->sink.skip = count_skip;
	ctx->sink.u = &run;
	iq_years_init(&run.years, ctx->mtime);
	ctx->years = &run.years;
	run.holding = f->dates != NULL;
	iq_buf_init(&run.held);
	iq_lines_init(&lines, IQ_MAX_LINE);

	rc = f->begin(run.st, ctx);
	if (rc == 0 && n)
		rc = iq_lines_feed(&lines, head, n, on_line, &run);
	if (rc == 0 && rd) {
		chunk = iq_xmalloc(IQ_HEAD_BYTES);
		for (;;) {
			ssize_t got = rd(src, chunk, IQ_HEAD_BYTES, d);
			if (got < 0) {
				rc = (int)got;
				break;
			}
			if (got == 0)
				break;
			rc = iq_lines_feed(&lines, chunk, (size_t)got, on_line, &run);
			if (rc)
				break;
		}
	}
	/* Deliver a last unterminated line even after a read error: it is
	 * the truncated file's last evidence. */
	int rc2 = iq_lines_finish(&lines, on_line, &run);
	if (!rc)
		rc = rc2;
	/* held lines are records before a read error too, not after a stop */
	if (run.holding && (rc == 0 || rc == IQ_ERR_INPUT)) {
		rc2 = release(&run, IQ_TIME_NONE);
		if (!rc)
			rc = rc2;
	}
	iq_buf_release(&run.held);
	rc2 = f->end(run.st, ctx);
	if (!rc)
		rc = rc2;
	st->cut_lines = lines.cut_lines;
	st->nul_bytes = lines.nul_bytes;
	st->nul_lines = lines.nul_lines;
	/* Several records on one line (a compact JSON list) make the sum of
	 * nlines exceed the lines they came from: count each line once. */
	if (st->lines_parsed + st->lines_skipped > st->lines_read)
		st->lines_parsed = st->lines_read > st->lines_skipped ? st->lines_read - st->lines_skipped : 0;
	long acc = st->lines_parsed + st->lines_skipped;
	if (acc < st->lines_read)
		count_skip(&run, acc + 1, st->lines_read - acc,
			   "unaccounted by the parser", NULL, 0);
	ctx->sink = run.outer;
	ctx->years = NULL;
	iq_lines_release(&lines);
	free(chunk);
	free(run.st);
	if (rc == IQ_ERR_NOMEM)
		iq_diag_set(d, rc, "out of memory");
	return rc;
}
