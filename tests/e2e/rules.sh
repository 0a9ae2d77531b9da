#!/bin/sh
# rules.sh BIN: end-to-end tests of `inquest rules`: every shipped pack lints
# clean and passes its own tests, `rules match` greps corpus-derived plain
# files as expected, and each broken pack in tests/e2e/rules-bad/ gives the
# stderr in the .stderr file beside it (file:line:col), with exit 4.
# GOLDEN=1 rewrites the .stderr files (review the diff).
bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
export TZ=UTC LC_ALL=C
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass+1)); }
ko() { echo "FAIL: $*"; fail=$((fail+1)); }

# 1. shipped packs: built-in and from the source tree
for args in "" "rules"; do
  if "$bin" rules lint $args >"$tmp/out" 2>"$tmp/err"; then ok; else
    ko "rules lint $args: exit $?"; sed 's/^/  /' "$tmp/err"; fi
  [ -s "$tmp/err" ] && { ko "rules lint $args: diagnostics on a clean pack"; sed 's/^/  /' "$tmp/err"; }
done
if "$bin" rules test >"$tmp/out" 2>&1 && tail -n 1 "$tmp/out" | grep -q '^rules: [0-9]* passed, 0 failed$'; then ok
else ko "rules test"; grep -A4 FAIL "$tmp/out" | head -40; fi
for id in gpu-oom-cascade host-memory-oom gpu-hardware-fault; do
  if "$bin" rules explain "$id" >"$tmp/out" 2>"$tmp/err" && [ -s "$tmp/out" ]; then ok; else ko "rules explain $id"; fi
done
"$bin" rules explain gpu-oom-cascade lb-5xx-surge >"$tmp/out" 2>&1
grep -q "windowed detector 'surge'" "$tmp/out" && grep -q 'min_count = 5,' "$tmp/out" && ! grep -q 'statuses =' "$tmp/out" && grep -q 'why max_gap_s:' "$tmp/out" && ok || { ko "explain lb-5xx-surge"; cat "$tmp/out"; }

# 2. rules match on plain files made of corpus rows (sources in the comments)
# host_oom.tsv docker/for-linux#1001; host_oom.tsv reportportal/kubernetes#203
# (a stack frame: the fact oom-killer-report, not a kill); cuda_oom.tsv rshaojimmy/MADDoG#11; near_miss.tsv
# (allocator advice: no match); crashloop.tsv tarantool-operator#88;
# xid.tsv leptonai/gpud#1174; serving_logs.tsv vllm#3094 (a fact);
# snippets/host_oom/10 (exit 137 with reason Error: cancelled by the exception).
cat >"$tmp/mixed.log" <<'LOG'
May 15 23:09:30 ubuntu-s-1vcpu-2gb-ams3-01 kernel: [  518.050606] Out of memory: Killed process 15784 (python3) total-vm:11964kB, anon-rss:4288kB, file-rss:3028kB, shmem-rss:0kB
[ 7093.543737]  mem_cgroup_out_of_memory+0xbd/0xe0
RuntimeError: CUDA out of memory. Tried to allocate 2.87 GiB (GPU 0; 14.76 GiB total capacity; 8.77 GiB already allocated; 19.75 MiB free; 13.71 GiB reserved in total by PyTorch)
If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.
+     Warning  BackOff           4m25s (x157 over 38m)  kubelet, minikube  Back-off restarting failed container
NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, Contained ECC error
INFO 02-28 21:48:18 metrics.py:161] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 44.9 tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 82.1%, CPU KV cache usage: 0.0%
Last State: Terminated Reason: Error Exit Code: 137
LOG
printf '%s\t%s\t%s\n' \
  'm.log:1' 'host-oom' 'May 15 23:09:30 ubuntu-s-1vcpu-2gb-ams3-01 kernel: [  518.050606] Out of memory: Killed process 15784 (python3) total-vm:11964kB, anon-rss:4288kB, file-rss:3028kB, shmem-rss:0kB' \
  'm.log:2' 'oom-killer-report' '[ 7093.543737]  mem_cgroup_out_of_memory+0xbd/0xe0' \
  'm.log:3' 'cuda-oom' 'RuntimeError: CUDA out of memory. Tried to allocate 2.87 GiB (GPU 0; 14.76 GiB total capacity; 8.77 GiB already allocated; 19.75 MiB free; 13.71 GiB reserved in total by PyTorch)' \
  'm.log:5' 'crashloop' '+     Warning  BackOff           4m25s (x157 over 38m)  kubelet, minikube  Back-off restarting failed container' \
  'm.log:6' 'gpu-xid,gpu-xid-fatal' 'NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, Contained ECC error' \
  'm.log:7' 'engine-batch' 'INFO 02-28 21:48:18 metrics.py:161] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 44.9 tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 82.1%, CPU KV cache usage: 0.0%' \
  >"$tmp/want"
cp "$tmp/mixed.log" "$tmp/m.log"
(cd "$tmp" && "$bin" rules match m.log >got 2>err) || ko "rules match: exit $?"
if diff -u "$tmp/want" "$tmp/got" >"$tmp/diff"; then ok; else ko "rules match output"; cat "$tmp/diff"; fi
# stdin, one pack, captures
"$bin" rules match --pack gpu-hardware-fault --explain - <"$tmp/mixed.log" >"$tmp/got" 2>&1
printf -- '%s\n' \
  '-:3	cuda-oom	RuntimeError: CUDA out of memory. Tried to allocate 2.87 GiB (GPU 0; 14.76 GiB total capacity; 8.77 GiB already allocated; 19.75 MiB free; 13.71 GiB reserved in total by PyTorch)' \
  '	gpu-hardware-fault/cuda-oom	{"allocated":"8.77 GiB","allocated_bytes":9416715796,"capacity":"14.76 GiB","capacity_bytes":15848429322,"free":"19.75 MiB","free_bytes":20709376,"gpu":0,"reserved":"13.71 GiB","reserved_bytes":14721000407,"tried":"2.87 GiB","tried_bytes":3081639035,"framework":"pytorch"}' \
  '-:5	crashloop	+     Warning  BackOff           4m25s (x157 over 38m)  kubelet, minikube  Back-off restarting failed container' \
  '	gpu-hardware-fault/crashloop	{}' \
  '-:6	gpu-xid,gpu-xid-fatal	NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, Contained ECC error' \
  '	gpu-hardware-fault/gpu-xid	{"message":"Contained ECC error","name":"python3","pci":"0000:9b:00","pid":1234,"xid":94}' \
  '	gpu-hardware-fault/gpu-xid-fatal	{"pci":"0000:9b:00","xid":94}' \
  | sed 's/\\t/\t/g' >"$tmp/want2"
# (the cuda-oom line is reported too: it is a boundary of gpu-hardware-fault)
if diff -u "$tmp/want2" "$tmp/got" >"$tmp/diff"; then ok; else ko "rules match --pack --explain"; cat "$tmp/diff"; fi
"$bin" rules match --pack no-such-pack "$tmp/m.log" >/dev/null 2>&1; [ $? -eq 2 ] && ok || ko "unknown --pack is a usage error"
# grep's exit status: 2 for a file that cannot be read (even when another matched), 1 for no match
"$bin" rules match "$tmp/missing.log" >/dev/null 2>&1; [ $? -eq 2 ] && ok || ko "unreadable file exits 2"
"$bin" rules match "$tmp/m.log" "$tmp/missing.log" >"$tmp/got" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l < "$tmp/got")" -eq 6 ] && grep -q "cannot open '$tmp/missing.log'" "$tmp/err" && ok \
  || ko "a match and a missing file: exit $rc, $(wc -l < "$tmp/got") lines"
printf 'nothing to see\nhere\n' > "$tmp/quiet.log"
"$bin" rules match "$tmp/quiet.log" >"$tmp/got" 2>&1; rc=$?
[ $rc -eq 1 ] && [ ! -s "$tmp/got" ] && ok || ko "no match: exit $rc, expected 1 and no output"
# bundles and archives as analyze reads them: members named FILE!member,
# compressed members decompressed, folders walked
mkdir -p "$tmp/b/logs"
cp "$tmp/mixed.log" "$tmp/b/m.log"
sed -n 3p "$tmp/mixed.log" | gzip > "$tmp/b/logs/app.log.1.gz"
(cd "$tmp/b" && tar czf ../b.tar.gz m.log logs)
(cd "$tmp" && "$bin" rules match b.tar.gz b >got 2>err); rc=$?
cut -f1,2 "$tmp/got" > "$tmp/got2"
printf '%s\t%s\n' b.tar.gz!m.log:1 host-oom b.tar.gz!m.log:2 oom-killer-report b.tar.gz!m.log:3 cuda-oom b.tar.gz!m.log:5 crashloop b.tar.gz!m.log:6 gpu-xid,gpu-xid-fatal \
  b.tar.gz!m.log:7 engine-batch b.tar.gz!logs/app.log.1.gz:1 cuda-oom \
  b/logs/app.log.1.gz:1 cuda-oom b/m.log:1 host-oom b/m.log:2 oom-killer-report b/m.log:3 cuda-oom b/m.log:5 crashloop b/m.log:6 gpu-xid,gpu-xid-fatal b/m.log:7 engine-batch > "$tmp/want3"
[ $rc -eq 0 ] && diff -u "$tmp/want3" "$tmp/got2" >"$tmp/diff" && ok || { ko "rules match on an archive and a folder: exit $rc"; cat "$tmp/diff" "$tmp/err"; }
# an archive cut short: the lines before the cut are matched, then exit 2
head -c 5000 fixtures/sample/sample-bundle.tar.gz > "$tmp/cut.tar.gz"
"$bin" rules match "$tmp/cut.tar.gz" >"$tmp/got" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "^$tmp/cut.tar.gz!incident-2026-11-30/cluster/events.json:373	crashloop	" "$tmp/got" \
  && grep -q "^inquest: $tmp/cut.tar.gz: truncated gzip input at byte" "$tmp/err" && ok || { ko "rules match on a cut archive: exit $rc"; cat "$tmp/err"; }

# 3. broken packs: exact stderr, exit 4
for pack in tests/e2e/rules-bad/*.json; do
  want=${pack%.json}.stderr
  "$bin" rules lint "$pack" >/dev/null 2>"$tmp/err"; rc=$?
  [ $rc -eq 4 ] && ok || ko "$pack: exit $rc, expected 4"
  if [ -n "$GOLDEN" ]; then cp "$tmp/err" "$want"; fi
  if diff -u "$want" "$tmp/err" >"$tmp/diff"; then ok; else ko "$pack: stderr differs"; cat "$tmp/diff"; fi
done
# one validator: analyze, ingest and detect run the lint on their --rules
# packs and refuse one with errors (exit 4), with the same messages
# (misspelt.json loads, and analyze used to run it)
for pack in tests/e2e/rules-bad/*.json; do
  want=${pack%.json}.stderr
  for cmd in "analyze fixtures/sample/sample-bundle.tar.gz -o $tmp/o" "ingest fixtures/sample/sample-bundle.tar.gz --db $tmp/i.db" "detect --db $tmp/none.db"; do
    # shellcheck disable=SC2086
    "$bin" $cmd --rules "$pack" >"$tmp/out" 2>"$tmp/err"; rc=$?
    name="${cmd%% *} --rules $pack"
    [ $rc -eq 4 ] && ok || ko "$name: exit $rc, expected 4"
    tail -1 "$tmp/err" | grep -q "^inquest: [0-9]* errors\{0,1\} in the rule pack of --rules, as 'inquest rules lint' reports them: nothing was run$" \
      && ok || ko "$name: last line: $(tail -1 "$tmp/err")"
    sed '$d' "$tmp/err" > "$tmp/err2"
    if diff -u "$want" "$tmp/err2" >"$tmp/diff"; then ok; else ko "$name: stderr differs from rules lint's"; cat "$tmp/diff"; fi
  done
  [ ! -e "$tmp/o" ] && [ ! -e "$tmp/i.db" ] && ok || ko "$pack: a refused pack left outputs"
done
# a broken pack also stops `rules test` and `analyze --rules` at load, with a position
"$bin" rules test tests/e2e/rules-bad/bad-regex.json >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 4 ] && grep -q '^tests/e2e/rules-bad/bad-regex.json:13:9: error: invalid regex' "$tmp/err" && ok || { ko "rules test on a bad pack: exit $rc"; cat "$tmp/err"; }

# 7. the detector table of rules/README.md names the parameters each detector
# knows: lint's "unknown parameter" error lists them from the code's table
here=$(cd "$(dirname "$0")/../.." && pwd)
for det in $(awk '/^\| detector \| params \|/{t=1;next} t&&!/^\|/{t=0} t' "$here/rules/README.md" | sed -n 's/^| `\([a-z-]*\)` | .*/\1/p'); do
  cat >"$tmp/det.json" <<JSON
{"id": "probe", "version": "0.1.0", "title": {"en": "Probe", "tr": "Sonda"},
 "definition": {"en": "A probe.", "tr": "Bir sonda."},
 "signals": [{"id": "d", "title": {"en": "D", "tr": "D"},
   "detector": {"name": "$det", "params": {"no_such_param": 1}}}]}
JSON
  known=$("$bin" rules lint "$tmp/det.json" 2>&1 | sed -n "s/.*unknown parameter 'no_such_param' of detector '$det' (known: \(.*\))\$/\1/p")
  [ -n "$known" ] || known="(none)"
  doc=$(sed -n "s/^| \`$det\` | \(.*\) |\$/\1/p" "$here/rules/README.md" | tr -d '`')
  [ "$known" = "$doc" ] && ok || ko "rules/README.md detector $det: documents '$doc', the code knows '$known'"
done

echo "rules e2e: $pass passed, $fail failed"
[ $fail -eq 0 ]
