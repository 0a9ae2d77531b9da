#!/bin/sh
# questions.sh BIN: the playbook's questions answered from what the serving
# pods logged (detect/questions.c): the largest batch and the longest
# prompt strictly before the first CUDA OOM, from every engine's own lines
# (vLLM's metrics line, TGI's batch spans, a structured request log with
# batch_size and prompt_tokens, hostPath request logs), and the batch the
# OOM struck when the crash dump names it.
bin=$1
. tests/e2e/lib.sh
pods=$tmp/b/nodes/gpu-node-1/var/log/pods
d=$pods/inference_vllm-0_11111111-2222-4333-8444-555555555555/vllm
t=$pods/inference_tgi-0_21111111-2222-4333-8444-555555555555/tgi
h=$tmp/b/nodes/gpu-node-2/var/log/serving/vllm-1
mkdir -p "$d" "$t" "$h" "$tmp/b/kube"
# the pods the listing knows: hostPath logs find theirs by folder name
cat > "$tmp/b/kube/pods.json" <<'EOF'
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "vllm-1", "namespace": "inference", "uid": "u-1"},
  "spec": {"nodeName": "gpu-node-2", "containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.6.6"}]},
  "status": {"phase": "Running", "podIP": "10.244.2.10",
   "containerStatuses": [{"name": "vllm", "ready": true, "restartCount": 0,
     "state": {"running": {"startedAt": "2026-11-30T13:00:00Z"}}}]}}]}
EOF
cat > "$d/0.log" <<'EOF'
2026-11-30T14:00:00.000000Z stdout F INFO 11-30 14:00:00 metrics.py:396] Avg prompt throughput: 812.4 tokens/s, Avg generation throughput: 40.1 tokens/s, Running: 21 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 71.2%, CPU KV cache usage: 0.0%.
2026-11-30T14:05:00.000000Z stdout F {"ts":"2026-11-30T14:05:00.000Z","level":"info","logger":"app.requests","event":"request_admitted","prompt_tokens":30111,"max_tokens":512,"batch_size":23}
2026-11-30T14:10:00.000000Z stderr F {"timestamp":"2026-11-30T14:10:00.000000Z","level":"ERROR","message":"Engine background task failed","failed_batch":{"batch_size":29,"max_prompt_tokens":31777},"exc_info":"RuntimeError: CUDA error: out of memory"}
2026-11-30T14:12:00.000000Z stdout F {"ts":"2026-11-30T14:12:00.000Z","level":"info","logger":"app.requests","event":"request_admitted","prompt_tokens":32760,"max_tokens":512,"batch_size":64}
EOF
cat > "$t/0.log" <<'EOF'
2026-11-30T14:09:00.000000Z stdout F 2026-11-30T14:09:00.000000Z  INFO batch{batch_size=24}:prefill:prefill{id=7 size=24}: text_generation_router::infer: router/src/infer.rs:612: Prefill
EOF
# a hostPath request log of another pod on another node, rotated
printf '%s\n' '{"ts":"2026-11-30T13:59:00.000Z","level":"info","event":"request_admitted","prompt_tokens":31500,"batch_size":19}' > "$h/app.log.1"
printf '%s\n' '{"ts":"2026-11-30T14:09:30.000Z","level":"info","event":"request_admitted","prompt_tokens":30999,"batch_size":26}' > "$h/app.log"
"$bin" analyze "$tmp/b" -o "$tmp/o" --quiet
rc=$?
[ $rc -eq 0 ] && ok || ko "analyze exited $rc"
python3 - "$tmp/o/findings.json" > "$tmp/got" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
p = next(p for p in f["patterns"] if p["id"] == "gpu-oom-cascade")
q = next(q for q in p["questions"] if q["id"] == "max-batch-and-seq")["data"]
fb = q.get("failing_batch") or {}
print(q["max_batch_size"], q["max_seq_len"], fb.get("size"), fb.get("max_prompt_tokens"), q["window_end"])
PY
# 26 (the hostPath log, 14:09:30) beats TGI's 24 and the metrics' 21; the
# 64 and 32760 after the OOM do not count; the dump names the struck batch
want="26 31500 29 31777 2026-11-30T14:10:00.000Z"
[ "$(cat "$tmp/got")" = "$want" ] && ok || ko "max-batch-and-seq: got '$(cat "$tmp/got")', expected '$want'"
echo "questions: $pass passed, $fail failed"
[ $fail -eq 0 ]
