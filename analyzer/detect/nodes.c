/* nodes.c: which node a file was written on, and which pod it is of, when
 * its path says so in a layout the path reader (parse/logpath.c) does not
 * know: collectors name
 * their per-node folders as they like ("hosts/<node>/dmesg",
 * "node-logs/<node>/kernel/dmesg", "<node>.tar.gz!journal/kubelet.log")
 * and per-node files too ("metrics/gpu-<node>.csv"). The bundle itself
 * says which nodes there are: pod specs' nodeName, the kubelet's event
 * host, the folders of the kubelet layouts. A path component equal to one
 * of them, or else a file name that holds exactly one of them (or one's
 * first DNS label) between non-alphanumerics, gives the file its node, and
 * its records without a node of their own take it. Likewise a folder or
 * file named after a pod the pod listings know ("var/log/<app>/<pod>/
 * app.log.1", a hostPath request log) gives the file that pod, its
 * namespace and node. Runs before the time zones, boot times and clock
 * offsets, which go by node. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "nodes.h"

#define MAX_NAMES 4096

static int alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The length of a node name's first DNS label ("ip-10-0-1-2" of
 * "ip-10-0-1-2.ec2.internal"); the whole name when it has one. */
static size_t first_label(const char *n)
{
	const char *dot = strchr(n, '.');
	return dot ? (size_t)(dot - n) : strlen(n);
}

/* Does s[0..sn) hold name[0..nl) with no letter or digit on either side? */
static int holds(const char *s, size_t sn, const char *name, size_t nl)
{
	if (nl < 3 || nl > sn)
		return 0;
	for (size_t i = 0; i + nl <= sn; i++) {
		if (memcmp(s + i, name, nl) != 0)
			continue;
		if ((i == 0 || !alnum(s[i - 1])) && (i + nl == sn || !alnum(s[i + nl])))
			return 1;
	}
	return 0;
}

/* Length of a path component without an archive suffix. */
static size_t strip_archive(const char *p, size_t n)
{
	static const char *const sfx[] = {".tar.gz", ".tar.zst", ".tar.xz", ".tar.bz2", ".tgz", ".tar", ".zip"};
	for (size_t i = 0; i < IQ_ARRAY_LEN(sfx); i++) {
		size_t l = strlen(sfx[i]);
		if (n > l && strncmp(p + n - l, sfx[i], l) == 0)
			return n - l;
	}
	return n;
}

/* The one name of names[0..nn) that component c[0..cn) is (exactly, or as
 * its first label); NULL for none or more than one. */
static const char *component_node(char **names, size_t nn, const char *c, size_t cn)
{
	const char *hit = NULL;
	for (size_t i = 0; i < nn; i++) {
		size_t l = strlen(names[i]);
		if (l == cn && memcmp(names[i], c, cn) == 0)
			return names[i];
	}
	for (size_t i = 0; i < nn; i++) {
		size_t l = first_label(names[i]);
		if (l == cn && l < strlen(names[i]) && memcmp(names[i], c, cn) == 0) {
			if (hit && strcmp(hit, names[i]) != 0)
				return NULL;
			hit = names[i];
		}
	}
	return hit;
}

/* The one name the file name base[0..bn) holds; NULL for none or several. */
static const char *name_in(char **names, size_t nn, const char *base, size_t bn)
{
	const char *hit = NULL;
	for (int pass = 0; pass < 2 && !hit; pass++) {
		for (size_t i = 0; i < nn; i++) {
			size_t l = pass ? first_label(names[i]) : strlen(names[i]);
			if (pass && l == strlen(names[i]))
				continue;
			if (!holds(base, bn, names[i], l))
				continue;
			if (hit && strcmp(hit, names[i]) != 0)
				return NULL;
			hit = names[i];
		}
	}
	return hit;
}

const char *iq_nodes_of_path(char **names, size_t nn, const char *path)
{
	const char *p = path, *base = path;
	while (*p) {
		size_t n = 0;
		while (p[n] && p[n] != '/' && p[n] != '!')
			n++;
		if (!p[n]) {
			base = p;
			break;
		}
		const char *hit = component_node(names, nn, p, strip_archive(p, n));
		if (hit)
			return hit;
		p += n + 1;
		base = p;
	}
	return name_in(names, nn, base, strlen(base));
}

/* The pod a path names: a component equal to a pod of pod_states (or the
 * file name without its ".log..." ending). Sets the files' pod, namespace
 * and node where they are unknown, and their records'. */
static int resolve_pods(struct iq_store *s, struct iq_diag *d)
{
	static const char *const sql[] = {
		"CREATE TEMP TABLE IF NOT EXISTS iq_known_pods (pod TEXT PRIMARY KEY, namespace TEXT, node TEXT)",
		"DELETE FROM iq_known_pods",
		/* a name two namespaces use names no pod */
		("INSERT INTO iq_known_pods SELECT pod, min(namespace), min(node) FROM pod_states"
		 " WHERE pod IS NOT NULL AND length(pod) >= 3 GROUP BY pod HAVING count(DISTINCT namespace) = 1"),
	};
	for (size_t i = 0; i < IQ_ARRAY_LEN(sql); i++)
		if (iq_store_exec(s, sql[i], d))
			return IQ_ERR_DB;
	sqlite3 *db = iq_store_db(s);
	sqlite3_stmt *q, *look, *up[3] = {NULL};
	static const char *const usql[] = {
		"UPDATE files SET pod = ?2, namespace = coalesce(namespace, ?3), node = coalesce(node, ?4) WHERE id = ?1",
		"UPDATE records SET pod = ?2, namespace = coalesce(namespace, ?3) WHERE pod IS NULL"
		" AND id BETWEEN (SELECT first_record FROM files WHERE id = ?1) AND (SELECT last_record FROM files WHERE id = ?1)",
		"UPDATE records SET node = ?4 WHERE node IS NULL AND ?4 IS NOT NULL"
		" AND id BETWEEN (SELECT first_record FROM files WHERE id = ?1) AND (SELECT last_record FROM files WHERE id = ?1)",
	};
	if (sqlite3_prepare_v2(db, "SELECT id, path FROM files WHERE pod IS NULL ORDER BY id", -1, &q, NULL) != SQLITE_OK)
		return iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(db));
	int rc = 0;
	if (sqlite3_prepare_v2(db, "SELECT pod, namespace, node FROM iq_known_pods WHERE pod = ?1", -1, &look,
			       NULL) != SQLITE_OK)
		rc = iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(db));
	for (size_t i = 0; !rc && i < IQ_ARRAY_LEN(usql); i++)
		if (sqlite3_prepare_v2(db, usql[i], -1, &up[i], NULL) != SQLITE_OK)
			rc = iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(db));
	while (!rc && sqlite3_step(q) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(q, 1);
		int found = 0;
		for (const char *p = path; p && *p && !found;) {
			size_t n = 0;
			while (p[n] && p[n] != '/' && p[n] != '!')
				n++;
			size_t cn = n;
			if (!p[n]) {
				/* the file name: "<pod>.log", "<pod>.log.1.gz" */
				const char *dot = memchr(p, '.', n);
				cn = dot ? (size_t)(dot - p) : n;
			}
			sqlite3_bind_text(look, 1, p, (int)cn, SQLITE_TRANSIENT);
			if (cn >= 3 && sqlite3_step(look) == SQLITE_ROW) {
				found = 1;
				for (size_t k = 0; k < IQ_ARRAY_LEN(usql) && !rc; k++) {
					sqlite3_bind_int64(up[k], 1, sqlite3_column_int64(q, 0));
					for (int c = 0; c < 3; c++)
						sqlite3_bind_value(up[k], 2 + c, sqlite3_column_value(look, c));
					if (sqlite3_step(up[k]) != SQLITE_DONE)
						rc = iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(db));
					sqlite3_reset(up[k]);
				}
			}
			sqlite3_reset(look);
			p += n + (p[n] ? 1 : 0);
		}
	}
	sqlite3_finalize(q);
	sqlite3_finalize(look);
	for (size_t i = 0; i < IQ_ARRAY_LEN(up); i++)
		sqlite3_finalize(up[i]);
	return rc;
}

int iq_nodes_resolve(struct iq_store *s, struct iq_diag *d)
{
	int prc = resolve_pods(s, d);
	if (prc)
		return prc;
	sqlite3 *db = iq_store_db(s);
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(db, "SELECT node FROM pod_states WHERE node IS NOT NULL"
			       " UNION SELECT node FROM files WHERE node IS NOT NULL"
			       " UNION SELECT host FROM k8s_events WHERE host IS NOT NULL AND host <> ''"
			       " ORDER BY 1", -1, &q, NULL) != SQLITE_OK)
		return iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(db));
	char **names = NULL;
	size_t nn = 0;
	while (sqlite3_step(q) == SQLITE_ROW && nn < MAX_NAMES) {
		const char *t = (const char *)sqlite3_column_text(q, 0);
		if (!t || strlen(t) < 3)
			continue;
		names = iq_xrealloc(names, (nn + 1) * sizeof *names);
		names[nn++] = iq_xstrdup(t);
	}
	sqlite3_finalize(q);
	int rc = 0;
	sqlite3_stmt *up[4] = {NULL};
	static const char *const sql[] = {
		"UPDATE files SET node = ?2 WHERE id = ?1",
		"UPDATE records SET node = ?2 WHERE file_id = ?1 AND node IS NULL"
		" AND id BETWEEN (SELECT first_record FROM files WHERE id = ?1)"
		" AND (SELECT last_record FROM files WHERE id = ?1)",
		"UPDATE gpu_samples SET node = ?2 WHERE node IS NULL AND record_id BETWEEN"
		" (SELECT first_record FROM files WHERE id = ?1) AND (SELECT last_record FROM files WHERE id = ?1)",
		"UPDATE kernel_events SET node = ?2 WHERE node IS NULL AND record_id BETWEEN"
		" (SELECT first_record FROM files WHERE id = ?1) AND (SELECT last_record FROM files WHERE id = ?1)",
	};
	if (nn && sqlite3_prepare_v2(db, "SELECT id, path FROM files WHERE node IS NULL ORDER BY id", -1, &q,
				     NULL) != SQLITE_OK)
		rc = iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(db));
	for (size_t i = 0; !rc && nn && i < IQ_ARRAY_LEN(sql); i++)
		if (sqlite3_prepare_v2(db, sql[i], -1, &up[i], NULL) != SQLITE_OK)
			rc = iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(db));
	while (!rc && nn && sqlite3_step(q) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(q, 1);
		const char *node = path ? iq_nodes_of_path(names, nn, path) : NULL;
		if (!node)
			continue;
		for (size_t i = 0; i < IQ_ARRAY_LEN(sql) && !rc; i++) {
			sqlite3_bind_int64(up[i], 1, sqlite3_column_int64(q, 0));
			sqlite3_bind_text(up[i], 2, node, -1, SQLITE_STATIC);
			if (sqlite3_step(up[i]) != SQLITE_DONE)
				rc = iq_diag_set(d, IQ_ERR_DB, "database: %s", sqlite3_errmsg(db));
			sqlite3_reset(up[i]);
		}
	}
	if (nn)
		sqlite3_finalize(q);
	for (size_t i = 0; i < IQ_ARRAY_LEN(up); i++)
		sqlite3_finalize(up[i]);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	return rc;
}
