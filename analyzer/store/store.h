/* store.h: the SQLite database: opening it with the embedded schema,
 * batched inserts through prepared statements, file accounting. The store
 * knows records, not log formats. */
#ifndef IQ_STORE_H
#define IQ_STORE_H

#include <sqlite3.h>
#include <stdint.h>

#include "../parse/parse.h"

#define IQ_SCHEMA_VERSION 4

struct iq_store;

/* Opens (creating when needed) the database at path. readonly opens an
 * existing one read-only for queries. On success *out is set (free with
 * iq_store_close); otherwise a negative iq_err with d->msg. */
int iq_store_open(const char *path, int readonly, struct iq_store **out, struct iq_diag *d);
/* Makes s a scratch database, one that is renamed into place only when
 * complete (analyze's inquest.db.tmp): no rollback journal and an
 * exclusive lock, which cuts the cost of writing by a fifth. A crash leaves
 * a file that is thrown away, never a half-written inquest.db. Call it
 * right after opening. Returns 0 or IQ_ERR_DB with d->msg. */
int iq_store_scratch(struct iq_store *s, struct iq_diag *d);

/* errfilter.c: is this an error or warning record the unexplained-errors
 * appendix considers (the filter of iq_tpl_sql)? text_kind: the record is
 * of a kind whose text is searched for error words (iq_kind_has_text). */
int iq_kind_has_text(enum iq_kind kind);
int iq_error_like(int text_kind, const char *sev, size_t sevn, const char *text, size_t n);
/* Its two halves: the severity test, and the error words in text (up to
 * its first NUL, as LIKE reads it); the words themselves, lower case. */
int iq_error_severity(const char *sev, size_t n);
int iq_error_words(const char *text, size_t n);
#define IQ_ERROR_WORDS 8
extern const char *const iq_error_word[IQ_ERROR_WORDS];

/* The paths of the files already in the database that a rerun must not
 * read again (every status but 'reading'), sorted by strcmp; *n gets the
 * count. The caller frees with iq_store_paths_free. NULL when there are
 * none (or on a database error, which the first write reports again). */
char **iq_store_done_paths(struct iq_store *s, size_t *n);
void iq_store_paths_free(char **paths, size_t n);

/* Commits what is pending and closes. NULL is allowed. */
int iq_store_close(struct iq_store *s);
sqlite3 *iq_store_db(struct iq_store *s);

/* Starts a file. When the path is already in the database with status
 * 'done' (or 'unknown'/'binary'), sets *already and does nothing else, so
 * re-ingesting a bundle adds no duplicates; a file left 'reading' by an
 * interrupted run has its rows removed and is read again. */
int iq_store_file_begin(struct iq_store *s, const char *path, const char *bundle,
			const char *format, const char *reason, int64_t mtime,
			const struct iq_ident *id, int64_t *file_id, int *already);

/* Removes every row that records of file_id gave (records, typed tables,
 * matches, skips), keeping the files row: for a file found to be a copy of
 * another. first_record is the file's files.first_record (0: unknown, the
 * whole table is searched). Returns 0 or IQ_ERR_DB. */
int iq_store_file_forget(struct iq_store *s, int64_t file_id, int64_t first_record);
/* The file at path (the original of a copy) takes restart, the container
 * restart number its copy's path gives, when its own path gives none: the
 * kubelet's pods/<pod>/<container>/N.log and the runtime's
 * containers/<pod>_<ns>_<container>-<id>.log are one instance's two names.
 * Returns 0 or IQ_ERR_DB. */
int iq_store_file_inherit_restart(struct iq_store *s, const char *path, int restart);
/* files.first_record of file_id, 0 when unknown. */
int64_t iq_store_first_record(struct iq_store *s, int64_t file_id);

/* Adds a record of file_id; its identity gaps are filled from fid (the
 * file's identity). Sets *record_id. The record may be held back and
 * written later: r, fid and every string they point to must stay valid
 * until iq_store_flush, or any other call of this store but
 * iq_store_record and iq_store_match. */
int iq_store_record(struct iq_store *s, int64_t file_id, const struct iq_ident *fid,
		    const struct iq_record *r, int64_t *record_id);
/* Notes record_id (just stored) in error_records: iq_error_like and no
 * signal tagged it. */
int iq_store_error_record(struct iq_store *s, int64_t record_id);
/* time_sources after records changed ts_how: counted again from the
 * records (a full read: for changes no cheaper count covers), or n
 * records moved from one ts_how to another. 0 or IQ_ERR_DB. */
int iq_store_recount_time_sources(struct iq_store *s);
int iq_store_move_time_source(struct iq_store *s, const char *from, const char *to, long long n);
/* Writes the records held back by iq_store_record. */
int iq_store_flush(struct iq_store *s);
/* Adds a signal match of a record; captures is a JSON object or NULL. */
int iq_store_match(struct iq_store *s, int64_t record_id, const char *pack,
		   const char *signal, const char *captures);
/* Adds skipped lines of a file, grouped by reason. */
int iq_store_skip(struct iq_store *s, int64_t file_id, const char *reason,
		  long lines, long first_line, const char *example, size_t n);
/* Closes a file's accounting: status 'done', 'error', 'unknown', 'binary'. */
int iq_store_file_end(struct iq_store *s, int64_t file_id, const struct iq_file_stats *st,
		      int64_t bytes, const char *status, const char *error);
/* Records a problem of the bundle walker. */
int iq_store_problem(struct iq_store *s, const char *path, const char *msg);
int iq_store_meta(struct iq_store *s, const char *key, const char *value);

/* Commits the open transaction and builds the indexes; a scratch database
 * gives up its exclusive lock, so that other connections may read it. */
int iq_store_finish(struct iq_store *s);

/* Commits the open transaction, if any (an interrupted run keeps what it
 * has). Returns 0 or IQ_ERR_DB. */
int iq_store_commit(struct iq_store *s);

/* Runs sql (several statements allowed), returning 0 or IQ_ERR_DB. */
int iq_store_exec(struct iq_store *s, const char *sql, struct iq_diag *d);

#endif
