#!/bin/bash
# Whether the unmasked F16/BF16 tensor-core backward kernels (attention_half_mma_bwd.cu) compile
# to the same machine code at two commits: each kernel's .text section of `nvcc -cubin
# -arch=sm_90` (ptxas -v registers and spills printed too), dumped with readelf -x and compared.
# No cuobjdump needed. Kernels are matched by their template arguments: <D, BF16> before the mask
# template parameter existed, <D, BF16, AttentionMaskKind::None> after it.
#   scripts/attention-half-mma-cubin-compare.sh BASE_COMMIT [NEW_COMMIT, default the work tree]
set -euo pipefail
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build() {  # build COMMIT|"" OUT
  local src=$root
  if [ -n "$1" ]; then
    src=$tmp/src-$1
    mkdir -p "$src" && git -C "$root" archive "$1" src include | tar -x -C "$src"
  fi
  /usr/local/cuda/bin/nvcc -I"$src/include" -I"$root/build/generated" -I"$src/src" -O3 -DNDEBUG -arch=sm_90 \
    --expt-relaxed-constexpr -std=c++20 -Xptxas -v -cubin "$src/src/cuda/attention/attention_half_mma_bwd.cu" \
    -o "$2.cubin" 2> "$2.ptxas"
  grep -E "Compiling entry|Used|spill" "$2.ptxas" | paste - - - |
    sed -E 's/.*(half_[a-z]+_kernel)ILi([0-9]+)ELb([01])E(LNS_17AttentionMaskKindE([0-9]))?.*stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads.*Used ([0-9]+) registers.*/  \1 D=\2 bf16=\3 mask=\5 spills=\6\/\7 registers=\8/'
}
echo "base ${1}:"; build "$1" "$tmp/base"
echo "new ${2:-work tree}:"; build "${2:-}" "$tmp/new"
num() { readelf -S -W "$1" 2>/dev/null | grep -E "\] \.text\.[^ ]*$2" | sed -E 's/^ *\[ *([0-9]+)\].*/\1/'; }
status=0
for k in half_dq_kernel half_dkdv_kernel; do for d in 64 128; do for b in 0 1; do
  pick() { num "$1" "${k}ILi${d}ELb${b}ELNS_17AttentionMaskKindE0EEEv" || true; }
  o=$(pick "$tmp/base.cubin"); [ -n "$o" ] || o=$(num "$tmp/base.cubin" "${k}ILi${d}ELb${b}EEEv")
  n=$(pick "$tmp/new.cubin"); [ -n "$n" ] || n=$(num "$tmp/new.cubin" "${k}ILi${d}ELb${b}EEEv")
  readelf -x "$o" "$tmp/base.cubin" 2>/dev/null | tail -n +3 > "$tmp/a.hex"
  readelf -x "$n" "$tmp/new.cubin" 2>/dev/null | tail -n +3 > "$tmp/b.hex"
  if [ -s "$tmp/a.hex" ] && cmp -s "$tmp/a.hex" "$tmp/b.hex"; then r="identical"; else r="DIFFERENT"; status=1; fi
  echo "$k<$d, bf16=$b, unmasked>: $(wc -l < "$tmp/a.hex") / $(wc -l < "$tmp/b.hex") hex lines: $r"
done; done; done
exit $status
