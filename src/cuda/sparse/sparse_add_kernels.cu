// C = A + alpha B of two CSR matrices (sparse_kernels.cuh): a count pass and a fill pass, each
// thread merging one row's two sorted column lists, so every output element is written once
// from a fixed formula (deterministic, no atomics). The front end scans the counts into C's
// pointers between the passes.
#include "cuda/sparse/sparse_dispatch.cuh"
#include "cuda/sparse/sparse_kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/numeric.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda::sparse {
namespace {

using dispatch::blocks_for;
using dispatch::kThreads;

// a + s b, s b and a in the arithmetic of a stored value (float for F16/BF16; complex values
// scaled part by part by the real s, as the CPU backend does).
template <class T>
struct Axpy {
  using Acc = detail::wide_t<T>;
  using Real = Acc;
  __device__ static Acc load(T v) { return detail::widen(v); }
  __device__ static T store(Acc v) { return detail::narrow<T>(v); }
  __device__ static Acc scaled(Real s, Acc b) { return s * b; }
  __device__ static Acc sum(Acc a, Real s, Acc b) { return a + s * b; }
};
template <class R>
struct Axpy<detail::Complex<R>> {
  using Acc = detail::Complex<R>;
  using Real = R;
  __device__ static Acc load(Acc v) { return v; }
  __device__ static Acc store(Acc v) { return v; }
  __device__ static Acc scaled(Real s, Acc b) { return {s * b.re, s * b.im}; }
  __device__ static Acc sum(Acc a, Real s, Acc b) { return {a.re + s * b.re, a.im + s * b.im}; }
};

template <class I>
__global__ void add_count_kernel(const I* a_ptr, const I* a_idx, const I* b_ptr, const I* b_idx, std::int64_t rows,
                                 std::int64_t* counts) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < rows;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t p = a_ptr[i], q = b_ptr[i], count = 0;
    const std::int64_t pe = a_ptr[i + 1], qe = b_ptr[i + 1];
    while (p < pe && q < qe) {
      const I ja = a_idx[p], jb = b_idx[q];
      p += ja <= jb;
      q += jb <= ja;
      ++count;
    }
    counts[i] = count + (pe - p) + (qe - q);
  }
}

template <class T, class I>
__global__ void add_fill_kernel(const I* a_ptr, const I* a_idx, const T* a_values, const I* b_ptr, const I* b_idx,
                                const T* b_values, const I* c_ptr, std::int64_t rows,
                                typename Axpy<T>::Real alpha, I* c_idx, T* c_values) {
  using Op = Axpy<T>;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < rows;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t p = a_ptr[i], q = b_ptr[i], at = c_ptr[i];
    const std::int64_t pe = a_ptr[i + 1], qe = b_ptr[i + 1];
    while (p < pe || q < qe) {
      if (q == qe || (p < pe && a_idx[p] < b_idx[q])) {
        c_idx[at] = a_idx[p];
        c_values[at++] = Op::store(Op::load(a_values[p]));
        ++p;
      } else if (p == pe || b_idx[q] < a_idx[p]) {
        c_idx[at] = b_idx[q];
        c_values[at++] = Op::store(Op::scaled(alpha, Op::load(b_values[q])));
        ++q;
      } else {
        c_idx[at] = a_idx[p];
        c_values[at++] = Op::store(Op::sum(Op::load(a_values[p]), alpha, Op::load(b_values[q])));
        ++p;
        ++q;
      }
    }
  }
}

}  // namespace

void add_count(DType index, const void* a_ptr, const void* a_idx, const void* b_ptr, const void* b_idx,
               std::int64_t rows, std::int64_t* counts, cudaStream_t stream) {
  if (rows == 0) return;
  dispatch::with_index(index, [&](auto i) {
    using I = decltype(i);
    add_count_kernel<I><<<blocks_for(rows), kThreads, 0, stream>>>(
        static_cast<const I*>(a_ptr), static_cast<const I*>(a_idx), static_cast<const I*>(b_ptr),
        static_cast<const I*>(b_idx), rows, counts);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void add_fill(DType values_dtype, DType index, const void* a_ptr, const void* a_idx, const void* a_values,
              const void* b_ptr, const void* b_idx, const void* b_values, const void* c_ptr, std::int64_t rows,
              double alpha, void* c_idx, void* c_values, cudaStream_t stream) {
  if (rows == 0) return;
  dispatch::with_index(index, [&](auto i) {
    using I = decltype(i);
    dispatch::with_values(values_dtype, [&](auto v) {
      using T = decltype(v);
      add_fill_kernel<T, I><<<blocks_for(rows), kThreads, 0, stream>>>(
          static_cast<const I*>(a_ptr), static_cast<const I*>(a_idx), static_cast<const T*>(a_values),
          static_cast<const I*>(b_ptr), static_cast<const I*>(b_idx), static_cast<const T*>(b_values),
          static_cast<const I*>(c_ptr), rows, static_cast<typename Axpy<T>::Real>(alpha), static_cast<I*>(c_idx),
          static_cast<T*>(c_values));
    });
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::sparse
