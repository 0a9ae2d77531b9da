#!/bin/sh
# completion.sh BIN: `inquest completion bash|zsh` offers what the parser
# takes (both are made from the command table): every command, every verb
# of rules, every option of every command, the choices of an option; and
# `--version` says the commit, the packs and the libraries.
bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
. tests/e2e/lib.sh
"$bin" completion bash > "$tmp/c.bash" || ko "completion bash: exit $?"
bash -n "$tmp/c.bash" && ok || ko "the bash script does not parse"
# comp WORD...: what bash offers for the last word
comp() {
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _inquest; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$tmp/c.bash" "$@" | sort | tr '\n' ' '
}
want() { [ "$1" = "$2" ] && ok || ko "completing '$3': got '$1', expected '$2'"; }
want "$(comp inquest ana)" "analyze " "inquest ana"
want "$(comp inquest rules '')" "--help explain lint list match test " "inquest rules "
want "$(comp inquest analyze --lang '')" "en tr " "analyze --lang "
want "$(comp inquest report --format '')" "html json md text " "report --format "
want "$(comp inquest timeline --window '')" "incident " "timeline --window "
want "$(comp inquest completion '')" "bash zsh " "completion "
want "$(comp inquest rules match --p)" "--pack " "rules match --p"
want "$(comp inquest query --db x.db --format c)" "csv " "query --db x.db --format c"
mkdir -p "$tmp/w/outdir" && : > "$tmp/w/outfile"
want "$(cd "$tmp/w" && comp inquest analyze -o out)" "outdir " "analyze -o out (folders only)"
want "$(cd "$tmp/w" && comp inquest analyze out)" "outdir outfile " "analyze out (files)"
# every command help lists, and every option of it
"$bin" help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  *\([a-z]*\( [a-z]*\)\{0,1\}\)  .*/\1/p' | sed 's/ *$//' > "$tmp/cmds"
top=$(grep -v ' ' "$tmp/cmds" | sort | tr '\n' ' ')
want "$(comp inquest '' | sed 's/--help //; s/--version //')" "$top" "inquest "
"$bin" completion zsh > "$tmp/_inquest" || ko "completion zsh: exit $?"
have_zsh=$(command -v zsh)
[ -n "$have_zsh" ] || echo "  note: zsh is not installed: the zsh script is checked by its text only"
# zspec CMD...: the specs the zsh script gives _arguments for a command line
zspec() {
  zsh -f -c '_arguments() { print -rl -- "$@" }; _describe() { print -rl -- ${(P)${@[-1]}} }; compadd() { }
    script=$1; shift; words=("$@"); CURRENT=$#; . "$script"' _ "$tmp/_inquest" "$@" 2>&1
}
while read -r c; do
  [ "$c" = rules ] && continue
  # shellcheck disable=SC2086
  opts=$("$bin" $c --help | sed -n '/^options:/,$p' | grep -o -- '^  \(-[a-z], \)\{0,1\}--[a-z-]*' | grep -o -- '--[a-z-]*$')
  # shellcheck disable=SC2086
  got=$(comp inquest $c -)
  # shellcheck disable=SC2086
  [ -n "$have_zsh" ] && z=$(zspec inquest $c '') || z=$(cat "$tmp/_inquest")
  for o in $opts; do
    case " $got " in *" $o "*) ok ;; *) ko "bash does not complete '$c $o'" ;; esac
    case $z in *"$o["*|*"$o}"*|*"$o,"*) ok ;; *) ko "zsh does not complete '$c $o'" ;; esac
  done
done < "$tmp/cmds"
if [ -n "$have_zsh" ]; then
  zsh -n "$tmp/_inquest" && ok || ko "the zsh script does not parse"
  z=$(zspec inquest rules '')
  case $z in *"match:grep with the packs"*) ok ;; *) ko "zsh does not offer the rules verbs: $z" ;; esac
  z=$(zspec inquest an)
  case $z in *"analyze:ingest, detect and report in one go"*) ok ;; *) ko "zsh does not offer the commands: $z" ;; esac
  z=$(zspec inquest analyze --lang '')
  case $z in *"--lang[The language of the postmortem]:en|tr:(en tr)"*) ok ;; *) ko "zsh: --lang choices: $z" ;; esac
fi

# --- --version ---------------------------------------------------------------
"$bin" --version > "$tmp/v" 2>&1 || ko "--version: exit $?"
head -1 "$tmp/v" | grep -Eq '^inquest [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{7,}(-dirty)?|[^ ]+-g[0-9a-f]+(-dirty)?|unknown: not built from a git checkout)\)$' && ok \
  || ko "--version line 1: $(head -1 "$tmp/v")"
for f in rules/*.json; do
  id=$(sed -n 's/^  "id": "\(.*\)",$/\1/p' "$f" | head -1)
  ver=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$f" | head -1)
  [ -z "$id" ] && continue
  sed -n 2p "$tmp/v" | grep -q "[ ,]$id $ver\(,\|\$\)" && ok || ko "--version does not name pack $id $ver: $(sed -n 2p "$tmp/v")"
done
sed -n 3p "$tmp/v" | grep -Eq '^SQLite [0-9.]+, PCRE2 [0-9.]+ [0-9-]+, libarchive [0-9.]+.*, jansson [0-9.]+, libyaml [0-9.]+, ISA-L [0-9.]+$' && ok \
  || ko "--version line 3: $(sed -n 3p "$tmp/v")"
# outside a git checkout (a tarball) the commit is said to be unknown
GIT_DIR="$tmp/no-git" make -s O="$tmp/bi" "$tmp/bi/build_info.c" >/dev/null 2>&1
grep -q 'iq_build_commit\[\] = "";' "$tmp/bi/build_info.c" 2>/dev/null && ok || ko "build_info.c outside git: $(cat "$tmp/bi/build_info.c" 2>&1)"
echo "completion: $pass passed, $fail failed"
[ $fail -eq 0 ]
