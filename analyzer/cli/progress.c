/* progress.c: the progress line of ingest and analyze on a terminal:
 * bytes read of the bundle (of its size, where known), files, records and
 * time, redrawn in place with a carriage return a few times a second. It
 * is drawn only when stderr is a terminal and --quiet was not given, so a
 * pipe or a log file never sees it; spaces, not terminal escapes, wipe
 * what a shorter line leaves, so it works on any terminal (colour is never
 * used, so NO_COLOR has nothing to turn off). */
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define REDRAW_S 0.2 /* seconds between two draws */
#define MAX_COLS 79  /* a longer line would wrap, and \r would not take it back */

void iq_progress_init(struct iq_progress *p, int quiet)
{
	memset(p, 0, sizeof *p);
	p->on = !quiet && isatty(STDERR_FILENO);
	p->t0 = iq_wall_seconds();
	p->total = -1;
}

/* 1.2 GiB, 512 KiB, 340 B. */
static void human(char *out, size_t cap, int64_t n)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)n;
	size_t u = 0;
	while (v >= 1024 && u + 1 < IQ_ARRAY_LEN(unit)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, cap, "%lld B", (long long)n);
	else
		snprintf(out, cap, "%.1f %s", v, unit[u]);
}

static void draw(struct iq_progress *p, const char *line)
{
	size_t n = strlen(line);
	if (n > MAX_COLS)
		n = MAX_COLS;
	fputc('\r', stderr);
	fwrite(line, 1, n, stderr);
	/* wipe what a longer line before left */
	for (size_t i = n; i < p->shown; i++)
		fputc(' ', stderr);
	fflush(stderr);
	p->shown = n;
}

void iq_progress_tick(struct iq_progress *p, int64_t bytes, long files, long records, int force)
{
	if (!p || !p->on)
		return;
	double now = iq_wall_seconds();
	if (!force && now - p->last < REDRAW_S)
		return;
	p->last = now;
	char b[32], t[32], line[160];
	human(b, sizeof b, bytes);
	if (p->total > 0) {
		human(t, sizeof t, p->total);
		long pct = (long)(100.0 * (double)bytes / (double)p->total);
		snprintf(line, sizeof line, "inquest: %s of %s (%ld%%), %ld files, %ld records, %.0f s", b, t,
			 pct > 100 ? 100 : pct, files, records, now - p->t0);
	} else {
		snprintf(line, sizeof line, "inquest: %s read, %ld files, %ld records, %.0f s", b, files,
			 records, now - p->t0);
	}
	draw(p, line);
}

void iq_progress_note(struct iq_progress *p, const char *what)
{
	if (!p || !p->on)
		return;
	char line[160];
	snprintf(line, sizeof line, "inquest: %s, %.0f s", what, iq_wall_seconds() - p->t0);
	draw(p, line);
}

void iq_progress_clear(struct iq_progress *p)
{
	if (!p || !p->on || !p->shown)
		return;
	fputc('\r', stderr);
	for (size_t i = 0; i < p->shown; i++)
		fputc(' ', stderr);
	fputc('\r', stderr);
	fflush(stderr);
	p->shown = 0;
}
