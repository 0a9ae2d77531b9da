/* logpath.c: who a file is about, from where it sits in the bundle: the
 * kubelet's log layouts and the bundle's per-node folders. */
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* Finds the last occurrence of needle in the path. */
static const char *rfind(const char *hay, const char *needle)
{
	const char *last = NULL;
	size_t nl = strlen(needle);
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += nl)
		last = p;
	return last;
}

/* The path component starting at p: its length up to '/', '!' or the end. */
static size_t comp_len(const char *p)
{
	size_t n = 0;
	while (p[n] && p[n] != '/' && p[n] != '!')
		n++;
	return n;
}

/* Leading decimal restart number of "<n>.log[...]". */
static int restart_of(const char *p, size_t n)
{
	if (n == 0 || p[0] < '0' || p[0] > '9')
		return -1;
	long v = 0;
	size_t i = 0;
	while (i < n && p[i] >= '0' && p[i] <= '9' && v < 1000000)
		v = v * 10 + (p[i++] - '0');
	if (i + 4 > n || strncmp(p + i, ".log", 4) != 0)
		return -1;
	return (int)v;
}

static void pods_layout(const char *p, struct iq_ident *id)
{
	/* p points after "var/log/pods/" */
	size_t dl = comp_len(p);
	const char *u1 = memchr(p, '_', dl);
	if (u1) {
		const char *u2 = memchr(u1 + 1, '_', (size_t)(p + dl - (u1 + 1)));
		if (u2) {
			id->ns = iq_str_make(p, (size_t)(u1 - p));
			id->pod = iq_str_make(u1 + 1, (size_t)(u2 - u1 - 1));
			id->pod_uid = iq_str_make(u2 + 1, (size_t)(p + dl - u2 - 1));
		} else {
			id->pod_uid = iq_str_make(p, dl);
		}
	} else {
		id->pod_uid = iq_str_make(p, dl);
	}
	if (p[dl] != '/')
		return;
	const char *c = p + dl + 1;
	size_t cl = comp_len(c);
	if (c[cl] == '/') {
		id->container = iq_str_make(c, cl);
		const char *f = c + cl + 1;
		id->restart = restart_of(f, comp_len(f));
	} else {
		/* legacy: <uid>/<container>_<n>.log */
		const char *us = NULL;
		for (size_t i = 0; i < cl; i++)
			if (c[i] == '_')
				us = c + i;
		if (us) {
			id->container = iq_str_make(c, (size_t)(us - c));
			id->restart = restart_of(us + 1, (size_t)(c + cl - us - 1));
		}
	}
}

static void containers_layout(const char *p, struct iq_ident *id)
{
	/* <pod>_<ns>_<container>-<id>.log */
	size_t n = comp_len(p);
	const char *end = p + n;
	if (n > 4 && strncmp(end - 4, ".log", 4) == 0)
		end -= 4;
	const char *u1 = memchr(p, '_', (size_t)(end - p));
	if (!u1)
		return;
	const char *u2 = memchr(u1 + 1, '_', (size_t)(end - u1 - 1));
	if (!u2)
		return;
	id->pod = iq_str_make(p, (size_t)(u1 - p));
	id->ns = iq_str_make(u1 + 1, (size_t)(u2 - u1 - 1));
	const char *rest = u2 + 1;
	const char *dash = NULL;
	for (const char *q = rest; q < end; q++)
		if (*q == '-')
			dash = q;
	if (dash) {
		id->container = iq_str_make(rest, (size_t)(dash - rest));
		id->container_id = iq_str_make(dash + 1, (size_t)(end - dash - 1));
	} else {
		id->container = iq_str_make(rest, (size_t)(end - rest));
	}
}

/* Length of name without an archive suffix ("gpu-node-3.tar.gz" is the
 * folder of node gpu-node-3 packed on its own). */
static size_t strip_archive(const char *p, size_t n)
{
	static const char *const sfx[] = {".tar.gz", ".tar.zst", ".tar.xz", ".tar.bz2", ".tgz",
					  ".tar", ".zip"};
	for (size_t i = 0; i < IQ_ARRAY_LEN(sfx); i++) {
		size_t l = strlen(sfx[i]);
		if (n > l && strncmp(p + n - l, sfx[i], l) == 0)
			return n - l;
	}
	return n;
}

/* Is p[0..n) a pod folder's name, "<ns>_<pod>_<uid>" with a UUID? */
static int pod_dir(const char *p, size_t n)
{
	if (n < 40)
		return 0;
	const char *uid = p + n - 36;
	if (uid[-1] != '_' || !memchr(p, '_', n - 37))
		return 0;
	for (size_t i = 0; i < 36; i++) {
		char c = uid[i];
		int dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return 0;
	}
	return 1;
}

/* The kubelet's pods layout copied without its var/log ("edge/pods/<ns>_
 * <pod>_<uid>/<container>/0.log"): the pod folder after the last such
 * "pods/", or NULL. */
static const char *pods_folder(const char *path)
{
	const char *last = NULL;
	for (const char *p = path; (p = strstr(p, "pods/")) != NULL; p += 5) {
		if (p != path && p[-1] != '/' && p[-1] != '!')
			continue;
		if (pod_dir(p + 5, comp_len(p + 5)))
			last = p + 5;
	}
	return last;
}

void iq_path_ident(const char *path, struct iq_ident *id)
{
	memset(id, 0, sizeof *id);
	id->restart = -1;
	const char *p;
	if ((p = rfind(path, "nodes/")) != NULL && (p == path || p[-1] == '/' || p[-1] == '!')) {
		const char *nn = p + 6;
		size_t nl = comp_len(nn);
		if (nl && nn[nl] == '/')
			id->node = iq_str_make(nn, nl);
		else if (nl && nn[nl] == '!' && strip_archive(nn, nl) < nl)
			id->node = iq_str_make(nn, strip_archive(nn, nl));
	}
	const char *pf;
	if ((p = rfind(path, "var/log/pods/")) == NULL && (pf = pods_folder(path)) != NULL) {
		/* not a node's folder: the collector's own ("edge/pods/...") */
		pods_layout(pf, id);
	} else if (p != NULL) {
		if (!id->node.n && p > path) {
			/* <node>/var/log/pods/...: the component before var/log */
			const char *e = p - 1;
			const char *b = e;
			while (b > path && b[-1] != '/' && b[-1] != '!')
				b--;
			if (e > b && b > path)
				id->node = iq_str_make(b, strip_archive(b, (size_t)(e - b)));
		}
		pods_layout(p + 13, id);
	} else if ((p = rfind(path, "var/log/containers/")) != NULL) {
		containers_layout(p + 19, id);
	}
	if (!id->node.n && (p = rfind(path, "var/log/")) != NULL && p > path + 1 &&
	    (p[-1] == '/' || p[-1] == '!')) {
		const char *e = p - 1;
		const char *b = e;
		while (b > path && b[-1] != '/' && b[-1] != '!')
			b--;
		if (e > b && b > path)
			id->node = iq_str_make(b, strip_archive(b, (size_t)(e - b)));
	}
}
