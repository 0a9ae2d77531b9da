/* cmd_completion.c: `inquest completion bash|zsh`: a shell completion
 * script made from the command table, so that it offers exactly the
 * commands, verbs, options and option values the parser takes. */
#include <string.h>

#include "cli.h"

/* The words of a '|'-separated list, separated by spaces. */
static void words(FILE *f, const char *choices)
{
	for (const char *p = choices; *p; p++)
		fputc(*p == '|' ? ' ' : *p, f);
}

/* Whether c is a verb of a group ("rules match"). */
static int is_verb(const struct iq_command *c)
{
	return strchr(c->name, ' ') != NULL;
}

/* The names of the top-level commands, or the verbs of group g. */
static void names(FILE *f, const struct iq_command *cmds, size_t n, const struct iq_command *g)
{
	size_t gl = g ? strlen(g->name) : 0;
	int first = 1;
	for (size_t i = 0; i < n; i++) {
		const char *nm = cmds[i].name;
		if (g ? strncmp(nm, g->name, gl) == 0 && nm[gl] == ' ' : !is_verb(&cmds[i])) {
			fprintf(f, "%s%s", first ? "" : " ", g ? nm + gl + 1 : nm);
			first = 0;
		}
	}
}

/* How a shell completes an option's value: choices (between pre and
 * post), a folder, a file, or nothing it can know. */
struct value_syntax {
	const char *pre, *post, *dir, *file, *none;
};

static const struct value_syntax bash_values = {
	"COMPREPLY=($(compgen -W '", "' -- \"$cur\")); return ;;\n",
	"COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n",
	"COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", "return ;;\n"};
static const struct value_syntax zsh_values = {"(", ")", "_files -/", "_files", " "};

static void value_action(FILE *f, const struct value_syntax *vs, const struct iq_opt *o)
{
	if (o->choices) {
		fputs(vs->pre, f);
		words(f, o->choices);
		fputs(vs->post, f);
	} else {
		fputs(o->flags & IQ_OPT_DIR ? vs->dir : o->flags & IQ_OPT_FILE ? vs->file : vs->none, f);
	}
}

/* ---- bash ---- */

static void bash_command(FILE *f, const struct iq_command *c, const struct iq_command *cmds,
			 size_t n)
{
	fprintf(f, "    '%s')\n        opts='", c->name);
	for (size_t k = 0; c->opts[k]; k++)
		fprintf(f, "%s%s%s ", c->opts[k]->name, c->opts[k]->alias ? " " : "",
			c->opts[k]->alias ? c->opts[k]->alias : "");
	fputs("-h --help'\n        case $prev in\n", f);
	for (size_t k = 0; c->opts[k]; k++) {
		const struct iq_opt *o = c->opts[k];
		if (!iq_opt_metavar(o))
			continue;
		fprintf(f, "        %s%s%s) ", o->name, o->alias ? "|" : "", o->alias ? o->alias : "");
		value_action(f, &bash_values, o);
	}
	fputs("        esac\n        args='", f);
	if (c->complete == IQ_ARGS_COMMANDS)
		names(f, cmds, n, NULL);
	else if (c->complete == IQ_ARGS_CHOICES && c->arg_choices)
		words(f, c->arg_choices);
	fprintf(f, "'; files=%d ;;\n", c->complete == IQ_ARGS_FILES);
}

static void bash(FILE *f, const struct iq_command *cmds, size_t n)
{
	fputs("# bash completion for inquest: source <(inquest completion bash)\n"
	      "_inquest() {\n"
	      "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "    local cmd=${COMP_WORDS[1]} opts= args= files=0 at=2\n"
	      "    COMPREPLY=()\n"
	      "    if (( COMP_CWORD == 1 )); then\n"
	      "        COMPREPLY=($(compgen -W '", f);
	names(f, cmds, n, NULL);
	fputs(" --help --version' -- \"$cur\"))\n        return\n    fi\n    case $cmd in\n", f);
	for (size_t i = 0; i < n; i++) {
		if (cmds[i].run)
			continue;
		fprintf(f, "    %s)\n        if (( COMP_CWORD == 2 )); then\n"
			   "            COMPREPLY=($(compgen -W '", cmds[i].name);
		names(f, cmds, n, &cmds[i]);
		fputs(" --help' -- \"$cur\"))\n            return\n        fi\n"
		      "        cmd=\"$cmd ${COMP_WORDS[2]}\" at=3 ;;\n", f);
	}
	fputs("    esac\n    case $cmd in\n", f);
	for (size_t i = 0; i < n; i++)
		if (cmds[i].run)
			bash_command(f, &cmds[i], cmds, n);
	fputs("    *) return ;;\n    esac\n"
	      "    if [[ $cur == -* ]]; then\n"
	      "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "    elif [[ -n $args ]]; then\n"
	      "        COMPREPLY=($(compgen -W \"$args\" -- \"$cur\"))\n"
	      "    elif (( files )); then\n"
	      "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
	      "    fi\n"
	      "}\n"
	      "complete -o filenames -o bashdefault -F _inquest inquest\n", f);
}

/* ---- zsh ---- */

/* Text in a single-quoted zsh word: ' closed, escaped and reopened;
 * with brackets, the [explanation] of an _arguments spec, where ] and :
 * are escaped too. */
static void zsh_quoted(FILE *f, const char *s, size_t n, int brackets)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		if (s[i] == '\'')
			fputs("'\\''", f);
		else if (brackets && strchr("[]:\\", s[i]))
			fprintf(f, "\\%c", s[i]);
		else
			fputc(s[i], f);
	}
}

/* The first phrase of a help text, for a zsh description: up to the end
 * of its first sentence or clause, at most about 60 characters, cut at a
 * word. */
static void zsh_desc(FILE *f, const char *help)
{
	size_t n = 0, lastsp = 0;
	for (; help[n] && help[n] != '\n'; n++) {
		if (strchr(".;:", help[n]) && (help[n + 1] == ' ' || help[n + 1] == '\0'))
			break;
		if (help[n] == ' ' && help[n + 1] == '(')
			break;
		if (help[n] == ' ')
			lastsp = n;
		if (n >= 60 && lastsp) {
			n = lastsp;
			break;
		}
	}
	zsh_quoted(f, help, n, 1);
}

static void zsh_describe(FILE *f, const char *var, const struct iq_command *cmds, size_t n,
			 const struct iq_command *g)
{
	size_t gl = g ? strlen(g->name) : 0;
	fprintf(f, "    local -a %s\n    %s=(\n", var, var);
	for (size_t i = 0; i < n; i++) {
		const char *nm = cmds[i].name;
		if (g ? strncmp(nm, g->name, gl) == 0 && nm[gl] == ' ' : !is_verb(&cmds[i])) {
			fprintf(f, "        '%s:", g ? nm + gl + 1 : nm);
			zsh_quoted(f, cmds[i].summary, strlen(cmds[i].summary), 0);
			fputs("'\n", f);
		}
	}
	fputs("    )\n", f);
}

static void zsh_command(FILE *f, const struct iq_command *c, const struct iq_command *cmds,
			size_t n)
{
	fprintf(f, "    '%s')\n        _arguments", c->name);
	for (size_t k = 0; c->opts[k]; k++) {
		const struct iq_opt *o = c->opts[k];
		const char *mv = iq_opt_metavar(o);
		fputs(" \\\n            ", f);
		/* a repeatable one starts with *, one with two spellings
		 * excludes the other; both inside quotes, or zsh globs */
		if (o->flags & IQ_OPT_MANY)
			fputs("'*'", f);
		else if (o->alias)
			fprintf(f, "'(%s %s)'", o->name, o->alias);
		if (o->alias)
			fprintf(f, "{%s,%s}'", o->name, o->alias);
		else
			fprintf(f, "'%s", o->name);
		fputc('[', f);
		zsh_desc(f, o->help);
		fputc(']', f);
		if (mv) {
			fputs(":", f);
			zsh_quoted(f, mv, strlen(mv), 0);
			fputc(':', f);
			value_action(f, &zsh_values, o);
		}
		fputc('\'', f);
	}
	fputs(" \\\n            '(- *)'{-h,--help}'[this help]'", f);
	if (c->max_args != 0) {
		fputs(" \\\n            '*:", f);
		zsh_quoted(f, c->args, strlen(c->args), 0);
		fputc(':', f);
		if (c->complete == IQ_ARGS_FILES) {
			fputs("_files", f);
		} else if (c->complete == IQ_ARGS_COMMANDS) {
			fputc('(', f);
			names(f, cmds, n, NULL);
			fputc(')', f);
		} else if (c->complete == IQ_ARGS_CHOICES && c->arg_choices) {
			fputc('(', f);
			words(f, c->arg_choices);
			fputc(')', f);
		} else {
			fputs(" ", f);
		}
		fputc('\'', f);
	}
	fputs(" ;;\n", f);
}

static void zsh(FILE *f, const struct iq_command *cmds, size_t n)
{
	fputs("#compdef inquest\n"
	      "# zsh completion for inquest: inquest completion zsh > ~/.zfunc/_inquest\n"
	      "# (a folder of $fpath), then compinit.\n"
	      "_inquest() {\n", f);
	zsh_describe(f, "cmds", cmds, n, NULL);
	fputs("    if (( CURRENT == 2 )); then\n"
	      "        _describe -t commands 'inquest command' cmds\n"
	      "        compadd -- --help --version\n"
	      "        return\n"
	      "    fi\n"
	      "    local cmd=$words[2]\n"
	      "    case $cmd in\n", f);
	for (size_t i = 0; i < n; i++) {
		if (cmds[i].run)
			continue;
		fprintf(f, "    %s)\n", cmds[i].name);
		zsh_describe(f, "verbs", cmds, n, &cmds[i]);
		fputs("        if (( CURRENT == 3 )); then\n"
		      "            _describe -t commands 'verb' verbs\n"
		      "            return\n"
		      "        fi\n"
		      "        cmd=\"$cmd $words[3]\"\n"
		      "        shift words ;;\n", f);
	}
	fputs("    esac\n"
	      "    shift words\n"
	      "    (( CURRENT -= ${#${(z)cmd}} ))\n"
	      "    case $cmd in\n", f);
	for (size_t i = 0; i < n; i++)
		if (cmds[i].run)
			zsh_command(f, &cmds[i], cmds, n);
	fputs("    esac\n"
	      "}\n"
	      "_inquest \"$@\"\n", f);
}

int iq_cmd_completion(const struct iq_args *a)
{
	size_t n;
	const struct iq_command *cmds = iq_commands(&n);
	if (strcmp(a->pos[0], "bash") == 0)
		bash(stdout, cmds, n);
	else
		zsh(stdout, cmds, n);
	return IQ_EXIT_OK;
}
