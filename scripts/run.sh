#!/usr/bin/env bash
# The main job: build ferrite and run its benchmark, on the GPU when there is one (with the
# PyTorch comparison when PyTorch is importable), on the CPU backend otherwise.
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
if [ "$("$BUILD/ferrite" info | grep -c '^  cuda:')" -gt 0 ] && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  python3 bench/compare_torch.py "$BUILD/ferrite" --out "${OUT:-$BUILD/bench-out}"
else
  "$BUILD/ferrite" bench "$@"
fi
