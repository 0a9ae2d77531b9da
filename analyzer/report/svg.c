/* svg.c: the postmortem's charts as hand-written SVG: time on the x axis
 * (UTC), a value axis with its unit, a legend, reference lines, marked
 * events and a shaded window; and the pod-lifetime chart (the domino).
 * Every label is XML-escaped; output is a standalone, well-formed file. */
#include <math.h>
#include <string.h>

#include "report_int.h"

#define W 980
#define ML 78    /* left margin: value axis labels */
#define MR 230   /* right margin: legend */
#define MT 56
#define MB 64
#define PW (W - ML - MR)

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
				      "#8c564b", "#e377c2", "#17becf", "#7f7f7f"};

static void xml(FILE *out, const char *s)
{
	struct iq_buf b;
	iq_buf_init(&b);
	if (iq_xml_escape(&b, s, strlen(s)) == 0 && b.p)
		fputs(b.p, out);
	iq_buf_release(&b);
}

static void text(FILE *out, double x, double y, const char *anchor, const char *extra,
		 const char *s)
{
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s%s>", x, y, anchor,
		extra ? " " : "", extra ? extra : "");
	xml(out, s);
	fputs("</text>\n", out);
}

static void head(FILE *out, int h, const char *title)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		     "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
		     "font-size=\"12\">\n<title>", W, h, W, h);
	xml(out, title);
	fprintf(out, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, h);
	text(out, ML, 26, "start", "font-size=\"16\" font-weight=\"bold\"", title);
}

/* A step for about n ticks over span: 1, 2, 5 times a power of ten. */
static double nice_step(double span, int n)
{
	if (span <= 0)
		return 1;
	double raw = span / n, p = pow(10, floor(log10(raw)));
	double m = raw / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static int64_t time_step(int64_t span)
{
	static const int64_t steps_s[] = {10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
					  7200, 10800, 21600, 43200, 86400};
	for (size_t i = 0; i < IQ_ARRAY_LEN(steps_s); i++)
		if (span / (steps_s[i] * IQ_NS_PER_SEC) <= 10)
			return steps_s[i] * IQ_NS_PER_SEC;
	return 86400 * IQ_NS_PER_SEC * (span / (86400 * IQ_NS_PER_SEC * 10) + 1);
}

/* The x axis: ticks and HH:MM(:SS) labels between t0 and t1, and its label. */
static void time_axis(FILE *out, int64_t t0, int64_t t1, double y0, double y1, const char *label)
{
	int64_t span = t1 > t0 ? t1 - t0 : 1;
	int64_t st = time_step(span);
	int64_t first = t0 - (t0 % st + st) % st;
	if (first < t0)
		first += st;
	fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333\"/>\n", ML, y1,
		ML + PW, y1);
	for (int64_t t = first; t <= t1; t += st) {
		double x = ML + (double)(t - t0) / (double)span * PW;
		int h, mi, s;
		iq_time_split(t, NULL, NULL, NULL, &h, &mi, &s, NULL);
		char lab[16];
		if (st % (60 * IQ_NS_PER_SEC) == 0)
			snprintf(lab, sizeof lab, "%02d:%02d", h, mi);
		else
			snprintf(lab, sizeof lab, "%02d:%02d:%02d", h, mi, s);
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>\n", x,
			y0, x, y1);
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x, y1,
			x, y1 + 5);
		text(out, x, y1 + 18, "middle", NULL, lab);
	}
	char day[IQ_TIME_BUF];
	iq_time_fmt_ms(t0, day);
	char lab[160];
	snprintf(lab, sizeof lab, "%s, %.10s", label, day);
	text(out, ML + PW / 2.0, y1 + 40, "middle", NULL, lab);
}

static void legend_item(FILE *out, int *ly, const char *color, const char *dash, int box,
			const char *label)
{
	double x = ML + PW + 20;
	if (box)
		fprintf(out, "<rect x=\"%.1f\" y=\"%d\" width=\"18\" height=\"10\" fill=\"%s\"/>\n", x,
			*ly - 9, color);
	else
		fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
			     "stroke-width=\"2.5\"%s/>\n", x, *ly - 4, x + 18, *ly - 4, color, dash);
	char cut[64];
	snprintf(cut, sizeof cut, "%s", label);
	if (strlen(label) >= sizeof cut)
		memcpy(cut + sizeof cut - 4, "...", 4);
	text(out, x + 24, *ly, "start", NULL, cut);
	*ly += 18;
}

/* Where a value sits on a value axis [lo, hi] drawn from y1 (foot) up
 * ph pixels; outside it, at its edge. */
static double yof(double v, double lo, double hi, double y1, double ph)
{
	v = v < lo ? lo : v > hi ? hi : v;
	return y1 - (v - lo) / (hi - lo) * ph;
}

static void value_axis(FILE *out, double lo, double hi, double top, double y1, double ph, int n)
{
	double st = nice_step(hi - lo, n);
	for (double v = ceil(lo / st - 1e-9) * st; v <= hi + st * 1e-9; v += st) {
		double y = yof(v, lo, hi, y1, ph);
		char lab[32];
		snprintf(lab, sizeof lab, "%g", fabs(v) < st * 1e-6 ? 0.0 : v);
		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>\n", ML, y,
			ML + PW, y);
		text(out, ML - 8, y + 4, "end", NULL, lab);
	}
	fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333\"/>\n", ML, top, ML, y1);
}

/* Marked events along the top of a plot [top, y1]: a dotted line, a
 * triangle, and the label in the first of three rows where it does not
 * run into the label before it (no label past the third row). */
static void marks(FILE *out, const struct iq_chart *c, int series, double top, double y1, int64_t t0,
		  double span)
{
	double right[3] = {-1e9, -1e9, -1e9};
	for (size_t i = 0; i < c->nmarks; i++) {
		const struct iq_mark *m = &c->marks[i];
		if (m->t < t0 || m->t > t0 + (int64_t)span || (series >= 0 && m->series >= 0 && m->series != series))
			continue;
		double x = ML + (double)(m->t - t0) / span * PW;
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" "
			     "stroke-width=\"1\" stroke-dasharray=\"2 3\"/>\n", x, top, x, y1);
		fprintf(out, "<path d=\"M%.1f %.1f l-5 -8 h10 z\" fill=\"#d62728\"/>\n", x, top);
		double w = 6.0 * (double)strlen(m->label) + 6;
		for (int row = 0; row < 3; row++) {
			if (x - w / 2 <= right[row])
				continue;
			right[row] = x + w / 2;
			fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" fill=\"#444\" "
				     "stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">", x, top - 11 - 11 * row);
			xml(out, m->label);
			fputs("</text>\n", out);
			break;
		}
	}
}

static void polyline(FILE *out, const struct iq_series *s, size_t nb, double bw, double lo, double hi,
		     double y1, double ph, const char *col)
{
	int open = 0;
	for (size_t i = 0; i < nb; i++) {
		if (isnan(s->y[i])) {
			/* a bucket or two between samples is no gap in the data */
			size_t k = i;
			while (k < nb && isnan(s->y[k]))
				k++;
			if (open && k < nb && k - i <= 3)
				continue;
			if (open)
				fputs("\"/>\n", out);
			open = 0;
			continue;
		}
		if (!open)
			fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
				     "stroke-linejoin=\"round\" points=\"", col);
		fprintf(out, "%s%.1f,%.1f", open ? " " : "", ML + bw * ((double)i + 0.5), yof(s->y[i], lo, hi, y1, ph));
		open = 1;
	}
	if (open)
		fputs("\"/>\n", out);
}

static void hline(FILE *out, const struct iq_chart *c, double lo, double y1, double ph)
{
	double y = yof(c->hline, lo, c->ymax, y1, ph);
	fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#d62728\" "
		     "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n", ML, y, ML + PW, y);
}

int iq_svg_chart(const struct iq_chart *c, const char *lang, FILE *out)
{
	/* small multiples: a panel per series, each with its own axis */
	size_t np = c->panels && c->nser > 1 ? c->nser : 1;
	const int ph = np > 1 ? 120 : 420 - MT - MB, gap = np > 1 ? 34 : 0;
	const int top0 = MT + (c->nmarks ? 24 : 0);
	const int h = top0 + (int)np * (ph + gap) - gap + MB;
	double lo = c->ymin, hi = c->ymax > lo ? c->ymax : lo + 1;
	int64_t t0 = c->t0, t1 = c->t0 + (int64_t)c->nb * c->step;
	double span = (double)(t1 - t0);
	double bw = (double)PW / (double)(c->nb ? c->nb : 1);
	head(out, h, c->title);
	int ly = MT + 10;
	for (size_t pi = 0; pi < np; pi++) {
		double top = top0 + (double)pi * (ph + gap), y1 = top + ph;
		value_axis(out, lo, hi, top, y1, ph, np > 1 ? 3 : 5);
		if (np > 1) {
			/* the panel's name inside it, top left */
			text(out, ML + 6, top + ph * 0.3, "start", "font-weight=\"bold\" fill=\"#333\" stroke=\"#ffffff\" "
			     "stroke-width=\"3\" paint-order=\"stroke\"", c->ser[pi].name);
			fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333\"/>\n", ML, y1,
				ML + PW, y1);
		}
		/* shaded window */
		if (c->band0 != IQ_TIME_NONE && c->band1 > c->band0) {
			double x0 = ML + (double)(c->band0 - t0) / span * PW;
			double x1 = ML + (double)(c->band1 - t0) / span * PW;
			x0 = x0 < ML ? ML : x0;
			x1 = x1 > ML + PW ? ML + PW : x1;
			fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#d62728\" "
				     "fill-opacity=\"0.12\"/>\n", x0, top, x1 - x0 > 1 ? x1 - x0 : 1, ph);
			text(out, x0 + 4, top + 14, "start", "fill=\"#a01010\"", c->band_label);
		}
		if (c->hline >= 0)
			hline(out, c, lo, y1, ph);
		if (c->bars) {
			/* one bar a bucket; stacked: series 0 on top, the last at the foot */
			for (size_t i = 0; i < c->nb; i++) {
				double base = 0;
				for (size_t k = c->nser; k-- > 0;) {
					double v = isnan(c->ser[k].y[i]) ? 0 : c->ser[k].y[i];
					if (v <= 0)
						continue;
					size_t slot = c->stacked ? 0 : k;
					double w = c->stacked ? bw * 0.8 : bw * 0.8 / (double)c->nser;
					double from = c->stacked ? base : 0, to = from + v;
					double ya = yof(to, lo, hi, y1, ph), yb = yof(from, lo, hi, y1, ph);
					fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
						ML + bw * (double)i + bw * 0.1 + w * (double)slot, ya, w, yb - ya,
						palette[k % IQ_ARRAY_LEN(palette)]);
					base = to;
				}
			}
		} else if (np > 1) {
			polyline(out, &c->ser[pi], c->nb, bw, lo, hi, y1, ph, palette[pi % IQ_ARRAY_LEN(palette)]);
		} else {
			for (size_t si = 0; si < c->nser; si++)
				polyline(out, &c->ser[si], c->nb, bw, lo, hi, y1, ph, palette[si % IQ_ARRAY_LEN(palette)]);
		}
		marks(out, c, np > 1 ? (int)pi : -1, top, y1, t0, span);
	}
	double y1 = top0 + (double)np * (ph + gap) - gap;
	char rot[64];
	snprintf(rot, sizeof rot, "transform=\"rotate(-90 18 %.1f)\"", (top0 + y1) / 2.0);
	text(out, 18, (top0 + y1) / 2.0, "middle", rot, c->ylabel);
	time_axis(out, t0, t1, top0, y1, c->xlabel);
	/* legend */
	if (c->band0 != IQ_TIME_NONE && c->band1 > c->band0)
		legend_item(out, &ly, "#f4cfcf", "", 1, c->band_label);
	for (size_t si = 0; si < c->nser; si++)
		legend_item(out, &ly, palette[si % IQ_ARRAY_LEN(palette)], "", c->bars, c->ser[si].name);
	if (c->hline >= 0)
		legend_item(out, &ly, "#d62728", " stroke-dasharray=\"6 4\"", 0, c->hline_label);
	if (c->nmarks) {
		double x = ML + PW + 20;
		fprintf(out, "<path d=\"M%.1f %d l-5 -8 h10 z\" fill=\"#d62728\"/>\n", x + 9, ly - 1);
		text(out, x + 24, ly, "start", NULL, iq_msg(lang, "chart.legend.oom"));
		ly += 18;
	}
	if (*c->below_label) {
		/* what the foot of the axis means, under the legend, wrapped */
		char buf[96];
		snprintf(buf, sizeof buf, "%s", c->below_label);
		const char *p = buf;
		ly += 6;
		while (*p) {
			size_t n = strlen(p);
			if (n > 34) {
				n = 34;
				while (n > 0 && p[n] != ' ')
					n--;
				if (!n)
					n = 34;
			}
			char line[40];
			snprintf(line, sizeof line, "%.*s", (int)n, p);
			text(out, ML + PW + 20, ly, "start", "font-size=\"11\" fill=\"#555\"", line);
			ly += 14;
			p += n;
			while (*p == ' ')
				p++;
		}
	}
	fputs("</svg>\n", out);
	return ferror(out) ? IQ_ERR_INPUT : 0;
}

int iq_svg_gantt(const struct iq_gantt *g, const char *lang, FILE *out)
{
	const int row = 30;
	int ph = (int)g->nlanes * row + 10;
	int h = MT + ph + MB;
	if (h < 200)
		h = 200;
	double y1 = MT + ph;
	double span = (double)(g->t1 > g->t0 ? g->t1 - g->t0 : 1);
	head(out, h, g->title);
	time_axis(out, g->t0, g->t1, MT, y1, iq_msg(lang, "chart.time"));
	for (size_t li = 0; li < g->nlanes; li++) {
		const struct iq_lane *l = &g->lanes[li];
		double y = MT + 5 + (double)li * row;
		char cut[24];
		snprintf(cut, sizeof cut, "%s", l->name);
		text(out, ML - 8, y + 17, "end", NULL, cut);
		for (size_t i = 0; i < l->nspans; i++) {
			const struct iq_span *sp = &l->spans[i];
			double x0 = ML + (double)(sp->t0 - g->t0) / span * PW;
			double x1 = ML + (double)(sp->t1 - g->t0) / span * PW;
			fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n",
				x0, y + 4, x1 - x0 > 0.5 ? x1 - x0 : 0.5, row - 10,
				sp->down ? "#f2a5a5" : "#5aa55a");
		}
		for (size_t i = 0; i < l->ndeaths; i++) {
			double x = ML + (double)(l->deaths[i] - g->t0) / span * PW;
			fprintf(out, "<path d=\"M%.1f %.1f l5 5 l-5 5 l-5 -5 z\" fill=\"#111\"/>\n", x,
				y + 5 + (row - 10) / 2.0 - 5);
		}
	}
	fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333\"/>\n", ML, MT, ML, y1);
	int ly = MT + 10;
	legend_item(out, &ly, "#5aa55a", "", 1, iq_msg(lang, "chart.serving"));
	legend_item(out, &ly, "#f2a5a5", "", 1, iq_msg(lang, "chart.down"));
	double x = ML + PW + 20;
	fprintf(out, "<path d=\"M%.1f %d l5 5 l-5 5 l-5 -5 z\" fill=\"#111\"/>\n", x + 9, ly - 10);
	text(out, x + 24, ly, "start", NULL, iq_msg(lang, "chart.legend.oom"));
	fputs("</svg>\n", out);
	return ferror(out) ? IQ_ERR_INPUT : 0;
}
