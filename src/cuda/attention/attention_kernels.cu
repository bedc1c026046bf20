// Own flash-attention kernels for every dtype (F16/BF16 load and store their type and compute in
// F32, F64 computes in double). One warp owns one query row (forward, dq) or one key row (dk/dv);
// the block's 8 warps share each 32-row tile of the other side staged in shared memory. Lane t
// computes the score against tile row t, the warp combines them with shuffles (online softmax),
// and each lane accumulates the output dims c = lane + 32x. Every sum runs in a fixed order, so
// results repeat bit for bit; dk/dv have one owner warp each, no atomics.
#include "cuda/attention/attention_kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "core/random_elements.hpp"
#include "cuda/attention/attention_f32_tiled.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::attention {
namespace {

constexpr int kWarps = 8;
constexpr int kTile = 32;
constexpr int kMaxPerLane = 8;  // 256 dims / 32 lanes

template <class A>
__device__ A neg_inf() {
  return -INFINITY;
}

__device__ float load(const float* p, std::int64_t i) { return p[i]; }
__device__ double load(const double* p, std::int64_t i) { return p[i]; }
__device__ float load(const __half* p, std::int64_t i) { return __half2float(p[i]); }
__device__ float load(const __nv_bfloat16* p, std::int64_t i) { return __bfloat162float(p[i]); }
__device__ void store(float* p, std::int64_t i, float x) { p[i] = x; }
__device__ void store(double* p, std::int64_t i, double x) { p[i] = x; }
__device__ void store(__half* p, std::int64_t i, float x) { p[i] = __float2half_rn(x); }
__device__ void store(__nv_bfloat16* p, std::int64_t i, float x) { p[i] = __float2bfloat16_rn(x); }

__device__ float exp_acc(float x) { return expf(x); }
__device__ double exp_acc(double x) { return exp(x); }
__device__ float log_acc(float x) { return logf(x); }
__device__ double log_acc(double x) { return log(x); }

// max() (fmax) drops NaN, so a tile whose visible scores are all NaN would look fully masked
// (running max -inf: skipped, out 0, logsumexp -inf); PyTorch's softmax and the CPU backend make
// that row NaN. This max returns NaN if either argument is NaN, else the larger.
template <class A>
__device__ A nan_max(A a, A b) {
  return (a > b || a != a) ? a : b;
}
template <class A>
__device__ A warp_max(A x) {
  for (int o = 16; o > 0; o >>= 1) x = nan_max(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}
template <class A>
__device__ A warp_sum(A x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

struct Shape {
  std::int64_t heads_q, heads_kv, seq_q, seq_k, d, dv, group;
  bool causal;
  AttentionMaskKind mask;
  std::int64_t ms0, ms1, ms2, ms3;
};

Shape shape_of(const AttentionDesc& d) {
  return {d.heads_q, d.heads_kv, d.seq_q,           d.seq_k,           d.head_dim,        d.value_dim,      d.group(),
          d.causal,  d.mask,     d.mask_strides[0], d.mask_strides[1], d.mask_strides[2], d.mask_strides[3]};
}

// Dropout of the attention weights (AttentionDesc::has_dropout): the kernels instantiated with
// kDropout multiply weight (b, h, i, j) by factor() after the softmax, the others never read it.
// The decision is the CPU backend's and nn::dropout's for element (b, h, i, j) of a
// [B, Hq, Sq, Sk] tensor, so every backend drops the same weights for the same draw.
template <class A>
struct Dropout {
  std::uint64_t seed = 0, offset = 0;
  std::uint32_t threshold = 0;
  A scale = A(1);

  // bh = b * heads_q + h.
  __device__ A factor(const Shape& s, std::int64_t bh, std::int64_t i, std::int64_t j) const {
    const auto e = static_cast<std::uint64_t>((bh * s.seq_q + i) * s.seq_k + j);
    return detail::philox::dropout_keeps_element(seed, offset, e, threshold) ? scale : A(0);
  }
};

template <class A>
Dropout<A> dropout_of(const AttentionDesc& d) {
  return {d.dropout_seed, d.dropout_offset, d.dropout_threshold, static_cast<A>(d.dropout_scale)};
}

// The additive part of score (b, h, i, j): the mask's value, -inf where hidden.
template <class T, class A>
__device__ A mask_term(const Shape& s, const void* mask, std::int64_t b, std::int64_t h, std::int64_t i,
                       std::int64_t j) {
  if (s.causal && j > i) return neg_inf<A>();
  if (s.mask == AttentionMaskKind::None) return A(0);
  const std::int64_t at = b * s.ms0 + h * s.ms1 + i * s.ms2 + j * s.ms3;
  if (s.mask == AttentionMaskKind::Bool) return static_cast<const bool*>(mask)[at] ? A(0) : neg_inf<A>();
  return static_cast<A>(load(static_cast<const T*>(mask), at));
}

// Rows [row0, row0 + kTile) of a [rows, width] matrix into shared [kTile][width + 1] (zeros past the end).
template <class T, class A>
__device__ void stage(A* dst, const T* src, std::int64_t row0, std::int64_t rows, std::int64_t width) {
  for (std::int64_t e = threadIdx.x; e < kTile * width; e += blockDim.x) {
    const std::int64_t t = e / width, c = e % width;
    dst[t * (width + 1) + c] = row0 + t < rows ? static_cast<A>(load(src, (row0 + t) * width + c)) : A(0);
  }
}

// One 32-key tile of a warp's online softmax, the same step in both forwards (query_side_kernel
// and split_keys_kernel): lane t holds the score of the tile's key t (-inf where hidden); the
// running max m, the running sum l and the output accumulators acc (dims lane + 32x < dv) take
// the tile, whose value rows value(t, c) are staged in shared memory (query_side) or read from
// global memory (split_keys). A tile that leaves every key so far hidden changes nothing (no
// -inf - -inf); a visible NaN score makes the max NaN (nan_max), and with it l and acc.
// kDropout: the lane's weight enters acc times `keep` (its dropout factor), l without it.
template <bool kDropout = false, class A, class Value>
__device__ __forceinline__ void online_softmax_tile(A score, A& m, A& l, A (&acc)[kMaxPerLane], int lane,
                                                    std::int64_t dv, const Value& value, A keep = A(1)) {
  const A m_new = nan_max(m, warp_max(score));
  if (m_new == neg_inf<A>()) return;  // every key so far is hidden
  const A alpha = exp_acc(m - m_new);
  const A w = score == neg_inf<A>() ? A(0) : exp_acc(score - m_new);
  l = l * alpha + warp_sum(w);
  for (int x = 0; x < kMaxPerLane; ++x) acc[x] *= alpha;
  A kept = w;
  if constexpr (kDropout) kept = w * keep;
  for (int t = 0; t < kTile; ++t) {
    const A wt = __shfl_sync(0xffffffffu, kept, t);
    if (wt == A(0)) continue;
    for (int x = 0; x < kMaxPerLane; ++x) {
      const std::int64_t c = lane + 32 * x;
      if (c < dv) acc[x] += wt * value(t, c);
    }
  }
  m = m_new;
}

// The forward (kDq = false) and the dq backward (kDq = true) share their loop over key tiles.
template <class T, class A, bool kDq, bool kDropout>
__global__ void __launch_bounds__(kWarps * 32) query_side_kernel(Shape s, A scale, Pointers p, Dropout<A> drop) {
  extern __shared__ unsigned char smem_raw[];
  A* ks = reinterpret_cast<A*>(smem_raw);  // [kTile][d + 1]
  A* vs = ks + kTile * (s.d + 1);          // [kTile][dv + 1]
  A* qs = vs + kTile * (s.dv + 1);         // [kWarps][d]
  A* gs = qs + kWarps * s.d;               // [kWarps][dv] (dq only: the row's grad_out)
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t bh = blockIdx.y, b = bh / s.heads_q, h = bh % s.heads_q, hk = h / s.group;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kWarps + warp;
  const bool valid = i < s.seq_q;
  const std::int64_t row = bh * s.seq_q + i;
  const T* q = static_cast<const T*>(p.q);
  const T* kp = static_cast<const T*>(p.k) + (b * s.heads_kv + hk) * s.seq_k * s.d;
  const T* vp = static_cast<const T*>(p.v) + (b * s.heads_kv + hk) * s.seq_k * s.dv;
  if (valid) {
    for (std::int64_t c = lane; c < s.d; c += 32) qs[warp * s.d + c] = static_cast<A>(load(q, row * s.d + c));
    if constexpr (kDq)
      for (std::int64_t c = lane; c < s.dv; c += 32)
        gs[warp * s.dv + c] = static_cast<A>(load(static_cast<const T*>(p.grad_out), row * s.dv + c));
  }
  A acc[kMaxPerLane];
  for (int x = 0; x < kMaxPerLane; ++x) acc[x] = A(0);
  // l before m: in the other order, with online_softmax_tile taking both by reference, nvcc 13.0
  // swapped their PTX registers and the forward's machine code changed.
  A l = A(0), m = neg_inf<A>(), lse = A(0), delta = A(0);
  if constexpr (kDq) {
    if (valid) {
      lse = static_cast<A>(static_cast<const A*>(p.logsumexp)[row]);
      delta = static_cast<const A*>(p.delta)[row];
    }
  }
  const std::int64_t last_row = min(s.seq_q - 1, static_cast<std::int64_t>(blockIdx.x) * kWarps + kWarps - 1);
  const std::int64_t key_end = s.causal ? min(s.seq_k, last_row + 1) : s.seq_k;
  const bool row_dead = kDq && valid && lse == neg_inf<A>();  // fully masked row: zero gradient
  for (std::int64_t j0 = 0; j0 < key_end; j0 += kTile) {
    __syncthreads();
    stage<T, A>(ks, kp, j0, s.seq_k, s.d);
    stage<T, A>(vs, vp, j0, s.seq_k, s.dv);
    __syncthreads();
    if (!valid || row_dead) continue;
    const std::int64_t j = j0 + lane;
    A score = neg_inf<A>();
    if (j < s.seq_k) {
      const A bias = mask_term<T, A>(s, p.mask, b, h, i, j);
      if (bias != neg_inf<A>()) {
        A dot = A(0);
        for (std::int64_t c = 0; c < s.d; ++c) dot += qs[warp * s.d + c] * ks[lane * (s.d + 1) + c];
        score = dot * scale + bias;
      }
    }
    A keep = A(1);
    if constexpr (kDropout)
      if (score != neg_inf<A>()) keep = drop.factor(s, bh, i, j);
    if constexpr (!kDq) {
      online_softmax_tile<kDropout>(
          score, m, l, acc, lane, s.dv, [&](int t, std::int64_t c) { return vs[t * (s.dv + 1) + c]; }, keep);
    } else {
      A ds = A(0);
      if (score != neg_inf<A>()) {
        const A prob = exp_acc(score - lse);
        A dp = A(0);
        for (std::int64_t c = 0; c < s.dv; ++c) dp += gs[warp * s.dv + c] * vs[lane * (s.dv + 1) + c];
        if constexpr (kDropout) dp *= keep;  // dL/dP = keep * dO . v
        ds = prob * (dp - delta);
      }
      for (int t = 0; t < kTile; ++t) {
        const A dst = __shfl_sync(0xffffffffu, ds, t);
        if (dst == A(0)) continue;
        for (int x = 0; x < kMaxPerLane; ++x) {
          const std::int64_t c = lane + 32 * x;
          if (c < s.d) acc[x] += dst * ks[t * (s.d + 1) + c];
        }
      }
    }
  }
  if (!valid) return;
  if constexpr (!kDq) {
    T* out = static_cast<T*>(p.result);
    // A fully masked row (l exactly 0) gives 0 and logsumexp -inf; a NaN row (l NaN, for which
    // l > 0 is false too) gives NaN.
    const A inv = l == A(0) ? A(0) : A(1) / l;
    for (int x = 0; x < kMaxPerLane; ++x) {
      const std::int64_t c = lane + 32 * x;
      if (c < s.dv) store(out, row * s.dv + c, acc[x] * inv);
    }
    if (lane == 0) static_cast<A*>(p.logsumexp)[row] = l == A(0) ? neg_inf<A>() : m + log_acc(l);
  } else {
    T* dq = static_cast<T*>(p.dq);
    for (int x = 0; x < kMaxPerLane; ++x) {
      const std::int64_t c = lane + 32 * x;
      if (c < s.d) store(dq, row * s.d + c, acc[x] * scale);
    }
  }
}

// The forward for few query rows against many keys (decoding): one block per query row, its 8
// warps take interleaved 32-key tiles (read straight from global memory: no block-wide staging
// to wait for) and merge their partial softmax states in shared memory in warp order.
template <class T, class A>
__global__ void __launch_bounds__(kWarps * 32) split_keys_kernel(Shape s, A scale, Pointers p) {
  extern __shared__ unsigned char smem_raw[];
  A* qs = reinterpret_cast<A*>(smem_raw);  // [d]
  A* part = qs + s.d;                      // [kWarps][dv]: each warp's unnormalised output
  A* ms = part + kWarps * s.dv;            // [kWarps] running max
  A* ls = ms + kWarps;                     // [kWarps] running sum
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t bh = blockIdx.y, b = bh / s.heads_q, h = bh % s.heads_q, hk = h / s.group;
  const std::int64_t i = blockIdx.x, row = bh * s.seq_q + i;
  const T* kp = static_cast<const T*>(p.k) + (b * s.heads_kv + hk) * s.seq_k * s.d;
  const T* vp = static_cast<const T*>(p.v) + (b * s.heads_kv + hk) * s.seq_k * s.dv;
  for (std::int64_t c = threadIdx.x; c < s.d; c += blockDim.x)
    qs[c] = static_cast<A>(load(static_cast<const T*>(p.q), row * s.d + c));
  __syncthreads();
  A acc[kMaxPerLane];
  for (int x = 0; x < kMaxPerLane; ++x) acc[x] = A(0);
  A m = neg_inf<A>(), l = A(0);
  const std::int64_t key_end = s.causal ? min(s.seq_k, i + 1) : s.seq_k;
  for (std::int64_t j0 = static_cast<std::int64_t>(warp) * kTile; j0 < key_end; j0 += kWarps * kTile) {
    const std::int64_t j = j0 + lane;
    A score = neg_inf<A>();
    if (j < key_end) {
      const A bias = mask_term<T, A>(s, p.mask, b, h, i, j);
      if (bias != neg_inf<A>()) {
        A dot = A(0);
        for (std::int64_t c = 0; c < s.d; ++c) dot += qs[c] * static_cast<A>(load(kp, j * s.d + c));
        score = dot * scale + bias;
      }
    }
    online_softmax_tile(score, m, l, acc, lane, s.dv,
                        [&](int t, std::int64_t c) { return static_cast<A>(load(vp, (j0 + t) * s.dv + c)); });
  }
  for (int x = 0; x < kMaxPerLane; ++x) {
    const std::int64_t c = lane + 32 * x;
    if (c < s.dv) part[warp * s.dv + c] = acc[x];
  }
  if (lane == 0) {
    ms[warp] = m;
    ls[warp] = l;
  }
  __syncthreads();
  if (warp != 0) return;
  A big = neg_inf<A>();
  for (int w = 0; w < kWarps; ++w) big = nan_max(big, ms[w]);  // a warp's NaN makes every term NaN
  A total = A(0);
  for (int w = 0; w < kWarps; ++w)
    if (ms[w] != neg_inf<A>()) total += ls[w] * exp_acc(ms[w] - big);
  // A fully masked row (total exactly 0) gives 0 and logsumexp -inf; a NaN row gives NaN.
  const A inv = total == A(0) ? A(0) : A(1) / total;
  for (std::int64_t c = lane; c < s.dv; c += 32) {
    A o = A(0);
    for (int w = 0; w < kWarps; ++w)
      if (ms[w] != neg_inf<A>()) o += part[w * s.dv + c] * exp_acc(ms[w] - big);
    store(static_cast<T*>(p.result), row * s.dv + c, o * inv);
  }
  if (lane == 0) static_cast<A*>(p.logsumexp)[row] = total == A(0) ? neg_inf<A>() : big + log_acc(total);
}

// delta_i = dO_i . O_i, one warp per row.
template <class T, class A>
__global__ void delta_kernel(const T* grad_out, const T* out, A* delta, std::int64_t rows, std::int64_t dv) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  A sum = A(0);
  for (std::int64_t c = lane; c < dv; c += 32) sum += static_cast<A>(load(grad_out, row * dv + c)) * load(out, row * dv + c);
  sum = warp_sum(sum);
  if (lane == 0) delta[row] = sum;
}

// dk and dv: one warp per key row, looping over the query heads of its group and tiles of queries.
template <class T, class A, bool kDropout>
__global__ void __launch_bounds__(kWarps * 32) key_side_kernel(Shape s, A scale, Pointers p, Dropout<A> drop) {
  extern __shared__ unsigned char smem_raw[];
  A* qs = reinterpret_cast<A*>(smem_raw);  // [kTile][d + 1]
  A* gs = qs + kTile * (s.d + 1);          // [kTile][dv + 1]
  A* krow = gs + kTile * (s.dv + 1);       // [kWarps][d]
  A* vrow = krow + kWarps * s.d;           // [kWarps][dv]
  A* lse_t = vrow + kWarps * s.dv;         // [kTile]
  A* delta_t = lse_t + kTile;              // [kTile]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t bhk = blockIdx.y, b = bhk / s.heads_kv, hk = bhk % s.heads_kv;
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * kWarps + warp;
  const bool valid = j < s.seq_k;
  const std::int64_t key = bhk * s.seq_k + j;
  if (valid) {
    for (std::int64_t c = lane; c < s.d; c += 32)
      krow[warp * s.d + c] = static_cast<A>(load(static_cast<const T*>(p.k), key * s.d + c));
    for (std::int64_t c = lane; c < s.dv; c += 32)
      vrow[warp * s.dv + c] = static_cast<A>(load(static_cast<const T*>(p.v), key * s.dv + c));
  }
  A ak[kMaxPerLane], av[kMaxPerLane];
  for (int x = 0; x < kMaxPerLane; ++x) ak[x] = av[x] = A(0);
  // Under causal, queries i < the block's first key see none of its keys.
  const std::int64_t first_key = static_cast<std::int64_t>(blockIdx.x) * kWarps;
  const std::int64_t query_begin = s.causal ? (first_key / kTile) * kTile : 0;
  for (std::int64_t h = hk * s.group; h < (hk + 1) * s.group; ++h) {
    const std::int64_t bh = b * s.heads_q + h;
    const T* qp = static_cast<const T*>(p.q) + bh * s.seq_q * s.d;
    const T* gp = static_cast<const T*>(p.grad_out) + bh * s.seq_q * s.dv;
    for (std::int64_t i0 = query_begin; i0 < s.seq_q; i0 += kTile) {
      __syncthreads();
      stage<T, A>(qs, qp, i0, s.seq_q, s.d);
      stage<T, A>(gs, gp, i0, s.seq_q, s.dv);
      if (threadIdx.x < kTile) {
        const std::int64_t i = i0 + threadIdx.x;
        lse_t[threadIdx.x] = i < s.seq_q ? static_cast<const A*>(p.logsumexp)[bh * s.seq_q + i] : neg_inf<A>();
        delta_t[threadIdx.x] = i < s.seq_q ? static_cast<const A*>(p.delta)[bh * s.seq_q + i] : A(0);
      }
      __syncthreads();
      if (!valid) continue;
      const std::int64_t i = i0 + lane;
      A prob = A(0), kept = A(0), ds = A(0);
      const A lse = lse_t[lane];
      if (i < s.seq_q && lse != neg_inf<A>()) {
        const A bias = mask_term<T, A>(s, p.mask, b, h, i, j);
        if (bias != neg_inf<A>()) {
          A dot = A(0), dp = A(0);
          for (std::int64_t c = 0; c < s.d; ++c) dot += qs[lane * (s.d + 1) + c] * krow[warp * s.d + c];
          for (std::int64_t c = 0; c < s.dv; ++c) dp += gs[lane * (s.dv + 1) + c] * vrow[warp * s.dv + c];
          prob = exp_acc(dot * scale + bias - lse);
          if constexpr (kDropout) {
            const A keep = drop.factor(s, bh, i, j);
            dp *= keep;     // dL/dP = keep * dO . v
            kept = prob * keep;  // dv's weight, the one out used
          }
          ds = prob * (dp - delta_t[lane]);
        }
      }
      if constexpr (!kDropout) kept = prob;
      for (int t = 0; t < kTile; ++t) {
        const A pt = __shfl_sync(0xffffffffu, kept, t);
        const A dst = __shfl_sync(0xffffffffu, ds, t);
        if (pt == A(0) && (!kDropout || dst == A(0))) continue;
        for (int x = 0; x < kMaxPerLane; ++x) {
          const std::int64_t c = lane + 32 * x;
          if (c < s.dv) av[x] += pt * gs[t * (s.dv + 1) + c];
          if (c < s.d) ak[x] += dst * qs[t * (s.d + 1) + c];
        }
      }
    }
  }
  if (!valid) return;
  for (int x = 0; x < kMaxPerLane; ++x) {
    const std::int64_t c = lane + 32 * x;
    if (c < s.d) store(static_cast<T*>(p.dk), key * s.d + c, ak[x] * scale);
    if (c < s.dv) store(static_cast<T*>(p.dv), key * s.dv + c, av[x]);
  }
}

template <class F>
void visit(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32: return f(static_cast<float*>(nullptr), static_cast<float*>(nullptr));
    case DType::F64: return f(static_cast<double*>(nullptr), static_cast<double*>(nullptr));
    case DType::F16: return f(static_cast<__half*>(nullptr), static_cast<float*>(nullptr));
    case DType::BF16: return f(static_cast<__nv_bfloat16*>(nullptr), static_cast<float*>(nullptr));
    default: FERRITE_THROW(Unsupported, "scaled_dot_product_attention: dtype ", dtype_name(dtype), " on cuda");
  }
}

// (batch, head) pairs run along grid y, whose limit is 65535.
void check_grid(const AttentionDesc& d, std::int64_t y) {
  FERRITE_CHECK(y <= 65535, Unsupported, "scaled_dot_product_attention: batch * heads = ", y,
                " exceeds the CUDA kernels' grid limit 65535 (B = ", d.batch, ")");
}

// How the tiled F32 kernels (D = Dv in {64, 128}, no explicit mask) multiply, read once from
// FERRITE_ATTENTION_F32_TF32X3: unset or 2 (the default), on the tensor cores in 3xTF32 with
// the cheap operand split (attention_f32_tf32x3.cu, attention_f32_tf32x3_bwd.cu), as PyTorch's
// F32 SDPA (its memory-efficient kernel multiplies in CUTLASS's "fast F32", 3xTF32 too); 1, the
// same with the cvt-rounded split (slower, the same tolerance); 0, on the CUDA cores in plain
// F32 FMAs (attention_f32_tiled*.cu). All three pass the same conformance tolerances; on the
// H200 (B=1, H=16, S=2048, D=128) the forward ran at 55.9 (2), 40.1 (1) and 37.7 (0) TFLOP/s.
// A backward whose caller vouches for TF32-exact operands (single_tf32) takes 1xTF32 instead.
int tf32x3_mode() {
  static const int mode = [] {
    const char* v = std::getenv("FERRITE_ATTENTION_F32_TF32X3");
    if (v == nullptr || *v == '\0') return 2;
    return *v == '0' ? 0 : *v == '1' ? 1 : 2;
  }();
  return mode;
}

// query_side_kernel (forward or dq), its dropout instantiation when `d` drops weights.
template <class T, class A, bool kDq>
void launch_query_side(const AttentionDesc& d, const Shape& s, const Pointers& p, dim3 grid, std::size_t smem,
                       cudaStream_t stream) {
  if (d.has_dropout())
    launch_with_smem(query_side_kernel<T, A, kDq, true>, grid, kWarps * 32, smem, stream, s, static_cast<A>(d.scale),
                     p, dropout_of<A>(d));
  else
    launch_with_smem(query_side_kernel<T, A, kDq, false>, grid, kWarps * 32, smem, stream, s, static_cast<A>(d.scale),
                     p, Dropout<A>{});
}

}  // namespace

std::size_t delta_bytes(const AttentionDesc& d) {
  return static_cast<std::size_t>(d.batch * d.heads_q * d.seq_q) * (d.dtype == DType::F64 ? 8 : 4);
}

bool forward_splits_keys(const AttentionDesc& d) {
  return d.seq_q < kWarps && d.seq_k >= 2 * kTile && !d.has_dropout();  // only query_side_kernel drops weights
}

void forward(const AttentionDesc& d, const Pointers& p, cudaStream_t stream) {
  const Shape s = shape_of(d);
  check_grid(d, d.batch * d.heads_q);
  visit(d.dtype, [&](auto* t, auto* a) {
    using T = std::remove_pointer_t<decltype(t)>;
    using A = std::remove_pointer_t<decltype(a)>;
    if (forward_splits_keys(d)) {  // few rows, many keys: split the keys over the warps
      const std::size_t smem = sizeof(A) * (s.d + kWarps * s.dv + 2 * kWarps);
      const dim3 grid(static_cast<unsigned>(d.seq_q), static_cast<unsigned>(d.batch * d.heads_q));
      split_keys_kernel<T, A><<<grid, kWarps * 32, smem, stream>>>(s, static_cast<A>(d.scale), p);
      FERRITE_CUDA_CHECK_LAUNCH();
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      if (tiled_forward_f32_fits(d, p)) {  // F32, D = Dv in {64, 128}, no explicit mask
        if (const int mode = tf32x3_mode(); mode != 0)
          tiled_forward_f32_tf32x3(d, p, mode == 2, stream);
        else
          tiled_forward_f32(d, p, stream);
        return;
      }
    }
    const std::size_t smem = sizeof(A) * (kTile * (s.d + 1) + kTile * (s.dv + 1) + kWarps * s.d);
    const dim3 grid(static_cast<unsigned>((d.seq_q + kWarps - 1) / kWarps), static_cast<unsigned>(d.batch * d.heads_q));
    launch_query_side<T, A, false>(d, s, p, grid, smem, stream);
  });
}

void backward(const AttentionDesc& d, const Pointers& p, cudaStream_t stream, bool single_tf32) {
  const Shape s = shape_of(d);
  check_grid(d, d.batch * d.heads_q);
  visit(d.dtype, [&](auto* t, auto* a) {
    using T = std::remove_pointer_t<decltype(t)>;
    using A = std::remove_pointer_t<decltype(a)>;
    // F32, D = Dv in {64, 128}, no explicit mask: the tiled dq and dk/dv kernels after delta_kernel.
    bool tiled = false;
    if constexpr (std::is_same_v<T, float>) tiled = tiled_backward_f32_fits(d, p);
    const std::int64_t rows = d.batch * d.heads_q * d.seq_q;
    if (rows > 0) {
      delta_kernel<T, A><<<static_cast<unsigned>((rows + kWarps - 1) / kWarps), kWarps * 32, 0, stream>>>(
          static_cast<const T*>(p.grad_out), static_cast<const T*>(p.out), static_cast<A*>(p.delta), rows, s.dv);
      FERRITE_CUDA_CHECK_LAUNCH();
    }
    if (tiled) {
      // Operands exact in TF32 (widened F16/BF16) take 1xTF32 whatever the variable says: it
      // chooses how F32 operands are multiplied, and 3xTF32 adds nothing for these but time.
      const int mode = single_tf32 ? static_cast<int>(Tf32Mode::single) : tf32x3_mode();
      if (mode != 0 && tiled_backward_f32_tf32x3_fits(d, p)) {
        if (rows > 0) tiled_backward_dq_f32_tf32x3(d, p, static_cast<Tf32Mode>(mode), stream);
        if (d.batch * d.heads_kv * d.seq_k > 0)
          tiled_backward_dkdv_f32_tf32x3(d, p, static_cast<Tf32Mode>(mode), stream);
      } else {
        if (rows > 0) tiled_backward_dq_f32(d, p, stream);
        if (d.batch * d.heads_kv * d.seq_k > 0) tiled_backward_dkdv_f32(d, p, stream);
      }
      return;
    }
    if (rows > 0) {
      const std::size_t smem = sizeof(A) * (kTile * (s.d + 1) + kTile * (s.dv + 1) + kWarps * (s.d + s.dv));
      const dim3 grid(static_cast<unsigned>((d.seq_q + kWarps - 1) / kWarps), static_cast<unsigned>(d.batch * d.heads_q));
      launch_query_side<T, A, true>(d, s, p, grid, smem, stream);
    }
    if (d.batch * d.heads_kv * d.seq_k > 0) {
      const std::size_t smem =
          sizeof(A) * (kTile * (s.d + 1) + kTile * (s.dv + 1) + kWarps * (s.d + s.dv) + 2 * kTile);
      const dim3 grid(static_cast<unsigned>((d.seq_k + kWarps - 1) / kWarps), static_cast<unsigned>(d.batch * d.heads_kv));
      if (d.has_dropout())
        launch_with_smem(key_side_kernel<T, A, true>, grid, kWarps * 32, smem, stream, s, static_cast<A>(d.scale), p,
                         dropout_of<A>(d));
      else
        launch_with_smem(key_side_kernel<T, A, false>, grid, kWarps * 32, smem, stream, s, static_cast<A>(d.scale),
                         p, Dropout<A>{});
    }
  });
}

bool backward_half_mma(const AttentionDesc& d, const Pointers& p, cudaStream_t stream) {
  // The delta kernel's grid runs over rows and the half kernels' over grid x and y
  // (half_mma_backward_fits): no check_grid, whose bound is the SIMT kernels' grid y.
  if (!half_mma_backward_fits(d, p)) return false;
  const Shape s = shape_of(d);
  const std::int64_t rows = d.batch * d.heads_q * d.seq_q;
  if (rows > 0) {
    auto delta = [&](auto* t) {
      using T = std::remove_pointer_t<decltype(t)>;
      delta_kernel<T, float><<<static_cast<unsigned>((rows + kWarps - 1) / kWarps), kWarps * 32, 0, stream>>>(
          static_cast<const T*>(p.grad_out), static_cast<const T*>(p.out), static_cast<float*>(p.delta), rows, s.dv);
      FERRITE_CUDA_CHECK_LAUNCH();
    };
    d.dtype == DType::BF16 ? delta(static_cast<__nv_bfloat16*>(nullptr)) : delta(static_cast<__half*>(nullptr));
    half_mma_backward_dq(d, p, stream);
  }
  if (d.batch * d.heads_kv * d.seq_k > 0) half_mma_backward_dkdv(d, p, stream);
  return true;
}

}  // namespace ferrite::cuda::attention
