/* batch.c: deep copies of records into a batch's arena. The string fields
 * of each record kind are listed once, below; a static assertion on each
 * kind's size makes a new field fail the build until it is listed. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"

#define F(field) offsetof(struct iq_record, field)

static const size_t common_strs[] = {
	F(ts_raw), F(stream), F(severity), F(text), F(id.node), F(id.ns), F(id.pod),
	F(id.container), F(id.pod_uid), F(id.container_id),
	F(quote[0].text), F(quote[1].text), F(quote[2].text), F(quote[3].text),
};
static const size_t http_strs[] = {
	F(u.http.client), F(u.http.method), F(u.http.path), F(u.http.proto), F(u.http.host),
	F(u.http.user_agent), F(u.http.request_id), F(u.http.upstream_name),
	F(u.http.upstream_addr[0]), F(u.http.upstream_addr[1]), F(u.http.upstream_addr[2]),
	F(u.http.upstream_addr[3]), F(u.http.upstream_addr[4]), F(u.http.upstream_addr[5]),
	F(u.http.upstream_addr[6]), F(u.http.upstream_addr[7]),
};
static const size_t gpu_strs[] = {F(u.gpu.uuid), F(u.gpu.pci_bus), F(u.gpu.name)};
static const size_t event_strs[] = {
	F(u.event.type), F(u.event.reason), F(u.event.message), F(u.event.object_kind),
	F(u.event.object_name), F(u.event.object_ns), F(u.event.source), F(u.event.host),
};
static const size_t kernel_strs[] = {F(u.kernel.host), F(u.kernel.facility)};
static const size_t pod_strs[] = {
	F(u.pod.ns), F(u.pod.name), F(u.pod.uid), F(u.pod.node), F(u.pod.pod_ip),
	F(u.pod.phase), F(u.pod.container), F(u.pod.container_id), F(u.pod.image),
	F(u.pod.state), F(u.pod.reason), F(u.pod.last_reason),
};
static const size_t config_strs[] = {
	F(u.config.scope), F(u.config.key), F(u.config.value), F(u.config.source),
};

/* A field added to a record struct must be listed above when it is a
 * slice; these sizes (LP64) make the build fail until someone has looked. */
#if UINTPTR_MAX == 0xffffffffffffffffu
_Static_assert(IQ_MAX_UPSTREAMS == 8, "list every upstream_addr in http_strs");
_Static_assert(sizeof(struct iq_ident) == 104, "struct iq_ident changed: update common_strs");
_Static_assert(sizeof(struct iq_http) == 384, "struct iq_http changed: update http_strs");
_Static_assert(sizeof(struct iq_gpu) == 112, "struct iq_gpu changed: update gpu_strs");
_Static_assert(sizeof(struct iq_event) == 160, "struct iq_event changed: update event_strs");
_Static_assert(sizeof(struct iq_kernel) == 40, "struct iq_kernel changed: update kernel_strs");
_Static_assert(sizeof(struct iq_pod) == 256, "struct iq_pod changed: update pod_strs");
_Static_assert(sizeof(struct iq_config) == 64, "struct iq_config changed: update config_strs");
_Static_assert(IQ_MAX_QUOTES == 4, "list every quote's text in common_strs");
_Static_assert(sizeof(struct iq_record) == 736, "struct iq_record changed: update common_strs");
#endif

struct kind_strs {
	const size_t *off;
	size_t n;
};

static struct kind_strs strs_of(enum iq_kind k)
{
	switch (k) {
	case IQ_KIND_HTTP: return (struct kind_strs){http_strs, IQ_ARRAY_LEN(http_strs)};
	case IQ_KIND_GPU: return (struct kind_strs){gpu_strs, IQ_ARRAY_LEN(gpu_strs)};
	case IQ_KIND_EVENT: return (struct kind_strs){event_strs, IQ_ARRAY_LEN(event_strs)};
	case IQ_KIND_KERNEL: return (struct kind_strs){kernel_strs, IQ_ARRAY_LEN(kernel_strs)};
	case IQ_KIND_POD: return (struct kind_strs){pod_strs, IQ_ARRAY_LEN(pod_strs)};
	case IQ_KIND_CONFIG: return (struct kind_strs){config_strs, IQ_ARRAY_LEN(config_strs)};
	case IQ_KIND_LOG: break;
	}
	return (struct kind_strs){NULL, 0};
}

static struct iq_str *slice_at(struct iq_record *r, size_t off)
{
	return (struct iq_str *)(void *)((char *)r + off);
}

static const struct iq_str *cslice_at(const struct iq_record *r, size_t off)
{
	return (const struct iq_str *)(const void *)((const char *)r + off);
}

struct iq_batch *iq_batch_new(void)
{
	struct iq_batch *b = iq_xcalloc(1, sizeof *b);
	iq_buf_init(&b->caps);
	return b;
}

void iq_batch_free(struct iq_batch *b)
{
	if (!b)
		return;
	free(b->recs);
	free(b->matches);
	free(b->arena);
	iq_buf_release(&b->caps);
	free(b);
}

void iq_batch_clear(struct iq_batch *b)
{
	b->n = b->nmatches = b->used = 0;
	iq_buf_reset(&b->caps);
}

static size_t strings_size(const struct iq_record *r, struct kind_strs ks)
{
	size_t need = 0;
	for (size_t i = 0; i < IQ_ARRAY_LEN(common_strs); i++)
		need += cslice_at(r, common_strs[i])->n;
	for (size_t i = 0; i < ks.n; i++)
		need += cslice_at(r, ks.off[i])->n;
	return need;
}

static void copy_slice(struct iq_batch *b, struct iq_str *s)
{
	if (!s->n) {
		s->p = NULL;
		return;
	}
	char *dst = b->arena + b->used;
	memcpy(dst, s->p, s->n);
	b->used += s->n;
	s->p = dst;
}

int iq_batch_add(struct iq_batch *b, const struct iq_record *r)
{
	struct kind_strs ks = strs_of(r->kind);
	size_t need = strings_size(r, ks);
	if (b->n && (b->n >= IQ_BATCH_RECORDS || b->used + need > b->acap))
		return 1;
	if (!b->n && need > b->acap) {
		/* empty: nothing points into the arena yet, so it may move */
		b->acap = need > IQ_BATCH_BYTES ? need : IQ_BATCH_BYTES;
		free(b->arena);
		b->arena = iq_xmalloc(b->acap);
	}
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		b->recs = iq_xrealloc(b->recs, b->cap * sizeof *b->recs);
	}
	struct iq_batch_rec *br = &b->recs[b->n++];
	br->r = *r;
	br->first_match = (uint32_t)b->nmatches;
	br->nmatches = 0;
	br->unexplained = 0;
	for (size_t i = 0; i < IQ_ARRAY_LEN(common_strs); i++)
		copy_slice(b, slice_at(&br->r, common_strs[i]));
	for (size_t i = 0; i < ks.n; i++)
		copy_slice(b, slice_at(&br->r, ks.off[i]));
	return 0;
}

void iq_batch_add_match(struct iq_batch *b, const char *pack, const char *signal,
			const char *captures)
{
	if (!b->n)
		return;
	if (b->nmatches == b->mcap) {
		b->mcap = b->mcap ? b->mcap * 2 : 64;
		b->matches = iq_xrealloc(b->matches, b->mcap * sizeof *b->matches);
	}
	struct iq_batch_match *m = &b->matches[b->nmatches++];
	m->pack = pack;
	m->signal = signal;
	m->caps_off = IQ_BATCH_NOCAPS;
	if (captures) {
		size_t off = b->caps.len;
		if (iq_buf_add(&b->caps, captures, strlen(captures) + 1) == 0)
			m->caps_off = off;
	}
	b->recs[b->n - 1].nmatches++;
}

const char *iq_batch_captures(const struct iq_batch *b, const struct iq_batch_match *m)
{
	return m->caps_off == IQ_BATCH_NOCAPS ? NULL : b->caps.p + m->caps_off;
}

size_t iq_batch_bytes(const struct iq_batch *b)
{
	return sizeof *b + b->acap + b->cap * sizeof *b->recs + b->mcap * sizeof *b->matches +
	       b->caps.cap;
}
