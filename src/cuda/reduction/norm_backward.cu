// layer_norm and rms_norm backward on the GPU. With xhat = (x - mean) * rstd, gw = grad * weight:
//   dx      = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))   (RMS norm: mean = 0, no mean(gw))
//   dweight = sum over rows of grad * xhat,  dbias = sum over rows of grad.
// Rows up to 4096 elements: each block owns a fixed set of rows (chosen from the extents
// only), keeps its columns' dweight/dbias sums in registers while it streams its rows, and
// writes one partial row per block; a second kernel adds the partials of each column in
// block order. So grad and x are read once, dx written once, and no atomics are used.
// Same-dtype F16/BF16 aligned rows take norm_backward_two_byte_kernel (64 registers, the
// column sums in shared memory).
// Longer rows: dx per row in two passes, the column sums by a separate partial-sum kernel.
// Mixed precision (LayerNormBackwardOptions): grad may be F16/BF16 for F32 rows (the kernels'
// grad type Gr, widened as it is read: no F32 copy of the gradient), and a residual (F32 and
// F64 rows) is added to dx in the accumulator before the one rounding of the store (no
// separate add of the residual stream's gradient). dx_cast (F32 rows only): the row kernels
// also store each dx value, as stored in F32, rounded to F16/BF16 (detail::narrow, the
// rounding of .to()), so the next BF16 matmul's input needs no cast re-reading dx.
#include <cmath>
#include <limits>

#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reduction_kernels.cuh"
#include "cuda/reduction/rowwise_common.cuh"

namespace ferrite::cuda::reduction {
namespace {

// Blocks of the register-rows kernel, and so partial rows, at most: constants (the partial
// count, and so dweight's bits, depend on the extents, the dtype and whether the rows are
// vectorised, never on the GPU). The register-rows kernel relies on many blocks for loads in
// flight: 1024.
constexpr std::int64_t kMaxPartials = 1024;
// Long rows: partial rows of the column-partials kernel.
constexpr std::int64_t kLongRowPartials = 128;
constexpr int kColumnsPerBlock = 32, kLanes = kRowThreads / kColumnsPerBlock;

template <class T, class Gr = T>
struct NormBackwardArgs {
  using A = acc_t<T>;
  const Gr* grad;
  const T* x;
  const T* residual;  // null when absent (always for two-byte T)
  const A* mean;    // null for RMS norm
  const A* rstd;
  const T* weight;  // null when absent
  T* dx;
  void* dx_cast;       // F16/BF16 copy of dx (F32 T only); null when not asked
  bool dx_cast_bf16;   // dx_cast's dtype: BF16, else F16
  A* partial_dweight;  // [partials, cols]; null when dweight is not wanted
  A* partial_dbias;    // [partials, cols]; null when dbias is not wanted
  std::int64_t rows, cols;
};

// v[n] += the residual's item n (T's layout; items past the row's end are not stored anyway).
// One vector at a time, after dx's values are final: few extra registers live.
template <class T, int G, int N, class A>
__device__ __forceinline__ void add_residual_items(const T* row, std::int64_t cols, int t, bool vec, A (&v)[N]) {
  constexpr int kV = Vec16<T>::kSize;
  if (N % kV == 0 && vec) {
#pragma unroll
    for (int q = 0; q < N / kV; ++q) {
      const std::int64_t first = (static_cast<std::int64_t>(q) * G + t) * kV;
      if (first < cols) {
        const Vec16<T> pack = *reinterpret_cast<const Vec16<T>*>(row + first);
#pragma unroll
        for (int k = 0; k < kV; ++k) v[q * kV + k] += static_cast<A>(detail::widen(pack.v[k]));
      }
    }
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const std::int64_t c = static_cast<std::int64_t>(n) * G + t;
      if (c < cols) v[n] += static_cast<A>(detail::widen(row[c]));
    }
  }
}

// Stores v (the F32 values just stored in dx, T's layout) as H: each element rounded once by
// detail::narrow<H>, as the F32 dx's .to(H). Aligned rows: a vector of T's four items is one
// 8-byte store of four H (dx_cast is a fresh allocation, and cols % 4 == 0 when vec).
template <class T, class H, int G, int N, class A>
__device__ __forceinline__ void store_cast_items(H* row, std::int64_t cols, int t, bool vec, const A (&v)[N]) {
  static_assert(std::is_same_v<T, float> && sizeof(H) == 2, "an F16/BF16 copy of an F32 dx");
  constexpr int kV = Vec16<T>::kSize;  // 4
  struct alignas(kV * sizeof(H)) Pack {
    H v[kV];
  };
  if (N % kV == 0 && vec) {
#pragma unroll
    for (int q = 0; q < N / kV; ++q) {
      const std::int64_t first = (static_cast<std::int64_t>(q) * G + t) * kV;
      if (first < cols) {
        Pack pack;
#pragma unroll
        for (int k = 0; k < kV; ++k) pack.v[k] = detail::narrow<H>(v[q * kV + k]);
        *reinterpret_cast<Pack*>(row + first) = pack;
      }
    }
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const std::int64_t c = static_cast<std::int64_t>(n) * G + t;
      if (c < cols) row[c] = detail::narrow<H>(v[n]);
    }
  }
}

// kResidual: a.residual may be set (tested once a row). A template parameter so that the
// same-dtype calls without one run the code they ran before the option existed: the runtime
// test alone took the F32 [rows, 128] kernel from 64 to 68 registers (four blocks a
// multiprocessor to three). Calls with a two-byte grad always take the kResidual form.
// kCast: a.dx_cast is set (F32 rows; the kResidual form only: one more instantiation per grad
// type, F16 or BF16 chosen at run time, the same for every row), so the calls without it keep
// their kernels.
template <class T, class Gr, int G, int N, bool kResidual, bool kCast = false>
__global__ void __launch_bounds__(kRowThreads)
    norm_backward_rows_kernel(NormBackwardArgs<T, Gr> a, std::int64_t iterations, bool vec) {
  using A = acc_t<T>;
  constexpr int kGroups = kRowThreads / G;
  static_assert(!kCast || (std::is_same_v<T, float> && kResidual), "dx_cast: F32 rows, the kResidual form");
  __shared__ SumPair<A> smem[kRowThreads / 32];
  __shared__ A column_smem[kGroups > 1 ? kGroups * G : 1];
  const int group = threadIdx.x / G, t = threadIdx.x % G;
  const A n_cols = static_cast<A>(a.cols);
  A w[N];
  if (a.weight) {
    load_items<T, G, N>(a.weight, a.cols, t, vec, w, A(1));
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) w[n] = 1;
  }
  A dw[N], db[N];
#pragma unroll
  for (int n = 0; n < N; ++n) dw[n] = db[n] = 0;
  for (std::int64_t it = 0; it < iterations; ++it) {
    const std::int64_t row = (it * gridDim.x + blockIdx.x) * kGroups + group;
    const bool active = row < a.rows;
    A xv[N], gv[N];
#pragma unroll
    for (int n = 0; n < N; ++n) xv[n] = gv[n] = 0;
    A mu = 0, r = 0;
    if (active) {
      load_items<T, G, N>(a.x + row * a.cols, a.cols, t, vec, xv, A(0));
      load_items<T, G, N>(a.grad + row * a.cols, a.cols, t, vec, gv, A(0));  // Gr widened as read
      if (a.mean) mu = a.mean[row];
      r = a.rstd[row];
    }
    SumPair<A> s{0, 0};
#pragma unroll
    for (int n = 0; n < N; ++n) {
      xv[n] = (xv[n] - mu) * r;  // xhat
      s.a += gv[n] * w[n];
      s.b += gv[n] * w[n] * xv[n];
    }
    s = group_reduce(s, G, smem, AddPair{});
    if (active) {
      const A mean_gw = a.mean ? s.a / n_cols : A(0), mean_gw_xhat = s.b / n_cols;
      A out[N];
#pragma unroll
      for (int n = 0; n < N; ++n) {
        out[n] = r * (gv[n] * w[n] - mean_gw - xv[n] * mean_gw_xhat);
        dw[n] += gv[n] * xv[n];
        db[n] += gv[n];
      }
      if constexpr (kResidual) {
        if (a.residual) add_residual_items<T, G, N>(a.residual + row * a.cols, a.cols, t, vec, out);
      }
      store_items<T, G, N>(a.dx + row * a.cols, a.cols, t, vec, out);
      // out holds floats (T = F32): the values dx received, so their rounding is dx.to(H)'s.
      if constexpr (kCast) {
        if (a.dx_cast_bf16)
          store_cast_items<T, BFloat16, G, N>(static_cast<BFloat16*>(a.dx_cast) + row * a.cols, a.cols, t, vec, out);
        else
          store_cast_items<T, Half, G, N>(static_cast<Half*>(a.dx_cast) + row * a.cols, a.cols, t, vec, out);
      }
    }
  }
  // One partial row per block: the groups of a block add up in group order.
  auto write_partial = [&](A* partial, const A (&sums)[N]) {
    if (!partial) return;
#pragma unroll
    for (int n = 0; n < N; ++n) {
      A total = sums[n];
      if constexpr (kGroups > 1) {
        __syncthreads();
        column_smem[threadIdx.x] = sums[n];
        __syncthreads();
        total = column_smem[t];
        for (int k = 1; k < kGroups; ++k) total += column_smem[k * G + t];
      }
      const std::int64_t c = item_column<T, G, N>(n, t, vec);
      if (group == 0 && c < a.cols) partial[static_cast<std::int64_t>(blockIdx.x) * a.cols + c] = total;
    }
  };
  write_partial(a.partial_dweight, dw);
  write_partial(a.partial_dbias, db);
}

// Same-dtype two-byte rows (F16, BF16: x, grad, weight and dx of T; F32 mean/rstd) of aligned
// rows up to 4096 columns, written in the spirit of the forward's norm_rows_two_byte_kernel
// (norm_forward.cu: BF16 forward 74% -> 96.5% of the copy ceiling). The staged kernel it replaced (removed since)
// reached 81-82% on BF16 [65536, 4096] with 127 registers, two blocks (16 warps) a
// multiprocessor and its copies through shared memory (cp.async issue and read-back
// instructions); its 5-row ring showed that loads in flight were not the limit. As the
// forward, this kernel goes for occupancy and few instructions an element instead:
//  * a register cap of 64 (__launch_bounds__(kRowThreads, 4)): four blocks, 32 warps, a
//    multiprocessor (the forward measured 86% -> 96.5% from that cap alone). ptxas (sm_90,
//    CUDA 13): 64 registers, no spills, 32,832 bytes of static shared memory, all 8
//    instantiations; four blocks need 4 x (32,832 + 1,024 reserved) = 132.3 KB of shared
//    memory, so the driver's 164 KB carveout, which leaves 92 KB of L1;
//  * the row stays packed in registers (16 elements a thread: two 16-byte words of x and two
//    of grad, 16 registers), widened word by word (widen_word: a shift or a mask an element)
//    in each of the two passes, instead of 32 floats held;
//  * weight is not held: each pass reads its 16-byte words through L1 (__ldg; 8 KB for 4096
//    columns, the same for every row of every block); no carveout is asked for;
//  * dweight/dbias are not held in registers either (32 more would not fit under the cap:
//    held there, ptxas spilled 100-124 bytes at 64 registers and wanted 96-128 uncapped):
//    each thread keeps its 16 columns' sums in its own shared-memory slots, four 16-byte
//    loads and stores a vector of 8 elements (conflict-free: consecutive threads,
//    consecutive slots), and the block writes one partial row at the end, in the layout
//    sum_partials_kernel reads;
//  * a thread whose vectors are all inside the row (every thread when the row fills the
//    shape, as for 4096 columns) loads, computes and stores with no per-vector test; the
//    loop over rows has a copy with weight and one without (no per-vector test either);
//  * dx leaves as one 16-byte store a vector, each pair rounded by the paired conversion.
// Arithmetic: per element the same expressions, in the same order, as
// norm_backward_rows_kernel (xhat = (x - mean) * rstd; the row sums of g * w and g * w * xhat
// over the thread's items in item order, then group_reduce; dx = rstd * (g * w - mean(gw) -
// xhat * mean(gw * xhat)), rounded as narrow_vector rounds; dweight += g * xhat, dbias += g,
// over the block's rows in row order, the groups of a block added in group order). The PTX of
// both kernels has the same operation sequence an element (sub, mul; mul, add, fma for the
// sums; mul, sub, mul, sub, mul for dx), so dx is expected bit-identical (unless ptxas fuses
// a mul and an add differently in the two) for 129-512 and 2049-4096 columns, where the old
// kernel's shapes (G = 32 / 256, N = 16, staged) are this kernel's. Differences: (1) the
// partial count is kMaxTwoBytePartials (528) where the old kernel had 256 (staged shapes) or
// 1024, so dweight/dbias are summed in another grouping (float rounding of the column sums;
// deterministic, fixed by the extents); (2) rows of up to 128 or of 513-2048 columns use other
// shapes than before, so their per-thread sum order differs (float rounding of the row sums,
// as any change of shape); (3) a thread's vectors past the row's
// end add nothing to the row sums, where the old kernel added g = 0 times w = 1 (the same sums
// but for the sign of an all-zero sum).
//
// Measured (H200, session 9): bench case layer_norm_backward_bf16 ([65536, 4096]) 3,864 GB/s,
// 89.9% of 4.3 TB/s, where the staged kernel gave 81% in the same call (target >= 90%).
// The staged kernel (its rows copied a few rows ahead through shared memory with cp.async)
// is gone since. Tried:
// evict-first hints on the x/grad loads and dx stores (10 points slower). Not tried: a
// next-row prefetch in registers (16 more: would need the cap raised to 80, three blocks a
// multiprocessor).
// 528 = 4 blocks x 132 multiprocessors: one full wave on an H100/H200 SXM. Measured on the
// H200 (session 9, BF16 [65536, 4096]): 512 blocks (4 multiprocessors idle) 89%, 528 90%,
// 1056 (two waves) 86% of 4.3 TB/s; evict-first hints on the row loads and dx stores cost 10
// points (79-80%). A constant, not the device's count: the partial grouping (and so the
// dweight/dbias rounding) depends on the extents only.
constexpr std::int64_t kMaxTwoBytePartials = 528;
inline constexpr int kTwoByteItems = 16;           // two 16-byte vectors a thread
// Rows of the two-byte kernel at most (longer tensors take norm_backward_rows_kernel, whose
// indices are 64-bit): its 32-bit iteration count, and its unsigned row index, which in the
// last pass runs up to rows - 2 + the rows of a pass (at most kMaxTwoBytePartials blocks of
// kRowThreads / 32 rows, G = 32) and must not wrap.
inline constexpr std::int64_t kTwoByteRowLimit = std::numeric_limits<int>::max() - 4096;
static_assert(kTwoByteRowLimit - 2 + kMaxTwoBytePartials * (kRowThreads / 32) <= std::numeric_limits<unsigned>::max(),
              "the two-byte kernel's row index must not wrap");

// Group size of the two-byte kernel: the smallest of 32 .. 256 threads that holds the row in
// 16 items a thread (4 instantiations per dtype).
template <class F>
bool with_two_byte_backward_shape(std::int64_t cols, F&& f) {
  if (cols > 4096) return false;
  if (cols <= 512) f(RowShape<32, kTwoByteItems>{});
  else if (cols <= 1024) f(RowShape<64, kTwoByteItems>{});
  else if (cols <= 2048) f(RowShape<128, kTwoByteItems>{});
  else f(RowShape<256, kTwoByteItems>{});
  return true;
}

// Two floats rounded to one 32-bit word of T (pair[0] in the low half, the lower address):
// the paired conversion of narrow_vector, so the same bits as the old kernel's stores.
template <class T>
__device__ __forceinline__ unsigned pack_word(const float (&pair)[2]) {
  unsigned word;
  if constexpr (std::is_same_v<T, BFloat16>) {
    const __nv_bfloat162 packed = __floats2bfloat162_rn(pair[0], pair[1]);
    memcpy(&word, &packed, sizeof(word));
  } else {
    static_assert(std::is_same_v<T, Half>, "F16 or BF16");
    const __half2 packed = __floats2half2_rn(pair[0], pair[1]);
    memcpy(&word, &packed, sizeof(word));
  }
  return word;
}

template <class T, int G>
__global__ void __launch_bounds__(kRowThreads, 4)
    norm_backward_two_byte_kernel(NormBackwardArgs<T> a, int iterations) {
  using A = acc_t<T>;
  static_assert(sizeof(T) == 2 && std::is_same_v<A, float>, "two-byte elements, float statistics");
  constexpr int N = kTwoByteItems, kV = Vec16<T>::kSize, kVectors = N / kV, kGroups = kRowThreads / G;
  static_assert(kV == 8 && N % kV == 0, "16-byte vectors of 8 elements");
  __shared__ SumPair<A> smem[kRowThreads / 32];
  // The column sums: [dweight, dbias][vector][half][thread], four floats a slot; each thread
  // reads and writes only its own slots until the partial row is written.
  __shared__ float4 sums[2 * kVectors * 2][kRowThreads];
  const int group = threadIdx.x / G, t = threadIdx.x % G;
  const int cols = static_cast<int>(a.cols);  // at most 4096 here
  const A n_cols = static_cast<A>(a.cols);
  // Vector q of this thread starts at column (q * G + t) * kV; columns grow with q, so the
  // thread is full when its last vector is inside the row.
  bool inside[kVectors];
#pragma unroll
  for (int q = 0; q < kVectors; ++q) inside[q] = (q * G + t) * kV < cols;
  const bool full = inside[kVectors - 1];
  // f(q) for each of the thread's vectors inside the row; no test when the thread is full.
  auto for_vectors = [&](auto f) {
    if (full) {
#pragma unroll
      for (int q = 0; q < kVectors; ++q) f(q);
    } else {
#pragma unroll
      for (int q = 0; q < kVectors; ++q)
        if (inside[q]) f(q);
    }
  };
#pragma unroll
  for (int k = 0; k < 2 * kVectors * 2; ++k) sums[k][threadIdx.x] = make_float4(0, 0, 0, 0);
  const uint4* const weight = a.weight ? reinterpret_cast<const uint4*>(a.weight) + t : nullptr;
  // All rows of the block with the weight's words w_of(q): one copy of the loop with weight,
  // one without (w = 1: g * 1 = g exactly, as the old kernel's w = 1), no per-vector test.
  auto rows_with = [&](auto w_of) {
    // 32-bit row indices and iteration counts (the launch asks for rows <= 2^31 - 1 - 4096):
    // fewer registers than 64-bit ones, under the cap of 64. Unsigned: the last pass's indices
    // reach rows - 2 + (rows a pass, up to 528 x 8 = 4224 for G = 32), past 2^31 - 1 for rows
    // near the limit but never past 2^32 - 1 (kTwoByteRowLimit); those rows fail `active`. A
    // signed int wrapped negative there and passed. Unsigned also drops the sign extensions of
    // row (ptxas, sm_90: 64 registers as before, 5-6 fewer instructions in each row loop).
    for (int it = 0; it < iterations; ++it) {
      const unsigned row = (static_cast<unsigned>(it) * gridDim.x + blockIdx.x) * kGroups + group;
      const bool active = row < a.rows;
      // Vectors past the row's end, and rows past the last, read as zeros.
      uint4 xp[kVectors], gp[kVectors];
      {
        const std::int64_t offset = static_cast<std::int64_t>(active ? row : 0) * cols;
        const uint4* const xs = reinterpret_cast<const uint4*>(a.x + offset) + t;
        const uint4* const gs = reinterpret_cast<const uint4*>(a.grad + offset) + t;
        if (active && full) {
#pragma unroll
          for (int q = 0; q < kVectors; ++q) {
            xp[q] = xs[q * G];
            gp[q] = gs[q * G];
          }
        } else {
#pragma unroll
          for (int q = 0; q < kVectors; ++q) {
            xp[q] = active && inside[q] ? xs[q * G] : uint4{0, 0, 0, 0};
            gp[q] = active && inside[q] ? gs[q * G] : uint4{0, 0, 0, 0};
          }
        }
      }
      A mu = 0, r = 0;
      if (active) {
        if (a.mean) mu = a.mean[row];
        r = a.rstd[row];
      }
      // Calls f(j, x, g, w) with the elements 2j and 2j + 1 of vector q (float2 each), j = 0..3:
      // the old kernel's item order n = q * kV + 2j + e.
      auto for_pairs = [&](int q, auto f) {
        const uint4 w = w_of(q);
        const unsigned x_words[4] = {xp[q].x, xp[q].y, xp[q].z, xp[q].w};
        const unsigned g_words[4] = {gp[q].x, gp[q].y, gp[q].z, gp[q].w};
        const unsigned w_words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) f(j, widen_word<T>(x_words[j]), widen_word<T>(g_words[j]), widen_word<T>(w_words[j]));
      };
      SumPair<A> s{0, 0};
      auto add = [&](A x, A g, A w) {
        const A xhat = (x - mu) * r;
        s.a += g * w;
        s.b += g * w * xhat;
      };
      for_vectors([&](int q) {
        for_pairs(q, [&](int, float2 x, float2 g, float2 w) {
          add(x.x, g.x, w.x);
          add(x.y, g.y, w.y);
        });
      });
      s = group_reduce(s, G, smem, AddPair{});  // every thread of the block joins
      if (active) {
        const A mean_gw = a.mean ? s.a / n_cols : A(0), mean_gw_xhat = s.b / n_cols;
        uint4* const dx = reinterpret_cast<uint4*>(a.dx + static_cast<std::int64_t>(row) * cols) + t;
        // dx of one element; adds its terms to the column sums dw, db.
        auto element = [&](A x, A g, A w, float& dw, float& db) {
          const A xhat = (x - mu) * r;
          dw += g * xhat;
          db += g;
          return r * (g * w - mean_gw - xhat * mean_gw_xhat);
        };
        for_vectors([&](int q) {
          float4 dw[2] = {sums[q * 2][threadIdx.x], sums[q * 2 + 1][threadIdx.x]};
          float4 db[2] = {sums[(kVectors + q) * 2][threadIdx.x], sums[(kVectors + q) * 2 + 1][threadIdx.x]};
          unsigned out[4];
          for_pairs(q, [&](int j, float2 x, float2 g, float2 w) {
            float4& dwh = dw[j / 2];
            float4& dbh = db[j / 2];
            const A lo = element(x.x, g.x, w.x, j % 2 ? dwh.z : dwh.x, j % 2 ? dbh.z : dbh.x);
            const A hi = element(x.y, g.y, w.y, j % 2 ? dwh.w : dwh.y, j % 2 ? dbh.w : dbh.y);
            const A pair[2] = {lo, hi};
            out[j] = pack_word<T>(pair);
          });
          sums[q * 2][threadIdx.x] = dw[0];
          sums[q * 2 + 1][threadIdx.x] = dw[1];
          sums[(kVectors + q) * 2][threadIdx.x] = db[0];
          sums[(kVectors + q) * 2 + 1][threadIdx.x] = db[1];
          dx[q * G] = uint4{out[0], out[1], out[2], out[3]};
        });
      }
    }
  };
  constexpr uint4 kOnes{kOnesWord<T>, kOnesWord<T>, kOnesWord<T>, kOnesWord<T>};
  if (weight) rows_with([&](int q) { return __ldg(weight + q * G); });
  else rows_with([&](int) { return kOnes; });
  // One partial row per block: the groups of a block add up in group order (as the old
  // kernel), each thread's 8 columns of a vector written as two 16-byte stores.
  __syncthreads();
  auto write_partial = [&](A* partial, int which) {
    if (!partial || group != 0) return;
#pragma unroll
    for (int q = 0; q < kVectors; ++q) {
      if (!inside[q]) continue;
      float4* const dst =
          reinterpret_cast<float4*>(partial + static_cast<std::int64_t>(blockIdx.x) * cols + (q * G + t) * kV);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const float4* const slots = sums[(which * kVectors + q) * 2 + half];
        float4 total = slots[t];
        for (int h = 1; h < kGroups; ++h) {
          const float4 more = slots[h * G + t];
          total = make_float4(total.x + more.x, total.y + more.y, total.z + more.z, total.w + more.w);
        }
        dst[half] = total;
      }
    }
  };
  write_partial(a.partial_dweight, 0);
  write_partial(a.partial_dbias, 1);
}

// Long rows: dx of one row per block, two passes.
template <class T, class Gr, bool kResidual, bool kCast = false>
__global__ void __launch_bounds__(kLongRowThreads) norm_backward_long_rows_kernel(NormBackwardArgs<T, Gr> a) {
  static_assert(!kCast || (std::is_same_v<T, float> && kResidual), "dx_cast: F32 rows, the kResidual form");
  using A = acc_t<T>;
  __shared__ SumPair<A> smem[kLongRowThreads / 32];
  const std::int64_t row = blockIdx.x, base = row * a.cols;
  const A mu = a.mean ? a.mean[row] : A(0), r = a.rstd[row];
  auto weight = [&](std::int64_t c) { return a.weight ? load_acc(a.weight, c) : A(1); };
  SumPair<A> s{0, 0};
  for (std::int64_t c = threadIdx.x; c < a.cols; c += kLongRowThreads) {
    const A gw = static_cast<A>(load_acc(a.grad, base + c)) * weight(c);
    s.a += gw;
    s.b += gw * (load_acc(a.x, base + c) - mu) * r;
  }
  s = group_reduce(s, kLongRowThreads, smem, AddPair{});
  const A n_cols = static_cast<A>(a.cols);
  const A mean_gw = a.mean ? s.a / n_cols : A(0), mean_gw_xhat = s.b / n_cols;
  for (std::int64_t c = threadIdx.x; c < a.cols; c += kLongRowThreads) {
    const A xhat = (load_acc(a.x, base + c) - mu) * r;
    A v = r * (static_cast<A>(load_acc(a.grad, base + c)) * weight(c) - mean_gw - xhat * mean_gw_xhat);
    if constexpr (kResidual) {
      if (a.residual) v += load_acc(a.residual, base + c);
    }
    a.dx[base + c] = detail::narrow<T>(v);
    if constexpr (kCast) {  // v is the float just stored
      if (a.dx_cast_bf16)
        static_cast<BFloat16*>(a.dx_cast)[base + c] = detail::narrow<BFloat16>(v);
      else
        static_cast<Half*>(a.dx_cast)[base + c] = detail::narrow<Half>(v);
    }
  }
}

// Long rows: the column sums over a contiguous slice of rows per blockIdx.y.
template <class T, class Gr>
__global__ void __launch_bounds__(kRowThreads) norm_backward_column_partials_kernel(NormBackwardArgs<T, Gr> a,
                                                                                    std::int64_t rows_per_part) {
  using A = acc_t<T>;
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kRowThreads + threadIdx.x;
  if (c >= a.cols) return;
  const std::int64_t first = blockIdx.y * rows_per_part;
  const std::int64_t last = first + rows_per_part < a.rows ? first + rows_per_part : a.rows;
  A dw = 0, db = 0;
  for (std::int64_t row = first; row < last; ++row) {
    const A g = static_cast<A>(load_acc(a.grad, row * a.cols + c));
    const A mu = a.mean ? a.mean[row] : A(0);
    dw += g * (load_acc(a.x, row * a.cols + c) - mu) * a.rstd[row];
    db += g;
  }
  if (a.partial_dweight) a.partial_dweight[blockIdx.y * a.cols + c] = dw;
  if (a.partial_dbias) a.partial_dbias[blockIdx.y * a.cols + c] = db;
}

// dweight[c] / dbias[c] = the partials of column c added in a fixed order: 32 columns per
// block, 8 lanes over the partials (lane l adds partials l, l + 8, ...), the lanes combined in
// lane order. blockIdx.y picks the output (dweight and dbias in one launch). The loads of a
// lane are unrolled by 32 (independent loads in flight; the additions stay in partial order):
// one block per 32 columns, one to a multiprocessor, and a load at a time left this kernel
// bound by latency; unrolled by 8 it took 7.7 us for BF16 [65536, 4096]'s 512 x 4096 x 2
// partials (ncu, session 9: 2.2 TB/s, 1.9% of the backward's time).
template <class T>
struct PartialSums {
  const acc_t<T>* partial[2];
  T* out[2];
};

template <class T>
__global__ void __launch_bounds__(kRowThreads)
    sum_partials_kernel(PartialSums<T> sums, std::int64_t parts, std::int64_t cols) {
  using A = acc_t<T>;
  __shared__ A lanes[kLanes][kColumnsPerBlock];
  const A* partial = blockIdx.y == 0 ? sums.partial[0] : sums.partial[1];  // no dynamic index: no local copy
  T* out = blockIdx.y == 0 ? sums.out[0] : sums.out[1];
  const int col_in_block = threadIdx.x % kColumnsPerBlock, lane = threadIdx.x / kColumnsPerBlock;
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kColumnsPerBlock + col_in_block;
  A s = 0;
  if (c < cols) {
#pragma unroll 32
    for (std::int64_t p = lane; p < parts; p += kLanes) s += partial[p * cols + c];
  }
  lanes[lane][col_in_block] = s;
  __syncthreads();
  if (lane == 0 && c < cols) {
    for (int k = 1; k < kLanes; ++k) s += lanes[k][col_in_block];
    out[c] = detail::narrow<T>(s);
  }
}

// The backward of rows of T with a gradient of Gr (T, or F16/BF16 for F32 T).
template <class T, class Gr, bool kResidual, bool kCast = false>
void launch_norm_backward(bool centred, const Buffer& grad, const Buffer& x, const Buffer& mean, const Buffer& rstd,
                          const Buffer& weight, const Buffer& residual, const Buffer& dx, const Buffer& dx_cast,
                          const Buffer& dweight, const Buffer& dbias, std::int64_t rows, std::int64_t cols,
                          cudaStream_t stream) {
  using A = acc_t<T>;
  NormBackwardArgs<T, Gr> a{grad.data_as<const Gr>(),
                            x.data_as<const T>(),
                            residual.defined() ? residual.data_as<const T>() : nullptr,
                            centred ? mean.data_as<const A>() : nullptr,
                            rstd.data_as<const A>(),
                            weight.defined() ? weight.data_as<const T>() : nullptr,
                            dx.data_as<T>(),
                            kCast ? dx_cast.data() : nullptr,
                            kCast && dx_cast.dtype() == DType::BF16,
                            nullptr,
                            nullptr,
                            rows,
                            cols};
  const bool vec = rows_vectorisable<T>(cols, {a.grad, a.x, a.residual, a.weight, a.dx, a.dx_cast});
  // Same-dtype two-byte aligned rows up to 4096 columns: norm_backward_two_byte_kernel. (The
  // two-byte calls never have a residual or dx_cast: norm_backward's checks.)
  bool two_byte = false;
  if constexpr (sizeof(T) == 2 && std::is_same_v<T, Gr> && !kResidual && !kCast)
    two_byte = vec && cols <= 4096 && rows <= kTwoByteRowLimit;
  // How many partial rows: fixed by the extents, the dtype and vec only (determinism).
  std::int64_t parts = 0;
  bool fits = true;
  if (two_byte) {
    with_two_byte_backward_shape(cols, [&](auto shape) {
      constexpr int G = decltype(shape)::kGroup;
      parts = std::min<std::int64_t>(kMaxTwoBytePartials, (rows + kRowThreads / G - 1) / (kRowThreads / G));
    });
  } else {
    fits = with_row_shape(cols, 4096, [&](auto shape) {
      constexpr int G = decltype(shape)::kGroup;
      parts = std::min<std::int64_t>(kMaxPartials, (rows + kRowThreads / G - 1) / (kRowThreads / G));
    });
  }
  if (!fits) parts = std::min<std::int64_t>(kLongRowPartials, rows);
  auto dw_storage = dweight.defined() ? scratch(x, parts * cols * sizeof(A)) : nullptr;
  auto db_storage = dbias.defined() ? scratch(x, parts * cols * sizeof(A)) : nullptr;
  a.partial_dweight = dw_storage ? static_cast<A*>(dw_storage->data()) : nullptr;
  a.partial_dbias = db_storage ? static_cast<A*>(db_storage->data()) : nullptr;
  if (two_byte) {
    if constexpr (sizeof(T) == 2 && std::is_same_v<T, Gr>) {
      with_two_byte_backward_shape(cols, [&](auto shape) {
        constexpr int G = decltype(shape)::kGroup;
        const std::int64_t rows_per_pass = parts * (kRowThreads / G);
        const int iterations = static_cast<int>((rows + rows_per_pass - 1) / rows_per_pass);
        norm_backward_two_byte_kernel<T, G><<<static_cast<unsigned>(parts), kRowThreads, 0, stream>>>(a, iterations);
      });
      FERRITE_CUDA_CHECK_LAUNCH();
    }
  } else if (fits) {
    with_row_shape(cols, 4096, [&](auto shape) {
      constexpr int G = decltype(shape)::kGroup, N = decltype(shape)::kItems;
      const std::int64_t rows_per_pass = parts * (kRowThreads / G);
      const std::int64_t iterations = (rows + rows_per_pass - 1) / rows_per_pass;
      norm_backward_rows_kernel<T, Gr, G, N, kResidual, kCast><<<static_cast<unsigned>(parts), kRowThreads, 0, stream>>>(
          a, iterations, vec);
    });
    FERRITE_CUDA_CHECK_LAUNCH();
  } else {
    norm_backward_long_rows_kernel<T, Gr, kResidual, kCast><<<static_cast<unsigned>(rows), kLongRowThreads, 0, stream>>>(a);
    FERRITE_CUDA_CHECK_LAUNCH();
    if (a.partial_dweight || a.partial_dbias) {
      const std::int64_t rows_per_part = (rows + parts - 1) / parts;
      parts = (rows + rows_per_part - 1) / rows_per_part;
      const dim3 grid(static_cast<unsigned>(blocks_for(cols, kRowThreads)), static_cast<unsigned>(parts));
      norm_backward_column_partials_kernel<T, Gr><<<grid, kRowThreads, 0, stream>>>(a, rows_per_part);
      FERRITE_CUDA_CHECK_LAUNCH();
    }
  }
  PartialSums<T> sums{};
  unsigned outputs = 0;
  auto add_output = [&](const A* partial, T* out) {
    sums.partial[outputs] = partial;
    sums.out[outputs++] = out;
  };
  if (a.partial_dweight) add_output(a.partial_dweight, dweight.data_as<T>());
  if (a.partial_dbias) add_output(a.partial_dbias, dbias.data_as<T>());
  if (outputs > 0) {
    const dim3 grid(static_cast<unsigned>(blocks_for(cols, kColumnsPerBlock)), outputs);
    sum_partials_kernel<T><<<grid, kRowThreads, 0, stream>>>(sums, parts, cols);
    FERRITE_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

void norm_backward(bool centred, const Buffer& grad, const Buffer& x, const Buffer& mean, const Buffer& rstd,
                   const Buffer& weight, const Buffer& residual, const Buffer& dx, const Buffer& dx_cast,
                   const Buffer& dweight, const Buffer& dbias, std::int64_t rows, std::int64_t cols,
                   cudaStream_t stream) {
  const char* name = centred ? "layer_norm_backward: " : "rms_norm_backward: ";
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<acc_t<T>> || detail::is_complex_v<T>) {
      FERRITE_THROW(Unsupported, name, dtype_name(x.dtype()), " on cuda");
    } else {
      // The two-byte kernels have no residual path (the front end allows F32/F64 only).
      FERRITE_CHECK(!residual.defined() || sizeof(T) >= 4, Unsupported, name, "residual with ",
                    dtype_name(x.dtype()), " input on cuda");
      // dx_cast: F16/BF16 of F32 rows only (the front end's rule).
      FERRITE_CHECK(!dx_cast.defined() || (std::is_same_v<T, float> && is_half_precision(dx_cast.dtype())),
                    Unsupported, name, "dx_cast ", dx_cast.defined() ? dtype_name(dx_cast.dtype()) : "", " of ",
                    dtype_name(x.dtype()), " input on cuda");
      // The F32 calls with dx_cast: the kResidual, kCast kernels of each grad type.
      if constexpr (std::is_same_v<T, float>) {
        if (dx_cast.defined()) {
          auto launch = [&](auto grad_tag) {
            using Gr = typename decltype(grad_tag)::type;
            launch_norm_backward<float, Gr, true, true>(centred, grad, x, mean, rstd, weight, residual, dx, dx_cast,
                                                        dweight, dbias, rows, cols, stream);
          };
          switch (grad.dtype()) {
            case DType::F32: launch(detail::TypeTag<float>{}); return;
            case DType::BF16: launch(detail::TypeTag<BFloat16>{}); return;
            case DType::F16: launch(detail::TypeTag<Half>{}); return;
            default: break;
          }
          FERRITE_THROW(Unsupported, name, dtype_name(grad.dtype()), " grad of ", dtype_name(x.dtype()),
                        " input on cuda");
        }
      }
      if (grad.dtype() == x.dtype()) {
        if constexpr (sizeof(T) >= 4) {
          if (residual.defined()) {
            launch_norm_backward<T, T, true>(centred, grad, x, mean, rstd, weight, residual, dx, Buffer(), dweight,
                                             dbias, rows, cols, stream);
            return;
          }
        }
        launch_norm_backward<T, T, false>(centred, grad, x, mean, rstd, weight, Buffer(), dx, Buffer(), dweight, dbias,
                                          rows, cols, stream);
        return;
      }
      if constexpr (std::is_same_v<T, float>) {
        if (grad.dtype() == DType::BF16) {
          launch_norm_backward<float, BFloat16, true>(centred, grad, x, mean, rstd, weight, residual, dx, Buffer(),
                                                      dweight, dbias, rows, cols, stream);
          return;
        }
        if (grad.dtype() == DType::F16) {
          launch_norm_backward<float, Half, true>(centred, grad, x, mean, rstd, weight, residual, dx, Buffer(),
                                                  dweight, dbias, rows, cols, stream);
          return;
        }
      }
      FERRITE_THROW(Unsupported, name, dtype_name(grad.dtype()), " grad of ", dtype_name(x.dtype()),
                    " input on cuda");
    }
  });
}

}  // namespace ferrite::cuda::reduction
