/* k8s_doc.h: the Kubernetes object reader the pod listings (k8s_pods.c,
 * where it lives) and the workload manifests (k8s_manifest.c) share: it
 * streams JSON or YAML one object (list item, document) at a time, knows
 * the line where each object of an array inside it starts, and where a
 * member of the current object is written. */
#ifndef IQ_K8S_DOC_H
#define IQ_K8S_DOC_H

#include <jansson.h>

#include "locate.h"
#include "parse.h"

struct iq_k8s_reader;

/* Flags iq_k8s_head_kinds finds in the head of a file. */
#define IQ_K8S_JSON      0x001u  /* the head is JSON */
#define IQ_K8S_YAML      0x002u  /* the head is YAML */
#define IQ_K8S_APIVER    0x004u  /* an object-level apiVersion */
#define IQ_K8S_POD       0x008u  /* object-level kinds: Pod */
#define IQ_K8S_LIST      0x010u  /* List, PodList, ... */
#define IQ_K8S_EVENT     0x020u  /* Event */
#define IQ_K8S_WORKLOAD  0x040u  /* Deployment, StatefulSet, DaemonSet, ReplicaSet, Job... */
#define IQ_K8S_HPA       0x080u  /* HorizontalPodAutoscaler */
#define IQ_K8S_OTHER     0x100u  /* another kind */
#define IQ_K8S_STATUS    0x200u  /* pod status keys (containerStatuses, podIP, phase) */
#define IQ_K8S_INVOLVED  0x400u  /* event keys (involvedObject, regarding) */
#define IQ_K8S_CONFIGMAP 0x800u  /* ConfigMap */

/* Which kinds the Kubernetes objects in head (n bytes, possibly cut) have,
 * as IQ_K8S_* flags; 0 when head is neither JSON nor YAML of that kind.
 * Only object-level kinds count (a document, a list's items), not those of
 * ownerReferences or scaleTargetRef. */
unsigned iq_k8s_head_kinds(const char *head, size_t n);

/* A reader calling item(u, ctx, obj) for every object in the input: each
 * item of a List (JSON or YAML), each YAML document, each JSON value of a
 * stream. obj is borrowed for the call. item emits records through
 * iq_k8s_record in line order and returns 0 or a negative iq_err. The
 * reader accounts for all lines no record names ("json envelope", "yaml
 * structure", or why an object was dropped). Caller frees with
 * iq_k8s_reader_free. */
struct iq_k8s_reader *iq_k8s_reader_new(int (*item)(void *u, const struct iq_parse_ctx *ctx,
						    json_t *obj),
					 void *u);
/* Feeds one line (the format's line callback). Returns 0 or an iq_err. */
int iq_k8s_reader_line(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, long lineno,
		       const char *s, size_t n);
/* Flushes the last object and accounts for the remaining lines. */
int iq_k8s_reader_end(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx);
void iq_k8s_reader_free(struct iq_k8s_reader *rd);
/* The line where the current object starts. */
long iq_k8s_item_line(const struct iq_k8s_reader *rd);
/* The line where element index of the array at path (keys from the current
 * object down, joined by '.', e.g. "status.containerStatuses") starts;
 * the object's own line when the reader did not see it. */
long iq_k8s_line_of(const struct iq_k8s_reader *rd, const char *path, size_t index);
/* Sends r (r->line set by the caller) after accounting for the lines
 * before it. Returns the sink's result. */
int iq_k8s_record(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, struct iq_record *r);
/* Accounts for the rest of the current object with reason (a literal). */
void iq_k8s_item_skip(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, const char *reason);
/* Config records of one container object c (core/v1 Container): its
 * command and args as normalised flags (source "container-args"), env
 * (key lower-cased, source "env") and resources.limits (source
 * "resources"), all at line, with scope and id. Returns 0 or an iq_err. */
int iq_k8s_container_config(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, json_t *c,
			    long line, struct iq_str scope, const struct iq_ident *id);

/* Config records of ConfigMap o's data (source "configmap", scope its
 * name): a value that is itself a YAML or JSON mapping (a server.yaml, a
 * config.json mounted from it) gives one record per scalar leaf, keyed by
 * the leaf's name ("batching: {max_batch_size: 16}" is max_batch_size=16);
 * another value gives one record keyed by its data key, as an env var
 * (envFrom) would be. Each quotes the line that holds its key. Returns 0
 * or an iq_err. */
int iq_k8s_configmap_config(struct iq_k8s_reader *rd, const struct iq_parse_ctx *ctx, json_t *o,
			    long line, struct iq_str scope, const struct iq_ident *id);

/* A quote of the current object's member at path[0..len) (from the
 * object itself: {"status"}, {"containerStatuses"}, {NULL, 2}, ...): fills
 * q with the member's line and its text on that line, named what (a
 * literal), and returns 1; 0 when the member is not written in the
 * object's text. Valid during the item callback. */
int iq_k8s_quote(const struct iq_k8s_reader *rd, struct iq_quote *q, const char *what,
		 const struct iq_jpath *path, size_t len);

/* A quote of the first line of the current object, from from_line on,
 * that holds needle (an argument, an env var's name as written): the line
 * without its indentation. 1, or 0 when needle is not written there. */
int iq_k8s_quote_find(const struct iq_k8s_reader *rd, struct iq_quote *q, const char *what,
		      struct iq_str needle, long from_line);

#endif
