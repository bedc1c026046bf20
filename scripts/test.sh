#!/usr/bin/env bash
# Builds everything (the CUDA sources too when nvcc is present) and runs every test.
# Without a GPU the `cuda` tests report themselves skipped, with the reason; on a GPU machine
# they run. Exit status: non-zero when a test failed or when no test was found.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD=${BUILD_DIR:-build}
# The tests are switched on explicitly: scripts/run.sh configures the same build directory
# with them off, and that cached OFF would otherwise leave ctest nothing to run.
echo "== configuring $BUILD"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFERRITE_BUILD_TESTS=ON
echo "== building"
cmake --build "$BUILD" -j"$(nproc)"
echo "== testing"
status=0
ctest --test-dir "$BUILD" --output-on-failure --no-tests=error -j"$(nproc)" || status=$?
# ctest shows a skipped test as "***Skipped" only. Each test that skips prints its reason on a
# line starting "SKIPPED: ", which ctest keeps in its log: show those reasons here.
log="$BUILD/Testing/Temporary/LastTest.log"
[ -f "$log" ] && awk '/^[0-9]+\/[0-9]+ Test: / { name = $3 }
                      /^SKIPPED: / { sub(/^SKIPPED: /, ""); print "skipped " name ": " $0 }' "$log"
# The Python package, built in a virtual environment from the same build directory (so the
# library is not compiled twice: scikit-build-core reconfigures $BUILD with the extension on,
# and ninja builds only the extension), then its pytest suite. FERRITE_SKIP_PYTHON=1 skips it.
if [ "${FERRITE_SKIP_PYTHON:-0}" != 1 ]; then
  echo "== python package"
  py_status=0
  scripts/python-test.sh "$BUILD" || py_status=$?
  if [ $py_status -ne 0 ]; then
    echo "python package: FAILED (exit $py_status)"
    status=1
  fi
fi
exit $status
