// F16/BF16 flash-attention backward for head dims 64 and 128 on the tensor cores in the inputs'
// own dtype: mma.sync m16n8k16 with .bf16 (or .f16) operands and F32 accumulators, reading q, k,
// v and grad_out as they are (no widening pass, no F32 copies). Not yet run on a GPU.
//
// Same problems, semantics, tiling, ownership and summation orders as the tensor-core F32
// backward (attention_f32_tf32x3_bwd.cu; its 1xTF32 mode is the F16/BF16 route it replaces):
// P = exp(scale q.k - lse) recomputed from the saved logsumexp (F32), delta_i = dO_i . O_i (F32,
// delta_kernel, which reads F16/BF16), dq, dk and dv with one owner block each and a fixed
// sequence of MMAs (no atomics: bit for bit repeatable), hidden scores (keys past Sk, rows past
// Sq, top-left causal, rows with lse = -inf) get P = 0 and dS = 0 explicitly, and staged rows
// past an end are zero-filled by cp.async. Explicit masks (Bool, additive) are instantiations of
// their own (kMask, below "Explicit masks"): the unmasked kernels' code is unchanged. What differs is the arithmetic of the products:
//  - S = Q K^T and dP = dO V^T multiply the F16/BF16 inputs exactly (their products fit F32's
//    significand) and sum in F32, as the 1xTF32 route did with the same values widened;
//  - P and dS, F32 in registers, are rounded to nearest in the dtype (cvt.rn.bf16x2.f32 /
//    cvt.rn.f16x2.f32) as the A operands of dV = P^T dO, dK = dS^T Q and dQ = dS K, as cuDNN and
//    FlashAttention do: 2^-8 relative for BF16 (against 1xTF32's 2^-11), 2^-11 for F16. F16's
//    range also bounds dS: |dS| past 65504 becomes inf (P <= 1 cannot overflow). Below 2^-14 F16
//    P and dS are subnormal (absolute error 2^-25 a term).
//  - dq, dk and dv are rounded once to the dtype from F32 (scale applied in F32 first), as
//    backward_in_f32's narrowing was.
//
// Per (own tile, streamed tile) pair and warp, the products run as m16n8k16 MMAs whose
// fragments all come from ldmatrix.x4 (the .trans form for the second product's B: the streamed
// rows as k), from tiles stored row-major with a row stride of D + 8 elements (16 bytes past a
// multiple of 128: each ldmatrix phase of 8 rows hits 8 distinct bank groups). The maps (the PTX
// layouts and the kernels' choice of which row and dim each MMA index stands for, and how two
// 16x8 score accumulator tiles become one 16x16 A operand as F16/BF16 pairs) are in
// attention_half_mma_fragments.hpp, replayed for one warp against plain products by
// tests/unit/attention_half_mma_fragments_test.cpp; the staging, ldmatrix, MMA and product
// helpers, shared with the forward, in attention_half_mma.cuh.
//
// dq kernel: a block (8 warps) owns 64 query rows and streams 64-key K/V tiles (cp.async,
// double-buffered, one barrier a tile). Warp w takes rows 16 (w % 4) .. + 15 and keys
// 32 (w / 4) .. + 31 of each tile: S and dP (16 x 32 each: 4 n-tiles x D/16 k-steps, both in
// one loop), dS = P (dP - delta) in registers, dQ += dS K (2 k-steps x D/8 n-tiles). The two key
// halves' partial dQ are added at the end through shared memory, first half plus second, then
// dq = round(scale dQ).
// dk/dv kernel: a block owns 64 keys and streams 64-row Q/dO tiles of every query head of the
// group (double-buffered; the tile's lse and delta by plain loads into shared memory). Warp w
// takes keys 16 (w % 4) .. + 15; warps 0-3 compute S^T = K Q^T, P^T and dV += P^T dO; warps 4-7
// compute dP^T = V dO^T, read their partner's P^T (F32) from shared memory after a barrier, form
// dS^T = P^T (dP^T - delta) and dK += dS^T Q.
//
// Budget (ptxas -v, CUDA 13.0, sm_90), __launch_bounds__(256, 1), no spills, no stack, BF16 and
// F16 alike: dq 210 / 170 registers (D = 128 / 64), shared 104448 / 55296 B (1xTF32: 212992 /
// 114688); dk/dv 203 / 145 registers, shared 121856 / 72704 B (230400 / 132096).
// Cost (SASS, D = 128, per warp and 64 x 64 tile pair, a full tile; 1xTF32's in brackets): dq 96
// m16n8k16 MMAs [192 m16n8k8], 64 ldmatrix.x4, ~425 instructions [~800]; dk/dv 128 MMAs [256],
// 72 ldmatrix.x4, ~565 instructions [~1200-1500; its P^T section with expf alone ~500]. A m16n8k16
// F16/BF16 MMA does twice the work of a m16n8k8 TF32 one in about the same tensor-pipe time (the
// dense F16 rate of sm_90 is twice TF32's), so the tensor pipe and the instruction stream both
// need ~40-55% of 1xTF32's. The dk/dv kernel leaves the masks' index arithmetic to ragged and
// diagonal tiles (`full` below): ~5 instructions a score, more than its exponential.
//
// Dropout (kDropout, since session 16; any mask kind): dL/dP = Z dO . v for the weight's factor Z
// (0 or 1 / (1 - p)), so dS = P (Z dP - delta) and dV = (Z P)^T dO, delta unchanged (dO . out).
// The dq kernel scales its dP by Z in registers. In the dk/dv kernel each role computes half of
// the decisions (attention_dropout_lanes.hpp: one Philox group a lane per four weights) before
// the tile's P^T barrier, role 1 while role 0 computes P^T, and the roles trade halves through
// one 32-bit word a lane (kKeepBitsBytes, after the mask tiles); role 0 then scales its P^T for
// dV. (Session 16 first had role 0 compute all of them, with role 1 idle at the barrier.) Budget of the kDropout kernels (ptxas -v, CUDA 13.0, sm_90): dq
// 228-246 registers at D = 128, 205-208 at D = 64; dk/dv 217-247 and 162-236; no spills, no stack.
//
// To verify on the GPU (build-gpu: the CUDA build):
//   build-gpu/tests/ferrite_cuda_tests --gtest_filter='HalfMmaAttention*'
//   build-gpu/tests/ferrite_conformance --backend=cuda --gtest_filter='*scaled_dot_product_attention*'
//   FERRITE_ATTENTION_HALF_BWD=f32 (the widening route, for the A/B) and unset (this one):
//   python3 bench/compare_torch.py build-gpu/ferrite --filter 'sdpa_bf16_s16k_causal_bwd,sdpa_bf16_gqa_causal_bwd'
#include <cstdint>
#include <type_traits>

#include "cuda/attention/attention_dropout_lanes.cuh"
#include "cuda/attention/attention_f32_tiled.cuh"
#include "cuda/attention/attention_half_mma.cuh"
#include "cuda/attention/attention_half_mma_fragments.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::attention {
namespace {

using namespace tiled;
using namespace half_mma;

constexpr int kTile = 64;  // own rows (dq) or keys (dk/dv) per block, streamed rows per tile
static_assert(kThreads == 256);

// Stores this lane's rows g and g + 8 (at dst0 and dst0 + 8 D, when `valid`) of a 16 x D output
// times `mul`, rounded to the dtype: n-tile nt's c0, c1 (row g) and c2, c3 (row g + 8) are dims
// 8 nt + 2q, + 1 (out_dim).
template <int D, bool kBf16>
__device__ __forceinline__ void store_rows(u16* dst0, const float (&acc)[D / 8][4], float mul, const bool (&valid)[2],
                                           int lq) {
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    if (!valid[hr]) continue;
    u16* o = dst0 + 8 * hr * D;
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt)
      *reinterpret_cast<unsigned*>(o + out_dim(nt, 2 * lq)) =
          pack2<kBf16>(acc[nt][2 * hr] * mul, acc[nt][2 * hr + 1] * mul);
  }
}

// P = exp(scale s - lse) as 2^(s scale log2(e) - lse log2(e)): one FFMA (lse log2(e) taken once
// a row) and one MUFU.EX2 (exp2_unconditional, attention_half_mma.cuh), where expf costs ~8
// instructions: 16 (dq) and 32 (dk/dv's P^T warps) of them a tile pair, against 96 / 128 MMAs.
// The argument's extra rounding (lse log2(e), ~2^-24 |lse| absolute) moves P by ~1e-6 relative
// at |lse| ~ 10, 1/500 of F16's rounding of P and far less of BF16's. Volatile: computed for
// every score whatever the mask says, hidden ones then dropped by a select.

// ---- Explicit masks (kMask: Bool or Additive; None is the unmasked code, unchanged) ----
// The mask is read per score element from global memory through its broadcast strides (0 where
// broadcast: AttentionDesc::mask_strides over [B, Hq, Sq, Sk]) with ld.global.nc: by the dq
// kernel one a score, each lane its own, issued before the tile's score MMAs so their latency
// overlaps them (16 registers); by the dk/dv kernel a 64 x 64 tile at a time, staged through
// shared memory by all threads (the per-lane way needed 32 registers more and spilled at D =
// 128), the next tile's loads again in flight during the MMAs. What the kernels take is the raw
// element (a Bool byte, or the F16/BF16 bits of the additive value); an element they do not read
// (a key past Sk, a row past Sq, a causally hidden pair, a dead row) takes kHiddenRaw instead,
// so one test decides visibility: raw != 0 (Bool) or its value != -inf (additive), as
// mask_term in attention_kernels.cu (a false or -inf entry hides the score whatever q.k is).
// Strides as the kernels use them: batch and head in 64 bits, row and key in 32 (half_mma_
// backward_fits: a tile's row offsets 64 s2 and the key offsets Sk s3 fit).
struct MaskStrides {
  std::int64_t batch, head;
  int row, key;
};
inline MaskStrides mask_strides_of(const AttentionDesc& d) {
  return {d.mask_strides[0], d.mask_strides[1], static_cast<int>(d.mask_strides[2]),
          static_cast<int>(d.mask_strides[3])};
}
template <AttentionMaskKind kMask>
using MaskElem = std::conditional_t<kMask == AttentionMaskKind::Bool, unsigned char, u16>;
// The raw element of a hidden score: false, or -inf in the dtype (BF16 0xff80, F16 0xfc00).
template <AttentionMaskKind kMask, bool kBf16>
constexpr unsigned kHiddenRaw = kMask == AttentionMaskKind::Bool ? 0u : kBf16 ? 0xff80u : 0xfc00u;
template <AttentionMaskKind kMask, bool kBf16>
__device__ __forceinline__ unsigned mask_load(const MaskElem<kMask>* at, bool read) {
  return read ? static_cast<unsigned>(__ldg(at)) : kHiddenRaw<kMask, kBf16>;
}
template <AttentionMaskKind kMask, bool kBf16>
__device__ __forceinline__ bool mask_visible(unsigned raw) {
  if constexpr (kMask == AttentionMaskKind::Bool)
    return raw != 0;
  else
    return widen<kBf16>(raw) != -INFINITY;
}
// P of a visible score s (the F32 MMA sum q.k) under an additive mask: exp(s scale + m - lse)
// with the score x rounded as the SIMT forward rounds it (its dot * scale + bias, one FFMA under
// nvcc's default -fmad), then x - lse (rounded relative to itself: 2^-24 |x - lse|, tiny
// wherever P is not) times log2(e) into ex2. Not the unmasked path's fmaf(s, scale log2(e),
// -lse log2(e)): an additive mask can make |lse| large (a row of -10000 entries has lse ~
// -10000), and lse log2(e)'s rounding (2^-24 |lse| log2(e), ~9e-4 at 10^4) would move every P
// of the row by as much, relatively: 2x F16's rounding of P. Two instructions a score more
// (FADD, FMUL). A Bool mask adds nothing to the scores and keeps the unmasked formula.
__device__ __forceinline__ float additive_prob(float s, float scale, float bias, float lse) {
  return exp2_unconditional((fmaf(s, scale, bias) - lse) * kLog2e);
}
// Role 0's hand-over of a hidden score to role 1 in the masked dk/dv kernel: P is never negative.
constexpr float kHiddenP = -1.f;

// F16/BF16 elements: own rows [64][D + 8], streamed tiles [2][64][D + 8] (DqTiles, DkvTiles);
// kTileElems, one tile's (the step between the double buffers).
template <int D>
constexpr int kTileElems = kTile * kStride<D>;

template <int D>
struct DqLayout : DqTiles<kTile, kStride<D>, kStride<D>> {
  static constexpr std::size_t kBytes = 2 * static_cast<std::size_t>(DqLayout::kEnd);
  // After the loop the K tiles take the second key half's partial dQ: [4][D / 8][32] float4s.
  static_assert(4 * (D / 8) * 32 * 16 <= 2 * 2 * kTileElems<D> && (2 * DqLayout::kK) % 16 == 0);
};
static_assert(DqLayout<64>::kBytes == 55296 && DqLayout<128>::kBytes == 104448);

template <int D>
struct DkvLayout : DkvTiles<kTile, kStride<D>, kStride<D>> {
  static constexpr int kXBytes = 2 * DkvLayout::kEnd;             // [4][8][32] float4: P^T, warp w to w + 4
  static constexpr int kStatsBytes = kXBytes + 4 * 8 * 32 * 16;  // [2][lse 64, delta 64] floats
  static constexpr std::size_t kBytes = kStatsBytes + 2 * 2 * kTile * 4;
  static_assert(kXBytes % 16 == 0);
};
static_assert(DkvLayout<64>::kBytes == 72704 && DkvLayout<128>::kBytes == 121856);
// The masked dk/dv kernel's mask tiles after DkvLayout's bytes: two (double-buffered) of the
// fragments header's [64 keys][kMaskTileStride rows] raw elements. Stride 66 (even): a key's
// rows 2q, 2q + 1 are one aligned pair, and a warp's stores of 32 consecutive keys of one row
// hit 32 distinct banks.
static_assert(kMaskTileStride % 2 == 0 && mask_tile_stores_conflict_free(1) && mask_tile_stores_conflict_free(2));
constexpr int kMaskPerThread = kTile * kTile / kThreads;
template <AttentionMaskKind kMask>
constexpr std::size_t kMaskTileBytes =
    kMask == AttentionMaskKind::None ? 0 : 2 * kTile * kMaskTileStride * sizeof(MaskElem<kMask>);

template <int D, bool kBf16, AttentionMaskKind kMask, bool kDropout>
__global__ void __launch_bounds__(kThreads, 1)
    half_dq_kernel(Pointers p, TiledShape s, MaskStrides ms, dropout::Params drop) {
  using L = DqLayout<D>;
  constexpr bool kMasked = kMask != AttentionMaskKind::None;
  constexpr bool kAdditive = kMask == AttentionMaskKind::Additive;
  constexpr int kOTiles = D / 8;  // dQ's n-tiles
  constexpr int kHalf = 4;        // score n-tiles a warp: 32 of the tile's 64 keys
  extern __shared__ __align__(16) unsigned char smem_raw[];
  u16* smem = reinterpret_cast<u16*>(smem_raw);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, lq = lane % 4;
  const int rg = warp % 4, kh = warp / 4;  // row group (16 rows), key half (32 keys)
  // The block's rows m0 .. + 63 of query head h, its key/value head's k and v (forward_block).
  [[maybe_unused]] const auto [bh, b, h, m0, key_end, qp, kp, vp] = forward_block<D>(
      static_cast<const u16*>(p.q), static_cast<const u16*>(p.k), static_cast<const u16*>(p.v), s, kTile);
  const int tiles = (key_end + kTile - 1) / kTile;
  const int row0 = m0 + 16 * rg + g;  // this lane's rows: row0 and row0 + 8

  // Q's rows by the expression dO's take, not qp: through qp nvcc 13.0 scheduled one instantiation
  // (D = 64, BF16, additive) differently, and the move to forward_block left the code as it was.
  stage_half<D, kTile, true>(smem + L::kQ, static_cast<const u16*>(p.q) + bh * s.seq_q * D, m0, s.seq_q);
  stage_half<D, kTile, true>(smem + L::kG, static_cast<const u16*>(p.grad_out) + bh * s.seq_q * D, m0, s.seq_q);
  if (tiles > 0) {
    stage_half<D, kTile, true>(smem + L::kK, kp, 0, s.seq_k);
    stage_half<D, kTile, true>(smem + L::kV, vp, 0, s.seq_k);
  }
  commit_group();

  float lse2[2], delta[2];  // logsumexp times log2(e) (exp2_unconditional; additive: as it is), delta
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    const int row = row0 + 8 * hr;
    if constexpr (kAdditive)
      lse2[hr] = row < s.seq_q ? static_cast<const float*>(p.logsumexp)[bh * s.seq_q + row] : -INFINITY;
    else
      lse2[hr] = row < s.seq_q ? static_cast<const float*>(p.logsumexp)[bh * s.seq_q + row] * kLog2e : -INFINITY;
    delta[hr] = row < s.seq_q ? static_cast<const float*>(p.delta)[bh * s.seq_q + row] : 0.f;
  }
  // Masked: this lane's two rows of the mask (key 0); the rows are the block's for every tile.
  const MaskElem<kMask>* mrow[2];
  if constexpr (kMasked)
#pragma unroll
    for (int hr = 0; hr < 2; ++hr)
      mrow[hr] = static_cast<const MaskElem<kMask>*>(p.mask) + b * ms.batch + h * ms.head +
                 static_cast<std::int64_t>(row0 + 8 * hr) * ms.row;
  const float scale2 = s.scale * kLog2e;
  float acc[kOTiles][4];
  zero(acc);

  // This lane's ldmatrix addresses (bytes, shared space): own rows for the score's A; its key
  // half's rows for the score's B (n-tile j at + 8 j rows) and the second product's B.
  const int own_off = (16 * rg + own_addr_row(lane)) * kStride<D> + own_addr_col(lane);
  const unsigned own[2] = {smem_u32(smem + L::kQ + own_off), smem_u32(smem + L::kG + own_off)};
  const int b_score = (32 * kh + score_addr_row(lane)) * kStride<D> + score_addr_col(lane);
  const int b_second = (32 * kh + second_addr_row(lane)) * kStride<D> + second_addr_col(lane);

  for (int t = 0; t < tiles; ++t) {
    const int buf = t & 1;
    const u16* ks = smem + L::kK + buf * kTileElems<D>;
    const u16* vs = smem + L::kV + buf * kTileElems<D>;
    wait_groups<0>();  // this thread's part of K_t and V_t (and, at t = 0, of Q and dO)
    __syncthreads();   // everyone's; everyone is done with tile t - 1, whose buffers take t + 1
    if (t + 1 < tiles) {
      stage_half<D, kTile, true>(smem + L::kK + (buf ^ 1) * kTileElems<D>, kp, (t + 1) * kTile, s.seq_k);
      stage_half<D, kTile, true>(smem + L::kV + (buf ^ 1) * kTileElems<D>, vp, (t + 1) * kTile, s.seq_k);
    }
    commit_group();

    // Masked: the raw mask elements of this lane's scores (keys as below), loads issued ahead of
    // the MMAs; only pairs the unmasked kernel would take are read (key < Sk, causal key <= row,
    // a live row: rows past Sq have lse -inf).
    const int kbase = t * kTile + 32 * kh;
    unsigned mraw[kHalf][4];
    if constexpr (kMasked)
#pragma unroll
      for (int j = 0; j < kHalf; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int hr = i >> 1, row = row0 + 8 * hr;
          const int key = kbase + score_row(j, c_col(lane, i));
          const bool read = key < s.seq_k && (!s.causal || key <= row) && lse2[hr] != -INFINITY;
          mraw[j][i] = mask_load<kMask, kBf16>(mrow[hr] + key * ms.key, read);
        }

    float sd[2][kHalf][4];  // S and dP
    zero(sd);
    const unsigned stream[2] = {smem_u32(ks + b_score), smem_u32(vs + b_score)};
    score<D, kHalf, 2, kBf16>(sd, own, stream);

    // dS = P (dP - delta) into sd[0]; hidden scores 0. Register i of n-tile j: own row
    // row0 + 8 (i >> 1), key 8j + 2q + (i & 1) of the warp's half (c_row, c_col, score_row).
    // Masked: mraw holds every hiding condition (kHiddenRaw where not read). Dropout: dL/dP is
    // the weight's factor times dO . v (sd[1] scaled in place), delta unchanged (dO . out).
    const std::uint64_t e_row =
        (static_cast<std::uint64_t>(bh) * s.seq_q + row0) * s.seq_k + kbase + score_row(0, c_col(lane, 0));
#pragma unroll
    for (int j = 0; j < kHalf; ++j) {
      if constexpr (kDropout) {
        float f[4];
        dropout::row_pair_factors(drop, e_row + 8 * j, e_row + 8 * j + 8 * static_cast<std::uint64_t>(s.seq_k), lane,
                                  f);
#pragma unroll
        for (int i = 0; i < 4; ++i) sd[1][j][i] *= f[i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int hr = i >> 1;
        if constexpr (kMasked) {
          const bool visible = mask_visible<kMask, kBf16>(mraw[j][i]);
          float prob;
          if constexpr (kAdditive)
            prob = additive_prob(sd[0][j][i], s.scale, widen<kBf16>(mraw[j][i]), lse2[hr]);
          else
            prob = exp2_unconditional(fmaf(sd[0][j][i], scale2, -lse2[hr]));
          sd[0][j][i] = visible ? prob * (sd[1][j][i] - delta[hr]) : 0.f;
        } else {
          const int row = row0 + 8 * hr;
          const int key = kbase + score_row(j, c_col(lane, i));
          const bool visible = key < s.seq_k && (!s.causal || key <= row) && lse2[hr] != -INFINITY;
          const float prob = exp2_unconditional(fmaf(sd[0][j][i], scale2, -lse2[hr]));
          sd[0][j][i] = visible ? prob * (sd[1][j][i] - delta[hr]) : 0.f;
        }
      }
    }
    second<D, kHalf, kBf16>(acc, sd[0], smem_u32(ks + b_second));
  }
  wait_groups<0>();  // nothing may stay in flight (tiles = 0: Q's and dO's group)
  __syncthreads();   // everyone is done with the K tiles: they take the second half's dQ

  float4* part = reinterpret_cast<float4*>(smem_raw + 2 * L::kK) + rg * kOTiles * 32 + lane;
  add_second_key_half(acc, part, kh);
  if (kh == 0) {
    const bool valid[2] = {row0 < s.seq_q, row0 + 8 < s.seq_q};
    store_rows<D, kBf16>(static_cast<u16*>(p.dq) + (bh * s.seq_q + row0) * D, acc, s.scale, valid, lq);
  }
}

// Dropout in the dk/dv kernel: each role decides half of a tile's 32 scores a lane (n-tiles
// 4 role .. + 3; bit 4 j + i: n-tile j, register i) and hands its half to the other through one
// word a lane and role, after the mask tiles: [2 roles][4 key groups][32 lanes].
template <bool kDropout>
constexpr std::size_t kKeepBitsBytes = kDropout ? kThreads * sizeof(unsigned) : 0;

template <int D, bool kBf16, AttentionMaskKind kMask, bool kDropout>
__global__ void __launch_bounds__(kThreads, 1)
    half_dkdv_kernel(Pointers p, TiledShape s, MaskStrides ms, dropout::Params drop) {
  using L = DkvLayout<D>;
  constexpr bool kMasked = kMask != AttentionMaskKind::None;
  constexpr bool kAdditive = kMask == AttentionMaskKind::Additive;
  constexpr int kOTiles = D / 8;  // dK's or dV's n-tiles
  constexpr int kNT = kTile / 8;  // score n-tiles: the tile's 64 rows
  extern __shared__ __align__(16) unsigned char smem_raw[];
  u16* smem = reinterpret_cast<u16*>(smem_raw);
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
    stage_half<D, kTile, true>(smem + L::kQ + buf * kTileElems<D>, static_cast<const u16*>(p.q) + bh * s.seq_q * D,
                               row0_of(t), s.seq_q);
    stage_half<D, kTile, true>(smem + L::kG + buf * kTileElems<D>,
                               static_cast<const u16*>(p.grad_out) + bh * s.seq_q * D, row0_of(t), s.seq_q);
  };
  float* stats_base = reinterpret_cast<float*>(smem_raw + L::kStatsBytes);
  // The tile's logsumexp (times log2(e): exp2_unconditional; additive mask: as it is) and
  // delta, with plain loads (visible after the next barrier).
  auto stage_row_stats = [&](int t, int buf) {
    if (threadIdx.x < kTile) {
      const std::int64_t bh = head_of(t);
      const int i = row0_of(t) + static_cast<int>(threadIdx.x);
      float* stats = stats_base + buf * 2 * kTile;
      if constexpr (kAdditive)
        stats[threadIdx.x] = i < s.seq_q ? static_cast<const float*>(p.logsumexp)[bh * s.seq_q + i] : -INFINITY;
      else
        stats[threadIdx.x] =
            i < s.seq_q ? static_cast<const float*>(p.logsumexp)[bh * s.seq_q + i] * kLog2e : -INFINITY;
      stats[kTile + threadIdx.x] = i < s.seq_q ? static_cast<const float*>(p.delta)[bh * s.seq_q + i] : 0.f;
    }
  };

  const std::int64_t key_base = bhk * s.seq_k;
  stage_half<D, kTile, true>(smem + L::kK, static_cast<const u16*>(p.k) + key_base * D, n0, s.seq_k);
  stage_half<D, kTile, true>(smem + L::kV, static_cast<const u16*>(p.v) + key_base * D, n0, s.seq_k);
  if (tiles > 0) {
    stage_rows(0, 0);
    stage_row_stats(0, 0);
  }
  commit_group();

  float acc[kOTiles][4];
  zero(acc);

  // This lane's ldmatrix addresses: own key rows of K (role 0) or V (role 1) for the score's A;
  // the streamed tile's rows for the score's B (n-tile j at + 8 j rows) and the second's B.
  const unsigned own[1] = {smem_u32(smem + (role == 0 ? L::kK : L::kV) +
                                    (16 * kg + own_addr_row(lane)) * kStride<D> + own_addr_col(lane))};
  const int b_score = score_addr_row(lane) * kStride<D> + score_addr_col(lane);
  const int b_second = second_addr_row(lane) * kStride<D> + second_addr_col(lane);
  // Role 0 hands P^T to role 1 in its register order: n-tile j at xs[32 j], same lane.
  float4* xs = reinterpret_cast<float4*>(smem_raw + L::kXBytes) + kg * kNT * 32 + lane;
  const int key0 = n0 + 16 * kg + g;  // this lane's keys: key0 and key0 + 8
  const float scale2 = s.scale * kLog2e;
  unsigned* const keep_bits = reinterpret_cast<unsigned*>(smem_raw + L::kBytes + kMaskTileBytes<kMask>);
  unsigned* const my_keeps = keep_bits + (role * 4 + kg) * 32 + lane;
  const unsigned* const their_keeps = keep_bits + ((role ^ 1) * 4 + kg) * 32 + lane;
  // Masked: the block's 64 keys x the tile's 64 rows of the mask, staged by all 256 threads
  // (thread: key n0 + x % 64, rows x / 64 + 4n; consecutive threads read consecutive keys) as
  // raw elements, kHiddenRaw where not read (past Sq or Sk, causally hidden), into shared
  // [2] tiles of [64 keys][kMaskTileStride rows]: role 0 reads rows 2q, 2q + 1 of a key as one pair.
  using ME = MaskElem<kMask>;
  ME* smask = reinterpret_cast<ME*>(smem_raw + L::kBytes);
  auto load_mask_tile = [&](unsigned (&m)[kMaskPerThread], int t) {
    const std::int64_t h = hk * s.group + t / per_head;  // the tile's query head
    const int i0 = row0_of(t), c = static_cast<int>(threadIdx.x) % kTile, r0 = static_cast<int>(threadIdx.x) / kTile;
    const int key = n0 + c;
    const ME* at = static_cast<const ME*>(p.mask) + b * ms.batch + h * ms.head +
                   static_cast<std::int64_t>(i0 + r0) * ms.row + key * ms.key;
#pragma unroll
    for (int n = 0; n < kMaskPerThread; ++n) {
      const int row = i0 + r0 + 4 * n;
      const bool read = row < s.seq_q && key < s.seq_k && (!s.causal || key <= row);
      m[n] = mask_load<kMask, kBf16>(at + 4 * n * ms.row, read);
    }
  };
  auto store_mask_tile = [&](const unsigned (&m)[kMaskPerThread], int buf) {
    const int c = static_cast<int>(threadIdx.x) % kTile, r0 = static_cast<int>(threadIdx.x) / kTile;
#pragma unroll
    for (int n = 0; n < kMaskPerThread; ++n)
      smask[buf * kTile * kMaskTileStride + mask_tile_at(c, r0 + 4 * n)] = static_cast<ME>(m[n]);
  };
  if constexpr (kMasked)
    if (tiles > 0) {
      unsigned m0[kMaskPerThread];
      load_mask_tile(m0, 0);
      store_mask_tile(m0, 0);  // visible after the loop's first barrier
    }

  for (int t = 0; t < tiles; ++t) {
    const int buf = t & 1, i0 = row0_of(t);
    const u16* qt = smem + L::kQ + buf * kTileElems<D>;
    const u16* gt = smem + L::kG + buf * kTileElems<D>;
    const float* stats = stats_base + buf * 2 * kTile;
    await_tile_stage_next(t, tiles, [&] {  // the tile and its row stats (and, at t = 0, K and V) here
      stage_rows(t + 1, buf ^ 1);
      stage_row_stats(t + 1, buf ^ 1);
    });

    // Masked: tile t + 1's mask elements into registers now (stored to shared memory after the
    // score MMAs, so the loads' latency overlaps them).
    unsigned mnext[kMaskPerThread];
    if constexpr (kMasked)
      if (t + 1 < tiles) load_mask_tile(mnext, t + 1);

    float sc[1][kNT][4];  // S^T (role 0) or dP^T (role 1)
    zero(sc);
    const unsigned stream[1] = {smem_u32((role == 0 ? qt : gt) + b_score)};
    score<D, kNT, 1, kBf16>(sc, own, stream);
    // Tile t + 1's buffer was last read by role 0 in tile t - 1, before this tile's first barrier.
    if constexpr (kMasked)
      if (t + 1 < tiles) store_mask_tile(mnext, buf ^ 1);

    // Register i of n-tile j: own key key0 + 8 (i >> 1), streamed row r = 8j + 2q + (i & 1) of
    // the tile. Visible: r < Sq - i0 and key < Sk (hi), causal key <= i0 + r (lo), lse != -inf.
    // A full tile (every row and key there, causal or not every key <= every row: the block's
    // keys all precede the tile's rows) needs the lse test only: the masks' index arithmetic
    // (~5 instructions a score, more than the exponential) is left to ragged and diagonal tiles.
    const bool full = i0 + kTile <= s.seq_q && n0 + kTile <= s.seq_k && (!s.causal || n0 + kTile - 1 <= i0);
    int lo[2], hi[2];  // visible rows r in [lo, hi) for key key0 + 8 hr, less this lane's 2q
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int key = key0 + 8 * hr;
      lo[hr] = (s.causal ? key - i0 : 0) - 2 * lq;
      hi[hr] = (key < s.seq_k ? s.seq_q - i0 : 0) - 2 * lq;
    }
    auto visible = [&]<bool kFull>(int j, int i) {
      const int r = score_row(j, c_col(lane, i)), rr = r - 2 * lq;  // rr: a constant for the compiler
      const bool seen = stats[r] != -INFINITY;
      if constexpr (kFull) return seen;
      return seen && rr >= lo[i >> 1] && rr < hi[i >> 1];
    };
    auto probabilities = [&]<bool kFull>() {  // role 0: P^T, handed to role 1 in register order
#pragma unroll
      for (int j = 0; j < kNT; ++j) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int r = score_row(j, c_col(lane, i));
          const float e = exp2_unconditional(fmaf(sc[0][j][i], scale2, -stats[r]));
          sc[0][j][i] = visible.template operator()<kFull>(j, i) ? e : 0.f;
        }
        xs[32 * j] = make_float4(sc[0][j][0], sc[0][j][1], sc[0][j][2], sc[0][j][3]);
      }
    };
    // Role 1: dS^T = P^T (dP^T - delta). The rows' delta pairs (rows 8j + 2q, + 1: c_col's
    // pair) load whatever the mask says: as a select's operand, not a load under it (the
    // compiler made 31 predicated loads and 35 register zeroings of it in the full path).
    // kMaskedTile: the masked kernel's test, P != kHiddenP (masked_probabilities below), else
    // visible's (kFull as there).
    static_assert(c_col(0, 1) == c_col(0, 0) + 1 && c_col(0, 2) == c_col(0, 0) && c_col(0, 0) == 0);
    [[maybe_unused]] unsigned keeps = 0;  // dropout: both halves' decisions, after the barrier
    auto score_grads = [&]<bool kFull, bool kMaskedTile = false>() {
#pragma unroll
      for (int j = 0; j < kNT; ++j) {
        const float4 pf = xs[32 * j];
        const float pe[4] = {pf.x, pf.y, pf.z, pf.w};
        const float2 dl = *reinterpret_cast<const float2*>(stats + kTile + score_row(j, 2 * lq));
        const float de[2] = {dl.x, dl.y};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          if constexpr (kDropout) sc[0][j][i] *= (keeps >> (4 * j + i)) & 1u ? drop.scale : 0.f;  // dL/dP^T
          const float ds = pe[i] * (sc[0][j][i] - de[i & 1]);
          if constexpr (kMaskedTile)
            sc[0][j][i] = pe[i] != kHiddenP ? ds : 0.f;
          else
            sc[0][j][i] = visible.template operator()<kFull>(j, i) ? ds : 0.f;
        }
      }
    };
    // Masked: role 0 folds every hiding condition (the mask's, the ranges' and causal through
    // mraw, a dead row through its lse) into one test and hands a hidden score to role 1 as
    // kHiddenP, which no P equals (P >= 0 or NaN), so role 1 needs neither the mask nor the
    // index tests: dS^T = 0 there whatever dP^T is (a NaN dO stays out of hidden pairs).
    auto masked_probabilities = [&]() {
      const ME* mk = smask + buf * kTile * kMaskTileStride;
      static_assert(mask_pair_key(0, 2) == mask_pair_key(0, 0) + 8 && mask_pair_key(0, 1) == mask_pair_key(0, 0));
#pragma unroll
      for (int j = 0; j < kNT; ++j) {
        unsigned pair[2];  // rows 8j + 2q (low) and + 1 (high) of keys key0, key0 + 8
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const ME* at = mk + mask_tile_at(16 * kg + mask_pair_key(lane, 2 * hr), mask_pair_row(j, lane));
          if constexpr (sizeof(ME) == 1)
            pair[hr] = *reinterpret_cast<const unsigned short*>(at);
          else
            pair[hr] = *reinterpret_cast<const unsigned*>(at);
        }
        unsigned mraw[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) mraw[i] = (pair[i >> 1] >> (8 * sizeof(ME) * (i & 1))) & ((1u << (8 * sizeof(ME))) - 1);
        float handed[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int r = score_row(j, c_col(lane, i));
          const bool seen = stats[r] != -INFINITY && mask_visible<kMask, kBf16>(mraw[i]);
          float e;
          if constexpr (kAdditive)
            e = additive_prob(sc[0][j][i], s.scale, widen<kBf16>(mraw[i]), stats[r]);
          else
            e = exp2_unconditional(fmaf(sc[0][j][i], scale2, -stats[r]));
          sc[0][j][i] = seen ? e : 0.f;
          handed[i] = seen ? e : kHiddenP;
        }
        xs[32 * j] = make_float4(handed[0], handed[1], handed[2], handed[3]);
      }
    };
    // Dropout: this role's half of the decisions (n-tiles 4 role .. + 3; score (key, row) is
    // element (bh Sq + row) Sk + key: attention_dropout_lanes.hpp), for the other role too. Role 1
    // draws its half while role 0 still computes P^T, so neither waits for all 8 groups a lane.
    auto draw_keeps = [&]() {
      const std::uint64_t e = (static_cast<std::uint64_t>(head_of(t)) * s.seq_q + i0) * s.seq_k + key0;
      unsigned half = 0;
#pragma unroll
      for (int jj = 0; jj < kNT / 2; ++jj) {
        const int j = (kNT / 2) * role + jj;
        half |= dropout::key_quad_keeps(drop, e + static_cast<std::uint64_t>(score_row(j, c_col(lane, 0))) * s.seq_k,
                                        s.seq_k, lane)
                << (4 * j);
      }
      *my_keeps = half;
    };
    // Role 0, after the barrier: dV's weights P^T times their factors (0 or 1 / (1 - p)).
    auto drop_weights = [&]() {
#pragma unroll
      for (int j = 0; j < kNT; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) sc[0][j][i] *= (keeps >> (4 * j + i)) & 1u ? drop.scale : 0.f;
    };
    if constexpr (kMasked) {
      if (role == 0) masked_probabilities();
    } else {
      if (role == 0) full ? probabilities.template operator()<true>() : probabilities.template operator()<false>();
    }
    if constexpr (kDropout) draw_keeps();
    __syncthreads();  // P^T (and the keep bits) visible to the other role
    if constexpr (kDropout) {
      keeps = *my_keeps | *their_keeps;
      if (role == 0) drop_weights();
    }
    if constexpr (kMasked) {
      if (role == 1) score_grads.template operator()<false, true>();
    } else {
      if (role == 1) full ? score_grads.template operator()<true>() : score_grads.template operator()<false>();
    }
    // Role 0: dV += P^T dO; role 1: dK += dS^T Q.
    const u16* bt = role == 0 ? gt : qt;
    second<D, kNT, kBf16>(acc, sc[0], smem_u32(bt + b_second));
  }
  wait_groups<0>();  // nothing may stay in flight when the block exits (tiles = 0: K and V)

  const bool valid[2] = {key0 < s.seq_k, key0 + 8 < s.seq_k};
  u16* dst = static_cast<u16*>(role == 0 ? p.dv : p.dk) + (key_base + key0) * D;
  store_rows<D, kBf16>(dst, acc, role == 0 ? 1.f : s.scale, valid, lq);
}

// One side of the backward: kDq, the dq kernel (a block per 64 query rows of a query head);
// else the dk/dv kernel (a block per 64 keys of a key/value head).
template <bool kDq>
void launch_side(const AttentionDesc& d, const Pointers& p, cudaStream_t stream) {
  const std::int64_t heads = kDq ? d.heads_q : d.heads_kv, rows = kDq ? d.seq_q : d.seq_k;
  FERRITE_CHECK(half_mma_backward_fits(d, p) && d.batch * heads * rows > 0, Unsupported,
                "scaled_dot_product_attention_backward: the F16/BF16 tensor-core ", kDq ? "dq" : "dk/dv",
                " was given a problem it does not take");
  const dim3 grid(static_cast<unsigned>(d.batch * heads), static_cast<unsigned>(row_tiles(rows, kTile)));
  const TiledShape s = tiled_shape_of(d);
  const MaskStrides ms = mask_strides_of(d);
  const dropout::Params drop = dropout::params_of(d);
  auto with_dropout = [&]<int D, bool kBf16, AttentionMaskKind kMask, bool kDropout>() {
    if constexpr (kDq)
      launch_with_smem(half_dq_kernel<D, kBf16, kMask, kDropout>, grid, kThreads, DqLayout<D>::kBytes, stream, p, s,
                       ms, drop);
    else
      launch_with_smem(half_dkdv_kernel<D, kBf16, kMask, kDropout>, grid, kThreads,
                       DkvLayout<D>::kBytes + kMaskTileBytes<kMask> + kKeepBitsBytes<kDropout>, stream, p, s, ms, drop);
  };
  auto with_mask = [&]<int D, bool kBf16, AttentionMaskKind kMask>() {
    d.has_dropout() ? with_dropout.template operator()<D, kBf16, kMask, true>()
                    : with_dropout.template operator()<D, kBf16, kMask, false>();
  };
  auto with = [&]<int D, bool kBf16>() {
    switch (d.mask) {
      case AttentionMaskKind::None: return with_mask.template operator()<D, kBf16, AttentionMaskKind::None>();
      case AttentionMaskKind::Bool: return with_mask.template operator()<D, kBf16, AttentionMaskKind::Bool>();
      case AttentionMaskKind::Additive: return with_mask.template operator()<D, kBf16, AttentionMaskKind::Additive>();
    }
  };
  const bool bf16 = d.dtype == DType::BF16;
  if (d.head_dim == 64)
    bf16 ? with.template operator()<64, true>() : with.template operator()<64, false>();
  else
    bf16 ? with.template operator()<128, true>() : with.template operator()<128, false>();
}

}  // namespace

bool half_mma_backward_fits(const AttentionDesc& d, const Pointers& p) {
  // An explicit mask (Bool or of the inputs' dtype) needs its pointer, and strides whose
  // offsets within a tile (64 rows, any key) fit the kernels' 32-bit row and key arithmetic:
  // the front end's broadcast strides (row stride 0, 1 or Sk, key stride 0 or 1) always do.
  const bool mask_ok =
      d.mask == AttentionMaskKind::None ||
      (p.mask != nullptr && d.mask_strides[0] >= 0 && d.mask_strides[1] >= 0 && d.mask_strides[2] >= 0 &&
       d.mask_strides[3] >= 0 && d.mask_strides[2] <= (std::int64_t{1} << 24) && d.mask_strides[3] <= 1);
  return (d.dtype == DType::BF16 || d.dtype == DType::F16) && mask_ok &&
         d.head_dim == d.value_dim && (d.head_dim == 64 || d.head_dim == 128) &&
         row_tiles(d.seq_q, kTile) <= kMaxGridY && row_tiles(d.seq_k, kTile) <= kMaxGridY &&
         d.batch * d.heads_q <= kMaxGridX && d.dense() && aligned16(p.q) && aligned16(p.k) && aligned16(p.v) &&
         aligned16(p.grad_out) && aligned16(p.dq) && aligned16(p.dk) && aligned16(p.dv);
}

void half_mma_backward_dq(const AttentionDesc& d, const Pointers& p, cudaStream_t stream) {
  launch_side<true>(d, p, stream);
}

void half_mma_backward_dkdv(const AttentionDesc& d, const Pointers& p, cudaStream_t stream) {
  launch_side<false>(d, p, stream);
}

}  // namespace ferrite::cuda::attention
