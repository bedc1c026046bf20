// F32 flash-attention backward for head dims 64 and 128 whose products run on the tensor cores
// in 3xTF32: the variant of attention_f32_tiled_bwd.cu that backward() takes by default
// (FERRITE_ATTENTION_F32_TF32X3 unset or 2 = the fast split, 1 the cvt split, 0 the SIMT
// kernels; attention_kernels.cu, read once). Same problems, same
// semantics as the SIMT tiled backward: P = exp(scale q.k - lse) recomputed from the saved
// logsumexp, delta_i = dO_i . O_i from delta_kernel, dq, dk and dv with one owner block each
// (no atomics: bit for bit repeatable), hidden scores (keys past Sk, rows past Sq, top-left
// causal, rows with lse = -inf) get P = 0 and dS = 0 explicitly, and every staged row past an
// end is zero-filled by cp.async. Only the products differ: every one is 3xTF32 (big/small
// split of both operands, F32 accumulation; the arithmetic and the two splits are explained in
// attention_f32_tf32x3.cu and attention_tf32x3.cuh), each a fixed sequence of MMAs. The small
// cross terms go first into the same accumulators (mma3) in the products that sum over keys or
// rows, and into accumulators of their own, added at the end (mma3_apart), in the score
// products over the head dims.
//
// A third mode, 1xTF32 (Tf32Mode::single; on the H200 since session 13), for operands TF32 holds
// exactly: the F16/BF16 backward's widened q, k, v and dO (cuda_attention_ops.cpp,
// backward_in_f32; F16 has 11 significant bits, BF16 8, TF32 11). Every product is one MMA of
// big parts only, with no split and no cross terms: q, k, v and dO go to the tensor cores as
// their F32 bits (no instruction: their low 13 bits are zero), so S = Q K^T and dP = dO V^T are
// exact products summed in F32; the F32 intermediates P and dS, the A operands of dV = P^T dO,
// dK = dS^T Q and dQ = dS K, are rounded to nearest TF32 (cvt.rn.tf32.f32, one instruction on
// sm_90; 2^-11 relative, against the 2^-8 of cuDNN's and FlashAttention's BF16 P and dS). One
// MMA a product instead of three and no splits (score1 and second1 below); semantics, pipeline,
// the streamed tiles' layout and the fixed MMA order (repeatable bits) are the 3xTF32 kernels';
// the own rows are staged as row pairs (OwnPairs), so that the score's A fragments load in
// place. Not for general F32 operands: the tensor cores would truncate them to TF32.
//
// Both kernels run two products per (own tile, streamed tile) pair with m16n8k8 MMAs: a score
// product C = A_own B_streamed^T over the head dims, then C, turned into P or dS in registers,
// as the A fragment of C x (streamed rows x head dims). The streamed tile is read for both
// without a transposed copy; the row order that makes both reads conflict-free and the
// fragment maps are in attention_tf32x3_fragments.hpp (bwd_perm, bwd_stream_n/k), replayed
// for one warp against a plain product by tests/unit/attention_tf32x3_fragments_test.cpp and
// tied to the float4 reads below by static_asserts. Lane l (group g = l / 4, quad q = l % 4)
// holds own rows g and g + 8 of its warp's 16, streamed rows 8j + bwd_perm(2q), 8j +
// bwd_perm(2q + 1) of score n-tile j, and output dims 32c + 8q .. 32c + 8q + 7 (c < D / 32).
//
// dq kernel: a block (8 warps) owns 64 query rows and streams 64-key K/V tiles (cp.async,
// double-buffered, one barrier a tile). Warp w takes rows 16 (w % 4) .. + 15 and keys
// 32 (w / 4) .. + 31 of each tile: S = Q K^T and dP = dO V^T (16 x 32 each, computed in one
// loop: 16 independent accumulator chains), dS = P (dP - delta) in registers, dQ += dS K (16 x
// D). The two key halves' partial dQ are added at the end through shared memory, first half
// plus second, then dq = scale dQ. Registers: dQ D/2 + S 16 + dP 16 accumulators a lane, and
// while the scores run 32 more for their small cross terms (mma3_apart below).
// dk/dv kernel: a block owns 64 keys and streams 64-row Q/dO tiles of every query head of the
// group (double-buffered; the tile's lse and delta by plain loads into shared memory). Warp w
// takes keys 16 (w % 4) .. + 15; warps 0-3 compute S^T = K Q^T, P^T, and dV += P^T dO; warps
// 4-7 compute dP^T = V dO^T, read their partner's P^T from shared memory (same lane, same
// registers: conflict-free float4s) after a barrier, form dS^T = P^T (dP^T - delta) and
// dK += dS^T Q. So each warp holds 32 score (and, while they run, 32 cross-term) and D/2
// output accumulators a lane, and the two halves run the same code on different operands.
//
// Budget (sm_90, ptxas -v of this file, CUDA 13.0.88; split 1 / split 2 / 1xTF32), all with
// __launch_bounds__(256, 1), one block (8 warps) per SM, no spills, no stack:
//   dq   D = 128: 250 / 252 / 238 registers, shared 212992 B (Q, dO 64 x 144, K, V 2 x 64 x 136
//                 floats; 1xTF32's own row pairs take 32 x 260 of each 64 x 144);
//        D = 64:  196 / 196 / 174 registers, shared 114688 B;
//   dkdv D = 128: 225 / 229 / 226 registers, shared 230400 B (K, V 64 x 144, Q, dO 2 x 64 x 136,
//                 P^T 16 KiB, lse and delta 1 KiB: within sm_90's 227 KiB a block);
//        D = 64:  186 / 188 / 175 registers, shared 132096 B.
// SASS instructions (static, the cubin's .text; from the first MMA to the last, about one key
// tile's code with the score loop's body once): dq D = 128 4030 / 2826 / 2196 (2740 / 1567 /
// 526), dkdv D = 128 6014 / 4175 / 3045 (4910 / 3100 / 1509). Adding 1xTF32 left the 3xTF32
// kernels' machine code byte for byte as it was (every .text section of the cubin compared).
// (With the cross terms in the score accumulators, as the forward's mma3: 229 / 227, 172 / 174,
// 202 / 203, 166 / 169; an A/B for the GPU if dq at D = 128 proves register-starved.)
// Expected rate (D = 128, per warp and 64 x 64 tile pair): dq 576 MMAs (3 x 64 for S, dP and
// dQ each), ~530 splits; dk/dv 768 MMAs (3 x 128 for the score, 3 x 128 for dV or dK), ~650
// splits. The tensor cores take ~4 clocks per m16n8k8 TF32 MMA per SM sub-partition, so the two
// warps of a sub-partition need >= 4600 (dq) / 6100 (dk/dv) clocks a tile pair; with split 2
// (3 instructions) they issue ~2 x 2400 / 2 x 3000 instructions: about MMA-bound, ~160 TFLOP/s
// of executed products at most, ~70-100 if mma.sync reaches 45-60% of the TF32 peak. The
// backward executes 7 products (S and dP are recomputed by both kernels, as in the SIMT one)
// where the usual count (bench/compare_torch.py) credits 5, so that is ~50-70 TFLOP/s as
// reported, against 22.9 (SIMT) and 34.7 (PyTorch) at B=1, H=16, S=2048, D=128. Split 1 costs
// ~10.5 instructions a split: issue-bound, about half that. Measured (H200, the default split):
// 32.5 TFLOP/s as reported with P's exponentials in branches (0.947x PyTorch's 34.3), 36.0 with
// them branch-free (expf_unconditional; session 11), causal 35.0: bound by latency like the
// forward (one block a multiprocessor), not by the MMAs. Tried in session 11 and dropped: shared
// reads one item ahead (36.1, no gain over branch-free) and the score's cross terms summed in its
// accumulators (32 registers fewer; 32.8 alone, 36.4 with both, at 48% instead of 28% of the
// F32 tolerance in the host emulation: not worth the accuracy).
// 1xTF32 (D = 128, per warp and 64 x 64 tile pair): dq 192 MMAs (64 each for S, dP and dQ), 16
// cvt; dk/dv 256 (128 score, 128 dV or dK), 32 cvt (role 1; role 0 runs the same code). The
// 3xTF32 fast split issued ~2400 (dq) / ~3000 (dk/dv) instructions a tile pair; 1xTF32, by its
// static SASS, ~800 / ~1200: its MMAs, the shared-memory reads, P and dS, and register moves
// that assemble MMA fragments from two float4 reads (B of the second products, ~1-2 a MMA,
// where the splits' ALU results landed in place). Bound by latency as the
// 3xTF32 kernels were (4.2 cycles between a warp's instructions, two warps a scheduler), that
// is ~2.5x fewer cycles a tile pair, with the tensor pipe (~4 clocks a MMA: ~1500 (dq) / ~2000
// (dk/dv) clocks for the two warps of a sub-partition) the next bound: expected ~2-2.5x the
// 3xTF32 backward's rate on the half route, 38 -> ~75-95 TFLOP/s at B=1, H=32, S=16384, D=128
// BF16 causal (PyTorch 532). Not yet run on a GPU. The own rows are staged as row pairs
// (OwnPairs below), which loads the score's A fragments in place (dq at D = 128: 627 -> 526
// instructions from the first MMA to the last, register moves there 201 -> 103); the second
// products' B fragments (two streamed rows a pair) still take moves: the streamed tile serves
// the score's B reads too, which want its rows whole.
//
// To verify on the GPU (build-gpu: the CUDA build; each command on one line):
//   build-gpu/tests/ferrite_cuda_tests --gtest_filter='Tf32x3Attention*'   (calls these kernels
//       directly, both splits and 1xTF32 on BF16/F16 values, against the SIMT tiled backward:
//       no variable needed)
//   build-gpu/tests/ferrite_conformance --backend=cuda --gtest_filter='*scaled_dot_product_attention*'
//       (the F16/BF16 cases cuDNN does not take run 1xTF32; FERRITE_ATTENTION_HALF_VIA_F32=3x
//       sends them through 3xTF32 again)
//   FERRITE_ATTENTION_F32_TF32X3=1 (and =2) build-gpu/tests/ferrite_conformance --backend=cuda
//       --gtest_filter='*scaled_dot_product_attention*F32*'
//   FERRITE_ATTENTION_F32_TF32X3=2 python3 bench/compare_torch.py build-gpu/ferrite --filter 'sdpa_f32*'
#include <cstdint>

#include "cuda/attention/attention_f32_tiled.cuh"
#include "cuda/attention/attention_tf32x3.cuh"
#include "cuda/attention/attention_tf32x3_fragments.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::attention {
namespace {

using namespace tiled;
using namespace tf32x3;

constexpr int kTile = 64;  // own rows (dq) or keys (dk/dv) per block, streamed rows per tile
constexpr int kWarps = kThreads / 32;
static_assert(kThreads == 256 && kTile == 16 * (kWarps / 2));

// Row strides: own rows (read as A: rows g and g + 1 of a phase) 16 banks apart, as the
// forward's Q; streamed rows (read as the score's B and as the second product's B) 8 banks
// apart, which with bwd_perm's order serves both reads.
template <int D>
struct Strides {
  static constexpr int kOwn = D + 16;
  static constexpr int kStream = D + 8;
};

// A float4 read by a warp is served in four phases of 8 lanes (128 bytes each); it is
// conflict-free when the 8 lanes of each phase hit 8 distinct groups of 4 banks. Offsets are
// in floats, per lane; `kind` 0: own A rows (g, dims 4q), 1: the score's B rows
// (bwd_perm(g), dims 4q), 2 and 3: the second product's B rows (bwd_perm(2q + i), dims 4g).
constexpr bool conflict_free(int stride, int kind) {
  for (int phase = 0; phase < 4; ++phase) {
    bool used[8] = {};
    for (int lane = 8 * phase; lane < 8 * phase + 8; ++lane) {
      const int g = lane / 4, q = lane % 4;
      const int offset = kind == 0   ? g * stride + 4 * q
                         : kind == 1 ? bwd_perm(g) * stride + 4 * q
                                     : bwd_perm(2 * q + kind - 2) * stride + 4 * g;
      const int group = (offset % 32) / 4;
      if (used[group]) return false;
      used[group] = true;
    }
  }
  return true;
}
static_assert(conflict_free(Strides<64>::kOwn, 0) && conflict_free(Strides<128>::kOwn, 0));
static_assert(conflict_free(Strides<64>::kStream, 1) && conflict_free(Strides<128>::kStream, 1));
static_assert(conflict_free(Strides<64>::kStream, 2) && conflict_free(Strides<128>::kStream, 2));
static_assert(conflict_free(Strides<64>::kStream, 3) && conflict_free(Strides<128>::kStream, 3));
// Further rows of a read (own row g + 8, n-tile j's rows 8j + ...) move every lane by a
// multiple of 32 floats, so the same banks.
static_assert((8 * Strides<64>::kOwn) % 32 == 0 && (8 * Strides<128>::kOwn) % 32 == 0);
static_assert((8 * Strides<64>::kStream) % 32 == 0 && (8 * Strides<128>::kStream) % 32 == 0);

// The float4 reads of score() and second() hard-code the maps of attention_tf32x3_fragments.hpp,
// the streamed rows in bwd_perm's order; this ties them together (the unit test checks the maps
// against a matrix product).
static_assert(maps_match_float4_reads(bwd_stream_n, bwd_stream_k, bwd_perm));

// mma3 with the small cross terms in their own accumulators x: c then takes one rounding per
// k-step instead of three. The score products need it more than the others: dS = P (dP - delta)
// cancels where a row has few visible keys (exactly, for a causal row 0), leaving dP's
// rounding, which the tensor cores may truncate (the host emulation's pessimistic model:
// 48% of the F32 tolerance with mma3, 28% apart). Costs 32 accumulators while the score runs.
__device__ __forceinline__ void mma3_apart(float (&c)[4], float (&x)[4], const Split (&a)[4],
                                           const Split (&b)[2]) {
  mma(x, a[0].small, a[1].small, a[2].small, a[3].small, b[0].big, b[1].big);
  mma(x, a[0].big, a[1].big, a[2].big, a[3].big, b[0].small, b[1].small);
  mma(c, a[0].big, a[1].big, a[2].big, a[3].big, b[0].big, b[1].big);
}

// ---- 1xTF32 (Tf32Mode::single) ----
// One MMA a product, for operands that TF32 holds exactly: q, k, v and grad_out widened from
// F16/BF16 (F16's 11 significant bits and BF16's 8 fit TF32's 11; F16's subnormals are normal
// in F32's and TF32's range). They go to the tensor cores as their F32 bits, with no
// instruction at all: the tensor cores read the upper 19 bits of a TF32 operand register, whose
// lower 13 are zero for such values, so the products are exact and only the F32 accumulation
// rounds (other F32 values would be truncated to TF32: the mode's precondition, see
// attention_kernels.cuh). Their infinities and NaNs (a widened NaN keeps a mantissa bit among
// the upper 10) reach the MMAs as they are.
__device__ __forceinline__ unsigned exact_tf32(float x) { return __float_as_uint(x); }

// The F32 intermediates P and dS (the second products' A operands), rounded to nearest TF32
// (ties to even; relative error <= 2^-11): cvt.rn.tf32.f32 (PTX 7.8, sm_90) is one SASS
// instruction on sm_90 (against ~4 for cvt.rna and 3 for split<true>'s big part; counted in the
// cubin of a one-line kernel), keeps infinities and NaNs, and a value past the largest finite
// TF32 becomes inf, as F32's own rounding would. Truncation instead (the bits as they are, no
// instruction) would bias P, all positive, by up to -2^-10 in every dV = P^T dO sum.
__device__ __forceinline__ unsigned round_tf32(float x) {
  unsigned r;
  asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// 1xTF32's own rows (the score products' A operands: Q and dO in the dq kernel, K and V in the
// dk/dv kernel, read by nothing else) are staged as row pairs: rows 16 w + g and 16 w + g + 8
// (g < 8) of each 16-row group w side by side per head dim, pair row 8 w + g, so that one float4
// at dims d, d + 1 is a lane's whole A fragment of a k-step: (row g, d), (row g + 8, d), (row g,
// d + 1), (row g + 8, d + 1) = a0 .. a3 in PTX's order (k = q and q + 4 are dims d and d + 1, as
// qk_dim's). Read from rows g and g + 8 apart, as 3xTF32 does, the fragment needs four register
// moves (the MMA takes it in four consecutive registers; the splits' ALU results landed there
// in place): ~100 of the dq kernel's ~630 instructions a key tile at D = 128 (SASS).
template <int D>
struct OwnPairs {
  static constexpr int kStride = 2 * D + 4;  // floats from one pair row to the next
  static constexpr int kFloats = kTile / 2 * kStride;
};
// Conflict-free like the float4 reads above: lane (g, q) reads pair row g at float 8 q (+ 4), so a
// phase's two pair rows must sit 4 banks apart (mod 8 groups of 4 banks).
static_assert(OwnPairs<64>::kStride % 32 == 4 && OwnPairs<128>::kStride % 32 == 4);
static_assert(OwnPairs<64>::kFloats <= kTile * Strides<64>::kOwn &&
              OwnPairs<128>::kFloats <= kTile * Strides<128>::kOwn);

__device__ __forceinline__ void copy4(float* dst, const float* src, bool valid) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(addr), "l"(src), "r"(valid ? 4 : 0)
               : "memory");
}
// Rows [row0, row0 + 64) of a dense [rows, D] matrix into the pair layout, one float a cp.async
// (row (r, c) at pair row (r / 16) 8 + r % 8, float 2 c + (r % 16) / 8); rows past `rows` are
// zero-filled as stage() does. Once a block, in the first cp.async group: the loop waits for it
// at its first tile as for the 16-byte stage().
template <int D>
__device__ __forceinline__ void stage_pairs(float* dst, const float* src, int row0, int rows) {
  static_assert((kTile * D) % kThreads == 0);
#pragma unroll 8
  for (int n = 0; n < kTile * D / kThreads; ++n) {
    const int e = static_cast<int>(threadIdx.x) + n * kThreads;
    const int r = e / D, c = e % D;
    const bool valid = row0 + r < rows;
    copy4(dst + ((r / 16) * 8 + r % 8) * OwnPairs<D>::kStride + 2 * c + (r % 16) / 8,
          valid ? src + static_cast<std::int64_t>(row0 + r) * D + c : src, valid);
  }
}

// score() in 1xTF32: c[p][j] += A_p B_p^T, one MMA a k-step, no split and no cross terms, so
// no accumulators of its own either. The loop and the B reads are score()'s below; A_p is at
// a[p], this lane's pair row at float 8 q (own_lane).
template <int D, int NT, int kPairs, int kB>
__device__ __forceinline__ void score1(float (&c)[kPairs][NT][4], const float* const (&a)[kPairs],
                                       const float* const (&b)[kPairs]) {
#pragma unroll(D <= 64 ? 4 : 2)
  for (int ch = 0; ch < D; ch += 16) {
    unsigned a0[kPairs][4], a1[kPairs][4];
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
      const float4 x0 = *reinterpret_cast<const float4*>(a[p] + 2 * ch);      // dims ch + 4q, + 1: k-step 0
      const float4 x1 = *reinterpret_cast<const float4*>(a[p] + 2 * ch + 4);  // dims ch + 4q + 2, + 3: k-step 1
      a0[p][0] = exact_tf32(x0.x), a0[p][1] = exact_tf32(x0.y), a0[p][2] = exact_tf32(x0.z),
      a0[p][3] = exact_tf32(x0.w);
      a1[p][0] = exact_tf32(x1.x), a1[p][1] = exact_tf32(x1.y), a1[p][2] = exact_tf32(x1.z),
      a1[p][3] = exact_tf32(x1.w);
    }
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int p = 0; p < kPairs; ++p) {
        const float4 y = *reinterpret_cast<const float4*>(b[p] + 8 * j * kB + ch);
        mma(c[p][j], a0[p][0], a0[p][1], a0[p][2], a0[p][3], exact_tf32(y.x), exact_tf32(y.y));
        mma(c[p][j], a1[p][0], a1[p][1], a1[p][2], a1[p][3], exact_tf32(y.z), exact_tf32(y.w));
      }
  }
}

// second() in 1xTF32: acc += C B with C (P or dS) rounded to TF32, B (K, Q or dO) exact.
template <int D, int NT, int kB>
__device__ __forceinline__ void second1(float (&acc)[D / 8][4], const float (&c)[NT][4], const float* b0,
                                        const float* b1) {
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    const unsigned a[4] = {round_tf32(c[j][p_from_s(0)]), round_tf32(c[j][p_from_s(1)]),
                           round_tf32(c[j][p_from_s(2)]), round_tf32(c[j][p_from_s(3)])};
#pragma unroll
    for (int cc = 0; cc < D / 32; ++cc) {
      const float4 v0 = *reinterpret_cast<const float4*>(b0 + 8 * j * kB + 32 * cc);
      const float4 v1 = *reinterpret_cast<const float4*>(b1 + 8 * j * kB + 32 * cc);
      const float e0[4] = {v0.x, v0.y, v0.z, v0.w}, e1[4] = {v1.x, v1.y, v1.z, v1.w};
#pragma unroll
      for (int e = 0; e < 4; ++e) mma(acc[4 * cc + e], a[0], a[1], a[2], a[3], exact_tf32(e0[e]), exact_tf32(e1[e]));
    }
  }
}

// ---- 3xTF32 (Tf32Mode::rounded, fast) and the dispatch to 1xTF32 ----

// c[p][j] += A_p B_p^T for kPairs products at once (more independent accumulator chains):
// A_p's 16 own rows at a[p] (this lane's row g, dim 4q; row g + 8 at + 8 kA), B_p's n-tile j
// at b[p] + 8 j kB (this lane's streamed row bwd_perm(g), dim 4q), over D head dims in chunks of
// 16 = two k-steps (qk_dim).
template <int D, int NT, int kPairs, int kA, int kB, Tf32Mode kMode>
__device__ __forceinline__ void score(float (&c)[kPairs][NT][4], const float* const (&a)[kPairs],
                                      const float* const (&b)[kPairs]) {
  if constexpr (kMode == Tf32Mode::single) {
    score1<D, NT, kPairs, kB>(c, a, b);
    return;
  }
  constexpr bool kFast = kMode == Tf32Mode::fast;
  float x[kPairs][NT][4];  // the small cross terms, apart from c's big x big
  zero(x);
  // D = 64: the whole loop unrolled (4 chunks, no more registers than 1); D = 128: 2 of 8 chunks
  // a pass, to keep the code small.
#pragma unroll(D <= 64 ? 4 : 2)
  for (int ch = 0; ch < D; ch += 16) {
    Split a0[kPairs][4], a1[kPairs][4];
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
      const float4 x0 = *reinterpret_cast<const float4*>(a[p] + ch);
      const float4 x1 = *reinterpret_cast<const float4*>(a[p] + 8 * kA + ch);
      // Step 0 takes components x, y; step 1 z, w: a = (row g, row g + 8) x (k = q, q + 4).
      a0[p][0] = split<kFast>(x0.x), a0[p][1] = split<kFast>(x1.x), a0[p][2] = split<kFast>(x0.y),
      a0[p][3] = split<kFast>(x1.y);
      a1[p][0] = split<kFast>(x0.z), a1[p][1] = split<kFast>(x1.z), a1[p][2] = split<kFast>(x0.w),
      a1[p][3] = split<kFast>(x1.w);
    }
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int p = 0; p < kPairs; ++p) {
        const float4 y = *reinterpret_cast<const float4*>(b[p] + 8 * j * kB + ch);
        const Split b0[2] = {split<kFast>(y.x), split<kFast>(y.y)};
        const Split b1[2] = {split<kFast>(y.z), split<kFast>(y.w)};
        mma3_apart(c[p][j], x[p][j], a0[p], b0);
        mma3_apart(c[p][j], x[p][j], a1[p], b1);
      }
  }
#pragma unroll
  for (int p = 0; p < kPairs; ++p)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) c[p][j][i] += x[p][j][i];
}

// acc += C B: C = the score accumulators (P or dS) as A fragments, k-step j = the streamed rows
// of n-tile j (bwd_stream_k); B's rows 8j + bwd_perm(2q) and 8j + bwd_perm(2q + 1) at b0 and b1
// + 8 j kB (this lane's dims 32c + 4g .. + 3 each: components e of n-tiles 4c + e, pv_dim).
// C takes split, clamp included, not split_p: it is dS (any magnitude) in the dq kernel and in
// the dk/dv kernel's role 1, and P^T only in role 0, whose warps run this same code (a copy of
// the inlined product for them would save 32 of their ~2400 split instructions a tile pair at
// D = 128, split 2), and whose P = exp(scale s - lse) stays <= ~1 only while lse is the forward's.
template <int D, int NT, int kB, Tf32Mode kMode>
__device__ __forceinline__ void second(float (&acc)[D / 8][4], const float (&c)[NT][4], const float* b0,
                                       const float* b1) {
  if constexpr (kMode == Tf32Mode::single) {
    second1<D, NT, kB>(acc, c, b0, b1);
    return;
  }
  constexpr bool kFast = kMode == Tf32Mode::fast;
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    const Split a[4] = {split<kFast>(c[j][p_from_s(0)]), split<kFast>(c[j][p_from_s(1)]),
                        split<kFast>(c[j][p_from_s(2)]), split<kFast>(c[j][p_from_s(3)])};
#pragma unroll
    for (int cc = 0; cc < D / 32; ++cc) {
      const float4 v0 = *reinterpret_cast<const float4*>(b0 + 8 * j * kB + 32 * cc);
      const float4 v1 = *reinterpret_cast<const float4*>(b1 + 8 * j * kB + 32 * cc);
      const float e0[4] = {v0.x, v0.y, v0.z, v0.w}, e1[4] = {v1.x, v1.y, v1.z, v1.w};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const Split bv[2] = {split<kFast>(e0[e]), split<kFast>(e1[e])};
        mma3(acc[4 * cc + e], a, bv);
      }
    }
  }
}

// Stores this lane's rows g and g + 8 (at dst0 and dst0 + 8 D, when `valid`) of a 16 x D
// output times `mul`: dims 32c + 8q + 4e .. + 3 are accumulator 2 hr + e of n-tiles 4c .. 4c + 3.
template <int D>
__device__ __forceinline__ void store_rows(float* dst0, const float (&acc)[D / 8][4], float mul, const bool (&valid)[2],
                                           int lq) {
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    if (!valid[hr]) continue;
    float* o = dst0 + 8 * hr * D;
#pragma unroll
    for (int c = 0; c < D / 32; ++c)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        *reinterpret_cast<float4*>(o + 32 * c + 8 * lq + 4 * e) =
            make_float4(acc[4 * c][2 * hr + e] * mul, acc[4 * c + 1][2 * hr + e] * mul,
                        acc[4 * c + 2][2 * hr + e] * mul, acc[4 * c + 3][2 * hr + e] * mul);
  }
}

// expf(x) computed whether or not the caller then uses it. Where P = exp(...) is used only for
// visible scores, the compiler puts each exponential (~10 dependent instructions with a
// MUFU.EX2) in a branch of its own (BSSY / BRA / BSYNC): 16 (dq) or 32 (dk/dv's P^T warps, which
// the dS^T warps then wait for at a barrier) chains one after the other, none overlapping, each
// ~60+ clocks of latency a tile pair. Computed for every score, they are independent
// straight-line code the scheduler interleaves; hidden scores are still dropped by a select (P =
// 0 exactly, the same bits as the branch). In the dq kernel, where P is used as P (dP - delta), a
// plain expf statement still ends up in a branch: the empty volatile asm keeps the compiler from
// sinking it (it may not move a volatile asm under a condition) and emits no instruction. The
// dk/dv kernel's P^T, a select of its own, needs no asm. SASS of CUDA 13.0: 28 -> 12 branches in
// dq, 47 -> 15 in dk/dv; H200 (B=1, H=16, S=2048, D=128): 32.4 -> 36.0 TFLOP/s, causal 31.5 -> 35.0.
__device__ __forceinline__ float expf_unconditional(float x) {
  float e = expf(x);
  asm volatile("" : "+f"(e));
  return e;
}

// The block's own rows as each mode reads them: rows of stride kOwn (3xTF32), row pairs
// (1xTF32: OwnPairs). pair_lane: this lane's first element in 16-row group w of the pairs (pair
// row g, dim 4q); the kernels keep 3xTF32's own expression beside it, which leaves their
// machine code byte for byte as it was (through a helper of the same arithmetic it was not).
template <int D, Tf32Mode kMode>
__device__ __forceinline__ void stage_own(float* dst, const float* src, int row0, int rows) {
  if constexpr (kMode == Tf32Mode::single)
    stage_pairs<D>(dst, src, row0, rows);
  else
    stage<D, kTile, Strides<D>::kOwn>(dst, src, row0, rows);
}
template <int D>
__device__ __forceinline__ const float* pair_lane(const float* base, int w, int g, int lq) {
  return base + (8 * w + g) * OwnPairs<D>::kStride + 8 * lq;
}

// Floats: own rows [64][D + 16], streamed tiles [2][64][D + 8] (DqTiles, DkvTiles).
template <int D>
struct DqLayout : DqTiles<kTile, Strides<D>::kOwn, Strides<D>::kStream> {
  static constexpr std::size_t kBytes = sizeof(float) * DqLayout::kEnd;
  // After the loop the K tiles take the second key half's partial dQ: [4][D / 8][32] float4s.
  static_assert(4 * (D / 8) * 32 * 4 <= 2 * kTile * Strides<D>::kStream);
};
static_assert(DqLayout<64>::kBytes == 114688 && DqLayout<128>::kBytes == 212992);

template <int D>
struct DkvLayout : DkvTiles<kTile, Strides<D>::kOwn, Strides<D>::kStream> {
  static constexpr int kX = DkvLayout::kEnd;          // [4][8][32] float4: P^T, warp w to w + 4
  static constexpr int kStats = kX + 4 * 8 * 32 * 4;  // [2][lse 64, delta 64]
  static constexpr std::size_t kBytes = sizeof(float) * (kStats + 2 * 2 * kTile);
};
static_assert(DkvLayout<64>::kBytes == 132096 && DkvLayout<128>::kBytes == 230400);
static_assert(DkvLayout<128>::kBytes <= 232448);  // sm_90's opt-in limit per block (227 KiB)

template <int D, Tf32Mode kMode>
__global__ void __launch_bounds__(kThreads, 1) tf32x3_dq_kernel(Pointers p, TiledShape s) {
  using L = DqLayout<D>;
  using St = Strides<D>;
  constexpr int kOTiles = D / 8;  // dQ's n-tiles
  constexpr int kHalf = 4;        // score n-tiles a warp: 32 of the tile's 64 keys
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, lq = lane % 4;
  const int rg = warp % 4, kh = warp / 4;  // row group (16 rows), key half (32 keys)
  // The block's rows m0 .. + 63 of its query head, its key/value head's k and v (forward_block).
  const auto [bh, b, h, m0, key_end, qp, kp, vp] = forward_block<D>(
      static_cast<const float*>(p.q), static_cast<const float*>(p.k), static_cast<const float*>(p.v), s, kTile);
  const int tiles = (key_end + kTile - 1) / kTile;
  const int row0 = m0 + 16 * rg + g;  // this lane's rows: row0 and row0 + 8

  stage_own<D, kMode>(smem + L::kQ, qp, m0, s.seq_q);
  stage_own<D, kMode>(smem + L::kG, static_cast<const float*>(p.grad_out) + bh * s.seq_q * D, m0, s.seq_q);
  if (tiles > 0) {
    stage<D, kTile, St::kStream>(smem + L::kK, kp, 0, s.seq_k);
    stage<D, kTile, St::kStream>(smem + L::kV, vp, 0, s.seq_k);
  }
  commit_group();

  float lse[2], delta[2];
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    const int row = row0 + 8 * hr;
    lse[hr] = row < s.seq_q ? static_cast<const float*>(p.logsumexp)[bh * s.seq_q + row] : -INFINITY;
    delta[hr] = row < s.seq_q ? static_cast<const float*>(p.delta)[bh * s.seq_q + row] : 0.f;
  }
  float acc[kOTiles][4];
  zero(acc);

  // This lane's reads: own rows g (and g + 8) at dim 4q; streamed rows of its key half:
  // bwd_perm(g) at dim 4q (score), bwd_perm(2q) and bwd_perm(2q + 1) at dim 4g (dQ += dS K).
  const int sk0 = bwd_perm(2 * lq), sk1 = bwd_perm(2 * lq + 1);  // the keys of its score registers
  const float* const own[2] = {kMode == Tf32Mode::single ? pair_lane<D>(smem + L::kQ, rg, g, lq)
                                                         : smem + L::kQ + (16 * rg + g) * St::kOwn + 4 * lq,
                               kMode == Tf32Mode::single ? pair_lane<D>(smem + L::kG, rg, g, lq)
                                                         : smem + L::kG + (16 * rg + g) * St::kOwn + 4 * lq};
  const int b_score = (32 * kh + bwd_perm(g)) * St::kStream + 4 * lq;
  const int b_pv0 = (32 * kh + sk0) * St::kStream + 4 * g, b_pv1 = (32 * kh + sk1) * St::kStream + 4 * g;

  for (int t = 0; t < tiles; ++t) {
    const int buf = t & 1;
    const float* ks = smem + L::kK + buf * kTile * St::kStream;
    const float* vs = smem + L::kV + buf * kTile * St::kStream;
    wait_groups<0>();  // this thread's part of K_t and V_t (and, at t = 0, of Q and dO)
    __syncthreads();   // everyone's; everyone is done with tile t - 1, whose buffers take t + 1
    if (t + 1 < tiles) {
      stage<D, kTile, St::kStream>(smem + L::kK + (buf ^ 1) * kTile * St::kStream, kp, (t + 1) * kTile, s.seq_k);
      stage<D, kTile, St::kStream>(smem + L::kV + (buf ^ 1) * kTile * St::kStream, vp, (t + 1) * kTile, s.seq_k);
    }
    commit_group();

    float sd[2][kHalf][4];  // S and dP
    zero(sd);
    const float* const stream[2] = {ks + b_score, vs + b_score};
    score<D, kHalf, 2, St::kOwn, St::kStream, kMode>(sd, own, stream);

    // dS = P (dP - delta) into sd[0]; hidden scores 0.
    const int kbase = t * kTile + 32 * kh;
#pragma unroll
    for (int j = 0; j < kHalf; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int hr = i >> 1, row = row0 + 8 * hr;
        const int key = kbase + 8 * j + ((i & 1) ? sk1 : sk0);
        const bool visible = key < s.seq_k && (!s.causal || key <= row) && lse[hr] != -INFINITY;
        const float prob = expf_unconditional(sd[0][j][i] * s.scale - lse[hr]);  // branch-free: see its comment
        sd[0][j][i] = visible ? prob * (sd[1][j][i] - delta[hr]) : 0.f;
      }
    second<D, kHalf, St::kStream, kMode>(acc, sd[0], ks + b_pv0, ks + b_pv1);
  }
  wait_groups<0>();  // nothing may stay in flight (tiles = 0: Q's and dO's group)
  __syncthreads();   // everyone is done with the K tiles: they take the second half's dQ

  float4* part = reinterpret_cast<float4*>(smem + L::kK) + rg * kOTiles * 32 + lane;
  add_second_key_half(acc, part, kh);
  if (kh == 0) {
    const bool valid[2] = {row0 < s.seq_q, row0 + 8 < s.seq_q};
    store_rows<D>(static_cast<float*>(p.dq) + (bh * s.seq_q + row0) * D, acc, s.scale, valid, lq);
  }
}

template <int D, Tf32Mode kMode>
__global__ void __launch_bounds__(kThreads, 1) tf32x3_dkdv_kernel(Pointers p, TiledShape s) {
  using L = DkvLayout<D>;
  using St = Strides<D>;
  constexpr int kOTiles = D / 8;   // dK's or dV's n-tiles
  constexpr int kNT = kTile / 8;   // score n-tiles: the tile's 64 rows
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, lq = lane % 4;
  // Key group (16 keys) and role: 0 computes P^T and dV, 1 dP^T, dS^T and dK.
  const int kg = warp % 4, role = warp / 4;
  // The block's keys n0 .. + 63 of key/value head hk, and its query tiles (key_block).
  const auto [bhk, b, hk, n0, query_begin, per_head, tiles] = key_block<kTile>(s);
  auto head_of = [&](int t) { return b * s.heads_q + hk * s.group + t / per_head; };
  auto row0_of = [&](int t) { return query_begin + (t % per_head) * kTile; };
  auto stage_rows = [&](int t, int buf) {
    const std::int64_t bh = head_of(t);
    stage<D, kTile, St::kStream>(smem + L::kQ + buf * kTile * St::kStream,
                                 static_cast<const float*>(p.q) + bh * s.seq_q * D, row0_of(t), s.seq_q);
    stage<D, kTile, St::kStream>(smem + L::kG + buf * kTile * St::kStream,
                                 static_cast<const float*>(p.grad_out) + bh * s.seq_q * D, row0_of(t), s.seq_q);
  };
  // The tile's logsumexp and delta, with plain loads (visible after the next barrier).
  auto stage_row_stats = [&](int t, int buf) {
    if (threadIdx.x < kTile) {
      const std::int64_t bh = head_of(t);
      const int i = row0_of(t) + static_cast<int>(threadIdx.x);
      float* stats = smem + L::kStats + buf * 2 * kTile;
      stats[threadIdx.x] = i < s.seq_q ? static_cast<const float*>(p.logsumexp)[bh * s.seq_q + i] : -INFINITY;
      stats[kTile + threadIdx.x] = i < s.seq_q ? static_cast<const float*>(p.delta)[bh * s.seq_q + i] : 0.f;
    }
  };

  const std::int64_t key_base = bhk * s.seq_k;
  stage_own<D, kMode>(smem + L::kK, static_cast<const float*>(p.k) + key_base * D, n0, s.seq_k);
  stage_own<D, kMode>(smem + L::kV, static_cast<const float*>(p.v) + key_base * D, n0, s.seq_k);
  if (tiles > 0) {
    stage_rows(0, 0);
    stage_row_stats(0, 0);
  }
  commit_group();

  float acc[kOTiles][4];
  zero(acc);

  // This lane's reads: own key rows g (and g + 8) of K (role 0) or V (role 1) at dim 4q;
  // streamed rows bwd_perm(g) at dim 4q (score), bwd_perm(2q) and bwd_perm(2q + 1) at dim 4g.
  const int sr0 = bwd_perm(2 * lq), sr1 = bwd_perm(2 * lq + 1);  // the rows of its score registers
  const float* const own[1] = {kMode == Tf32Mode::single
                                   ? pair_lane<D>(smem + (role == 0 ? L::kK : L::kV), kg, g, lq)
                                   : smem + (role == 0 ? L::kK : L::kV) + (16 * kg + g) * St::kOwn + 4 * lq};
  const int b_score = bwd_perm(g) * St::kStream + 4 * lq;
  const int b_pv0 = sr0 * St::kStream + 4 * g, b_pv1 = sr1 * St::kStream + 4 * g;
  // Role 0 hands P^T to role 1 in its register order: n-tile j at xs[32 j], same lane.
  float4* xs = reinterpret_cast<float4*>(smem + L::kX) + kg * kNT * 32 + lane;
  const int key0 = n0 + 16 * kg + g;  // this lane's keys: key0 and key0 + 8

  for (int t = 0; t < tiles; ++t) {
    const int buf = t & 1, i0 = row0_of(t);
    const float* qt = smem + L::kQ + buf * kTile * St::kStream;
    const float* gt = smem + L::kG + buf * kTile * St::kStream;
    const float* stats = smem + L::kStats + buf * 2 * kTile;
    await_tile_stage_next(t, tiles, [&] {  // the tile and its row stats (and, at t = 0, K and V) here
      stage_rows(t + 1, buf ^ 1);
      stage_row_stats(t + 1, buf ^ 1);
    });

    float sc[1][kNT][4];  // S^T (role 0) or dP^T (role 1)
    zero(sc);
    const float* const stream[1] = {(role == 0 ? qt : gt) + b_score};
    score<D, kNT, 1, St::kOwn, St::kStream, kMode>(sc, own, stream);

    auto visible = [&](int j, int i) {
      const int r = 8 * j + ((i & 1) ? sr1 : sr0), row = i0 + r, key = key0 + 8 * (i >> 1);
      return key < s.seq_k && row < s.seq_q && (!s.causal || key <= row) && stats[r] != -INFINITY;
    };
    if (role == 0) {
#pragma unroll
      for (int j = 0; j < kNT; ++j) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int r = 8 * j + ((i & 1) ? sr1 : sr0);
          const float e = expf(sc[0][j][i] * s.scale - stats[r]);  // branch-free: see expf_unconditional
          sc[0][j][i] = visible(j, i) ? e : 0.f;
        }
        xs[32 * j] = make_float4(sc[0][j][0], sc[0][j][1], sc[0][j][2], sc[0][j][3]);
      }
    }
    __syncthreads();  // P^T visible to role 1
    if (role == 1) {
#pragma unroll
      for (int j = 0; j < kNT; ++j) {
        const float4 pf = xs[32 * j];
        const float pe[4] = {pf.x, pf.y, pf.z, pf.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int r = 8 * j + ((i & 1) ? sr1 : sr0);
          sc[0][j][i] = visible(j, i) ? pe[i] * (sc[0][j][i] - stats[kTile + r]) : 0.f;
        }
      }
    }
    // Role 0: dV += P^T dO; role 1: dK += dS^T Q.
    const float* bt = role == 0 ? gt : qt;
    second<D, kNT, St::kStream, kMode>(acc, sc[0], bt + b_pv0, bt + b_pv1);
  }
  wait_groups<0>();  // nothing may stay in flight when the block exits (tiles = 0: K and V)

  const bool valid[2] = {key0 < s.seq_k, key0 + 8 < s.seq_k};
  float* dst = static_cast<float*>(role == 0 ? p.dv : p.dk) + (key_base + key0) * D;
  store_rows<D>(dst, acc, role == 0 ? 1.f : s.scale, valid, lq);
}

}  // namespace

bool tiled_backward_f32_tf32x3_fits(const AttentionDesc& d, const Pointers& p) {
  // (batch, head) pairs run along grid x, row or key tiles along grid y (the SIMT backward's
  // predicate bounds the same 64-row tiles; checked here too, so the two may part).
  return tiled_backward_f32_fits(d, p) && d.batch * d.heads_q <= kMaxGridX &&
         row_tiles(d.seq_q, kTile) <= kMaxGridY && row_tiles(d.seq_k, kTile) <= kMaxGridY;
}

namespace {

// for_head_dim_and_split (attention_tf32x3.cuh) with the mode for the split: calls
// f.template operator()<D, kMode>() with D = 64 or 128; the one place where the backward's
// runtime choices become its kernels' template arguments.
template <class F>
void for_head_dim_and_mode(std::int64_t head_dim, Tf32Mode mode, F&& f) {
  auto with_mode = [&]<int D>() {
    switch (mode) {
      case Tf32Mode::rounded: return f.template operator()<D, Tf32Mode::rounded>();
      case Tf32Mode::fast: return f.template operator()<D, Tf32Mode::fast>();
      case Tf32Mode::single: return f.template operator()<D, Tf32Mode::single>();
    }
    FERRITE_THROW(InvalidArgument, "scaled_dot_product_attention_backward: Tf32Mode ", static_cast<int>(mode));
  };
  head_dim == 64 ? with_mode.template operator()<64>() : with_mode.template operator()<128>();
}

// One side of the backward: kDq, the dq kernel (a block per 64 query rows of a query head);
// else the dk/dv kernel (a block per 64 keys of a key/value head).
template <bool kDq>
void launch_side(const AttentionDesc& d, const Pointers& p, Tf32Mode mode, cudaStream_t stream) {
  const std::int64_t heads = kDq ? d.heads_q : d.heads_kv, rows = kDq ? d.seq_q : d.seq_k;
  FERRITE_CHECK(tiled_backward_f32_tf32x3_fits(d, p) && d.batch * heads * rows > 0, Unsupported,
                "scaled_dot_product_attention_backward: the 3xTF32 F32 ", kDq ? "dq" : "dk/dv",
                " was given a problem it does not take");
  const dim3 grid(static_cast<unsigned>(d.batch * heads), static_cast<unsigned>(row_tiles(rows, kTile)));
  const TiledShape s = tiled_shape_of(d);
  for_head_dim_and_mode(d.head_dim, mode, [&]<int D, Tf32Mode kMode>() {
    if constexpr (kDq)
      launch_with_smem(tf32x3_dq_kernel<D, kMode>, grid, kThreads, DqLayout<D>::kBytes, stream, p, s);
    else
      launch_with_smem(tf32x3_dkdv_kernel<D, kMode>, grid, kThreads, DkvLayout<D>::kBytes, stream, p, s);
  });
}

}  // namespace

void tiled_backward_dq_f32_tf32x3(const AttentionDesc& d, const Pointers& p, Tf32Mode mode, cudaStream_t stream) {
  launch_side<true>(d, p, mode, stream);
}

void tiled_backward_dkdv_f32_tf32x3(const AttentionDesc& d, const Pointers& p, Tf32Mode mode, cudaStream_t stream) {
  launch_side<false>(d, p, mode, stream);
}

}  // namespace ferrite::cuda::attention
