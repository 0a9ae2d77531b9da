/* opts.c: the command line read by the command table (commands.c): one
 * parser for every command's options, "did you mean" for a mistyped
 * command or option, and the help made from the same rows, so that what
 * the parser takes and what --help, the man page, the README and the
 * shell completions say cannot differ. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- rows ---- */

size_t iq_opt_count(const struct iq_command *c)
{
	size_t n = 0;
	while (c->opts && c->opts[n])
		n++;
	return n;
}

const char *iq_opt_metavar(const struct iq_opt *o)
{
	return o->arg ? o->arg : o->choices;
}

static const struct iq_opt *find_opt(const struct iq_command *c, const char *name, size_t len,
				     size_t *index)
{
	for (size_t i = 0; c->opts && c->opts[i]; i++) {
		const struct iq_opt *o = c->opts[i];
		if ((strlen(o->name) == len && strncmp(o->name, name, len) == 0) ||
		    (o->alias && strlen(o->alias) == len && strncmp(o->alias, name, len) == 0)) {
			if (index)
				*index = i;
			return o;
		}
	}
	return NULL;
}

/* Whether v is one of the '|'-separated choices. */
int iq_choice_ok(const char *choices, const char *v)
{
	size_t vl = strlen(v);
	for (const char *s = choices; *s;) {
		size_t n = strcspn(s, "|");
		if (n == vl && strncmp(s, v, n) == 0)
			return 1;
		s += n + (s[n] ? 1 : 0);
	}
	return 0;
}

/* "en or tr", "md, json or text": the choices in words. */
static void choices_words(const char *choices, char *out, size_t cap)
{
	size_t n = 0, total = 1;
	for (const char *p = choices; *p; p++)
		total += *p == '|';
	out[0] = '\0';
	for (const char *s = choices; *s; n++) {
		size_t k = strcspn(s, "|");
		size_t used = strlen(out);
		snprintf(out + used, cap - used, "%s%.*s", n == 0 ? "" : n + 1 == total ? " or " : ", ",
			 (int)k, s);
		s += k + (s[k] ? 1 : 0);
	}
}

/* ---- did you mean ---- */

/* Optimal string alignment distance of a and b (transpositions count one),
 * capped at 9; for words of a command line. */
static int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 40 || lb > 40)
		return 9;
	int d[41][41];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];
			int v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb] > 9 ? 9 : d[la][lb];
}

const char *iq_suggest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	int bd = 9;
	size_t wl = strlen(word);
	for (size_t i = 0; i < n; i++) {
		if (!cands[i])
			continue;
		int dd = distance(word, cands[i]);
		/* a word typed short ("--max-member") is a prefix of the one meant */
		if (wl >= 3 && strncmp(cands[i], word, wl) == 0 && dd > 1)
			dd = 1;
		if (dd < bd) {
			bd = dd;
			best = cands[i];
		}
	}
	/* close enough to be a typo: a third of the word, at least one edit */
	int allowed = (int)wl / 3 < 1 ? 1 : (int)wl / 3;
	return best && bd <= allowed && bd <= 3 ? best : NULL;
}

/* ---- usage errors ---- */

void iq_usage_error(const struct iq_command *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "inquest: %s: ", c->name);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: ");
	iq_synopsis(c, stderr, 7, 80);
	fprintf(stderr, "see 'inquest %s --help'\n", c->name);
}

/* ---- the parser ---- */

static void add_value(struct iq_args *a, size_t k, const char *v)
{
	struct iq_argval *av = &a->vals[k];
	av->v = iq_xrealloc(av->v, (size_t)(av->n + 1) * sizeof *av->v);
	av->v[av->n++] = v;
}

int iq_args_parse(const struct iq_command *c, int argc, char **argv, struct iq_args *a)
{
	size_t nopts = iq_opt_count(c);
	char err[1024] = "";
	int dashdash = 0;
	memset(a, 0, sizeof *a);
	a->cmd = c;
	a->vals = iq_xcalloc(nopts + 1, sizeof *a->vals);
	a->pos = iq_xcalloc((size_t)argc + 1, sizeof *a->pos);
	/* the first error is kept and the scan goes on: a -h or --help later
	 * on the line still shows the help */
	for (int i = 0; i < argc; i++) {
		const char *s = argv[i];
		if (dashdash || s[0] != '-' || s[1] == '\0') {
			a->pos[a->npos++] = argv[i];
			continue;
		}
		if (strcmp(s, "--") == 0) {
			dashdash = 1;
			continue;
		}
		if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
			iq_help_command(c, stdout);
			iq_args_release(a);
			return IQ_ARGS_HELP;
		}
		if (err[0])
			continue;
		const char *eq = s[1] == '-' ? strchr(s, '=') : NULL;
		size_t len = eq ? (size_t)(eq - s) : strlen(s);
		size_t k = 0;
		const struct iq_opt *o = find_opt(c, s, len, &k);
		if (!o) {
			const char **names = iq_xcalloc(2 * nopts + 2, sizeof *names);
			size_t nn = 0;
			char *typed = iq_xstrndup(s, len);
			for (size_t j = 0; j < nopts; j++) {
				names[nn++] = c->opts[j]->name;
				names[nn++] = c->opts[j]->alias;
			}
			names[nn++] = "--help";
			const char *sug = iq_suggest(typed, names, nn);
			snprintf(err, sizeof err, "unknown option '%s'%s%s%s", typed, sug ? "; did you mean '" : "",
				 sug ? sug : "", sug ? "'?" : "");
			free(typed);
			free(names);
			continue;
		}
		const char *v = NULL;
		if (!iq_opt_metavar(o)) {
			if (eq) {
				snprintf(err, sizeof err, "%s takes no value ('%s')", o->name, s);
				continue;
			}
			v = "";
		} else if (eq) {
			v = eq + 1;
		} else if (i + 1 < argc) {
			v = argv[++i];
		} else {
			snprintf(err, sizeof err, "%s needs a value: %s %s", s, o->name, iq_opt_metavar(o));
			continue;
		}
		if (o->choices && !iq_choice_ok(o->choices, v)) {
			char words[256];
			choices_words(o->choices, words, sizeof words);
			snprintf(err, sizeof err, "%s takes %s, not '%s'", o->name, words, v);
			continue;
		}
		if (!(o->flags & IQ_OPT_MANY))
			a->vals[k].n = 0; /* the last one given counts */
		add_value(a, k, v);
	}
	if (!err[0] && a->npos < c->min_args)
		snprintf(err, sizeof err, "needs %s", c->args);
	if (!err[0] && c->max_args >= 0 && a->npos > c->max_args) {
		if (c->max_args == 0)
			snprintf(err, sizeof err, "takes no arguments, not '%s'", a->pos[0]);
		else
			snprintf(err, sizeof err, "takes %s, and '%s' is one too many", c->args,
				 a->pos[c->max_args]);
	}
	for (size_t k = 0; !err[0] && k < nopts; k++)
		if ((c->opts[k]->flags & IQ_OPT_REQUIRED) && a->vals[k].n == 0)
			snprintf(err, sizeof err, "%s %s is required", c->opts[k]->name,
				 iq_opt_metavar(c->opts[k]) ? iq_opt_metavar(c->opts[k]) : "");
	if (!err[0] && c->arg_choices)
		for (int i = 0; i < a->npos; i++)
			if (!iq_choice_ok(c->arg_choices, a->pos[i])) {
				char words[256];
				choices_words(c->arg_choices, words, sizeof words);
				snprintf(err, sizeof err, "takes %s, not '%s'", words, a->pos[i]);
				break;
			}
	if (err[0]) {
		iq_usage_error(c, "%s", err);
		iq_args_release(a);
		return IQ_EXIT_USAGE;
	}
	return 0;
}

void iq_args_release(struct iq_args *a)
{
	size_t n = a->cmd ? iq_opt_count(a->cmd) : 0;
	for (size_t k = 0; a->vals && k < n; k++)
		free(a->vals[k].v);
	free(a->vals);
	free(a->pos);
	a->vals = NULL;
	a->pos = NULL;
}

static const struct iq_argval *value_of(const struct iq_args *a, const char *name)
{
	size_t k;
	if (!find_opt(a->cmd, name, strlen(name), &k)) {
		/* a command asking for an option its row does not list */
		fprintf(stderr, "inquest: internal error: '%s' has no option %s\n", a->cmd->name, name);
		abort();
	}
	return &a->vals[k];
}

const char *iq_arg(const struct iq_args *a, const char *name)
{
	const struct iq_argval *v = value_of(a, name);
	return v->n ? v->v[v->n - 1] : NULL;
}

int iq_arg_has(const struct iq_args *a, const char *name)
{
	return value_of(a, name)->n > 0;
}

const char *const *iq_arg_all(const struct iq_args *a, const char *name, int *n)
{
	const struct iq_argval *v = value_of(a, name);
	*n = v->n;
	return v->v;
}

/* ---- help ---- */

/* Writes text to f wrapped at width, every line indented by indent and the
 * first one starting at column col (already written). */
void iq_wrap(FILE *f, const char *text, int col, int indent, int width)
{
	const char *p = text;
	while (*p) {
		if (*p == '\n') {
			/* a paragraph break in the help text: a blank line */
			fprintf(f, "\n\n%*s", indent, "");
			p++;
			col = indent;
			continue;
		}
		size_t w = strcspn(p, " \n");
		if (col > indent && col + 1 + (int)w > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, w, f);
		col += (int)w;
		p += w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

/* One option as the synopsis shows it: "[--lang en|tr]", "--db FILE",
 * "[--rules PATH]...". */
void iq_opt_synopsis(const struct iq_opt *o, char *out, size_t cap)
{
	const char *mv = iq_opt_metavar(o);
	int req = (o->flags & IQ_OPT_REQUIRED) != 0;
	snprintf(out, cap, "%s%s%s%s%s%s", req ? "" : "[", o->name, mv ? " " : "", mv ? mv : "",
		 req ? "" : "]", o->flags & IQ_OPT_MANY ? "..." : "");
}

void iq_synopsis(const struct iq_command *c, FILE *f, int lead, int width)
{
	int indent = lead + (int)strlen("inquest ") + (int)strlen(c->name) + 1;
	struct iq_buf b;
	iq_buf_init(&b);
	iq_buf_printf(&b, "inquest %s", c->name);
	/* positionals first, then the options: as the README shows them */
	if (c->args && *c->args)
		iq_buf_printf(&b, " %s", c->args);
	for (size_t i = 0; c->opts && c->opts[i]; i++) {
		char one[256];
		iq_opt_synopsis(c->opts[i], one, sizeof one);
		/* a non-breaking unit for the wrapper: spaces inside become \1 */
		for (char *q = one; *q; q++)
			if (*q == ' ')
				*q = '\1';
		iq_buf_printf(&b, " %s", one);
	}
	/* the wrapper breaks only between units */
	char *text = b.p;
	int col = lead;
	const char *p = text;
	while (*p) {
		size_t w = strcspn(p, " ");
		if (col > indent && col + 1 + (int)w > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (p != text) {
			fputc(' ', f);
			col++;
		}
		for (size_t k = 0; k < w; k++)
			fputc(p[k] == '\1' ? ' ' : p[k], f);
		col += (int)w;
		p += w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
	iq_buf_release(&b);
}

/* "-o, --out DIR", "--lang en|tr", "-q, --quiet". */
void iq_opt_label(const struct iq_opt *o, char *out, size_t cap)
{
	const char *mv = iq_opt_metavar(o);
	/* the short spelling first, as getopt's help has it */
	const char *a = o->alias, *b = o->name;
	if (a && strncmp(a, "--", 2) == 0) {
		a = o->name;
		b = o->alias;
	}
	snprintf(out, cap, "%s%s%s%s%s", a ? a : "", a ? ", " : "", b, mv ? " " : "", mv ? mv : "");
}

void iq_help_command(const struct iq_command *c, FILE *f)
{
	fprintf(f, "usage: ");
	iq_synopsis(c, f, 7, 80);
	fputc('\n', f);
	iq_wrap(f, c->help, 0, 0, 79);
	if (c->run == NULL) {
		/* a group of verbs: their summaries */
		fprintf(f, "\ncommands:\n");
		iq_help_verbs(c, f);
		return;
	}
	fprintf(f, "\noptions:\n");
	for (size_t i = 0; c->opts && c->opts[i]; i++) {
		char label[128];
		iq_opt_label(c->opts[i], label, sizeof label);
		fprintf(f, "  %s", label);
		int col = 2 + (int)strlen(label);
		if (col >= 24) {
			fprintf(f, "\n%*s", 24, "");
		} else {
			fprintf(f, "%*s", 24 - col, "");
		}
		iq_wrap(f, c->opts[i]->help, 24, 24, 79);
	}
	fprintf(f, "  -h, --help            This help.\n");
}
