/* verdict.c: the verdict of the GPU OOM cascade pattern. The pack's
 * "verdicts" rules decide (rules/README.md), their terms answered from the
 * findings; without such rules, this order (the first that holds wins):
 *   confirmed           CUDA OOM deaths spread over two or more pods in turn
 *   oom_no_cascade      CUDA OOM deaths, but they did not spread
 *   ruled_out_host_oom  serving workers were killed by the host/cgroup OOM killer
 *   ruled_out_flood     a 5xx surge driven by a few clients, no GPU pressure
 *   inconclusive        symptoms (surge, crash loops) but no worker logs to decide
 *   not_detected        nothing of the pattern
 * with a confidence that grows with the corroborating signals. */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "internal.h"

static json_t *find_id(json_t *a, const char *id)
{
	size_t i;
	json_t *o;
	json_array_foreach(a, i, o)
		if (json_is_string(json_object_get(o, "id")) && strcmp(json_string_value(json_object_get(o, "id")), id) == 0)
			return o;
	return NULL;
}

/* Answers a term of a pack's "when": signal:ID and condition:ID hold when
 * present; boundary:host-oom when the kills hit serving workers, other
 * boundaries when present; missing:KIND when the bundle has no records of
 * that kind (for "log": none from a pod's container). */
static int term(void *u, const char *what, const char *id)
{
	struct det *x = u;
	if (strcmp(what, "signal") == 0 || strcmp(what, "condition") == 0) {
		json_t *o = find_id(json_object_get(x->pat, what[0] == 's' ? "signals" : "conditions"), id);
		return o && json_is_true(json_object_get(o, "present"));
	}
	if (strcmp(what, "boundary") == 0) {
		if (strcmp(id, "host-oom") == 0 && x->ooms)
			return x->f.host_oom_workers > 0;
		json_t *o = find_id(json_object_get(x->pat, "boundaries"), id);
		return o && json_is_true(json_object_get(o, "present"));
	}
	if (strcmp(what, "missing") == 0) {
		if (strcmp(id, "log") == 0)
			return x->f.container_logs == 0;
		/* every record of a kind but log has a row in its typed table */
		static const struct { const char *kind, *sql; } typed[] = {
			{"http", "SELECT EXISTS (SELECT 1 FROM http_requests)"},
			{"gpu", "SELECT EXISTS (SELECT 1 FROM gpu_samples)"},
			{"event", "SELECT EXISTS (SELECT 1 FROM k8s_events)"},
			{"kernel", "SELECT EXISTS (SELECT 1 FROM kernel_events)"},
			{"pod", "SELECT EXISTS (SELECT 1 FROM pod_states)"},
			{"config", "SELECT EXISTS (SELECT 1 FROM config_settings)"},
		};
		for (size_t i = 0; i < IQ_ARRAY_LEN(typed); i++)
			if (strcmp(typed[i].kind, id) == 0)
				return det_scalar(x, typed[i].sql, 0) == 0;
		sqlite3_stmt *q;
		int64_t n = 0;
		if (det_prep(x, "SELECT EXISTS (SELECT 1 FROM records WHERE kind = ?1)", &q) == 0) {
			sqlite3_bind_text(q, 1, id, -1, SQLITE_STATIC);
			if (sqlite3_step(q) == SQLITE_ROW)
				n = sqlite3_column_int64(q, 0);
			sqlite3_finalize(q);
		}
		return n == 0;
	}
	return 0;
}

int det_verdict(struct det *x)
{
	const struct det_facts *f = &x->f;
	const char *v;
	double conf;
	char sum[1024];
	json_t *missing = json_array();
	if (f->container_logs == 0)
		json_array_append_new(missing, json_string("container logs of the serving pods"));
	if (f->lb_requests == 0)
		json_array_append_new(missing, json_string("load-balancer access logs"));
	if (f->gpu_samples == 0)
		json_array_append_new(missing, json_string("GPU memory samples"));

	int corroborating = f->surge + f->sawtooth + (f->crashloop_pods > 0) + f->load_shift_seen;
	const char *pv = NULL;
	json_object_set_new(x->pat, "verdict_rule", json_null());
	if (iq_pack_item_count(x->pack, "verdicts")) {
		long r = iq_pack_verdict_rule(x->pack, term, x);
		json_t *it = r < 0 ? NULL : iq_pack_item(x->pack, "verdicts", (size_t)r);
		pv = it ? iq_item_str(it, "verdict") : "not_detected";
		if (it)
			json_object_set_new(x->pat, "verdict_rule", json_string(iq_item_str(it, "when")));
	}
	if (pv ? strcmp(pv, "confirmed") == 0 : (f->oom_events > 0 && f->cascade)) {
		v = "confirmed";
		conf = 0.6 + 0.1 * corroborating;
		snprintf(sum, sizeof sum, "GPU OOM cascade: %s on %s died of a CUDA out-of-memory error first, and "
			 "%ld serving pods died the same way in turn%s%s.", f->first_pod, f->first_node, f->oom_pods,
			 f->surge ? ", while the load balancer returned a surge of 5xx" : "",
			 f->host_oom_kills ? " (the host OOM kills in the bundle hit other containers)" : "");
	} else if (pv ? strcmp(pv, "oom_no_cascade") == 0 : f->oom_events > 0) {
		v = "oom_no_cascade";
		conf = 0.7 + 0.05 * corroborating;
		snprintf(sum, sizeof sum, "%s on %s died of a CUDA out-of-memory error (%ld death%s), but the failure "
			 "did not spread to other pods.", f->first_pod, f->first_node, f->oom_events,
			 f->oom_events == 1 ? "" : "s");
	} else if (pv ? strcmp(pv, "ruled_out_host_oom") == 0 : f->host_oom_workers > 0) {
		v = "ruled_out_host_oom";
		conf = 0.85;
		snprintf(sum, sizeof sum, "Not a GPU OOM: %ld serving worker%s killed by the host's out-of-memory "
			 "killer (host RAM or cgroup limit), and no CUDA out-of-memory error was logged.",
			 f->host_oom_workers, f->host_oom_workers == 1 ? " was" : "s were");
	} else if (pv ? strcmp(pv, "ruled_out_flood") == 0 : f->flood) {
		v = "ruled_out_flood";
		conf = 0.8;
		snprintf(sum, sizeof sum, "Not a GPU OOM: the 5xx surge came from a few clients flooding the ingress, "
			 "with no CUDA out-of-memory error and no GPU memory pressure.");
	} else if (pv ? strcmp(pv, "inconclusive") == 0 : ((f->surge || f->crashloop_pods) && f->container_logs == 0)) {
		v = "inconclusive";
		conf = 0.3;
		snprintf(sum, sizeof sum, "The bundle lacks the serving pods' container logs, where CUDA OOM errors "
			 "appear%s%s%s.", f->surge || f->crashloop_pods ? ", and it shows symptoms of the pattern (" : "",
			 f->surge ? "a 5xx surge" : "", f->crashloop_pods ? (f->surge ? ", crash loops)" : "crash loops)")
			 : (f->surge ? ")" : ""));
	} else {
		v = "not_detected";
		conf = json_array_size(missing) ? 0.6 : 0.9;
		snprintf(sum, sizeof sum, "No CUDA out-of-memory error and nothing else of the GPU OOM cascade was "
			 "found%s.", f->xid ? "; NVIDIA Xid hardware faults were logged (see gpu-hardware-fault)" : "");
	}
	if (conf > 0.99)
		conf = 0.99;
	json_object_set_new(x->pat, "verdict", json_string(v));
	json_object_set_new(x->pat, "confidence", json_real(floor(conf * 100 + 0.5) / 100));
	json_object_set_new(x->pat, "summary", json_string(sum));
	json_object_set_new(x->pat, "sources_missing", missing);
	return 0;
}

int det_verdict_rules(struct det *x)
{
	/* the rule that held says why: two rules may give one verdict */
	long r = iq_pack_verdict_rule(x->pack, term, x);
	json_t *it = r < 0 ? NULL : iq_pack_item(x->pack, "verdicts", (size_t)r);
	const char *v = it ? iq_item_str(it, "verdict") : "not_detected";
	const char *why = it ? iq_item_text(it, "why", "en") : "";
	json_object_set_new(x->pat, "verdict_rule", it ? json_string(iq_item_str(it, "when")) : json_null());
	long present = 0;
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(x->pat, "signals"), i, o)
		present += json_is_true(json_object_get(o, "present"));
	char sum[512];
	if (*why)
		snprintf(sum, sizeof sum, "%c%s (%ld of its signals found).", toupper((unsigned char)why[0]), why + 1,
			 present);
	else
		snprintf(sum, sizeof sum, "%ld of its signals found.", present);
	json_object_set_new(x->pat, "verdict", json_string(v));
	json_object_set_new(x->pat, "confidence", json_real(strcmp(v, "confirmed") == 0 ? 0.8
				: strcmp(v, "inconclusive") == 0 ? 0.3 : 0.7));
	json_object_set_new(x->pat, "summary", json_string(sum));
	return 0;
}
