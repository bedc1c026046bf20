#!/usr/bin/env bash
# The CPU backend and the front end under AddressSanitizer and UndefinedBehaviorSanitizer:
# builds FERRITE_CUDA=OFF with -fsanitize=address,undefined and runs the unit tests and the
# CPU conformance suite (which prints a progress line after each tenth of its tests). Any
# sanitizer report fails the run. (The GPU side has
# compute-sanitizer in scripts/gpu-check.sh.) Takes about 15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build-sanitize}
# Eigen's SIMD paths stay on: Eigen 3.4's SSE broadcast of a std::complex<float> scalar
# (pset1<Packet2cf>, arch/SSE/Complex.h) reads it through a double*, a misaligned load to UBSan,
# and the CPU backend never instantiates it (its C64 linear algebra runs in double precision,
# cpu_linalg_common.hpp's dispatch), so this build checks the code that ships.
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S . -B "$BUILD" -G Ninja -DFERRITE_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build "$BUILD" -j"$(nproc)" --target ferrite_unit_tests ferrite_conformance
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
"$BUILD/tests/ferrite_unit_tests" --gtest_brief=1
"$BUILD/tests/ferrite_conformance" --backend=cpu --gtest_brief=1
echo "cpu-sanitize: clean"
