#!/bin/sh
# run.sh BIN UNIT...: every test `make test` runs: the cmocka programs
# UNIT..., the packs' own test cases (BIN rules test) and the end-to-end
# suites (tests/e2e/run.sh). Each suite says "NAME: N passed, N failed" in
# one line (a failing one shows its output); the last line sums them all:
# "N passed, N failed". Exit 1 when anything failed.
bin=$1
shift
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
start=$(date +%s)
status=0
: > "$log/lines"
# say LINE: a suite's count line, printed and kept for the sum
say() { echo "$1"; echo "$1" >> "$log/lines"; }

for t in "$@"; do
  name=${t##*/}
  "./$t" > "$log/out" 2>&1
  rc=$?
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\.$/\1/p' "$log/out")
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:$/\1/p' "$log/out")
  sk=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s), listed below:$/\1/p' "$log/out")
  if [ $rc -ne 0 ] || [ -z "$p" ]; then
    sed 's/^/  /' "$log/out"
    # a program that died before its summary counts as one failure
    [ -z "$f" ] && f=1
    status=1
  fi
  why=""
  if [ -n "$sk" ]; then
    # cmocka prints the reason of a skip as a plain line
    why=$(grep -v '^\[\|^ *[0-9]* SKIPPED TEST\|^$' "$log/out" | head -1 | sed 's/: skipped$//')
    why=" ($sk skipped${why:+: $why})"
  fi
  say "unit $name: ${p:-0} passed, ${f:-0} failed$why"
done

"$bin" rules test > "$log/out" 2>&1 || status=1
line=$(tail -n 1 "$log/out")
case $line in
  "rules: "*" passed, "*" failed") ;;
  *) line="rules: 0 passed, 1 failed" ;;
esac
case $line in *", 0 failed") ;; *) grep -B2 -A6 FAIL "$log/out" | head -60; status=1 ;; esac
say "$line"

# COLLECT (the Makefile's $(O)/tests/collect): the suites run the binary
# through it, and every findings.json they make is checked at the end
TZ=UTC LC_ALL=C sh tests/e2e/run.sh "$bin" $COLLECT > "$log/e2e" 2>&1
e2e=$?
cat "$log/e2e"
grep -E '^[a-z][a-z0-9 _-]*: [0-9]+ passed, [0-9]+ failed' "$log/e2e" >> "$log/lines"
[ $e2e -eq 0 ] || status=1
# the suites print their count lines, FAIL lines and indented detail, and
# nothing else: any other line (a shell's "Killed", a program's stray
# warning) is a failure of its own
grep -Ev '^[a-z][a-z0-9 _-]*: [0-9]+ passed, [0-9]+ failed|^FAIL: |^  ' "$log/e2e" > "$log/stray"
n=$(wc -l < "$log/stray")
if [ "$n" -gt 0 ]; then
  echo "lines the suites should not print:"
  sed 's/^/  | /' "$log/stray"
fi
say "stray lines: $((n == 0)) passed, $n failed"

total=$(sed -n 's/^[a-z][a-z0-9 ._-]*: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$log/lines" |
  awk '{ p += $1; f += $2 } END { printf "%d %d", p, f }')
passed=${total% *}
failed=${total#* }
# a suite that failed without counting a failure still fails the run
if [ $status -ne 0 ] && [ "$failed" -eq 0 ]; then
  echo "a suite exited with an error without counting a failure"
  failed=1
fi
echo "make test: $(($(date +%s) - start)) s, $(wc -l < "$log/lines") suites"
echo "$passed passed, $failed failed"
[ $status -eq 0 ] && [ "$failed" -eq 0 ]
