#!/usr/bin/env bash
# The Python package on a GPU machine, in the current Python environment (the one with PyTorch,
# CuPy and JAX): builds and installs it without network (--no-build-isolation: nanobind and
# scikit-build-core must be installed), runs python/tests (CUDA cases included, the PyTorch,
# CuPy and JAX interop tests where importable), the DLPack lifetime and stream tests under
# compute-sanitizer memcheck when it is there, and the overhead benchmark.
#   scripts/gpu-python-check.sh        logs under $OUT (or ./gpu-python-out)
#   PACK_LOGS=0 scripts/gpu-python-check.sh   keeps the logs as files (default: one archive,
#       gpu-python-logs.tar.gz)
#   BUILD_DIR=build-gpu scripts/gpu-python-check.sh   builds in that CMake directory (its
#       options kept), so a library already built there by scripts/gpu-check.sh is reused
#   MEMCHECK_ONLY=1 scripts/gpu-python-check.sh   install and the compute-sanitizer run only
#       (no full pytest run, no overhead benchmark)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-python-out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
status=0
echo "== pip install (log: $OUT/pip.log)"
reuse=()
if [ -n "${BUILD_DIR:-}" ]; then
  reuse=("-Cbuild-dir=$BUILD_DIR")
  for opt in FERRITE_BUILD_TESTS FERRITE_BUILD_TOOLS FERRITE_BUILD_EXAMPLES; do
    value=$(sed -n "s/^$opt:BOOL=//p" "$BUILD_DIR/CMakeCache.txt" 2>/dev/null || true)
    [ -n "$value" ] && reuse+=("-Ccmake.define.$opt=$value")
  done
fi
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$PY" -m pip install -v --no-build-isolation ${reuse[@]+"${reuse[@]}"} . >"$OUT/pip.log" 2>&1 ||
  { echo "pip install failed: tail of $OUT/pip.log"; tail -30 "$OUT/pip.log"; exit 1; }
if [ "${MEMCHECK_ONLY:-0}" != 1 ]; then
  echo "== pytest"
  "$PY" -m pytest -q -rs python/tests 2>&1 | tee "$OUT/pytest.log" | tail -25
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if command -v compute-sanitizer >/dev/null || [ -x /usr/local/cuda/bin/compute-sanitizer ]; then
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  echo "== compute-sanitizer memcheck: DLPack lifetimes and streams"
  "$CS" --tool memcheck --target-processes all --error-exitcode 9 \
    "$PY" -m pytest -q python/tests/test_dlpack.py -k "lifetime or busy or torch or cupy" 2>&1 |
    tee "$OUT/memcheck.log" | tail -8
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if [ "${MEMCHECK_ONLY:-0}" != 1 ]; then
  echo "== overhead"
  "$PY" python/bench/overhead.py --json "$OUT/overhead.json" 2>&1 | tee "$OUT/overhead.log"
fi
# One archive instead of five logs (PACK_LOGS=0 keeps them), as scripts/gpu-check.sh does.
if [ "${PACK_LOGS:-1}" = 1 ]; then
  ( cd "$OUT" && files=$(ls pip.log pytest.log memcheck.log overhead.log overhead.json 2>/dev/null) &&
    [ -n "$files" ] && tar czf gpu-python-logs.tar.gz $files && rm -f $files )
fi
exit $status
