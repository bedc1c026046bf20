// Register-blocked F32 flash-attention backward for head dims 64 and 128 (Dv = D, no explicit
// mask; causal or not, grouped-query attention, any Sq and Sk), the counterpart of the tiled
// forward (attention_f32_tiled.cu). It recomputes P = exp(scale * q.k - lse) from the saved
// logsumexp, with delta_i = dO_i . O_i from the general backward's delta_kernel, and writes
// dq, dk and dv with one owner block each (no atomics: deterministic, bit for bit):
//  - dq: a block owns 64 query rows and streams 64-key K/V tiles: S = Q K^T and dP = dO V^T
//    (4 x 4 register blocks per thread, one loop over d), dS = P (dP - delta) to shared
//    memory, dQ += dS K (4 x D/16 per thread); dq = scale * dQ.
//  - dk/dv: a block owns 64 keys and streams 64-row Q/dO tiles of every query head of its group:
//    S^T = K Q^T and dP^T = V dO^T, P^T and dS^T to shared memory, dV += P^T dO and
//    dK += dS^T Q; dk = scale * dK.
// Threads form a 16 x 16 grid: ty = 2 * warp + lane / 16 picks the block's own rows ty + 16i
// (i < 4), tx = lane % 16 picks the streamed tile's rows tx + 16jj (jj < 4) for the scores and
// output columns 64c + 4tx .. +3 (c < D / 64) for the accumulators. Every sum runs over a fixed
// order. Hidden scores (past Sk or Sq, causal, or a fully masked row: lse = -inf) get P = 0 and
// dS = 0 explicitly, never exp(+inf); rows past the ends are zero-filled by cp.async, so no
// uninitialised shared memory meets a zero weight.
#include <cstdint>

#include "cuda/attention/attention_f32_tiled.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::attention {
namespace {

using namespace tiled;

constexpr int kTile = 64;  // own rows per block, and rows per streamed tile
constexpr int kPer = kTile / 16;  // 4 own rows and 4 streamed rows per thread
// Score tiles' row stride: rows ty and ty + 1 (the two half warps) land 16 banks apart.
constexpr int kSStride = kTile + 16;

template <int D>
struct DqLayout {
  static constexpr int kStride = D + 4;
  static constexpr int kQ = 0;                      // [64][D + 4] own query rows
  static constexpr int kG = kQ + kTile * kStride;   // [64][D + 4] their grad_out rows
  static constexpr int kK = kG + kTile * kStride;   // [2][64][D + 4] K tiles (double-buffered)
  static constexpr int kV = kK + 2 * kTile * kStride;  // [64][D + 4] V tile
  static constexpr int kS = kV + kTile * kStride;   // [64][80] dS
  static constexpr int kFloats = kS + kTile * kSStride;
  static constexpr std::size_t kBytes = sizeof(float) * kFloats;
};

template <int D>
struct DkvLayout {
  static constexpr int kStride = D + 4;
  static constexpr int kK = 0;                      // [64][D + 4] own key rows
  static constexpr int kV = kK + kTile * kStride;   // [64][D + 4] their value rows
  static constexpr int kQ = kV + kTile * kStride;   // [64][D + 4] Q tile
  static constexpr int kG = kQ + kTile * kStride;   // [64][D + 4] grad_out tile
  static constexpr int kP = kG + kTile * kStride;   // [64][80] P^T
  static constexpr int kS = kP + kTile * kSStride;  // [64][80] dS^T
  static constexpr int kL = kS + kTile * kSStride;  // [64] the Q tile's logsumexp
  static constexpr int kDelta = kL + kTile;         // [64] the Q tile's delta
  static constexpr int kFloats = kDelta + kTile;
  static constexpr std::size_t kBytes = sizeof(float) * kFloats;
};
// D = 128: 185 KiB (dq) and 172.5 KiB (dk/dv), one block per SM; opted in above 48 KiB.
static_assert(DqLayout<128>::kBytes == 189440 && DkvLayout<128>::kBytes == 176640);

struct Operands {
  const float* q;
  const float* k;
  const float* v;
  const float* grad_out;
  const float* lse;
  const float* delta;
  float* dq;
  float* dk;
  float* dv;
};

template <int D>
__global__ void __launch_bounds__(kThreads, D <= 64 ? 2 : 1) tiled_dq_kernel(Operands o, TiledShape s) {
  using L = DqLayout<D>;
  constexpr int kCols = D / 64;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  float* qs = smem + L::kQ;
  float* gs = smem + L::kG;
  float* vs = smem + L::kV;
  float* dss = smem + L::kS;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int tx = lane % 16, ty = (static_cast<int>(threadIdx.x) / 32) * 2 + lane / 16;
  // Heads along x (the fast index), row tiles along y in reverse: causal, every head's heaviest
  // tiles start first (as the forward).
  const std::int64_t bh = blockIdx.x, b = bh / s.heads_q, h = bh % s.heads_q, hk = h / s.group;
  const int m0 = static_cast<int>(gridDim.y - 1 - blockIdx.y) * kTile;
  const float* kp = o.k + (b * s.heads_kv + hk) * s.seq_k * D;
  const float* vp = o.v + (b * s.heads_kv + hk) * s.seq_k * D;
  const int key_end = s.causal ? min(s.seq_k, m0 + kTile) : s.seq_k;
  const int tiles = (key_end + kTile - 1) / kTile;

  stage_async<D, kTile>(qs, o.q + bh * s.seq_q * D, m0, s.seq_q);
  stage_async<D, kTile>(gs, o.grad_out + bh * s.seq_q * D, m0, s.seq_q);
  if (tiles > 0) {
    stage_async<D, kTile>(smem + L::kK, kp, 0, s.seq_k);
    stage_async<D, kTile>(vs, vp, 0, s.seq_k);
  }
  commit_group();

  float lse[kPer], delta[kPer];
  float acc[kPer][4 * kCols];
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int row = m0 + ty + 16 * i;
    lse[i] = row < s.seq_q ? o.lse[bh * s.seq_q + row] : -INFINITY;
    delta[i] = row < s.seq_q ? o.delta[bh * s.seq_q + row] : 0.f;
#pragma unroll
    for (int x = 0; x < 4 * kCols; ++x) acc[i][x] = 0.f;
  }

  for (int t = 0; t < tiles; ++t) {
    const int j0 = t * kTile;
    const float* ks = smem + L::kK + (t & 1) * kTile * L::kStride;
    wait_groups<0>();  // this thread's part of K_t and V_t
    __syncthreads();   // everyone's; the previous tile's dQ pass is done with dS and K_{t-1}
    if (t + 1 < tiles) stage_async<D, kTile>(smem + L::kK + ((t + 1) & 1) * kTile * L::kStride, kp, j0 + kTile, s.seq_k);
    commit_group();

    float sc[kPer][kPer], dp[kPer][kPer];
#pragma unroll
    for (int i = 0; i < kPer; ++i)
#pragma unroll
      for (int jj = 0; jj < kPer; ++jj) sc[i][jj] = dp[i][jj] = 0.f;
#pragma unroll 2
    for (int c = 0; c < D; c += 4) {
      float4 kf[kPer], vf[kPer];
#pragma unroll
      for (int jj = 0; jj < kPer; ++jj) {
        kf[jj] = *reinterpret_cast<const float4*>(ks + (tx + 16 * jj) * L::kStride + c);
        vf[jj] = *reinterpret_cast<const float4*>(vs + (tx + 16 * jj) * L::kStride + c);
      }
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        const float4 qf = *reinterpret_cast<const float4*>(qs + (ty + 16 * i) * L::kStride + c);
        const float4 gf = *reinterpret_cast<const float4*>(gs + (ty + 16 * i) * L::kStride + c);
#pragma unroll
        for (int jj = 0; jj < kPer; ++jj) {
          sc[i][jj] = fmaf(qf.x, kf[jj].x, sc[i][jj]);
          sc[i][jj] = fmaf(qf.y, kf[jj].y, sc[i][jj]);
          sc[i][jj] = fmaf(qf.z, kf[jj].z, sc[i][jj]);
          sc[i][jj] = fmaf(qf.w, kf[jj].w, sc[i][jj]);
          dp[i][jj] = fmaf(gf.x, vf[jj].x, dp[i][jj]);
          dp[i][jj] = fmaf(gf.y, vf[jj].y, dp[i][jj]);
          dp[i][jj] = fmaf(gf.z, vf[jj].z, dp[i][jj]);
          dp[i][jj] = fmaf(gf.w, vf[jj].w, dp[i][jj]);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int row = m0 + ty + 16 * i;
#pragma unroll
      for (int jj = 0; jj < kPer; ++jj) {
        const int j = j0 + tx + 16 * jj;
        const bool visible = j < s.seq_k && (!s.causal || j <= row) && lse[i] != -INFINITY;
        const float p = visible ? expf(sc[i][jj] * s.scale - lse[i]) : 0.f;
        dss[(ty + 16 * i) * kSStride + tx + 16 * jj] = visible ? p * (dp[i][jj] - delta[i]) : 0.f;
      }
    }
    __syncthreads();  // dS visible; everyone is done reading V_t
    if (t + 1 < tiles) stage_async<D, kTile>(vs, vp, j0 + kTile, s.seq_k);
    commit_group();

#pragma unroll 2
    for (int j = 0; j < kTile; j += 4) {
      float4 kf[4][kCols];
#pragma unroll
      for (int e = 0; e < 4; ++e)
#pragma unroll
        for (int cc = 0; cc < kCols; ++cc)
          kf[e][cc] = *reinterpret_cast<const float4*>(ks + (j + e) * L::kStride + 64 * cc + 4 * tx);
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        const float4 df = *reinterpret_cast<const float4*>(dss + (ty + 16 * i) * kSStride + j);
        const float de[4] = {df.x, df.y, df.z, df.w};
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
          for (int cc = 0; cc < kCols; ++cc) {
            acc[i][4 * cc + 0] = fmaf(de[e], kf[e][cc].x, acc[i][4 * cc + 0]);
            acc[i][4 * cc + 1] = fmaf(de[e], kf[e][cc].y, acc[i][4 * cc + 1]);
            acc[i][4 * cc + 2] = fmaf(de[e], kf[e][cc].z, acc[i][4 * cc + 2]);
            acc[i][4 * cc + 3] = fmaf(de[e], kf[e][cc].w, acc[i][4 * cc + 3]);
          }
      }
    }
  }
  wait_groups<0>();  // nothing may stay in flight when the block exits

#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int row = m0 + ty + 16 * i;
    if (row >= s.seq_q) continue;
    float* dst = o.dq + (bh * s.seq_q + row) * D;
#pragma unroll
    for (int cc = 0; cc < kCols; ++cc)
      *reinterpret_cast<float4*>(dst + 64 * cc + 4 * tx) =
          make_float4(acc[i][4 * cc] * s.scale, acc[i][4 * cc + 1] * s.scale, acc[i][4 * cc + 2] * s.scale,
                      acc[i][4 * cc + 3] * s.scale);
  }
}

template <int D>
__global__ void __launch_bounds__(kThreads, D <= 64 ? 2 : 1) tiled_dkdv_kernel(Operands o, TiledShape s) {
  using L = DkvLayout<D>;
  constexpr int kCols = D / 64;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  float* ks = smem + L::kK;
  float* vs = smem + L::kV;
  float* qs = smem + L::kQ;
  float* gs = smem + L::kG;
  float* pts = smem + L::kP;
  float* dsts = smem + L::kS;
  float* lse_s = smem + L::kL;
  float* delta_s = smem + L::kDelta;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int tx = lane % 16, ty = (static_cast<int>(threadIdx.x) / 32) * 2 + lane / 16;
  // The block's keys n0 .. + 63 of key/value head hk, and its query tiles (key_block).
  const auto [bhk, b, hk, n0, query_begin, per_head, tiles] = key_block<kTile>(s);
  auto head_of = [&](int t) { return b * s.heads_q + hk * s.group + t / per_head; };
  auto row0_of = [&](int t) { return query_begin + (t % per_head) * kTile; };
  auto stage_rows = [&](int t) {
    const std::int64_t bh = head_of(t);
    stage_async<D, kTile>(qs, o.q + bh * s.seq_q * D, row0_of(t), s.seq_q);
    stage_async<D, kTile>(gs, o.grad_out + bh * s.seq_q * D, row0_of(t), s.seq_q);
  };
  // The tile's logsumexp and delta, with plain loads (visible after the next barrier).
  auto stage_row_stats = [&](int t) {
    if (threadIdx.x < kTile) {
      const std::int64_t bh = head_of(t);
      const int i = row0_of(t) + static_cast<int>(threadIdx.x);
      lse_s[threadIdx.x] = i < s.seq_q ? o.lse[bh * s.seq_q + i] : -INFINITY;
      delta_s[threadIdx.x] = i < s.seq_q ? o.delta[bh * s.seq_q + i] : 0.f;
    }
  };

  const std::int64_t key_base = bhk * s.seq_k;
  stage_async<D, kTile>(ks, o.k + key_base * D, n0, s.seq_k);
  stage_async<D, kTile>(vs, o.v + key_base * D, n0, s.seq_k);
  if (tiles > 0) {
    stage_rows(0);
    stage_row_stats(0);
  }
  commit_group();

  float ak[kPer][4 * kCols], av[kPer][4 * kCols];
#pragma unroll
  for (int i = 0; i < kPer; ++i)
#pragma unroll
    for (int x = 0; x < 4 * kCols; ++x) ak[i][x] = av[i][x] = 0.f;

  for (int t = 0; t < tiles; ++t) {
    const int i0 = row0_of(t);
    wait_groups<0>();  // this thread's part of the tile (and, at t = 0, of K and V)
    __syncthreads();   // everyone's, and the row stats

    float st[kPer][kPer], dpt[kPer][kPer];
#pragma unroll
    for (int i = 0; i < kPer; ++i)
#pragma unroll
      for (int jj = 0; jj < kPer; ++jj) st[i][jj] = dpt[i][jj] = 0.f;
#pragma unroll 2
    for (int c = 0; c < D; c += 4) {
      float4 qf[kPer], gf[kPer];
#pragma unroll
      for (int jj = 0; jj < kPer; ++jj) {
        qf[jj] = *reinterpret_cast<const float4*>(qs + (tx + 16 * jj) * L::kStride + c);
        gf[jj] = *reinterpret_cast<const float4*>(gs + (tx + 16 * jj) * L::kStride + c);
      }
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        const float4 kf = *reinterpret_cast<const float4*>(ks + (ty + 16 * i) * L::kStride + c);
        const float4 vf = *reinterpret_cast<const float4*>(vs + (ty + 16 * i) * L::kStride + c);
#pragma unroll
        for (int jj = 0; jj < kPer; ++jj) {
          st[i][jj] = fmaf(qf[jj].x, kf.x, st[i][jj]);
          st[i][jj] = fmaf(qf[jj].y, kf.y, st[i][jj]);
          st[i][jj] = fmaf(qf[jj].z, kf.z, st[i][jj]);
          st[i][jj] = fmaf(qf[jj].w, kf.w, st[i][jj]);
          dpt[i][jj] = fmaf(gf[jj].x, vf.x, dpt[i][jj]);
          dpt[i][jj] = fmaf(gf[jj].y, vf.y, dpt[i][jj]);
          dpt[i][jj] = fmaf(gf[jj].z, vf.z, dpt[i][jj]);
          dpt[i][jj] = fmaf(gf[jj].w, vf.w, dpt[i][jj]);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int j = n0 + ty + 16 * i;
#pragma unroll
      for (int jj = 0; jj < kPer; ++jj) {
        const int r = tx + 16 * jj, row = i0 + r;
        const float l = lse_s[r];
        const bool visible = j < s.seq_k && row < s.seq_q && (!s.causal || j <= row) && l != -INFINITY;
        const float p = visible ? expf(st[i][jj] * s.scale - l) : 0.f;
        pts[(ty + 16 * i) * kSStride + r] = p;
        dsts[(ty + 16 * i) * kSStride + r] = visible ? p * (dpt[i][jj] - delta_s[r]) : 0.f;
      }
    }
    __syncthreads();  // P^T and dS^T visible; everyone is done reading the row stats
    if (t + 1 < tiles) stage_row_stats(t + 1);

#pragma unroll 2
    for (int r = 0; r < kTile; r += 4) {
      float4 gf[4][kCols], qf[4][kCols];
#pragma unroll
      for (int e = 0; e < 4; ++e)
#pragma unroll
        for (int cc = 0; cc < kCols; ++cc) {
          gf[e][cc] = *reinterpret_cast<const float4*>(gs + (r + e) * L::kStride + 64 * cc + 4 * tx);
          qf[e][cc] = *reinterpret_cast<const float4*>(qs + (r + e) * L::kStride + 64 * cc + 4 * tx);
        }
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        const float4 pf = *reinterpret_cast<const float4*>(pts + (ty + 16 * i) * kSStride + r);
        const float4 df = *reinterpret_cast<const float4*>(dsts + (ty + 16 * i) * kSStride + r);
        const float pe[4] = {pf.x, pf.y, pf.z, pf.w};
        const float de[4] = {df.x, df.y, df.z, df.w};
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
          for (int cc = 0; cc < kCols; ++cc) {
            av[i][4 * cc + 0] = fmaf(pe[e], gf[e][cc].x, av[i][4 * cc + 0]);
            av[i][4 * cc + 1] = fmaf(pe[e], gf[e][cc].y, av[i][4 * cc + 1]);
            av[i][4 * cc + 2] = fmaf(pe[e], gf[e][cc].z, av[i][4 * cc + 2]);
            av[i][4 * cc + 3] = fmaf(pe[e], gf[e][cc].w, av[i][4 * cc + 3]);
            ak[i][4 * cc + 0] = fmaf(de[e], qf[e][cc].x, ak[i][4 * cc + 0]);
            ak[i][4 * cc + 1] = fmaf(de[e], qf[e][cc].y, ak[i][4 * cc + 1]);
            ak[i][4 * cc + 2] = fmaf(de[e], qf[e][cc].z, ak[i][4 * cc + 2]);
            ak[i][4 * cc + 3] = fmaf(de[e], qf[e][cc].w, ak[i][4 * cc + 3]);
          }
      }
    }
    __syncthreads();  // everyone is done reading the Q and grad_out tile
    if (t + 1 < tiles) stage_rows(t + 1);
    commit_group();
  }
  wait_groups<0>();  // nothing may stay in flight when the block exits (tiles = 0: K and V)

#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int j = n0 + ty + 16 * i;
    if (j >= s.seq_k) continue;
    float* dk = o.dk + (key_base + j) * D;
    float* dv = o.dv + (key_base + j) * D;
#pragma unroll
    for (int cc = 0; cc < kCols; ++cc) {
      *reinterpret_cast<float4*>(dk + 64 * cc + 4 * tx) = make_float4(
          ak[i][4 * cc] * s.scale, ak[i][4 * cc + 1] * s.scale, ak[i][4 * cc + 2] * s.scale, ak[i][4 * cc + 3] * s.scale);
      *reinterpret_cast<float4*>(dv + 64 * cc + 4 * tx) =
          make_float4(av[i][4 * cc], av[i][4 * cc + 1], av[i][4 * cc + 2], av[i][4 * cc + 3]);
    }
  }
}

Operands operands_of(const Pointers& p) {
  return {static_cast<const float*>(p.q),       static_cast<const float*>(p.k),
          static_cast<const float*>(p.v),       static_cast<const float*>(p.grad_out),
          static_cast<const float*>(p.logsumexp), static_cast<const float*>(p.delta),
          static_cast<float*>(p.dq),            static_cast<float*>(p.dk),
          static_cast<float*>(p.dv)};
}

}  // namespace

bool tiled_backward_f32_takes(const AttentionDesc& d) {
  return d.dtype == DType::F32 && d.mask == AttentionMaskKind::None && !d.has_dropout() && d.head_dim == d.value_dim &&
         (d.head_dim == 64 || d.head_dim == 128) && row_tiles(d.seq_q, kTile) <= tiled::kMaxGridY &&
         row_tiles(d.seq_k, kTile) <= tiled::kMaxGridY && d.batch * d.heads_q <= tiled::kMaxGridX && d.dense();
}

bool tiled_backward_f32_fits(const AttentionDesc& d, const Pointers& p) {
  return tiled_backward_f32_takes(d) && tiled::aligned16(p.q) && tiled::aligned16(p.k) && tiled::aligned16(p.v) && tiled::aligned16(p.grad_out) &&
         tiled::aligned16(p.dq) && tiled::aligned16(p.dk) && tiled::aligned16(p.dv);
}

void tiled_backward_dq_f32(const AttentionDesc& d, const Pointers& p, cudaStream_t stream) {
  FERRITE_CHECK(tiled_backward_f32_fits(d, p) && d.batch * d.heads_q * d.seq_q > 0, Unsupported,
                "scaled_dot_product_attention_backward: the tiled F32 dq was given a problem it does not take");
  const dim3 grid(static_cast<unsigned>(d.batch * d.heads_q), static_cast<unsigned>(tiled::row_tiles(d.seq_q, kTile)));
  if (d.head_dim == 64)
    launch_with_smem(tiled_dq_kernel<64>, grid, kThreads, DqLayout<64>::kBytes, stream, operands_of(p),
                     tiled_shape_of(d));
  else
    launch_with_smem(tiled_dq_kernel<128>, grid, kThreads, DqLayout<128>::kBytes, stream, operands_of(p),
                     tiled_shape_of(d));
}

void tiled_backward_dkdv_f32(const AttentionDesc& d, const Pointers& p, cudaStream_t stream) {
  FERRITE_CHECK(tiled_backward_f32_fits(d, p) && d.batch * d.heads_kv * d.seq_k > 0, Unsupported,
                "scaled_dot_product_attention_backward: the tiled F32 dk/dv was given a problem it does not take");
  const dim3 grid(static_cast<unsigned>(d.batch * d.heads_kv), static_cast<unsigned>(tiled::row_tiles(d.seq_k, kTile)));
  if (d.head_dim == 64)
    launch_with_smem(tiled_dkdv_kernel<64>, grid, kThreads, DkvLayout<64>::kBytes, stream, operands_of(p),
                     tiled_shape_of(d));
  else
    launch_with_smem(tiled_dkdv_kernel<128>, grid, kThreads, DkvLayout<128>::kBytes, stream, operands_of(p),
                     tiled_shape_of(d));
}

}  // namespace ferrite::cuda::attention
