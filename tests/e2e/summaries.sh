#!/bin/sh
# summaries.sh BIN: the summaries the ingest keeps so the report need not
# read every record again (error_records, time_sources; store.c) are what
# the records give, in bundles that take every path that changes them:
# the sample; boot-relative dmesg anchored by detect (boottime.c); zone
# files (zones.c); a skewed node (skew.c); copies dropped after they were
# stored (forget); two ingests into one database. For each:
#   time_sources = SELECT ts_how, count(*) FROM records GROUP BY ts_how;
#   error_records without the signal-tagged = the rows of the query the
#   postmortem prints for the appendix (read from the postmortem itself);
#   the postmortem from the summaries = the one from reading every record
#   (the database with meta 'summaries' deleted, as an older inquest wrote).
bin=$1
. tests/e2e/lib.sh

check() { # NAME DB
  name=$1 db=$2
  got=$(q "$db" "SELECT ts_how, records FROM time_sources WHERE records > 0 ORDER BY ts_how" | tr '\n' ' ')
  want=$(q "$db" "SELECT ts_how, count(*) FROM records GROUP BY ts_how ORDER BY ts_how" | tr '\n' ' ')
  [ -n "$want" ] && [ "$got" = "$want" ] && ok || ko "$name: time_sources '$got', records give '$want'"
  "$bin" report --db "$db" --format md -o "$tmp/with.md" || ko "$name: report: exit $?"
  sql=$(sed -n 's/^inquest query --db inquest.db "\(SELECT r.ts, r.node, substr.*\)"$/\1/p' "$tmp/with.md")
  if [ -z "$sql" ]; then
    ko "$name: no appendix query in the postmortem"
  else
    kept="SELECT f.path, r.line FROM error_records e JOIN records r ON r.id = e.record_id
          JOIN files f ON f.id = r.file_id WHERE e.record_id NOT IN (SELECT record_id FROM signal_matches)"
    want=$(q "$db" "SELECT count(*) FROM ($sql)")
    n=$(q "$db" "SELECT count(*) FROM ($kept)")
    extra=$(q "$db" "SELECT count(*) FROM ($kept EXCEPT SELECT path, line FROM ($sql))")
    missing=$(q "$db" "SELECT count(*) FROM (SELECT path, line FROM ($sql) EXCEPT $kept)")
    [ "$n" = "$want" ] && [ "$extra" = 0 ] && [ "$missing" = 0 ] && ok ||
      ko "$name: error_records $n rows ($extra not selected, $missing missing), the query $want"
    [ "${3:-0}" -eq 0 ] || [ "$want" -ge "$3" ] || ko "$name: only $want appendix rows, expected >= $3"
  fi
  cp "$db" "$tmp/old.db"
  python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1])
c.execute("DELETE FROM meta WHERE key = ?", ("summaries",)); c.commit()' "$tmp/old.db" ||
    ko "$name: cannot delete the marker"
  [ -z "$(q "$tmp/old.db" "SELECT 1 FROM meta WHERE key = 'summaries'")" ] || ko "$name: marker still there"
  "$bin" report --db "$tmp/old.db" --format md -o "$tmp/without.md" || ko "$name: report (old): exit $?"
  cmp -s "$tmp/with.md" "$tmp/without.md" && ok ||
    { ko "$name: the postmortem differs without the summaries"; diff "$tmp/with.md" "$tmp/without.md" | head -10; }
}

"$bin" analyze fixtures/sample/sample-bundle.tar.gz -o "$tmp/s" --quiet || ko "sample: exit $?"
check sample "$tmp/s/inquest.db" 100
[ "$(q "$tmp/s/inquest.db" "SELECT value FROM meta WHERE key = 'summaries'")" = 1 ] && ok ||
  ko "sample: meta summaries not set"

# boot-relative dmesg: detect moves records from boot_relative to boot_anchored
python3 fixtures/boottime/make_bundle.py "$tmp/bt.tar" || ko "boot-time bundle"
"$bin" analyze "$tmp/bt.tar" -o "$tmp/bt" --quiet || ko "boottime: exit $?"
[ "$(q "$tmp/bt/inquest.db" "SELECT records FROM time_sources WHERE ts_how = 'boot_anchored'")" -gt 0 ] && ok ||
  ko "boottime: no boot_anchored records counted"
check boottime "$tmp/bt/inquest.db"

# a zone file: assumed_utc becomes assumed_zone
b=$tmp/z/nodes
mkdir -p "$b/gpu-node-1/etc" "$b/gpu-node-1/var/log"
echo 'Europe/Istanbul' > "$b/gpu-node-1/etc/timezone"
printf '2026-11-30 17:12:03 ERROR worker failed to start\n2026-11-30 17:12:04 INFO ok\n' \
  > "$b/gpu-node-1/var/log/app.log"
"$bin" analyze "$tmp/z" -o "$tmp/zo" --quiet || ko "zones: exit $?"
check zones "$tmp/zo/inquest.db"

# a node 7 s fast: its records become skew_corrected
python3 fixtures/gen/make_bundle.py --out "$tmp/sk.tar.gz" --seed 3 --skew gpu-node-2=7 >/dev/null 2>&1 ||
  ko "skewed bundle"
"$bin" analyze "$tmp/sk.tar.gz" -o "$tmp/sk" --quiet || ko "skew: exit $?"
[ "$(q "$tmp/sk/inquest.db" "SELECT records FROM time_sources WHERE ts_how = 'skew_corrected'")" -gt 0 ] && ok ||
  ko "skew: no skew_corrected records counted"
check skew "$tmp/sk/inquest.db" 1

# NUL bytes in a text: LIKE stops at the first, so an error word after it
# does not count, one before it does (past the first 64 KiB, which the
# sniffer reads, so the file stays a log)
mkdir -p "$tmp/n/nodes/gpu-node-1/var/log"
python3 -c 'import sys
out = sys.stdout.buffer
for i in range(2000):
    out.write(b"2026-11-30 14:00:%02d INFO request %d served\n" % (i % 60, i))
out.write(b"2026-11-30 14:01:00 INFO ok\0 then an error after the NUL\n")
out.write(b"2026-11-30 14:01:01 INFO an error\0 before the NUL\n")
out.write(b"2026-11-30 14:01:02 INFO request timed out\n")' > "$tmp/n/nodes/gpu-node-1/var/log/app.log"
"$bin" analyze "$tmp/n" -o "$tmp/no" --quiet || ko "nul: exit $?"
[ "$(q "$tmp/no/inquest.db" "SELECT group_concat(r.line, ' ') FROM error_records e JOIN records r ON r.id = e.record_id")" = "2002 2003" ] && ok ||
  ko "nul: error_records lines '$(q "$tmp/no/inquest.db" "SELECT group_concat(r.line, ' ') FROM error_records e JOIN records r ON r.id = e.record_id")', expected 2002 2003"
check nul "$tmp/no/inquest.db" 2

# a copy stored, then forgotten, and a second bundle into the same database
pods=incident-2026-11-30/nodes/gpu-node-1/var/log/pods/inference_vllm-0_7c1e4a52-3b9d-4f0e-a6d2-9e81c5f03b17/vllm
mkdir -p "$tmp/x"
tar xzf fixtures/sample/sample-bundle.tar.gz -C "$tmp/x" "$pods/2.log"
n1=$tmp/c/nodes/gpu-node-1/var/log
mkdir -p "$n1/pods/inference_vllm-0_7c1e4a52-3b9d-4f0e-a6d2-9e81c5f03b17/vllm" "$n1/containers"
cp "$tmp/x/$pods/2.log" "$n1/pods/inference_vllm-0_7c1e4a52-3b9d-4f0e-a6d2-9e81c5f03b17/vllm/"
cp "$tmp/x/$pods/2.log" "$n1/containers/vllm-0_inference_vllm-4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f.log"
"$bin" ingest "$tmp/c" --db "$tmp/two.db" --quiet || ko "copies: exit $?"
[ "$(q "$tmp/two.db" "SELECT count(*) FROM files WHERE status = 'duplicate'")" = 1 ] && ok ||
  ko "copies: no duplicate file"
"$bin" ingest "$tmp/z" --db "$tmp/two.db" --quiet || ko "second ingest: exit $?"
"$bin" detect --db "$tmp/two.db" >/dev/null || ko "detect: exit $?"
check "copies + second ingest" "$tmp/two.db" 1

echo "summaries: $pass passed, $fail failed"
[ $fail -eq 0 ]
