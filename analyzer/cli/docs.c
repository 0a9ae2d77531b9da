/* docs.c: the command reference of the man page (roff) and of the README
 * (Markdown), made from the command table: `inquest help --man` and
 * `inquest help --markdown` print them as regions between "BEGIN
 * generated: NAME" and "END generated" lines, which tests/tools/docs.sh
 * splices into docs/inquest.1 and README.md (make docs) or compares with
 * them (make test). */
#include <string.h>

#include "cli.h"

/* ---- roff ---- */

/* Text for roff: backslashes and dashes escaped, and a line that would
 * start with a control character guarded. */
static void roff_text(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\')
			fputs("\\e", f);
		else if (c == '-')
			fputs("\\-", f);
		else
			fputc(c, f);
	}
}

static void roff_str(FILE *f, const char *s)
{
	roff_text(f, s, strlen(s));
}

/* Prose from the table: one roff line a sentence-ish chunk is not needed,
 * groff fills; '\n' (a paragraph break) becomes .PP, or .IP inside an
 * option's paragraph. */
static void roff_prose(FILE *f, const char *text, const char *para)
{
	const char *p = text;
	for (;;) {
		size_t n = strcspn(p, "\n");
		if (n) {
			if (*p == '.' || *p == '\'')
				fputs("\\&", f);
			roff_text(f, p, n);
			fputc('\n', f);
		}
		if (!p[n])
			break;
		fprintf(f, "%s\n", para);
		p += n + 1;
	}
}

/* An option in the synopsis, as the man page has always shown them:
 * .RB [ \-\-lang " en|tr]", or .RB [ \-o then .IR DIR ]. */
static void roff_syn_opt(FILE *f, const struct iq_opt *o)
{
	int req = (o->flags & IQ_OPT_REQUIRED) != 0;
	const char *many = o->flags & IQ_OPT_MANY ? "..." : "";
	if (!iq_opt_metavar(o)) {
		fputs(req ? ".B " : ".RB [ ", f);
		roff_str(f, o->name);
		fprintf(f, "%s%s\n", req ? "" : " ]", many);
	} else if (!o->arg) {
		/* choices are literal words */
		fputs(req ? ".B " : ".RB [ ", f);
		roff_str(f, o->name);
		fputs(" \" ", f);
		roff_str(f, o->choices);
		fprintf(f, "%s\"%s\n", req ? "" : "]", many);
	} else {
		fputs(req ? ".B " : ".RB [ ", f);
		roff_str(f, o->name);
		fputs(req ? "\n.I " : "\n.IR ", f);
		roff_str(f, o->arg);
		fprintf(f, "%s%s\n", req ? "" : " ]", many);
	}
}

static void roff_synopsis(FILE *f, const struct iq_command *cmds, size_t n)
{
	fprintf(f, ".\\\" BEGIN generated: synopsis\n.SH SYNOPSIS\n");
	for (size_t i = 0; i < n; i++) {
		const struct iq_command *c = &cmds[i];
		if (!c->run)
			continue;
		fputs(".B inquest ", f);
		roff_str(f, c->name);
		fputc('\n', f);
		if (c->args && *c->args) {
			fputs(".I \"", f);
			roff_str(f, c->args);
			fputs("\"\n", f);
		}
		for (size_t k = 0; c->opts[k]; k++)
			roff_syn_opt(f, c->opts[k]);
		fputs(".br\n", f);
	}
	fputs(".B inquest \\-\\-version\n.\\\" END generated\n", f);
}

static void roff_opt_tag(FILE *f, const struct iq_opt *o)
{
	const char *mv = iq_opt_metavar(o);
	char label[128];
	iq_opt_label(o, label, sizeof label);
	/* bold option names, the value's name in italics (choices bold) */
	fputs(".TP\n.B \"", f);
	const char *sp = mv ? strrchr(label, ' ') : NULL;
	roff_text(f, label, sp ? (size_t)(sp - label) : strlen(label));
	fputs("\"", f);
	if (mv) {
		fputs(o->arg ? " \\fI" : " \\fB", f);
		roff_str(f, mv);
		fputs("\\fR", f);
	}
	fputc('\n', f);
}

static void roff_commands(FILE *f, const struct iq_command *cmds, size_t n)
{
	fprintf(f, ".\\\" BEGIN generated: commands\n.SH COMMANDS\n");
	for (size_t i = 0; i < n; i++) {
		const struct iq_command *c = &cmds[i];
		fputs(".SS \"inquest ", f);
		roff_str(f, c->name);
		if (c->args && *c->args) {
			fputc(' ', f);
			roff_str(f, c->args);
		}
		fputs("\"\n", f);
		roff_prose(f, c->help, ".PP");
		for (size_t k = 0; c->opts[k]; k++) {
			roff_opt_tag(f, c->opts[k]);
			roff_prose(f, c->opts[k]->help, ".IP");
		}
	}
	fputs(".\\\" END generated\n", f);
}

static void roff_exits(FILE *f)
{
	size_t n;
	const struct iq_exit_row *e = iq_exit_rows(&n);
	fprintf(f, ".\\\" BEGIN generated: exit\n.SH EXIT STATUS\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, ".TP\n.B %d\n", e[i].code);
		roff_prose(f, e[i].what, ".IP");
	}
	fputs(".\\\" END generated\n", f);
}

void iq_docs_man(FILE *f)
{
	size_t n;
	const struct iq_command *cmds = iq_commands(&n);
	roff_synopsis(f, cmds, n);
	roff_commands(f, cmds, n);
	roff_exits(f);
}

/* ---- Markdown ---- */

/* A table cell: pipes escaped (GitHub's tables split on them, even in
 * code), paragraphs joined by <br>; in prose (not code) the characters
 * Markdown would take for markup escaped too. */
static void md_cell(FILE *f, const char *s, int code)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n')
			fputs("<br>", f);
		else if (!code && strchr("<>*_", *s))
			fprintf(f, "\\%c", *s);
		else
			fputc(*s, f);
	}
}

/* Prose: '\n' is a paragraph break. Words inside angle brackets are
 * shown as code, so that a renderer keeps them. */
static void md_prose(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			fputs("\n\n", f);
		else if (*s == '<' || *s == '>' || *s == '*' || *s == '_')
			fprintf(f, "\\%c", *s);
		else
			fputc(*s, f);
	}
	fputc('\n', f);
}

void iq_docs_markdown(FILE *f)
{
	size_t n, ne;
	const struct iq_command *cmds = iq_commands(&n);
	const struct iq_exit_row *e = iq_exit_rows(&ne);
	fputs("<!-- BEGIN generated: commands -->\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct iq_command *c = &cmds[i];
		fprintf(f, "### %s\n\n```\n", c->name);
		iq_synopsis(c, f, 0, 100);
		fputs("```\n\n", f);
		md_prose(f, c->help);
		if (c->opts[0]) {
			fputs("\n| option | |\n| --- | --- |\n", f);
			for (size_t k = 0; c->opts[k]; k++) {
				char label[128];
				iq_opt_label(c->opts[k], label, sizeof label);
				fputs("| `", f);
				md_cell(f, label, 1);
				fputs("` | ", f);
				md_cell(f, c->opts[k]->help, 0);
				fputs(" |\n", f);
			}
		}
		fputc('\n', f);
	}
	fputs("<!-- END generated -->\n<!-- BEGIN generated: exit -->\n| code | meaning |\n| --- | --- |\n",
	      f);
	for (size_t i = 0; i < ne; i++) {
		fprintf(f, "| %d | ", e[i].code);
		md_cell(f, e[i].what, 0);
		fputs(" |\n", f);
	}
	fputs("<!-- END generated -->\n", f);
}
