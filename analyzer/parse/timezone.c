/* timezone.c: what zone a node's clock writes local times in: the
 * etc/timezone file ("Europe/Istanbul") and `timedatectl` output
 * ("       Time zone: Europe/Istanbul (+03, +0300)"). Each becomes a config
 * record, key "timezone", scope "node", source "etc/timezone" or
 * "timedatectl"; detect/zones.c gives the node's zone-less times that zone.
 *
 * Decisions: a zone name is 1..64 characters of letters, digits and
 * "/_+-", as the zoneinfo tree names them (whether this machine knows it
 * is detect's business); etc/timezone is recognised by its name and one
 * such line, timedatectl output by its first line, "Local time:", and a
 * "Time zone:" line in its head. Other lines: etc/timezone's are skipped "not a zone name",
 * timedatectl's other fields "timedatectl field". */
#include <string.h>

#include "parse.h"

/* The zone name at the start of s (n bytes, to the first space); its length or 0. */
static size_t zone_name(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && i <= 64 && s[i] != ' ' && s[i] != '\t') {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '/' || c == '_' || c == '+' || c == '-'))
			return 0;
		i++;
	}
	return i <= 64 ? i : 0;
}

static size_t skip_sp(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/* "Time zone: X ..." in timedatectl output: the offset of X, its length in *zn. */
static size_t timedatectl_zone(const char *s, size_t n, size_t *zn)
{
	size_t i = skip_sp(s, n, 0);
	if (n - i < 10 || memcmp(s + i, "Time zone:", 10) != 0)
		return 0;
	i = skip_sp(s, n, i + 10);
	*zn = zone_name(s + i, n - i);
	return *zn ? i : 0;
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;
	return b ? b + 1 : path ? path : "";
}

static int sniff(const char *path, const char *head, size_t n, char *why, size_t whysz)
{
	size_t zn;
	/* timedatectl prints "Local time:" first */
	size_t i = 0;
	while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n'))
		i++;
	if (n - i >= 11 && memcmp(head + i, "Local time:", 11) == 0 &&
	    iq_memmem(head, n, "Time zone:", 10)) {
		const char *p = iq_memmem(head, n, "Time zone:", 10);
		const char *e = memchr(p, '\n', (size_t)(head + n - p));
		size_t len = e ? (size_t)(e - p) : (size_t)(head + n - p);
		if (timedatectl_zone(p, len, &zn)) {
			snprintf(why, whysz, "timedatectl output (Time zone:, Local time:)");
			return 90;
		}
	}
	if (strcmp(base_name(path), "timezone") != 0)
		return 0;
	const char *e = memchr(head, '\n', n);
	size_t len = e ? (size_t)(e - head) : n;
	if (len && head[len - 1] == '\r')
		len--;
	if (len && zone_name(head, len) == len) {
		snprintf(why, whysz, "a timezone file holding a zone name");
		return 90;
	}
	return 0;
}

struct st {
	int timedatectl;
};

static int begin(void *stv, const struct iq_parse_ctx *ctx)
{
	struct st *st = stv;
	st->timedatectl = strcmp(base_name(ctx->path), "timezone") != 0;
	return 0;
}

static int line(void *stv, const struct iq_parse_ctx *ctx, long lineno, const char *s, size_t n)
{
	struct st *st = stv;
	if (skip_sp(s, n, 0) == n) {
		ctx->sink.skip(ctx->sink.u, lineno, 1, "blank", NULL, 0);
		return 0;
	}
	size_t at = 0, zn = 0;
	if (st->timedatectl) {
		at = timedatectl_zone(s, n, &zn);
		if (!at) {
			ctx->sink.skip(ctx->sink.u, lineno, 1, "timedatectl field", s, n);
			return 0;
		}
	} else {
		at = skip_sp(s, n, 0);
		zn = zone_name(s + at, n - at);
		if (!zn || skip_sp(s, n, at + zn) != n) {
			ctx->sink.skip(ctx->sink.u, lineno, 1, "not a zone name", s, n);
			return 0;
		}
	}
	struct iq_record r;
	iq_record_init(&r, IQ_KIND_CONFIG);
	r.line = lineno;
	r.text = iq_str_make(s, n);
	r.u.config.scope = IQ_STR_LIT("node");
	r.u.config.key = IQ_STR_LIT("timezone");
	r.u.config.value = iq_str_make(s + at, zn);
	r.u.config.source = st->timedatectl ? IQ_STR_LIT("timedatectl") : IQ_STR_LIT("etc/timezone");
	return ctx->sink.record(ctx->sink.u, &r);
}

static int end(void *st, const struct iq_parse_ctx *ctx)
{
	IQ_UNUSED(st);
	IQ_UNUSED(ctx);
	return 0;
}

const struct iq_format iq_format_timezone = {
	.name = "timezone",
	.desc = "a node's time zone: etc/timezone, timedatectl output",
	.sniff = sniff,
	.state_size = sizeof(struct st),
	.begin = begin,
	.line = line,
	.end = end,
};
