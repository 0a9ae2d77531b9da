#!/usr/bin/env python3
"""recovery_gen.py DIR: a small bundle (a directory) whose restarts each
say "ready" in another way, for recovery.sh. Every pod of Deployment "web"
restarts once or twice; what marks it Ready differs:

  web-0  the kubelet's "SyncLoop (probe)" readiness line (its "not ready"
         line before does not count), 46.5 s after the start, while the
         engine said "Application startup complete" at 40 s
  web-1  the pod's Ready condition (lastTransitionTime), 70 s after the
         start its status gives; rotation dropped the head of 1.log, whose
         first kept line is 3 minutes later
  web-2  nothing Kubernetes wrote: the engine's ready line at 30 s plus
         half the manifest's readiness periodSeconds (6): 33 s, an estimate
  web-3  dies of a CUDA OOM during warm-up (restart 1, never ready), then
         restart 2 is estimated like web-2
  web-4  no engine line: the first request the ingress routed to its IP
         and it answered, 40 s after the start
"""
import json
import os
import sys

DAY = "2026-11-30"
root = sys.argv[1]
node = os.path.join(root, "nodes", "node-a")


def cri(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for t, text in lines:
            f.write(f"{DAY}T{t}Z stdout F {text}\n")


def pod_dir(pod, uid):
    return os.path.join(node, "var/log/pods", f"llm_{pod}_{uid}", "engine")


START = "INFO:     Started server process [1]"
READY = "INFO:     Application startup complete."
LOAD = "INFO 11-30 {t} [gpu_model_runner.py:1595] Model loading took 14.2474 GiB and {s} seconds"
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
       "capacity of 79.15 GiB of which 1.10 GiB is free.")

d = pod_dir("web-0", "00000000-0000-0000-0000-000000000000")
cri(os.path.join(d, "0.log"), [("09:50:00.000000000", START), ("09:59:58.000000000", OOM)])
cri(os.path.join(d, "1.log"), [("10:00:00.500000000", START),
                               ("10:00:20.000000000", LOAD.format(t="10:00:20", s="12.500000")),
                               ("10:00:40.000000000", READY)])
d = pod_dir("web-1", "11111111-1111-1111-1111-111111111111")
cri(os.path.join(d, "0.log"), [("09:50:00.000000000", START), ("10:01:58.000000000", OOM)])
cri(os.path.join(d, "1.log"), [("10:05:00.000000000", "INFO:     10.0.0.9:5000 - \"GET /health HTTP/1.1\" 200 OK")])
d = pod_dir("web-2", "22222222-2222-2222-2222-222222222222")
cri(os.path.join(d, "0.log"), [("09:50:00.000000000", START), ("10:09:58.000000000", OOM)])
cri(os.path.join(d, "1.log"), [("10:10:00.000000000", START), ("10:10:30.000000000", READY)])
d = pod_dir("web-3", "33333333-3333-3333-3333-333333333333")
cri(os.path.join(d, "0.log"), [("09:50:00.000000000", START), ("10:19:58.000000000", OOM)])
cri(os.path.join(d, "1.log"), [("10:20:00.000000000", START), ("10:20:20.000000000", OOM)])
cri(os.path.join(d, "2.log"), [("10:20:30.000000000", START), ("10:21:00.000000000", READY)])
d = pod_dir("web-4", "44444444-4444-4444-4444-444444444444")
cri(os.path.join(d, "0.log"), [("09:50:00.000000000", START), ("10:29:58.000000000", OOM)])
cri(os.path.join(d, "1.log"), [("10:30:00.000000000", START)])

os.makedirs(node, exist_ok=True)
with open(os.path.join(node, "kubelet.log"), "w") as f:
    f.write('I1130 10:00:10.000000    2211 kubelet.go:2536] "SyncLoop (probe)" probe="readiness" '
            'status="not ready" pod="llm/web-0"\n')
    f.write('I1130 10:00:47.000000    2211 kubelet.go:2536] "SyncLoop (probe)" probe="readiness" '
            'status="ready" pod="llm/web-0"\n')

# the ingress: web-4 (10.1.0.4) refuses while it loads, then answers
os.makedirs(os.path.join(root, "lb"), exist_ok=True)
with open(os.path.join(root, "lb", "access.log"), "w") as f:
    for t, st, up in (("10:30:20", 502, "502"), ("10:30:40", 200, "200"), ("10:30:50", 200, "200")):
        f.write(f'10.2.0.4 - - [30/Nov/2026:{t} +0000] "POST /v1/completions HTTP/1.1" {st} 421 "-" '
                f'"curl/8.5.0" 95 0.004 [llm-web-8000] [] 10.1.0.4:8000 421 0.004 {up} '
                f'{t.replace(":", "")}aaaaaaaaaaaaaaaaaaaaaaaaaa\n')


def status(pod, ip, restarts, started, ready_since):
    cond = [{"type": "Initialized", "status": "True", "lastTransitionTime": f"{DAY}T09:00:00Z"}]
    if ready_since:
        cond.append({"type": "Ready", "status": "True", "lastTransitionTime": f"{DAY}T{ready_since}Z"})
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": pod, "namespace": "llm", "uid": pod},
        "spec": {"nodeName": "node-a", "containers": [{"name": "engine", "image": "vllm/vllm-openai"}]},
        "status": {"phase": "Running", "podIP": ip, "conditions": cond,
                   "containerStatuses": [{"name": "engine", "image": "vllm/vllm-openai",
                                          "containerID": "containerd://" + pod,
                                          "restartCount": restarts, "ready": bool(ready_since),
                                          "state": {"running": {"startedAt": f"{DAY}T{started}Z"}}}]},
    }


pods = {"apiVersion": "v1", "kind": "List", "items": [
    # web-0's condition is older than its restart: the kubelet's line rules
    status("web-0", "10.1.0.0", 1, "10:00:00", "09:00:30"),
    status("web-1", "10.1.0.1", 1, "10:02:00", "10:03:10"),
    status("web-2", "10.1.0.2", 1, "10:10:00", None),
    status("web-3", "10.1.0.3", 2, "10:20:30", None),
    status("web-4", "10.1.0.4", 1, "10:30:00", None),
]}
os.makedirs(os.path.join(root, "kubectl"), exist_ok=True)
with open(os.path.join(root, "kubectl", "pods.json"), "w") as f:
    json.dump(pods, f, indent=2)
    f.write("\n")

with open(os.path.join(root, "kubectl", "deployment.yaml"), "w") as f:
    f.write("""apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: llm
spec:
  template:
    spec:
      containers:
      - name: engine
        image: vllm/vllm-openai
        args: ["--model", "m"]
        livenessProbe:
          httpGet: {path: /health, port: 8000}
          periodSeconds: 30
        readinessProbe:
          httpGet:
            path: /health
            port: 8000
          initialDelaySeconds: 5
          periodSeconds: 6
""")
