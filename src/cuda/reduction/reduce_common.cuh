// Device helpers shared by the reduction group's kernels. Include only from .cu files.
//
// Determinism: every combination below happens in an order fixed by the launch shape and
// the extents (shuffle trees, then warps in index order), never by timing, and the launch
// shape depends only on the extents. So the same inputs give the same bits on every run.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/numeric.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/launch_grid.hpp"

namespace ferrite::cuda::reduction {

/// Accumulator of each storage type: float for F32/F16/BF16 (as PyTorch), double for F64,
/// int64 for integers and Bool.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                 std::conditional_t<std::is_floating_point_v<detail::wide_t<T>>, float, std::int64_t>>;

template <class T>
__device__ __forceinline__ acc_t<T> load_acc(const T* p, std::int64_t i) {
  return static_cast<acc_t<T>>(detail::widen(p[i]));
}

/// 16 bytes of T: the widest load one instruction serves.
template <class T>
struct alignas(16) Vec16 {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

template <class T>
__host__ __device__ constexpr T lowest_value() {
  if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::lowest();
}
template <class T>
__host__ __device__ constexpr T highest_value() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::max();
}

/// Any trivially copyable value of a multiple of 4 bytes, moved between lanes word by word:
/// `shuffle` is one of the __shfl_*_sync intrinsics applied to each 32-bit word.
template <class A, class Shuffle>
__device__ __forceinline__ A shuffle_words(A v, Shuffle shuffle) {
  static_assert(sizeof(A) % 4 == 0, "shuffled values are whole words");
  constexpr int kWords = sizeof(A) / 4;
  int words[kWords];
  memcpy(words, &v, sizeof(A));
#pragma unroll
  for (int w = 0; w < kWords; ++w) words[w] = shuffle(words[w]);
  memcpy(&v, words, sizeof(A));
  return v;
}
template <class A>
__device__ __forceinline__ A shfl_down(A v, int offset) {
  return shuffle_words(v, [offset](int w) { return __shfl_down_sync(0xffffffffu, w, offset); });
}
template <class A>
__device__ __forceinline__ A shfl_from(A v, int lane) {
  return shuffle_words(v, [lane](int w) { return __shfl_sync(0xffffffffu, w, lane); });
}
template <class A>
__device__ __forceinline__ A shfl_xor(A v, int mask) {
  return shuffle_words(v, [mask](int w) { return __shfl_xor_sync(0xffffffffu, w, mask); });
}

/// Combines `a` over a group of `group` consecutive threads (a power of two dividing
/// blockDim.x) and returns the result to every thread of the group. `smem` holds one value per
/// warp of the block. Every thread of the block must call it (it synchronises the block when
/// group > 32). Groups smaller than a warp combine by a butterfly (each lane with the lane
/// `offset` away, offsets group/2 ... 1): every lane then holds the same bits provided
/// merge(x, y) and merge(y, x) are the same bits, as for addition and fmax.
template <class A, class Merge>
__device__ __forceinline__ A group_reduce(A a, int group, A* smem, Merge merge) {
  if (group < 32) {
    for (int offset = group / 2; offset > 0; offset >>= 1) a = merge(a, shfl_xor(a, offset));
    return a;
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) a = merge(a, shfl_down(a, offset));
  a = shfl_from(a, 0);
  if (group == 32) return a;
  const int warp = threadIdx.x / 32;
  __syncthreads();  // smem may still be read by a previous call
  if (threadIdx.x % 32 == 0) smem[warp] = a;
  __syncthreads();
  const int first = (threadIdx.x / group) * (group / 32);
  a = smem[first];
  for (int k = 1; k < group / 32; ++k) a = merge(a, smem[first + k]);
  return a;
}

struct AddOp {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a + b;
  }
};
struct MaxOp {  // NaN-propagating
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return (a != a || a > b) ? a : b;
  }
};


}  // namespace ferrite::cuda::reduction
