/* k8s_manifest.c: workload manifests (Deployment, StatefulSet, DaemonSet,
 * ReplicaSet, Job, CronJob, PodTemplate, Pod) and HorizontalPodAutoscalers
 * (autoscaling/v1, v2beta1, v2beta2, v2) and ConfigMaps, JSON or YAML, one
 * object, a multi-document stream or a List: config records of their
 * containers' args, env and limits, of the autoscalers' metrics and
 * bounds, and of the settings a ConfigMap holds. */
#include <jansson.h>
#include <string.h>

#include "k8s_doc.h"
#include "parse.h"

struct manifest {
	struct iq_k8s_reader *rd;
	struct iq_buf val, text;
};

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	IQ_UNUSED(path);
	unsigned f = iq_k8s_head_kinds(head, n);
	const char *lang = f & IQ_K8S_JSON ? "JSON" : "YAML";
	if (!(f & IQ_K8S_APIVER) || (f & (IQ_K8S_EVENT | IQ_K8S_INVOLVED)))
		return 0;
	if (f & IQ_K8S_POD && f & IQ_K8S_STATUS)
		return f & (IQ_K8S_WORKLOAD | IQ_K8S_HPA) ? 50 : 0;   /* pods with status: k8s-pods */
	if (f & (IQ_K8S_WORKLOAD | IQ_K8S_HPA)) {
		snprintf(why, whysz, "%s with kind %s%s", lang,
			 f & IQ_K8S_WORKLOAD ? (f & IQ_K8S_HPA ? "workload and HorizontalPodAutoscaler" :
						"Deployment/StatefulSet/DaemonSet/...") :
			 "HorizontalPodAutoscaler", f & IQ_K8S_LIST ? " in a List" : "");
		return 90;
	}
	if (f & IQ_K8S_POD) {
		snprintf(why, whysz, "%s with kind Pod and no status (a manifest)", lang);
		return 70;
	}
	if (f & IQ_K8S_CONFIGMAP) {
		snprintf(why, whysz, "%s with kind ConfigMap", lang);
		return 70;
	}
	return 0;
}

static struct iq_str jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (json_is_string(v))
		return iq_str_make(json_string_value(v), json_string_length(v));
	return IQ_STR_NULL;
}

static int str_eq(struct iq_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* Appends a scalar as written (numbers as their text); 0 when v is none. */
static int add_scalar(struct iq_buf *b, json_t *v)
{
	if (json_is_string(v))
		return iq_buf_add(b, json_string_value(v), json_string_length(v)) ? -1 : 1;
	if (json_is_integer(v))
		return iq_buf_printf(b, "%lld", (long long)json_integer_value(v)) ? -1 : 1;
	if (json_is_real(v))
		return iq_buf_printf(b, "%.15g", json_real_value(v)) ? -1 : 1;
	return 0;
}

/* A config record of the autoscaler at line, quoting the member at
 * qp[0..qn) of its object. */
static int config(struct manifest *m, const struct iq_parse_ctx *ctx, long line,
		  struct iq_str scope, const struct iq_ident *id, const char *key, struct iq_str val,
		  const struct iq_jpath *qp, size_t qn)
{
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_CONFIG);
	r.line = line;
	r.nquotes = qn ? iq_k8s_quote(m->rd, &r.quote[0], "setting", qp, qn) : 0;
	r.id = *id;
	r.u.config.scope = scope;
	r.u.config.key = iq_str_make(key, strlen(key));
	r.u.config.value = val;
	r.u.config.source = IQ_STR_LIT("hpa");
	iq_buf_reset(&m->text);
	if (iq_buf_adds(&m->text, key) || iq_buf_addc(&m->text, '=') ||
	    iq_buf_add(&m->text, val.p, val.n))
		return IQ_ERR_NOMEM;
	r.text = iq_str_make(m->text.p, m->text.len);
	return iq_k8s_record(m->rd, ctx, &r);
}

/* A scalar field as a config value (skipped when absent). */
static int config_field(struct manifest *m, const struct iq_parse_ctx *ctx, long line,
			struct iq_str scope, const struct iq_ident *id, const char *key, json_t *v,
			const char *field)
{
	iq_buf_reset(&m->val);
	int have = add_scalar(&m->val, v);
	if (have <= 0)
		return have < 0 ? IQ_ERR_NOMEM : 0;
	const struct iq_jpath qp[] = {{"spec", 0}, {field, 0}};
	return config(m, ctx, line, scope, id, key, iq_str_make(m->val.p, m->val.len), qp, 2);
}

/* "<Type>/<name>/<target type>/<value>" of one metric: v2/v2beta2 keep the
 * target in target {type, averageUtilization|averageValue|value}; v2beta1
 * in targetAverageUtilization, targetAverageValue or targetValue. */
static int metric_text(struct iq_buf *b, json_t *mt)
{
	static const struct { const char *type, *field; } subs[] = {
		{"Resource", "resource"}, {"ContainerResource", "containerResource"},
		{"Pods", "pods"}, {"Object", "object"}, {"External", "external"},
	};
	struct iq_str type = jstr(mt, "type");
	json_t *sub = NULL;
	for (size_t i = 0; i < IQ_ARRAY_LEN(subs); i++)
		if (str_eq(type, subs[i].type))
			sub = json_object_get(mt, subs[i].field);
	if (!type.n)
		return 0;
	struct iq_str name = jstr(sub, "name");
	if (!name.n)
		name = jstr(json_object_get(sub, "metric"), "name");
	if (!name.n)
		name = jstr(sub, "metricName");
	int rc = iq_buf_add(b, type.p, type.n) | iq_buf_addc(b, '/') | iq_buf_add(b, name.p, name.n);
	json_t *target = json_object_get(sub, "target");
	static const struct { const char *type, *field; } tv[] = {
		{"Utilization", "averageUtilization"}, {"AverageValue", "averageValue"},
		{"Value", "value"},
	};
	static const struct { const char *type, *field; } old[] = {
		{"Utilization", "targetAverageUtilization"}, {"AverageValue", "targetAverageValue"},
		{"Value", "targetValue"},
	};
	struct iq_str tt = jstr(target, "type");
	json_t *v = NULL;
	const char *ttype = NULL;
	if (json_is_object(target)) {
		for (size_t i = 0; i < IQ_ARRAY_LEN(tv) && !v; i++)
			if (str_eq(tt, tv[i].type) || !tt.n) {
				v = json_object_get(target, tv[i].field);
				ttype = tv[i].type;
			}
		/* a type naming a field that is absent: take what is there */
		for (size_t i = 0; i < IQ_ARRAY_LEN(tv) && !v; i++) {
			v = json_object_get(target, tv[i].field);
			ttype = tv[i].type;
		}
	} else {
		for (size_t i = 0; i < IQ_ARRAY_LEN(old) && !v; i++) {
			v = json_object_get(sub, old[i].field);
			ttype = old[i].type;
		}
	}
	rc |= iq_buf_addc(b, '/');
	if (tt.n && json_is_object(target))
		rc |= iq_buf_add(b, tt.p, tt.n);
	else if (v)
		rc |= iq_buf_adds(b, ttype);
	rc |= iq_buf_addc(b, '/');
	if (rc || add_scalar(b, v) < 0)
		return -1;
	return 1;
}

static int hpa(struct manifest *m, const struct iq_parse_ctx *ctx, json_t *o)
{
	json_t *meta = json_object_get(o, "metadata");
	json_t *spec = json_object_get(o, "spec");
	struct iq_str scope = jstr(meta, "name");
	struct iq_ident id = {.restart = -1};
	id.ns = jstr(meta, "namespace");
	long line = iq_k8s_item_line(m->rd);
	int rc;
	json_t *ref = json_object_get(spec, "scaleTargetRef");
	struct iq_str rk = jstr(ref, "kind"), rn = jstr(ref, "name");
	if (rn.n) {
		iq_buf_reset(&m->val);
		if (iq_buf_add(&m->val, rk.p, rk.n) || iq_buf_addc(&m->val, '/') ||
		    iq_buf_add(&m->val, rn.p, rn.n))
			return IQ_ERR_NOMEM;
		const struct iq_jpath qp[] = {{"spec", 0}, {"scaleTargetRef", 0}, {"name", 0}};
		if ((rc = config(m, ctx, line, scope, &id, "hpa_scale_target",
				 iq_str_make(m->val.p, m->val.len), qp, 3)))
			return rc;
	}
	if ((rc = config_field(m, ctx, line, scope, &id, "hpa_min_replicas",
			       json_object_get(spec, "minReplicas"), "minReplicas")) ||
	    (rc = config_field(m, ctx, line, scope, &id, "hpa_max_replicas",
			       json_object_get(spec, "maxReplicas"), "maxReplicas")))
		return rc;
	/* autoscaling/v1 */
	json_t *cpu = json_object_get(spec, "targetCPUUtilizationPercentage");
	if (cpu) {
		iq_buf_reset(&m->val);
		int have = iq_buf_adds(&m->val, "Resource/cpu/Utilization/") ? -1 : add_scalar(&m->val, cpu);
		if (have < 0)
			return IQ_ERR_NOMEM;
		const struct iq_jpath qp[] = {{"spec", 0}, {"targetCPUUtilizationPercentage", 0}};
		if (have && (rc = config(m, ctx, line, scope, &id, "hpa_metric",
					 iq_str_make(m->val.p, m->val.len), qp, 2)))
			return rc;
	}
	json_t *metrics = json_object_get(spec, "metrics");
	size_t i;
	json_t *mt;
	json_array_foreach(metrics, i, mt) {
		iq_buf_reset(&m->val);
		int have = metric_text(&m->val, mt);
		if (have < 0)
			return IQ_ERR_NOMEM;
		if (!have)
			continue;
		/* quote the metric's name ("name: cpu"), else its type */
		static const char *const subs[] = {"resource", "containerResource", "pods", "object", "external"};
		struct iq_jpath qp[] = {{"spec", 0}, {"metrics", 0}, {NULL, (long)i}, {"type", 0}, {"name", 0}};
		size_t qn = 4;
		for (size_t k = 0; k < IQ_ARRAY_LEN(subs); k++)
			if (json_object_get(mt, subs[k])) {
				qp[3].key = subs[k];
				qn = 5;
			}
		if ((rc = config(m, ctx, iq_k8s_line_of(m->rd, "spec.metrics", i), scope, &id,
				 "hpa_metric", iq_str_make(m->val.p, m->val.len), qp, qn)))
			return rc;
	}
	return 0;
}

/* Where a kind keeps its pod template's containers. */
static const char *containers_path(struct iq_str kind)
{
	static const struct { const char *kind, *path; } k[] = {
		{"Deployment", "spec.template.spec.containers"},
		{"StatefulSet", "spec.template.spec.containers"},
		{"DaemonSet", "spec.template.spec.containers"},
		{"ReplicaSet", "spec.template.spec.containers"},
		{"ReplicationController", "spec.template.spec.containers"},
		{"Job", "spec.template.spec.containers"},
		{"CronJob", "spec.jobTemplate.spec.template.spec.containers"},
		{"PodTemplate", "template.spec.containers"},
		{"Pod", "spec.containers"},
	};
	for (size_t i = 0; i < IQ_ARRAY_LEN(k); i++)
		if (str_eq(kind, k[i].kind))
			return k[i].path;
	return NULL;
}

static int manifest_item(void *u, const struct iq_parse_ctx *ctx, json_t *o)
{
	struct manifest *m = u;
	struct iq_str kind = jstr(o, "kind");
	if (str_eq(kind, "HorizontalPodAutoscaler"))
		return hpa(m, ctx, o);
	if (str_eq(kind, "ConfigMap")) {
		json_t *meta = json_object_get(o, "metadata");
		struct iq_ident id = {.restart = -1};
		id.ns = jstr(meta, "namespace");
		return iq_k8s_configmap_config(m->rd, ctx, o, iq_k8s_item_line(m->rd), jstr(meta, "name"), &id);
	}
	const char *path = containers_path(kind);
	if (!path) {
		iq_k8s_item_skip(m->rd, ctx, "not a workload");
		return 0;
	}
	/* walk the dotted path down to the containers array */
	json_t *c = o;
	char part[32];
	for (const char *p = path; c && *p;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		memcpy(part, p, n);
		part[n] = '\0';
		c = json_object_get(c, part);
		p += n + (dot ? 1 : 0);
	}
	json_t *meta = json_object_get(o, "metadata");
	struct iq_ident id = {.restart = -1};
	id.ns = jstr(meta, "namespace");
	struct iq_str scope = jstr(meta, "name");
	size_t i;
	json_t *ct;
	int rc = 0;
	json_array_foreach(c, i, ct) {
		if (!json_is_object(ct))
			continue;
		id.container = jstr(ct, "name");
		if ((rc = iq_k8s_container_config(m->rd, ctx, ct, iq_k8s_line_of(m->rd, path, i), scope,
						  &id)))
			break;
	}
	return rc;
}

static int begin(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(ctx);
	struct manifest *m = st;
	iq_buf_init(&m->val);
	iq_buf_init(&m->text);
	m->rd = iq_k8s_reader_new(manifest_item, m);
	return 0;
}

static int line(void *st, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct manifest *m = st;
	return iq_k8s_reader_line(m->rd, ctx, lineno, s, n);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	struct manifest *m = st;
	int rc = m->rd ? iq_k8s_reader_end(m->rd, ctx) : 0;
	iq_k8s_reader_free(m->rd);
	m->rd = NULL;
	iq_buf_release(&m->val);
	iq_buf_release(&m->text);
	return rc;
}

const struct iq_format iq_format_k8s_manifest = {
	.name = "k8s-manifest",
	.desc = "Kubernetes workload manifests, HorizontalPodAutoscalers and ConfigMaps (JSON or YAML): "
		"container args, env, limits, autoscaler metrics, settings files kept in ConfigMaps",
	.sniff = sniff,
	.state_size = sizeof(struct manifest),
	.begin = begin,
	.line = line,
	.end = end,
};
