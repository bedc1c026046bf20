// F32 flash-attention forward for head dims 64 and 128 whose two products run on the tensor
// cores with 3xTF32 ("fast F32"): the variant of attention_f32_tiled.cu that forward() takes
// by default (FERRITE_ATTENTION_F32_TF32X3 unset or 2: the fast split; 1: the cvt split; 0
// selects the SIMT kernel instead; attention_kernels.cu, read once). Same problems,
// same semantics, same outputs (out and the natural-log logsumexp); only the products differ.
//
// Why: the SIMT kernel is bound by the CUDA cores' F32 FMA rate (~67 TFLOP/s on the H200; it
// reached 38 TFLOP/s at B=1, H=16, S=2048, D=128, PyTorch 43.2). TF32 MMA has ~7x that rate
// but 10 mantissa bits. 3xTF32 splits each operand x into big = tf32(x) and small =
// tf32(x - big) and accumulates small_a big_b + big_a small_b + big_a big_b in F32 (the small
// cross terms first, so they are not lost beside the big product): each TF32 product is exact
// in F32, the dropped small_a small_b is ~2^-22 of a b, so a product carries ~2^-21 relative
// error against F32's 2^-24 and the sums' F32 rounding dominates, as in the SIMT kernel.
// Two splits (split() in attention_tf32x3.cuh): 1 = as specified, cvt.rna.satfinite big and
// cvt.rna small (the satfinite keeps an infinite input infinite: inf as small, not inf - inf =
// NaN); 2 = the same rounding of big by integer add and mask, small handed over untruncated
// (the tensor core truncates it): 3 instructions a split instead of ~10.5, same accuracy (host
// emulation, tests/unit/attention_tf32x3_fragments_test.cpp), but an infinite input gives NaN.
//
// Layout. A block of 256 threads (8 warps) owns 128 query rows; warp w owns rows 16w .. 16w+15
// of them and, per 64-key tile, the whole 16 x 64 score block (8 MMA n-tiles of 8 keys, 32
// accumulators a lane) and the whole 16 x D output (D/8 n-tiles, D/2 accumulators a lane).
// Lane l (group g = l / 4, quad q = l % 4) holds rows g and g + 8 of the warp's 16, keys
// 8j + 2q, 8j + 2q + 1 of each n-tile j, and output dims 32c + 8q .. 32c + 8q + 7 (c < D/32).
// The index maps, PTX's and the kernel's, are attention_tf32x3_fragments.hpp; a host unit test
// (tests/unit/attention_tf32x3_fragments_test.cpp) replays them for one warp against a plain
// product. The orders are chosen so that:
//  - S = Q K^T reads Q and K from shared memory as float4s (4 head dims per lane for two MMA
//    k-steps); Q and K rows have stride D + 16 (16 banks apart: the 8 lanes of a float4 phase,
//    rows g, g + 1 x 4 quads, hit 32 distinct banks);
//  - P never leaves registers: the keys of S's n-tile j, in the order pv_key, are O's k-step j,
//    and S's accumulators (c0, c1, c2, c3) are P's A fragment (a0, a2, a1, a3);
//  - O += P V reads V as float4s along the head dims (4 output n-tiles per load); V rows have
//    stride D + 4 (rows 2q and 2q + 1 x 2 groups per phase: 32 distinct banks).
// The row max and sum of a row are over its group's 4 lanes: xor shuffles 1 and 2.
//
// Pipeline per key tile t (cp.async, one K and one V buffer), as in the SIMT kernel:
//   wait K_t; sync | issue V_t | S = Q K_t^T | sync | issue K_{t+1} | softmax, rescale O
//   | wait V_t; sync | O += P V_t
// Rows and keys past the ends are zero-filled by cp.async (src-size 0): no uninitialised
// shared memory meets a zero weight (0 * NaN); keys past Sk and causally hidden keys (top-left:
// row i sees keys j <= i) get the score -inf explicitly.
//
// Online softmax, NaN and empty rows exactly as the SIMT kernel: m is the row's running max
// (fmaxf), l each lane's partial sum of exp(s - m) over its keys, summed over the group's 4
// lanes once at the end (fixed order: results repeat bit for bit, every product is a fixed
// sequence of MMAs). While every key so far is hidden, m = -inf and exponentials are taken
// against 0. A NaN score's weight is NaN, so its row's sum and output are NaN (NaN passes
// through the MMAs); a row with no visible key (Sk = 0) writes out = 0 and logsumexp = -inf.
//
// Budget (sm_90, ptxas -v of this file, CUDA 13.0; split 1 / split 2):
//   D = 128: shared 144384 B (Q 128 x 144, K 64 x 144, V 64 x 132 floats), 1 block (8 warps)
//            per SM: 227 / 221 registers, no spills (O 64 + S 32 accumulators a lane, the rest
//            splits and loads in flight); 5808 / 3664 SASS instructions;
//   D = 64:  shared 78848 B (Q 128 x 80, K 64 x 80, V 64 x 68): 163 / 161 registers, no
//            spills, so 1 block per SM too (two would need <= 128 registers: ptxas then spilled
//            24 bytes; worth an A/B on the GPU, the bench case is D = 128).
// Both use __launch_bounds__(256, 1).
// Expected rate (D = 128, per warp and 64-key tile): 768 MMAs (3 x (16 S k-steps x 8 n-tiles
// + 8 P V k-steps x 16 n-tiles)), 608 splits (Q 64, K 256, P 32, V 256 a lane), ~150 float4
// loads, ~500 softmax instructions. The tensor cores take ~4 clocks per m16n8k8 TF32 MMA per
// SM sub-partition (1024 MAC per clock per SM), so 2 warps per sub-partition need >= 6144
// clocks a tile for their MMAs; they issue ~15600 instructions with split 1 (issue-bound:
// ~70 TFLOP/s at most at 1.98 GHz, ~50-55 expected) and ~6500 with split 2 (about MMA-bound:
// ~120 at most, ~70-90 expected if mma.sync reaches 60-70% of the TF32 peak). The SIMT kernel:
// 38, PyTorch 43.2. Measured (H200, session 10): split 1 40.1, split 2 55.9 before the clamp
// of big (attention_tf32x3.cuh), 51.7 TFLOP/s with it; ncu: 12.5% occupancy, 4.17 cycles
// between a warp's instructions, the SM 49% busy: bound by latency, not by the MMAs.
//
// To verify on the GPU (build-gpu: the CUDA build; each command on one line):
//   build-gpu/tests/ferrite_conformance --backend=cuda --gtest_filter='*scaled_dot_product_attention_F32*'
//   FERRITE_ATTENTION_F32_TF32X3=1 build-gpu/tests/ferrite_conformance --backend=cuda
//       --gtest_filter='*scaled_dot_product_attention_F32*'
//   FERRITE_ATTENTION_F32_TF32X3=2 build-gpu/tests/ferrite_conformance --backend=cuda
//       --gtest_filter='*scaled_dot_product_attention_F32*'
//   build-gpu/tests/ferrite_cuda_tests --gtest_filter='Tf32x3Attention*'   (calls this kernel
//       directly, both splits, against the SIMT kernel: no variable needed)
//   FERRITE_ATTENTION_F32_TF32X3=1 (and =2) build-gpu/tests/ferrite_cuda_tests
//       --gtest_filter='*TiledF32Attention*:*AttentionNaNCudaTiled*'
//   FERRITE_ATTENTION_F32_TF32X3=1 (and =2) python3 bench/compare_torch.py build-gpu/ferrite --filter 'sdpa_f32*'
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

constexpr int kRows = 128;  // query rows per block: 16 per warp
constexpr int kKeys = 64;   // keys per K/V tile: 8 MMA n-tiles of S
constexpr int kNTiles = kKeys / 8;
static_assert(kThreads == 256 && kRows == 16 * (kThreads / 32));

// The float4 reads below hard-code the maps of attention_tf32x3_fragments.hpp, K and V in key
// order; this ties them together (the unit test checks the maps against a matrix product).
static_assert(maps_match_float4_reads(s_key, pv_key, [](int n) { return n; }));

template <int D>
struct Layout {
  static constexpr int kQKStride = D + 16;  // Q and K rows 16 banks apart
  static constexpr int kVStride = D + 4;    // V rows 4 banks apart
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kRows * kQKStride;
  static constexpr int kV = kK + kKeys * kQKStride;
  static constexpr int kFloats = kV + kKeys * kVStride;
  static constexpr std::size_t kBytes = sizeof(float) * kFloats;
};
static_assert(Layout<64>::kBytes == 78848 && Layout<128>::kBytes == 144384);
static_assert(Layout<64>::kQKStride % 32 == 16 && Layout<128>::kQKStride % 32 == 16);
static_assert(Layout<64>::kVStride % 32 == 4 && Layout<128>::kVStride % 32 == 4);

// The online softmax's exponential (online_softmax_row): weights exp(x - m), as the SIMT forward.
struct ExpF32 {
  static __device__ __forceinline__ float base(float m_new) { return m_new == -INFINITY ? 0.f : m_new; }
  static __device__ __forceinline__ float alpha(float m, float base) { return expf(m - base); }
  static __device__ __forceinline__ float weight(float x, float base) { return expf(x - base); }
};

template <int D, bool kFast>
__global__ void __launch_bounds__(kThreads, 1)
    tf32x3_forward_kernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                          float* __restrict__ out, float* __restrict__ logsumexp, TiledShape s) {
  using L = Layout<D>;
  constexpr int kOTiles = D / 8;  // O's n-tiles
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  float* qs = smem + L::kQ;
  float* ks = smem + L::kK;
  float* vs = smem + L::kV;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, lq = lane % 4;
  const ForwardBlock block = forward_block<D>(q, k, v, s, kRows);
  const std::int64_t bh = block.bh;
  const int m0 = block.m0;
  const float *qp = block.q, *kp = block.k, *vp = block.v;
  const int tiles = (block.key_end + kKeys - 1) / kKeys;
  const int row0 = m0 + 16 * warp + g;  // this lane's rows: row0 and row0 + 8

  stage<D, kRows, L::kQKStride>(qs, qp, m0, s.seq_q);
  if (tiles > 0) stage<D, kKeys, L::kQKStride>(ks, kp, 0, s.seq_k);
  commit_group();

  float acc[kOTiles][4];
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  zero(acc);

  // This lane's float4 reads: Q rows g and g + 8 of the warp, K key g of each n-tile, V keys
  // 2q and 2q + 1 of each k-step, all at its dims (4q for Q and K, 4g for V) of a chunk.
  const float* qa = qs + (16 * warp + g) * L::kQKStride + 4 * lq;
  const float* kb = ks + g * L::kQKStride + 4 * lq;
  const float* vb = vs + 2 * lq * L::kVStride + 4 * g;

  for (int t = 0; t < tiles; ++t) {
    const int j0 = t * kKeys;
    wait_groups<0>();  // this thread's part of K_t (and, at t = 0, of Q)
    __syncthreads();   // everyone's part visible; the previous P V is done with V
    stage<D, kKeys, L::kVStride>(vs, vp, j0, s.seq_k);
    commit_group();

    float sc[kNTiles][4];
    zero(sc);
#pragma unroll(D <= 64 ? 1 : 2)
    for (int c = 0; c < D; c += 16) {
      const float4 q0 = *reinterpret_cast<const float4*>(qa + c);
      const float4 q1 = *reinterpret_cast<const float4*>(qa + 8 * L::kQKStride + c);
      // Step 0 takes components x, y; step 1 z, w (qk_dim): a = (row g, row g + 8) x (k = q, q + 4).
      const Split a0[4] = {split<kFast>(q0.x), split<kFast>(q1.x), split<kFast>(q0.y), split<kFast>(q1.y)};
      const Split a1[4] = {split<kFast>(q0.z), split<kFast>(q1.z), split<kFast>(q0.w), split<kFast>(q1.w)};
#pragma unroll
      for (int j = 0; j < kNTiles; ++j) {
        const float4 kf = *reinterpret_cast<const float4*>(kb + 8 * j * L::kQKStride + c);
        const Split b0[2] = {split<kFast>(kf.x), split<kFast>(kf.y)};
        const Split b1[2] = {split<kFast>(kf.z), split<kFast>(kf.w)};
        mma3(sc[j], a0, b0);
        mma3(sc[j], a1, b1);
      }
    }
    __syncthreads();  // everyone is done reading K_t
    if (t + 1 < tiles) stage<D, kKeys, L::kQKStride>(ks, kp, j0 + kKeys, s.seq_k);
    commit_group();  // possibly empty: keeps the group count the waits below assume

#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {  // row row0 + 8 hr: accumulators 2 hr, 2 hr + 1
      const int row = row0 + 8 * hr;
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < kNTiles; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int key = j0 + 8 * j + 2 * lq + e;
          const bool visible = key < s.seq_k && (!s.causal || key <= row);
          float& x = sc[j][2 * hr + e];
          x = visible ? x * s.scale : -INFINITY;
          mx = fmaxf(mx, x);
        }
      online_softmax_row<ExpF32>(sc, acc, m[hr], l[hr], hr, mx);
    }
    wait_groups<1>();  // V_t landed (K_{t+1} may still be in flight)
    __syncthreads();   // everyone's V_t visible

#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {  // k-step j: the keys of S's n-tile j (pv_key)
      const Split a[4] = {split_p<kFast>(sc[j][p_from_s(0)]), split_p<kFast>(sc[j][p_from_s(1)]),
                          split_p<kFast>(sc[j][p_from_s(2)]), split_p<kFast>(sc[j][p_from_s(3)])};
      const float* vj = vb + 8 * j * L::kVStride;
#pragma unroll
      for (int c = 0; c < D / 32; ++c) {
        const float4 v0 = *reinterpret_cast<const float4*>(vj + 32 * c);                 // key 8j + 2q
        const float4 v1 = *reinterpret_cast<const float4*>(vj + L::kVStride + 32 * c);   // key 8j + 2q + 1
        const float ve0[4] = {v0.x, v0.y, v0.z, v0.w}, ve1[4] = {v1.x, v1.y, v1.z, v1.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {  // n-tile 4c + e (pv_dim)
          const Split bv[2] = {split<kFast>(ve0[e]), split<kFast>(ve1[e])};
          mma3(acc[4 * c + e], a, bv);
        }
      }
    }
  }
  wait_groups<0>();  // nothing may stay in flight when the block exits (tiles = 0: Q's group)

  // Rows past Sq are not written; no visible key: out 0, logsumexp -inf; NaN rows (finish_rows).
  finish_rows(l, m, row0, lq, bh, s, logsumexp, [&](int hr, int row, float inv) {
    float* o = out + (bh * s.seq_q + row) * D;
#pragma unroll
    for (int c = 0; c < D / 32; ++c)
#pragma unroll
      for (int e = 0; e < 2; ++e)  // dims 32c + 8q + 4e .. + 3: accumulator 2 hr + e of n-tiles 4c .. 4c + 3
        *reinterpret_cast<float4*>(o + 32 * c + 8 * lq + 4 * e) =
            make_float4(acc[4 * c][2 * hr + e] * inv, acc[4 * c + 1][2 * hr + e] * inv,
                        acc[4 * c + 2][2 * hr + e] * inv, acc[4 * c + 3][2 * hr + e] * inv);
  });
}

}  // namespace

void tiled_forward_f32_tf32x3(const AttentionDesc& d, const Pointers& p, bool fast_split, cudaStream_t stream) {
  FERRITE_CHECK(tiled_forward_f32_fits(d, p), Unsupported, "scaled_dot_product_attention: the 3xTF32 F32 forward ",
                "was given a problem it does not take");
  for_head_dim_and_split(d.head_dim, fast_split, [&]<int D, bool kFast>() {
    launch_forward(tf32x3_forward_kernel<D, kFast>, kRows, Layout<D>::kBytes, d, p, stream);
  });
}

}  // namespace ferrite::cuda::attention
