#!/bin/sh
# conditions.sh BIN: the cpu-autoscaling condition reads what each HPA
# metric scales on: the cpu resource is CPU; any serving-engine statistic
# (every spelling of parse/engine_stats.c), GPU or queue metric is not; a
# name that merely contains "cpu" (vLLM's cpu_cache_usage_perc) is not CPU.
bin=$1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# hpa NAME METRIC...: a bundle whose HPA has these metrics ("cpu" is the
# cpu resource, anything else a Pods metric of that name)
hpa() {
  name=$1; shift
  mkdir -p "$tmp/$name/manifests"
  f=$tmp/$name/manifests/hpa.yaml
  printf 'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: vllm\n  namespace: inference\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: vllm\n  minReplicas: 3\n  maxReplicas: 6\n  metrics:\n' > "$f"
  for m in "$@"; do
    if [ "$m" = cpu ]; then
      printf '  - type: Resource\n    resource:\n      name: cpu\n      target:\n        type: Utilization\n        averageUtilization: 80\n' >> "$f"
    else
      printf '  - type: Pods\n    pods:\n      metric:\n        name: %s\n      target:\n        type: AverageValue\n        averageValue: "10"\n' "$m" >> "$f"
    fi
  done
}

# expect NAME PRESENT: cpu-autoscaling's present in the findings of bundle NAME
expect() {
  "$bin" analyze "$tmp/$1" -o "$tmp/o-$1" --quiet 2>"$tmp/err" || { echo "FAIL: $1: exit $?"; fail=$((fail+1)); return; }
  got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["patterns"] if p["id"] == "gpu-oom-cascade"][0]
print([c for c in p["conditions"] if c["id"] == "cpu-autoscaling"][0]["present"])' "$tmp/o-$1/findings.json")
  if [ "$got" = "$2" ]; then pass=$((pass+1)); else echo "FAIL: $1: cpu-autoscaling present $got, expected $2"; fail=$((fail+1)); fi
}

hpa cpu-only cpu;                                   expect cpu-only True
hpa cpu-and-kv cpu vllm:kv_cache_usage_perc;        expect cpu-and-kv False
hpa cpu-and-kv-old cpu vllm:gpu_cache_usage_perc;   expect cpu-and-kv-old False
hpa cpu-and-waiting cpu vllm_num_requests_waiting;  expect cpu-and-waiting False
hpa cpu-and-sglang cpu sglang:num_queue_reqs;       expect cpu-and-sglang False
hpa cpu-and-tgi cpu tgi_queue_size;                 expect cpu-and-tgi False
hpa cpu-and-dcgm cpu DCGM_FI_DEV_FB_USED;           expect cpu-and-dcgm False
hpa cpu-cache-name vllm:cpu_cache_usage_perc;       expect cpu-cache-name False
hpa rps http_requests_per_second cpu;               expect rps False
echo "conditions: $pass passed, $fail failed"
[ $fail -eq 0 ]
