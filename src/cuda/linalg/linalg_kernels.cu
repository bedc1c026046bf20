// Kernels of linalg_kernels.hpp. Elementwise ones use a grid-stride loop over all elements of
// the batch; the triangle copy and the non-finite flags one warp per matrix column (see
// ColumnLoop); pivots to a permutation one thread per matrix.
#include "cuda/linalg/linalg_kernels.hpp"

#include <cuComplex.h>

#include <algorithm>

#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::linalg_kernels {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t work) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>((work + kThreads - 1) / kThreads, 65535)));
}

#define FERRITE_GRID_LOOP(i, count) \
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < (count); i += std::int64_t(gridDim.x) * blockDim.x)

template <class T> __device__ T zero_of() { return T{}; }
template <class T> __device__ T one_of() { return T(1); }
template <> __device__ float2 one_of<float2>() { return make_float2(1.f, 0.f); }
template <> __device__ double2 one_of<double2>() { return make_double2(1.0, 0.0); }
__device__ bool finite(float x) { return isfinite(x); }
__device__ bool finite(double x) { return isfinite(x); }
__device__ bool finite(float2 x) { return isfinite(x.x) && isfinite(x.y); }
__device__ bool finite(double2 x) { return isfinite(x.x) && isfinite(x.y); }
__device__ bool is_nan(float x) { return isnan(x); }
__device__ bool is_nan(double x) { return isnan(x); }
__device__ bool is_nan(float2 x) { return isnan(x.x); }
__device__ bool is_nan(double2 x) { return isnan(x.x); }
__device__ float conj_of(float x) { return x; }
__device__ double conj_of(double x) { return x; }
__device__ float2 conj_of(float2 x) { return make_float2(x.x, -x.y); }
__device__ double2 conj_of(double2 x) { return make_double2(x.x, -x.y); }

template <class F>
void dispatch(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32: f(float{}); return;
    case DType::F64: f(double{}); return;
    case DType::C64: f(float2{}); return;
    case DType::C128: f(double2{}); return;
    default: FERRITE_THROW(Unsupported, "linalg kernels: dtype ", dtype_name(dtype));
  }
}

// Per-column kernels: one warp per column of a column-major [batch] rows×cols batch (column
// `col` of the whole batch starts at col·rows), grid-stride over all columns, so a single
// 4096² matrix spreads over the whole GPU and a batch of 3×3 ones still uses every warp.
// `col` is uniform within a warp, so the warp votes below see all 32 lanes.
struct ColumnLoop {
  std::int64_t first, step;
};
__device__ ColumnLoop column_loop() {
  return {(blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) >> 5, (std::int64_t(gridDim.x) * blockDim.x) >> 5};
}
// Rows [lo, hi) of column j inside the triangle (0: all, 1: lower i >= j, 2: upper i <= j).
__device__ void triangle_rows(int triangle, std::int64_t j, std::int64_t rows, std::int64_t& lo, std::int64_t& hi) {
  lo = triangle == 1 ? j : 0;
  hi = triangle == 2 ? (j + 1 < rows ? j + 1 : rows) : rows;
}

template <class T>
__global__ void copy_triangle_kernel(const T* __restrict__ src, T* __restrict__ dst, std::int64_t columns,
                                     std::int64_t n, bool keep_upper) {
  const int lane = threadIdx.x & 31;
  const ColumnLoop loop = column_loop();
  for (std::int64_t col = loop.first; col < columns; col += loop.step) {
    std::int64_t lo, hi;
    triangle_rows(keep_upper ? 2 : 1, col % n, n, lo, hi);
    const std::int64_t base = col * n;
#pragma unroll 4
    for (std::int64_t i = lane; i < n; i += 32) dst[base + i] = i >= lo && i < hi ? src[base + i] : zero_of<T>();
  }
}

// A NaN pivot at order k + 1 lowers info[b] to k + 1 unless a smaller failure is already
// there (0 counts as none): a compare-and-swap minimum, order-independent and so
// deterministic, written only by the rare threads that see a NaN.
template <class T>
__global__ void nan_pivot_kernel(const T* a, std::int64_t batch, std::int64_t n, int* info) {
  FERRITE_GRID_LOOP(e, batch * n) {
    const std::int64_t b = e / n, k = e % n;
    if (!is_nan(a[b * n * n + k * n + k])) continue;
    const int order = static_cast<int>(k + 1);
    int seen = info[b];
    while (seen == 0 || seen > order) {
      const int before = atomicCAS(info + b, seen, order);
      if (before == seen) break;
      seen = before;
    }
  }
}

// Flags (info[b] = code) each matrix whose triangle holds Inf/NaN; with kCopy, also writes
// a = src (conjugated on request) on the way, so the check costs no extra pass (without it,
// a is unused: the check reads src in place). info must be zero beforehand; every writer
// stores the same value.
template <class T, bool kCopy>
__global__ void nonfinite_kernel(const T* __restrict__ src, T* __restrict__ a, std::int64_t columns, std::int64_t rows,
                                 std::int64_t cols, int triangle, bool conjugate, int* info, int code) {
  const int lane = threadIdx.x & 31;
  const ColumnLoop loop = column_loop();
  for (std::int64_t col = loop.first; col < columns; col += loop.step) {
    std::int64_t lo, hi;
    triangle_rows(triangle, col % cols, rows, lo, hi);
    const std::int64_t base = col * rows;
    bool bad = false;
#pragma unroll 4
    for (std::int64_t i = lane; i < rows; i += 32) {
      const T x = src[base + i];
      if (i >= lo && i < hi && !finite(x)) bad = true;
      if constexpr (kCopy) a[base + i] = conjugate ? conj_of(x) : x;
    }
    if (__any_sync(0xffffffffu, bad) && lane == 0) info[col / cols] = code;
  }
}

template <class T>
__global__ void zero_flagged_kernel(T* a, std::int64_t columns, std::int64_t rows, std::int64_t cols, const int* info) {
  const int lane = threadIdx.x & 31;
  const ColumnLoop loop = column_loop();
  for (std::int64_t col = loop.first; col < columns; col += loop.step) {
    if (info[col / cols] == 0) continue;
    for (std::int64_t i = lane; i < rows; i += 32) a[col * rows + i] = zero_of<T>();
  }
}

// Blocks for one warp per column (at most 8192 blocks: the loops stride over the rest).
unsigned column_blocks(std::int64_t columns) {
  constexpr std::int64_t kWarps = kThreads / 32;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>((columns + kWarps - 1) / kWarps, 8192)));
}

template <class In, class Out>
__global__ void convert_kernel(const In* in, Out* out, std::int64_t count) {
  FERRITE_GRID_LOOP(i, count) out[i] = static_cast<Out>(in[i]);
}

__global__ void permutation_kernel(const std::int32_t* pivots, std::int64_t* perm, std::int64_t batch, std::int64_t m,
                                   std::int64_t k) {
  FERRITE_GRID_LOOP(b, batch) {
    std::int64_t* p = perm + b * m;
    for (std::int64_t i = 0; i < m; ++i) p[i] = i;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int64_t j = pivots[b * k + i] - 1;
      const std::int64_t t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
  }
}

// torch's P = P_lapackᵀ: P[perm[j], j] = 1.
template <class T>
__global__ void unpack_kernel(const T* lu, const std::int64_t* perm, T* p, T* l, T* u, std::int64_t batch,
                              std::int64_t m, std::int64_t n, std::int64_t k) {
  FERRITE_GRID_LOOP(e, batch * m * m) {
    const std::int64_t b = e / (m * m), i = e % m, j = e / m % m;
    p[e] = perm[b * m + j] == i ? one_of<T>() : zero_of<T>();
  }
  FERRITE_GRID_LOOP(e, batch * m * k) {
    const std::int64_t b = e / (m * k), i = e % m, j = e / m % k;
    l[e] = i > j ? lu[b * m * n + j * m + i] : i == j ? one_of<T>() : zero_of<T>();
  }
  FERRITE_GRID_LOOP(e, batch * k * n) {
    const std::int64_t b = e / (k * n), i = e % k, j = e / k % n;
    u[e] = i <= j ? lu[b * m * n + j * m + i] : zero_of<T>();
  }
}

template <class T>
__global__ void copy_upper_kernel(const T* a, T* r, std::int64_t batch, std::int64_t m, std::int64_t n,
                                  std::int64_t rrows) {
  FERRITE_GRID_LOOP(e, batch * rrows * n) {
    const std::int64_t b = e / (rrows * n), i = e % rrows, j = e / rrows % n;
    r[e] = i <= j && i < m ? a[b * m * n + j * m + i] : zero_of<T>();
  }
}

__global__ void merge_kernel(int* info, const int* solver, std::int64_t batch) {
  FERRITE_GRID_LOOP(b, batch) if (info[b] == 0) info[b] = solver[b];
}

template <class R, class C>
__global__ void to_complex_kernel(const R* in, C* out, std::int64_t count) {
  FERRITE_GRID_LOOP(i, count) {
    out[i].x = in[i];
    out[i].y = 0;
  }
}

template <class T>
__global__ void adjoint_kernel(const T* v, T* vh, std::int64_t batch, std::int64_t n) {
  FERRITE_GRID_LOOP(e, batch * n * n) {
    const std::int64_t b = e / (n * n), i = e % n, j = e / n % n;
    vh[e] = conj_of(v[b * n * n + i * n + j]);
  }
}

}  // namespace

void copy_triangle(const void* src, void* dst, DType dtype, std::int64_t batch, std::int64_t n, bool keep_upper,
                   cudaStream_t stream) {
  const std::int64_t columns = batch * n;
  if (columns == 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    copy_triangle_kernel<T><<<column_blocks(columns), kThreads, 0, stream>>>(static_cast<const T*>(src),
                                                                             static_cast<T*>(dst), columns, n, keep_upper);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void nan_pivot_info(const void* a, DType dtype, std::int64_t batch, std::int64_t n, int* info, cudaStream_t stream) {
  if (batch == 0 || n == 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    nan_pivot_kernel<T><<<blocks_for(batch * n), kThreads, 0, stream>>>(static_cast<const T*>(a), batch, n, info);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void pivots_to_i32(const std::int64_t* in, std::int32_t* out, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  convert_kernel<<<blocks_for(count), kThreads, 0, stream>>>(in, out, count);
  FERRITE_CUDA_CHECK_LAUNCH();
}

void pivots_to_i64(const std::int32_t* in, std::int64_t* out, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  convert_kernel<<<blocks_for(count), kThreads, 0, stream>>>(in, out, count);
  FERRITE_CUDA_CHECK_LAUNCH();
}

void lu_unpack(const void* lu, const std::int32_t* pivots, void* p, void* l, void* u, std::int64_t* perm, DType dtype,
               std::int64_t batch, std::int64_t m, std::int64_t n, cudaStream_t stream) {
  const std::int64_t k = std::min(m, n);
  if (batch == 0 || m == 0) return;
  permutation_kernel<<<blocks_for(batch), kThreads, 0, stream>>>(pivots, perm, batch, m, k);
  FERRITE_CUDA_CHECK_LAUNCH();
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    unpack_kernel<T><<<blocks_for(batch * m * std::max(m, n)), kThreads, 0, stream>>>(
        static_cast<const T*>(lu), perm, static_cast<T*>(p), static_cast<T*>(l), static_cast<T*>(u), batch, m, n, k);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void copy_upper(const void* a, void* r, DType dtype, std::int64_t batch, std::int64_t m, std::int64_t n,
                std::int64_t rrows, cudaStream_t stream) {
  const std::int64_t count = batch * rrows * n;
  if (count == 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    copy_upper_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const T*>(a), static_cast<T*>(r),
                                                                      batch, m, n, rrows);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void nonfinite_info(const void* src, void* a, DType dtype, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                    int triangle, bool conjugate, int* info, int code, cudaStream_t stream) {
  if (batch == 0) return;
  FERRITE_CUDA_CHECK(cudaMemsetAsync(info, 0, static_cast<std::size_t>(batch) * sizeof(int), stream));
  const std::int64_t columns = batch * cols;
  if (columns == 0 || rows == 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    const unsigned blocks = column_blocks(columns);
    if (src != nullptr && src != a)
      nonfinite_kernel<T, true><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(src), static_cast<T*>(a), columns,
                                                                 rows, cols, triangle, conjugate, info, code);
    else
      nonfinite_kernel<T, false><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(a), nullptr, columns, rows, cols,
                                                                  triangle, false, info, code);
    FERRITE_CUDA_CHECK_LAUNCH();
    zero_flagged_kernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<T*>(a), columns, rows, cols, info);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void merge_info(int* info, const int* solver, std::int64_t batch, cudaStream_t stream) {
  if (batch == 0) return;
  merge_kernel<<<blocks_for(batch), kThreads, 0, stream>>>(info, solver, batch);
  FERRITE_CUDA_CHECK_LAUNCH();
}

void real_to_complex(const void* in, void* out, DType real, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  if (real == DType::F32)
    to_complex_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const float*>(in), static_cast<float2*>(out), count);
  else
    to_complex_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const double*>(in), static_cast<double2*>(out), count);
  FERRITE_CUDA_CHECK_LAUNCH();
}

void adjoint(const void* v, void* vh, DType dtype, std::int64_t batch, std::int64_t n, cudaStream_t stream) {
  const std::int64_t count = batch * n * n;
  if (count == 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    adjoint_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const T*>(v), static_cast<T*>(vh), batch, n);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::linalg_kernels
