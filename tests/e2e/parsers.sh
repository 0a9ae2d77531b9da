#!/bin/sh
# parsers.sh BIN: the parser table tests. For every fixtures/lines/<format>/
# <case>.log, `inquest parse` (sniffing from content, no --format) must pick
# <format> (or the one named in <case>.format) and print exactly <case>.json;
# <case>.args holds extra arguments (--path, --mtime; without --mtime the
# case has no file date, --mtime none). GOLDEN=1 rewrites the
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
  # a checkout's mtimes are not the fixture's: no file date unless given
  case " $args " in *" --mtime "*) ;; *) args="$args --mtime none" ;; esac
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
   grep -q '^- 6 records are seconds since boot: no boot time was found.*(`boot_relative`)' "$tmp/btout/postmortem.md"; then
  pass=$((pass+1)); else echo "FAIL boot time: coverage does not count the 6 boot-relative records"; fail=$((fail+1)); fi

# Clock skew from the bases after the access logs (detect/skew.c): generated
# bundles with the pods' access lines removed (with "ids" their 'Received
# request' lines too, with "noevents" the events list); the skewed node's
# offset must be within 1 s of the generator's truth and applied, from
# request ids (Envoy's x-request-id, ALB's trace id), kubelet events
# (firstTimestamp on the node's clock against creationTimestamp), or deaths
# against the LB's failures (cascade, Envoy) when nothing else is left.
for c in "single-oom 2 1 gpu-node-3 -4 request%id -" "cascade 4 3 gpu-node-2 -3 request%id -" \
         "cascade 2 4 gpu-node-3 -4 deaths ids,noevents" "healthy 2 0 gpu-node-3 -4 events ids" \
         "flood 3 1 gpu-node-1 2 events ids"; do
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

# A node no basis reaches (no ids, no access lines, no events, no deaths in a
# healthy bundle): its offset could not be determined, nothing is moved, and
# the row says so; the container starts Kubernetes reported are not a basis.
d="$tmp/skew-none"
mkdir -p "$d"
if python3 fixtures/gen/make_bundle.py --out "$d/b.tar.gz" --scenario healthy --seed 2 --variant 0 >/dev/null 2>&1 &&
   python3 tests/e2e/strip_access.py "$d/b.tar.gz" "$d/s.tar.gz" ids,noevents &&
   "$bin" analyze "$d/s.tar.gz" -o "$d/out" --quiet >/dev/null 2>&1; then
  got=$("$bin" query --db "$d/out/inquest.db" --format csv "SELECT count(*) FROM clock_skew WHERE node = 'gpu-node-3'
      AND offset_ns IS NULL AND applied_ns = 0 AND status = 'none' AND basis LIKE 'could not be determined%'" | tail -1)
  moved=$("$bin" query --db "$d/out/inquest.db" --format csv "SELECT count(*) FROM records WHERE ts_how = 'skew_corrected'" | tail -1)
  if [ "$got" = 1 ] && [ "$moved" = 0 ] &&
     grep -q 'could not be determined' "$d/out/postmortem.md"; then pass=$((pass+1)); else
    echo "FAIL skew none: gpu-node-3 row $got, $moved records moved:"
    "$bin" query --db "$d/out/inquest.db" "SELECT * FROM clock_skew"; fail=$((fail+1)); fi
else
  echo "FAIL skew none: could not generate or analyze"; fail=$((fail+1))
fi

# without --mtime, parse takes the file's own mtime as its date (a Dec 10
# syslog line in a file written 2026-12-04 is from 2025)
cp fixtures/lines/kernel/syslog-after-file-date.log "$tmp/dated.log"
touch -d 2026-12-04T00:00:00Z "$tmp/dated.log"
got=$("$bin" parse "$tmp/dated.log" 2>/dev/null | head -1 | sed -n 's/.*"ts":"\([^"]*\)".*/\1/p')
if [ "$got" = 2025-12-10T04:12:01.000000000Z ]; then pass=$((pass+1)); else
  echo "FAIL parse: the file's mtime is not its date ('$got')"; fail=$((fail+1)); fi

# `inquest sniff` names each file by the path it was given (two files
# named "messages" differ), an archive's members as ARCHIVE!MEMBER.
mkdir -p "$tmp/sn/a" "$tmp/sn/b"
cp fixtures/lines/kernel/syslog-after-file-date.log "$tmp/sn/a/messages"
cp fixtures/lines/kernel/syslog-after-file-date.log "$tmp/sn/b/messages"
(cd "$tmp/sn" && tar cf ab.tar a b)
"$bin" sniff "$tmp/sn/a/messages" "$tmp/sn/b/messages" "$tmp/sn/ab.tar" "$tmp/sn/b/" | cut -f1,2 >"$tmp/sn.got"
printf '%s\tkernel\n' "$tmp/sn/a/messages" "$tmp/sn/b/messages" "$tmp/sn/ab.tar!a/messages" \
  "$tmp/sn/ab.tar!b/messages" "$tmp/sn/b/messages" >"$tmp/sn.want"
if diff -u "$tmp/sn.want" "$tmp/sn.got"; then pass=$((pass+1)); else
  echo "FAIL sniff: paths not as given"; fail=$((fail+1)); fi

# A compressed file is parsed decompressed, as analyze reads it (gzip and
# zstd by their first bytes, whatever the name); an archive of several
# files is refused with what to use instead.
for z in "gzip -c" "zstd -q -c"; do
  command -v ${z%% *} >/dev/null 2>&1 || continue
  $z fixtures/lines/haproxy/httplog.log > "$tmp/httplog.log.z"
  "$bin" parse --mtime none --path haproxy.log "$tmp/httplog.log.z" \
    >"$tmp/z.out" 2>"$tmp/z.err"
  "$bin" parse --mtime none --path haproxy.log fixtures/lines/haproxy/httplog.log \
    >"$tmp/p.out" 2>/dev/null
  if cmp -s "$tmp/z.out" "$tmp/p.out" && grep -q ": format haproxy, " "$tmp/z.err"; then pass=$((pass+1)); else
    echo "FAIL parse of a ${z%% *} file: $(cat "$tmp/z.err")"; fail=$((fail+1)); fi
done
"$bin" parse fixtures/sample/sample-bundle.tar.gz >"$tmp/a.out" 2>"$tmp/a.err"; rc=$?
if [ $rc -eq 2 ] && [ ! -s "$tmp/a.out" ] && grep -q "an archive of several files: parse takes one" "$tmp/a.err"; then
  pass=$((pass+1)); else echo "FAIL parse of an archive: exit $rc: $(cat "$tmp/a.err")"; fail=$((fail+1)); fi

echo "parsers: $pass passed, $fail failed"
[ $fail -eq 0 ]
