// Device helpers shared by the 3xTF32 tensor-core F32 attention kernels (the forward
// attention_f32_tf32x3.cu and the backward attention_f32_tf32x3_bwd.cu); included by those .cu
// files only. The arithmetic (why two splits, why the small cross terms go first) is explained
// at the top of attention_f32_tf32x3.cu.
#pragma once

#include <cstdint>

#include "cuda/attention/attention_f32_tiled.cuh"

namespace ferrite::cuda::attention::tf32x3 {

// Rows [row0, row0 + R) of a dense [rows, D] matrix into shared [R][Stride] (the tiled.cuh
// staging with another row stride); rows past `rows` are zero-filled.
template <int D, int R, int Stride>
__device__ __forceinline__ void stage(float* dst, const float* src, int row0, int rows) {
  constexpr int kChunks = D / 4;
  static_assert((R * kChunks) % tiled::kThreads == 0 && Stride % 4 == 0);
#pragma unroll
  for (int n = 0; n < R * kChunks / tiled::kThreads; ++n) {
    const int e = static_cast<int>(threadIdx.x) + n * tiled::kThreads;
    const int r = e / kChunks, c = (e % kChunks) * 4;
    const bool valid = row0 + r < rows;
    tiled::copy16(dst + r * Stride + c, valid ? src + static_cast<std::int64_t>(row0 + r) * D + c : src, valid);
  }
}

// x = big + small. kFast = false (FERRITE_ATTENTION_F32_TF32X3=1), as specified: big =
// cvt.rna.satfinite.tf32(x), small = cvt.rna.tf32(x - big). sm_90 has no single instruction
// for these conversions: ptxas emits ~4 (rna) and ~5.5 (rna.satfinite) instructions each, so a
// split costs ~10.5 issue slots. kFast = true (FERRITE_ATTENTION_F32_TF32X3=2): big = x's bits
// + half a TF32 ulp, low 13 bits cleared (round to nearest, ties away, as cvt.rna for finite x:
// IADD + LOP), small = x - big exact in F32 and handed to the MMA as is: the tensor core reads
// the upper 19 bits of a TF32 operand register, so small is truncated (error <= 2^-10 |small|
// <= 2^-21 |x|, against 2^-22 for the rounded small). big is then clamped to the largest
// finite TF32, as cvt's satfinite does: an infinite x gives big = ±max and small = ±inf, so a
// product with a nonzero b is ±inf (small_a big_b), where an infinite big would meet b's small
// part, zero for every b that TF32 holds exactly, and give inf * 0 = NaN. The clamp is one
// min.xorsign.abs (min(|big|, max) with big's sign; sm_86+): 4 instructions a split. As two
// FMNMX (fminf, fmaxf) it cost the forward 14% (55.9 -> 48.2 TFLOP/s on the H200, B=1, H=16,
// S=2048, D=128): the kernels are bound by issue, and the splits are most of it. NaN stays NaN: the add may carry a NaN pattern such as CUDA's
// 0x7fffffff into a zero big (or the clamp turn a NaN big into ±max), but small = x - big is
// then NaN. Both splits share one limit of the scheme: an infinite a times a b above 2048 in
// magnitude can give NaN where F32 gives ±inf (big_a small_b overflows with small_b's sign).
struct Split {
  unsigned big, small;
};
template <bool kFast>
__device__ __forceinline__ Split split(float x) {
  Split s;
  if constexpr (kFast) {
    constexpr float kMaxTf32 = 0x1.ffcp127f;  // 0x7f7fe000: 10 mantissa bits set, the largest exponent
    const float rounded = __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
    float big;
    asm("min.xorsign.abs.f32 %0, %1, %2;\n" : "=f"(big) : "f"(rounded), "f"(kMaxTf32));
    s.big = __float_as_uint(big);
    s.small = __float_as_uint(x - big);
  } else {
    asm("cvt.rna.satfinite.tf32.f32 %0, %1;\n" : "=r"(s.big) : "f"(x));
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(s.small) : "f"(x - __uint_as_float(s.big)));
  }
  return s;
}
// The split of P, the forward's softmax weights (the A operand of O += P V), which split's
// overflow handling never concerns. P = expf(x - base), x a scaled score or -inf (hidden),
// base the row's running max m over this tile and the ones before (0 while m = -inf): every
// finite x is <= base, so x - base <= 0 and P <= 1 (up to expf's rounding of a few ulps), and
// hidden keys give 0; a +inf score makes base +inf and its own P expf(inf - inf) = NaN, a NaN
// score a NaN P (fmaxf skips it in m, but not in x - base). (The backward's P = exp(scale s -
// lse) is bounded so too only while lse is the forward's, >= the row max up to the score's
// rounding: it keeps split, see attention_f32_tf32x3_bwd.cu.) So:
//  - kFast = false: plain cvt.rna for big; satfinite acts only on values rounding past the
//    largest finite TF32 (0x1.ffcp127), never reached.
//  - kFast = true: split<true> without its clamp, the same bits one instruction (min.xorsign.abs)
//    cheaper on the forward's hot path. The clamp leaves any big with |big| <= 0x1.ffcp127 as it
//    is (min of |big| and the limit, with big's own sign), and P's rounded big is about 1 at
//    most. A NaN P: the add and mask leave a NaN (which the clamp may have turned into ±max)
//    or, for a pattern such as CUDA's 0x7fffffff, carry into ±0 (which the clamp kept); either
//    way small = x - big is NaN, its products are NaN and so are the row's accumulators, with
//    or without the clamp, as the NaN row's output must be.
template <bool kFast>
__device__ __forceinline__ Split split_p(float x) {
  Split s;
  if constexpr (kFast) {
    s.big = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;  // as split<true>'s rounding
    s.small = __float_as_uint(x - __uint_as_float(s.big));
  } else {
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(s.big) : "f"(x));
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(s.small) : "f"(x - __uint_as_float(s.big)));
  }
  return s;
}

__device__ __forceinline__ void mma(float (&c)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                                    unsigned b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Calls f.template operator()<D, kFast>() with the problem's head dim D (64 or 128: what the
// kernels' fits predicates admit) and the split (kFast: FERRITE_ATTENTION_F32_TF32X3=2): the one
// place where the forward's runtime choices become its kernel's template arguments (the
// backward's, which have a third mode, 1xTF32: for_head_dim_and_mode in
// attention_f32_tf32x3_bwd.cu).
template <class F>
void for_head_dim_and_split(std::int64_t head_dim, bool fast_split, F&& f) {
  if (head_dim == 64)
    fast_split ? f.template operator()<64, true>() : f.template operator()<64, false>();
  else
    fast_split ? f.template operator()<128, true>() : f.template operator()<128, false>();
}

// c += a b in 3xTF32: the small cross terms first, then big x big, into the same accumulators.
__device__ __forceinline__ void mma3(float (&c)[4], const Split (&a)[4], const Split (&b)[2]) {
  mma(c, a[0].small, a[1].small, a[2].small, a[3].small, b[0].big, b[1].big);
  mma(c, a[0].big, a[1].big, a[2].big, a[3].big, b[0].small, b[1].small);
  mma(c, a[0].big, a[1].big, a[2].big, a[3].big, b[0].big, b[1].big);
}

}  // namespace ferrite::cuda::attention::tf32x3
