#!/bin/sh
# docs.sh BIN: help, the man page and the README agree, because all three
# are made from the command table: docs/inquest.1 and README.md hold what
# `help --man` / `help --markdown` make of it (tests/tools/docs.sh --check),
# the man page renders without a groff warning, and every command answers
# -h and --help (exit 0) with the help `inquest help COMMAND` gives.
bin=$1
. tests/e2e/lib.sh
page=docs/inquest.1
out=$(groff -ww -man -Tutf8 -z "$page" 2>&1)
[ -z "$out" ] && ok || ko "groff warns: $out"
if sh tests/tools/docs.sh --check "$bin" > "$tmp/diff" 2>&1; then ok; else ko "the docs differ from the command table (run make docs):"; head -40 "$tmp/diff"; fi
# the commands help lists, verbs of groups included ("rules match")
"$bin" help > "$tmp/help" 2>&1 || ko "help: exit $?"
sed -n '/^commands:/,/^$/p' "$tmp/help" | sed -n 's/^  *\([a-z]*\( [a-z]*\)\{0,1\}\)  .*/\1/p' | sed 's/ *$//' > "$tmp/cmds"
[ "$(wc -l < "$tmp/cmds")" -ge 15 ] && ok || ko "help lists $(wc -l < "$tmp/cmds") commands"
text=$(groff -man -Tascii "$page" 2>/dev/null | sed 's/.\x08//g')
while read -r c; do
  # shellcheck disable=SC2086
  "$bin" $c --help > "$tmp/h1" 2>"$tmp/e1"; r1=$?
  "$bin" $c -h > "$tmp/h2" 2>&1; r2=$?
  "$bin" help $c > "$tmp/h3" 2>&1; r3=$?
  if [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ $r3 -eq 0 ] && [ ! -s "$tmp/e1" ] && head -1 "$tmp/h1" | grep -q "^usage: inquest $c" \
     && cmp -s "$tmp/h1" "$tmp/h2" && cmp -s "$tmp/h1" "$tmp/h3"; then ok
  else ko "'$c --help' ($r1), '-h' ($r2) and 'help $c' ($r3) differ or fail"; head -3 "$tmp/h1" "$tmp/e1"; fi
  echo "$text" | grep -q "inquest $c" && ok || ko "the man page does not name 'inquest $c'"
  grep -q "^### $c\$" README.md && ok || ko "README.md has no section for '$c'"
  # every option the help lists is in the man page and the README
  for o in $(sed -n '/^options:/,$p' "$tmp/h1" | grep -o -- '^  \(-[a-z], \)\{0,1\}--[a-z-]*' | grep -o -- '--[a-z-]*$' | grep -v '^--help$'); do
    echo "$text" | grep -q -- "$o" && ok || ko "the man page does not name $c's $o"
    grep -q -- "\`[^\`]*$o" README.md && ok || ko "README.md does not name $c's $o"
  done
done < "$tmp/cmds"
echo "docs: $pass passed, $fail failed"
[ $fail -eq 0 ]
