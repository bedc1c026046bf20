// C = A + alpha B of two CSR matrices (sparse_kernels.cuh): a count pass and a fill pass, each
// warp placing one row's elements of the two sorted column lists, so every output element is written once
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

// One warp per row. Union positions by ranks instead of a sequential merge (a thread per row
// left 8192 threads for issue 15's [8192, 8192] case, latency-bound): with A's row a[0..na),
// B's row b[0..nb) (sorted, distinct), an element's place in C's row is
//   (A's elements below it) + (B's elements below it) - (columns common to both below it),
// A's and B's ranks by binary search in the other list, the common count by a warp ballot
// prefix in list order. An A element carries the common B value; a B element in A is written
// by A's pass only. Each output element is still written once from the same formulas.
constexpr int kWarp = 32;
constexpr unsigned kFull = 0xffffffffu;

template <class I>
__device__ std::int64_t lower_bound(const I* list, std::int64_t lo, std::int64_t hi, I key) {
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (list[mid] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

__device__ inline std::int64_t warp_id() {
  return blockIdx.x * std::int64_t(blockDim.x / kWarp) + threadIdx.x / kWarp;
}
__device__ inline std::int64_t warp_count() { return std::int64_t(gridDim.x) * (blockDim.x / kWarp); }

template <class I>
__global__ void add_count_kernel(const I* a_ptr, const I* a_idx, const I* b_ptr, const I* b_idx, std::int64_t rows,
                                 std::int64_t* counts) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  for (std::int64_t i = warp_id(); i < rows; i += warp_count()) {  // warp-uniform
    const std::int64_t pa = a_ptr[i], pe = a_ptr[i + 1], qb = b_ptr[i], qe = b_ptr[i + 1];
    std::int64_t common = 0;
    for (std::int64_t p = pa + lane; p < pe; p += kWarp) {
      const I col = a_idx[p];
      const std::int64_t r = lower_bound(b_idx, qb, qe, col);
      common += r < qe && b_idx[r] == col;
    }
    for (int off = kWarp / 2; off > 0; off /= 2) common += __shfl_xor_sync(kFull, common, off);
    if (lane == 0) counts[i] = (pe - pa) + (qe - qb) - common;
  }
}

template <class T, class I>
__global__ void add_fill_kernel(const I* a_ptr, const I* a_idx, const T* a_values, const I* b_ptr, const I* b_idx,
                                const T* b_values, const I* c_ptr, std::int64_t rows,
                                typename Axpy<T>::Real alpha, I* c_idx, T* c_values) {
  using Op = Axpy<T>;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const unsigned below = (1u << lane) - 1u;  // the lanes before this one
  for (std::int64_t i = warp_id(); i < rows; i += warp_count()) {  // warp-uniform
    const std::int64_t pa = a_ptr[i], pe = a_ptr[i + 1], qb = b_ptr[i], qe = b_ptr[i + 1], at = c_ptr[i];
    // A's elements, alone or with B's equal column.
    std::int64_t carry = 0;  // common columns in earlier chunks (warp-uniform)
    for (std::int64_t base = pa; base < pe; base += kWarp) {
      const std::int64_t p = base + lane;
      const bool valid = p < pe;
      I col = I(0);
      std::int64_t r = qb;
      bool in_b = false;
      if (valid) {
        col = a_idx[p];
        r = lower_bound(b_idx, qb, qe, col);
        in_b = r < qe && b_idx[r] == col;
      }
      const unsigned ballot = __ballot_sync(kFull, in_b);
      if (valid) {
        const std::int64_t at_c = at + (p - pa) + (r - qb) - (carry + __popc(ballot & below));
        c_idx[at_c] = col;
        c_values[at_c] = in_b ? Op::store(Op::sum(Op::load(a_values[p]), alpha, Op::load(b_values[r])))
                              : Op::store(Op::load(a_values[p]));
      }
      carry += __popc(ballot);
    }
    // B's elements whose column A lacks.
    carry = 0;
    for (std::int64_t base = qb; base < qe; base += kWarp) {
      const std::int64_t q = base + lane;
      const bool valid = q < qe;
      I col = I(0);
      std::int64_t r = pa;
      bool in_a = false;
      if (valid) {
        col = b_idx[q];
        r = lower_bound(a_idx, pa, pe, col);
        in_a = r < pe && a_idx[r] == col;
      }
      const unsigned ballot = __ballot_sync(kFull, in_a);
      if (valid && !in_a) {
        const std::int64_t at_c = at + (q - qb) + (r - pa) - (carry + __popc(ballot & below));
        c_idx[at_c] = col;
        c_values[at_c] = Op::store(Op::scaled(alpha, Op::load(b_values[q])));
      }
      carry += __popc(ballot);
    }
  }
}

/// Blocks of kThreads for one warp per row (grid-stride beyond the cap).
unsigned warp_blocks(std::int64_t rows) {
  const std::int64_t per_block = kThreads / kWarp;
  const std::int64_t b = (rows + per_block - 1) / per_block;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 16 ? 65535 * 16 : b));
}

}  // namespace

void add_count(DType index, const void* a_ptr, const void* a_idx, const void* b_ptr, const void* b_idx,
               std::int64_t rows, std::int64_t* counts, cudaStream_t stream) {
  if (rows == 0) return;
  dispatch::with_index(index, [&](auto i) {
    using I = decltype(i);
    add_count_kernel<I><<<warp_blocks(rows), kThreads, 0, stream>>>(
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
      add_fill_kernel<T, I><<<warp_blocks(rows), kThreads, 0, stream>>>(
          static_cast<const I*>(a_ptr), static_cast<const I*>(a_idx), static_cast<const T*>(a_values),
          static_cast<const I*>(b_ptr), static_cast<const I*>(b_idx), static_cast<const T*>(b_values),
          static_cast<const I*>(c_ptr), rows, static_cast<typename Axpy<T>::Real>(alpha), static_cast<I*>(c_idx),
          static_cast<T*>(c_values));
    });
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::sparse
