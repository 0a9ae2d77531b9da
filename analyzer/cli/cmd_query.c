/* cmd_query.c: `inquest query --db FILE [--format table|csv|json] SQL`:
 * read-only SQL over a database. The connection is opened read-only and
 * an authorizer refuses anything but reading, so a query can never change
 * or escape the database (ATTACH, pragmas that write, load_extension). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../store/store.h"
#include "cli.h"

static int authorize(void *u, int action, const char *a, const char *b, const char *c, const char *d)
{
	IQ_UNUSED(u); IQ_UNUSED(b); IQ_UNUSED(c); IQ_UNUSED(d);
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_FUNCTION:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_PRAGMA:
		/* reading pragmas without an argument (table_info ...) only */
		return b == NULL && a && (strcmp(a, "table_info") == 0 || strcmp(a, "table_list") == 0 ||
					  strcmp(a, "user_version") == 0 || strcmp(a, "index_list") == 0)
			? SQLITE_OK : SQLITE_DENY;
	default:
		return SQLITE_DENY;
	}
}

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

int iq_cmd_query(const struct iq_args *a)
{
	const char *db = iq_arg(a, "--db"), *format = iq_arg(a, "--format");
	const char *sql = a->npos ? a->pos[0] : NULL;
	if (!format)
		format = "table";
	if (!db) {
		iq_usage_error(a->cmd, "--db FILE is required: the database to query (inquest.db in the"
			       " folder analyze wrote)");
		return IQ_EXIT_USAGE;
	}
	if (!sql) {
		iq_usage_error(a->cmd, "needs the SQL to run, such as \"SELECT count(*) FROM records\"");
		return IQ_EXIT_USAGE;
	}
	struct iq_store *s;
	struct iq_diag d = {{0}};
	if (iq_store_open(db, 1, &s, &d)) {
		iq_errorf("%s", d.msg);
		return IQ_EXIT_INPUT;
	}
	sqlite3 *h = iq_store_db(s);
	sqlite3_set_authorizer(h, authorize, NULL);
	sqlite3_stmt *q;
	const char *tail;
	if (sqlite3_prepare_v2(h, sql, -1, &q, &tail) != SQLITE_OK) {
		iq_errorf("query: %s", sqlite3_errmsg(h));
		iq_store_close(s);
		return IQ_EXIT_USAGE;
	}
	if (!q) {
		iq_store_close(s);
		return IQ_EXIT_OK;
	}
	int nc = sqlite3_column_count(q);
	json_t *rows = strcmp(format, "json") == 0 ? json_array() : NULL;
	if (!rows) {
		for (int c = 0; c < nc; c++) {
			if (c)
				putchar(strcmp(format, "csv") == 0 ? ',' : '\t');
			fputs(sqlite3_column_name(q, c), stdout);
		}
		putchar('\n');
	}
	int rc;
	long n = 0;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		n++;
		if (rows) {
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
			continue;
		}
		for (int c = 0; c < nc; c++) {
			const char *t = (const char *)sqlite3_column_text(q, c);
			if (strcmp(format, "csv") == 0) {
				if (c)
					putchar(',');
				csv_field(t);
			} else {
				char esc[4096];
				if (c)
					putchar('\t');
				if (t) {
					/* the length, not strlen: text may hold NUL bytes */
					iq_escape_display(esc, sizeof esc, t,
							  (size_t)sqlite3_column_bytes(q, c));
					fputs(esc, stdout);
				} else {
					fputs("NULL", stdout);
				}
			}
		}
		putchar('\n');
	}
	int status = IQ_EXIT_OK;
	if (rc != SQLITE_DONE) {
		iq_errorf("query: %s", sqlite3_errmsg(h));
		status = IQ_EXIT_USAGE;
	}
	if (rows) {
		json_dumpf(rows, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(rows);
	}
	sqlite3_finalize(q);
	iq_store_close(s);
	(void)n;
	return status;
}
