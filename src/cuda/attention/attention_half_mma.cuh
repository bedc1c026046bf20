// Device helpers shared by the F16/BF16 tensor-core attention kernels (the backward
// attention_half_mma_bwd.cu and the forward attention_half_mma_fwd.cu); included by those .cu
// files only. Both stage row-major [rows][D + 8] tiles with cp.async and run the same two
// products per (own tile, streamed tile) pair with mma.sync m16n8k16 (F32 accumulators) on
// fragments from ldmatrix.x4: the score C = A_own B_streamed^T (`score`) and C, rounded to the
// dtype, times the streamed rows (`second`: the backward's dV/dK/dQ, the forward's P V). The
// index maps they use (which lane addresses which row, which accumulators make which A
// register) are in attention_half_mma_fragments.hpp, where a host unit test replays them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/attention/attention_f32_tiled.cuh"
#include "cuda/attention/attention_half_mma_fragments.hpp"

namespace ferrite::cuda::attention::half_mma {

using u16 = std::uint16_t;

// Row stride of every staged Q/K/V/dO tile, in 2-byte elements (16 bytes past a multiple of
// 128: each ldmatrix phase of 8 rows hits 8 distinct bank groups).
template <int D>
constexpr int kStride = D + 8;
static_assert(ldsm_conflict_free(kStride<64>) && ldsm_conflict_free(kStride<128>));

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes from global `src` into shared `dst`, or 16 zero bytes when !valid (src-size 0: no
// byte of `src` is read, but it must still be an address of the operand, never garbage).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
}

// Rows [row0, row0 + R) of a dense [rows, D] F16/BF16 matrix into shared [R][D + 8], 16 bytes a
// cp.async; rows past `rows` are zero-filled (src-size 0: their source, `src` itself, is not read).
// kSourceFirst: a chunk's global address is formed before its shared one (the backward's order)
// or after it (the forward's). Both copy the same bytes; nvcc 13.0 schedules the two orders
// differently, and each kernel file keeps the order it was written and reviewed with, so the
// move into this header left every kernel's machine code byte-identical
// (scripts/attention-half-mma-cubin-compare.sh). One order for both is a free choice for later,
// with the kernels' SASS then compared by hand.
template <int D, int R, bool kSourceFirst>
__device__ __forceinline__ void stage_half(u16* dst, const u16* src, int row0, int rows) {
  constexpr int kChunks = D / 8;  // 16-byte chunks a row
  static_assert((R * kChunks) % tiled::kThreads == 0);
#pragma unroll
  for (int n = 0; n < R * kChunks / tiled::kThreads; ++n) {
    const int e = static_cast<int>(threadIdx.x) + n * tiled::kThreads;
    const int r = e / kChunks, c = (e % kChunks) * 8;
    const bool valid = row0 + r < rows;
    if constexpr (kSourceFirst) {
      const u16* from = valid ? src + static_cast<std::int64_t>(row0 + r) * D + c : src;
      cp_async16(dst + r * kStride<D> + c, from, valid);
    } else {
      cp_async16(dst + r * kStride<D> + c, valid ? src + static_cast<std::int64_t>(row0 + r) * D + c : src, valid);
    }
  }
}

__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_trans(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// c += a b, m16n8k16, F32 accumulators.
template <bool kBf16>
__device__ __forceinline__ void mma16(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  if constexpr (kBf16)
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two F32 values rounded to nearest (ties to even) in the dtype, lo in the low half: one
// cvt.rn.{bf16x2,f16x2}.f32 (NaN stays NaN, overflow gives inf).
template <bool kBf16>
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  if constexpr (kBf16) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&v);
  }
}

// The F16/BF16 value whose bits are the low 16 of `bits` (the rest zero), in F32: exact (both
// widen without rounding).
template <bool kBf16>
__device__ __forceinline__ float widen(unsigned bits) {
  if constexpr (kBf16)
    return __uint_as_float(bits << 16);
  else
    return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
}

// 2^x: one MUFU.EX2 (ex2.approx.ftz.f32: relative error ~2^-22, results below 2^-126 flushed to
// 0), where expf takes ~8 instructions. NaN stays NaN, -inf gives 0, inf gives inf, as expf.
// Two forms: exp2_approx lets the compiler place (or sink) it; exp2_unconditional is volatile,
// computed for every score whatever the mask says and then dropped by a select (the backward:
// not sunk into a branch of its own; see expf_unconditional in attention_f32_tf32x3_bwd.cu).
constexpr float kLog2e = 1.4426950408889634f;
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float exp2_unconditional(float x) {
  float y;
  asm volatile("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// c[p][j] += A_p B_p^T over the D head dims, for kPairs products at once (independent
// accumulator chains): A_p's 16 own rows at shared address a[p] (this lane's ldmatrix row and
// column, own_addr_row/col), B_p's n-tile j at b[p] + j 8 rows (score_addr_row/col). Per 32
// dims: A of both k-steps by one ldmatrix.x4 each, B of n-tile j for both steps by one.
template <int D, int NT, int kPairs, bool kBf16>
__device__ __forceinline__ void score(float (&c)[kPairs][NT][4], const unsigned (&a)[kPairs],
                                      const unsigned (&b)[kPairs]) {
  constexpr unsigned kRowBytes = 2 * kStride<D>;
#pragma unroll
  for (int ch = 0; ch < D; ch += 32) {  // two k-steps of 16 dims
    unsigned af[kPairs][2][4];
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
      ldsm_x4(af[p][0], a[p] + 2 * ch);
      ldsm_x4(af[p][1], a[p] + 2 * (ch + 16));
    }
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int p = 0; p < kPairs; ++p) {
        unsigned bf[4];
        ldsm_x4(bf, b[p] + 8 * j * kRowBytes + 2 * ch);
        mma16<kBf16>(c[p][j], af[p][0], bf[0], bf[1]);
        mma16<kBf16>(c[p][j], af[p][1], bf[2], bf[3]);
      }
  }
}

// acc += C B: C (F32, NT = 2 KS score n-tiles: the backward's P or dS, the forward's P) rounded
// to the dtype as A, k-step J = score n-tiles 2J, 2J + 1 (second_row, a_from_c); B = streamed
// rows x D dims from shared address b (this lane's second_addr_row/col), by ldmatrix.x4.trans
// (two n-tiles a load).
template <int D, int NT, bool kBf16>
__device__ __forceinline__ void second(float (&acc)[D / 8][4], const float (&c)[NT][4], unsigned b) {
  constexpr unsigned kRowBytes = 2 * kStride<D>;
#pragma unroll
  for (int J = 0; J < NT / 2; ++J) {
    unsigned a[4];
#pragma unroll
    for (int r = 0; r < 4; ++r)
      a[r] = pack2<kBf16>(c[a_from_c_tile(J, r)][a_from_c_reg(r, 0)], c[a_from_c_tile(J, r)][a_from_c_reg(r, 1)]);
#pragma unroll
    for (int np = 0; np < D / 16; ++np) {  // n-tiles 2np, 2np + 1: dims 16np .. + 15
      unsigned bf[4];
      ldsm_x4_trans(bf, b + 16 * J * kRowBytes + 2 * 16 * np);
      mma16<kBf16>(acc[2 * np], a, bf[0], bf[1]);
      mma16<kBf16>(acc[2 * np + 1], a, bf[2], bf[3]);
    }
  }
}

}  // namespace ferrite::cuda::attention::half_mma
