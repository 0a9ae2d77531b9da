/* test_parse.c: the line splitter, the parse driver's accounting, path
 * identity, sizes with units, JSON string decoding, binary sniffing, and
 * Python traceback joining (the joiner itself and through plain). */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../analyzer/bundle/bundle.h"
#include "../../analyzer/parse/parse.h"
#include "../../analyzer/parse/engine_stats.h"
#include "../../analyzer/parse/traceback.h"

struct collect {
	char lines[16][64];
	long nums[16];
	int trunc[16];
	int n;
};

static int on_line(void *u, long lineno, const char *s, size_t n, int truncated)
{
	struct collect *c = u;
	if (c->n < 16) {
		snprintf(c->lines[c->n], 64, "%.*s", (int)n, s);
		c->nums[c->n] = lineno;
		c->trunc[c->n] = truncated;
		c->n++;
	}
	return 0;
}

static void test_lines_split_across_chunks_and_crlf(void **state)
{
	(void)state;
	struct iq_lines l;
	struct collect c = {0};
	iq_lines_init(&l, 100);
	iq_lines_feed(&l, "ab", 2, on_line, &c);
	iq_lines_feed(&l, "c\r\nde\n\nf", 8, on_line, &c);
	iq_lines_finish(&l, on_line, &c);
	iq_lines_release(&l);
	assert_int_equal(c.n, 4);
	assert_string_equal(c.lines[0], "abc");
	assert_string_equal(c.lines[1], "de");
	assert_string_equal(c.lines[2], "");
	assert_string_equal(c.lines[3], "f");
	assert_int_equal(c.nums[3], 4);
}

/* Runs of 8 NULs or more (zeroed blocks) are dropped and counted, the
 * text around them handed out under the line's one number (a run across a
 * chunk's edge too); a few NULs are bytes of their line; a line of NULs
 * alone comes out once, empty, flagged. */
static void test_lines_nul_runs_are_dropped_and_counted(void **state)
{
	(void)state;
	struct iq_lines l;
	struct collect c = {0};
	iq_lines_init(&l, 100);
	static const char a[] = "one\ncut\0\0\0\0\0";
	static const char b[] = "\0\0\0\0\0\0next\r\nhas\0two\0nuls\n\0\0\0\0\0\0\0\0\0\0\nend\n";
	iq_lines_feed(&l, a, sizeof a - 1, on_line, &c);
	iq_lines_feed(&l, b, sizeof b - 1, on_line, &c);
	iq_lines_finish(&l, on_line, &c);
	assert_int_equal(l.nul_bytes, 11 + 10);
	assert_int_equal(l.nul_lines, 2);
	iq_lines_release(&l);
	assert_int_equal(c.n, 6);
	assert_string_equal(c.lines[0], "one");
	assert_string_equal(c.lines[1], "cut");
	assert_string_equal(c.lines[2], "next");
	assert_int_equal(c.nums[1], 2);
	assert_int_equal(c.nums[2], 2);
	assert_int_equal(c.trunc[2], 0);
	assert_int_equal(c.nums[3], 3);   /* "has\0two\0nuls", kept whole */
	assert_int_equal(c.nums[4], 4);
	assert_string_equal(c.lines[4], "");
	assert_int_equal(c.trunc[4], IQ_LINE_NUL);
	assert_string_equal(c.lines[5], "end");
	assert_int_equal(c.nums[5], 5);
}

static void test_lines_cut_at_cap_and_resync(void **state)
{
	(void)state;
	struct iq_lines l;
	struct collect c = {0};
	iq_lines_init(&l, 4);
	iq_lines_feed(&l, "0123456", 7, on_line, &c);
	iq_lines_feed(&l, "789\nok\n", 7, on_line, &c);
	iq_lines_feed(&l, "abcdefgh\nz", 10, on_line, &c);
	iq_lines_finish(&l, on_line, &c);
	assert_int_equal(l.cut_lines, 2);
	iq_lines_release(&l);
	assert_int_equal(c.n, 4);
	assert_string_equal(c.lines[0], "0123");
	assert_int_equal(c.trunc[0], 1);
	assert_string_equal(c.lines[1], "ok");
	assert_int_equal(c.nums[1], 2);
	assert_string_equal(c.lines[2], "abcd");
	assert_string_equal(c.lines[3], "z");
	assert_int_equal(c.nums[3], 4);
}

static void test_sizes_with_units(void **state)
{
	(void)state;
	assert_int_equal(iq_parse_size("2.00 GiB", 8), 2147483648LL);
	assert_int_equal(iq_parse_size("512MiB", 6), 536870912LL);
	assert_int_equal(iq_parse_size("1234 bytes", 10), 1234);
	assert_int_equal(iq_parse_size("1.5 GB", 6), 1500000000LL);
	assert_int_equal(iq_parse_size("34,952", 6), 34952);
	assert_int_equal(iq_parse_size("7406166528", 10), 7406166528LL);
	assert_int_equal(iq_parse_size("GiB", 3), -1);
	assert_int_equal(iq_parse_size("12 apples", 9), -1);
}

static void test_json_unescape(void **state)
{
	(void)state;
	struct iq_buf b;
	iq_buf_init(&b);
	const char *in = "a\\tb\\n\\u003c\\u001b\\\"\\\\\\ud83d\\ude00\\x";
	assert_int_equal(iq_json_unescape(&b, in, strlen(in)), 0);
	assert_string_equal(b.p, "a\tb\n<\x1b\"\\\xf0\x9f\x98\x80\\x");
	iq_buf_reset(&b);
	/* a lone surrogate becomes U+FFFD, a cut escape stays as written */
	assert_int_equal(iq_json_unescape(&b, "\\ud800z\\u12", 11), 0);
	assert_string_equal(b.p, "\xef\xbf\xbdz\\u12");
	iq_buf_release(&b);
}

static void assert_str(struct iq_str s, const char *want)
{
	char got[256];
	snprintf(got, sizeof got, "%.*s", (int)s.n, s.p ? s.p : "");
	assert_string_equal(got, want);
}

static void test_path_identity_from_kubelet_layouts(void **state)
{
	(void)state;
	struct iq_ident id;
	iq_path_ident("b.tgz!incident/nodes/gpu-node-1/var/log/pods/inference_vllm-0_1234-abcd/vllm/3.log", &id);
	assert_str(id.node, "gpu-node-1");
	assert_str(id.ns, "inference");
	assert_str(id.pod, "vllm-0");
	assert_str(id.pod_uid, "1234-abcd");
	assert_str(id.container, "vllm");
	assert_int_equal(id.restart, 3);
	iq_path_ident("b.tgz!nodes/n2.tar.gz!var/log/containers/vllm-1_inference_vllm-0123abcd.log", &id);
	assert_str(id.pod, "vllm-1");
	assert_str(id.ns, "inference");
	assert_str(id.container, "vllm");
	assert_str(id.container_id, "0123abcd");
	assert_str(id.node, "n2");
	iq_path_ident("b.tgz!incident/nodes/gpu-node-3.tar.gz!gpu/nvidia-smi.csv", &id);
	assert_str(id.node, "gpu-node-3");
	iq_path_ident("b.tgz!incident/nodes/gpu-node-3.tar.gz!var/log/pods/ns_p_u/c/0.log", &id);
	assert_str(id.node, "gpu-node-3");
	assert_str(id.pod, "p");
	iq_path_ident("b.tgz!worker-9.tgz!var/log/kern.log", &id);
	assert_str(id.node, "worker-9");
	iq_path_ident("bundle/worker-7/var/log/kern.log", &id);
	assert_str(id.node, "worker-7");
	iq_path_ident("bundle/var/log/kern.log", &id);
	assert_str(id.node, "");
	iq_path_ident("x.tgz!var/log/pods/0000-1111/vllm_2.log", &id);
	assert_str(id.pod_uid, "0000-1111");
	assert_str(id.container, "vllm");
	assert_int_equal(id.restart, 2);
	iq_path_ident("x.tgz!var/log/pods/ns_p_u/c/0.log.20261130-140203.gz", &id);
	assert_int_equal(id.restart, 0);
}

static void test_sniff_binary_and_empty(void **state)
{
	(void)state;
	char why[256];
	char bin[512];
	memset(bin, 0, sizeof bin);
	assert_null(iq_sniff("x", bin, sizeof bin, why, sizeof why));
	assert_memory_equal(why, "binary", 6);
	assert_null(iq_sniff("x", "", 0, why, sizeof why));
	assert_string_equal(why, "empty file");
	const struct iq_format *f = iq_sniff("x", "hello world\n", 12, why, sizeof why);
	assert_non_null(f);
	assert_string_equal(f->name, "plain");
}

struct recs {
	int n;
	long line[8], nlines[8], first[8];
	int64_t ts[8];
	enum iq_ts_how how[8];
	char text[8][256];
	long skipped;
};

static int rec(void *u, const struct iq_record *r)
{
	struct recs *c = u;
	if (c->n < 8) {
		c->line[c->n] = r->line;
		c->nlines[c->n] = r->nlines;
		c->first[c->n] = r->first_line;
		c->ts[c->n] = r->ts;
		c->how[c->n] = r->ts_how;
		snprintf(c->text[c->n], 256, "%.*s", (int)r->text.n, r->text.p);
	}
	c->n++;
	return 0;
}

static void on_skip(void *u, long first, long count, const char *reason, const char *t, size_t n)
{
	(void)first; (void)reason; (void)t; (void)n;
	struct recs *c = u;
	c->skipped += count;
}

static void test_plain_joins_traceback_and_accounts_lines(void **state)
{
	(void)state;
	const char *in =
		"2026-11-30T14:12:03Z INFO serving\n"
		"Traceback (most recent call last):\n"
		"  File \"x.py\", line 1, in <module>\n"
		"    run()\n"
		"torch.OutOfMemoryError: CUDA out of memory.\n"
		"\n"
		"after\n";
	struct recs c = {0};
	struct iq_parse_ctx ctx = {.path = "t.log", .mtime = IQ_TIME_NONE};
	ctx.sink.record = rec;
	ctx.sink.skip = on_skip;
	ctx.sink.u = &c;
	struct iq_file_stats st;
	struct iq_diag d;
	assert_int_equal(iq_parse_run(iq_format_find("plain"), &ctx, in, strlen(in), NULL, NULL, &st, &d), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.text[0], "INFO serving");
	/* placed at the exception line, spanning from the header */
	assert_int_equal(c.line[1], 5);
	assert_int_equal(c.first[1], 2);
	assert_int_equal(c.nlines[1], 4);
	assert_string_equal(c.text[1], "torch.OutOfMemoryError: CUDA out of memory.\n"
			    "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    run()");
	assert_int_equal(c.first[0], 0);
	assert_int_equal(c.line[2], 7);
	assert_int_equal(st.lines_read, 7);
	assert_int_equal(st.lines_parsed, 6);
	assert_int_equal(st.lines_skipped, 1);
	assert_int_equal(st.records, 3);
}

/* Runs format name over in (mtime as given) into c. */
static void run_format(const char *name, const char *in, int64_t mtime, struct recs *c)
{
	struct iq_parse_ctx ctx = {.path = "t.log", .mtime = mtime};
	ctx.sink.record = rec;
	ctx.sink.skip = on_skip;
	ctx.sink.u = c;
	struct iq_file_stats st;
	struct iq_diag d;
	assert_int_equal(iq_parse_run(iq_format_find(name), &ctx, in, strlen(in), NULL, NULL, &st, &d), 0);
}

/* Lines that look like dmesg's (a comma before the fraction, a ctime
 * date in brackets) but are not: a Java or Python logger, Apache httpd. */
static void test_sniff_keeps_lookalikes_out_of_kernel(void **state)
{
	(void)state;
	static const char *const heads[] = {
		"2025-01-24T07:00:30,139 INFO [main] App : Starting App v3.0.7\n"
		"2025-01-24T07:00:30,227 INFO [main] App : Started in 1.2 s\n",
		"2012-07-02 10:22:40,672:DEBUG:foo bar baz\n2014-10-08 16:56:38,344:WARN:foo bar baz\n",
		"[Wed Oct 11 14:32:52 2000] [error] [client 127.0.0.1] client denied by server configuration\n"
		"[Wed Oct 11 14:32:53 2000] [notice] caught SIGTERM, shutting down\n",
	};
	static const char *const want[] = {"plain", "plain", "apache-error"};
	char why[256];
	for (size_t i = 0; i < sizeof heads / sizeof *heads; i++) {
		const struct iq_format *f = iq_sniff("x", heads[i], strlen(heads[i]), why, sizeof why);
		assert_non_null(f);
		assert_string_equal(f->name, want[i]);
	}
	/* the real dmesg forms still are */
	const char *d = "2025-01-21T04:41:44,283302+00:00 usb 1-1: new device\n"
			"[Tue May  7 12:00:00 2024] [drm] Initialized\n";
	const struct iq_format *f = iq_sniff("x", d, strlen(d), why, sizeof why);
	assert_non_null(f);
	assert_string_equal(f->name, "kernel");
}

/* The driver holds yearless lines back until a year is written (a line
 * further on), then gives them to the parser in order with their numbers. */
static void test_yearless_dates_wait_for_a_year_in_the_text(void **state)
{
	(void)state;
	const char *in =
		"Dec 30 23:00:00 h kernel: one\n"
		"Jan  2 01:00:00 h kernel: two\n"
		"\n"
		"2019-01-05T00:00:00Z h kernel: three\n"
		"Jan  6 02:00:00 h kernel: four\n";
	struct recs c = {0};
	run_format("kernel", in, iq_time_make(2026, 12, 4, 0, 0, 0, 0), &c);
	assert_int_equal(c.n, 4);
	assert_int_equal(c.line[0], 1);
	assert_int_equal(c.line[1], 2);
	assert_int_equal(c.line[2], 4);
	assert_int_equal(c.line[3], 5);
	assert_int_equal(c.skipped, 1);
	assert_true(c.ts[0] == iq_time_make(2018, 12, 30, 23, 0, 0, 0));
	assert_true(c.ts[1] == iq_time_make(2019, 1, 2, 1, 0, 0, 0));
	assert_true(c.ts[3] == iq_time_make(2019, 1, 6, 2, 0, 0, 0));
	assert_int_equal(c.how[0], IQ_TS_YEAR_INFERRED);
	assert_int_equal(c.how[2], IQ_TS_EXPLICIT);
}

static void test_zoneless_times_take_the_default_zone(void **state)
{
	(void)state;
	struct iq_diag d;
	int64_t noon = 1714564800LL * IQ_NS_PER_SEC;   /* 2024-05-01T12:00:00Z */
	int64_t h = 3600 * IQ_NS_PER_SEC;
	assert_int_equal(iq_time_set_default_zone("+03:00", &d), 0);
	struct recs c = {0};
	run_format("plain", "2024-05-01 12:00:00 local\n2024-05-01T12:00:00Z zoned\n", IQ_TIME_NONE, &c);
	assert_int_equal(c.n, 2);
	assert_true(c.ts[0] == noon - 3 * h);
	assert_int_equal(c.how[0], IQ_TS_ASSUMED_ZONE);
	assert_true(c.ts[1] == noon);                    /* a zone in the text wins */
	assert_int_equal(c.how[1], IQ_TS_EXPLICIT);
	/* a syslog date: year from the mtime, then the zone */
	memset(&c, 0, sizeof c);
	run_format("kernel", "May  1 12:00:00 gpu-1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n",
		   noon + 24 * h, &c);
	assert_int_equal(c.n, 1);
	assert_true(c.ts[0] == noon - 3 * h);
	assert_int_equal(c.how[0], IQ_TS_YEAR_INFERRED);
	/* nvidia-smi's local time */
	memset(&c, 0, sizeof c);
	run_format("nvidia-smi-csv", "timestamp, index, memory.used [MiB]\n2024/05/01 12:00:00.000, 0, 100 MiB\n",
		   IQ_TIME_NONE, &c);
	assert_int_equal(c.n, 1);
	assert_true(c.ts[0] == noon - 3 * h);
	assert_int_equal(c.how[0], IQ_TS_ASSUMED_ZONE);
	assert_int_equal(iq_time_set_default_zone("UTC", &d), 0);
	memset(&c, 0, sizeof c);
	run_format("plain", "2024-05-01 12:00:00 local\n", IQ_TIME_NONE, &c);
	assert_true(c.ts[0] == noon);
	assert_int_equal(c.how[0], IQ_TS_ASSUMED_UTC);
}

static void test_wrapper_len_of_vllm_prefixes(void **state)
{
	(void)state;
	size_t tl;
	const char *a = "(RayWorkerWrapper pid=206994, ip=192.168.10.25) ERROR 03-27 10:29:13 [worker_base.py:620]   File";
	assert_int_equal(iq_tb_wrapper_len(a, strlen(a), &tl), strlen(a) - 6);
	assert_int_equal(tl, strlen("(RayWorkerWrapper pid=206994, ip=192.168.10.25) "));
	const char *b = "(APIServer pid=1) (DPEngineCoreActor pid=2) INFO 12-23 23:04:22 [core.py:1525] x";
	assert_int_equal(iq_tb_wrapper_len(b, strlen(b), &tl), strlen(b) - 1);
	assert_int_equal(tl, strlen("(APIServer pid=1) (DPEngineCoreActor pid=2) "));
	const char *c = "INFO 02-28 21:48:18 metrics.py:161] Avg";   /* the older head */
	assert_int_equal(iq_tb_wrapper_len(c, strlen(c), &tl), strlen(c) - 3);
	assert_int_equal(tl, 0);
	const char *d = "[rank0]: Traceback (most recent call last):";
	assert_int_equal(iq_tb_wrapper_len(d, strlen(d), &tl), 9);
	assert_int_equal(tl, 9);
	const char *e = "(not a tag) ERROR something";  /* no pid=: not a process tag */
	assert_int_equal(iq_tb_wrapper_len(e, strlen(e), &tl), 0);
	const char *f = "ERROR 03-13 09:00:43 [core.py:330] ";   /* an empty message */
	assert_int_equal(iq_tb_wrapper_len(f, strlen(f), NULL), strlen(f));
}

struct tbout {
	int n;
	long line[8], first[8], nlines[8];
	char text[8][128];
};

static int tb_emit(void *u, const struct iq_tb_line *l)
{
	struct tbout *o = u;
	if (o->n < 8) {
		o->line[o->n] = l->line;
		o->first[o->n] = l->first_line;
		o->nlines[o->n] = l->nlines;
		snprintf(o->text[o->n], 128, "%.*s", (int)l->text.n, l->text.p);
	}
	o->n++;
	return 0;
}

static void feed(struct iq_tb *tb, struct tbout *o, long line, const char *s)
{
	struct iq_tb_line l = {.line = line, .nlines = 1, .ts = line * IQ_NS_PER_SEC,
			       .how = IQ_TS_EXPLICIT, .text = iq_str_make(s, strlen(s))};
	assert_int_equal(iq_tb_feed(tb, &l, tb_emit, o), 0);
}

static void test_traceback_tolerates_other_processes_and_ends_on_own_line(void **state)
{
	(void)state;
	struct iq_tb tb;
	struct tbout o = {0};
	iq_tb_init(&tb);
	feed(&tb, &o, 1, "(W pid=7) Traceback (most recent call last):");
	feed(&tb, &o, 2, "(W pid=7)   File \"a.py\", line 3, in f");
	feed(&tb, &o, 3, "(API pid=1) INFO 05-01 12:00:00 [api.py:1] GET /health");
	feed(&tb, &o, 4, "(W pid=7) KeyError: 'x'");
	assert_int_equal(o.n, 1);                 /* the other process's line */
	assert_int_equal(o.line[0], 3);
	assert_int_equal(iq_tb_pending_line(&tb), 1);
	feed(&tb, &o, 5, "(W pid=7) INFO 05-01 12:00:01 [w.py:9] restarting");
	assert_int_equal(o.n, 3);                 /* the traceback, then line 5 */
	assert_int_equal(o.line[1], 4);
	assert_int_equal(o.first[1], 1);
	assert_int_equal(o.nlines[1], 4);
	assert_string_equal(o.text[1], "(W pid=7) KeyError: 'x'\n(W pid=7) Traceback (most recent call last):\n"
			    "(W pid=7)   File \"a.py\", line 3, in f");
	assert_int_equal(o.line[2], 5);
	assert_int_equal(o.first[2], 0);
	assert_int_equal(iq_tb_pending_line(&tb), LONG_MAX);
	/* a frame line without a traceback is an ordinary line */
	feed(&tb, &o, 6, "  File \"b.py\", line 1");
	assert_int_equal(o.n, 4);
	assert_int_equal(iq_tb_flush(&tb, tb_emit, &o), 0);
	assert_int_equal(o.n, 4);
	iq_tb_release(&tb);
}

static void test_traceback_capped_by_bytes(void **state)
{
	(void)state;
	struct iq_tb tb;
	struct tbout o = {0};
	static char big[600 * 1024];
	memset(big, 'x', sizeof big - 1);
	big[0] = big[1] = ' ';
	big[sizeof big - 1] = '\0';
	iq_tb_init(&tb);
	feed(&tb, &o, 1, "Traceback (most recent call last):");
	feed(&tb, &o, 2, big);
	assert_int_equal(o.n, 0);
	feed(&tb, &o, 3, big);                    /* past 1 MiB: flushed first */
	assert_int_equal(o.n, 2);
	assert_int_equal(o.line[0], 1);
	assert_int_equal(o.nlines[0], 2);
	assert_int_equal(o.line[1], 3);           /* then stands alone */
	feed(&tb, &o, 4, "MemoryError");
	assert_int_equal(o.n, 3);
	assert_int_equal(iq_tb_flush(&tb, tb_emit, &o), 0);
	assert_int_equal(o.n, 3);
	iq_tb_release(&tb);
}

static void test_engine_metric_aliases_map_to_one_name(void **state)
{
	(void)state;
	static const struct {
		const char *metric;
		enum iq_es stat;
		double scale;
		const char *engine;
	} cases[] = {
		{"vllm:gpu_cache_usage_perc", IQ_ES_KV_USAGE, 100, "vllm"},   /* before 0.10 */
		{"vllm:kv_cache_usage_perc", IQ_ES_KV_USAGE, 100, "vllm"},    /* after */
		{"vllm_kv_cache_usage_perc", IQ_ES_KV_USAGE, 100, "vllm"},    /* ':' renamed */
		{"vllm:num_requests_waiting", IQ_ES_WAITING, 1, "vllm"},
		{"vllm:num_requests_pending", IQ_ES_WAITING, 1, "vllm"},
		{"vllm:num_requests_running", IQ_ES_RUNNING, 1, "vllm"},
		{"vllm:num_requests_swapped", IQ_ES_SWAPPED, 1, "vllm"},
		{"sglang:num_queue_reqs", IQ_ES_WAITING, 1, "sglang"},
		{"sglang:token_usage", IQ_ES_KV_USAGE, 100, "sglang"},
		{"tgi_queue_size", IQ_ES_WAITING, 1, "tgi"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		enum iq_es st = IQ_ES_COUNT;
		double sc = 0;
		const char *eng = NULL;
		assert_int_equal(iq_es_of_metric(cases[i].metric, strlen(cases[i].metric), &st, &sc, &eng), 1);
		assert_int_equal(st, cases[i].stat);
		assert_true(sc == cases[i].scale);
		assert_string_equal(eng, cases[i].engine);
	}
	enum iq_es st;
	double sc;
	assert_int_equal(iq_es_of_metric("vllm:kv_cache_usage", 19, &st, &sc, NULL), 0);
	assert_int_equal(iq_es_of_metric("vllm:num_requests_waiting_total", 31, &st, &sc, NULL), 0);
	assert_int_equal(iq_es_of_metric("DCGM_FI_DEV_FB_USED", 19, &st, &sc, NULL), 0);
	struct iq_es_values v;
	iq_es_init(&v);
	v.v[IQ_ES_WAITING] = 23;
	v.v[IQ_ES_RUNNING] = 20;
	v.v[IQ_ES_KV_USAGE] = 0.984 * 100;
	struct iq_buf b;
	iq_buf_init(&b);
	assert_int_equal(iq_es_render(&b, &v), 0);
	assert_string_equal(b.p, "Running: 20 reqs, Waiting: 23 reqs, GPU KV cache usage: 98.4%");
	iq_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_split_across_chunks_and_crlf),
		cmocka_unit_test(test_lines_cut_at_cap_and_resync),
		cmocka_unit_test(test_lines_nul_runs_are_dropped_and_counted),
		cmocka_unit_test(test_sizes_with_units),
		cmocka_unit_test(test_json_unescape),
		cmocka_unit_test(test_path_identity_from_kubelet_layouts),
		cmocka_unit_test(test_sniff_binary_and_empty),
		cmocka_unit_test(test_plain_joins_traceback_and_accounts_lines),
		cmocka_unit_test(test_sniff_keeps_lookalikes_out_of_kernel),
		cmocka_unit_test(test_yearless_dates_wait_for_a_year_in_the_text),
		cmocka_unit_test(test_zoneless_times_take_the_default_zone),
		cmocka_unit_test(test_wrapper_len_of_vllm_prefixes),
		cmocka_unit_test(test_traceback_tolerates_other_processes_and_ends_on_own_line),
		cmocka_unit_test(test_traceback_capped_by_bytes),
		cmocka_unit_test(test_engine_metric_aliases_map_to_one_name),
	};
	return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}
