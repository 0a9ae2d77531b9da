#!/bin/sh
# ceilings.sh BIN: batching ceilings configured by the operator, not the
# engine's default nor an unset value: vLLM's argument dump with
# max_num_seqs=None (V1) or =256 (V0's default) is no cap, and says
# vLLM's default applied; a server.yaml kept in a ConfigMap gives the cap
# and the queue delay (ms to µs), and its kv_cache: contiguous says the
# KV cache is not paged; TGI's max_concurrent_requests is a queue limit,
# not a batch cap.
bin=$1
. tests/e2e/lib.sh

mk() { # DIR: a pod log of one line ($2) plus optional manifest files
  d=$1/nodes/n1/var/log/pods/llm_srv-0_00000000-0000-0000-0000-0000000000c1/engine
  mkdir -p "$d"
  printf '2026-11-30T10:00:00.000000000Z stdout F %s\n' "$2" >"$d/0.log"
}
check() { # NAME DIR WANT
  "$bin" analyze "$2" -o "$tmp/o-$1" --quiet >/dev/null 2>"$tmp/err-$1"
  got=$(python3 - "$tmp/o-$1/findings.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["patterns"] if p["id"] == "gpu-oom-cascade"][0]
q = {q["id"]: q["data"] for q in p["questions"]}
c = q["batching-ceilings"]
df = c["batch_cap_default"]
print(c["batch_cap_present"], c["batch_cap"], c["queue_delay_cap_present"], c["queue_delay_us"],
      df and (df["engine"], df["value"]), q["paged-attention"]["enabled"], q["paged-attention"]["source"])
PY
)
  [ "$got" = "$3" ] && ok || ko "$1: got '$got', want '$3'"
}

mk "$tmp/v1" "INFO 11-30 10:00:00 [api_server.py:1040] args: Namespace(host=None, port=8000, model='m', max_model_len=None, max_num_seqs=None, gpu_memory_utilization=0.9)"
check vllm-v1 "$tmp/v1" "False None False None ('vllm', 256) None None"
mk "$tmp/v0" "INFO 11-30 10:00:00 api_server.py:496] args: Namespace(host=None, port=8000, model='m', max_num_seqs=256, max_model_len=None)"
check vllm-v0-default "$tmp/v0" "False None False None ('vllm', 256) None None"

mk "$tmp/hf" "INFO:     Application startup complete."
mkdir -p "$tmp/hf/deploy"
cat >"$tmp/hf/deploy/server-config.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: srv-config
  namespace: llm
data:
  server.yaml: |
    model:
      attn_implementation: sdpa
      kv_cache: contiguous
    batching:
      max_batch_size: 16
      batch_timeout_ms: 50
Y
check configmap "$tmp/hf" "True 16 True 50000 None False kv_cache"
cap=$(q "$tmp/o-configmap/inquest.db" "SELECT c.key || '=' || c.value || ' @' || qt.line || ' ' || c.source FROM config_settings c JOIN quotes qt ON qt.record_id = c.record_id WHERE c.key = 'max_batch_size'")
[ "$cap" = "max_batch_size=16 @12 configmap" ] && ok || ko "ConfigMap's max_batch_size: $cap"

mk "$tmp/tgi" "2024-04-19T08:20:18.980000Z  INFO text_generation_launcher: Args { max_concurrent_requests: 128, max_batch_size: None }"
mkdir -p "$tmp/tgi/deploy"
cat >"$tmp/tgi/deploy/deployment.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: srv
spec:
  template:
    spec:
      containers:
      - name: engine
        image: ghcr.io/huggingface/text-generation-inference:2.4.1
        args: ["--model-id", "m", "--max-concurrent-requests", "128"]
Y
check tgi-concurrency "$tmp/tgi" "False None False None None True engine"

echo "ceilings: $pass passed, $fail failed"
[ $fail -eq 0 ]
