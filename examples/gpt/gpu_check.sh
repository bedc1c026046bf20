#!/usr/bin/env bash
# The GPT example on a GPU machine, in one go (from the repository root; logs under $OUT or
# ./gpt-gpu-out): build, the F32 parity with PyTorch on CUDA and on the CPU (20 steps' losses,
# first-step gradients), the BF16 loss curves over 200 steps, and gpt2-small throughput and peak
# memory against PyTorch eager and torch.compile.
#   BUILD_DIR=dir   builds in that CMake directory (default build-gpu); one already configured (by
#                   scripts/gpu-check.sh, tests on) is used as it is, so both scripts can share it
#   THROUGHPUT=0    parity only: no gpt2-small runs; THROUGHPUT=sdpa: ferrite BF16 and PyTorch
#                   with SDPA only (no F32 run, no explicit-attention PyTorch runs)
#   PARITY=0        no parity runs (throughput only)
set -uo pipefail
root=$(pwd)
out=${OUT:-$root/gpt-gpu-out}
build=${BUILD_DIR:-build-gpu}
mkdir -p "$out"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFERRITE_BUILD_TESTS=OFF > "$out/cmake.log" ||
    { tail -30 "$out/cmake.log"; exit 1; }
fi
ninja -C "$build" ferrite gpt_gradcheck > "$out/build.log" || { tail -30 "$out/build.log"; exit 1; }
case $build in /*) ;; *) build=$root/$build ;; esac
F=$build/ferrite
REF="python3 $root/examples/gpt/torch_reference.py"
D=/usr/share/common-licenses
[ -d "$D" ] || D=$root/docs
cd "$out"
if [ "${PARITY:-1}" != 0 ]; then
  "$build/examples/gpt/gpt_gradcheck" | tail -1
  "$F" train --preset tiny --data "$D" --steps 0 --schedule-steps 200 --checkpoint init.safetensors > /dev/null
  for dev in cuda cpu; do
    echo "== F32 parity on $dev"
    "$F" train --preset tiny --device $dev --data "$D" --resume init.safetensors --steps 20 --log-every 1 \
      --json f32_$dev.json --dump-grads grads_$dev.safetensors > train_f32_$dev.log
    $REF --checkpoint init.safetensors --data "$D" --steps 20 --device $dev --ferrite-json f32_$dev.json \
      --compare-grads grads_$dev.safetensors > parity_f32_$dev.log 2>&1
    grep -E "worst|Error|Traceback" parity_f32_$dev.log
  done
  echo "== BF16 curves, 200 steps on cuda"
  "$F" train --preset tiny --device cuda --data "$D" --resume init.safetensors --steps 200 --log-every 1 \
    --precision bf16 --json bf16.json > train_bf16.log
  $REF --checkpoint init.safetensors --data "$D" --steps 200 --device cuda --bf16 --ferrite-json bf16.json \
    > parity_bf16.log 2>&1
  grep -E "worst|Error|Traceback" parity_bf16.log
  # PyTorch's fused SDPA (like ferrite's, it never rounds the scores to BF16): the closer reference.
  $REF --checkpoint init.safetensors --data "$D" --steps 200 --device cuda --bf16 --sdpa --ferrite-json bf16.json \
    > parity_bf16_sdpa.log 2>&1
  echo "against PyTorch SDPA: $(grep -E "worst|Error|Traceback" parity_bf16_sdpa.log)"
  # The rounding points without the curves' chaos: the first step's BF16 gradients (a few 1e-3).
  "$F" train --preset tiny --device cuda --data "$D" --resume init.safetensors --steps 1 --precision bf16 \
    --json bf16_step1.json --dump-grads grads_bf16.safetensors > /dev/null
  $REF --checkpoint init.safetensors --data "$D" --steps 1 --device cuda --bf16 --sdpa --ferrite-json bf16_step1.json \
    --compare-grads grads_bf16.safetensors > parity_bf16_grads.log 2>&1
  echo "BF16 first-step gradients: $(grep -E "gradients after|Error|Traceback" parity_bf16_grads.log)"
fi
THROUGHPUT=${THROUGHPUT:-1}
if [ "$THROUGHPUT" != 0 ]; then
  echo "== gpt2-small, batch 16 x 1024"
  "$F" train --preset gpt2-small --data "$D" --steps 0 --checkpoint gpt2.safetensors > /dev/null
  precisions="bf16 f32"
  [ "$THROUGHPUT" = sdpa ] && precisions=bf16
  for precision in $precisions; do
    "$F" train --preset gpt2-small --device cuda --data "$D" --steps 15 --log-every 5 --eval-every 0 \
      --precision $precision > gpt2_$precision.log 2>&1
    echo "ferrite $precision: $(grep -E '^step +15/' gpt2_$precision.log || tail -3 gpt2_$precision.log)"
  done
  # Where ferrite's BF16 step goes, phase by phase (each phase between synchronisations).
  "$F" train --preset gpt2-small --device cuda --data "$D" --steps 6 --log-every 6 --eval-every 0 --precision bf16 \
    --profile 2>&1 | sed -n '/^profile:/,$p' | tee gpt2_bf16_profile.log
  $REF --checkpoint gpt2.safetensors --device cuda --bench 10 --bf16 --sdpa 2>&1 | grep -E "^torch|Error"
  [ "$THROUGHPUT" = sdpa ] || $REF --checkpoint gpt2.safetensors --device cuda --bench 10 --bf16 2>&1 | grep -E "^torch|Error"
  rm -f gpt2.safetensors
fi
# The logs as one archive (the GPU runner returns only a few files; safetensors stay out).
tar czf gpt-logs.tar.gz ./*.log ./*.json 2>/dev/null && rm -f ./*.log ./*.json ./*.safetensors
