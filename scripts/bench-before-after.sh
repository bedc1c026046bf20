#!/usr/bin/env bash
# Every benchmark case timed on an older tree and on this one, in the same device call, and the
# two tables compared case by case (bench/compare_runs.py): issue 12's "no op gets slower on
# contiguous input" check, or any before/after question.
#   scripts/bench-before-after.sh OLD_TREE          from the repository root, on a GPU machine
#   FILTER='add_*,sum_*' scripts/bench-before-after.sh OLD_TREE   only those cases (patterns both trees
#     know: a pattern that matches no case is an error of `ferrite bench`)
#   CMAKE_ARGS=-DFERRITE_CUDA=OFF ...   extra configure options for both builds (a CPU-only check)
#   AFTER_BIN=build-gpu/ferrite ...      this tree's `ferrite` program, already built: only the old
#     tree is built here (its build may run beside another build of this tree)
# OLD_TREE is a source tree of the older commit, e.g. made here with
#   mkdir -p .deps/before && git archive 1decf3e | tar -x -C .deps/before
# (.deps/ is ignored and travels to the GPU machine with `carry`; the old tree finds the
# dependencies there through a link to this tree's .deps). Both `ferrite` programs are built
# side by side (tests and examples off), then each runs `ferrite bench --json`, the old one
# first; logs and both JSON files go to $OUT (default ./before-after-out).
set -uo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: scripts/bench-before-after.sh OLD_TREE}
[ -f "$old/CMakeLists.txt" ] || { echo "$old is not a ferrite source tree"; exit 1; }
OUT=${OUT:-$PWD/before-after-out}
mkdir -p "$OUT"
old=$(cd "$old" && pwd)
[ -e "$old/.deps" ] || ln -s "$PWD/.deps" "$old/.deps"
start=$(date +%s)
jobs=$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))
build() {  # build SOURCE_DIR BUILD_DIR LOG
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFERRITE_BUILD_TESTS=OFF ${CMAKE_ARGS:-} \
    -DFERRITE_BUILD_EXAMPLES=OFF >"$3" 2>&1 && cmake --build "$2" -j"$jobs" --target ferrite >>"$3" 2>&1
}
after_bin=${AFTER_BIN:-build-after/ferrite}
build "$old" "$old/build-before" "$OUT/build-before.log" & before_pid=$!
[ -n "${AFTER_BIN:-}" ] || { build . build-after "$OUT/build-after.log" & after_pid=$!; }
wait $before_pid || { echo "the old tree did not build:"; tail -20 "$OUT/build-before.log"; exit 1; }
[ -n "${AFTER_BIN:-}" ] || wait $after_pid || { echo "this tree did not build:"; tail -20 "$OUT/build-after.log"; exit 1; }
[ -x "$after_bin" ] || { echo "$after_bin is not a program"; exit 1; }
echo "builds: $(( $(date +%s) - start )) s"
filter=(); [ -n "${FILTER:-}" ] && filter=(--filter "$FILTER")
"$old/build-before/ferrite" bench --json "$OUT/before.json" ${filter[@]+"${filter[@]}"} >"$OUT/bench-before.log" 2>&1 ||
  { echo "the old tree's bench failed:"; tail -5 "$OUT/bench-before.log"; exit 1; }
echo "before: $(( $(date +%s) - start )) s"
"$after_bin" bench --json "$OUT/after.json" ${filter[@]+"${filter[@]}"} >"$OUT/bench-after.log" 2>&1 ||
  { echo "this tree's bench failed:"; tail -5 "$OUT/bench-after.log"; exit 1; }
echo "after: $(( $(date +%s) - start )) s"
python3 bench/compare_runs.py "$OUT/before.json" "$OUT/after.json" --out "$OUT/before-after.md" | tail -40
