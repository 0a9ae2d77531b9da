/* text.c: the short terminal summary of `inquest report --format text`:
 * verdict, first OOM, failure order, impact, the limits measured with the
 * settings they give, and the top evidence. Text from the bundle is
 * escaped for the terminal (iq_escape_display). */
#include <string.h>

#include "../rules/rules.h"
#include "report_int.h"

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static void esc(FILE *out, const char *s, size_t max)
{
	char b[1024];
	size_t n = strlen(s);
	iq_escape_display(b, sizeof b, s, n < max ? n : max);
	fputs(b, out);
	if (n > max)
		fputs("…", out);
}

/* "  LABEL " padded to ten columns: counted in characters, not bytes, so
 * that Turkish labels (sıra, aralık) line up with the English ones. */
static void label(FILE *out, const char *s)
{
	size_t cols = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		cols += (*p & 0xC0) != 0x80;
	fprintf(out, "  %s%*s ", s, cols < 10 ? (int)(10 - cols) : 0, "");
}

int iq_render_text(json_t *doc, const char *lang, FILE *out)
{
	lang = lang && strcmp(lang, "tr") == 0 ? "tr" : "en";
	json_t *pats = json_object_get(doc, "patterns"), *pat = NULL, *report = NULL;
	size_t i;
	json_t *e;
	if (!json_array_size(pats)) {
		fprintf(out, "%s\n", iq_msg(lang, "nopattern"));
		return ferror(out) ? IQ_ERR_INPUT : 0;
	}
	/* the pattern the postmortem tells (story.c), from the built-in packs */
	struct iq_ruleset rs;
	struct iq_diag rd = {{0}};
	const struct iq_pack *pack;
	iq_rules_init(&rs);
	iq_report_primary(doc, iq_rules_load_builtin(&rs, &rd) == 0 ? &rs : NULL, &pat, &pack, &report);
	if (!pat) {
		fprintf(out, "%s\n", iq_msg(lang, "unknown.title"));
		json_array_foreach(pats, i, e) {
			fputs("  ", out);
			esc(out, str(e, "id"), 80);
			fprintf(out, ": %s\n", str(e, "verdict"));
		}
		iq_rules_release(&rs);
		return ferror(out) ? IQ_ERR_INPUT : 0;
	}
	struct iq_buf title;
	iq_buf_init(&title);
	if (iq_report_text(&title, json_object_get(report, "title"), doc, pat, lang, 0) && title.p) {
		esc(out, title.p, 200);
		fputs("\n", out);
	}
	iq_buf_release(&title);
	iq_rules_release(&rs);
	esc(out, str(pat, "id"), 80);
	fprintf(out, ": %s (%s %.2f)\n  ", str(pat, "verdict"), iq_msg(lang, "confidence"),
		json_number_value(json_object_get(pat, "confidence")));
	esc(out, str(pat, "summary"), 400);
	fputc('\n', out);
	json_t *o = json_array_get(json_object_get(pat, "oom_events"), 0);
	if (o) {
		label(out, iq_msg(lang, "text.first"));
		fprintf(out, "%s  ", str(o, "time"));
		esc(out, str(o, "pod"), 64);
		fputs(" @ ", out);
		esc(out, str(o, "node"), 64);
		fputc('\n', out);
	}
	json_t *order = json_object_get(json_object_get(pat, "cascade"), "failure_order");
	if (json_array_size(order)) {
		label(out, iq_msg(lang, "text.order"));
		json_array_foreach(order, i, e) {
			fputs(i ? " -> " : "", out);
			esc(out, str(e, "pod"), 64);
		}
		fputc('\n', out);
	}
	json_t *imp = json_object_get(pat, "impact");
	if (json_is_object(imp)) {
		label(out, iq_msg(lang, "text.impact"));
		fprintf(out, iq_msg(lang, "text.impactfmt"),
			(long long)json_integer_value(json_object_get(imp, "failed_requests")),
			(long long)json_integer_value(json_object_get(imp, "dropped_streams")));
		json_t *u = json_object_get(imp, "unavailability");
		if (json_is_object(u)) {
			char d[IQ_DUR_BUF];
			fprintf(out, "; %s %s – %s (%s)", iq_msg(lang, "text.unavail"), str(u, "start"),
				str(u, "end"),
				iq_fmt_dur(iq_json_time(u, "end") - iq_json_time(u, "start"), lang, d));
		}
		fputc('\n', out);
	}
	json_t *ph = json_object_get(pat, "phases");
	int64_t b = iq_json_time(json_object_get(ph, "outage_begins"), "time");
	int64_t en = iq_json_time(json_object_get(ph, "outage_ends"), "time");
	if (b != IQ_TIME_NONE && en != IQ_TIME_NONE) {
		char d[IQ_DUR_BUF];
		label(out, iq_msg(lang, "text.outage"));
		fprintf(out, "%s – %s (%s)\n", str(json_object_get(ph, "outage_begins"), "time"),
			str(json_object_get(ph, "outage_ends"), "time"), iq_fmt_dur(en - b, lang, d));
	}
	json_t *w = json_object_get(doc, "incident_window");
	if (*str(w, "start") && *str(w, "end")) {
		label(out, iq_msg(lang, "text.window"));
		fprintf(out, "%s – %s (%s)\n", str(w, "start"), str(w, "end"),
			iq_msg(lang, json_is_true(json_object_get(w, "given")) ? "text.window.given"
									   : "text.window.inferred"));
	}
	/* the limits the bundle measured and the settings they give */
	json_t *lim = json_object_get(pat, "limits");
	if (json_is_object(lim)) {
		label(out, iq_msg(lang, "text.limits"));
		json_t *bt = json_object_get(lim, "batch");
		const char *keys[] = {"largest_completed", "smallest_failed"};
		for (int k = 0; k < 2; k++) {
			json_t *v = json_object_get(json_object_get(bt, keys[k]), "value");
			if (json_is_integer(v))
				fprintf(out, "%lld", (long long)json_integer_value(v));
			else
				fputs("?", out);
			fputs(k ? "" : " / ", out);
		}
		fprintf(out, " %s", iq_msg(lang, "text.batchok"));
		json_t *cap = json_object_get(json_object_get(lim, "kv_cache"), "capacity_tokens");
		if (json_is_integer(cap))
			fprintf(out, iq_msg(lang, "text.kvfmt"), (long long)json_integer_value(cap));
		fputc('\n', out);
		json_t *vis = json_object_get(lim, "vision");
		if (json_is_object(vis)) {
			char v[4][32];
			const char *parts[] = {"images_in_flight", "pixels_in_flight"};
			for (int k = 0; k < 4; k++) {
				json_t *x = json_object_get(json_object_get(json_object_get(vis, parts[k / 2]),
									    k % 2 ? "smallest_failed" : "largest_completed"),
							    "value");
				if (json_is_integer(x))
					snprintf(v[k], sizeof v[k], "%lld", (long long)json_integer_value(x));
				else
					snprintf(v[k], sizeof v[k], "?");
			}
			label(out, iq_msg(lang, "text.vision"));
			fprintf(out, iq_msg(lang, "text.visionfmt"), v[0], v[1], v[2], v[3]);
			fputc('\n', out);
		}
		json_t *props = json_object_get(lim, "proposals");
		if (json_array_size(props)) {
			label(out, iq_msg(lang, "text.propose"));
			json_array_foreach(props, i, e) {
				fputs(i ? ", " : "", out);
				esc(out, str(e, "setting"), 64);
				fprintf(out, " %lld", (long long)json_integer_value(json_object_get(e, "value")));
			}
			fputc('\n', out);
		}
	}
	/* top evidence: the first line of each signal found */
	fprintf(out, "  %s:\n", iq_msg(lang, "text.evidence"));
	size_t shown = 0;
	json_array_foreach(json_object_get(pat, "signals"), i, e) {
		json_t *ev = json_array_get(json_object_get(e, "evidence"), 0);
		if (!ev || shown >= 6)
			continue;
		shown++;
		fputs("    [", out);
		esc(out, str(e, "id"), 40);
		fputs("] ", out);
		esc(out, str(ev, "file"), 200);
		fprintf(out, ":%lld\n      ", (long long)json_integer_value(json_object_get(ev, "line")));
		esc(out, str(ev, "text"), 160);
		fputc('\n', out);
	}
	json_array_foreach(pats, i, e) {
		if (e == pat)
			continue;
		fputs("  + ", out);
		esc(out, str(e, "id"), 80);
		fprintf(out, ": %s\n", str(e, "verdict"));
	}
	return ferror(out) ? IQ_ERR_INPUT : 0;
}
