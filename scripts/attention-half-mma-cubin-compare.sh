#!/bin/bash
# Whether the F16/BF16 tensor-core attention kernels (attention_half_mma_bwd.cu: dq and dk/dv,
# attention_half_mma_fwd.cu: the forward; every instantiation, masked and unmasked) compile to
# the same machine code at two commits: each kernel's .text section of `nvcc -cubin -arch=sm_90`
# (ptxas -v registers and spills printed too), dumped with readelf -x and compared byte for byte.
# No cuobjdump needed. Kernels are matched by name, less the anonymous namespace's hash (it
# follows the file's contents); a kernel on one side only is reported MISSING (a commit before
# the backward's mask template parameter names <D, BF16> what is now <D, BF16, None>). Exit
# status 0 when every kernel of both files is identical. Needs a configured build/ (generated
# headers). FILES (names in src/cuda/attention, no .cu) picks other files, as
# FILES="attention_f32_tiled_bwd attention_f32_tf32x3_bwd" for the F32 backwards that share
# attention_f32_tiled.cuh's key_block with the half backward.
#   [FILES=...] scripts/attention-half-mma-cubin-compare.sh BASE_COMMIT [NEW_COMMIT, default the work tree]
set -euo pipefail
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=${FILES:-attention_half_mma_bwd attention_half_mma_fwd}
build() {  # build COMMIT|"" OUTDIR
  local src=$root
  if [ -n "$1" ]; then
    src=$tmp/src-$1
    mkdir -p "$src" && git -C "$root" archive "$1" src include | tar -x -C "$src"
  fi
  mkdir -p "$2"
  for f in $files; do
    [ -f "$src/src/cuda/attention/$f.cu" ] || { echo "  $f.cu: absent"; continue; }
    /usr/local/cuda/bin/nvcc -I"$src/include" -I"$root/build/generated" -I"$src/src" -O3 -DNDEBUG -arch=sm_90 \
      --expt-relaxed-constexpr -std=c++20 -Xptxas -v -cubin "$src/src/cuda/attention/$f.cu" -o "$2/$f.cubin" \
      2> "$2/$f.ptxas"
    grep -E "Compiling entry|Used|spill" "$2/$f.ptxas" | paste - - - |
      sed -E 's/.*(half_[a-z]+_kernel)ILi([0-9]+)ELb([01])E(LNS_17AttentionMaskKindE|Li)?([0-9])?.*stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads.*Used ([0-9]+) registers.*/  \1 D=\2 bf16=\3 mask=\5 spills=\6\/\7 registers=\8/'
  done
}
echo "base ${1}:"; build "$1" "$tmp/base"
echo "new ${2:-work tree}:"; build "${2:-}" "$tmp/new"
# "index name" of every .text section, the anonymous namespace's hash dropped from the name.
sections() {
  readelf -S -W "$1" 2>/dev/null | sed -nE 's/^ *\[ *([0-9]+)\] (\.text\.[^ ]+) .*/\1 \2/p' |
    sed -E 's/_GLOBAL__N__[0-9a-f]+_[0-9]+_[A-Za-z0-9_]+_cu_[0-9a-f]+/@/'
}
status=0
for f in $files; do
  a=$tmp/base/$f.cubin b=$tmp/new/$f.cubin
  if [ ! -f "$a" ] || [ ! -f "$b" ]; then echo "$f: not on both sides"; status=1; continue; fi
  declare -A in_new=()
  while read -r i n; do in_new[$n]=$i; done < <(sections "$b")
  same=0 total=0
  while read -r i n; do
    total=$((total + 1))
    k=$(sed -E 's/^\.text\._ZN7ferrite4cuda9attention[0-9]+@//; s/EEEv.*//' <<< "$n")
    j=${in_new[$n]:-}
    if [ -z "$j" ]; then echo "  $k: MISSING in new"; status=1; continue; fi
    readelf -x "$i" "$a" 2>/dev/null | tail -n +3 > "$tmp/a.hex"
    readelf -x "$j" "$b" 2>/dev/null | tail -n +3 > "$tmp/b.hex"
    if [ -s "$tmp/a.hex" ] && cmp -s "$tmp/a.hex" "$tmp/b.hex"; then
      same=$((same + 1))
    else
      echo "  $k: DIFFERENT ($(wc -l < "$tmp/a.hex") / $(wc -l < "$tmp/b.hex") hex lines)"
      status=1
    fi
  done < <(sections "$a")
  echo "$f: $same of $total kernels' .text identical (new has ${#in_new[@]})"
  unset in_new
done
exit $status
