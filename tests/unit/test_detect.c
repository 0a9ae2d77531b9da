/* test_detect.c: the detectors over a small store filled record by
 * record: the clock-offset decision and its bases (detect/skew.c), the
 * node and pod a collector's own layout names (detect/nodes.c), and the
 * load balancer's surge and the flood boundary (detect/lb.c) through the
 * shipped gpu-oom-cascade pack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "../../analyzer/detect/detect.h"
#include "../../analyzer/detect/nodes.h"
#include "../../analyzer/detect/skew.h"
#include "../../analyzer/store/store.h"

#define SEC 1000000000LL
/* 2026-11-30T14:00:00Z */
#define T0 (1796047200LL * SEC)

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/iq-detect-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd);
}

static struct iq_store *open_db(const char *name)
{
	char path[160];
	snprintf(path, sizeof path, "%s/%s.db", dir, name);
	struct iq_store *s;
	struct iq_diag d;
	assert_int_equal(iq_store_open(path, 0, &s, &d), 0);
	return s;
}

static long count(struct iq_store *s, const char *sql)
{
	sqlite3_stmt *q;
	long n = -1;
	if (sqlite3_prepare_v2(iq_store_db(s), sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

/* The records of one file: n of kind, text[i], ts[i]; an identity with
 * node and pod (either may be NULL). */
static void add_file(struct iq_store *s, const char *path, const char *format, const char *node,
		     const char *pod, struct iq_record *r, size_t n)
{
	struct iq_ident id;
	memset(&id, 0, sizeof id);
	id.restart = -1;
	if (node)
		id.node = iq_str_make(node, strlen(node));
	if (pod)
		id.pod = iq_str_make(pod, strlen(pod));
	int64_t fid;
	int already;
	assert_int_equal(iq_store_file_begin(s, path, "b.tgz", format, "test", IQ_TIME_NONE, &id, &fid, &already), 0);
	for (size_t i = 0; i < n; i++) {
		int64_t rid;
		assert_int_equal(iq_store_record(s, fid, &id, &r[i], &rid), 0);
	}
	assert_int_equal(iq_store_flush(s), 0);
	struct iq_file_stats st = {.lines_read = (long)n, .lines_parsed = (long)n, .records = (long)n};
	assert_int_equal(iq_store_file_end(s, fid, &st, 100, "done", NULL), 0);
}

static void log_rec(struct iq_record *r, long line, int64_t ts, const char *text)
{
	iq_record_init(r, IQ_KIND_LOG);
	r->line = line;
	r->nlines = 1;
	r->ts = ts;
	r->ts_how = ts == IQ_TIME_NONE ? IQ_TS_NONE : IQ_TS_EXPLICIT;
	r->text = iq_str_make(text, strlen(text));
}

/* A pod status of pod on node: started_at, restart count. */
static void pod_rec(struct iq_record *r, long line, const char *pod, const char *node, int64_t started)
{
	iq_record_init(r, IQ_KIND_POD);
	r->line = line;
	r->nlines = 1;
	r->text = IQ_STR_LIT("pod status");
	r->u.pod.ns = IQ_STR_LIT("inference");
	r->u.pod.name = iq_str_make(pod, strlen(pod));
	r->u.pod.node = iq_str_make(node, strlen(node));
	r->u.pod.pod_ip = IQ_STR_LIT("10.244.1.10");
	r->u.pod.container = IQ_STR_LIT("vllm");
	r->u.pod.state = IQ_STR_LIT("running");
	r->u.pod.ready = 1;
	r->u.pod.restart_count = 0;
	r->u.pod.started_at = started;
	r->id.pod = r->u.pod.name;
	r->id.node = r->u.pod.node;
}

/* A kubelet event on node: firstTimestamp first (node clock), creation
 * created (API server clock). */
static void event_rec(struct iq_record *r, long line, const char *node, int64_t first, int64_t created)
{
	iq_record_init(r, IQ_KIND_EVENT);
	r->line = line;
	r->nlines = 1;
	r->ts = first;
	r->ts_how = IQ_TS_EXPLICIT;
	r->text = IQ_STR_LIT("Normal Pulled pod/vllm-0: Container image already present on machine");
	r->u.event.type = IQ_STR_LIT("Normal");
	r->u.event.reason = IQ_STR_LIT("Pulled");
	r->u.event.source = IQ_STR_LIT("kubelet");
	r->u.event.host = iq_str_make(node, strlen(node));
	r->u.event.count = 1;
	r->u.event.first_ts = r->u.event.last_ts = first;
	r->u.event.created_ts = created;
	r->id.node = r->u.event.host;
}

/* --- the decision alone ------------------------------------------------ */

static struct iq_skew_basis basis(double off_s, double unc_s, long n, int agree)
{
	struct iq_skew_basis b = {.have = 1, .off = (int64_t)(off_s * SEC), .unc = (int64_t)(unc_s * SEC),
				  .samples = n, .agree = agree};
	return b;
}

static void test_decide_takes_the_most_precise_agreeing_basis(void **state)
{
	(void)state;
	struct iq_skew_basis b[IQ_SKEW_KINDS] = {{0}};
	struct iq_skew_result r;
	iq_skew_decide(b, &r);
	assert_int_equal(r.status, IQ_SKEW_NONE);
	assert_int_equal(r.best, -1);

	b[IQ_SKEW_EVENTS] = basis(3.2, 0.5, 9, 1);
	b[IQ_SKEW_CHRONY] = basis(2.704, 0.02, 1, 1);
	iq_skew_decide(b, &r);
	assert_int_equal(r.status, IQ_SKEW_CORRECTED);
	assert_int_equal(r.best, IQ_SKEW_CHRONY);
	assert_true(r.off == (int64_t)(2.704 * SEC));

	/* a more precise basis whose samples disagree gives way */
	b[IQ_SKEW_CHRONY].agree = 0;
	iq_skew_decide(b, &r);
	assert_int_equal(r.best, IQ_SKEW_EVENTS);
	assert_int_equal(r.status, IQ_SKEW_CORRECTED);
	/* ... and when none agrees, nothing is applied */
	b[IQ_SKEW_EVENTS].agree = 0;
	iq_skew_decide(b, &r);
	assert_int_equal(r.status, IQ_SKEW_SPREAD);
}

static void test_decide_refuses_disagreeing_bases(void **state)
{
	(void)state;
	struct iq_skew_basis b[IQ_SKEW_KINDS] = {{0}};
	struct iq_skew_result r;
	b[IQ_SKEW_CHRONY] = basis(3.0, 0.02, 1, 1);
	b[IQ_SKEW_EVENTS] = basis(0.0, 0.5, 12, 1);
	iq_skew_decide(b, &r);
	assert_int_equal(r.status, IQ_SKEW_DISAGREE);
	assert_int_equal(r.best, IQ_SKEW_CHRONY);
	assert_int_equal(r.other, IQ_SKEW_EVENTS);
	/* within both uncertainties and a tenth of a second they agree */
	b[IQ_SKEW_EVENTS] = basis(2.45, 0.5, 12, 1);
	iq_skew_decide(b, &r);
	assert_int_equal(r.status, IQ_SKEW_CORRECTED);
}

static void test_decide_small_and_implausible_offsets_stay(void **state)
{
	(void)state;
	struct iq_skew_basis b[IQ_SKEW_KINDS] = {{0}};
	struct iq_skew_result r;
	b[IQ_SKEW_REQUESTS] = basis(0.03, 0.02, 500, 1);
	iq_skew_decide(b, &r);
	assert_int_equal(r.status, IQ_SKEW_SMALL);
	b[IQ_SKEW_REQUESTS] = basis(0.4, 0.5, 500, 1);  /* below its own uncertainty */
	iq_skew_decide(b, &r);
	assert_int_equal(r.status, IQ_SKEW_SMALL);
	/* 27 days: a wrong basis or a broken clock, never applied silently */
	b[IQ_SKEW_REQUESTS] = basis(2332801.0, 0.02, 8, 1);
	iq_skew_decide(b, &r);
	assert_int_equal(r.status, IQ_SKEW_IMPLAUSIBLE);
	assert_string_equal(iq_skew_status_name(r.status), "implausible");
}

/* --- over a store ------------------------------------------------------ */

/* A container started three weeks ago whose log was rotated: its first
 * kept line is of today. Kubernetes' start and that line are not the same
 * instant, so nothing is measured and nothing is moved; the node's row
 * says the offset could not be determined. */
static void test_weeks_old_container_is_not_a_basis(void **state)
{
	(void)state;
	struct iq_store *s = open_db("old");
	struct iq_record p[1];
	pod_rec(&p[0], 1, "vllm-0", "gpu-node-1", T0 - 21 * 86400 * SEC);
	add_file(s, "b.tgz!kubectl/pods.json", "k8s-pods", NULL, NULL, p, 1);
	struct iq_record l[3];
	log_rec(&l[0], 1, T0 + 5 * SEC, "INFO 11-30 14:00:05 [loggers.py:118] Engine 000: Running: 3 reqs");
	log_rec(&l[1], 2, T0 + 15 * SEC, "INFO 11-30 14:00:15 [loggers.py:118] Engine 000: Running: 4 reqs");
	log_rec(&l[2], 3, T0 + 25 * SEC, "INFO 11-30 14:00:25 [loggers.py:118] Engine 000: Running: 2 reqs");
	add_file(s, "b.tgz!nodes/gpu-node-1/var/log/pods/inference_vllm-0_u1/vllm/0.log", "cri", "gpu-node-1",
		 "vllm-0", l, 3);
	assert_int_equal(iq_store_finish(s), 0);
	struct iq_diag d;
	assert_int_equal(iq_detect_skew(s, &d), 0);
	assert_int_equal(count(s, "SELECT count(*) FROM clock_skew WHERE node = 'gpu-node-1' AND status = 'none'"
				  " AND offset_ns IS NULL AND applied_ns = 0"), 1);
	assert_int_equal(count(s, "SELECT count(*) FROM records WHERE ts_how = 'skew_corrected'"), 0);
	assert_int_equal(count(s, "SELECT min(ts) FROM records WHERE kind = 'log'"), T0 + 5 * SEC);
	iq_store_close(s);
}

/* Kubelet events stamped 3 s ahead on their node: the node's logs, its
 * events and its containers' states move back 3 s, the API server's
 * creation times do not, and a second run moves nothing more. A node
 * with no events of its own is left alone. */
static void test_kubelet_events_correct_their_node_once(void **state)
{
	(void)state;
	struct iq_store *s = open_db("events");
	struct iq_record e[9];
	for (int i = 0; i < 6; i++) {
		/* creation cut to the second, the kubelet's first time too */
		int64_t at = T0 + i * 37 * SEC;
		event_rec(&e[i], 10 * i + 1, "gpu-node-1", at + 3 * SEC, at);
	}
	event_rec(&e[6], 61, "gpu-node-2", T0 + 4 * SEC, T0 + 4 * SEC);
	event_rec(&e[7], 71, "gpu-node-2", T0 + 9 * SEC, T0 + 9 * SEC);
	event_rec(&e[8], 81, "gpu-node-2", T0 + 19 * SEC, T0 + 19 * SEC);
	add_file(s, "b.tgz!kube/events.json", "k8s-events-json", NULL, NULL, e, 9);
	struct iq_record p[1];
	pod_rec(&p[0], 1, "vllm-0", "gpu-node-1", T0 + 100 * SEC);
	add_file(s, "b.tgz!kube/pods.json", "k8s-pods", NULL, NULL, p, 1);
	struct iq_record l[2];
	log_rec(&l[0], 1, T0 + 103 * SEC, "INFO: Started server process [1]");
	log_rec(&l[1], 2, T0 + 203 * SEC, "INFO: 10.0.0.1:5000 - \"GET /health HTTP/1.1\" 200 OK");
	/* a collector's own folder layout: the node comes from the path */
	add_file(s, "b.tgz!hosts/gpu-node-1/var/log/pods/inference_vllm-0_u1/vllm/0.log", "cri", NULL, "vllm-0", l, 2);
	assert_int_equal(iq_store_finish(s), 0);
	struct iq_diag d;
	for (int run = 0; run < 2; run++) {
		assert_int_equal(iq_detect_skew(s, &d), 0);
		assert_int_equal(count(s, "SELECT count(*) FROM clock_skew WHERE node = 'gpu-node-1'"
					  " AND status = 'corrected' AND abs(offset_ns - 3000000000) <= 500000000"
					  " AND applied_ns = offset_ns AND basis LIKE '%events%'"), 1);
		assert_int_equal(count(s, "SELECT count(*) FROM clock_skew WHERE node = 'gpu-node-2'"
					  " AND status = 'small' AND applied_ns = 0"), 1);
		int64_t applied = count(s, "SELECT applied_ns FROM clock_skew WHERE node = 'gpu-node-1'");
		assert_int_equal(count(s, "SELECT min(ts) FROM records WHERE kind = 'log'"), T0 + 103 * SEC - applied);
		assert_int_equal(count(s, "SELECT count(*) FROM records WHERE kind = 'log' AND ts_how = 'skew_corrected'"
					  " AND node = 'gpu-node-1'"), 2);
		assert_int_equal(count(s, "SELECT started_at FROM pod_states WHERE pod = 'vllm-0'"), T0 + 100 * SEC - applied);
		assert_int_equal(count(s, "SELECT min(first_ts) FROM k8s_events WHERE host = 'gpu-node-1'"),
				 T0 + 3 * SEC - applied);
		assert_int_equal(count(s, "SELECT min(created_ts) FROM k8s_events WHERE host = 'gpu-node-1'"), T0);
		assert_int_equal(count(s, "SELECT min(first_ts) FROM k8s_events WHERE host = 'gpu-node-2'"), T0 + 4 * SEC);
	}
	iq_store_close(s);
}

/* The node's NTP client says 2.704 s fast; its kubelet's events say it is
 * on time. Two bases disagree: nothing is moved and the row says which. */
static void test_two_bases_that_disagree_move_nothing(void **state)
{
	(void)state;
	struct iq_store *s = open_db("disagree");
	struct iq_record c[2];
	log_rec(&c[0], 1, IQ_TIME_NONE, "Reference ID    : A9FEA97B (169.254.169.123)");
	log_rec(&c[1], 4, IQ_TIME_NONE, "System time     : 2.704000000 seconds fast of NTP time");
	add_file(s, "b.tgz!node-logs/gpu-node-1/chronyc-tracking.txt", "plain", NULL, NULL, c, 2);
	struct iq_record e[4];
	for (int i = 0; i < 4; i++)
		event_rec(&e[i], i + 1, "gpu-node-1", T0 + i * 60 * SEC, T0 + i * 60 * SEC);
	add_file(s, "b.tgz!kube/events.json", "k8s-events-json", NULL, NULL, e, 4);
	struct iq_record l[1];
	log_rec(&l[0], 1, T0 + 10 * SEC, "kubelet started");
	add_file(s, "b.tgz!node-logs/gpu-node-1/kubelet.log", "plain", NULL, NULL, l, 1);
	assert_int_equal(iq_store_finish(s), 0);
	struct iq_diag d;
	assert_int_equal(iq_detect_skew(s, &d), 0);
	assert_int_equal(count(s, "SELECT count(*) FROM clock_skew WHERE node = 'gpu-node-1' AND status = 'disagree'"
				  " AND applied_ns = 0 AND offset_ns = 2704000000 AND basis LIKE 'not corrected:%disagree'"), 1);
	assert_int_equal(count(s, "SELECT count(*) FROM records WHERE ts_how = 'skew_corrected'"), 0);
	/* the chrony file found its node through the folder named after it */
	assert_int_equal(count(s, "SELECT count(*) FROM files WHERE node = 'gpu-node-1'"), 2);
	iq_store_close(s);
}

/* Only the NTP client: 0.65 s slow, applied to the node's own records, not
 * to Prometheus samples the server stamped. */
static void test_chrony_alone_is_applied_to_the_nodes_clock(void **state)
{
	(void)state;
	struct iq_store *s = open_db("chrony");
	struct iq_record c[1];
	log_rec(&c[0], 4, IQ_TIME_NONE, "System time     : 0.651000000 seconds slow of NTP time");
	add_file(s, "b.tgz!hosts/gpu-node-1/chronyc-tracking.txt", "plain", NULL, NULL, c, 1);
	struct iq_record e[1];
	event_rec(&e[0], 1, "gpu-node-1", T0, T0);
	add_file(s, "b.tgz!kube/events.json", "k8s-events-json", NULL, NULL, e, 1);
	struct iq_record l[1];
	log_rec(&l[0], 1, T0 + 10 * SEC, "kubelet started");
	add_file(s, "b.tgz!hosts/gpu-node-1/kubelet.log", "plain", NULL, NULL, l, 1);
	struct iq_record g[1];
	iq_record_init(&g[0], IQ_KIND_GPU);
	g[0].line = 1;
	g[0].nlines = 1;
	g[0].ts = T0 + 20 * SEC;
	g[0].ts_how = IQ_TS_EXPLICIT;
	g[0].text = IQ_STR_LIT("DCGM_FI_DEV_FB_USED{gpu=\"0\"} 80000 1796047220000");
	g[0].id.node = IQ_STR_LIT("gpu-node-1");
	add_file(s, "b.tgz!monitoring/federate-gpu-node-1.prom", "prometheus-text", NULL, NULL, g, 1);
	assert_int_equal(iq_store_finish(s), 0);
	struct iq_diag d;
	assert_int_equal(iq_detect_skew(s, &d), 0);
	assert_int_equal(count(s, "SELECT count(*) FROM clock_skew WHERE node = 'gpu-node-1' AND status = 'corrected'"
				  " AND applied_ns = -651000000 AND basis LIKE '%NTP client%'"), 1);
	assert_int_equal(count(s, "SELECT ts FROM records WHERE text = 'kubelet started'"), T0 + 10 * SEC + 651000000);
	assert_int_equal(count(s, "SELECT ts FROM records WHERE kind = 'gpu'"), T0 + 20 * SEC);
	iq_store_close(s);
}

static void test_nodes_of_collector_paths(void **state)
{
	(void)state;
	char *names[] = {"gpu-node-1", "gpu-node-10", "ip-10-0-13-119.us-west-2.compute.internal",
			 "aks-gpupool-1-vmss000007"};
	size_t n = 4;
	assert_string_equal(iq_nodes_of_path(names, n, "b.tgz!x/hosts/gpu-node-1/dmesg"), "gpu-node-1");
	assert_string_equal(iq_nodes_of_path(names, n, "b.tgz!x/nodes-data/gpu-node-10.tar.xz!journal/k.log"),
			    "gpu-node-10");
	assert_string_equal(iq_nodes_of_path(names, n, "b.zip!m/federate-dcgm-ip-10-0-13-119.prom"),
			    "ip-10-0-13-119.us-west-2.compute.internal");
	assert_string_equal(iq_nodes_of_path(names, n, "b.zip!x/ip-10-0-13-119/kern.log"),
			    "ip-10-0-13-119.us-west-2.compute.internal");
	assert_string_equal(iq_nodes_of_path(names, n, "b!metrics/gpu-aks-gpupool-1-vmss000007.csv"),
			    "aks-gpupool-1-vmss000007");
	/* a name inside a longer word is not that node */
	assert_null(iq_nodes_of_path(names, n, "b!metrics/gpu-node-100.csv"));
	assert_null(iq_nodes_of_path(names, n, "b!kube/events.json"));
	/* two nodes named in one file name: neither */
	assert_null(iq_nodes_of_path(names, n, "b!diff-gpu-node-1-gpu-node-10.txt"));
}


/* --- the 5xx surge and the flood boundary (lb.c) ------------------------- */

/* A load balancer's access-log line, made to stand for itself. */
struct lbline {
	char text[160], client[32], up[32];
};

/* An http record: client, status at ts; upstream NULL when the load
 * balancer answered itself. */
static void http_rec(struct iq_record *r, struct lbline *l, long line, int64_t ts, const char *client, int status,
		     const char *upstream)
{
	iq_record_init(r, IQ_KIND_HTTP);
	r->line = line;
	r->nlines = 1;
	r->ts = ts;
	r->ts_how = IQ_TS_EXPLICIT;
	snprintf(l->client, sizeof l->client, "%s", client);
	snprintf(l->up, sizeof l->up, "%s", upstream ? upstream : "-");
	snprintf(l->text, sizeof l->text, "%s - - \"POST /v1/completions HTTP/1.1\" %d 12 %s", client, status, l->up);
	r->text = iq_str_make(l->text, strlen(l->text));
	r->u.http.client = iq_str_make(l->client, strlen(l->client));
	r->u.http.method = IQ_STR_LIT("POST");
	r->u.http.path = IQ_STR_LIT("/v1/completions");
	r->u.http.status = status;
	if (upstream) {
		r->u.http.n_upstreams = 1;
		r->u.http.upstream_addr[0] = iq_str_make(l->up, strlen(l->up));
		r->u.http.upstream_status[0] = status;
		r->u.http.upstream_time_s[0] = 0.2;
	}
}

/* A GPU memory sample at used/total of node's GPU 0. */
static void gpu_rec(struct iq_record *r, long line, int64_t ts, const char *node, double used, double total)
{
	iq_record_init(r, IQ_KIND_GPU);
	r->line = line;
	r->nlines = 1;
	r->ts = ts;
	r->ts_how = IQ_TS_EXPLICIT;
	r->text = IQ_STR_LIT("gpu sample");
	r->u.gpu.index = 0;
	r->u.gpu.mem_used_mib = used;
	r->u.gpu.mem_total_mib = total;
	r->id.node = iq_str_make(node, strlen(node));
}

/* Up to this many access-log lines in one test. */
#define MAXREQ 20000

struct lb {
	struct iq_record *r;
	struct lbline *l;
	size_t n;
};

static void lb_add(struct lb *b, int64_t ts, const char *client, int status, const char *upstream)
{
	assert_true(b->n < MAXREQ);
	http_rec(&b->r[b->n], &b->l[b->n], (long)b->n + 1, ts, client, status, upstream);
	b->n++;
}

/* Ordinary traffic: nclients clients, one request each every period_s
 * seconds from t0 for dur_s seconds, answered by status through pod. */
static void lb_steady(struct lb *b, int64_t t0, int dur_s, int nclients, int period_s, int status)
{
	char c[32];
	for (int s = 0; s < dur_s; s += period_s)
		for (int k = 0; k < nclients; k++) {
			snprintf(c, sizeof c, "10.1.0.%d", k + 1);
			lb_add(b, t0 + (int64_t)s * SEC + (int64_t)k * (SEC / (nclients + 1)), c, status, "10.244.0.5:8000");
		}
}

static int by_ts(const void *a, const void *b)
{
	const struct iq_record *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Runs the shipped packs over the records (sorted into one access log,
 * lines renumbered) and the gpu samples; returns gpu-oom-cascade's
 * findings. */
static json_t *detect_lb(const char *name, struct lb *b, struct iq_record *gpu, size_t ngpu)
{
	qsort(b->r, b->n, sizeof *b->r, by_ts);
	for (size_t i = 0; i < b->n; i++)
		b->r[i].line = (long)i + 1;
	struct iq_store *s = open_db(name);
	add_file(s, "b.tgz!lb/access.log", "ingress-nginx", NULL, NULL, b->r, b->n);
	if (ngpu)
		add_file(s, "b.tgz!nodes/gpu-node-1/nvidia-smi.csv", "nvidia-smi-csv", "gpu-node-1", NULL, gpu, ngpu);
	assert_int_equal(iq_store_finish(s), 0);
	struct iq_ruleset rs;
	struct iq_diag d;
	assert_int_equal(iq_detect_skew(s, &d), 0);
	iq_rules_init(&rs);
	assert_int_equal(iq_rules_load_builtin(&rs, &d), 0);
	int drc = iq_detect(s, &rs, &d);
	if (drc)
		fail_msg("detect: %s", d.msg);
	sqlite3_stmt *q;
	json_t *pat = NULL;
	assert_int_equal(sqlite3_prepare_v2(iq_store_db(s), "SELECT json FROM findings WHERE pack = 'gpu-oom-cascade'",
					    -1, &q, NULL), SQLITE_OK);
	if (sqlite3_step(q) == SQLITE_ROW)
		pat = json_loads((const char *)sqlite3_column_text(q, 0), 0, NULL);
	sqlite3_finalize(q);
	iq_rules_release(&rs);
	iq_store_close(s);
	assert_non_null(pat);
	return pat;
}

static json_t *flood_of(json_t *pat)
{
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(pat, "boundaries"), i, b)
		if (strcmp(json_string_value(json_object_get(b, "id")), "ingress-flood") == 0)
			return b;
	fail_msg("no ingress-flood boundary");
	return NULL;
}

static const char *tstr(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : "";
}

static struct lb lb_new(void)
{
	struct lb b = {iq_xcalloc(MAXREQ, sizeof(struct iq_record)), iq_xcalloc(MAXREQ, sizeof(struct lbline)), 0};
	return b;
}

static void lb_free(struct lb *b)
{
	free(b->r);
	free(b->l);
}

/* Every 5xx counts, 500 too (a liveness-killed engine answers 500 until
 * it dies), and the surge runs from its first 5xx, a lone one before the
 * minute that crossed the threshold, to its last; both cited at their
 * own times and lines. */
static void test_surge_runs_from_first_5xx_to_last(void **state)
{
	(void)state;
	struct lb b = lb_new();
	lb_steady(&b, T0, 1200, 5, 5, 200);
	lb_add(&b, T0 + 630 * SEC + SEC / 4, "10.1.0.2", 500, "10.244.0.5:8000");   /* 14:10:30.25 */
	for (int k = 0; k < 6; k++)                                                  /* 14:11:10.. */
		lb_add(&b, T0 + (670 + k) * SEC, "10.1.0.3", 500, "10.244.0.5:8000");
	for (int k = 0; k < 8; k++)                                                  /* 14:12:05.. */
		lb_add(&b, T0 + (725 + 2 * k) * SEC, "10.1.0.4", 502, "10.244.0.6:8000");
	lb_add(&b, T0 + 800 * SEC + SEC / 2, "10.1.0.1", 503, "10.244.0.6:8000");   /* 14:13:20.5 */
	json_t *pat = detect_lb("surge", &b, NULL, 0);
	json_t *sg = json_object_get(pat, "lb_5xx_surge");
	assert_non_null(sg);
	assert_string_equal(tstr(sg, "start"), "2026-11-30T14:10:30.250Z");
	assert_string_equal(tstr(sg, "end"), "2026-11-30T14:13:20.500Z");
	assert_int_equal(json_integer_value(json_object_get(sg, "count")), 16);
	assert_int_equal(json_integer_value(json_object_get(sg, "count_500")), 7);
	assert_int_equal(json_integer_value(json_object_get(sg, "count_502")), 8);
	json_t *ev = json_object_get(sg, "evidence");
	size_t ne = json_array_size(ev);
	assert_true(ne >= 2);
	assert_string_equal(tstr(json_array_get(ev, 0), "time"), "2026-11-30T14:10:30.250Z");
	assert_non_null(strstr(tstr(json_array_get(ev, 0), "text"), "\" 500 "));
	assert_string_equal(tstr(json_array_get(ev, ne - 1), "time"), "2026-11-30T14:13:20.500Z");
	assert_non_null(strstr(tstr(json_array_get(ev, ne - 1), "text"), "\" 503 "));
	/* a surge of failing upstreams is no flood, and says why */
	json_t *fl = flood_of(pat);
	assert_false(json_is_true(json_object_get(fl, "present")));
	assert_string_equal(json_string_value(json_array_get(json_object_get(fl, "reasons"), 0)), "no_heavy_client");
	json_decref(pat);
	lb_free(&b);
}

/* A baseline that fails now and then (one 500 a minute) does not stretch
 * the surge back over it. */
static void test_noisy_baseline_does_not_stretch_the_surge(void **state)
{
	(void)state;
	struct lb b = lb_new();
	lb_steady(&b, T0, 1200, 5, 5, 200);
	for (int m = 0; m < 12; m++)
		lb_add(&b, T0 + (60 * m + 30) * SEC, "10.1.0.5", 500, "10.244.0.5:8000");
	for (int k = 0; k < 12; k++)                                                 /* 14:12:03.. */
		lb_add(&b, T0 + (723 + 3 * k) * SEC, "10.1.0.2", 502, "10.244.0.6:8000");
	json_t *pat = detect_lb("noisy", &b, NULL, 0);
	json_t *sg = json_object_get(pat, "lb_5xx_surge");
	assert_non_null(sg);
	assert_string_equal(tstr(sg, "start"), "2026-11-30T14:12:03.000Z");
	json_decref(pat);
	lb_free(&b);
}

/* Six clients of one rate flood the ingress (none stands out alone) and
 * the load balancer refuses them itself, while a GPU stays at 99 % all
 * along (pre-allocated, no sawtooth): a flood. */
static void test_flood_of_six_equal_clients_beside_a_full_gpu(void **state)
{
	(void)state;
	struct lb b = lb_new();
	lb_steady(&b, T0, 1500, 20, 20, 200);
	char c[32];
	for (int sec = 900; sec < 1080; sec++)
		for (int k = 0; k < 6; k++) {
			snprintf(c, sizeof c, "203.0.113.%d", 10 + k);
			for (int j = 0; j < 4; j++)
				lb_add(&b, T0 + (int64_t)sec * SEC + (int64_t)(k * 4 + j) * (SEC / 25), c, j ? 503 : 200,
				       j ? NULL : "10.244.0.5:8000");
		}
	struct iq_record gpu[150];
	for (int i = 0; i < 150; i++)
		gpu_rec(&gpu[i], i + 1, T0 + (int64_t)i * 10 * SEC, "gpu-node-1", 81000 + (i % 3) * 40, 81559);
	json_t *pat = detect_lb("flood", &b, gpu, 150);
	json_t *fl = flood_of(pat);
	assert_true(json_is_true(json_object_get(fl, "present")));
	assert_int_equal(json_array_size(json_object_get(fl, "reasons")), 0);
	assert_int_equal(json_integer_value(json_object_get(fl, "heavy_clients")), 6);
	assert_int_equal(json_array_size(json_object_get(fl, "top_clients")), 6);
	assert_true(json_real_value(json_object_get(fl, "refused_share")) > 0.99);
	assert_true(json_real_value(json_object_get(fl, "rate_rise")) > 20);
	assert_string_equal(tstr(pat, "verdict"), "ruled_out_flood");
	json_decref(pat);
	lb_free(&b);
}

/* The same flood answered by the pods (their upstreams failing it), not
 * by the load balancer: not refused at the edge, so not ruled a flood. */
static void test_flood_failed_by_the_pods_is_not_refused_at_the_edge(void **state)
{
	(void)state;
	struct lb b = lb_new();
	lb_steady(&b, T0, 1500, 20, 20, 200);
	char c[32];
	for (int sec = 900; sec < 1080; sec++)
		for (int k = 0; k < 6; k++) {
			snprintf(c, sizeof c, "203.0.113.%d", 10 + k);
			for (int j = 0; j < 4; j++)
				lb_add(&b, T0 + (int64_t)sec * SEC + (int64_t)(k * 4 + j) * (SEC / 25), c, j ? 503 : 200,
				       "10.244.0.5:8000");
		}
	json_t *pat = detect_lb("podfail", &b, NULL, 0);
	json_t *fl = flood_of(pat);
	assert_false(json_is_true(json_object_get(fl, "present")));
	json_t *rs = json_object_get(fl, "reasons");
	assert_int_equal(json_array_size(rs), 1);
	assert_string_equal(json_string_value(json_array_get(rs, 0)), "not_refused");
	json_decref(pat);
	lb_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_takes_the_most_precise_agreeing_basis),
		cmocka_unit_test(test_decide_refuses_disagreeing_bases),
		cmocka_unit_test(test_decide_small_and_implausible_offsets_stay),
		cmocka_unit_test(test_weeks_old_container_is_not_a_basis),
		cmocka_unit_test(test_kubelet_events_correct_their_node_once),
		cmocka_unit_test(test_two_bases_that_disagree_move_nothing),
		cmocka_unit_test(test_chrony_alone_is_applied_to_the_nodes_clock),
		cmocka_unit_test(test_nodes_of_collector_paths),
		cmocka_unit_test(test_surge_runs_from_first_5xx_to_last),
		cmocka_unit_test(test_noisy_baseline_does_not_stretch_the_surge),
		cmocka_unit_test(test_flood_of_six_equal_clients_beside_a_full_gpu),
		cmocka_unit_test(test_flood_failed_by_the_pods_is_not_refused_at_the_edge),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
