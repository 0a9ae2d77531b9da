/* cmd_parse.c: `inquest parse [--format NAME] [--path P] [--mtime T|none]
 * FILE`: the records one format makes of a file (decompressed), one JSON object a
 * line; the file's date (for years not written) is its mtime unless
 * --mtime says. The parser table tests (fixtures/lines/<format>/) compare
 * this output. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../bundle/bundle.h"
#include "../parse/parse.h"
#include "cli.h"

/* A JSON string of log bytes; invalid UTF-8 bytes are written as the
 * text \xNN so that the output stays valid JSON and shows what was there. */
static json_t *bytes_json(const char *p, size_t n)
{
	json_t *v = json_stringn(p, n);
	if (v)
		return v;
	struct iq_buf b;
	iq_buf_init(&b);
	for (size_t i = 0; i < n;) {
		size_t k = 1;
		unsigned char c = (unsigned char)p[i];
		if (c >= 0xC2 && c <= 0xF4) {
			k = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
			json_t *probe = i + k <= n ? json_stringn(p + i, k) : NULL;
			if (!probe)
				k = 0;
			json_decref(probe);
		}
		if (k == 0 || (c >= 0x80 && k == 1)) {
			iq_buf_printf(&b, "\\x%02x", c);
			i++;
			continue;
		}
		iq_buf_add(&b, p + i, k);
		i += k;
	}
	v = json_stringn(b.p ? b.p : "", b.len);
	iq_buf_release(&b);
	return v;
}

static void put_str(json_t *o, const char *k, struct iq_str s)
{
	if (s.n)
		json_object_set_new(o, k, bytes_json(s.p, s.n));
}

static void put_num(json_t *o, const char *k, double v)
{
	if (!isnan(v))
		json_object_set_new(o, k, json_real(v));
}

/* RFC 3339 with all nine fraction digits, for exact comparisons. */
static void put_time(json_t *o, const char *k, int64_t t)
{
	if (t == IQ_TIME_NONE)
		return;
	int y, mo, d, h, mi, s;
	long ns;
	char b[48];
	iq_time_split(t, &y, &mo, &d, &h, &mi, &s, &ns);
	snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", y, mo, d, h, mi, s, ns);
	json_object_set_new(o, k, json_string(b));
}

static void put_int_known(json_t *o, const char *k, int v)
{
	if (v >= 0)
		json_object_set_new(o, k, json_integer(v));
}

static json_t *ident_json(const struct iq_ident *id)
{
	json_t *o = json_object();
	put_str(o, "node", id->node);
	put_str(o, "namespace", id->ns);
	put_str(o, "pod", id->pod);
	put_str(o, "container", id->container);
	put_str(o, "pod_uid", id->pod_uid);
	put_str(o, "container_id", id->container_id);
	if (id->restart >= 0)
		json_object_set_new(o, "restart", json_integer(id->restart));
	return o;
}

static int on_record(void *u, const struct iq_record *r)
{
	IQ_UNUSED(u);
	json_t *o = json_object();
	json_object_set_new(o, "line", json_integer(r->line));
	if (r->nlines != 1)
		json_object_set_new(o, "nlines", json_integer(r->nlines));
	if (r->first_line)
		json_object_set_new(o, "first_line", json_integer(r->first_line));
	json_object_set_new(o, "kind", json_string(iq_kind_name(r->kind)));
	put_time(o, "ts", r->ts);
	json_object_set_new(o, "ts_how", json_string(iq_ts_how_name(r->ts_how)));
	put_str(o, "ts_raw", r->ts_raw);
	put_str(o, "stream", r->stream);
	put_str(o, "severity", r->severity);
	put_str(o, "text", r->text);
	if (r->nquotes > 0) {
		json_t *qs = json_array();
		for (int k = 0; k < r->nquotes && k < IQ_MAX_QUOTES; k++) {
			json_t *qo = json_object();
			json_object_set_new(qo, "what", json_string(r->quote[k].what ? r->quote[k].what : ""));
			json_object_set_new(qo, "line", json_integer(r->quote[k].line));
			put_str(qo, "text", r->quote[k].text);
			json_array_append_new(qs, qo);
		}
		json_object_set_new(o, "quotes", qs);
	}
	json_t *id = ident_json(&r->id);
	if (json_object_size(id))
		json_object_set(o, "ident", id);
	json_decref(id);
	json_t *t = json_object();
	switch (r->kind) {
	case IQ_KIND_HTTP: {
		const struct iq_http *h = &r->u.http;
		put_str(t, "client", h->client);
		put_str(t, "method", h->method);
		put_str(t, "path", h->path);
		put_str(t, "proto", h->proto);
		put_str(t, "host", h->host);
		put_str(t, "user_agent", h->user_agent);
		put_str(t, "request_id", h->request_id);
		if (h->status)
			json_object_set_new(t, "status", json_integer(h->status));
		if (h->bytes_sent >= 0)
			json_object_set_new(t, "bytes_sent", json_integer(h->bytes_sent));
		put_num(t, "duration_s", h->duration_s);
		put_str(t, "upstream_name", h->upstream_name);
		if (h->n_upstreams) {
			json_t *a = json_array();
			for (int i = 0; i < h->n_upstreams && i < IQ_MAX_UPSTREAMS; i++) {
				json_t *e = json_object();
				put_str(e, "addr", h->upstream_addr[i]);
				if (h->upstream_status[i])
					json_object_set_new(e, "status", json_integer(h->upstream_status[i]));
				put_num(e, "time_s", h->upstream_time_s[i]);
				json_array_append_new(a, e);
			}
			json_object_set_new(t, "upstreams", a);
		}
		json_object_set(o, "http", t);
		break;
	}
	case IQ_KIND_GPU: {
		const struct iq_gpu *g = &r->u.gpu;
		if (g->index >= 0)
			json_object_set_new(t, "index", json_integer(g->index));
		put_str(t, "uuid", g->uuid);
		put_str(t, "pci_bus", g->pci_bus);
		put_str(t, "name", g->name);
		put_num(t, "mem_used_mib", g->mem_used_mib);
		put_num(t, "mem_total_mib", g->mem_total_mib);
		put_num(t, "mem_free_mib", g->mem_free_mib);
		put_num(t, "util_gpu_pct", g->util_gpu_pct);
		put_num(t, "util_mem_pct", g->util_mem_pct);
		put_num(t, "temp_c", g->temp_c);
		put_num(t, "power_w", g->power_w);
		json_object_set(o, "gpu", t);
		break;
	}
	case IQ_KIND_EVENT: {
		const struct iq_event *e = &r->u.event;
		put_str(t, "type", e->type);
		put_str(t, "reason", e->reason);
		put_str(t, "message", e->message);
		put_str(t, "object_kind", e->object_kind);
		put_str(t, "object_name", e->object_name);
		put_str(t, "object_namespace", e->object_ns);
		put_str(t, "source", e->source);
		put_str(t, "host", e->host);
		json_object_set_new(t, "count", json_integer(e->count));
		put_time(t, "first_ts", e->first_ts);
		put_time(t, "last_ts", e->last_ts);
		json_object_set(o, "event", t);
		break;
	}
	case IQ_KIND_KERNEL: {
		const struct iq_kernel *k = &r->u.kernel;
		put_str(t, "host", k->host);
		put_str(t, "facility", k->facility);
		put_num(t, "boot_s", k->boot_s);
		json_object_set(o, "kernel", t);
		break;
	}
	case IQ_KIND_POD: {
		const struct iq_pod *p = &r->u.pod;
		put_str(t, "namespace", p->ns);
		put_str(t, "name", p->name);
		put_str(t, "uid", p->uid);
		put_str(t, "node", p->node);
		put_str(t, "pod_ip", p->pod_ip);
		put_str(t, "phase", p->phase);
		put_str(t, "container", p->container);
		put_str(t, "container_id", p->container_id);
		put_str(t, "image", p->image);
		put_int_known(t, "restart_count", p->restart_count);
		put_int_known(t, "ready", p->ready);
		put_str(t, "state", p->state);
		put_str(t, "reason", p->reason);
		put_int_known(t, "exit_code", p->exit_code);
		put_time(t, "started_at", p->started_at);
		put_time(t, "finished_at", p->finished_at);
		put_str(t, "last_reason", p->last_reason);
		put_int_known(t, "last_exit_code", p->last_exit_code);
		put_time(t, "last_started_at", p->last_started_at);
		put_time(t, "last_finished_at", p->last_finished_at);
		put_time(t, "ready_since", p->ready_since);
		json_object_set(o, "pod", t);
		break;
	}
	case IQ_KIND_CONFIG: {
		const struct iq_config *c = &r->u.config;
		put_str(t, "scope", c->scope);
		put_str(t, "key", c->key);
		put_str(t, "value", c->value);
		put_str(t, "source", c->source);
		json_object_set(o, "config", t);
		break;
	}
	case IQ_KIND_LOG:
		break;
	}
	json_decref(t);
	char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	puts(s);
	free(s);
	json_decref(o);
	return 0;
}

static void on_skip(void *u, long first, long count, const char *reason, const char *text, size_t n)
{
	IQ_UNUSED(u);
	IQ_UNUSED(text);
	IQ_UNUSED(n);
	printf("{\"skip\":%ld,\"count\":%ld,\"reason\":\"%s\"}\n", first, count, reason);
}

static ssize_t read_file(void *src, void *buf, size_t n, struct iq_diag *d)
{
	FILE *f = src;
	size_t got = fread(buf, 1, n, f);
	if (got == 0 && ferror(f))
		return iq_diag_set(d, IQ_ERR_INPUT, "read error: %s", strerror(errno));
	return (ssize_t)got;
}

static ssize_t read_member(void *src, void *buf, size_t n, struct iq_diag *d)
{
	return iq_member_read(src, buf, n, d);
}

/* A compressed file (gzip, zstd, xz, bzip2 by their first bytes) is
 * parsed decompressed, as analyze reads it. */
static int compressed(FILE *f)
{
	unsigned char m[6] = {0};
	size_t n = fread(m, 1, sizeof m, f);
	rewind(f);
	return (n >= 2 && m[0] == 0x1f && m[1] == 0x8b) ||
	       (n >= 4 && memcmp(m, "\x28\xb5\x2f\xfd", 4) == 0) ||
	       (n >= 6 && memcmp(m, "\xfd" "7zXZ\x00", 6) == 0) ||
	       (n >= 3 && memcmp(m, "BZh", 3) == 0);
}

struct parse_job {
	const struct iq_format *forced;
	const char *pathhint, *mtime_arg;
	int64_t mtime;
	long members;
	int rc;
	struct iq_diag d;
};

/* Parses one source: its first bytes in head, the rest through rd. */
static int parse_one(struct parse_job *j, const char *file, const char *path, int64_t mtime, char *head, size_t n,
		     iq_read_fn rd, void *src)
{
	const struct iq_format *format = j->forced;
	char why[256];
	if (!format) {
		format = iq_sniff(path, head, n, why, sizeof why);
		if (!format)
			format = iq_format_find("plain");
	}
	struct iq_parse_ctx ctx = {.path = path, .mtime = mtime};
	iq_path_ident(path, &ctx.file_id);
	ctx.sink.record = on_record;
	ctx.sink.skip = on_skip;
	struct iq_file_stats st;
	int rc = iq_parse_run(format, &ctx, head, n, rd, src, &st, &j->d);
	if (rc) {
		iq_errorf("%s: %s", file, j->d.msg);
		return iq_exit_of(rc);
	}
	fprintf(stderr, "%s: format %s, %ld lines read, %ld parsed, %ld skipped, %ld records\n",
		file, format->name, st.lines_read, st.lines_parsed, st.lines_skipped, st.records);
	return IQ_EXIT_OK;
}

static int count_member(struct iq_member *m, void *u)
{
	IQ_UNUSED(m);
	return ++((struct parse_job *)u)->members > 1;
}

static int parse_member(struct iq_member *m, void *u)
{
	struct parse_job *j = u;
	char *head = iq_xmalloc(IQ_HEAD_BYTES);
	size_t n = 0;
	while (n < IQ_HEAD_BYTES) {
		ssize_t got = iq_member_read(m, head + n, IQ_HEAD_BYTES - n, &j->d);
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	int64_t mt = j->mtime_arg ? j->mtime : m->mtime;
	j->rc = parse_one(j, m->path, j->pathhint ? j->pathhint : m->path, mt, head, n, read_member, m);
	free(head);
	return 0;
}

int iq_cmd_parse(const struct iq_args *a)
{
	const char *fmt = iq_arg(a, "--format"), *file = a->pos[0], *pathhint = iq_arg(a, "--path");
	const char *mtime = iq_arg(a, "--mtime");
	if (fmt && !iq_format_find(fmt)) {
		const char *names[64];
		size_t n = 0;
		for (size_t i = 0; i < iq_format_count() && n < IQ_ARRAY_LEN(names); i++)
			names[n++] = iq_format_at(i)->name;
		const char *sug = iq_suggest(fmt, names, n);
		iq_usage_error(a->cmd, "unknown format '%s'%s%s%s", fmt, sug ? "; did you mean '" : "",
			       sug ? sug : "", sug ? "'?" : " (see the Formats table of the README)");
		return IQ_EXIT_USAGE;
	}
	int64_t mt = IQ_TIME_NONE;
	if (mtime && strcmp(mtime, "none") != 0 && iq_time_parse_arg(mtime, &mt) != 0) {
		iq_usage_error(a->cmd, "--mtime takes an RFC 3339 time, a date or 'none', not '%s'", mtime);
		return IQ_EXIT_USAGE;
	}
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
	if (!f) {
		iq_errorf("cannot open '%s': %s", file, strerror(errno));
		return IQ_EXIT_INPUT;
	}
	struct parse_job j = {.forced = fmt ? iq_format_find(fmt) : NULL, .pathhint = pathhint, .mtime_arg = mtime,
			      .mtime = mt};
	if (f != stdin && compressed(f)) {
		/* decompressed by the bundle walker, as analyze reads it: one
		 * file, not an archive of several */
		fclose(f);
		struct iq_walk_opts o = {.path_as_given = 1, .u = &j};
		int rc = iq_bundle_walk(file, &o, count_member, &j.d);
		if ((rc && j.members <= 1) || j.members == 0) {
			iq_errorf("%s: %s", file, rc ? j.d.msg : "no file in it");
			return IQ_EXIT_INPUT;
		}
		if (j.members > 1) {
			iq_errorf("%s: an archive of several files: parse takes one (inquest sniff lists its members; "
				  "inquest analyze reads them all)", file);
			return IQ_EXIT_USAGE;
		}
		j.members = 0;
		if ((rc = iq_bundle_walk(file, &o, parse_member, &j.d)) != 0) {
			iq_errorf("%s: %s", file, j.d.msg);
			return IQ_EXIT_INPUT;
		}
		return j.rc;
	}
	char *head = iq_xmalloc(IQ_HEAD_BYTES);
	size_t n = fread(head, 1, IQ_HEAD_BYTES, f);
	/* the file's date is its mtime, as a bundle member's is, unless given
	 * (--mtime none: no date) */
	struct stat sb;
	if (!mtime && f != stdin && fstat(fileno(f), &sb) == 0)
		mt = (int64_t)sb.st_mtim.tv_sec * IQ_NS_PER_SEC + sb.st_mtim.tv_nsec;
	int rc = parse_one(&j, file, pathhint ? pathhint : file, mt, head, n, read_file, f);
	free(head);
	if (f != stdin)
		fclose(f);
	return rc;
}
