// Register-blocked F32 flash-attention forward for head dims 64 and 128 (Dv = D, no explicit
// mask; causal or not, grouped-query attention, any Sq and Sk). The general kernel in
// attention_kernels.cu gives each query row one warp, so a staged K/V tile serves only 8 rows
// and the kernel is bound by its loads; here a block of 256 threads owns 128 query rows, so
// each 64-key K/V tile in shared memory serves 128 rows, and both products run as small
// register-blocked matrix products on the CUDA cores in full F32 (no TF32, results stay F32
// accurate).
//
// Threads form a 16 x 16 grid: ty = 2 * warp + lane / 16 picks query rows ty + 16i (i < 8),
// tx = lane % 16 picks keys tx + 16jj (jj < 4) of the tile for the scores and output columns
// 64qq + 4tx .. +3 (qq < D / 64) for the accumulator. A row's 16 score owners are the 16 lanes
// of one half warp, so the online softmax reduces with xor shuffles of offsets 8..1.
//
// Pipeline per key tile t (cp.async, one K and one V buffer):
//   wait K_t; sync | issue V_t | S = Q K_t^T | sync | issue K_{t+1} | softmax, P to shared,
//   rescale O | wait V_t; sync | O += P V_t
// so V_t lands while the scores are computed and K_{t+1} while the softmax and P V run. Rows
// and keys past the ends are zero-filled by cp.async (src-size 0), so no uninitialised shared
// memory ever meets a zero weight (0 * NaN); keys past Sk and causally hidden keys get the
// score -inf explicitly.
//
// Online softmax: m is the row's running max, l each lane's partial sum of exp(s - m) over its
// keys (summed over the 16 lanes once, at the end, in a fixed order: deterministic). While every
// key so far is hidden, m = -inf and exponentials are taken against 0 instead, so no
// exp(-inf - (-inf)) = NaN arises; a row with no visible key (Sk = 0) writes out = 0 and
// logsumexp = -inf, exactly as the general kernel.
#include <cstdint>

#include "cuda/attention/attention_f32_tiled.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::attention {
namespace {

using namespace tiled;

constexpr int kRows = 128;                 // query rows per block
constexpr int kKeys = 64;                  // keys per K/V tile
constexpr int kRowsPerThread = kRows / 16;  // 8
constexpr int kKeysPerThread = kKeys / 16;  // 4
// P's row stride: rows ty and ty + 1 (the two half warps) land 16 banks apart, so the scalar
// stores of P and its float4 reads are conflict-free.
constexpr int kPStride = kKeys + 16;

// Shared memory in floats. Q, K and V rows have stride D + 4: 16-byte aligned for cp.async and
// float4 reads, and consecutive rows 4 banks apart, so the 16 rows a half warp reads of K (and
// the two rows of Q) spread over all banks.
template <int D>
struct Layout {
  static constexpr int kStride = D + 4;
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kRows * kStride;
  static constexpr int kV = kK + kKeys * kStride;
  static constexpr int kP = kV + kKeys * kStride;
  static constexpr int kFloats = kP + kRows * kPStride;
  static constexpr std::size_t kBytes = sizeof(float) * kFloats;
};
// D = 64: 108 KiB, two blocks per SM; D = 128: 172 KiB, one block (both need the opt-in above 48 KiB).
static_assert(Layout<64>::kBytes == 110592 && Layout<128>::kBytes == 176128);

template <int D>
__global__ void __launch_bounds__(kThreads, D <= 64 ? 2 : 1)
    tiled_forward_kernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                         float* __restrict__ out, float* __restrict__ logsumexp, TiledShape s) {
  using L = Layout<D>;
  constexpr int kCols = D / 64;  // float4 column groups of the accumulator per thread
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  float* qs = smem + L::kQ;
  float* ks = smem + L::kK;
  float* vs = smem + L::kV;
  float* ps = smem + L::kP;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int tx = lane % 16, ty = (static_cast<int>(threadIdx.x) / 32) * 2 + lane / 16;
  const ForwardBlock block = forward_block<D>(q, k, v, s, kRows);
  const std::int64_t bh = block.bh;
  const int m0 = block.m0;
  const float *qp = block.q, *kp = block.k, *vp = block.v;
  const int tiles = (block.key_end + kKeys - 1) / kKeys;

  stage_async<D, kRows>(qs, qp, m0, s.seq_q);
  if (tiles > 0) stage_async<D, kKeys>(ks, kp, 0, s.seq_k);
  commit_group();

  float acc[kRowsPerThread][4 * kCols];
  float m[kRowsPerThread], l[kRowsPerThread];
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.f;
#pragma unroll
    for (int x = 0; x < 4 * kCols; ++x) acc[i][x] = 0.f;
  }

  for (int t = 0; t < tiles; ++t) {
    const int j0 = t * kKeys;
    wait_groups<0>();  // this thread's part of K_t (and, at t = 0, of Q)
    __syncthreads();   // everyone's part visible; the previous P V is done with V and P
    stage_async<D, kKeys>(vs, vp, j0, s.seq_k);
    commit_group();

    float sc[kRowsPerThread][kKeysPerThread];
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i)
#pragma unroll
      for (int jj = 0; jj < kKeysPerThread; ++jj) sc[i][jj] = 0.f;
#pragma unroll(D <= 64 ? 1 : 2)
    for (int c = 0; c < D; c += 4) {
      float4 kf[kKeysPerThread];
#pragma unroll
      for (int jj = 0; jj < kKeysPerThread; ++jj)
        kf[jj] = *reinterpret_cast<const float4*>(ks + (tx + 16 * jj) * L::kStride + c);
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
        const float4 qf = *reinterpret_cast<const float4*>(qs + (ty + 16 * i) * L::kStride + c);
#pragma unroll
        for (int jj = 0; jj < kKeysPerThread; ++jj) {
          sc[i][jj] = fmaf(qf.x, kf[jj].x, sc[i][jj]);
          sc[i][jj] = fmaf(qf.y, kf[jj].y, sc[i][jj]);
          sc[i][jj] = fmaf(qf.z, kf[jj].z, sc[i][jj]);
          sc[i][jj] = fmaf(qf.w, kf[jj].w, sc[i][jj]);
        }
      }
    }
    __syncthreads();  // everyone is done reading K_t
    if (t + 1 < tiles) stage_async<D, kKeys>(ks, kp, j0 + kKeys, s.seq_k);
    commit_group();  // possibly empty: keeps the group count the waits below assume

#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int row = m0 + ty + 16 * i;
      float mx = -INFINITY;
#pragma unroll
      for (int jj = 0; jj < kKeysPerThread; ++jj) {
        const int j = j0 + tx + 16 * jj;
        const bool visible = j < s.seq_k && (!s.causal || j <= row);
        sc[i][jj] = visible ? sc[i][jj] * s.scale : -INFINITY;
        mx = fmaxf(mx, sc[i][jj]);
      }
#pragma unroll
      for (int o = 8; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
      const float m_new = fmaxf(m[i], mx);
      const float base = m_new == -INFINITY ? 0.f : m_new;  // never -inf: no -inf - -inf
      const float alpha = expf(m[i] - base);                // 0 while m[i] = -inf (acc and l are 0)
      m[i] = m_new;
      float sum = 0.f;
#pragma unroll
      for (int jj = 0; jj < kKeysPerThread; ++jj) {
        const float p = expf(sc[i][jj] - base);  // hidden keys: exp(-inf) = 0
        ps[(ty + 16 * i) * kPStride + tx + 16 * jj] = p;
        sum += p;
      }
      l[i] = l[i] * alpha + sum;
#pragma unroll
      for (int x = 0; x < 4 * kCols; ++x) acc[i][x] *= alpha;
    }
    wait_groups<1>();  // V_t landed (K_{t+1} may still be in flight)
    __syncthreads();   // everyone's V_t and P visible

#pragma unroll(D <= 64 ? 1 : 2)
    for (int j = 0; j < kKeys; j += 4) {
      float4 vf[4][kCols];
#pragma unroll
      for (int e = 0; e < 4; ++e)
#pragma unroll
        for (int cc = 0; cc < kCols; ++cc)
          vf[e][cc] = *reinterpret_cast<const float4*>(vs + (j + e) * L::kStride + 64 * cc + 4 * tx);
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
        const float4 pf = *reinterpret_cast<const float4*>(ps + (ty + 16 * i) * kPStride + j);
        const float pe[4] = {pf.x, pf.y, pf.z, pf.w};
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
          for (int cc = 0; cc < kCols; ++cc) {
            acc[i][4 * cc + 0] = fmaf(pe[e], vf[e][cc].x, acc[i][4 * cc + 0]);
            acc[i][4 * cc + 1] = fmaf(pe[e], vf[e][cc].y, acc[i][4 * cc + 1]);
            acc[i][4 * cc + 2] = fmaf(pe[e], vf[e][cc].z, acc[i][4 * cc + 2]);
            acc[i][4 * cc + 3] = fmaf(pe[e], vf[e][cc].w, acc[i][4 * cc + 3]);
          }
      }
    }
  }
  wait_groups<0>();  // nothing may stay in flight when the block exits (tiles = 0: Q's group)

#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    float total = l[i];
#pragma unroll
    for (int o = 8; o > 0; o >>= 1) total += __shfl_xor_sync(0xffffffffu, total, o);
    const int row = m0 + ty + 16 * i;
    if (row >= s.seq_q) continue;
    // A row with no visible key (total exactly 0) gives 0 and logsumexp -inf. A NaN score needs
    // no NaN-aware max above: fmaxf skips it, but its weight expf(NaN - base) is NaN, so total
    // and acc are NaN (as PyTorch's softmax), and total > 0 would be false for NaN too.
    const float inv = total == 0.f ? 0.f : 1.f / total;
    float* o = out + (bh * s.seq_q + row) * D;
#pragma unroll
    for (int cc = 0; cc < kCols; ++cc)
      *reinterpret_cast<float4*>(o + 64 * cc + 4 * tx) =
          make_float4(acc[i][4 * cc] * inv, acc[i][4 * cc + 1] * inv, acc[i][4 * cc + 2] * inv, acc[i][4 * cc + 3] * inv);
    if (tx == 0) logsumexp[bh * s.seq_q + row] = total == 0.f ? -INFINITY : m[i] + logf(total);
  }
}

}  // namespace

bool tiled_forward_f32_fits(const AttentionDesc& d, const Pointers& p) {
  return d.dtype == DType::F32 && d.mask == AttentionMaskKind::None && !d.has_dropout() && d.head_dim == d.value_dim &&
         (d.head_dim == 64 || d.head_dim == 128) && d.seq_q > 0 && row_tiles(d.seq_q, kRows) <= kMaxGridY &&
         d.seq_k < (1 << 30) && d.batch * d.heads_q > 0 && d.batch * d.heads_q <= kMaxGridX && d.dense() &&
         aligned16(p.q) && aligned16(p.k) && aligned16(p.v) && aligned16(p.result);
}

void tiled_forward_f32(const AttentionDesc& d, const Pointers& p, cudaStream_t stream) {
  FERRITE_CHECK(tiled_forward_f32_fits(d, p), Unsupported, "scaled_dot_product_attention: the tiled F32 forward ",
                "was given a problem it does not take");
  if (d.head_dim == 64)
    launch_forward(tiled_forward_kernel<64>, kRows, Layout<64>::kBytes, d, p, stream);
  else
    launch_forward(tiled_forward_kernel<128>, kRows, Layout<128>::kBytes, d, p, stream);
}

}  // namespace ferrite::cuda::attention
