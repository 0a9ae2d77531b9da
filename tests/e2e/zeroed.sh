#!/bin/sh
# zeroed.sh BIN: logs with the zeroed blocks a crash or power loss leaves
# (runs of NUL bytes) are logs: the text between the runs is parsed and
# matched, the coverage counts the bytes dropped, only a file that is
# binary throughout is skipped (bundle/lines.c, parse/registry.c).
bin=$1
. tests/e2e/lib.sh
d=$tmp/b/nodes/gpu-node-1/var/log/pods/inference_vllm-0_11111111-2222-4333-8444-555555555555/vllm
mkdir -p "$d" "$tmp/b/nodes/gpu-node-1/bin"
python3 - "$d" "$tmp/b/nodes/gpu-node-1/bin" <<'PY'
import sys
d, bindir = sys.argv[1], sys.argv[2]
line = ("2026-11-30T14:10:%02d.000000Z stdout F INFO 11-30 14:10:%02d [loggers.py:118] Engine 000: "
        "Avg prompt throughput: 812.4 tokens/s, Running: 12 reqs, Waiting: 0 reqs, GPU KV cache usage: 71.2%%")
oom = ("2026-11-30T14:10:31.000000Z stderr F torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
       "2.00 GiB. GPU 0 has a total capacity of 79.14 GiB of which 1.19 GiB is free.\n")
# the crash cut line 10 mid-way; 200 zeroed bytes; the restarted writer
# appended from there: line 10 of the file holds both
body = "\n".join(line % (i, i) for i in range(10)) + "\n"
body = body[:-40] + "\0" * 200 + "\n".join(line % (i, i) for i in range(10, 20)) + "\n" + oom
open(d + "/0.log", "w").write(body)
# a file whose first block was zeroed: 4 KiB of NULs, then its lines
open(d + "/1.log", "w").write("\0" * 4096 + "\n" + "\n".join(line % (i, i) for i in range(40, 45)) + "\n"
                              + "\0" * 512 + "\n" + oom.replace("14:10:31", "14:10:50"))
# a program: NULs strewn through it
open(bindir + "/agent", "wb").write(bytes((i * 7) % 256 if i % 5 else 0 for i in range(6000)))
PY
"$bin" analyze "$tmp/b" -o "$tmp/o" --quiet
rc=$?
[ $rc -eq 0 ] && ok || ko "analyze exited $rc"
db=$tmp/o/inquest.db
v=$(q "$db" "SELECT format || '|' || nul_bytes || '|' || lines_read || '|' || status FROM files WHERE path LIKE '%/0.log'")
[ "$v" = "cri|200|20|done" ] && ok || ko "0.log: format,nul_bytes,lines,status '$v'"
v=$(q "$db" "SELECT format || '|' || nul_bytes || '|' || status FROM files WHERE path LIKE '%/1.log'")
[ "$v" = "cri|4608|done" ] && ok || ko "1.log (zeroed first block) sniffed and read as '$v'"
v=$(q "$db" "SELECT status FROM files WHERE path LIKE '%/agent'")
[ "$v" = "binary" ] && ok || ko "a binary file: status '$v'"
# the text after the run is a record of its own at the run's line
v=$(q "$db" "SELECT count(*) FROM records r JOIN files f ON f.id = r.file_id WHERE f.path LIKE '%/0.log'
    AND r.line = 10 AND r.text LIKE 'INFO 11-30 14:10:10 %'")
[ "$v" = 1 ] && ok || ko "the line after the NUL run: $v records at line 10"
v=$(q "$db" "SELECT count(*) FROM records r JOIN files f ON f.id = r.file_id WHERE f.path LIKE '%/1.log'
    AND r.line = 2 AND r.text LIKE 'INFO 11-30 14:10:40 %'")
[ "$v" = 1 ] && ok || ko "the first line after a zeroed first block: $v"
v=$(q "$db" "SELECT reason || ':' || lines FROM skips k JOIN files f ON f.id = k.file_id WHERE f.path LIKE '%/1.log'
    ORDER BY reason")
[ "$v" = "NUL bytes only (a zeroed block):2" ] && ok || ko "1.log skips: '$v'"
python3 - "$tmp/o/findings.json" <<'PY' && ok || ko "findings: the two CUDA OOMs of the file with NUL runs"
import json, sys
f = json.load(open(sys.argv[1]))
p = next(p for p in f["patterns"] if p["id"] == "gpu-oom-cascade")
got = [(e["pod"], e["time"]) for e in p["oom_events"]]
sys.exit(0 if got == [("vllm-0", "2026-11-30T14:10:31.000Z"), ("vllm-0", "2026-11-30T14:10:50.000Z")] else 1)
PY
grep -q '0.log: 200 NUL bytes (zeroed blocks' "$tmp/o/postmortem.md" && ok ||
  ko "the coverage does not count the NUL bytes dropped"
# a file of nothing but NULs is binary throughout: nothing to analyze
printf '\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' > "$tmp/zero.log"
"$bin" analyze "$tmp/zero.log" -o "$tmp/oz" --quiet 2>"$tmp/err"
rc=$?
[ $rc -eq 3 ] && grep -q 'binary' "$tmp/err" && ok || ko "all-NUL file: exit $rc, $(cat "$tmp/err")"
echo "zeroed: $pass passed, $fail failed"
[ $fail -eq 0 ]
