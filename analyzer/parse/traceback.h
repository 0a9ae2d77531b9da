/* traceback.h: joining the lines of a Python traceback into one record, for
 * the container log formats (cri, docker-json, plain). A log format feeds
 * the logical lines of one stream to a joiner; the joiner passes ordinary
 * lines straight through and gathers "Traceback (most recent call last):",
 * its frames, the exception line and chained sections into one. */
#ifndef IQ_TRACEBACK_H
#define IQ_TRACEBACK_H

#include "parse.h"

/* Caps of one joined record: past them the record is handed out and the
 * lines that follow stand on their own. */
#define IQ_TB_MAX_LINES 256
#define IQ_TB_MAX_BYTES (1u << 20)

/* One logical line of a stream (a CRI P..F sequence, a docker chunk run, a
 * plain line): its first file line and span, its time, its content. The
 * slices are borrowed for the call.
 *
 * A joined traceback comes out placed at its first exception line, the
 * line that names the error ("torch.OutOfMemoryError: CUDA out of
 * memory..."): line, ts and ts_raw are that line's, and its text comes
 * first, then every other line of the traceback in file order, so that
 * evidence cites the error itself. first_line is the "Traceback" line and
 * nlines the span from there (struct iq_record's first_line). A traceback
 * cut before its exception line stays at its first line. first_line is 0
 * for everything else. */
struct iq_tb_line {
	long line, nlines;
	long first_line;
	int64_t ts;
	enum iq_ts_how how;
	struct iq_str ts_raw;
	struct iq_str text;
	/* what stands verbatim at line when text does not (a line re-joined
	 * from chunks: the first chunk; a json-file line: its log value as
	 * escaped), or empty: evidence quotes it */
	struct iq_str quote;
};

/* Receives each line or joined traceback; the slices are valid during the
 * call. Returns 0 or a negative iq_err that stops the file. */
typedef int (*iq_tb_emit_fn)(void *u, const struct iq_tb_line *l);

/* A joiner for one stream. Fields are private to traceback.c. */
struct iq_tb {
	struct iq_buf text, ts_raw;
	struct iq_buf tags;     /* the start line's process tags ("(Proc pid=1) ") */
	struct iq_buf prefix;   /* its whole wrapper: tags and logger head */
	int64_t ts;
	enum iq_ts_how how;
	long line, end;         /* first file line, one past the last */
	long nparts;            /* logical lines joined so far */
	/* the first exception line: where the record is placed */
	struct iq_buf cite_ts_raw;
	struct iq_buf quote, cite_quote;  /* the first line's and the cited line's quotes */
	long cite_line;         /* 0 until one is seen */
	size_t cite_off, cite_len;  /* its text inside text */
	struct iq_buf out;      /* the record's text: the cited line first */
	int64_t cite_ts;
	enum iq_ts_how cite_how;
	long foreign;           /* other processes' lines in a row inside it */
	int state;              /* 0 when no traceback is pending */
	/* a blank line after the exception line, held until the next line
	 * tells whether a chained traceback follows */
	struct iq_buf held_text, held_ts_raw;
	struct iq_tb_line held;
	int has_held;
};

/* Fills r as the log record of l (line, span, first_line, time, text, the
 * severity its text opens with, and l's quote as the record's); the
 * caller sets the stream. r's slices are l's. */
void iq_tb_record(struct iq_record *r, const struct iq_tb_line *l);

void iq_tb_init(struct iq_tb *tb);
void iq_tb_release(struct iq_tb *tb);

/* Offers line l to the joiner: emit() receives l itself when it is not part
 * of a traceback, any traceback that l ends (before l), and nothing while a
 * traceback gathers. Returns 0 or the first error of emit() or
 * IQ_ERR_NOMEM. */
int iq_tb_feed(struct iq_tb *tb, const struct iq_tb_line *l, iq_tb_emit_fn emit, void *u);

/* Hands out what is pending (a traceback, a held line). Returns 0 or the
 * error of emit(). */
int iq_tb_flush(struct iq_tb *tb, iq_tb_emit_fn emit, void *u);

/* The first file line of what is pending, or LONG_MAX when nothing is: for
 * flushing several streams oldest first. */
long iq_tb_pending_line(const struct iq_tb *tb);

/* The length of the wrapper a log line opens with, before its message:
 * up to four process tags "(Name pid=N[, ip=A]) ", "[rankN]: ", and a vLLM
 * logger head "LEVEL MM-DD HH:MM:SS [file.py:N] " (or the older
 * "LEVEL MM-DD HH:MM:SS file.py:N] "). *tags_len gets the length of the
 * tags alone (may be NULL). */
size_t iq_tb_wrapper_len(const char *s, size_t n, size_t *tags_len);

#endif
