#!/bin/sh
# parsers.sh BIN: the parser table tests. For every fixtures/lines/<format>/
# <case>.log, `inquest parse` (sniffing from content, no --format) must pick
# <format> (or the one named in <case>.format) and print exactly <case>.json;
# <case>.args holds extra arguments (--path, --mtime). GOLDEN=1 rewrites the
# .json files instead (review the diff before committing).
bin=$1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for log in fixtures/lines/*/*.log; do
  [ -e "$log" ] || continue
  dir=$(dirname "$log"); fmt=$(basename "$dir"); base=${log%.log}
  [ -f "$base.format" ] && fmt=$(cat "$base.format")
  args=""; [ -f "$base.args" ] && args=$(cat "$base.args")
  # shellcheck disable=SC2086
  "$bin" parse $args "$log" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$GOLDEN" = 1 ]; then cp "$tmp/out" "$base.json"; fi
  got=$(sed -n 's/.*: format \([^,]*\),.*/\1/p' "$tmp/err")
  if [ $rc -ne 0 ]; then
    echo "FAIL $log: exit $rc: $(cat "$tmp/err")"; fail=$((fail+1))
  elif [ "$got" != "$fmt" ]; then
    echo "FAIL $log: sniffed as '$got', expected '$fmt'"; fail=$((fail+1))
  elif grep -q 'unaccounted by the parser' "$tmp/out"; then
    echo "FAIL $log: lines unaccounted for"; fail=$((fail+1))
  elif ! diff -u "$base.json" "$tmp/out" >"$tmp/diff" 2>&1; then
    echo "FAIL $log: output differs"; cat "$tmp/diff"; fail=$((fail+1))
  else
    pass=$((pass+1))
  fi
done
echo "parsers: $pass passed, $fail failed"
[ $fail -eq 0 ]
