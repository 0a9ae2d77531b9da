#!/bin/sh
# ties.sh BIN: a GPU fault is the incident's only where it struck the
# workers (gpu-hardware-fault's tie detector). Three nodes:
#   node-a  Xid 79 at 10:05:00; web-0's engine logs its last line 2 s later
#           and restarts (1.log): tied, basis last-line
#   node-b  Xid 48 at 10:20:00; nothing on node-b dies (web-0 on node-a
#           died at 10:05, another node): untied
#   node-c  Xid 94 at 10:30:00; web-2's status says its last instance
#           terminated at 10:30:20: tied, basis last-terminated
#   node-c  Xid 13 at 10:30:01: an application Xid, never a fault
# and a log shipper on node-b that restarts at 10:20:05: not a GPU worker,
# so Xid 48 stays untied. A second bundle holds only node-b: the verdict
# is not_detected, saying the fault struck no worker.
bin=$1
. tests/e2e/lib.sh

python3 - "$tmp/b" <<'PY'
import json, os, sys
root = sys.argv[1]
def w(rel, lines):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write("".join(l + "\n" for l in lines))
def cri(t, text):
    return "2026-11-30T%s.000000000Z stdout F %s" % (t, text)
batch = ("INFO 11-30 %s metrics.py:161] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 44.9 "
         "tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 12.1%%, CPU KV cache usage: 0.0%%")
pods = "nodes/%s/var/log/pods/llm_%s_0000000%d-0000-0000-0000-000000000000/%s/%d.log"
w(pods % ("node-a", "web-0", 1, "engine", 0), [cri("10:00:00", batch % "10:00:00"),
                                               cri("10:05:02", "RuntimeError: CUDA error: unspecified launch failure")])
w(pods % ("node-a", "web-0", 1, "engine", 1), [cri("10:05:40", batch % "10:05:40")])
w(pods % ("node-b", "web-1", 2, "engine", 0), [cri("10:00:00", batch % "10:00:00"), cri("10:40:00", batch % "10:40:00")])
w(pods % ("node-b", "web-1", 2, "log-shipper", 0), [cri("10:00:00", "level=info msg=\"shipping\""),
                                                    cri("10:20:05", "level=error msg=\"connection reset\"")])
w(pods % ("node-b", "web-1", 2, "log-shipper", 1), [cri("10:20:30", "level=info msg=\"shipping\"")])
w(pods % ("node-c", "web-2", 3, "engine", 0), [cri("10:00:00", batch % "10:00:00"), cri("10:29:59", batch % "10:29:59")])
def kern(node, t, msg):
    return "2026-11-30T%s+00:00 %s kernel: %s" % (t, node, msg)
w("nodes/node-a/var/log/kern.log", [kern("node-a", "09:59:00", "Linux version 6.1.0-18-amd64"),
    kern("node-a", "10:05:00", "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")])
w("nodes/node-b/var/log/kern.log", [kern("node-b", "09:59:00", "Linux version 6.1.0-18-amd64"),
    kern("node-b", "10:20:00", "NVRM: Xid (PCI:0000:2a:00): 48, pid=41877, name=python3, An uncorrectable double bit "
         "error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 1.")])
w("nodes/node-c/var/log/kern.log", [kern("node-c", "09:59:00", "Linux version 6.1.0-18-amd64"),
    kern("node-c", "10:30:00", "NVRM: Xid (PCI:0000:3b:00): 94, pid=1234, name=python3, Contained ECC error"),
    kern("node-c", "10:30:01", "NVRM: Xid (PCI:0000:3b:00): 13, pid=1234, name=python3, Graphics SM Warp Exception "
         "on (GPC 4, TPC 1, SM 0): Illegal Instruction Encoding")])
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "web-2", "namespace": "llm", "uid": "00000003-0000-0000-0000-000000000000"},
       "spec": {"nodeName": "node-c"},
       "status": {"phase": "Running", "podIP": "10.1.0.12", "containerStatuses": [
           {"name": "engine", "restartCount": 1, "ready": True, "containerID": "containerd://cccc",
            "state": {"running": {"startedAt": "2026-11-30T10:30:40Z"}},
            "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": "2026-11-30T10:00:00Z",
                                         "finishedAt": "2026-11-30T10:30:20Z"}}}]}}
os.makedirs(os.path.join(root, "kubectl"))
json.dump({"apiVersion": "v1", "kind": "List", "items": [pod]}, open(os.path.join(root, "kubectl/pods.json"), "w"),
          indent=2)
PY
summary() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["patterns"] if p["id"] == "gpu-hardware-fault"][0]
t = p["ties"]
sig = {s["id"]: s["count"] for s in p["signals"]}
print(p["verdict"], p["verdict_rule"], "fatal=%d" % sig["gpu-xid-fatal"], "xid=%d" % sig["gpu-xid"],
      "tied=%d" % t["tied"], "untied=%d" % t["untied"], t["workers_recognised"])
for x in t["ties"]:
    for e in x["deaths"]:
        print(x["fault"]["node"], x["fault"]["evidence"]["text"][:24], e["pod"], e["container"], e["basis"], e["gap_s"],
              "/".join(e["evidence"]["file"].split("/")[-3:-1]) + ":" + str(e["evidence"]["line"]), e["evidence"]["text"].strip())
PY
}
"$bin" analyze "$tmp/b" -o "$tmp/o" --quiet >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] && ok || ko "analyze: exit $rc: $(cat "$tmp/err")"
summary "$tmp/o/findings.json" > "$tmp/got"
cat > "$tmp/want" <<'TXT'
confirmed signal:fault-struck-workers fatal=3 xid=4 tied=2 untied=1 True
node-a NVRM: Xid (PCI:0000:18:0 web-0 engine last-line 2.0 llm_web-0_00000001-0000-0000-0000-000000000000/engine:2 RuntimeError: CUDA error: unspecified launch failure
node-c NVRM: Xid (PCI:0000:3b:0 web-2 engine last-terminated 20.0 b/kubectl:33 "reason": "Error"
TXT
diff -u "$tmp/want" "$tmp/got" >"$tmp/diff" && ok || { ko "ties"; cat "$tmp/diff"; }
# the postmortem says what tied the fault to the death
grep -q "reported a fatal fault on node-a at 2026-11-30T10:05:00.000Z (NVRM: Xid (PCI:0000:18:00): 79.*web-0 on that node died 2 s after it" \
  "$tmp/o/postmortem.md" && ok || ko "postmortem summary: $(grep -m1 -A2 '^## Summary' "$tmp/o/postmortem.md" | tail -1)"

# node-b alone: a fatal Xid, and only a log shipper restarted near it
rm -rf "$tmp/b/nodes/node-a" "$tmp/b/nodes/node-c" "$tmp/b/kubectl"
"$bin" analyze "$tmp/b" -o "$tmp/o2" --quiet >/dev/null 2>"$tmp/err"
summary "$tmp/o2/findings.json" > "$tmp/got"
echo "not_detected signal:gpu-xid-fatal or signal:gpu-driver-fault fatal=1 xid=1 tied=0 untied=1 True" > "$tmp/want"
diff -u "$tmp/want" "$tmp/got" >"$tmp/diff" && ok || { ko "an untied fault"; cat "$tmp/diff"; }
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); p=[p for p in d['patterns'] if p['id']=='gpu-hardware-fault'][0]; print(p['summary'])" \
  "$tmp/o2/findings.json" | grep -q "^The driver reported a fatal GPU fault, but no GPU worker on that node died" && ok || ko "untied summary"

echo "ties: $pass passed, $fail failed"
[ $fail -eq 0 ]
