/* pipeline.c: the ingest pipeline, as three stages on their own threads.
 * The walker reads the bundle (libarchive, decompression) and sniffs each
 * file; N parsers split, parse and match the records of whole files
 * against the rule packs; the writer (the calling thread) stores files,
 * records, matches and the line accounting in the order the walker met
 * the files, so the database is the same whatever N is. Queues between
 * the stages are bounded, so memory does not grow with the bundle. */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../bundle/bundle.h"
#include "../store/batch.h"
#include "cli.h"
#include "pipeline.h"

#define CHUNK_BYTES IQ_HEAD_BYTES    /* what the walker hands on at a time */
#define IN_MAX (4u << 20)            /* decompressed bytes waiting per file */
#define OUT_MAX (12u << 20)          /* batch bytes waiting per file */
/* A full queue lets its producer go on once it is half empty, and a
 * starved parser is woken once a few chunks wait: a thread woken for every
 * chunk would spend more on context switches than on the chunk. */
#define IN_LOW (8u * CHUNK_BYTES)
#define INTR_EVERY 4096              /* records between two looks at the signal flag */

struct chunk {
	struct chunk *next;
	size_t n;
	char data[CHUNK_BYTES];
};

struct skip_agg {
	const char *reason;   /* parsers pass static strings */
	long lines;
	long first;
	char example[512];
	size_t exn;
};

enum job_kind { JOB_FILE, JOB_PROBLEM };

/* One member of the bundle on its way through the stages (or a problem
 * the walker met, which keeps its place in the order). */
struct job {
	struct job *next;          /* bundle order, for the writer */
	struct job *next_parse;    /* files to parse, for the parsers */
	enum job_kind kind;
	char *path;                /* owned */
	char *msg;                 /* JOB_PROBLEM: what went wrong (owned) */
	int problem_kind;          /* JOB_PROBLEM: enum iq_problem_kind */
	int64_t mtime;
	const struct iq_format *f; /* NULL: not parsed */
	char why[256];
	int already;               /* in the database already: not read */
	int64_t bytes;             /* decompressed bytes read */
	uint64_t hash;             /* of all bytes read, to find copies */
	/* walker -> parser */
	struct chunk *in_head, *in_tail;
	size_t in_bytes;
	int in_done;
	int read_err;              /* the member broke after in_head was read */
	int head_err;              /* ... or before the sniffing window was full */
	int cut;                   /* the read stopped at a size limit */
	char read_msg[1024];
	/* parser -> writer */
	struct iq_batch *out_head, *out_tail;
	size_t out_bytes;
	int out_done;
	struct skip_agg *skips;
	int nskips;
	struct iq_file_stats fs;
	int parse_rc;
	char parse_msg[1024];
};

struct pipe;

/* A parser thread: its own copy of the rule packs (matching keeps state). */
struct parser {
	struct pipe *p;
	pthread_t tid;
	struct iq_ruleset *rs;
	struct iq_ruleset own;
	int own_loaded;
	struct job *job;
	struct iq_ident fid;        /* the identity of job's path */
	struct iq_parse_ctx *ctx;   /* job's, while it is parsed */
	long mark;                  /* lines before it are covered by records */
	struct iq_batch *b;
	long records;
	long matches;
	double cpu_s, match_wall, busy_wall, wait_wall;
};

struct pipe {
	pthread_mutex_t mu;
	pthread_cond_t cv[3];       /* one a role (enum role); waits time out */
	struct job *head, *tail;    /* bundle order */
	struct job *phead, *ptail;  /* files waiting for a parser */
	int njobs;
	int walk_done;
	int walk_rc;
	struct iq_diag walk_d;
	int abort;                  /* an error or a signal: every stage stops */
	struct iq_batch *pool;      /* batches for reuse */
	int npool;
	/* read-only while the threads run */
	const char *bundle_path;
	const char *bundle;
	struct iq_walk_opts wo;
	char **done;
	size_t ndone;
	int max_jobs;
	int timing;
	const struct iq_scope *scope; /* NULL: keep everything */
	struct seen_set *seen;      /* the writer's */
	double walk_cpu_s;
	/* the progress line (NULL: none), drawn by the writer from the
	 * walker's position (read_bytes of read_total, under the lock) */
	struct iq_progress *progress;
	struct iq_ingest_stats *st;
	int64_t read_bytes, read_total;
};

static void lock(struct pipe *p)
{
	pthread_mutex_lock(&p->mu);
}

static void unlock(struct pipe *p)
{
	pthread_mutex_unlock(&p->mu);
}

/* Who waits for what: the walker for room (fewer jobs, a file's chunks
 * read), the parsers for work (a file, its chunks, room for batches), the
 * writer for output (a job, its batches). A change wakes only the roles it
 * can let go on: on a VM every needless wake-up is two context switches. */
enum role { WALKER = 1, PARSERS = 2, WRITER = 4, EVERYONE = 7 };

static void wake(struct pipe *p, int roles)
{
	for (int i = 0; i < 3; i++)
		if (roles & 1 << i)
			pthread_cond_broadcast(&p->cv[i]);
}

static int role_index(enum role r)
{
	return r == WALKER ? 0 : r == PARSERS ? 1 : 2;
}

/* Waits (with the lock held) until a change wakes role; gives up after 50
 * ms so that a signal that arrived meanwhile is seen, and then wakes
 * everyone to stop. */
static void wait_change(struct pipe *p, enum role role)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += 50 * 1000 * 1000;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&p->cv[role_index(role)], &p->mu, &t);
	/* a writer waiting long (a big member skipped, a slow parser) still
	 * shows that the walker moves */
	if (role == WRITER && p->progress) {
		p->progress->total = p->read_total;
		iq_progress_tick(p->progress, p->read_bytes, p->st->files + p->st->files_already,
				 p->st->records, 0);
	}
	if (iq_interrupted() && !p->abort) {
		p->abort = 1;
		wake(p, EVERYONE);
	}
}

static double thread_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double wall_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void job_free(struct job *j)
{
	while (j->in_head) {
		struct chunk *c = j->in_head;
		j->in_head = c->next;
		free(c);
	}
	while (j->out_head) {
		struct iq_batch *b = j->out_head;
		j->out_head = b->next;
		iq_batch_free(b);
	}
	free(j->skips);
	free(j->path);
	free(j->msg);
	free(j);
}

/* Appends j in bundle order (and to the parse queue when it is to be
 * parsed). With the lock held. */
static void job_append(struct pipe *p, struct job *j, int parse)
{
	if (p->tail)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	p->njobs++;
	if (parse) {
		if (p->ptail)
			p->ptail->next_parse = j;
		else
			p->phead = j;
		p->ptail = j;
	}
	wake(p, PARSERS | WRITER);
}

/* A fast 64-bit hash of a byte stream, fed chunk by chunk (chunks are
 * whole words except the last). Not cryptographic: a match is a candidate
 * that identity and size confirm. */
static uint64_t hash_feed(uint64_t h, const char *p, size_t n)
{
	const uint64_t k = 0x9E3779B97F4A7C15ull;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * k;
		h ^= h >> 31;
	}
	for (; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * k;
	return h ^ (h >> 29);
}

static int cmp_done(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

/* ---- the walker ---- */

static void walk_progress(int64_t read, int64_t total, void *u)
{
	struct pipe *p = u;
	lock(p);
	p->read_bytes = read;
	p->read_total = total;
	unlock(p);
}

/* The progress line, from the writer (the lock not held). */
static void progress_tick(struct pipe *p, int force)
{
	if (!p->progress)
		return;
	lock(p);
	int64_t read = p->read_bytes;
	p->progress->total = p->read_total;
	unlock(p);
	iq_progress_tick(p->progress, read, p->st->files + p->st->files_already, p->st->records, force);
}

static void walk_problem(const char *path, const char *msg, int kind, void *u)
{
	struct pipe *p = u;
	struct job *j = iq_xcalloc(1, sizeof *j);
	j->kind = JOB_PROBLEM;
	j->problem_kind = kind;
	j->path = iq_xstrdup(path);
	j->msg = iq_xstrdup(msg);
	lock(p);
	job_append(p, j, 0);
	unlock(p);
}

/* Reads what the member has up to n bytes (fewer only at its end or on an
 * error, which sets *err and d). */
static size_t read_full(struct iq_member *m, char *buf, size_t n, int *err, struct iq_diag *d)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = iq_member_read(m, buf + got, n - got, d);
		if (r < 0) {
			*err = 1;
			break;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return got;
}

static int walk_member(struct iq_member *m, void *u)
{
	struct pipe *p = u;
	lock(p);
	while (!p->abort && p->njobs >= p->max_jobs)
		wait_change(p, WALKER);
	int stop = p->abort;
	unlock(p);
	if (stop || iq_interrupted())
		return IQ_ERR_INTR;

	struct job *j = iq_xcalloc(1, sizeof *j);
	j->kind = JOB_FILE;
	j->path = iq_xstrdup(m->path);
	j->mtime = m->mtime;
	struct iq_diag rd = {{0}};
	int err = 0;
	struct chunk *c = iq_xmalloc(sizeof *c);
	c->next = NULL;
	c->n = read_full(m, c->data, sizeof c->data, &err, &rd);
	j->bytes = (int64_t)c->n;
	j->hash = hash_feed(0, c->data, c->n);
	j->f = iq_sniff(m->path, c->data, c->n, j->why, sizeof j->why);
	j->already = p->ndone && bsearch(j->path, p->done, p->ndone, sizeof *p->done, cmp_done);
	if (err) {
		j->head_err = 1;
		snprintf(j->read_msg, sizeof j->read_msg, "%s", rd.msg);
	}
	int parse = j->f && !j->already;
	j->cut = iq_member_cut(m);
	j->in_head = j->in_tail = c;
	j->in_bytes = c->n;
	if (!parse) {
		j->in_done = j->out_done = 1;
		lock(p);
		job_append(p, j, 0);
		unlock(p);
		return 0;
	}
	lock(p);
	job_append(p, j, 1);
	unlock(p);
	int rc = 0;
	while (!err) {
		if (iq_interrupted()) {
			rc = IQ_ERR_INTR;
			break;
		}
		c = iq_xmalloc(sizeof *c);
		c->next = NULL;
		c->n = read_full(m, c->data, sizeof c->data, &err, &rd);
		if (c->n == 0) {
			free(c);
			break;
		}
		uint64_t h = hash_feed(j->hash, c->data, c->n); /* only this thread writes it */
		lock(p);
		if (j->in_bytes >= IN_MAX)
			while (!p->abort && j->in_bytes > IN_MAX / 2)
				wait_change(p, WALKER);
		if (p->abort) {
			unlock(p);
			free(c);
			rc = IQ_ERR_INTR;
			break;
		}
		j->bytes += (int64_t)c->n;
		j->hash = h;
		if (j->in_tail)
			j->in_tail->next = c;
		else
			j->in_head = c;
		j->in_tail = c;
		j->in_bytes += c->n;
		if (j->in_bytes >= IN_LOW)
			wake(p, PARSERS);
		unlock(p);
	}
	lock(p);
	j->cut = iq_member_cut(m);
	if (err && !j->head_err) {
		j->read_err = 1;
		snprintf(j->read_msg, sizeof j->read_msg, "%s", rd.msg);
	}
	j->in_done = 1;
	wake(p, PARSERS);
	unlock(p);
	return rc;
}

static void *walker_main(void *u)
{
	struct pipe *p = u;
	double t0 = p->timing ? thread_cpu() : 0;
	int rc = iq_bundle_walk(p->bundle_path, &p->wo, walk_member, &p->walk_d);
	lock(p);
	p->walk_done = 1;
	p->walk_rc = rc;
	if (rc)
		p->abort = 1;
	if (p->timing)
		p->walk_cpu_s = thread_cpu() - t0;
	wake(p, EVERYONE);
	unlock(p);
	return NULL;
}

/* ---- the parsers ---- */

static struct iq_batch *batch_get(struct pipe *p)
{
	struct iq_batch *b = NULL;
	lock(p);
	if (p->pool) {
		b = p->pool;
		p->pool = b->next;
		p->npool--;
	}
	unlock(p);
	if (!b)
		b = iq_batch_new();
	b->next = NULL;
	iq_batch_clear(b);
	return b;
}

/* Hands the parser's batch to the writer; waits while the file's queue is
 * full. Returns 0 or IQ_ERR_INTR when the pipeline stops. */
static int batch_push(struct parser *w)
{
	struct pipe *p = w->p;
	struct job *j = w->job;
	struct iq_batch *b = w->b;
	w->b = NULL;
	if (!b)
		return 0;
	if (!b->n) {
		w->b = b;
		return 0;
	}
	size_t sz = iq_batch_bytes(b);
	double t0 = p->timing ? wall_now() : 0;
	lock(p);
	if (j->out_bytes && j->out_bytes + sz > OUT_MAX)
		while (!p->abort && j->out_bytes &&
		       (j->out_bytes > OUT_MAX / 2 || j->out_bytes + sz > OUT_MAX))
			wait_change(p, PARSERS);
	if (p->timing)
		w->wait_wall += wall_now() - t0;
	int stop = p->abort;
	if (!stop) {
		if (j->out_tail)
			j->out_tail->next = b;
		else
			j->out_head = b;
		j->out_tail = b;
		j->out_bytes += sz;
		wake(p, WRITER);
	}
	unlock(p);
	if (stop) {
		iq_batch_free(b);
		return IQ_ERR_INTR;
	}
	return 0;
}

static int on_match(void *u, const char *pack, const char *signal, const char *caps)
{
	struct parser *w = u;
	w->matches++;
	iq_batch_add_match(w->b, pack, signal, caps);
	return 0;
}

static int str_is(struct iq_str s, const char *want)
{
	return strlen(want) == s.n && memcmp(s.p, want, s.n) == 0;
}

/* Why r is outside the scope, or NULL when it is in. */
static const char *out_of_scope(const struct iq_scope *sc, const struct iq_record *r,
				const struct iq_ident *fid)
{
	if (r->ts != IQ_TIME_NONE && ((sc->since != IQ_TIME_NONE && r->ts < sc->since) ||
				      (sc->until != IQ_TIME_NONE && r->ts > sc->until)))
		return "outside the scope (--since/--until)";
	struct iq_str ns = r->id.ns.n ? r->id.ns : fid->ns;
	struct iq_str node = r->id.node.n ? r->id.node : fid->node;
	struct iq_str pod = r->id.pod.n ? r->id.pod : fid->pod;
	if (r->kind == IQ_KIND_POD) {
		if (r->u.pod.ns.n)
			ns = r->u.pod.ns;
		if (r->u.pod.node.n)
			node = r->u.pod.node;
		if (r->u.pod.name.n)
			pod = r->u.pod.name;
	} else if (r->kind == IQ_KIND_EVENT && str_is(r->u.event.object_kind, "Pod")) {
		if (r->u.event.object_ns.n)
			ns = r->u.event.object_ns;
		pod = r->u.event.object_name;
	}
	if (sc->ns && ns.n && !str_is(ns, sc->ns))
		return "outside the scope (--namespace)";
	if (sc->node && node.n && !str_is(node, sc->node))
		return "outside the scope (--node)";
	if (sc->pod && pod.n && !str_is(pod, sc->pod))
		return "outside the scope (--pod)";
	return NULL;
}

static int on_record(void *u, const struct iq_record *r)
{
	struct parser *w = u;
	long start = r->first_line > 0 ? r->first_line : r->line;
	long end = start + (r->nlines > 0 ? r->nlines : 1);
	if (w->p->scope) {
		const char *why = out_of_scope(w->p->scope, r, &w->fid);
		if (why) {
			/* records may share lines (the containers of one pod):
			 * count only the lines no record has covered yet */
			long from = start > w->mark ? start : w->mark;
			if (end > from)
				w->ctx->sink.skip(w->ctx->sink.u, from, end - from, why, r->text.p,
						  r->text.n);
			if (end > w->mark)
				w->mark = end;
			return IQ_RECORD_DROPPED;
		}
	}
	if (end > w->mark)
		w->mark = end;
	if (!w->b)
		w->b = batch_get(w->p);
	if (iq_batch_add(w->b, r)) {
		int rc = batch_push(w);
		if (rc)
			return rc;
		w->b = batch_get(w->p);
		iq_batch_add(w->b, r);
	}
	if (++w->records % INTR_EVERY == 0 && (iq_interrupted() || w->p->abort))
		return IQ_ERR_INTR;
	int rc;
	if (!w->p->timing) {
		rc = iq_rules_match(w->rs, r, on_match, w);
	} else {
		/* the thread's CPU clock is too coarse for one record: the share
		 * of matching in the thread's busy wall time splits its CPU time */
		double t0 = wall_now();
		rc = iq_rules_match(w->rs, r, on_match, w);
		w->match_wall += wall_now() - t0;
	}
	/* an error no signal explains: for the appendix, found here once
	 * rather than by the report reading every record again. The error
	 * words came with the matcher's literal pass (iq_rules_watch), but
	 * for a text it did not scan, or one where a word found may lie past
	 * a NUL (LIKE stops there). */
	struct iq_batch_rec *br = &w->b->recs[w->b->n - 1];
	if (!br->nmatches) {
		int err = iq_error_severity(r->severity.p, r->severity.n);
		if (!err && iq_kind_has_text(r->kind)) {
			/* no word anywhere in the text: none before a NUL either */
			long ww = iq_rules_watched(w->rs);
			if (ww == 0)
				err = 0;
			else if (ww > 0 && !(r->text.n && memchr(r->text.p, '\0', r->text.n)))
				err = 1;
			else
				err = iq_error_words(r->text.p, r->text.n);
		}
		br->unexplained = err;
	}
	return rc;
}

static void on_skip(void *u, long first, long count, const char *reason, const char *text, size_t n)
{
	struct parser *w = u;
	struct job *j = w->job;
	struct skip_agg *a = NULL;
	for (int i = 0; i < j->nskips && !a; i++)
		if (j->skips[i].reason == reason || strcmp(j->skips[i].reason, reason) == 0)
			a = &j->skips[i];
	if (!a) {
		j->skips = iq_xrealloc(j->skips, (size_t)(j->nskips + 1) * sizeof *j->skips);
		a = &j->skips[j->nskips++];
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

/* The parser's read function: the file's next chunk from the walker, 0 at
 * its end, or the read error the walker met. */
static ssize_t job_read(void *src, void *buf, size_t n, struct iq_diag *d)
{
	struct parser *w = src;
	struct pipe *p = w->p;
	struct job *j = w->job;
	double t0 = p->timing ? wall_now() : 0;
	lock(p);
	while (!p->abort && !j->in_head && !j->in_done)
		wait_change(p, PARSERS);
	if (p->timing)
		w->wait_wall += wall_now() - t0;
	if (p->abort) {
		unlock(p);
		return iq_diag_set(d, IQ_ERR_INTR, "interrupted");
	}
	struct chunk *c = j->in_head;
	if (!c) {
		int err = j->read_err;
		unlock(p);
		return err ? iq_diag_set(d, IQ_ERR_INPUT, "%s", j->read_msg) : 0;
	}
	j->in_head = c->next;
	if (!j->in_head)
		j->in_tail = NULL;
	j->in_bytes -= c->n;
	if (j->in_bytes <= IN_MAX / 2)
		wake(p, WALKER);
	unlock(p);
	size_t k = c->n < n ? c->n : n; /* chunks are never larger than a read */
	memcpy(buf, c->data, k);
	free(c);
	return (ssize_t)k;
}

static void parse_job(struct parser *w, struct job *j)
{
	struct pipe *p = w->p;
	w->job = j;
	/* the sniffing window is the first chunk */
	lock(p);
	struct chunk *head = j->in_head;
	j->in_head = head->next;
	if (!j->in_head)
		j->in_tail = NULL;
	j->in_bytes -= head->n;
	wake(p, WALKER);
	unlock(p);
	struct iq_parse_ctx ctx;
	memset(&ctx, 0, sizeof ctx);
	ctx.path = j->path;
	ctx.mtime = j->mtime;
	iq_path_ident(j->path, &ctx.file_id);
	iq_rules_set_source(w->rs, j->path);
	w->fid = ctx.file_id;
	w->ctx = &ctx;
	w->mark = 0;
	ctx.sink.record = on_record;
	ctx.sink.skip = on_skip;
	ctx.sink.u = w;
	struct iq_diag pd = {{0}};
	int rc = iq_parse_run(j->f, &ctx, head->data, head->n, j->head_err ? NULL : job_read, w,
			      &j->fs, &pd);
	free(head);
	/* records before a read or parse error stand */
	if (rc != IQ_ERR_INTR && rc != IQ_ERR_NOMEM) {
		int prc = batch_push(w);
		if (!rc)
			rc = prc;
	} else if (w->b) {
		iq_batch_clear(w->b);
	}
	lock(p);
	j->parse_rc = rc;
	snprintf(j->parse_msg, sizeof j->parse_msg, "%s", pd.msg);
	j->out_done = 1;
	if (rc == IQ_ERR_NOMEM || rc == IQ_ERR_INTR)
		p->abort = 1;
	wake(p, EVERYONE);
	unlock(p);
	w->job = NULL;
}

static void *parser_main(void *u)
{
	struct parser *w = u;
	struct pipe *p = w->p;
	double t0 = p->timing ? thread_cpu() : 0;
	for (;;) {
		lock(p);
		while (!p->abort && !p->phead && !p->walk_done)
			wait_change(p, PARSERS);
		struct job *j = p->abort ? NULL : p->phead;
		if (j) {
			p->phead = j->next_parse;
			if (!p->phead)
				p->ptail = NULL;
		}
		unlock(p);
		if (!j)
			break;
		double b0 = p->timing ? wall_now() : 0;
		parse_job(w, j);
		if (p->timing)
			w->busy_wall += wall_now() - b0;
	}
	if (w->b) {
		iq_batch_free(w->b);
		w->b = NULL;
	}
	if (p->timing)
		w->cpu_s = thread_cpu() - t0;
	return NULL;
}

/* ---- the writer ---- */

/* The files stored so far, by size and hash, to find copies: kubelet's
 * /var/log/containers/<pod>_<ns>_<c>-<id>.log is a link to the file under
 * /var/log/pods/, and a collector that follows links packs it twice. */
struct seen_file {
	int64_t bytes;
	uint64_t hash;
	char *path;
};

struct seen_set {
	struct seen_file *v;  /* open addressing, cap a power of two */
	size_t n, cap;
};

static size_t seen_slot(const struct seen_set *ss, int64_t bytes, uint64_t hash)
{
	return (size_t)((hash ^ (uint64_t)bytes) * 0x9E3779B97F4A7C15ull >> 20) & (ss->cap - 1);
}

static void seen_add(struct seen_set *ss, int64_t bytes, uint64_t hash, const char *path)
{
	if ((ss->n + 1) * 2 > ss->cap) {
		struct seen_set big = {iq_xcalloc(ss->cap ? ss->cap * 2 : 256, sizeof *big.v), 0,
				       ss->cap ? ss->cap * 2 : 256};
		for (size_t i = 0; i < ss->cap; i++)
			if (ss->v[i].path) {
				size_t k = seen_slot(&big, ss->v[i].bytes, ss->v[i].hash);
				while (big.v[k].path)
					k = (k + 1) & (big.cap - 1);
				big.v[k] = ss->v[i];
				big.n++;
			}
		free(ss->v);
		*ss = big;
	}
	size_t k = seen_slot(ss, bytes, hash);
	while (ss->v[k].path)
		k = (k + 1) & (ss->cap - 1);
	ss->v[k] = (struct seen_file){bytes, hash, iq_xstrdup(path)};
	ss->n++;
}

static int same_slice(struct iq_str a, struct iq_str b)
{
	return !a.n || !b.n || (a.n == b.n && memcmp(a.p, b.p, a.n) == 0);
}

/* An earlier file with the same bytes and the same pod and container (and
 * no node or namespace that differs), from the paths, or NULL. Only
 * container logs are copies: two nodes' identical header-only files, or
 * identical logs whose year comes from different mtimes, are not. */
static const char *seen_copy_of(const struct seen_set *ss, int64_t bytes, uint64_t hash,
				const struct iq_ident *id)
{
	if (!ss->cap || !id->pod.n || !id->container.n)
		return NULL;
	for (size_t k = seen_slot(ss, bytes, hash); ss->v[k].path; k = (k + 1) & (ss->cap - 1)) {
		const struct seen_file *f = &ss->v[k];
		if (f->bytes != bytes || f->hash != hash)
			continue;
		struct iq_ident o;
		iq_path_ident(f->path, &o);
		if (same_slice(o.node, id->node) && same_slice(o.ns, id->ns) &&
		    same_slice(o.pod, id->pod) && same_slice(o.container, id->container))
			return f->path;
	}
	return NULL;
}

static void seen_release(struct seen_set *ss)
{
	for (size_t i = 0; i < ss->cap; i++)
		free(ss->v[i].path);
	free(ss->v);
}

static void warn_escaped(struct pipe *p, int quiet, const char *path, long line, const char *msg,
			 const char *tail)
{
	if (quiet)
		return;
	iq_progress_clear(p->progress);
	char esc[1024], emsg[1024];
	iq_escape_display(esc, sizeof esc, path, strlen(path));
	iq_escape_display(emsg, sizeof emsg, msg, strlen(msg));
	if (line > 0)
		iq_warnf("%s:%ld: %s%s", esc, line, emsg, tail);
	else
		iq_warnf("%s: %s%s", esc, emsg, tail);
}

static int store_batch(struct iq_store *s, int64_t file_id, const struct iq_ident *fid,
		       struct iq_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct iq_batch_rec *br = &b->recs[i];
		int64_t rid;
		int rc = iq_store_record(s, file_id, fid, &br->r, &rid);
		if (!rc && br->unexplained)
			rc = iq_store_error_record(s, rid);
		for (uint32_t k = 0; !rc && k < br->nmatches; k++) {
			const struct iq_batch_match *m = &b->matches[br->first_match + k];
			rc = iq_store_match(s, rid, m->pack, m->signal, iq_batch_captures(b, m));
		}
		if (rc)
			return rc;
	}
	return iq_store_flush(s); /* before the batch's memory goes back */
}

/* Takes the next batch of j, waiting for the parser; NULL once the file is
 * parsed and drained (or the pipeline stopped). */
static struct iq_batch *next_batch(struct pipe *p, struct job *j)
{
	lock(p);
	while (!p->abort && !j->out_head && !j->out_done)
		wait_change(p, WRITER);
	struct iq_batch *b = j->out_head;
	if (b) {
		j->out_head = b->next;
		if (!j->out_head)
			j->out_tail = NULL;
		j->out_bytes -= iq_batch_bytes(b);
		if (j->out_bytes <= OUT_MAX / 2)
			wake(p, PARSERS);
	}
	unlock(p);
	return b;
}

static void batch_put(struct pipe *p, struct iq_batch *b)
{
	lock(p);
	if (p->npool < p->max_jobs * 2) {
		b->next = p->pool;
		p->pool = b;
		p->npool++;
		b = NULL;
	}
	unlock(p);
	iq_batch_free(b);
}

/* j turned out to hold the same bytes as the file at orig: its rows go, and
 * its lines are accounted as skipped, a copy. */
static int forget_copy(struct iq_store *s, int64_t file_id, struct job *j, const char *orig,
		       long matches, struct iq_ingest_stats *st)
{
	int rc = iq_store_file_forget(s, file_id, iq_store_first_record(s, file_id));
	if (rc)
		return rc;
	st->records -= j->fs.records;
	st->matches -= matches;
	j->nskips = 0;
	j->fs.lines_parsed = 0;
	j->fs.records = 0;
	j->fs.lines_skipped = j->fs.lines_read;
	if (j->fs.lines_read)
		rc = iq_store_skip(s, file_id, "a copy of another file of the bundle", j->fs.lines_read, 1,
				   orig, strlen(orig));
	return rc;
}

static int write_file(struct pipe *p, struct iq_store *s, struct job *j, int quiet,
		      struct iq_ingest_stats *st)
{
	struct iq_ident fid;
	iq_path_ident(j->path, &fid);
	int64_t file_id;
	int already = j->already;
	int rc = 0;
	if (!already) {
		rc = iq_store_file_begin(s, j->path, p->bundle, j->f ? j->f->name : NULL, j->why,
					 j->mtime, &fid, &file_id, &already);
		if (rc)
			return rc;
	}
	if (already) {
		/* drain what a parser may have made of it anyway */
		struct iq_batch *b;
		while ((b = next_batch(p, j)))
			batch_put(p, b);
		st->files_already++;
		st->files_done++;
		return 0;
	}
	st->files++;
	const char *status = "done";
	const char *error = NULL;
	if (!j->f && j->head_err) {
		/* nothing readable before the error: the error is the news, not
		 * an "empty" file */
		status = "error";
		error = j->read_msg;
		snprintf(st->last_why, sizeof st->last_why, "%.200s", j->read_msg);
		char tail[64];
		snprintf(tail, sizeof tail, " (read stopped after %lld bytes)", (long long)j->bytes);
		/* data lost: said even with --quiet */
		warn_escaped(p, 0, j->path, 0, j->read_msg, tail);
		st->lost++;
	} else if (!j->f) {
		status = j->bytes == 0 ? "empty"
			 : strncmp(j->why, "binary", 6) == 0 ? "binary" : "unknown";
		snprintf(st->last_why, sizeof st->last_why, "%s", j->why);
	} else {
		st->files_known++;
		struct iq_batch *b;
		long matches = 0;
		while ((b = next_batch(p, j))) {
			st->records += (long)b->n;
			st->matches += (long)b->nmatches;
			matches += (long)b->nmatches;
			rc = store_batch(s, file_id, &fid, b);
			batch_put(p, b);
			if (rc)
				return rc;
			progress_tick(p, 0);
		}
		lock(p);
		int abort = p->abort;
		unlock(p);
		rc = j->parse_rc;
		/* interrupted: the file stays 'reading', so a rerun reads it again */
		if (abort && !rc)
			rc = IQ_ERR_INTR;
		if (rc == IQ_ERR_NOMEM || rc == IQ_ERR_INTR)
			return rc;
		if (rc || j->read_err || j->head_err) {
			status = "error";
			error = (j->read_err || j->head_err) ? j->read_msg : j->parse_msg;
			char tail[96];
			snprintf(tail, sizeof tail, " (read stopped; %ld lines kept)", j->fs.lines_read);
			/* a read error lost the rest of the file: said even with --quiet */
			int lost = j->read_err || j->head_err;
			warn_escaped(p, quiet && !lost, j->path, j->fs.lines_read, error, tail);
			st->lost += lost;
		} else if (j->cut) {
			/* the walker has a problem row saying which limit */
			status = "cut";
			snprintf(j->parse_msg, sizeof j->parse_msg,
				 "read up to a size limit: %lld bytes of it kept", (long long)j->bytes);
			error = j->parse_msg;
		} else if (j->bytes > 0) {
			const char *orig = seen_copy_of(p->seen, j->bytes, j->hash, &fid);
			if (orig) {
				rc = forget_copy(s, file_id, j, orig, matches, st);
				if (!rc)
					rc = iq_store_file_inherit_restart(s, orig, fid.restart);
				if (rc)
					return rc;
				status = "duplicate";
				snprintf(j->parse_msg, sizeof j->parse_msg, "the same bytes as %s", orig);
				error = j->parse_msg;
			} else {
				seen_add(p->seen, j->bytes, j->hash, j->path);
			}
		}
	}
	for (int i = 0; i < j->nskips; i++) {
		struct skip_agg *a = &j->skips[i];
		rc = iq_store_skip(s, file_id, a->reason, a->lines, a->first,
				   a->exn ? a->example : NULL, a->exn);
		if (rc)
			return rc;
	}
	st->bytes += j->bytes;
	rc = iq_store_file_end(s, file_id, &j->fs, j->bytes, status, error);
	if (!rc)
		st->files_done++;
	return rc;
}

/* PCRE2 limit hits of one signal, summed over the parsers' rulesets; the
 * first record is the earliest in bundle order, whichever parser met it. */
struct limit_agg {
	char file[512], signal[128], limits[64], first[1024];
	int line, col;
	long lines;
	long first_rank;            /* bundle order of first's file; LONG_MAX none */
};

struct limit_set {
	struct limit_agg *v;
	size_t n;
	char **order;               /* the bundle's files, in the order written */
	size_t norder;
};

static long rank_of(const struct limit_set *ls, const char *first)
{
	for (size_t i = 0; i < ls->norder; i++) {
		size_t k = strlen(ls->order[i]);
		if (strncmp(first, ls->order[i], k) == 0 && first[k] == ':')
			return (long)i;
	}
	return LONG_MAX;
}

static void on_limit_hit(void *u, const struct iq_limit_hit *h)
{
	struct limit_set *ls = u;
	struct limit_agg *a = NULL;
	for (size_t i = 0; i < ls->n && !a; i++)
		if (strcmp(ls->v[i].file, h->file) == 0 && strcmp(ls->v[i].signal, h->signal) == 0)
			a = &ls->v[i];
	if (!a) {
		ls->v = iq_xrealloc(ls->v, (ls->n + 1) * sizeof *ls->v);
		a = &ls->v[ls->n++];
		memset(a, 0, sizeof *a);
		snprintf(a->file, sizeof a->file, "%s", h->file);
		snprintf(a->signal, sizeof a->signal, "%s", h->signal);
		a->line = h->line;
		a->col = h->col;
		a->first_rank = LONG_MAX;
	}
	a->lines += h->lines;
	long r = h->first[0] ? rank_of(ls, h->first) : LONG_MAX;
	if (r < a->first_rank || (!a->limits[0])) {
		if (r < a->first_rank) {
			a->first_rank = r;
			snprintf(a->first, sizeof a->first, "%s", h->first);
		}
		snprintf(a->limits, sizeof a->limits, "%s", h->limits);
	}
}

/* Warns at each regex that hit a limit and stores a problem under its
 * pack's file, so the coverage shows the lines it could not decide. */
static int report_limits(struct iq_store *s, struct limit_set *ls, int quiet,
			 struct iq_progress *progress)
{
	int rc = 0;
	for (size_t i = 0; i < ls->n && !rc; i++) {
		const struct limit_agg *a = &ls->v[i];
		char msg[1400];
		snprintf(msg, sizeof msg, "signal '%s': PCRE2 %s hit on %ld line%s%s%s%s", a->signal,
			 a->limits, a->lines, a->lines == 1 ? "" : "s", a->first[0] ? " (first: " : "",
			 a->first, a->first[0] ? ")" : "");
		if (!quiet) {
			char esc[1500];
			iq_progress_clear(progress);
			iq_escape_display(esc, sizeof esc, msg, strlen(msg));
			fprintf(stderr, "%s:%d:%d: warning: %s\n", a->file, a->line, a->col, esc);
		}
		rc = iq_store_problem(s, a->file, msg);
	}
	return rc;
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
	double wall0 = wall_now(), cpu0 = thread_cpu();
	struct pipe p;
	memset(&p, 0, sizeof p);
	pthread_mutex_init(&p.mu, NULL);
	for (int i = 0; i < 3; i++)
		pthread_cond_init(&p.cv[i], NULL);
	p.bundle_path = path;
	p.bundle = strcmp(path, "-") == 0 ? "stdin" : base_name(path); /* as the walker names it */
	p.wo.problem = walk_problem;
	p.wo.u = &p;
	p.progress = io->progress;
	p.st = st;
	p.read_total = -1;
	if (io->progress) {
		struct stat bst;
		p.wo.progress = walk_progress;
		if ((strcmp(path, "-") == 0 ? fstat(STDIN_FILENO, &bst) : stat(path, &bst)) == 0 &&
		    S_ISREG(bst.st_mode))
			p.read_total = bst.st_size;
	}
	p.wo.max_member_bytes = io->max_member_bytes;
	p.wo.max_total_bytes = io->max_bundle_bytes;
	p.timing = io->timing != NULL;
	p.scope = io->scoped ? &io->scope : NULL;
	struct seen_set seen = {NULL, 0, 0};
	p.seen = &seen;
	int nparsers = io->jobs > 0 ? io->jobs : 1;
	p.max_jobs = nparsers + 4;
	p.done = iq_store_done_paths(s, &p.ndone);

	struct parser *ws = iq_xcalloc((size_t)nparsers, sizeof *ws);
	int rc = 0;
	for (int i = 0; i < nparsers; i++) {
		ws[i].p = &p;
		ws[i].rs = rs;
		if (i > 0) {
			/* matching keeps state in the ruleset: one copy per thread */
			iq_rules_init(&ws[i].own);
			ws[i].own_loaded = 1;
			if (iq_load_rules_quiet(&ws[i].own, io->rules, io->nrules, d)) {
				rc = IQ_ERR_RULES;
				break;
			}
			ws[i].rs = &ws[i].own;
		}
		/* the appendix's error words, in the literal pass of matching */
		iq_rules_watch(ws[i].rs, iq_error_word, IQ_ERROR_WORDS);
	}
	pthread_t walker;
	int nstarted = 0, walker_started = 0;
	if (!rc && pthread_create(&walker, NULL, walker_main, &p) == 0)
		walker_started = 1;
	else if (!rc)
		rc = iq_diag_set(d, IQ_ERR_INTERNAL, "cannot start the walker thread");
	for (int i = 0; !rc && i < nparsers; i++) {
		if (pthread_create(&ws[i].tid, NULL, parser_main, &ws[i]) != 0) {
			rc = iq_diag_set(d, IQ_ERR_INTERNAL, "cannot start a parser thread");
			break;
		}
		nstarted++;
	}
	if (rc) {
		lock(&p);
		p.abort = 1;
		wake(&p, EVERYONE);
		unlock(&p);
	}

	/* the writer: jobs in bundle order */
	struct limit_set limits = {NULL, 0, NULL, 0};
	while (!rc) {
		lock(&p);
		while (!p.head && !p.walk_done && !p.abort)
			wait_change(&p, WRITER);
		struct job *j = p.head;
		int stop = p.abort && (!j || !j->out_done);
		unlock(&p);
		if (!j || stop) {
			if (stop)
				rc = IQ_ERR_INTR;
			break;
		}
		if (j->kind == JOB_PROBLEM) {
			/* --quiet keeps the ones that say data was lost or cut */
			warn_escaped(&p, io->quiet && j->problem_kind == IQ_PROBLEM_SKIPPED, j->path, 0, j->msg, "");
			st->lost += j->problem_kind == IQ_PROBLEM_LOST;
			st->cut += j->problem_kind == IQ_PROBLEM_CUT;
			rc = iq_store_problem(s, j->path, j->msg);
		} else {
			if (j->f && !j->already) {
				limits.order = iq_xrealloc(limits.order,
							   (limits.norder + 1) * sizeof *limits.order);
				limits.order[limits.norder++] = iq_xstrdup(j->path);
			}
			rc = write_file(&p, s, j, io->quiet, st);
		}
		lock(&p);
		p.head = j->next;
		if (!p.head)
			p.tail = NULL;
		p.njobs--;
		if (rc)
			p.abort = 1;
		wake(&p, rc ? EVERYONE : WALKER);
		unlock(&p);
		job_free(j);
		progress_tick(&p, 0);
	}
	if (rc) {
		lock(&p);
		p.abort = 1;
		wake(&p, EVERYONE);
		unlock(&p);
	}
	if (walker_started)
		pthread_join(walker, NULL);
	for (int i = 0; i < nstarted; i++)
		pthread_join(ws[i].tid, NULL);
	/* the bundle's last state stays on the line until the caller clears it */
	progress_tick(&p, 1);
	/* regexes that hit a PCRE2 limit in this bundle: the lines they could
	 * not decide are a gap in the coverage */
	for (int i = 0; i < nparsers; i++) {
		iq_rules_set_source(ws[i].rs, NULL);
		iq_rules_limit_hits(ws[i].rs, on_limit_hit, &limits, 1);
	}
	if (rc != IQ_ERR_DB) {
		int lrc = report_limits(s, &limits, io->quiet, io->progress);
		if (!rc)
			rc = lrc;
	}
	for (size_t i = 0; i < limits.norder; i++)
		free(limits.order[i]);
	free(limits.order);
	free(limits.v);

	/* what the walker said comes first: it explains the rest */
	if (p.walk_rc && p.walk_rc != IQ_ERR_INTR && rc != IQ_ERR_DB) {
		rc = p.walk_rc;
		*d = p.walk_d;
	} else if (!rc && p.walk_rc) {
		rc = p.walk_rc;
	}
	if (!rc && iq_interrupted())
		rc = IQ_ERR_INTR;
	if (rc == IQ_ERR_DB)
		iq_diag_set(d, rc, "database error while ingesting '%s'", path);

	if (io->timing) {
		struct iq_stage_times *t = io->timing;
		t->read_s += p.walk_cpu_s;
		for (int i = 0; i < nstarted; i++) {
			double busy = ws[i].busy_wall - ws[i].wait_wall;
			double share = busy > 0 ? ws[i].match_wall / busy : 0;
			share = share > 1 ? 1 : share;
			t->parse_s += ws[i].cpu_s * (1 - share);
			t->match_s += ws[i].cpu_s * share;
		}
		t->store_s += thread_cpu() - cpu0;
		t->ingest_wall_s += wall_now() - wall0;
	}
	while (p.head) {
		struct job *j = p.head;
		p.head = j->next;
		job_free(j);
	}
	while (p.pool) {
		struct iq_batch *b = p.pool;
		p.pool = b->next;
		iq_batch_free(b);
	}
	for (int i = 0; i < nparsers; i++)
		if (ws[i].own_loaded)
			iq_rules_release(&ws[i].own);
	free(ws);
	iq_store_paths_free(p.done, p.ndone);
	seen_release(&seen);
	for (int i = 0; i < 3; i++)
		pthread_cond_destroy(&p.cv[i]);
	pthread_mutex_destroy(&p.mu);
	return rc;
}

int iq_load_rules_quiet(struct iq_ruleset *rs, const char *const *paths, int npaths,
			struct iq_diag *d)
{
	int rc = iq_rules_load_builtin(rs, d);
	for (int i = 0; rc == 0 && i < npaths; i++)
		rc = iq_rules_load_path(rs, paths[i], d);
	return rc;
}

int iq_load_rules(struct iq_ruleset *rs, const char *const *paths, int npaths)
{
	struct iq_diag d = {{0}};
	if (iq_load_rules_quiet(rs, paths, npaths, &d)) {
		fprintf(stderr, "%s\n", d.msg);
		return IQ_EXIT_RULES;
	}
	return 0;
}

int iq_default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

void iq_ingest_opts_init(struct iq_ingest_opts *o)
{
	memset(o, 0, sizeof *o);
	o->jobs = iq_default_jobs();
	o->scope.since = o->scope.until = IQ_TIME_NONE;
}
