#!/usr/bin/env bash
# One GPU call for issue 11's last two points: builds, runs the CUDA conformance of the
# row-wise entries and matmul_long_k on this tree, then matmul_long_k again against the GEMM
# file before the reduction-scheme fix (git 85d9b84, swapped into this build and restored
# afterwards), then the BF16 row-wise benchmarks against PyTorch. Everything it concludes goes
# to stdout; logs under $OUT (a handful of files). About 150 s on an H200.
#   scripts/gpu-norms-long-k.sh [--no-bench]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-norms}; mkdir -p "$OUT"
S=$(date +%s); el() { echo $(( $(date +%s) - S ))s; }
B=build-gpu C=build-gpu/tests/ferrite_conformance
[ -f $B/build.ninja ] || cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFERRITE_BUILD_TOOLS=ON > "$OUT/build.log" 2>&1
ninja -C $B ferrite_conformance ferrite_cli >> "$OUT/build.log" 2>&1 || { grep -E error "$OUT/build.log" | head -20; exit 1; }
echo "build done at $(el)"
conf() {  # log filter [env...]: pass/fail counts, failing tests and their first messages
  local log=$1 filter=$2; shift 2
  env "$@" $C --backend=cuda --gtest_filter="$filter" > "$OUT/$log" 2>&1
  echo "$log rc=$? at $(el): $(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test' "$OUT/$log" | tr '\n' ' ')"
  grep -E '^\[  FAILED  \] Ops' "$OUT/$log" | sort -u
  grep -E 'Failure|ulps|element|got|case ' "$OUT/$log" | head -${MSG_LINES:-12}
}
conf conformance_current.log '*norm*:*softmax*:*matmul_long_k*' FERRITE_LOG_GEMM=1
echo "GEMM plans (current):"; grep -E '^ferrite gemm' "$OUT/conformance_current.log" | sort | uniq -c | head -12
gemm=src/cuda/matmul/cublaslt_gemm.cpp
cp $gemm "$OUT/gemm_current.cpp"
# The pre-fix file where git history is at hand; otherwise (a copy of the tree without .git)
# the current file with the reduction-scheme mask opened to every scheme, as before the fix.
if git show 85d9b84:$gemm > "$OUT/gemm_old.cpp" 2>/dev/null; then cp "$OUT/gemm_old.cpp" $gemm; echo "old GEMM: git 85d9b84"
else sed -i 's/return output == DType::F16 || output == DType::BF16 ? CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE/return false ? CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE/' $gemm
  grep -q 'return false ? CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE' $gemm && echo "old GEMM: current file, mask opened" || echo "old GEMM: sed did not apply"; fi
if ninja -C $B ferrite_conformance > "$OUT/build_old.log" 2>&1; then
  MSG_LINES=30 conf conformance_old_gemm.log '*matmul_long_k*' FERRITE_LOG_GEMM=1
  echo "GEMM plans (old):"; grep -E '^ferrite gemm' "$OUT/conformance_old_gemm.log" | sort | uniq -c | head -12
else echo "old GEMM file does not build:"; grep -E error "$OUT/build_old.log" | head; fi
cp "$OUT/gemm_current.cpp" $gemm
ninja -C $B ferrite_conformance ferrite_cli > /dev/null 2>&1
[ "${1:-}" = --no-bench ] && exit 0
timeout 200 python3 bench/compare_torch.py $B/ferrite --out "$OUT" \
  --filter layer_norm_bf16,rms_norm_bf16,layer_norm_backward_bf16,softmax_bf16,log_softmax_bf16 > "$OUT/bench.log" 2>&1
echo "compare_torch rc=$? at $(el)"; cat "$OUT/compare_torch.md" 2>/dev/null || tail -5 "$OUT/bench.log"
