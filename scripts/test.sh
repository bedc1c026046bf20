#!/usr/bin/env bash
# Builds everything (the CUDA sources too when nvcc is present) and runs every test.
# Without a GPU the `cuda` tests report themselves skipped; on a GPU machine they run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD=${BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)"
