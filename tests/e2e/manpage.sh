#!/bin/sh
# manpage.sh BIN: docs/inquest.1 renders without a groff warning, and names
# every command of `inquest help` and every option of the analyze, ingest
# and timeline usage lines.
bin=$1
pass=0
fail=0
ok() { pass=$((pass+1)); }
ko() { fail=$((fail+1)); echo "FAIL: $*"; }
page=docs/inquest.1
out=$(groff -ww -man -Tutf8 -z "$page" 2>&1)
[ -z "$out" ] && ok || ko "groff warns: $out"
text=$(groff -man -Tascii "$page" 2>/dev/null | sed 's/.\x08//g')
for c in $("$bin" help 2>&1 | sed -n 's/^  inquest \([a-z-]*\).*/\1/p' | sort -u); do
  echo "$text" | grep -q "inquest $c\|^ *$c\$\|^       $c" && ok || ko "the man page does not name command '$c'"
done
for cmd in analyze ingest timeline; do
  for o in $("$bin" help 2>&1 | grep "^  inquest $cmd " | grep -o -- '--[a-z-]*' | sort -u); do
    echo "$text" | grep -q -- "$o" && ok || ko "the man page does not name $cmd's $o"
  done
done
echo "manpage: $pass passed, $fail failed"
[ $fail -eq 0 ]
