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

# Raw dmesg gets wall time from a boot time elsewhere in the bundle
# (detect/boottime.c, run by `inquest detect`): every dmesg record's ts_how
# and time against fixtures/boottime/expected.tsv, the basis of each boot
# time in meta, and the coverage of analyze naming what stayed relative.
if python3 fixtures/boottime/make_bundle.py "$tmp/bt.tar" &&
   "$bin" ingest "$tmp/bt.tar" --db "$tmp/bt.db" >/dev/null 2>"$tmp/err" &&
   "$bin" detect --db "$tmp/bt.db" >/dev/null 2>>"$tmp/err"; then
  "$bin" query --db "$tmp/bt.db" --format csv "SELECT f.path, r.line, r.ts_how,
      CASE WHEN r.ts IS NULL THEN '' ELSE strftime('%Y-%m-%dT%H:%M:%S', r.ts / 1000000000, 'unixepoch')
        || printf('.%06d', (r.ts / 1000) % 1000000) END AS t
      FROM records r JOIN files f ON f.id = r.file_id WHERE f.path LIKE '%/dmesg'
      ORDER BY f.path, r.line" | tail -n +2 | tr ',' '\t' >"$tmp/bt.got"
  if diff -u fixtures/boottime/expected.tsv "$tmp/bt.got"; then pass=$((pass+1)); else
    echo "FAIL boot time: dmesg times differ"; fail=$((fail+1)); fi
  n=$("$bin" query --db "$tmp/bt.db" --format csv "SELECT count(*) FROM meta WHERE key LIKE 'boot_time %'
      AND (value LIKE '%from journald kernel entries%' OR value LIKE '%from 2 kernel messages also written%'
           OR value LIKE '%from a boot time file%'
           OR value = '2024-05-01T09:37:58.650Z from /proc/uptime against the file''s mtime (to the second)')" | tail -1)
  if [ "$n" = 5 ]; then pass=$((pass+1)); else
    echo "FAIL boot time: $n of 5 boot_time meta rows with their basis"; fail=$((fail+1)); fi
  # a second detect changes nothing
  "$bin" detect --db "$tmp/bt.db" >/dev/null 2>&1
  "$bin" query --db "$tmp/bt.db" --format csv "SELECT f.path, r.line, r.ts_how,
      CASE WHEN r.ts IS NULL THEN '' ELSE strftime('%Y-%m-%dT%H:%M:%S', r.ts / 1000000000, 'unixepoch')
        || printf('.%06d', (r.ts / 1000) % 1000000) END AS t
      FROM records r JOIN files f ON f.id = r.file_id WHERE f.path LIKE '%/dmesg'
      ORDER BY f.path, r.line" | tail -n +2 | tr ',' '\t' >"$tmp/bt.again"
  if cmp -s "$tmp/bt.got" "$tmp/bt.again"; then pass=$((pass+1)); else
    echo "FAIL boot time: a second detect moved times"; fail=$((fail+1)); fi
else
  echo "FAIL boot time: ingest/detect failed: $(cat "$tmp/err")"; fail=$((fail+1))
fi
if "$bin" analyze "$tmp/bt.tar" -o "$tmp/btout" --quiet >/dev/null 2>&1 &&
   grep -q '^- 3 records are seconds since boot: no boot time was found.*(`boot_relative`)' "$tmp/btout/postmortem.md"; then
  pass=$((pass+1)); else echo "FAIL boot time: coverage does not count the 3 boot-relative records"; fail=$((fail+1)); fi

# Clock skew from the bases after the access logs (detect/skew.c): generated
# bundles with the pods' access lines removed (and with "ids" their 'Received
# request' lines too); the skewed node's offset must be within 1 s of the
# generator's truth and applied, from request ids (Envoy's x-request-id,
# ALB's trace id), deaths against the LB's failures (cascade, Envoy) or
# container starts (healthy, flood).
for c in "single-oom 2 1 gpu-node-3 -4 request%id -" "cascade 4 3 gpu-node-2 -3 request%id -" \
         "cascade 2 4 gpu-node-3 -4 deaths ids" "healthy 2 0 gpu-node-3 -4 starts ids" \
         "flood 3 1 gpu-node-1 2 starts ids"; do
  set -- $c
  d="$tmp/skew-$1-$2"
  mkdir -p "$d"
  if python3 fixtures/gen/make_bundle.py --out "$d/b.tar.gz" --scenario "$1" --seed "$2" --variant "$3" >/dev/null 2>&1 &&
     python3 tests/e2e/strip_access.py "$d/b.tar.gz" "$d/s.tar.gz" "$7" &&
     "$bin" analyze "$d/s.tar.gz" -o "$d/out" --quiet >/dev/null 2>&1; then
    got=$("$bin" query --db "$d/out/inquest.db" --format csv "SELECT abs(offset_ns / 1e9 - ($5)) <= 1.0
        AND applied_ns = offset_ns AND basis LIKE '%$6%' FROM clock_skew WHERE node = '$4'" | tail -1)
    if [ "$got" = 1 ]; then pass=$((pass+1)); else
      echo "FAIL skew $1/$2/v$3: $4 not estimated from $6 within 1 s of $5 s:"
      "$bin" query --db "$d/out/inquest.db" "SELECT * FROM clock_skew"; fail=$((fail+1)); fi
  else
    echo "FAIL skew $1/$2/v$3: could not generate or analyze"; fail=$((fail+1))
  fi
done

echo "parsers: $pass passed, $fail failed"
[ $fail -eq 0 ]
