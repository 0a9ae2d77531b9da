/* host.c: the boundaries. Host RAM / cgroup OOM kills (kernel OOM-killer
 * reports, OOMKilled container states, the kubelet's System OOM events),
 * each attributed to node, pod, container and process: a sidecar killed
 * by its cgroup does not explain GPU workers dying. Exit 137 with reason
 * Error is a SIGKILL (a probe, an eviction), not an OOM kill, and is not
 * counted. Also the ingress-flood boundary (lb.c computes it). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Copies the value after key (up to a comma, space or end) into out. */
static void kv(const char *text, const char *key, char *out, size_t outsz)
{
	out[0] = '\0';
	const char *p = strstr(text, key);
	if (!p)
		return;
	p += strlen(key);
	size_t n = strcspn(p, ", \n");
	snprintf(out, outsz, "%.*s", (int)(n < outsz ? n : outsz - 1), p);
}

/* "Killed process 4242 (fluent-bit)" -> pid, process */
static void killed(const char *text, long *pid, char *proc, size_t procsz)
{
	*pid = -1;
	proc[0] = '\0';
	const char *p = strstr(text, "Killed process ");
	if (!p)
		return;
	p += 15;
	*pid = strtol(p, (char **)&p, 10);
	const char *o = strchr(p, '(');
	const char *c = o ? strchr(o, ')') : NULL;
	if (o && c)
		snprintf(proc, procsz, "%.*s", (int)(c - o - 1), o + 1);
}

/* A killed container's instance ends within this of the kernel's kill. */
#define KILL_MATCH_NS NS(120)

/* The pod and container a memcg path names:
 * /kubepods/burstable/pod<uid>/<container id>, or the systemd form
 * kubepods-burstable-pod<uid with _>.slice/cri-containerd-<id>.scope
 * (crio-<id>.scope, docker-<id>.scope). The pod is the one with that uid
 * in pod status; the container the one whose container ID is <id>, or,
 * when none is (pod status names the instance that runs now, and the
 * kill ended the one before), the container of that pod whose previous
 * instance ended closest to the kill (within KILL_MATCH_NS; an OOMKilled
 * one first). */
static void memcg_owner(struct det *x, const char *memcg, int64_t t, char *pod, size_t podsz, char *cont,
			size_t contsz)
{
	pod[0] = cont[0] = '\0';
	/* "pod<uid>" after a '/' or '-' ("kubepods" is not it) */
	const char *p = NULL;
	for (const char *s = strstr(memcg, "pod"); s; s = strstr(s + 1, "pod"))
		if (s > memcg && (s[-1] == '/' || s[-1] == '-'))
			p = s;
	if (!p)
		return;
	char uid[80];
	size_t n = 0;
	for (p += 3; *p && *p != '/' && *p != '.' && n + 1 < sizeof uid; p++)
		uid[n++] = *p == '_' ? '-' : *p;
	uid[n] = '\0';
	const char *cid = strrchr(memcg, '/');
	char cidb[80] = "";
	if (cid && cid[1] && !strstr(cid, "pod")) {
		cid++;
		const char *dash = strrchr(cid, '-');
		if (dash && strstr(cid, ".scope"))
			cid = dash + 1;
		size_t cl = strcspn(cid, ".");
		snprintf(cidb, sizeof cidb, "%.*s", (int)(cl < 79 ? cl : 79), cid);
	}
	sqlite3_stmt *q;
	if (det_prep(x, "SELECT pod, container, container_id, coalesce(last_finished_at, finished_at),"
			" coalesce(last_reason, reason) FROM pod_states WHERE uid = ?1 ORDER BY record_id", &q))
		return;
	sqlite3_bind_text(q, 1, uid, -1, SQLITE_TRANSIENT);
	int exact = 0;
	int64_t best = INT64_MAX;
	int best_oom = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *pp = (const char *)sqlite3_column_text(q, 0);
		const char *cc = (const char *)sqlite3_column_text(q, 1);
		const char *id = (const char *)sqlite3_column_text(q, 2);
		const char *why = (const char *)sqlite3_column_text(q, 4);
		if (!pod[0] && pp)
			snprintf(pod, podsz, "%s", pp);
		if (exact || !cc)
			continue;
		if (cidb[0] && id && strlen(cidb) >= 12 && strstr(id, cidb)) {
			snprintf(cont, contsz, "%s", cc);
			exact = 1;
			continue;
		}
		if (sqlite3_column_type(q, 3) == SQLITE_NULL || t == IQ_TIME_NONE)
			continue;
		int64_t dt = llabs(sqlite3_column_int64(q, 3) - t);
		int oom = why && (strcmp(why, "OOMKilled") == 0 || strcmp(why, "OOM Killed") == 0);
		if (dt <= KILL_MATCH_NS && (dt < best || (dt == best && oom && !best_oom))) {
			best = dt;
			best_oom = oom;
			snprintf(cont, contsz, "%s", cc);
		}
	}
	sqlite3_finalize(q);
}

static json_t *attribution(const char *node, const char *pod, const char *cont, const char *proc,
			   json_t *time)
{
	json_t *a = json_object();
	json_object_set_new(a, "node", node && *node ? json_string(node) : json_null());
	json_object_set_new(a, "pod", pod && *pod ? json_string(pod) : json_null());
	json_object_set_new(a, "container", cont && *cont ? json_string(cont) : json_null());
	json_object_set_new(a, "process", proc && *proc ? json_string(proc) : json_null());
	json_object_set_new(a, "time", time);
	return a;
}

/* Is (pod, container) a serving worker: one that died of CUDA OOM, or a
 * container of a pod that did, with the same name as the one that did? */
static int is_engine(const char *proc, const char *cont)
{
	static const char *const engines[] = {"vllm", "python", "tritonserver", "text-generation",
					      "tgi", "trtllm", "sglang", "ray::", "pt_main_thread"};
	for (size_t k = 0; k < IQ_ARRAY_LEN(engines); k++)
		if ((proc && strstr(proc, engines[k])) || (cont && strstr(cont, engines[k])))
			return 1;
	return 0;
}

static int is_worker(struct det *x, const char *pod, const char *cont, const char *proc)
{
	size_t i;
	json_t *e;
	/* a kill whose container is unknown but whose process is named: the
	 * process says whether it was the engine (a log shipper's promtail
	 * in a serving pod is not) */
	if ((!cont || !*cont) && proc && *proc)
		return is_engine(proc, NULL);
	json_array_foreach(x->ooms, i, e) {
		const char *p = json_string_value(json_object_get(e, "pod"));
		const char *c = json_string_value(json_object_get(e, "container"));
		if (pod && *pod && p && strcmp(p, pod) == 0 && (!cont || !*cont || (c && strcmp(c, cont) == 0)))
			return 1;
	}
	/* no CUDA OOM to compare with: a serving engine's process or container */
	return is_engine(proc, cont);
}

static json_t *host_oom(struct det *x)
{
	json_t *att = json_array();
	json_t *ev = json_array();
	long kills = 0, workers = 0, on_oom = 0;
	/* kernel kill lines; an oom-kill:constraint line precedes the
	 * "Killed process" line of the same kill and names the memcg */
	sqlite3_stmt *q;
	int rc = det_prep(x,
			  "SELECT r.id, r.text, coalesce(r.node, k.host), r.ts, f.path, r.line FROM records r"
			  " JOIN files f ON f.id = r.file_id LEFT JOIN kernel_events k ON k.record_id = r.id"
			  " WHERE r.kind IN ('kernel', 'log') AND r.id IN (SELECT record_id FROM signal_matches"
			  "  WHERE signal = 'host-oom') AND (r.text LIKE '%Killed process %'"
			  "  OR r.text LIKE '%oom-kill:constraint=%')"
			  " ORDER BY f.path, r.line", &q);
	if (rc)
		return NULL;
	char memcg[512] = "", task[128] = "";
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(q, 1);
		if (!text)
			continue;
		if (strstr(text, "oom-kill:constraint=")) {
			kv(text, "task_memcg=", memcg, sizeof memcg);
			kv(text, "task=", task, sizeof task);
			continue;
		}
		long pid;
		char proc[128], pod[256], cont[256];
		killed(text, &pid, proc, sizeof proc);
		int64_t kt = sqlite3_column_type(q, 3) == SQLITE_NULL ? IQ_TIME_NONE : sqlite3_column_int64(q, 3);
		memcg_owner(x, memcg, kt, pod, sizeof pod, cont, sizeof cont);
		memcg[0] = task[0] = '\0';
		const char *node = (const char *)sqlite3_column_text(q, 2);
		kills++;
		int w = is_worker(x, pod, cont, proc);
		workers += w;
		if (w && pod[0]) {
			size_t i;
			json_t *e;
			json_array_foreach(x->ooms, i, e)
				if (json_is_string(json_object_get(e, "pod")) &&
				    strcmp(json_string_value(json_object_get(e, "pod")), pod) == 0)
					on_oom++;
		}
		json_t *a = attribution(node, pod, cont, proc, det_time(q, 3));
		json_object_set_new(a, "pid", pid >= 0 ? json_integer(pid) : json_null());
		json_object_set_new(a, "serving_worker", json_boolean(w));
		json_array_append_new(att, a);
		json_t *e = det_evidence_of(x, sqlite3_column_int64(q, 0));
		if (e)
			json_array_append_new(ev, e);
	}
	sqlite3_finalize(q);
	/* containers Kubernetes reports OOMKilled (not 137 with reason Error);
	 * the same death as a kernel kill of that container (at about the
	 * same time) is that kill, not another one */
	if (det_prep(x, "SELECT record_id, node, pod, container, coalesce(last_finished_at, finished_at)"
			" FROM pod_states WHERE last_reason IN ('OOMKilled', 'OOM Killed')"
			" OR reason IN ('OOMKilled', 'OOM Killed') ORDER BY pod, container", &q) == 0) {
		size_t kernel_kills = json_array_size(att);
		while (sqlite3_step(q) == SQLITE_ROW) {
			const char *pod = (const char *)sqlite3_column_text(q, 2);
			const char *cont = (const char *)sqlite3_column_text(q, 3);
			int64_t ft = sqlite3_column_type(q, 4) == SQLITE_NULL ? IQ_TIME_NONE : sqlite3_column_int64(q, 4);
			int dup = 0;
			size_t i;
			json_t *a;
			json_array_foreach(att, i, a) {
				if (i >= kernel_kills)
					break;
				const char *ap = json_string_value(json_object_get(a, "pod"));
				const char *ac = json_string_value(json_object_get(a, "container"));
				const char *at = json_string_value(json_object_get(a, "time"));
				int64_t t;
				int near = ft == IQ_TIME_NONE || !at || iq_time_parse_iso(at, strlen(at), &t, NULL) < 0 ||
					   llabs(t - ft) <= KILL_MATCH_NS;
				int same = ap && pod && !strcmp(ap, pod) && near &&
					   ((ac && cont && !strcmp(ac, cont)) || (!ac && cont));
				if (same && !ac) {
					/* the kernel's kill of a container it did not
					 * name: the status names it */
					json_object_set_new(a, "container", json_string(cont));
					const char *proc = json_string_value(json_object_get(a, "process"));
					int was = json_is_true(json_object_get(a, "serving_worker"));
					int w = is_worker(x, pod, cont, proc);
					workers += w - was;
					json_object_set_new(a, "serving_worker", json_boolean(w));
				}
				dup |= same;
			}
			if (dup) {
				/* its status line is evidence of the same kill */
				json_t *e = det_evidence_of(x, sqlite3_column_int64(q, 0));
				if (e)
					json_array_append_new(ev, e);
				continue;
			}
			kills++;
			int w = is_worker(x, pod, cont, NULL);
			workers += w;
			a = attribution((const char *)sqlite3_column_text(q, 1), pod, cont, NULL, det_time(q, 4));
			json_object_set_new(a, "pid", json_null());
			json_object_set_new(a, "serving_worker", json_boolean(w));
			json_array_append_new(att, a);
			json_t *e = det_evidence_of(x, sqlite3_column_int64(q, 0));
			if (e)
				json_array_append_new(ev, e);
		}
		sqlite3_finalize(q);
	}
	x->f.host_oom_kills = kills;
	x->f.host_oom_workers = workers;
	x->f.host_oom_on_oom_pods = on_oom;
	json_t *o = json_object();
	json_object_set_new(o, "id", json_string("host-oom"));
	json_object_set_new(o, "present", json_boolean(kills > 0));
	json_object_set_new(o, "count", json_integer(kills));
	json_object_set_new(o, "attributed_to", att);
	json_object_set_new(o, "evidence", ev);
	return o;
}

int det_boundaries(struct det *x)
{
	json_t *b = json_array();
	json_t *h = host_oom(x);
	if (!h) {
		json_decref(b);
		return IQ_ERR_DB;
	}
	json_array_append_new(b, h);
	json_array_append_new(b, det_flood(x));
	json_object_set_new(x->pat, "boundaries", b);
	/* fatal Xids and driver faults are tagged at ingest by the
	 * gpu-hardware-fault pack (a built-in pack, always loaded) */
	x->f.xid = det_scalar(x, "SELECT EXISTS (SELECT 1 FROM signal_matches"
			      " WHERE signal IN ('gpu-xid-fatal', 'gpu-driver-fault'))", 0) > 0;
	return 0;
}
