/* cmd_query.c: `inquest query --db FILE [--format table|csv|json] SQL` and
 * `inquest query --schema [TABLE]`: read-only SQL over a database, and the
 * schema described with its own comments. The connection is opened
 * read-only and an authorizer refuses anything but reading, so a query can
 * never change or escape the database (ATTACH, pragmas that write,
 * load_extension); the pragmas that only read are allowed, so that a user
 * can list a table's columns. A table on a terminal has its columns
 * aligned; piped, it is tab-separated, as scripts expect. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../store/store.h"
#include "cli.h"

/* The schema compiled into the binary (store/), for --schema. */
extern const char iq_schema_sql[];

/* Pragmas that only read, with or without an argument. */
static const char *const pragmas_read[] = {
	"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
	"foreign_key_list", "collation_list", "function_list", "module_list", "pragma_list",
	"database_list", "compile_options", "integrity_check", "quick_check"};
/* Pragmas that read without an argument and set with one. */
static const char *const pragmas_get[] = {
	"user_version", "schema_version", "application_id", "page_count", "page_size",
	"freelist_count", "encoding", "data_version"};

static int listed(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

static int authorize(void *u, int action, const char *a, const char *b, const char *c, const char *d)
{
	IQ_UNUSED(u); IQ_UNUSED(c); IQ_UNUSED(d);
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_FUNCTION:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_PRAGMA:
		return listed(pragmas_read, IQ_ARRAY_LEN(pragmas_read), a) ||
		       (b == NULL && listed(pragmas_get, IQ_ARRAY_LEN(pragmas_get), a)) ? SQLITE_OK : SQLITE_DENY;
	case SQLITE_UPDATE:
		/* a pragma's table-valued function (pragma_table_info('t'))
		 * makes SQLite check sqlite_master as if it were written; the
		 * connection is read-only, so nothing can be */
		return a && strcmp(a, "sqlite_master") == 0 ? SQLITE_OK : SQLITE_DENY;
	default:
		return SQLITE_DENY;
	}
}

/* ---- printing rows ---- */

static void csv_field(const char *s)
{
	if (!s)
		return;
	if (strpbrk(s, ",\"\n\r") == NULL) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

/* Characters of a UTF-8 string, for aligning columns. */
static size_t chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

#define SAMPLE_ROWS 1000 /* rows that decide the widths of an aligned table */
#define MAX_WIDTH 60     /* a wider value sticks out rather than widen its column */

/* One cell as shown in a table: escaped for the terminal, NULL as NULL.
 * Caller frees. */
static char *cell_text(sqlite3_stmt *q, int c)
{
	const char *t = (const char *)sqlite3_column_text(q, c);
	if (!t)
		return iq_xstrdup("NULL");
	size_t n = (size_t)sqlite3_column_bytes(q, c);
	char *esc = iq_xmalloc(n * 4 + 1);
	/* the length, not strlen: text may hold NUL bytes */
	iq_escape_display(esc, n * 4 + 1, t, n);
	return esc;
}

struct table {
	int nc, aligned;
	size_t *width;
	int *numeric;     /* every value sampled is a number: right-aligned */
	char **rows;      /* the sampled rows' cells, nc a row */
	size_t nrows;
};

static void put_row(const struct table *t, char *const *cells)
{
	for (int c = 0; c < t->nc; c++) {
		if (!t->aligned) {
			if (c)
				putchar('\t');
			fputs(cells[c], stdout);
			continue;
		}
		size_t n = chars(cells[c]), pad = n < t->width[c] ? t->width[c] - n : 0;
		int last = c + 1 == t->nc;
		if (c)
			fputs("  ", stdout);
		if (t->numeric[c])
			printf("%*s", (int)pad, "");
		fputs(cells[c], stdout);
		if (!t->numeric[c] && !last)
			printf("%*s", (int)pad, "");
	}
	putchar('\n');
}

/* Prints the rows of q as a table: aligned (the widths of the first rows)
 * or tab-separated. Returns the last sqlite3_step result. */
static int print_table(sqlite3_stmt *q, int aligned)
{
	struct table t = {sqlite3_column_count(q), aligned, NULL, NULL, NULL, 0};
	t.width = iq_xcalloc((size_t)t.nc + 1, sizeof *t.width);
	t.numeric = iq_xcalloc((size_t)t.nc + 1, sizeof *t.numeric);
	char **head = iq_xcalloc((size_t)t.nc + 1, sizeof *head);
	for (int c = 0; c < t.nc; c++) {
		head[c] = iq_xstrdup(sqlite3_column_name(q, c));
		t.width[c] = chars(head[c]);
		t.numeric[c] = 1;
	}
	int rc;
	size_t seen = 0;
	char **row = iq_xcalloc((size_t)t.nc + 1, sizeof *row);
	/* aligned: the first rows are held to measure them */
	while (aligned && t.nrows < SAMPLE_ROWS && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		t.rows = iq_xrealloc(t.rows, (t.nrows + 1) * (size_t)t.nc * sizeof *t.rows);
		for (int c = 0; c < t.nc; c++) {
			char *s = cell_text(q, c);
			int type = sqlite3_column_type(q, c);
			size_t w = chars(s);
			t.rows[t.nrows * (size_t)t.nc + (size_t)c] = s;
			if (w > t.width[c])
				t.width[c] = w > MAX_WIDTH ? (t.width[c] > MAX_WIDTH ? t.width[c] : MAX_WIDTH) : w;
			if (type != SQLITE_INTEGER && type != SQLITE_FLOAT && type != SQLITE_NULL)
				t.numeric[c] = 0;
		}
		t.nrows++;
	}
	for (int c = 0; aligned && c < t.nc; c++)
		t.numeric[c] &= t.nrows > 0;
	/* the header's numeric columns align right as their values do */
	put_row(&t, head);
	if (aligned) {
		for (int c = 0; c < t.nc; c++) {
			if (c)
				fputs("  ", stdout);
			for (size_t k = 0; k < t.width[c]; k++)
				putchar('-');
		}
		putchar('\n');
	}
	for (size_t r = 0; r < t.nrows; r++) {
		put_row(&t, t.rows + r * (size_t)t.nc);
		for (int c = 0; c < t.nc; c++)
			free(t.rows[r * (size_t)t.nc + (size_t)c]);
		seen++;
	}
	if (!aligned || t.nrows == SAMPLE_ROWS)
		while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
			for (int c = 0; c < t.nc; c++)
				row[c] = cell_text(q, c);
			put_row(&t, row);
			for (int c = 0; c < t.nc; c++)
				free(row[c]);
		}
	for (int c = 0; c < t.nc; c++)
		free(head[c]);
	free(head);
	free(row);
	free(t.rows);
	free(t.width);
	free(t.numeric);
	return rc;
}

static int print_csv(sqlite3_stmt *q)
{
	int nc = sqlite3_column_count(q), rc;
	for (int c = 0; c < nc; c++) {
		if (c)
			putchar(',');
		csv_field(sqlite3_column_name(q, c));
	}
	putchar('\n');
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		for (int c = 0; c < nc; c++) {
			if (c)
				putchar(',');
			csv_field((const char *)sqlite3_column_text(q, c));
		}
		putchar('\n');
	}
	return rc;
}

static int print_json(sqlite3_stmt *q)
{
	int nc = sqlite3_column_count(q), rc;
	json_t *rows = json_array();
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		json_t *o = json_object();
		for (int c = 0; c < nc; c++) {
			json_t *v;
			switch (sqlite3_column_type(q, c)) {
			case SQLITE_INTEGER: v = json_integer(sqlite3_column_int64(q, c)); break;
			case SQLITE_FLOAT: v = json_real(sqlite3_column_double(q, c)); break;
			case SQLITE_NULL: v = json_null(); break;
			default:
				v = json_stringn((const char *)sqlite3_column_text(q, c),
						 (size_t)sqlite3_column_bytes(q, c));
				if (!v)
					v = json_string("(invalid UTF-8)");
			}
			json_object_set_new(o, sqlite3_column_name(q, c), v);
		}
		json_array_append_new(rows, o);
	}
	json_dumpf(rows, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(rows);
	return rc;
}

/* Runs q and prints its rows in format; 0 or the exit status. */
static int print_rows(sqlite3 *h, sqlite3_stmt *q, const char *format)
{
	int rc;
	if (strcmp(format, "csv") == 0)
		rc = print_csv(q);
	else if (strcmp(format, "json") == 0)
		rc = print_json(q);
	else
		rc = print_table(q, isatty(STDOUT_FILENO));
	if (rc != SQLITE_DONE) {
		iq_errorf("query: %s", sqlite3_errmsg(h));
		return IQ_EXIT_USAGE;
	}
	return IQ_EXIT_OK;
}

/* ---- --schema ---- */

/* The comment lines ("-- ...") just before offset at of sql, joined into
 * one paragraph. Caller frees. */
static char *comment_before(const char *sql, const char *at)
{
	const char *end = at;
	/* back over whole comment lines */
	const char *p = at;
	while (p > sql) {
		const char *ls = p - 1;
		while (ls > sql && ls[-1] != '\n')
			ls--;
		if (strncmp(ls, "--", 2) != 0)
			break;
		p = ls;
	}
	struct iq_buf b;
	iq_buf_init(&b);
	for (const char *l = p; l < end;) {
		const char *nl = strchr(l, '\n');
		const char *t = l + 2;
		while (*t == ' ')
			t++;
		size_t n = (size_t)((nl ? nl : end) - t);
		if (n) {
			if (b.len)
				iq_buf_addc(&b, ' ');
			iq_buf_add(&b, t, n);
		}
		if (!nl)
			break;
		l = nl + 1;
	}
	char *s = iq_xstrndup(b.p ? b.p : "", b.len);
	iq_buf_release(&b);
	return s;
}

/* Where the schema creates object name ("CREATE TABLE IF NOT EXISTS name"
 * or a VIEW), or NULL. */
static const char *create_of(const char *sql, const char *name)
{
	static const char *const kinds[] = {"CREATE TABLE IF NOT EXISTS ", "CREATE VIEW IF NOT EXISTS "};
	size_t nl = strlen(name);
	for (size_t k = 0; k < IQ_ARRAY_LEN(kinds); k++)
		for (const char *p = sql; (p = strstr(p, kinds[k])) != NULL; p++) {
			const char *n = p + strlen(kinds[k]);
			if ((p == sql || p[-1] == '\n') && strncmp(n, name, nl) == 0 &&
			    (n[nl] == ' ' || n[nl] == '(' || n[nl] == '\n'))
				return p;
		}
	return NULL;
}

/* The trailing comment of column col in the CREATE TABLE at create (up to
 * its closing line), or "". Caller frees. */
static char *column_comment(const char *create, const char *col)
{
	const char *end = strstr(create, "\n)");
	size_t cl = strlen(col);
	for (const char *l = strchr(create, '\n'); l && (!end || l < end); l = strchr(l + 1, '\n')) {
		const char *t = l + 1;
		while (*t == ' ')
			t++;
		if (strncmp(t, col, cl) != 0 || (t[cl] != ' ' && t[cl] != ','))
			continue;
		const char *eol = strchr(t, '\n');
		const char *c = strstr(t, "--");
		if (!c || (eol && c > eol))
			return iq_xstrdup("");
		c += 2;
		while (*c == ' ')
			c++;
		return iq_xstrndup(c, (size_t)((eol ? eol : c + strlen(c)) - c));
	}
	return iq_xstrdup("");
}

/* Fills temp table schema_doc(name, kind, type, comment) of h: a row per
 * table or view (name "files", kind "table", the comment before it) and a
 * row per column (name "files.path", the declared type, its comment). */
static int schema_rows(sqlite3 *h, const char *only, int *found)
{
	sqlite3_stmt *obj, *ins, *col;
	int rc = sqlite3_exec(h, "CREATE TEMP TABLE schema_doc (name TEXT, kind TEXT, type TEXT, comment TEXT)",
			      NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if (sqlite3_prepare_v2(h, "SELECT name, type FROM main.sqlite_master WHERE type IN ('table', 'view')"
			       " AND name NOT LIKE 'sqlite_%' AND (?1 IS NULL OR name = ?1) ORDER BY type, rowid",
			       -1, &obj, NULL) != SQLITE_OK)
		return SQLITE_ERROR;
	sqlite3_prepare_v2(h, "INSERT INTO temp.schema_doc VALUES (?1, ?2, ?3, ?4)", -1, &ins, NULL);
	sqlite3_prepare_v2(h, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1)", -1, &col, NULL);
	if (only)
		sqlite3_bind_text(obj, 1, only, -1, SQLITE_STATIC);
	*found = 0;
	while (sqlite3_step(obj) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(obj, 0);
		const char *kind = (const char *)sqlite3_column_text(obj, 1);
		const char *create = create_of(iq_schema_sql, name);
		char *doc = create ? comment_before(iq_schema_sql, create) : iq_xstrdup("");
		*found = 1;
		sqlite3_bind_text(ins, 1, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 2, kind, -1, SQLITE_TRANSIENT);
		sqlite3_bind_null(ins, 3);
		sqlite3_bind_text(ins, 4, doc, -1, SQLITE_TRANSIENT);
		sqlite3_step(ins);
		sqlite3_reset(ins);
		free(doc);
		sqlite3_bind_text(col, 1, name, -1, SQLITE_TRANSIENT);
		while (sqlite3_step(col) == SQLITE_ROW) {
			const char *cn = (const char *)sqlite3_column_text(col, 0);
			const char *type = (const char *)sqlite3_column_text(col, 1);
			char full[512], decl[128];
			snprintf(full, sizeof full, "%s.%s", name, cn);
			snprintf(decl, sizeof decl, "%s%s%s", type ? type : "",
				 sqlite3_column_int(col, 3) ? " PRIMARY KEY" : "",
				 sqlite3_column_int(col, 2) ? " NOT NULL" : "");
			char *cc = create && strcmp(kind, "table") == 0 ? column_comment(create, cn) : iq_xstrdup("");
			sqlite3_bind_text(ins, 1, full, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 2, "column", -1, SQLITE_STATIC);
			sqlite3_bind_text(ins, 3, decl, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 4, cc, -1, SQLITE_TRANSIENT);
			sqlite3_step(ins);
			sqlite3_reset(ins);
			free(cc);
		}
		sqlite3_reset(col);
	}
	sqlite3_finalize(obj);
	sqlite3_finalize(ins);
	sqlite3_finalize(col);
	return SQLITE_OK;
}

/* The schema as text: each table or view, what its comment says, and its
 * columns with their types and comments. */
static int print_schema_text(sqlite3 *h)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(h, "SELECT name, kind, type, comment FROM temp.schema_doc", -1, &q, NULL) != SQLITE_OK)
		return IQ_EXIT_INTERNAL;
	int first = 1;
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(q, 0);
		const char *kind = (const char *)sqlite3_column_text(q, 1);
		const char *type = (const char *)sqlite3_column_text(q, 2);
		const char *doc = (const char *)sqlite3_column_text(q, 3);
		if (strcmp(kind, "column") != 0) {
			/* iq_wrap puts the space after the colon */
			int col = printf("%s%s (%s)%s", first ? "" : "\n", name, kind, *doc ? ":" : "\n");
			if (*doc)
				iq_wrap(stdout, doc, col - !first, 4, 79);
			first = 0;
			continue;
		}
		const char *dot = strchr(name, '.');
		if (doc && *doc)
			iq_wrap(stdout, doc, printf("  %-16s %-29s", dot ? dot + 1 : name, type ? type : "") - 1,
				48, 79);
		else
			printf("  %-16s %s\n", dot ? dot + 1 : name, type ? type : "");
	}
	sqlite3_finalize(q);
	return IQ_EXIT_OK;
}

static int schema(const struct iq_args *a, sqlite3 *h, const char *format)
{
	const char *only = a->npos ? a->pos[0] : NULL;
	int found = 0;
	if (schema_rows(h, only, &found) != SQLITE_OK) {
		iq_errorf("query: %s", sqlite3_errmsg(h));
		return IQ_EXIT_INTERNAL;
	}
	if (!found) {
		/* a name close to the one typed */
		sqlite3_stmt *q;
		const char *names[64];
		char *own[64];
		size_t n = 0;
		sqlite3_prepare_v2(h, "SELECT name FROM main.sqlite_master WHERE type IN ('table', 'view')"
				   " AND name NOT LIKE 'sqlite_%'", -1, &q, NULL);
		while (n < IQ_ARRAY_LEN(own) && sqlite3_step(q) == SQLITE_ROW)
			names[n] = own[n] = iq_xstrdup((const char *)sqlite3_column_text(q, 0)), n++;
		sqlite3_finalize(q);
		const char *sug = iq_suggest(only, names, n);
		iq_usage_error(a->cmd, "--schema: no table or view '%s'%s%s%s", only, sug ? "; did you mean '" : "",
			       sug ? sug : "", sug ? "'?" : "");
		for (size_t i = 0; i < n; i++)
			free(own[i]);
		return IQ_EXIT_USAGE;
	}
	if (strcmp(format, "table") == 0)
		return print_schema_text(h);
	sqlite3_stmt *q;
	sqlite3_prepare_v2(h, "SELECT * FROM temp.schema_doc", -1, &q, NULL);
	int rc = print_rows(h, q, format);
	sqlite3_finalize(q);
	return rc;
}

int iq_cmd_query(const struct iq_args *a)
{
	const char *db = iq_arg(a, "--db"), *format = iq_arg(a, "--format");
	const char *sql = a->npos ? a->pos[0] : NULL;
	int want_schema = iq_arg_has(a, "--schema");
	if (!format)
		format = "table";
	if (!db && !want_schema) {
		iq_usage_error(a->cmd, "--db FILE is required: the database to query (inquest.db in the"
			       " folder analyze wrote); --schema without it describes the tables");
		return IQ_EXIT_USAGE;
	}
	if (!sql && !want_schema) {
		iq_usage_error(a->cmd, "needs the SQL to run, such as \"SELECT count(*) FROM records\"");
		return IQ_EXIT_USAGE;
	}
	struct iq_store *s = NULL;
	sqlite3 *h = NULL;
	struct iq_diag d = {{0}};
	if (db) {
		if (iq_store_open(db, 1, &s, &d)) {
			iq_errorf("%s", d.msg);
			return IQ_EXIT_INPUT;
		}
		h = iq_store_db(s);
	} else if (sqlite3_open(":memory:", &h) != SQLITE_OK ||
		   sqlite3_exec(h, iq_schema_sql, NULL, NULL, NULL) != SQLITE_OK) {
		/* the schema built in, for --schema without a database */
		iq_errorf("query: the built-in schema: %s", sqlite3_errmsg(h));
		sqlite3_close(h);
		return IQ_EXIT_INTERNAL;
	}
	int status;
	if (want_schema) {
		status = schema(a, h, format);
	} else {
		sqlite3_set_authorizer(h, authorize, NULL);
		sqlite3_stmt *q;
		if (sqlite3_prepare_v2(h, sql, -1, &q, NULL) != SQLITE_OK) {
			iq_errorf("query: %s", sqlite3_errmsg(h));
			status = IQ_EXIT_USAGE;
		} else if (!q) {
			status = IQ_EXIT_OK; /* only a comment, or empty */
		} else {
			status = print_rows(h, q, format);
			sqlite3_finalize(q);
		}
	}
	if (s)
		iq_store_close(s);
	else
		sqlite3_close(h);
	return status;
}
