#!/usr/bin/env bash
# The main job: build ferrite, train the GPT example's tiny preset (examples/gpt/: `ferrite
# train`, on the GPU when there is one, else on the CPU), then run the benchmark, on the GPU
# when there is one (with the PyTorch comparison when PyTorch is importable), on the CPU
# backend otherwise. GPT_STEPS=N changes the training length (0 skips it); RUN_BENCH=0 skips
# the benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD=${BUILD_DIR:-build}
# The tests are off here (a faster build); scripts/test.sh switches them back on in the same
# directory and reuses everything built here.
echo "== configuring $BUILD"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFERRITE_BUILD_TESTS=OFF
echo "== building"
cmake --build "$BUILD" -j"$(nproc)"
"$BUILD/ferrite" info
# The training text: the license texts of Debian's base-files package (on every Debian
# system); the repository's own docs where that directory is missing.
corpus=/usr/share/common-licenses
[ -d "$corpus" ] || corpus=docs
if [ "${GPT_STEPS:-400}" -gt 0 ]; then
  echo "== ferrite train --preset tiny --data $corpus"
  "$BUILD/ferrite" train --preset tiny --data "$corpus" --steps "${GPT_STEPS:-400}" \
    --checkpoint "$BUILD/gpt-tiny.safetensors" --json "$BUILD/gpt-tiny.json"
  echo "== ferrite generate (a sample from the checkpoint just written)"
  "$BUILD/ferrite" generate --checkpoint "$BUILD/gpt-tiny.safetensors" --prompt "This License" --tokens 200
fi
if [ "${RUN_BENCH:-1}" = 0 ]; then exit 0; fi
if [ "$("$BUILD/ferrite" info | grep -c '^  cuda:')" -gt 0 ] && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  python3 bench/compare_torch.py "$BUILD/ferrite" --out "${OUT:-$BUILD/bench-out}"
else
  "$BUILD/ferrite" bench "$@"
fi
