// F16/BF16 flash-attention forward for head dims 64 and 128 on the tensor cores in the inputs'
// own dtype: mma.sync m16n8k16 with .bf16 (or .f16) operands and F32 accumulators, q, k, v read
// as they are. It takes what cuDNN's fused SDPA does not: first of all explicit masks (Bool or
// additive, any broadcast strides over [B, Hq, Sq, Sk]), which otherwise run on the SIMT kernel
// (attention_kernels.cu, ~3 TFLOP/s). Not yet run on a GPU.
//
// Semantics exactly as the SIMT forward (attention_kernels.cu: mask_term, query_side_kernel):
// score s_ij = scale q_i.k_j (+ the additive mask's value, F16/BF16 widened to F32), -inf where
// hidden: key j >= Sk, j > i under causal (top-left), a false Bool element, an additive -inf
// (the score is then -inf whatever q.k is: a NaN q.k behind a hidden key stays hidden, as the
// SIMT kernel never computes it). A visible NaN score makes its row NaN (its weight is NaN: the
// row max skips it, exp does not); a row whose sum is exactly 0 (no visible key: Sk = 0, fully
// masked) writes out = 0 and logsumexp = -inf. logsumexp is F32, natural log: m + log(l).
//
// Arithmetic, as cuDNN and FlashAttention: S = Q K^T multiplies the F16/BF16 inputs exactly and
// sums in F32; the online softmax runs in F32 (row max m, partial sums l of the F32 weights);
// P = exp(s - m) is rounded to nearest in the dtype (cvt.rn.{bf16x2,f16x2}.f32) as the A operand
// of O += P V (F32 accumulators); O / l is rounded once to the dtype. Against the SIMT kernel
// (exact products, F32 weights) only P's rounding (relative u per weight, the unit roundoff:
// 2^-8 BF16, 2^-11 F16; F16 weights below 2^-14 are subnormal, 2^-25 absolute) and the sums'
// order differ, plus ex2.approx (~2^-22) for expf; out is rounded once in both. Host emulation:
// scripts/attention-half-mma-fwd-emulation.py.
//
// Layout (as the 3xTF32 F32 forward, attention_f32_tf32x3.cu): a block of 8 warps owns 128 query
// rows of one (batch, query head), warp w rows 16w .. + 15, and streams 64-key K/V tiles (cp.async,
// double-buffered, one barrier a tile) of its key/value head (GQA: h / group). Per warp and tile:
// S (16 x 64: 8 n-tiles x D/16 k-steps), the mask, the online softmax, then O += P V (4 k-steps x
// D/8 n-tiles). Fragments come from ldmatrix.x4 (.trans for V) on tiles stored row-major with
// row stride D + 8 elements, the maps and the C -> A hand-over of P being those of the F16/BF16
// backward (attention_half_mma_fragments.hpp: own rows = query rows, streamed rows = keys),
// replayed for this kernel's warps against plain products by
// tests/unit/attention_half_mma_fragments_test.cpp (HalfMmaFragments.ForwardWarp*); the staging,
// ldmatrix, MMA and score-product helpers are the backward's too (attention_half_mma.cuh).
//
// The mask. Its tile (the block's 128 rows x 64 keys, or one row when ms2 = 0: key padding
// [B, 1, 1, Sk] and the like) is staged into shared memory with K and V, double-buffered, as raw
// elements (1 byte Bool, 2 bytes additive; zero past Sq or Sk): with cp.async (16 bytes) when
// every chunk of 16 bytes is one aligned run of keys (ms3 = 1, ms0/ms1/ms2 and Sk multiples of
// 16 bytes' worth, the pointer on the 16-byte grid: the dense [B, H, Sq, Sk] and [B, 1, 1, Sk]
// shapes with Sk a multiple of 16 / 8), else with plain loads after the tile's products (any
// strides, ms3 = 0 too). Each lane then reads its keys' pair (8j + 2q, + 1: c_col) for each of
// its two rows with one 16-bit (Bool) or 32-bit (additive) shared load: 16 a tile. Mask rows are
// 80 (Bool) or 144 (additive) bytes apart: the 8 rows x 4 lanes of a read fall in distinct banks.
//
// Skips, bit for bit harmless: a warp whose rows are all past Sq, or (causal) all before the
// tile's first key, leaves the tile out (every weight would be 0 and alpha exactly 1); the key
// and causal index tests run only on ragged and diagonal tiles (`edge`).
//
// Budget (ptxas -v, CUDA 13.0, sm_90, __launch_bounds__(256, 1)): see nn.md (session 13) for
// the registers of each of the 12 kernels (D x dtype x mask kind); no spills, no stack.
// Shared: D = 128 104448 B (+ 20480 Bool, + 36864 additive), D = 64 55296 B (+ the same).
// Cost per warp and 64-key tile at D = 128: 128 m16n8k16 MMAs (S 64, P V 64), 72 ldmatrix.x4
// (Q 8, K 32, V 32), 32 exponentials, 16 mask loads, ~200 softmax instructions.
//
// Dropout (kDropout, since session 16): after the online softmax each weight is multiplied by its
// factor (0 or 1 / (1 - p): attention_dropout_lanes.hpp decides, one Philox group a lane per four
// weights) before it is rounded for P V; l sums the undropped weights, so logsumexp is the one
// without dropout. The unmasked and masked kernels each have their kDropout twin; without it the code is
// as before. Their budget (ptxas -v, CUDA 13.0, sm_90): 242-244 registers at D = 128, 249-254 at
// D = 64 (the Philox rounds of all 8 n-tiles unrolled), no spills, no stack. F16: a kept weight
// times 1 / (1 - p) is rounded to F16 for P V, so p > 1 - 2^-16 (a factor past 65504) would make
// it inf where the SIMT kernel, which keeps F32 weights, stays finite.
//
// To verify on the GPU (build-gpu: the CUDA build):
//   build-gpu/tests/ferrite_cuda_tests --gtest_filter='HalfMmaForward*'
//   build-gpu/tests/ferrite_conformance --backend=cuda --gtest_filter='*scaled_dot_product_attention*'
//   FERRITE_ATTENTION_HALF_FWD=simt (the SIMT kernel, for the A/B) and unset (this one):
//   python3 bench/compare_torch.py build-gpu/ferrite --filter 'sdpa_bf16_keypad_fwd,sdpa_bf16_addmask_fwd'
#include <cstdint>

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

constexpr int kRows = 128;          // query rows a block: 16 a warp
constexpr int kKeys = 64;           // keys a K/V tile
constexpr int kNT = kKeys / 8;      // score n-tiles a tile
static_assert(kThreads == 256 && kRows == 16 * (kThreads / 32));

enum MaskMode : int { kNoMask = 0, kBoolMask = 1, kAddMask = 2 };
// Bytes an element of the staged mask, and a staged mask row (mask_row_bytes: 64 keys plus 16
// bytes, so the 8 rows x 4 lanes of one read fall in distinct banks and every row stays on the
// 16-byte grid).
template <int kMask>
constexpr int kMaskElem = kMask == kAddMask ? 2 : 1;
template <int kMask>
constexpr int kMaskRow = mask_row_bytes(kMaskElem<kMask>);
static_assert(kKeys == 64);  // mask_row_bytes's tile width
static_assert(kMaskRow<kBoolMask> % 16 == 0 && kMaskRow<kAddMask> % 16 == 0);

// The explicit mask as the kernel reads it: element (b, h, i, j) at base + (b s0 + h s1 + i s2 +
// j s3) elements. async: 16-byte cp.async staging is valid (see the top); rows1: s2 = 0, one
// staged row serves every query row.
struct MaskArgs {
  const unsigned char* base = nullptr;
  long long s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  bool async = false, rows1 = false;
};

template <int D, int kMask>
struct FwdLayout {
  static constexpr int kQ = 0;                                 // [128][D + 8] query rows
  static constexpr int kK = kQ + kRows * kStride<D>;           // [2][64][D + 8] K tiles
  static constexpr int kV = kK + 2 * kKeys * kStride<D>;       // [2][64][D + 8] V tiles
  static constexpr int kMaskBytes = 2 * (kV + 2 * kKeys * kStride<D>);  // [2][128][kMaskRow]
  static constexpr int kMaskBuf = kRows * kMaskRow<kMask>;
  static constexpr std::size_t kBytes = kMaskBytes + (kMask == kNoMask ? 0 : 2 * kMaskBuf);
  static_assert(kMaskBytes % 16 == 0);
};
static_assert(FwdLayout<128, kNoMask>::kBytes == 104448 && FwdLayout<64, kNoMask>::kBytes == 55296);
static_assert(FwdLayout<128, kAddMask>::kBytes == 104448 + 36864);

// The mask's tile for query rows [m0, m0 + 128) (one row when rows1) and keys [j0, j0 + 64) into
// shared `dst` ([rows][kMaskRow] bytes), zero past Sq and Sk. kAsync: by 16-byte cp.async
// (MaskArgs::async), else by plain loads. `off`: the block's (b, h) offset in elements.
template <int kMask, bool kAsync>
__device__ __forceinline__ void stage_mask(unsigned char* dst, const MaskArgs& mk, long long off, int m0, int j0,
                                           const TiledShape& s) {
  constexpr int E = kMaskElem<kMask>;
  const int rows = mk.rows1 ? 1 : kRows;
  if constexpr (kAsync) {
    constexpr int kChunks = kKeys * E / 16, kPer = 16 / E;  // chunks a row, keys a chunk
    for (int e = static_cast<int>(threadIdx.x); e < rows * kChunks; e += kThreads) {
      const int r = e / kChunks, c = (e % kChunks) * kPer;
      const int i = m0 + r, j = j0 + c;
      const bool valid = i < s.seq_q && j < s.seq_k;  // Sk a multiple of kPer: all 16 bytes or none
      const unsigned char* from = valid ? mk.base + (off + i * mk.s2 + j) * E : mk.base;
      cp_async16(dst + r * kMaskRow<kMask> + c * E, from, valid);
    }
  } else {
    for (int e = static_cast<int>(threadIdx.x); e < rows * kKeys; e += kThreads) {
      const int r = e / kKeys, c = e % kKeys;
      const int i = m0 + r, j = j0 + c;
      const bool valid = i < s.seq_q && j < s.seq_k;
      const long long at = off + i * mk.s2 + j * mk.s3;
      if constexpr (kMask == kBoolMask)
        dst[r * kMaskRow<kMask> + c] = valid && mk.base[at] != 0 ? 1 : 0;
      else
        *reinterpret_cast<u16*>(dst + r * kMaskRow<kMask> + 2 * c) =
            valid ? reinterpret_cast<const u16*>(mk.base)[at] : u16{0};
    }
  }
}

// The F16/BF16 value in the low (h = 0) or high half of `w`, widened to F32 exactly.
template <bool kBf16>
__device__ __forceinline__ float half_of(unsigned w, int h) {
  return widen<kBf16>(h == 0 ? (w & 0xffffu) : (w >> 16));
}

// The online softmax's exponential (online_softmax_row): weights 2^(x log2(e) - m log2(e)), one
// FFMA and one MUFU.EX2 a score. alpha is exactly 1 while m is unchanged: both products unfused,
// so m log2(e) - base = 0.
struct ExpLog2 {
  static __device__ __forceinline__ float base(float m_new) {
    return __fmul_rn(m_new == -INFINITY ? 0.f : m_new, kLog2e);
  }
  static __device__ __forceinline__ float alpha(float m, float base) {
    return exp2_approx(__fmul_rn(m, kLog2e) - base);
  }
  static __device__ __forceinline__ float weight(float x, float base) { return exp2_approx(fmaf(x, kLog2e, -base)); }
};

template <int D, bool kBf16, int kMask, bool kDropout>
__global__ void __launch_bounds__(kThreads, 1)
    half_fwd_kernel(const u16* __restrict__ q, const u16* __restrict__ k, const u16* __restrict__ v,
                    u16* __restrict__ out, float* __restrict__ logsumexp, TiledShape s, MaskArgs mk,
                    dropout::Params drop) {
  using L = FwdLayout<D, kMask>;
  constexpr int kOTiles = D / 8;  // O's n-tiles
  constexpr unsigned kRowBytes = 2 * kStride<D>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  u16* smem = reinterpret_cast<u16*>(smem_raw);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, lq = lane % 4;
  // The block's rows m0 .. + 127 of query head h, its key/value head's k and v (forward_block).
  const auto [bh, b, h, m0, key_end, qp, kp, vp] = forward_block<D>(q, k, v, s, kRows);
  const int tiles = (key_end + kKeys - 1) / kKeys;
  const int wrow = m0 + 16 * warp;  // the warp's first row
  const int row0 = wrow + g;        // this lane's rows: row0 and row0 + 8
  const long long moff = b * mk.s0 + h * mk.s1;
  unsigned char* mask_smem = smem_raw + L::kMaskBytes;

  auto stage_tile = [&](int t, int buf) {
    stage_half<D, kKeys, false>(smem + L::kK + buf * kKeys * kStride<D>, kp, t * kKeys, s.seq_k);
    stage_half<D, kKeys, false>(smem + L::kV + buf * kKeys * kStride<D>, vp, t * kKeys, s.seq_k);
    if constexpr (kMask != kNoMask)
      if (mk.async) stage_mask<kMask, true>(mask_smem + buf * L::kMaskBuf, mk, moff, m0, t * kKeys, s);
  };
  stage_half<D, kRows, false>(smem + L::kQ, qp, m0, s.seq_q);
  if (tiles > 0) {
    stage_tile(0, 0);
    if constexpr (kMask != kNoMask)
      if (!mk.async) stage_mask<kMask, false>(mask_smem, mk, moff, m0, 0, s);
  }
  commit_group();

  float acc[kOTiles][4];
  zero(acc);
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};

  // This lane's ldmatrix addresses (bytes, shared space): its query rows for S's A, its key
  // rows of an n-tile for S's B (n-tile j at + 8 j rows), its key rows of a k-step for V (.trans).
  const unsigned qa[1] = {smem_u32(smem + L::kQ + (16 * warp + own_addr_row(lane)) * kStride<D> + own_addr_col(lane))};
  const int kb_off = score_addr_row(lane) * kStride<D> + score_addr_col(lane);
  const int vb_off = second_addr_row(lane) * kStride<D> + second_addr_col(lane);
  // Its staged mask rows: rows g and g + 8 of the warp (c_row of registers 0 and 2), or the one
  // row when rows1; n-tile j's pair at mask_pair_offset.
  int mrow[2];
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) mrow[hr] = mk.rows1 ? 0 : 16 * warp + c_row(lane, 2 * hr);
  static_assert(c_col(0, 1) == c_col(0, 0) + 1 && c_col(0, 3) == c_col(0, 1) && c_row(0, 2) == c_row(0, 0) + 8);

  for (int t = 0; t < tiles; ++t) {
    const int buf = t & 1, j0 = t * kKeys;
    // Tile t (and, at t = 0, Q) here; tile t + 1 issued.
    await_tile_stage_next(t, tiles, [&] { stage_tile(t + 1, buf ^ 1); });

    // A warp with no row before Sq, or (causal) no row that sees a key of the tile, would add
    // only zero weights with alpha = 1: it leaves the tile out.
    const bool idle = wrow >= s.seq_q || (s.causal && wrow + 15 < j0);
    if (!idle) {
      const u16* ks = smem + L::kK + buf * kKeys * kStride<D>;
      const u16* vs = smem + L::kV + buf * kKeys * kStride<D>;
      const unsigned kb[1] = {smem_u32(ks + kb_off)}, vb = smem_u32(vs + vb_off);
      float s1[1][kNT][4];  // score's shape for one product
      float(&sc)[kNT][4] = s1[0];
      zero(sc);
      // S = Q K^T: two k-steps (32 dims) at a time, A by one ldmatrix.x4 a step, B of n-tile j
      // for both steps by one.
      score<D, kNT, 1, kBf16>(s1, qa, kb);

      // Scores: register i of n-tile j is row row0 + 8 (i >> 1), key j0 + 8 j + 2q + (i & 1)
      // (c_row, c_col, score_row). Ragged (keys past Sk) and diagonal tiles test the indices.
      const unsigned char* mt = mask_smem + buf * L::kMaskBuf;
      const bool edge = j0 + kKeys > s.seq_k || (s.causal && j0 + kKeys - 1 > wrow);
      auto scores = [&]<bool kEdge>() {
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int row = row0 + 8 * hr;
#pragma unroll
          for (int j = 0; j < kNT; ++j) {
            [[maybe_unused]] unsigned mw = 0;
            if constexpr (kMask == kBoolMask)
              mw = *reinterpret_cast<const u16*>(mt + mask_pair_offset(lane, mrow[hr], j, 1));
            else if constexpr (kMask == kAddMask)
              mw = *reinterpret_cast<const unsigned*>(mt + mask_pair_offset(lane, mrow[hr], j, 2));
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              float& x = sc[j][2 * hr + e];
              bool visible = true;
              if constexpr (kEdge) {
                const int key = j0 + score_row(j, c_col(lane, e));
                visible = key < s.seq_k && (!s.causal || key <= row);
              }
              float val = x * s.scale;
              if constexpr (kMask == kBoolMask) visible = visible && ((mw >> (8 * e)) & 0xffu) != 0;
              if constexpr (kMask == kAddMask) {
                const float bias = half_of<kBf16>(mw, e);
                visible = visible && bias != -INFINITY;
                val = fmaf(x, s.scale, bias);
              }
              x = visible ? val : -INFINITY;
            }
          }
        }
      };
      edge ? scores.template operator()<true>() : scores.template operator()<false>();

      // Online softmax (F32), per row: m the running max (fmaxf: a NaN score is skipped here but
      // its weight below is NaN), weights 2^(s log2(e) - m log2(e)), l this lane's partial sum.
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        float mx = -INFINITY;
#pragma unroll
        for (int j = 0; j < kNT; ++j) mx = fmaxf(mx, fmaxf(sc[j][2 * hr], sc[j][2 * hr + 1]));
        online_softmax_row<ExpLog2>(sc, acc, m[hr], l[hr], hr, mx);
      }
      // Dropout: the weights enter P V times their factor (0 or 1 / (1 - p)), l without it.
      // Score (row, key) is element (bh Sq + row) Sk + key (attention_dropout_lanes.hpp).
      if constexpr (kDropout) {
        const std::uint64_t e_row =
            (static_cast<std::uint64_t>(bh) * s.seq_q + row0) * s.seq_k + j0 + score_row(0, c_col(lane, 0));
        const std::uint64_t below = 8 * static_cast<std::uint64_t>(s.seq_k);  // row + 8
#pragma unroll
        for (int j = 0; j < kNT; ++j) {
          float f[4];
          dropout::row_pair_factors(drop, e_row + 8 * j, e_row + 8 * j + below, lane, f);
#pragma unroll
          for (int i = 0; i < 4; ++i) sc[j][i] *= f[i];
        }
      }

      // O += P V: P rounded to the dtype as A (k-step J = score n-tiles 2J, 2J + 1: a_from_c),
      // V by ldmatrix.x4.trans (keys as k, dims as n: two n-tiles a load). The same loop as
      // half_mma::second (attention_half_mma.cuh), written out here: called, it changed the
      // order nvcc 13.0 emits this kernel's instructions in (the PTX's registers and the
      // cubins' .text differ, the same registers a thread), so the inline loop keeps the
      // reviewed machine code.
#pragma unroll
      for (int J = 0; J < kNT / 2; ++J) {
        unsigned a[4];
#pragma unroll
        for (int r = 0; r < 4; ++r)
          a[r] = pack2<kBf16>(sc[a_from_c_tile(J, r)][a_from_c_reg(r, 0)], sc[a_from_c_tile(J, r)][a_from_c_reg(r, 1)]);
#pragma unroll
        for (int np = 0; np < D / 16; ++np) {
          unsigned bf[4];
          ldsm_x4_trans(bf, vb + 16 * J * kRowBytes + 2 * 16 * np);
          mma16<kBf16>(acc[2 * np], a, bf[0], bf[1]);
          mma16<kBf16>(acc[2 * np + 1], a, bf[2], bf[3]);
        }
      }
    }
    // The fallback mask staging (plain loads) for tile t + 1, after this tile's MMAs were issued:
    // its buffer was tile t - 1's, which everyone left before this tile's barrier.
    if constexpr (kMask != kNoMask)
      if (!mk.async && t + 1 < tiles)
        stage_mask<kMask, false>(mask_smem + (buf ^ 1) * L::kMaskBuf, mk, moff, m0, j0 + kKeys, s);
  }
  wait_groups<0>();  // nothing may stay in flight when the block exits (tiles = 0: Q's group)

  // Rows past Sq are not written; no visible key: out 0, logsumexp -inf (finish_rows).
  finish_rows(l, m, row0, lq, bh, s, logsumexp, [&](int hr, int row, float inv) {
    u16* o = out + (bh * s.seq_q + row) * D;
#pragma unroll
    for (int nt = 0; nt < kOTiles; ++nt)
      *reinterpret_cast<unsigned*>(o + out_dim(nt, 2 * lq)) =
          pack2<kBf16>(acc[nt][2 * hr] * inv, acc[nt][2 * hr + 1] * inv);
  });
}

}  // namespace

bool half_mma_forward_fits(const AttentionDesc& d, const Pointers& p) {
  return (d.dtype == DType::BF16 || d.dtype == DType::F16) && d.head_dim == d.value_dim &&
         (d.head_dim == 64 || d.head_dim == 128) && d.dense() && row_tiles(d.seq_q, kRows) <= kMaxGridY &&
         d.seq_k <= (std::int64_t{1} << 30) && d.batch * d.heads_q <= kMaxGridX &&
         (d.mask == AttentionMaskKind::None || p.mask != nullptr || d.seq_k == 0) && aligned16(p.q) && aligned16(p.k) &&
         aligned16(p.v) && aligned16(p.result);
}

void half_mma_forward(const AttentionDesc& d, const Pointers& p, cudaStream_t stream) {
  FERRITE_CHECK(half_mma_forward_fits(d, p), Unsupported,
                "scaled_dot_product_attention: the F16/BF16 tensor-core forward was given a problem it does not take");
  if (d.batch * d.heads_q * d.seq_q == 0) return;  // no row to write
  const dim3 grid(static_cast<unsigned>(d.batch * d.heads_q), static_cast<unsigned>(row_tiles(d.seq_q, kRows)));
  const TiledShape s = tiled_shape_of(d);
  MaskArgs mk;
  if (d.mask != AttentionMaskKind::None) {
    const long long per = d.mask == AttentionMaskKind::Bool ? 16 : 8;  // elements a 16-byte chunk
    const auto& ms = d.mask_strides;
    mk.base = static_cast<const unsigned char*>(p.mask);
    mk.s0 = ms[0];
    mk.s1 = ms[1];
    mk.s2 = ms[2];
    mk.s3 = ms[3];
    mk.rows1 = ms[2] == 0;
    mk.async = ms[3] == 1 && ms[0] % per == 0 && ms[1] % per == 0 && ms[2] % per == 0 && d.seq_k % per == 0 &&
               aligned16(p.mask);
  }
  const dropout::Params drop = dropout::params_of(d);
  auto with = [&]<int D, bool kBf16, int kMask>() {
    auto launch = [&](auto kernel) {
      launch_with_smem(kernel, grid, kThreads, FwdLayout<D, kMask>::kBytes, stream, static_cast<const u16*>(p.q),
                       static_cast<const u16*>(p.k), static_cast<const u16*>(p.v), static_cast<u16*>(p.result),
                       static_cast<float*>(p.logsumexp), s, mk, drop);
    };
    d.has_dropout() ? launch(half_fwd_kernel<D, kBf16, kMask, true>) : launch(half_fwd_kernel<D, kBf16, kMask, false>);
  };
  auto with_mask = [&]<int D, bool kBf16>() {
    switch (d.mask) {
      case AttentionMaskKind::None: return with.template operator()<D, kBf16, kNoMask>();
      case AttentionMaskKind::Bool: return with.template operator()<D, kBf16, kBoolMask>();
      case AttentionMaskKind::Additive: return with.template operator()<D, kBf16, kAddMask>();
    }
  };
  const bool bf16 = d.dtype == DType::BF16;
  if (d.head_dim == 64)
    bf16 ? with_mask.template operator()<64, true>() : with_mask.template operator()<64, false>();
  else
    bf16 ? with_mask.template operator()<128, true>() : with_mask.template operator()<128, false>();
}

}  // namespace ferrite::cuda::attention
