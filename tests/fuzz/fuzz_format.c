/* fuzz_format.c: the libFuzzer target of one input format, chosen at build
 * time with -DIQ_FUZZ_FORMAT="cri" (binary fuzz_cri). It runs the format's
 * sniffer and the parser through iq_parse_run, touches every byte a record
 * points to, and checks the line accounting and that feeding the input in
 * small chunks gives the same records as feeding it whole. */
#include <string.h>

#include "../../analyzer/parse/parse.h"
#include "fuzz.h"

#ifndef IQ_FUZZ_FORMAT
#error "build with -DIQ_FUZZ_FORMAT=\"<format name>\""
#endif

/* A file of the kubelet layout, so that file_id is filled in. */
#define KUBELET_PATH "nodes/node-a/var/log/pods/default_web-0_0a1b2c3d-1111/app/0.log"
/* 2024-05-01T12:00:00Z, an --mtime-like reference for year inference. */
#define FIXED_MTIME (1714564800LL * IQ_NS_PER_SEC)

/* What one run's sink saw. */
struct seen {
	uint64_t hash;          /* records and skips, in order */
	long records;
	long record_lines;      /* sum of nlines */
	long skipped;           /* lines skip() accounted, unaccounted included */
	long unaccounted;       /* of which the driver added */
	long max_line;          /* last line a record or skip claimed */
	long max_record_line;   /* last line a record claimed */
};

static void touch(struct seen *s, struct iq_str v)
{
	FUZZ_CHECK(v.p != NULL || v.n == 0);
	fuzz_hash(&s->hash, &v.n, sizeof v.n);
	fuzz_hash(&s->hash, v.p, v.n);
}

static void touch_num(struct seen *s, double v)
{
	/* NAN has many spellings; hash one */
	if (v != v)
		v = NAN;
	fuzz_hash(&s->hash, &v, sizeof v);
}

static void touch_int(struct seen *s, int64_t v)
{
	fuzz_hash(&s->hash, &v, sizeof v);
}

static void touch_ident(struct seen *s, const struct iq_ident *id)
{
	touch(s, id->node);
	touch(s, id->ns);
	touch(s, id->pod);
	touch(s, id->container);
	touch(s, id->pod_uid);
	touch(s, id->container_id);
	FUZZ_CHECK(id->restart >= -1);
	touch_int(s, id->restart);
}

static int on_record(void *u, const struct iq_record *r)
{
	struct seen *s = u;
	FUZZ_CHECK(r->kind >= IQ_KIND_LOG && r->kind <= IQ_KIND_CONFIG);
	FUZZ_CHECK(r->line >= 1);
	FUZZ_CHECK(r->nlines >= 1);
	FUZZ_CHECK(r->ts_how >= IQ_TS_NONE && r->ts_how <= IQ_TS_ASSUMED_ZONE);
	/* "IQ_TS_NONE: the record has no time"; the reverse does not hold:
	 * a boot-relative time without a boot time is no UTC time */
	FUZZ_CHECK(r->ts_how != IQ_TS_NONE || r->ts == IQ_TIME_NONE);
	s->records++;
	s->record_lines += r->nlines;
	/* a traceback is placed at its exception line and spans from
	 * first_line (parse.h) */
	FUZZ_CHECK(r->first_line == 0 || (r->first_line >= 1 && r->first_line < r->line));
	long last = (r->first_line ? r->first_line : r->line) + r->nlines - 1;
	if (last > s->max_record_line)
		s->max_record_line = last;
	if (last > s->max_line)
		s->max_line = last;

	touch_int(s, r->kind);
	touch_int(s, r->line);
	touch_int(s, r->nlines);
	touch_int(s, r->ts);
	touch_int(s, r->ts_how);
	touch(s, r->ts_raw);
	touch(s, r->stream);
	touch(s, r->severity);
	touch(s, r->text);
	touch_ident(s, &r->id);
	switch (r->kind) {
	case IQ_KIND_HTTP: {
		const struct iq_http *h = &r->u.http;
		touch(s, h->client);
		touch(s, h->method);
		touch(s, h->path);
		touch(s, h->proto);
		touch(s, h->host);
		touch(s, h->user_agent);
		touch(s, h->request_id);
		touch_int(s, h->status);
		touch_int(s, h->bytes_sent);
		touch_num(s, h->duration_s);
		FUZZ_CHECK(h->n_upstreams >= 0 && h->n_upstreams <= IQ_MAX_UPSTREAMS);
		for (int i = 0; i < h->n_upstreams; i++) {
			touch(s, h->upstream_addr[i]);
			touch_int(s, h->upstream_status[i]);
			touch_num(s, h->upstream_time_s[i]);
		}
		touch(s, h->upstream_name);
		break;
	}
	case IQ_KIND_GPU: {
		const struct iq_gpu *g = &r->u.gpu;
		touch_int(s, g->index);
		touch(s, g->uuid);
		touch(s, g->pci_bus);
		touch(s, g->name);
		touch_num(s, g->mem_used_mib);
		touch_num(s, g->mem_total_mib);
		touch_num(s, g->mem_free_mib);
		touch_num(s, g->util_gpu_pct);
		touch_num(s, g->util_mem_pct);
		touch_num(s, g->temp_c);
		touch_num(s, g->power_w);
		break;
	}
	case IQ_KIND_EVENT: {
		const struct iq_event *e = &r->u.event;
		touch(s, e->type);
		touch(s, e->reason);
		touch(s, e->message);
		touch(s, e->object_kind);
		touch(s, e->object_name);
		touch(s, e->object_ns);
		touch(s, e->source);
		touch(s, e->host);
		touch_int(s, e->count);
		touch_int(s, e->first_ts);
		touch_int(s, e->last_ts);
		break;
	}
	case IQ_KIND_KERNEL: {
		const struct iq_kernel *k = &r->u.kernel;
		touch(s, k->host);
		touch(s, k->facility);
		touch_num(s, k->boot_s);
		break;
	}
	case IQ_KIND_POD: {
		const struct iq_pod *q = &r->u.pod;
		touch(s, q->ns);
		touch(s, q->name);
		touch(s, q->uid);
		touch(s, q->node);
		touch(s, q->pod_ip);
		touch(s, q->phase);
		touch(s, q->container);
		touch(s, q->container_id);
		touch(s, q->image);
		touch_int(s, q->restart_count);
		touch_int(s, q->ready);
		touch(s, q->state);
		touch(s, q->reason);
		touch_int(s, q->exit_code);
		touch_int(s, q->started_at);
		touch_int(s, q->finished_at);
		touch(s, q->last_reason);
		touch_int(s, q->last_exit_code);
		touch_int(s, q->last_started_at);
		touch_int(s, q->last_finished_at);
		break;
	}
	case IQ_KIND_CONFIG: {
		const struct iq_config *c = &r->u.config;
		touch(s, c->scope);
		touch(s, c->key);
		touch(s, c->value);
		touch(s, c->source);
		break;
	}
	case IQ_KIND_LOG:
		break;
	}
	return 0;
}

static const char unaccounted[] = "unaccounted by the parser";

static void on_skip(void *u, long first, long count, const char *reason,
		    const char *text, size_t n)
{
	struct seen *s = u;
	FUZZ_CHECK(reason != NULL);
	FUZZ_CHECK(text != NULL || n == 0);
	fuzz_hash(&s->hash, reason, strlen(reason));
	fuzz_hash(&s->hash, text, n);
	s->skipped += count;
	if (strcmp(reason, unaccounted) == 0) {
		/* the driver's own: first is not a real range start */
		s->unaccounted += count;
		return;
	}
	FUZZ_CHECK(first >= 1);
	FUZZ_CHECK(count >= 1);
	touch_int(s, first);
	touch_int(s, count);
	if (first + count - 1 > s->max_line)
		s->max_line = first + count - 1;
}

/* Hands the rest of the input out in chunks of 1..13 bytes, so that lines
 * and records straddle reads. */
struct chunks {
	const char *p;
	size_t n, off;
	unsigned step;
};

static ssize_t read_chunk(void *src, void *buf, size_t n, struct iq_diag *d)
{
	struct chunks *c = src;
	IQ_UNUSED(d);
	size_t take = 1 + c->step++ % 13;
	if (take > n)
		take = n;
	if (take > c->n - c->off)
		take = c->n - c->off;
	memcpy(buf, c->p + c->off, take);
	c->off += take;
	return (ssize_t)take;
}

/* Lines the splitter makes of data: one per LF, plus an unterminated last
 * line (inputs here are far below IQ_MAX_LINE, so nothing is cut). */
static long count_lines(const char *p, size_t n)
{
	long lines = 0;
	for (size_t i = 0; i < n; i++)
		lines += p[i] == '\n';
	if (n && p[n - 1] != '\n')
		lines++;
	return lines;
}

/* Runs f over data; head bytes are given as the head, the rest through a
 * chunked reader. Checks the accounting and returns what the sink saw. */
static struct seen run(const struct iq_format *f, const char *data, size_t size,
		       size_t head, int64_t mtime, const char *path)
{
	struct seen s = {.hash = 1469598103934665603ull};
	struct iq_parse_ctx ctx;
	struct iq_file_stats st;
	struct iq_diag d = {{0}};
	struct chunks c = {.p = data, .n = size, .off = head};

	memset(&ctx, 0, sizeof ctx);
	ctx.path = path;
	ctx.mtime = mtime;
	ctx.file_id.restart = -1;
	iq_path_ident(path, &ctx.file_id);
	ctx.sink.record = on_record;
	ctx.sink.skip = on_skip;
	ctx.sink.u = &s;
	int rc = iq_parse_run(f, &ctx, data, head, head < size ? read_chunk : NULL, &c, &st, &d);

	/* the sink is the caller's again */
	FUZZ_CHECK(ctx.sink.record == on_record && ctx.sink.u == &s);
	FUZZ_CHECK(memchr(d.msg, '\0', sizeof d.msg) != NULL);
	/* our sink never fails and nothing is read from outside, so an error
	 * can only be a parser's, and bad lines are never fatal */
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(st.lines_read == count_lines(data, size));
	FUZZ_CHECK(st.cut_lines == 0);
	/* the driver's counts are what the sink saw */
	FUZZ_CHECK(st.records == s.records);
	FUZZ_CHECK(st.lines_skipped == s.skipped);
	/* the driver counts a line that holds several records once, so it may
	 * report fewer parsed lines than the records' nlines add up to */
	FUZZ_CHECK(st.lines_parsed <= s.record_lines);
	/* parse.h: read = parsed + skipped. The driver tops a shortfall up
	 * with "unaccounted" skips and trims parsed lines, so only skipping
	 * more lines than there are (or skipping a line twice) breaks this. */
	FUZZ_CHECK(st.lines_parsed + st.lines_skipped == st.lines_read);
	if (getenv("IQ_FUZZ_STRICT"))
		FUZZ_CHECK(s.unaccounted == 0);
	/* records and skips name lines of the file */
	FUZZ_CHECK(s.max_line <= st.lines_read);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct iq_format *f;
	const char *p = (const char *)data;
	char why[256];

	if (!f) {
		f = iq_format_find(IQ_FUZZ_FORMAT);
		FUZZ_CHECK(f != NULL);
	}

	/* the sniffer sees any bytes (iq_sniff filters binary ones first) */
	memset(why, 'x', sizeof why);
	why[0] = '\0';
	int score = f->sniff(KUBELET_PATH, p, size, why, sizeof why);
	FUZZ_CHECK(score >= 0 && score <= 100);
	FUZZ_CHECK(memchr(why, '\0', sizeof why) != NULL);

	struct seen whole = run(f, p, size, size, FIXED_MTIME, KUBELET_PATH);
	/* the same bytes in small reads: records must not depend on where
	 * reads end (a parser keeping a pointer into an earlier line would
	 * see a reused buffer here) */
	size_t head = size ? (unsigned char)p[0] % (size < 64 ? size : 64) : 0;
	struct seen split = run(f, p, size, head, FIXED_MTIME, KUBELET_PATH);
	FUZZ_CHECK(split.records == whole.records);
	FUZZ_CHECK(split.skipped == whole.skipped);
	FUZZ_CHECK(split.hash == whole.hash);
	/* no mtime and no identity from the path */
	run(f, p, size, size, IQ_TIME_NONE, "fuzz.log");
	return 0;
}
