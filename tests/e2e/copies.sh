#!/bin/sh
# copies.sh BIN: a bundle whose collector followed kubelet's links holds
# each container log twice, under /var/log/pods/ and /var/log/containers/:
# every record is counted once, the copy is listed with status 'duplicate'
# naming the original, and its lines are skipped lines with that reason. A
# file with the same bytes but another pod's identity is not a copy.
bin=$1
. tests/e2e/lib.sh

pods=incident-2026-11-30/nodes/gpu-node-1/var/log/pods/inference_vllm-0_7c1e4a52-3b9d-4f0e-a6d2-9e81c5f03b17/vllm
mkdir -p "$tmp/x"
tar xzf fixtures/sample/sample-bundle.tar.gz -C "$tmp/x" "$pods/1.log" "$pods/2.log"
cid=4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f
n1=$tmp/b/nodes/gpu-node-1/var/log
mkdir -p "$n1/pods/inference_vllm-0_7c1e4a52-3b9d-4f0e-a6d2-9e81c5f03b17/vllm" "$n1/containers"
cp "$tmp/x/$pods/1.log" "$tmp/x/$pods/2.log" "$n1/pods/inference_vllm-0_7c1e4a52-3b9d-4f0e-a6d2-9e81c5f03b17/vllm/"
# the copy a collector makes of the link kubelet keeps in containers/
cp "$tmp/x/$pods/2.log" "$n1/containers/vllm-0_inference_vllm-$cid.log"
# the same bytes under another pod: not a copy of it
mkdir -p "$tmp/b/nodes/gpu-node-1/var/log/pods/inference_vllm-9_00000000-0000-0000-0000-000000000009/vllm"
cp "$tmp/x/$pods/1.log" "$tmp/b/nodes/gpu-node-1/var/log/pods/inference_vllm-9_00000000-0000-0000-0000-000000000009/vllm/1.log"

"$bin" ingest "$tmp/b" --db "$tmp/c.db" --quiet 2>"$tmp/err" && ok || ko "ingest: exit $?"
"$bin" ingest "$tmp/x/$pods/2.log" --db "$tmp/one.db" --quiet && ok || ko "ingest one: exit $?"

dups=$(q "$tmp/c.db" "SELECT count(*) FROM files WHERE status = 'duplicate'")
[ "$dups" = 1 ] && ok || ko "$dups files marked duplicate, want 1"
# the directory walk sorts containers/ before pods/: the copy met first is kept
kept=$(q "$tmp/c.db" "SELECT path FROM files WHERE status = 'done' AND path LIKE '%vllm-0%' ORDER BY path" | tr '\n' ' ')
case "$kept" in
  *containers/vllm-0_inference_vllm-$cid.log*pods/*/vllm/1.log*) ok ;;
  *) ko "kept: $kept" ;;
esac
err=$(q "$tmp/c.db" "SELECT error FROM files WHERE status = 'duplicate'")
case "$err" in
  "the same bytes as b/nodes/gpu-node-1/var/log/containers/vllm-0_inference_vllm-$cid.log") ok ;;
  *) ko "duplicate's error: $err" ;;
esac
one=$(q "$tmp/one.db" "SELECT count(*) FROM records")
recs=$(q "$tmp/c.db" "SELECT count(*) FROM records r JOIN files f ON f.id = r.file_id WHERE f.path LIKE '%vllm-0%2.log' OR f.path LIKE '%containers/%'")
[ "$one" -gt 100 ] && [ "$recs" = "$one" ] && ok || ko "records of 2.log: $recs, want $one (once)"
m1=$(q "$tmp/one.db" "SELECT count(*) FROM signal_matches")
m2=$(q "$tmp/c.db" "SELECT count(*) FROM signal_matches m JOIN records r ON r.id = m.record_id JOIN files f ON f.id = r.file_id WHERE f.path LIKE '%containers/%' OR f.path LIKE '%vllm-0%2.log'")
[ "$m1" = "$m2" ] && ok || ko "matches of 2.log: $m2, want $m1"
acc=$(q "$tmp/c.db" "SELECT lines_read = lines_skipped AND lines_parsed = 0 AND records = 0 FROM files WHERE status = 'duplicate'")
[ "$acc" = 1 ] && ok || ko "duplicate's lines not all skipped"
sk=$(q "$tmp/c.db" "SELECT s.reason || '|' || s.lines || '|' || (s.lines = f.lines_read) FROM skips s JOIN files f ON f.id = s.file_id WHERE f.status = 'duplicate'")
case "$sk" in
  "a copy of another file of the bundle|"*"|1") ok ;;
  *) ko "duplicate's skips: $sk" ;;
esac
# the kept copy under containers/ is 2.log by another name: it takes that
# restart number (recovery counts the instance once, from its records)
rs=$(q "$tmp/c.db" "SELECT restart FROM files WHERE status = 'done' AND path LIKE '%containers/vllm-0_inference_vllm-$cid.log'")
[ "$rs" = 2 ] && ok || ko "containers/ copy's restart: '$rs', want 2"
other=$(q "$tmp/c.db" "SELECT status || ' ' || records FROM files WHERE path LIKE '%vllm-9%'")
case "$other" in "done "[1-9]*) ok ;; *) ko "another pod's identical file: $other" ;; esac
bad=$(q "$tmp/c.db" "SELECT count(*) FROM files WHERE lines_read <> lines_parsed + lines_skipped")
[ "$bad" = 0 ] && ok || ko "$bad files with read != parsed + skipped"
orphans=$(q "$tmp/c.db" "SELECT (SELECT count(*) FROM signal_matches WHERE record_id NOT IN (SELECT id FROM records)) + (SELECT count(*) FROM http_requests WHERE record_id NOT IN (SELECT id FROM records))")
[ "$orphans" = 0 ] && ok || ko "$orphans rows left of the copy's records"

echo "copies: $pass passed, $fail failed"
[ $fail -eq 0 ]
