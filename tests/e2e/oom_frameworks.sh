#!/bin/sh
# oom_frameworks.sh BIN: oom_events[] of findings.json for CUDA OOM messages
# that are not PyTorch's: the framework is the one the cuda-oom pattern names
# ((*MARK:framework=...) in rules/common.json), and the sizes are the ones the
# message gives. Each bundle is one serving pod's container log (CRI format)
# holding one real line from the pack's tests (sources in rules/common.json).
bin=$1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect NAME LINE FRAMEWORK TRIED CAPACITY FREE ALLOCATED: analyze a bundle
# whose pod log holds LINE; "-" is a size the message does not give (null)
expect() {
  d=$tmp/$1/nodes/gpu-node-1/var/log/pods/inference_serve-0_7c1e4a52-3b9d-4f0e-a6d2-9e81c5f03b17/serve
  mkdir -p "$d"
  printf '2026-11-30T14:02:03.025179707Z stdout F INFO starting\n2026-11-30T14:12:03.412000000Z stderr F %s\n' "$2" > "$d/0.log"
  if ! "$bin" analyze "$tmp/$1" -o "$tmp/o-$1" --quiet 2>"$tmp/err"; then
    echo "FAIL: $1: exit $?"; sed 's/^/  /' "$tmp/err"; fail=$((fail+1)); return
  fi
  got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["patterns"] if p["id"] == "gpu-oom-cascade"][0]
ev = p["oom_events"]
if len(ev) != 1:
    print("events: %d" % len(ev)); sys.exit()
e = ev[0]
v = lambda k: "-" if e[k] is None else str(e[k])
print(" ".join([e["framework"], v("tried_bytes"), v("capacity_bytes"), v("free_bytes"), v("allocated_bytes"), e["pod"] or "-"]))' "$tmp/o-$1/findings.json")
  want="$3 $4 $5 $6 $7 serve-0"
  if [ "$got" = "$want" ]; then pass=$((pass+1)); else echo "FAIL: $1: got '$got', expected '$want'"; fail=$((fail+1)); fi
}

expect tensorflow 'E tensorflow/stream_executor/cuda/cuda_driver.cc:828] failed to allocate 32.00M (33554432 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory' \
  tensorflow 33554432 - - -
expect jax 'jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 20029400304 bytes.' \
  jax 20029400304 - - -
expect onnxruntime 'Non-zero status code returned while running ReduceSum node. onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 939524096' \
  onnxruntime 939524096 - - -
expect llama.cpp 'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 279356.51 MiB on device 0: cudaMalloc failed: out of memory' \
  llama.cpp 292926531830 - - -
expect nccl 'c11efb988616:1346195:1346232 [0] include/alloc.h:105 NCCL WARN Failed to CUDA calloc 1048576 bytes' \
  nccl 1048576 - - -
# PyTorch under a memory fraction (TGI's warm-up): every size on one line
expect fraction 'OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory) Currently allocated : 12.20 GiB Requested : 1.88 GiB Device limit : 16.00 GiB Free (according to CUDA): 0 bytes' \
  pytorch 2018634629 17179869184 0 13099650253
expect cudnn 'Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED' cudnn - - - -
expect hip 'amrex::Abort::1::HIP error in file WarpX/build/_deps/fetchedamrex-src/Src/Base/AMReX_GpuDevice.cpp line 402 hipErrorOutOfMemory !!!' hip - - - -
echo "oom frameworks: $pass passed, $fail failed"
[ $fail -eq 0 ]
