#!/bin/sh
# sidecar_kill.sh BIN: a memcg OOM kill of a log shipper inside a serving
# pod. The kernel names the pod (its memcg path holds the pod's UID) and
# the process (promtail), but a container id no status holds; the pod status says the log-shipper container was
# OOMKilled. The kill is one kill, of the log-shipper, not of a serving
# worker: it neither replaces nor hides the worker's CUDA OOM.
bin=$1
. tests/e2e/lib.sh

python3 - "$tmp/b" <<'PY'
import json, os, sys
root = sys.argv[1]
d = os.path.join(root, "nodes/node-a/var/log/pods/llm_web-0_00000000-0000-0000-0000-00000000000a/engine")
os.makedirs(d)
with open(os.path.join(d, "0.log"), "w") as f:
    f.write("2026-11-30T10:00:00.000000000Z stdout F INFO:     Started server process [1]\n")
    f.write("2026-11-30T10:05:00.000000000Z stdout F torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
            "2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.10 GiB is free.\n")
with open(os.path.join(root, "nodes/node-a/dmesg"), "w") as f:
    f.write("[1717300.000000] Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org)\n")
    f.write("[1717311.863000] promtail invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999\n")
    f.write("[1717311.863300] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-1.scope,"
            "mems_allowed=0-1,oom_memcg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0b6c1a7e_1111_2222_3333_444455556666.slice,"
            "task_memcg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0b6c1a7e_1111_2222_3333_444455556666"
            ".slice/cri-containerd-ffff.scope,task=promtail,pid=155135,uid=0\n")
    f.write("[1717311.863334] Memory cgroup out of memory: Killed process 155135 (promtail) total-vm:665711kB, "
            "anon-rss:256043kB, file-rss:204773kB, shmem-rss:0kB, UID:0 pgtables:1000kB oom_score_adj:999\n")
os.makedirs(os.path.join(root, "kubectl"))
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "llm", "uid": "0b6c1a7e-1111-2222-3333-444455556666"},
       "spec": {"nodeName": "node-a"},
       "status": {"phase": "Running", "podIP": "10.1.0.10", "containerStatuses": [
           {"name": "engine", "restartCount": 0, "ready": True, "containerID": "containerd://aaaa",
            "state": {"running": {"startedAt": "2026-11-30T10:00:00Z"}}},
           {"name": "log-shipper", "restartCount": 1, "ready": True, "containerID": "containerd://bbbb",
            "state": {"running": {"startedAt": "2026-11-30T10:03:02Z"}},
            "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                         "startedAt": "2026-11-30T09:00:00Z",
                                         "finishedAt": "2026-11-30T10:03:00Z"}}}]}}
json.dump({"apiVersion": "v1", "kind": "List", "items": [pod]}, open(os.path.join(root, "kubectl/pods.json"), "w"),
          indent=2)
PY
"$bin" analyze "$tmp/b" -o "$tmp/o" --quiet >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] && ok || ko "analyze: exit $rc: $(cat "$tmp/err")"
got=$(python3 - "$tmp/o/findings.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["patterns"] if p["id"] == "gpu-oom-cascade"][0]
b = [b for b in p["boundaries"] if b["id"] == "host-oom"][0]
print(p["verdict"], b["count"], ";".join("%s/%s/%s/%s" % (a["pod"], a["container"], a["process"], a["serving_worker"])
                                       for a in b["attributed_to"]))
PY
)
[ "$got" = "oom_no_cascade 1 web-0/log-shipper/promtail/False" ] && ok || ko "sidecar kill: $got"

echo "sidecar_kill: $pass passed, $fail failed"
[ $fail -eq 0 ]
