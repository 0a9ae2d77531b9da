#!/bin/sh
# jobs.sh BIN: the database and the findings are the same whatever the
# number of parser threads (--jobs): every table compared row by row, on the
# sample bundle and on a hostile one (problems, skips, errors in the order
# the walker met them).
bin=$1
. tests/e2e/lib.sh

tables="files skips problems records http_requests http_upstreams gpu_samples k8s_events
kernel_events pod_states config_settings quotes signal_matches clock_skew meta"

dump() { # DB OUT
  for t in $tables; do
    echo "== $t"
    case $t in
      http_upstreams) order="record_id, attempt" ;;
      signal_matches) order="record_id, pack, signal" ;;
      skips) order="file_id, reason" ;;
      quotes) order="record_id, n" ;;
      *) order=rowid ;;
    esac
    "$bin" query --db "$1" --format csv "SELECT * FROM $t ORDER BY $order" || echo "query failed"
  done > "$2"
}

# a bundle with a bit of everything the walker can meet
mkdir -p "$tmp/b/logs"
cp fixtures/sample/sample-bundle.tar.gz "$tmp/b/"
printf 'not\000text\000at all\001\002' > "$tmp/b/logs/binary.bin"
: > "$tmp/b/logs/empty.log"
printf '{"log":"half a line' > "$tmp/b/logs/cut-json.log"
head -c 3000 fixtures/sample/sample-bundle.tar.gz > "$tmp/b/truncated.tar.gz"

for bundle in fixtures/sample/sample-bundle.tar.gz "$tmp/b"; do
  for j in 1 2 4; do
    rm -rf "$tmp/out$j"
    "$bin" analyze "$bundle" -o "$tmp/out$j" --jobs $j --quiet 2>"$tmp/err$j"
    echo "exit $?" >> "$tmp/err$j"
    dump "$tmp/out$j/inquest.db" "$tmp/dump$j"
    # the tool version and paths are the same; nothing else may differ
    sed 's/"version": *"[^"]*"//' "$tmp/out$j/findings.json" > "$tmp/find$j"
  done
  [ -s "$tmp/dump1" ] && grep -q '^== records' "$tmp/dump1" && ok || ko "$bundle: no dump"
  [ "$(grep -c . "$tmp/dump1")" -gt 100 ] && ok || ko "$bundle: dump too small"
  for j in 2 4; do
    cmp -s "$tmp/dump1" "$tmp/dump$j" && ok \
      || { ko "$bundle: database with --jobs $j differs from --jobs 1"; diff "$tmp/dump1" "$tmp/dump$j" | head -5; }
    cmp -s "$tmp/find1" "$tmp/find$j" && ok \
      || { ko "$bundle: findings.json with --jobs $j differs from --jobs 1"; diff "$tmp/find1" "$tmp/find$j" | head -5; }
    cmp -s "$tmp/err1" "$tmp/err$j" && ok \
      || { ko "$bundle: stderr with --jobs $j differs from --jobs 1"; diff "$tmp/err1" "$tmp/err$j" | head -5; }
    cmp -s "$tmp/out1/postmortem.md" "$tmp/out$j/postmortem.md" && ok \
      || ko "$bundle: postmortem.md with --jobs $j differs from --jobs 1"
  done
done

# bad values are usage errors
"$bin" analyze fixtures/sample/sample-bundle.tar.gz -o "$tmp/x" --jobs 0 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q "jobs takes a number" "$tmp/e" && ok || ko "--jobs 0: exit $rc"
"$bin" ingest fixtures/sample/sample-bundle.tar.gz --db "$tmp/x.db" --jobs many 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q "not 'many'" "$tmp/e" && ok || ko "--jobs many: exit $rc"

echo "jobs: $pass passed, $fail failed"
[ $fail -eq 0 ]
