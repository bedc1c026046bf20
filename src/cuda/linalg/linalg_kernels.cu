// Kernels of linalg_kernels.hpp. Elementwise ones use a grid-stride loop over all elements of
// the batch; the triangle copy and the non-finite flags one warp per matrix column (see
// ColumnLoop), the transposing triangle copy 32×32 shared-memory tiles; pivots to a
// permutation one thread per matrix.
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
template <class T>
__global__ void lower_copy_kernel(const T* __restrict__ src, T* __restrict__ dst, std::int64_t columns, std::int64_t n,
                                  bool conjugate, int* info, int code) {
  const int lane = threadIdx.x & 31;
  const ColumnLoop loop = column_loop();
  for (std::int64_t col = loop.first; col < columns; col += loop.step) {
    const std::int64_t j = col % n, base = col * n;
    bool bad = false;
#pragma unroll 4
    for (std::int64_t i = lane; i < n; i += 32) {
      T x = zero_of<T>();
      if (i >= j) {
        x = src[base + i];
        bad = bad || !finite(x);
        if (conjugate) x = conj_of(x);
      }
      dst[base + i] = x;
    }
    if (info != nullptr && __any_sync(0xffffffffu, bad) && lane == 0) info[col / n] = code;
  }
}

// dst (column-major) = the lower triangle of the row-major src, zero above: dst[r + c·n] =
// src[r·n + c] for r >= c. 32×32 tiles through shared memory so that both the reads (along
// c) and the writes (along r) are coalesced; tiles wholly above the diagonal only write
// zeros. Block 32×8, grid (column tiles, row tiles, batch slices).
template <class T>
__global__ void lower_transpose_kernel(const T* __restrict__ src, T* __restrict__ dst, std::int64_t batch,
                                       std::int64_t n, int* info, int code) {
  __shared__ T tile[32][33];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::int64_t r0 = std::int64_t(blockIdx.y) * 32, c0 = std::int64_t(blockIdx.x) * 32;
  for (std::int64_t b = blockIdx.z; b < batch; b += gridDim.z) {
    const T* s = src + b * n * n;
    T* d = dst + b * n * n;
    bool bad = false;
    if (r0 + 31 >= c0) {  // the tile reaches the lower triangle: load it
      for (int k = ty; k < 32; k += 8) {
        const std::int64_t r = r0 + k, c = c0 + tx;
        if (r < n && c <= r) {
          const T x = s[r * n + c];
          bad = bad || !finite(x);
          tile[k][tx] = x;
        }
      }
    }
    __syncthreads();
    for (int k = ty; k < 32; k += 8) {
      const std::int64_t c = c0 + k, r = r0 + tx;
      if (r < n && c < n) d[r + c * n] = r >= c ? tile[tx][k] : zero_of<T>();
    }
    // Also the barrier before the next matrix overwrites the tile.
    if (__syncthreads_or(bad) && info != nullptr && tx == 0 && ty == 0) info[b] = code;
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

// Flags (info[b] = code) each matrix holding Inf/NaN; info must be zero beforehand and
// every writer stores the same value.
template <class T>
__global__ void nonfinite_kernel(const T* a, std::int64_t columns, std::int64_t rows, int* info, int code,
                                 std::int64_t cols) {
  const int lane = threadIdx.x & 31;
  const ColumnLoop loop = column_loop();
  for (std::int64_t col = loop.first; col < columns; col += loop.step) {
    const std::int64_t base = col * rows;
    bool bad = false;
#pragma unroll 4
    for (std::int64_t i = lane; i < rows; i += 32) bad = bad || !finite(a[base + i]);
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

// geev's real eigenvectors (LAPACK's packing) to complex ones: a real eigenvalue's vector is
// its column; a conjugate pair (positive imaginary part first, consecutive columns j, j + 1)
// shares the columns: v_j = vr_j + i vr_{j+1}, v_{j+1} = vr_j - i vr_{j+1}. An eigenvalue
// that is neither (NaN: the front end throws for such input) takes its own column, so no
// index leaves the matrix.
template <class R, class C>
__global__ void unpack_eigenvectors_kernel(const R* vr, const C* w, C* v, std::int64_t batch, std::int64_t n) {
  const std::int64_t nn = n * n;
  FERRITE_GRID_LOOP(i, batch * nn) {
    const std::int64_t b = i / nn, j = (i % nn) / n, row = i % n;
    const R* const m = vr + b * nn;
    const R im = w[b * n + j].y;
    C out;
    if (im > 0 && j + 1 < n) {
      out.x = m[j * n + row];
      out.y = m[(j + 1) * n + row];
    } else if (im < 0 && j > 0) {
      out.x = m[(j - 1) * n + row];
      out.y = -m[j * n + row];
    } else {
      out.x = m[j * n + row];
      out.y = 0;
    }
    v[i] = out;
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

void lower_triangle_copy(const void* src, void* dst, DType dtype, std::int64_t batch, std::int64_t n, bool transpose,
                         bool conjugate, int* info, int code, cudaStream_t stream) {
  if (batch == 0 || n == 0) return;
  FERRITE_CHECK(!(transpose && conjugate), Unsupported, "linalg kernels: a conjugating transpose copy is not needed");
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (transpose) {
      const auto tiles = static_cast<unsigned>((n + 31) / 32);
      FERRITE_CHECK(tiles <= 65535, Unsupported, "linalg: n = ", n, " is too large for the transpose kernel");
      const dim3 grid(tiles, tiles, static_cast<unsigned>(std::min<std::int64_t>(batch, 65535)));
      lower_transpose_kernel<T><<<grid, dim3(32, 8), 0, stream>>>(static_cast<const T*>(src), static_cast<T*>(dst), batch,
                                                                 n, info, code);
    } else {
      const std::int64_t columns = batch * n;
      lower_copy_kernel<T><<<column_blocks(columns), kThreads, 0, stream>>>(
          static_cast<const T*>(src), static_cast<T*>(dst), columns, n, conjugate, info, code);
    }
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void zero_flagged(void* a, DType dtype, std::int64_t batch, std::int64_t rows, std::int64_t cols, const int* info,
                  cudaStream_t stream) {
  const std::int64_t columns = batch * cols;
  if (columns == 0 || rows == 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    zero_flagged_kernel<T><<<column_blocks(columns), kThreads, 0, stream>>>(static_cast<T*>(a), columns, rows, cols, info);
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

void nonfinite_info(void* a, DType dtype, std::int64_t batch, std::int64_t rows, std::int64_t cols, int* info, int code,
                    cudaStream_t stream) {
  if (batch == 0) return;
  FERRITE_CUDA_CHECK(cudaMemsetAsync(info, 0, static_cast<std::size_t>(batch) * sizeof(int), stream));
  const std::int64_t columns = batch * cols;
  if (columns == 0 || rows == 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    nonfinite_kernel<T><<<column_blocks(columns), kThreads, 0, stream>>>(static_cast<const T*>(a), columns, rows, info,
                                                                         code, cols);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
  zero_flagged(a, dtype, batch, rows, cols, info, stream);
}

void merge_info(int* info, const int* solver, std::int64_t batch, cudaStream_t stream) {
  if (batch == 0) return;
  merge_kernel<<<blocks_for(batch), kThreads, 0, stream>>>(info, solver, batch);
  FERRITE_CUDA_CHECK_LAUNCH();
}

void unpack_eigenvectors(const void* vr, const void* w, void* v, DType real, std::int64_t batch, std::int64_t n,
                         cudaStream_t stream) {
  const std::int64_t count = batch * n * n;
  if (count == 0) return;
  if (real == DType::F32)
    unpack_eigenvectors_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const float*>(vr), static_cast<const float2*>(w), static_cast<float2*>(v), batch, n);
  else
    unpack_eigenvectors_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const double*>(vr), static_cast<const double2*>(w), static_cast<double2*>(v), batch, n);
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
