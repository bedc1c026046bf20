#!/usr/bin/env bash
# The one command for a GPU machine: configure and build with every core, run every test
# (the `cuda` ones included: none may be skipped here), compute-sanitizer memcheck on the
# CUDA tests, then the benchmarks against PyTorch. Logs and summary.txt go to $OUT
# (default: ./gpu-check-out). Exit status: non-zero when anything failed.
#
# Narrowing a run (for work on one family; a full check uses neither):
#   TEST_FILTER=pattern   gtest filter for the conformance and CUDA test programs
#   FILTERED_RUN=0        with TEST_FILTER: no extra native run of the filtered cases after ctest
#                         (ctest has run them already; the filter then only narrows memcheck)
#   BENCH_FILTER=a,b      benchmark cases named a or b (globs too: softmax*,*_bf16)
#   SKIP_BENCH=1          no benchmarks
#   CTEST_EXCLUDE=regex   ctest programs left out (e.g. conformance_cpu: the CPU backend's suite,
#                         which CI runs, when device time is short); the summary says so
# A full check no longer fits one 10-minute device call (the conformance memcheck alone takes
# over 6 minutes beside ctest): run it as two calls on the same warm machine, the build reused:
#   SKIP_MEMCHECK=1       build, ctest (and benchmarks), no compute-sanitizer
#   MEMCHECK_ONLY=1       build (a no-op when warm), compute-sanitizer only, nothing else
#   PACK_LOGS=0           keep the logs as separate files; by default every log but
#                         summary.txt goes into $OUT/gpu-check-logs.tar.gz at the end (a
#                         remote runner that returns only a few files then returns the summary)
#   MEMCHECK_MAX_ELEMENTS=n  under memcheck, conformance cases with more input elements are left out
#                         (default 65536; empty: none); the summary says how many
#   MEMCHECK_SHARDS=n     the conformance memcheck as n GoogleTest shards side by side
#                         (default 8 with MEMCHECK_ONLY=1, else 4): one process under memcheck
#                         runs about ten cases a second, the GPU has room for several
#   MEMCHECK_FUZZ_CALLS=n the API fuzz's calls under memcheck (CudaApiFuzz, a run of its own;
#                         default 3000; ctest's native run makes the full 20000)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-check-out}
BUILD=${BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: >"$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }

note "== ferrite gpu-check $(date -u +%FT%TZ) on $(hostname)"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader 2>&1 | tee -a "$summary"

# ---- build ----
start=$(date +%s)
if ! cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/configure.log" 2>&1 ||
   ! cmake --build "$BUILD" -j"$(nproc)" >"$OUT/build.log" 2>&1; then
  note "BUILD FAILED (see build.log)"; tail -40 "$OUT/build.log"; exit 1
fi
note "build: $(( $(date +%s) - start )) s with $(nproc) cores"
"$BUILD/ferrite" info 2>&1 | tee -a "$summary"

gtest_filter=${TEST_FILTER:+--gtest_filter=$TEST_FILTER}
start=$(date +%s)

# ---- compute-sanitizer, started first: it is the longest step and runs beside the tests ----
memcheck=1
[ "${SKIP_MEMCHECK:-0}" = 1 ] && { memcheck=0; note "compute-sanitizer: skipped (SKIP_MEMCHECK=1)"; }
if [ $memcheck = 0 ]; then
  :
elif command -v compute-sanitizer >/dev/null; then
  # The out-of-memory test fails an allocation on purpose, which memcheck reports as an API
  # error; CudnnAttentionLarge and CudnnMaskedBackwardLarge run benchmark-sized attention
  # (seconds natively, too slow under memcheck); every other CUDA test runs under it. The runs go side by side (they share the
  # GPU without trouble, and with the test programs that ctest runs meanwhile).
  shards=${MEMCHECK_SHARDS:-$([ "${MEMCHECK_ONLY:-0}" = 1 ] && echo 8 || echo 4)}
  # Under memcheck the conformance cases stop at this many input elements (every op and dtype
  # still runs; ctest's native runs keep the large cases): the whole suite did not finish in
  # 7 minutes without it. MEMCHECK_MAX_ELEMENTS= (empty) runs every case.
  memcheck_limit=${MEMCHECK_MAX_ELEMENTS-65536}
  [ -n "$memcheck_limit" ] && note "compute-sanitizer: conformance cases with more than $memcheck_limit input elements left out (MEMCHECK_MAX_ELEMENTS)"
  memcheck_runs=(); memcheck_logs=(); memcheck_env=(); memcheck_flags=()
  for ((k = 0; k < shards; ++k)); do
    memcheck_runs+=("ferrite_conformance --backend=cuda --gtest_brief=1 ${gtest_filter}")
    memcheck_logs+=("$OUT/sanitizer-conformance-$((k + 1))of$shards.log")
    memcheck_env+=("GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$k ${memcheck_limit:+FERRITE_CONFORMANCE_MAX_ELEMENTS=$memcheck_limit}")
    memcheck_flags+=("")
  done
  if [ -z "${TEST_FILTER:-}" ]; then
    memcheck_runs+=("ferrite_cuda_tests --gtest_brief=1 --gtest_filter=-*OutOfMemory*:CudnnAttentionLarge.*:CudnnMaskedBackwardLarge.*:CudaApiFuzz.*")
    memcheck_logs+=("$OUT/sanitizer-ferrite_cuda_tests.log"); memcheck_env+=(""); memcheck_flags+=("")
    # The API fuzz in a run of its own: fewer calls (20000 would not finish under memcheck), a
    # longer per-call limit (memcheck slows the first cuDNN/cuSOLVER/cuFFT calls most), and no
    # report of failed API calls: the fuzz asks for absurd sizes on purpose, and the failed
    # cudaMallocAsync behind each Error(OutOfMemory) would count as an error. Any other failed
    # CUDA call still fails the fuzz itself (an Error(Cuda) or a device fault).
    memcheck_runs+=("ferrite_cuda_tests --gtest_brief=1 --gtest_filter=CudaApiFuzz.*")
    memcheck_logs+=("$OUT/sanitizer-api-fuzz.log")
    memcheck_env+=("FERRITE_FUZZ_CALLS=${MEMCHECK_FUZZ_CALLS:-3000} FERRITE_FUZZ_CALL_TIMEOUT=300")
    memcheck_flags+=("--report-api-errors no")
  fi
  pids=()
  for i in "${!memcheck_runs[@]}"; do
    env ${memcheck_env[$i]} FERRITE_TEST_TRACE="$OUT/last-test-memcheck-$i.txt" timeout "${MEMCHECK_TIMEOUT_S:-420}" \
      compute-sanitizer --tool memcheck ${memcheck_flags[$i]} --error-exitcode 99 $BUILD/tests/${memcheck_runs[$i]} \
      >"${memcheck_logs[$i]}" 2>&1 &
    pids+=($!)
  done
else
  note "compute-sanitizer not found"; status=1
fi

if [ "${MEMCHECK_ONLY:-0}" != 1 ]; then
# ---- tests ----
# ctest runs every program once, four at a time; -V keeps their own output (each line
# prefixed with its test's number), from which the counts come.
# The conformance program writes the test it is in to FERRITE_TEST_TRACE: after a crash, the
# file names the test that crashed.
export FERRITE_TEST_TRACE="$OUT/last-test.txt"
ctest --test-dir "$BUILD" -j4 -V --output-on-failure --no-tests=error ${CTEST_EXCLUDE:+-E "$CTEST_EXCLUDE"} \
  >"$OUT/ctest.log" 2>&1 || status=1
[ -n "${CTEST_EXCLUDE:-}" ] && note "ctest: programs matching '$CTEST_EXCLUDE' left out (CTEST_EXCLUDE)"
note "ctest: $(( $(date +%s) - start )) s"
if grep -qE "SEGFAULT|Segmentation fault|Child aborted|Exception: " "$OUT/ctest.log"; then
  note "a test program crashed; the last conformance test started: $(cat "$FERRITE_TEST_TRACE" 2>/dev/null)"
  # The conformance program prints its call stack when it dies of a signal; name the frames.
  grep -A 24 "fatal signal in the conformance program" "$OUT/ctest.log" | sed 's/^[0-9]*: //' |
    grep -oE '^[^ (]+\(\+0x[0-9a-f]+\)|^[^ (]+\([A-Za-z_][^)]*\)' | head -12 | while IFS= read -r frame; do
      module=${frame%%(*}; offset=${frame#*(+}; offset=${offset%)}
      case $frame in *"(+0x"*) note "  $frame: $(addr2line -f -C -e "$module" "$offset" 2>/dev/null | head -1)";;
                     *) note "  $frame";; esac
    done
fi
grep -E "tests passed|tests failed|\(Skipped\)|\(Failed\)|Not Run" "$OUT/ctest.log" | tee -a "$summary"
grep -E "^[0-9]+: (conformance on|\[==========\] [0-9]+ tests? from .* ran|\[  (PASSED|FAILED|SKIPPED)  \] [0-9]+ tests?)" \
  "$OUT/ctest.log" | tee -a "$summary"
grep -E "^[0-9]+: \[  FAILED  \] [A-Za-z]" "$OUT/ctest.log" | sort -u | head -40 | tee -a "$summary"
if grep -q "(Skipped)" "$OUT/ctest.log"; then note "ERROR: tests were skipped on a GPU machine"; status=1; fi
# A GoogleTest case that skips itself inside a program that passes is a skip too. The one
# exception is a multi-GPU case on a machine with one GPU: reported as not run, not hidden.
gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
skipped=$(grep -E "^[0-9]+: \[  SKIPPED \] [A-Za-z]" "$OUT/ctest.log" | sort -u)
if [ "$gpus" -lt 2 ]; then
  multi=$(echo "$skipped" | grep -E "CopiesBetweenDevices" || true)
  [ -n "$multi" ] && note "NOT RUN (needs 2 GPUs, this machine has $gpus): $(echo "$multi" | sed 's/.*SKIPPED \] //' | tr '\n' ' ')"
  skipped=$(echo "$skipped" | grep -vE "CopiesBetweenDevices" || true)
fi
if [ -n "$skipped" ]; then
  note "ERROR: test cases skipped themselves on a GPU machine:"
  echo "$skipped" | tee -a "$summary"; status=1
fi
if [ -n "${TEST_FILTER:-}" ] && [ "${FILTERED_RUN:-1}" = 1 ]; then
  "$BUILD/tests/ferrite_conformance" --backend=cuda $gtest_filter --gtest_brief=1 2>&1 |
    grep -E "^\[  (PASSED|FAILED) |tests? from .* ran" | sed "s/^/filtered conformance: /" | tee -a "$summary"
fi

fi  # MEMCHECK_ONLY

# ---- compute-sanitizer results ----
if [ $memcheck = 1 ] && command -v compute-sanitizer >/dev/null; then
  for i in "${!memcheck_runs[@]}"; do
    run="${memcheck_env[$i]:+${memcheck_env[$i]} }${memcheck_runs[$i]}"; log=${memcheck_logs[$i]}
    if wait "${pids[$i]}"; then
      note "compute-sanitizer memcheck ($run): $(grep -E 'tests? from .* ran' "$log" | tail -1); $(grep -E 'ERROR SUMMARY' "$log" | tail -1) $(grep -oE '[0-9]+ cases with more than [0-9]+ input elements left out' "$log" | tail -1)"
    else
      note "compute-sanitizer memcheck ($run): FAILED (exit $?, 124 = timeout; last test: $(cat "$OUT/last-test-memcheck-$i.txt" 2>/dev/null)): $(grep -E 'ERROR SUMMARY|PASSED|FAILED|progress' "$log" | tail -3)"; status=1
      grep -m 20 -E "=========" "$log"
    fi
  done
  note "memcheck finished $(( $(date +%s) - start )) s after the build"
fi

# ---- benchmarks ----
if [ "${SKIP_BENCH:-0}" != 1 ] && [ "${MEMCHECK_ONLY:-0}" != 1 ]; then
  PYTHONUNBUFFERED=1 python3 bench/compare_torch.py "$BUILD/ferrite" --out "$OUT" --filter "${BENCH_FILTER:-}" 2>&1 | tee "$OUT/bench.log"
  [ -f "$OUT/compare_torch.md" ] && cat "$OUT/compare_torch.md" >>"$summary"
fi
note "gpu-check status: $status"
if [ "${PACK_LOGS:-1}" = 1 ]; then
  ( cd "$OUT" && logs=$(find . -maxdepth 1 -type f ! -name summary.txt ! -name '*.tar.gz' -printf '%P\n') &&
    [ -n "$logs" ] && tar czf gpu-check-logs.tar.gz $logs && rm -f $logs )
fi
exit $status
