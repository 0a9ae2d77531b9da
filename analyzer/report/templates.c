/* templates.c: the unexplained-errors appendix. Error and warning records
 * that no signal explained are masked into templates (Drain-style: the
 * variable tokens replaced by placeholders) and counted in a bounded hash
 * table, along with the records per time source for the coverage section.
 * The ingest lists those records (error_records) and counts the time
 * sources (time_sources) as it stores them, so the report reads only
 * them; a database without that summary (meta 'summaries', written by an
 * older inquest) is read whole instead, in two halves on two threads.
 * iq_tpl_sql says in SQL what either way selects. */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"

#define TPL_CAP 4096          /* most templates kept */
#define TPL_SLOTS 8192        /* hash slots (a power of two, > TPL_CAP) */
#define TPL_KEY 240           /* longest template kept, bytes */
#define TPL_NODES 4           /* nodes named per template */
#define TPL_TOP 25            /* templates shown */

const char iq_tpl_sql[] =
	"SELECT r.ts, r.node, substr(r.text, 1, 2000), f.path, r.line"
	" FROM records r JOIN files f ON f.id = r.file_id"
	" WHERE r.id NOT IN (SELECT record_id FROM signal_matches)"
	" AND (r.severity IN ('ERROR', 'WARN', 'WARNING', 'E', 'W', 'Warning', 'error',"
	" 'CRITICAL', 'FATAL', 'Error', 'warning', 'fatal', 'critical', 'F', 'err', 'crit')"
	" OR (r.kind IN ('log', 'kernel', 'event') AND (r.text LIKE '%error%'"
	" OR r.text LIKE '%exception%' OR r.text LIKE '%traceback%' OR r.text LIKE '%fatal%'"
	" OR r.text LIKE '%panic%' OR r.text LIKE '%failed%' OR r.text LIKE '%refused%'"
	" OR r.text LIKE '%timed out%')))";

/* ---- masking ---- */

struct out {
	char *p;
	size_t n, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	while (n-- && o->n + 1 < o->cap)
		o->p[o->n++] = *s++;
}

static int is_hex(int c)
{
	return isxdigit((unsigned char)c);
}

static int is_word(int c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Length of a run of hex digits at s (at most n). */
static size_t hex_run(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && is_hex(s[i]))
		i++;
	return i;
}

static size_t uuid_at(const char *s, size_t n)
{
	static const size_t groups[] = {8, 4, 4, 4, 12};
	size_t i = 0;
	for (size_t g = 0; g < 5; g++) {
		if (g) {
			if (i >= n || s[i] != '-')
				return 0;
			i++;
		}
		if (hex_run(s + i, n - i) != groups[g])
			return 0;
		i += groups[g];
	}
	return i < n && is_word(s[i]) ? 0 : i;
}

static size_t ipv4_at(const char *s, size_t n)
{
	size_t i = 0;
	for (int part = 0; part < 4; part++) {
		if (part) {
			if (i >= n || s[i] != '.')
				return 0;
			i++;
		}
		size_t d = 0;
		while (i < n && d < 4 && isdigit((unsigned char)s[i]))
			i++, d++;
		if (d == 0 || d > 3)
			return 0;
	}
	if (i + 1 < n && s[i] == ':' && isdigit((unsigned char)s[i + 1]))
		for (i++; i < n && isdigit((unsigned char)s[i]); i++)
			;
	return i < n && (is_word(s[i]) || s[i] == '.') ? 0 : i;
}

/* A hex id: 0x..., or a run of 6+ hex digits with a digit and a letter. */
static size_t hexid_at(const char *s, size_t n)
{
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && is_hex(s[2])) {
		size_t i = 2 + hex_run(s + 2, n - 2);
		return i < n && is_word(s[i]) ? 0 : i;
	}
	size_t r = hex_run(s, n);
	if (r < 6 || (r < n && is_word(s[r])))
		return 0;
	int digit = 0, letter = 0;
	for (size_t i = 0; i < r; i++) {
		digit |= isdigit((unsigned char)s[i]) != 0;
		letter |= isalpha((unsigned char)s[i]) != 0;
	}
	return digit && letter ? r : 0;
}

static size_t number_at(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	/* 1.5, 1,234, 12:03:04 are one number */
	while (i + 1 < n && (s[i] == '.' || s[i] == ',' || s[i] == ':') &&
	       isdigit((unsigned char)s[i + 1]))
		for (i++; i < n && isdigit((unsigned char)s[i]); i++)
			;
	return i;
}

static size_t path_at(const char *s, size_t n)
{
	size_t i = 0;
	if (n > 2 && (s[0] == '.' || s[0] == '~') && s[1] == '/')
		i = 2;
	else if (n > 1 && s[0] == '/' && s[1] != '/' && !isspace((unsigned char)s[1]))
		i = 1;
	else
		return 0;
	while (i < n && !isspace((unsigned char)s[i]) && !strchr("\"',;)]}>", s[i]))
		i++;
	return i;
}

size_t iq_tpl_mask(const char *s, size_t n, char *outp, size_t outsz)
{
	struct out o = {outp, 0, outsz};
	if (!outsz)
		return 0;
	size_t i = 0;
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	while (i < n && o.n + 1 < o.cap) {
		unsigned char c = (unsigned char)s[i];
		int boundary = i == 0 || !is_word(s[i - 1]);
		size_t k;
		if (isspace(c) || c == '\0') {
			while (i < n && (isspace((unsigned char)s[i]) || s[i] == '\0'))
				i++;
			if (i < n)
				put(&o, " ", 1);
			continue;
		}
		if ((c == '"' || c == '\'') && boundary) {
			const char *e = memchr(s + i + 1, c, (n - i - 1) < 512 ? n - i - 1 : 512);
			if (e) {
				put(&o, "<STR>", 5);
				i = (size_t)(e - s) + 1;
				continue;
			}
		}
		if (boundary && (k = uuid_at(s + i, n - i))) {
			put(&o, "<UUID>", 6);
		} else if (boundary && (k = ipv4_at(s + i, n - i))) {
			put(&o, "<IP>", 4);
		} else if (boundary && (k = hexid_at(s + i, n - i))) {
			put(&o, "<HEX>", 5);
		} else if (isdigit(c)) {
			k = number_at(s + i, n - i);
			put(&o, "<NUM>", 5);
		} else if ((i == 0 || isspace((unsigned char)s[i - 1]) || strchr("=\"'(:[", s[i - 1])) &&
			   (k = path_at(s + i, n - i))) {
			put(&o, "<PATH>", 6);
		} else {
			k = 1;
			put(&o, s + i, 1);
		}
		i += k;
	}
	o.p[o.n] = '\0';
	return o.n;
}

/* ---- the table of templates ---- */

struct tpl {
	char *key;
	long count;
	int64_t first, last;
	char nodes[TPL_NODES][64];
	int nnodes, more_nodes;
	char *example, *file;
	long long line;
	int64_t example_ts;
	size_t seq;               /* the order the table met it in */
};

struct table {
	struct tpl *slot[TPL_SLOTS];
	size_t n;
	long records, overflow;
};

static uint32_t fnv(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* One record of the appendix: text is what substr(text, 1, 2000) gives. */
static void add_row(struct table *t, int has_ts, int64_t ts, const char *node, const char *text,
		    const char *file, long long line)
{
	char key[TPL_KEY];
	iq_tpl_mask(text, strlen(text), key, sizeof key);
	t->records++;
	uint32_t h = fnv(key) & (TPL_SLOTS - 1);
	while (t->slot[h] && strcmp(t->slot[h]->key, key) != 0)
		h = (h + 1) & (TPL_SLOTS - 1);
	struct tpl *e = t->slot[h];
	if (!has_ts)
		ts = IQ_TIME_NONE;
	if (!e) {
		if (t->n >= TPL_CAP) {
			t->overflow++;
			return;
		}
		e = iq_xcalloc(1, sizeof *e);
		e->key = iq_xstrdup(key);
		e->first = e->last = IQ_TIME_NONE;
		e->example_ts = IQ_TIME_NONE;
		e->seq = t->n++;
		t->slot[h] = e;
	}
	e->count++;
	if (has_ts) {
		if (e->first == IQ_TIME_NONE || ts < e->first)
			e->first = ts;
		if (e->last == IQ_TIME_NONE || ts > e->last)
			e->last = ts;
	}
	/* the example is the earliest line (the first one read when no time) */
	if (!e->example || (has_ts && (e->example_ts == IQ_TIME_NONE || ts < e->example_ts))) {
		free(e->example);
		free(e->file);
		e->example = iq_xstrndup(text, strnlen(text, 400));
		e->file = iq_xstrdup(file);
		e->line = line;
		e->example_ts = ts;
	}
	if (*node) {
		int seen = 0;
		for (int i = 0; i < e->nnodes; i++)
			seen |= strcmp(e->nodes[i], node) == 0;
		if (!seen && e->nnodes < TPL_NODES)
			snprintf(e->nodes[e->nnodes++], sizeof e->nodes[0], "%s", node);
		else if (!seen)
			e->more_nodes = 1;
	}
}

static int kind_of_text(const unsigned char *k)
{
	return k && ((k[0] == 'l' && strcmp((const char *)k, "log") == 0) ||
		     (k[0] == 'k' && strcmp((const char *)k, "kernel") == 0) ||
		     (k[0] == 'e' && strcmp((const char *)k, "event") == 0));
}

static int by_how(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One part of the read: a range of record ids, on a connection of its
 * own, into a table of its own. */
struct part {
	struct table *t;
	struct {
		char *how;
		long long n;
	} how[16];
	size_t nhow;
	int ok;
	sqlite3 *db;              /* owned when own is set */
	int own;
	int64_t lo, hi;           /* ids lo..hi */
	int summaries;            /* read error_records and time_sources instead */
	pthread_t th;
	int threaded;
};

struct iq_tpl_scan {
	struct iq_store *s;
	struct part part[2];
	size_t nparts;
	int done;
};

/* iq_tpl_row(ts_how, kind, severity, text): the filter of iq_tpl_sql but
 * its NOT IN, as a function the scan's WHERE calls once per record (which
 * is also where the records are counted by time source, so that the one
 * read serves both). Only the records it keeps have their other columns
 * read. */
static void tpl_row(sqlite3_context *ctx, int argc, sqlite3_value **v)
{
	struct part *sc = sqlite3_user_data(ctx);
	IQ_UNUSED(argc);
	const unsigned char *how = sqlite3_value_text(v[0]);
	if (how && !(how[0] == 'e' && strcmp((const char *)how, "explicit") == 0)) {
		size_t k = 0;
		while (k < sc->nhow && strcmp(sc->how[k].how, (const char *)how) != 0)
			k++;
		if (k == sc->nhow && k < IQ_ARRAY_LEN(sc->how)) {
			sc->how[k].how = iq_xstrdup((const char *)how);
			sc->how[k].n = 0;
			sc->nhow++;
		}
		if (k < sc->nhow)
			sc->how[k].n++;
	}
	const char *sev = (const char *)sqlite3_value_text(v[2]);
	size_t sevn = (size_t)sqlite3_value_bytes(v[2]);
	int keep = iq_error_severity(sev, sevn);
	/* the text is read only when the severity did not decide */
	if (!keep && kind_of_text(sqlite3_value_text(v[1])))
		keep = iq_error_words((const char *)sqlite3_value_text(v[3]),
				      (size_t)sqlite3_value_bytes(v[3]));
	sqlite3_result_int(ctx, keep);
}

/* The time sources but "explicit" of time_sources, as tpl_row counts them;
 * 0 or -1. */
static int how_counts(struct part *p)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(p->db, "SELECT ts_how, records FROM time_sources"
			       " WHERE ts_how <> 'explicit' AND records > 0 ORDER BY ts_how",
			       -1, &q, NULL) != SQLITE_OK)
		return -1;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && p->nhow < IQ_ARRAY_LEN(p->how)) {
		p->how[p->nhow].how = iq_xstrdup((const char *)sqlite3_column_text(q, 0));
		p->how[p->nhow].n = sqlite3_column_int64(q, 1);
		p->nhow++;
	}
	sqlite3_finalize(q);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

/* Reads the records lo..hi of part p into table t (its own, or another
 * part's when a read is done again). */
static void part_run(struct part *p, struct table *t)
{
	sqlite3 *db = p->db;
	sqlite3_stmt *fq = NULL, *q = NULL;
	char **paths = NULL;
	size_t npaths = 0;
	if (sqlite3_create_function(db, "iq_tpl_row", 4, SQLITE_UTF8, p, tpl_row, NULL, NULL) != SQLITE_OK)
		return;
	/* with the summaries the ingest kept, the records the filter keeps are
	 * listed (and time sources counted) already */
	static const char scan_sql[] =
		"SELECT r.ts, r.node, substr(r.text, 1, 2000), r.file_id, r.line FROM records r"
		" WHERE r.id BETWEEN ?1 AND ?2 AND iq_tpl_row(r.ts_how, r.kind, r.severity, r.text)"
		" AND r.id NOT IN (SELECT record_id FROM signal_matches) ORDER BY r.id";
	static const char summary_sql[] =
		"SELECT r.ts, r.node, substr(r.text, 1, 2000), r.file_id, r.line"
		" FROM error_records e CROSS JOIN records r ON r.id = e.record_id"
		" WHERE e.record_id BETWEEN ?1 AND ?2"
		" AND e.record_id NOT IN (SELECT record_id FROM signal_matches) ORDER BY e.record_id";
	if (sqlite3_prepare_v2(db, "SELECT id, path FROM files ORDER BY id", -1, &fq, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, p->summaries ? summary_sql : scan_sql, -1, &q, NULL) != SQLITE_OK)
		goto done;
	if (p->summaries && how_counts(p))
		goto done;
	while (sqlite3_step(fq) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(fq, 0);
		if (id < 0 || id > (int64_t)1 << 24)
			continue;
		if ((size_t)id >= npaths) {
			size_t nn = (size_t)id + 64;
			paths = iq_xrealloc(paths, nn * sizeof *paths);
			memset(paths + npaths, 0, (nn - npaths) * sizeof *paths);
			npaths = nn;
		}
		paths[id] = iq_xstrdup((const char *)sqlite3_column_text(fq, 1));
	}
	sqlite3_bind_int64(q, 1, p->lo);
	sqlite3_bind_int64(q, 2, p->hi);
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(q, 2);
		const char *node = (const char *)sqlite3_column_text(q, 1);
		int64_t fid = sqlite3_column_int64(q, 3);
		const char *file = fid >= 0 && (size_t)fid < npaths && paths[fid] ? paths[fid] : "";
		add_row(t, sqlite3_column_type(q, 0) != SQLITE_NULL, sqlite3_column_int64(q, 0),
			node ? node : "", text ? text : "", file, sqlite3_column_int64(q, 4));
	}
	p->ok = rc == SQLITE_DONE;
done:
	sqlite3_finalize(fq);
	sqlite3_finalize(q);
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	sqlite3_create_function(db, "iq_tpl_row", 4, SQLITE_UTF8, NULL, NULL, NULL, NULL);
}

static void *part_thread(void *u)
{
	struct part *p = u;
	part_run(p, p->t);
	return NULL;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; t && i < TPL_SLOTS; i++) {
		struct tpl *e = t->slot[i];
		if (!e)
			continue;
		free(e->key);
		free(e->example);
		free(e->file);
		free(e);
	}
	free(t);
}

static int by_seq(const void *a, const void *b)
{
	const struct tpl *x = *(struct tpl *const *)a, *y = *(struct tpl *const *)b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Adds table b, read after table a, to a: what reading b's records into a
 * would have given, b's templates taken in the order b met them. b must
 * not have overflowed (its rows of a dropped template could belong to one
 * of a's). Empties b. */
static void table_merge(struct table *a, struct table *b)
{
	struct tpl **bs = iq_xmalloc((b->n ? b->n : 1) * sizeof *bs);
	size_t n = 0;
	for (size_t i = 0; i < TPL_SLOTS; i++)
		if (b->slot[i]) {
			bs[n++] = b->slot[i];
			b->slot[i] = NULL;
		}
	qsort(bs, n, sizeof *bs, by_seq);
	a->records += b->records;
	for (size_t k = 0; k < n; k++) {
		struct tpl *y = bs[k];
		uint32_t h = fnv(y->key) & (TPL_SLOTS - 1);
		while (a->slot[h] && strcmp(a->slot[h]->key, y->key) != 0)
			h = (h + 1) & (TPL_SLOTS - 1);
		struct tpl *x = a->slot[h];
		if (!x) {
			if (a->n >= TPL_CAP) {
				a->overflow += y->count;
				free(y->key);
				free(y->example);
				free(y->file);
				free(y);
				continue;
			}
			y->seq = a->n++;
			a->slot[h] = y;
			continue;
		}
		x->count += y->count;
		if (y->first != IQ_TIME_NONE && (x->first == IQ_TIME_NONE || y->first < x->first))
			x->first = y->first;
		if (y->last != IQ_TIME_NONE && (x->last == IQ_TIME_NONE || y->last > x->last))
			x->last = y->last;
		if (y->example_ts != IQ_TIME_NONE && (x->example_ts == IQ_TIME_NONE || y->example_ts < x->example_ts)) {
			free(x->example);
			free(x->file);
			x->example = y->example;
			x->file = y->file;
			x->line = y->line;
			x->example_ts = y->example_ts;
			y->example = y->file = NULL;
		}
		for (int i = 0; i < y->nnodes; i++) {
			int seen = 0;
			for (int j = 0; j < x->nnodes; j++)
				seen |= strcmp(x->nodes[j], y->nodes[i]) == 0;
			if (!seen && x->nnodes < TPL_NODES)
				snprintf(x->nodes[x->nnodes++], sizeof x->nodes[0], "%s", y->nodes[i]);
			else if (!seen)
				x->more_nodes = 1;
		}
		x->more_nodes |= y->more_nodes;
		free(y->key);
		free(y->example);
		free(y->file);
		free(y);
	}
	b->n = 0;
	free(bs);
}

/* Did the ingest keep error_records and time_sources from the first
 * record on (meta 'summaries', store.c)? */
static int has_summaries(sqlite3 *db)
{
	sqlite3_stmt *q;
	int yes = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM meta WHERE key = 'summaries'", -1, &q, NULL) == SQLITE_OK) {
		yes = sqlite3_step(q) == SQLITE_ROW;
		sqlite3_finalize(q);
	}
	return yes;
}

static sqlite3 *open_own(const char *fn)
{
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(fn, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK)
		return db;
	sqlite3_close(db);
	return NULL;
}

struct iq_tpl_scan *iq_tpl_scan_start(struct iq_store *s)
{
	struct iq_tpl_scan *sc = iq_xcalloc(1, sizeof *sc);
	sc->s = s;
	sqlite3 *db = iq_store_db(s);
	int64_t lo = 0, hi = -1;
	sqlite3_stmt *q;
	/* two subqueries: min and max together in one are a full scan */
	if (sqlite3_prepare_v2(db, "SELECT (SELECT min(id) FROM records), (SELECT max(id) FROM records)",
			       -1, &q, NULL) == SQLITE_OK) {
		if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
			lo = sqlite3_column_int64(q, 0);
			hi = sqlite3_column_int64(q, 1);
		}
		sqlite3_finalize(q);
	}
	/* Two halves of the ids, each in a thread on a connection of its own
	 * (without the API mutex: one thread uses it), while the rest of the
	 * report is written; merged in order afterwards. Without a database
	 * file, one part on the store's connection, read when waited for. */
	const char *fn = sqlite3_db_filename(db, "main");
	int summaries = has_summaries(db);
	sqlite3 *c0 = fn && *fn ? open_own(fn) : NULL;
	sqlite3 *c1 = c0 && !summaries && hi - lo >= 1024 ? open_own(fn) : NULL;
	sc->nparts = c1 ? 2 : 1;
	for (size_t i = 0; i < sc->nparts; i++) {
		struct part *p = &sc->part[i];
		p->t = iq_xcalloc(1, sizeof *p->t);
		p->db = i ? c1 : c0 ? c0 : db;
		p->own = i ? 1 : c0 != NULL;
		p->lo = i ? lo + (hi - lo) / 2 + 1 : lo;
		p->hi = sc->nparts == 2 && !i ? lo + (hi - lo) / 2 : hi;
		p->summaries = summaries;
		if (p->own && pthread_create(&p->th, NULL, part_thread, p) == 0)
			p->threaded = 1;
	}
	return sc;
}

void iq_tpl_scan_wait(struct iq_tpl_scan *sc)
{
	if (sc->done)
		return;
	sc->done = 1;
	for (size_t i = 0; i < sc->nparts; i++) {
		struct part *p = &sc->part[i];
		if (p->threaded)
			pthread_join(p->th, NULL);
		else
			part_run(p, p->t);
	}
	if (sc->nparts == 2) {
		struct part *a = &sc->part[0], *b = &sc->part[1];
		if (b->t->overflow) {
			/* the second half met more templates than a table holds: read
			 * it again into the first one, as one read would have */
			table_free(b->t);
			b->t = iq_xcalloc(1, sizeof *b->t);
			b->nhow = 0;
			for (size_t k = 0; k < IQ_ARRAY_LEN(b->how); k++) {
				free(b->how[k].how);
				b->how[k].how = NULL;
			}
			part_run(b, a->t);
		} else {
			table_merge(a->t, b->t);
		}
		a->ok = a->ok && b->ok;
		for (size_t k = 0; k < b->nhow; k++) {
			size_t j = 0;
			while (j < a->nhow && strcmp(a->how[j].how, b->how[k].how) != 0)
				j++;
			if (j == a->nhow && j < IQ_ARRAY_LEN(a->how)) {
				a->how[j].how = iq_xstrdup(b->how[k].how);
				a->how[j].n = 0;
				a->nhow++;
			}
			if (j < a->nhow)
				a->how[j].n += b->how[k].n;
		}
	}
	struct part *a = &sc->part[0];
	/* in the order of "GROUP BY ts_how ORDER BY ts_how" */
	qsort(a->how, a->nhow, sizeof a->how[0], by_how);
}

size_t iq_tpl_scan_ts_how(struct iq_tpl_scan *sc, size_t i, const char **how, long long *n)
{
	if (!sc)
		return 0;
	iq_tpl_scan_wait(sc);
	const struct part *a = &sc->part[0];
	if (i >= a->nhow)
		return a->nhow;
	*how = a->how[i].how;
	*n = a->how[i].n;
	return a->nhow;
}

static int by_count(const void *a, const void *b)
{
	const struct tpl *x = *(struct tpl *const *)a, *y = *(struct tpl *const *)b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return strcmp(x->key, y->key);
}

void iq_tpl_dump(FILE *out, struct iq_tpl_scan *sc)
{
	iq_tpl_scan_wait(sc);
	const struct table *t = sc->part[0].t;
	struct tpl **all = iq_xmalloc((t->n ? t->n : 1) * sizeof *all);
	size_t n = 0;
	for (size_t i = 0; i < TPL_SLOTS; i++)
		if (t->slot[i])
			all[n++] = t->slot[i];
	qsort(all, n, sizeof *all, by_count);
	fprintf(out, "records %ld overflow %ld templates %zu\n", t->records, t->overflow, n);
	for (size_t i = 0; i < n; i++) {
		const struct tpl *e = all[i];
		fprintf(out, "%ld %lld %lld %s:%lld %lld [", e->count, (long long)e->first, (long long)e->last,
			e->file, e->line, (long long)e->example_ts);
		for (int k = 0; k < e->nnodes; k++)
			fprintf(out, "%s%s", k ? "," : "", e->nodes[k]);
		fprintf(out, "%s] %s | %s\n", e->more_nodes ? ",..." : "", e->key, e->example);
	}
	free(all);
}

long iq_tpl_scan_records(struct iq_tpl_scan *sc, long *overflow)
{
	iq_tpl_scan_wait(sc);
	if (overflow)
		*overflow = sc->part[0].t->overflow;
	return sc->part[0].t->records;
}

void iq_tpl_scan_free(struct iq_tpl_scan *sc)
{
	if (!sc)
		return;
	iq_tpl_scan_wait(sc);
	for (size_t i = 0; i < sc->nparts; i++) {
		struct part *p = &sc->part[i];
		if (p->own)
			sqlite3_close(p->db);
		table_free(p->t);
		for (size_t k = 0; k < p->nhow; k++)
			free(p->how[k].how);
	}
	free(sc);
}

static void time_cell(FILE *out, int64_t t)
{
	char b[IQ_TIME_BUF];
	fputs(t == IQ_TIME_NONE ? "–" : iq_time_fmt_ms(t, b), out);
}

void iq_tpl_appendix(FILE *out, struct iq_tpl_scan *sc, const char *lang, struct iq_refs *refs)
{
	if (sc)
		iq_tpl_scan_wait(sc);
	fprintf(out, "## %s\n\n", iq_msg(lang, "h.unexplained"));
	if (!sc || !sc->part[0].ok) {
		fprintf(out, "_%s_\n\n", iq_msg(lang, "tpl.dberror"));
		return;
	}
	const struct table *t = sc->part[0].t;
	if (!t->n) {
		fprintf(out, "%s\n\n", iq_msg(lang, "tpl.none"));
		return;
	}
	struct tpl **all = iq_xmalloc(t->n * sizeof *all);
	size_t n = 0;
	for (size_t i = 0; i < TPL_SLOTS; i++)
		if (t->slot[i])
			all[n++] = t->slot[i];
	qsort(all, n, sizeof *all, by_count);
	size_t shown = n < TPL_TOP ? n : TPL_TOP;
	fprintf(out, iq_msg(lang, "tpl.intro"), t->records, n, shown);
	if (t->overflow)
		fprintf(out, iq_msg(lang, "tpl.overflow"), t->overflow, TPL_CAP);
	fputs("\n\n", out);
	fprintf(out, "| %s | %s | %s | %s | %s | %s |\n| ---: | --- | --- | --- | --- | --- |\n",
		iq_msg(lang, "col.count"), iq_msg(lang, "col.first"), iq_msg(lang, "col.last"),
		iq_msg(lang, "col.nodes"), iq_msg(lang, "col.template"), iq_msg(lang, "col.example"));
	for (size_t i = 0; i < shown; i++) {
		struct tpl *e = all[i];
		fprintf(out, "| %ld | ", e->count);
		time_cell(out, e->first);
		fputs(" | ", out);
		time_cell(out, e->last);
		fputs(" | ", out);
		for (int k = 0; k < e->nnodes; k++) {
			fputs(k ? ", " : "", out);
			iq_md_put(out, e->nodes[k], 64);
		}
		if (e->more_nodes)
			fputs(", …", out);
		if (!e->nnodes)
			fputs("–", out);
		fputs(" | ", out);
		iq_md_put(out, e->key, 160);
		fputs(" | ", out);
		char tb[IQ_TIME_BUF];
		iq_refs_cite(out, iq_refs_add(refs, e->file, e->line, 1,
					      e->example_ts == IQ_TIME_NONE ? "" : iq_time_fmt_ms(e->example_ts, tb),
					      e->example, NULL));
		fputs(" ", out);
		iq_md_put(out, e->example, 120);
		fputs(" |\n", out);
	}
	fputc('\n', out);
	free(all);
}
