/* iq.h: what every module of inquest shares: the error enum, diagnostics,
 * borrowed string slices and the growable byte buffer.
 *
 * Ownership, stated once for the whole code base: a pointer is borrowed
 * unless the function's name says _new/_detach (the caller frees) or _take
 * (the callee takes it), or its comment says "caller frees". */
#ifndef IQ_IQ_H
#define IQ_IQ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define IQ_VERSION "0.1.0"

enum iq_err {
	IQ_OK = 0,
	IQ_ERR_USAGE = -2,   /* bad arguments */
	IQ_ERR_INPUT = -3,   /* an input could not be read */
	IQ_ERR_RULES = -4,   /* a rule pack is wrong */
	IQ_ERR_NOMEM = -5,
	IQ_ERR_DB = -6,      /* SQLite failed */
	IQ_ERR_INTR = -7,    /* stopped by a signal (SIGINT, SIGTERM) */
	IQ_ERR_INTERNAL = -70,
};

/* A slice of someone else's bytes; not NUL-terminated. */
struct iq_str {
	const char *p;
	size_t n;
};

#define IQ_STR_NULL ((struct iq_str){NULL, 0})
#define IQ_STR_LIT(s) ((struct iq_str){(s), sizeof(s) - 1})

static inline struct iq_str iq_str_make(const char *p, size_t n)
{
	struct iq_str s = {p, n};
	return s;
}

/* Growable byte buffer, always NUL-terminated after len. */
struct iq_buf {
	char *p;
	size_t len;
	size_t cap;
};

void iq_buf_init(struct iq_buf *b);
void iq_buf_release(struct iq_buf *b);
/* Each returns 0 or IQ_ERR_NOMEM (the buffer is unchanged then). */
int iq_buf_reserve(struct iq_buf *b, size_t extra);
int iq_buf_add(struct iq_buf *b, const void *p, size_t n);
int iq_buf_addc(struct iq_buf *b, char c);
int iq_buf_adds(struct iq_buf *b, const char *s);
int iq_buf_printf(struct iq_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void iq_buf_reset(struct iq_buf *b);

/* Diagnostics: one message with the place it is about. */
struct iq_diag {
	char msg[1024];
};

/* Sets d->msg (when d is not NULL) and returns err, so that callers can
 * write `return iq_diag_set(d, IQ_ERR_INPUT, "...")`. */
int iq_diag_set(struct iq_diag *d, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes "inquest: <msg>" to stderr. */
void iq_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void iq_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Copies at most n bytes of s into out (size outsz) for display: control
 * characters, backslashes and invalid UTF-8 become escapes, so that text from
 * a bundle can never drive the terminal. Always NUL-terminates. */
/* Length of the valid UTF-8 sequence at s (n bytes left, n > 0): 1 to 4,
 * or 0 when it is invalid (overlong, surrogate, past U+10FFFF, cut). */
size_t iq_utf8_len(const unsigned char *s, size_t n);
void iq_escape_display(char *out, size_t outsz, const char *s, size_t n);

/* malloc that never returns NULL: aborts the process on exhaustion (used for
 * small, bounded allocations where recovery buys nothing). */
void *iq_xmalloc(size_t n);
void *iq_xcalloc(size_t n, size_t m);
void *iq_xrealloc(void *p, size_t n);
char *iq_xstrndup(const char *s, size_t n);
char *iq_xstrdup(const char *s);

/* memmem without _GNU_SOURCE: the first needle in hay, or NULL. */
const void *iq_memmem(const void *hay, size_t hn, const void *needle, size_t nn);

#define IQ_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define IQ_UNUSED(x) ((void)(x))

#endif
