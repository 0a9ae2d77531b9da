/* pipeline.c: the ingest pipeline. The walker hands out files; each is
 * sniffed from its first bytes, parsed by its format, every record is
 * matched against the rule packs and stored with its matches. Every line
 * read is accounted for in the files and skips tables. */
#include <string.h>

#include "../bundle/bundle.h"
#include "cli.h"
#include "pipeline.h"

#define MAX_REASONS 16

struct skip_agg {
	const char *reason;   /* parsers pass static strings */
	long lines;
	long first;
	char example[512];
	size_t exn;
};

struct file_run {
	struct iq_store *s;
	struct iq_ruleset *rs;
	struct iq_member *m;
	struct iq_parse_ctx ctx;
	int64_t file_id;
	int64_t record_id;
	int64_t bytes;
	struct skip_agg skips[MAX_REASONS];
	int nskips;
	int err;
	struct iq_ingest_stats *st;
};

#define INTR_EVERY 4096 /* records between two looks at the signal flag */

struct walk_state {
	struct iq_store *s;
	struct iq_ruleset *rs;
	const char *bundle;
	int quiet;
	struct iq_ingest_stats *st;
	int err;
	struct iq_diag *d;
};

static int on_match(void *u, const char *pack, const char *signal, const char *caps)
{
	struct file_run *fr = u;
	fr->st->matches++;
	return iq_store_match(fr->s, fr->record_id, pack, signal, caps);
}

static int on_record(void *u, const struct iq_record *r)
{
	struct file_run *fr = u;
	int rc = iq_store_record(fr->s, fr->file_id, &fr->ctx.file_id, r, &fr->record_id);
	if (rc)
		return rc;
	if (++fr->st->records % INTR_EVERY == 0 && iq_interrupted())
		return IQ_ERR_INTR;
	return iq_rules_match(fr->rs, r, on_match, fr);
}

static void on_skip(void *u, long first, long count, const char *reason, const char *text, size_t n)
{
	struct file_run *fr = u;
	struct skip_agg *a = NULL;
	for (int i = 0; i < fr->nskips; i++)
		if (fr->skips[i].reason == reason || strcmp(fr->skips[i].reason, reason) == 0)
			a = &fr->skips[i];
	if (!a) {
		if (fr->nskips == MAX_REASONS) {
			/* too many distinct reasons to hold: write this one now */
			iq_store_skip(fr->s, fr->file_id, reason, count, first, text, n);
			return;
		}
		a = &fr->skips[fr->nskips++];
		memset(a, 0, sizeof *a);
		a->reason = reason;
		a->first = first;
	}
	a->lines += count;
	if (!a->exn && text && n) {
		a->exn = n < sizeof a->example ? n : sizeof a->example;
		memcpy(a->example, text, a->exn);
	}
}

static ssize_t member_read(void *src, void *buf, size_t n, struct iq_diag *d)
{
	struct file_run *fr = src;
	/* also stops a file whose lines make no records (a 100 MB line) */
	if (iq_interrupted())
		return iq_diag_set(d, IQ_ERR_INTR, "interrupted");
	ssize_t got = iq_member_read(fr->m, buf, n, d);
	if (got > 0)
		fr->bytes += got;
	return got;
}

static void on_problem(const char *path, const char *msg, void *u)
{
	struct walk_state *ws = u;
	char esc[1024], emsg[1024];
	iq_escape_display(esc, sizeof esc, path, strlen(path));
	/* the message may quote the bundle too (a link's target) */
	iq_escape_display(emsg, sizeof emsg, msg, strlen(msg));
	if (!ws->quiet)
		iq_warnf("%s: %s", esc, emsg);
	iq_store_problem(ws->s, path, msg);
}

static int on_member(struct iq_member *m, void *u)
{
	struct walk_state *ws = u;
	struct file_run fr;
	memset(&fr, 0, sizeof fr);
	fr.s = ws->s;
	fr.rs = ws->rs;
	fr.m = m;
	fr.st = ws->st;
	if (iq_interrupted())
		return IQ_ERR_INTR;

	/* Fill the sniffing window (the read may return less than asked). */
	static char head[IQ_HEAD_BYTES];
	size_t n = 0;
	struct iq_diag rd = {{0}};
	int read_err = 0;
	while (n < sizeof head) {
		ssize_t got = iq_member_read(m, head + n, sizeof head - n, &rd);
		if (got < 0) {
			read_err = 1;
			break;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	fr.bytes = (int64_t)n;
	iq_rules_set_source(ws->rs, m->path);
	char why[256];
	const struct iq_format *f = iq_sniff(m->path, head, n, why, sizeof why);
	iq_path_ident(m->path, &fr.ctx.file_id);
	int already = 0;
	int rc = iq_store_file_begin(ws->s, m->path, ws->bundle, f ? f->name : NULL, why, m->mtime,
				     &fr.ctx.file_id, &fr.file_id, &already);
	if (rc)
		return rc;
	if (already) {
		ws->st->files_already++;
		ws->st->files_done++;
		return 0;
	}
	ws->st->files++;
	struct iq_file_stats fs;
	memset(&fs, 0, sizeof fs);
	const char *status = "done";
	const char *error = NULL;
	struct iq_diag pd = {{0}};
	if (!f && read_err) {
		/* nothing readable before the error: the error is the news, not
		 * an "empty" file */
		status = "error";
		error = rd.msg;
		snprintf(ws->st->last_why, sizeof ws->st->last_why, "%.200s", rd.msg);
		char esc[1024], emsg[1024];
		iq_escape_display(esc, sizeof esc, m->path, strlen(m->path));
		iq_escape_display(emsg, sizeof emsg, rd.msg, strlen(rd.msg));
		if (!ws->quiet)
			iq_warnf("%s: %s (read stopped after %zu bytes)", esc, emsg, n);
	} else if (!f) {
		status = n == 0 ? "empty" : strncmp(why, "binary", 6) == 0 ? "binary" : "unknown";
		snprintf(ws->st->last_why, sizeof ws->st->last_why, "%s", why);
	} else {
		ws->st->files_known++;
		fr.ctx.path = m->path;
		fr.ctx.mtime = m->mtime;
		fr.ctx.sink.record = on_record;
		fr.ctx.sink.skip = on_skip;
		fr.ctx.sink.u = &fr;
		rc = iq_parse_run(f, &fr.ctx, head, n, read_err ? NULL : member_read, &fr, &fs, &pd);
		/* interrupted: the file stays 'reading', so a rerun reads it again */
		if (rc == IQ_ERR_DB || rc == IQ_ERR_NOMEM || rc == IQ_ERR_INTR)
			return rc;
		if (rc || read_err) {
			status = "error";
			error = read_err ? rd.msg : pd.msg;
			char esc[1024], emsg[1024];
			iq_escape_display(esc, sizeof esc, m->path, strlen(m->path));
			iq_escape_display(emsg, sizeof emsg, error, strlen(error));
			if (!ws->quiet)
				iq_warnf("%s:%ld: %s (read stopped; %ld lines kept)", esc, fs.lines_read,
					 emsg, fs.lines_read);
		}
	}
	for (int i = 0; i < fr.nskips; i++) {
		struct skip_agg *a = &fr.skips[i];
		rc = iq_store_skip(ws->s, fr.file_id, a->reason, a->lines, a->first,
				   a->exn ? a->example : NULL, a->exn);
		if (rc)
			return rc;
	}
	ws->st->bytes += fr.bytes;
	rc = iq_store_file_end(ws->s, fr.file_id, &fs, fr.bytes, status, error);
	if (!rc)
		ws->st->files_done++;
	return rc;
}

/* A signal whose regex hit a PCRE2 limit: a warning at the regex in its
 * pack, and a problem row under the pack's file for the coverage. */
static void on_limit_hit(void *u, const struct iq_limit_hit *h)
{
	struct walk_state *ws = u;
	if (!ws->quiet) {
		char esc[1024];
		iq_escape_display(esc, sizeof esc, h->msg, strlen(h->msg));
		fprintf(stderr, "%s:%d:%d: warning: %s\n", h->file, h->line, h->col, esc);
	}
	iq_store_problem(ws->s, h->file, h->msg);
}

/* The bundle's display name: its last path component. */
static const char *base_name(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	const char *p = path + n;
	while (p > path && p[-1] != '/')
		p--;
	return p;
}

int iq_ingest_bundle(struct iq_store *s, struct iq_ruleset *rs, const char *path,
		     const struct iq_ingest_opts *io, struct iq_ingest_stats *st,
		     struct iq_diag *d)
{
	struct walk_state ws = {.s = s, .rs = rs, .bundle = base_name(path),
				.quiet = io->quiet, .st = st, .d = d};
	struct iq_walk_opts o = {.problem = on_problem, .u = &ws,
				 .max_member_bytes = io->max_member_bytes,
				 .max_total_bytes = io->max_bundle_bytes};
	int rc = iq_bundle_walk(path, &o, on_member, d);
	iq_rules_set_source(rs, NULL);
	/* regexes that hit a PCRE2 limit in this bundle: the lines they could
	 * not decide are a gap in the coverage */
	iq_rules_limit_hits(rs, on_limit_hit, &ws, 1);
	if (rc == IQ_ERR_INTR)
		return rc;
	if (rc == IQ_ERR_DB)
		iq_diag_set(d, rc, "database error while ingesting '%s'", path);
	return rc;
}

int iq_load_rules(struct iq_ruleset *rs, char **paths, int npaths)
{
	struct iq_diag d = {{0}};
	int rc = iq_rules_load_builtin(rs, &d);
	for (int i = 0; rc == 0 && i < npaths; i++)
		rc = iq_rules_load_path(rs, paths[i], &d);
	if (rc) {
		fprintf(stderr, "%s\n", d.msg);
		return IQ_EXIT_RULES;
	}
	return 0;
}
