// Kernels of linalg_kernels.hpp. Elementwise ones use a grid-stride loop over all elements of
// the batch; the per-matrix ones (pivots to a permutation, non-finite flags) one block or one
// thread per matrix.
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

template <class T>
__global__ void zero_triangle_kernel(T* a, std::int64_t count, std::int64_t n, bool zero_upper) {
  FERRITE_GRID_LOOP(e, count) {
    const std::int64_t i = e % n, j = e / n % n;
    if (zero_upper ? i < j : i > j) a[e] = zero_of<T>();
  }
}

// One thread per diagonal element (a loop per matrix would walk 4096 strided loads in one
// thread): the first NaN's order is an atomicMin into `first` (order-independent, so
// deterministic), then merged into info where the factorisation itself succeeded.
template <class T>
__global__ void nan_diagonal_kernel(const T* a, std::int64_t batch, std::int64_t n, int* first) {
  FERRITE_GRID_LOOP(e, batch * n) {
    const std::int64_t b = e / n, k = e % n;
    if (is_nan(a[b * n * n + k * n + k])) atomicMin(first + b, static_cast<int>(k + 1));
  }
}

__global__ void fill_int_kernel(int* p, std::int64_t count, int value) {
  FERRITE_GRID_LOOP(i, count) p[i] = value;
}

__global__ void merge_nan_kernel(int* info, const int* first, std::int64_t batch) {
  FERRITE_GRID_LOOP(b, batch) if (info[b] == 0 && first[b] != 0x7fffffff) info[b] = first[b];
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

template <class T>
__global__ void nonfinite_kernel(T* a, std::int64_t rows, std::int64_t cols, int triangle, int* info, int code) {
  const std::int64_t b = blockIdx.x;
  T* mat = a + b * rows * cols;
  bool bad = false;
  for (std::int64_t e = threadIdx.x; e < rows * cols; e += blockDim.x) {
    const std::int64_t i = e % rows, j = e / rows;
    if ((triangle == 1 && i < j) || (triangle == 2 && i > j)) continue;
    bad = bad || !finite(mat[e]);
  }
  bad = __syncthreads_or(bad);
  if (threadIdx.x == 0) info[b] = bad ? code : 0;
  // The solver then sees zeros: no iteration ever runs on Inf/NaN (no hang, no garbage).
  if (bad)
    for (std::int64_t e = threadIdx.x; e < rows * cols; e += blockDim.x) mat[e] = zero_of<T>();
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

void zero_triangle(void* a, DType dtype, std::int64_t batch, std::int64_t n, bool zero_upper, cudaStream_t stream) {
  const std::int64_t count = batch * n * n;
  if (count == 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    zero_triangle_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<T*>(a), count, n, zero_upper);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void nan_diagonal_info(const void* a, DType dtype, std::int64_t batch, std::int64_t n, int* info, int* scratch,
                       cudaStream_t stream) {
  if (batch == 0 || n == 0) return;
  fill_int_kernel<<<blocks_for(batch), kThreads, 0, stream>>>(scratch, batch, 0x7fffffff);
  FERRITE_CUDA_CHECK_LAUNCH();
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    nan_diagonal_kernel<T><<<blocks_for(batch * n), kThreads, 0, stream>>>(static_cast<const T*>(a), batch, n, scratch);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
  merge_nan_kernel<<<blocks_for(batch), kThreads, 0, stream>>>(info, scratch, batch);
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

void nonfinite_info(void* a, DType dtype, std::int64_t batch, std::int64_t rows, std::int64_t cols, int triangle,
                    int* info, int code, cudaStream_t stream) {
  if (batch == 0) return;
  FERRITE_CHECK(batch <= 2147483647, Unsupported, "linalg: a batch of ", batch, " matrices is too large");
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    nonfinite_kernel<T><<<static_cast<unsigned>(batch), kThreads, 0, stream>>>(static_cast<T*>(a), rows, cols,
                                                                                triangle, info, code);
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
