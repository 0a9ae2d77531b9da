#!/bin/sh
# errors.sh BIN: bad inputs give a one-line error naming the input and the
# documented exit status; nothing crashes.
bin=$1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect STATUS PATTERN CMD...: the command exits STATUS and its stderr
# matches the grep pattern.
expect() {
  want=$1 pat=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: $*: exit $rc, expected $want"; sed 's/^/  /' "$tmp/err"; fail=$((fail+1))
  elif [ -n "$pat" ] && ! grep -q -- "$pat" "$tmp/err"; then
    echo "FAIL: $*: stderr lacks '$pat':"; sed 's/^/  /' "$tmp/err"; fail=$((fail+1))
  else
    pass=$((pass+1))
  fi
}

: > "$tmp/empty.log"
head -c 4096 /dev/urandom > "$tmp/noise.bin"
printf '\0\0\0\0binary\0\0\0\0\0\0\0\0\0\0' > "$tmp/nul.bin"
printf 'not really gzip' > "$tmp/fake.tar.gz"

expect 3 "cannot open '$tmp/missing.tgz'" "$bin" analyze "$tmp/missing.tgz" -o "$tmp/o1"
expect 3 "'$tmp/empty.log': nothing to analyze: empty file" "$bin" analyze "$tmp/empty.log" -o "$tmp/o2"
expect 3 "'$tmp/nul.bin': nothing to analyze: binary" "$bin" analyze "$tmp/nul.bin" -o "$tmp/o3"
expect 3 "'$tmp/missing.tgz'" "$bin" ingest "$tmp/missing.tgz" --db "$tmp/x.db"
expect 2 "usage: inquest analyze" "$bin" analyze
expect 2 "unknown command 'frobnicate'" "$bin" frobnicate
expect 2 "no pattern has a verdict 'sometimes'" "$bin" analyze "$tmp/empty.log" --fail-on sometimes
expect 3 "cannot open database\|not an inquest database" "$bin" query --db "$tmp/none.db" "SELECT 1"
# a text file that only claims to be an archive is read as text
expect 0 "" "$bin" analyze "$tmp/fake.tar.gz" -o "$tmp/o4" --quiet
[ -f "$tmp/o4/postmortem.md" ] || { echo "FAIL: no postmortem for fake.tar.gz"; fail=$((fail+1)); }
# random bytes: an error or a run, never a crash (status < 128)
"$bin" analyze "$tmp/noise.bin" -o "$tmp/o5" --quiet >/dev/null 2>&1
rc=$?
if [ $rc -ge 4 ] && [ $rc -ne 70 ] || [ $rc -ge 128 ]; then echo "FAIL: noise.bin: exit $rc"; fail=$((fail+1)); else pass=$((pass+1)); fi
# query refuses to write
"$bin" analyze "$tmp/fake.tar.gz" -o "$tmp/o6" --quiet >/dev/null 2>&1
expect 2 "not authorized" "$bin" query --db "$tmp/o6/inquest.db" "DELETE FROM records"
expect 2 "not authorized" "$bin" query --db "$tmp/o6/inquest.db" "ATTACH DATABASE '$tmp/evil.db' AS evil"
# a new database is built beside its name and renamed once complete;
# ingesting into an existing one adds to it in place (and no duplicates)
check() { if eval "$1"; then pass=$((pass+1)); else echo "FAIL: $2"; fail=$((fail+1)); fi; }
expect 0 "" "$bin" ingest "$tmp/fake.tar.gz" --db "$tmp/n.db" --quiet
check '[ -f "$tmp/n.db" ] && [ ! -e "$tmp/n.db.tmp" ] && [ ! -e "$tmp/n.db-wal" ]' \
  "ingest into a new database left n.db.tmp or a WAL behind"
n1=$("$bin" query --db "$tmp/n.db" --format csv "SELECT count(*) FROM records" | tail -1)
expect 0 "" "$bin" ingest "$tmp/fake.tar.gz" --db "$tmp/n.db" --quiet
n2=$("$bin" query --db "$tmp/n.db" --format csv "SELECT count(*) FROM records" | tail -1)
check '[ "$n1" = 1 ] && [ "$n2" = 1 ]' "records after ingest and re-ingest: $n1, $n2 (expected 1, 1)"
check '[ ! -e "$tmp/n.db.tmp" ]' "re-ingest created n.db.tmp"
echo "errors: $pass passed, $fail failed"
[ $fail -eq 0 ]
