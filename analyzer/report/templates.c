/* templates.c: the unexplained-errors appendix. Error and warning records
 * that no signal explained are masked into templates (Drain-style: the
 * variable tokens replaced by placeholders) and counted in a bounded hash
 * table while the query streams, so that what the rules do not know yet
 * is still seen. */
#include <ctype.h>
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

static const char *col(sqlite3_stmt *q, int i)
{
	const char *t = (const char *)sqlite3_column_text(q, i);
	return t ? t : "";
}

static void add_row(struct table *t, sqlite3_stmt *q)
{
	char key[TPL_KEY];
	const char *text = col(q, 2);
	iq_tpl_mask(text, strlen(text), key, sizeof key);
	t->records++;
	uint32_t h = fnv(key) & (TPL_SLOTS - 1);
	while (t->slot[h] && strcmp(t->slot[h]->key, key) != 0)
		h = (h + 1) & (TPL_SLOTS - 1);
	struct tpl *e = t->slot[h];
	int has_ts = sqlite3_column_type(q, 0) != SQLITE_NULL;
	int64_t ts = has_ts ? sqlite3_column_int64(q, 0) : IQ_TIME_NONE;
	if (!e) {
		if (t->n >= TPL_CAP) {
			t->overflow++;
			return;
		}
		e = iq_xcalloc(1, sizeof *e);
		e->key = iq_xstrdup(key);
		e->first = e->last = IQ_TIME_NONE;
		e->example_ts = IQ_TIME_NONE;
		t->slot[h] = e;
		t->n++;
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
		e->file = iq_xstrdup(col(q, 3));
		e->line = sqlite3_column_int64(q, 4);
		e->example_ts = ts;
	}
	const char *node = col(q, 1);
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

static int by_count(const void *a, const void *b)
{
	const struct tpl *x = *(struct tpl *const *)a, *y = *(struct tpl *const *)b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return strcmp(x->key, y->key);
}

static void time_cell(FILE *out, int64_t t)
{
	char b[IQ_TIME_BUF];
	fputs(t == IQ_TIME_NONE ? "–" : iq_time_fmt_ms(t, b), out);
}

void iq_tpl_appendix(FILE *out, struct iq_store *s, const char *lang)
{
	fprintf(out, "## %s\n\n", iq_msg(lang, "h.unexplained"));
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(iq_store_db(s), iq_tpl_sql, -1, &q, NULL) != SQLITE_OK) {
		fprintf(out, "_%s_\n\n", iq_msg(lang, "tpl.dberror"));
		return;
	}
	struct table *t = iq_xcalloc(1, sizeof *t);
	while (sqlite3_step(q) == SQLITE_ROW)
		add_row(t, q);
	sqlite3_finalize(q);
	if (!t->n) {
		fprintf(out, "%s\n\n", iq_msg(lang, "tpl.none"));
		free(t);
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
		iq_md_ref(out, e->file, e->line);
		fputs(" ", out);
		iq_md_put(out, e->example, 120);
		fputs(" |\n", out);
	}
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		free(all[i]->key);
		free(all[i]->example);
		free(all[i]->file);
		free(all[i]);
	}
	free(all);
	free(t);
}
