// Helpers of the row-wise kernels (softmax and the norms). Include only from .cu files.
//
// Rows up to 8192 elements live in registers: a group of G threads (a warp, several warps or
// the whole 256-thread block) owns a row and each thread holds N of its elements, so the row is read
// from memory once and written once. Aligned rows (cols a multiple of the 16-byte vector and
// 16-byte aligned buffers) move as 16-byte vectors: thread t holds vectors t, t + G, ...;
// other rows use coalesced scalar accesses: thread t holds elements t, t + G, ...
// Longer rows take a looping path (one block per row, several passes over memory).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "cuda/reduction/reduce_common.cuh"

namespace ferrite::cuda::reduction {

inline constexpr int kRowThreads = 256;
/// Rows longer than the register paths take: one block of 1024 threads per row, so that the
/// few such rows a tensor has ([256, 262144]) still fill the GPU.
inline constexpr int kLongRowThreads = 1024;

template <int G, int N>
struct RowShape {
  static constexpr int kGroup = G;
  static constexpr int kItems = N;
};

/// Calls f(RowShape<G, N>{}) with the smallest register shape that holds `cols` elements
/// among those up to `max_cols`, or returns false when the row is longer.
template <class F>
bool with_row_shape(std::int64_t cols, std::int64_t max_cols, F&& f) {
  if (cols > max_cols) return false;
  if (cols <= 128) f(RowShape<32, 4>{});
  else if (cols <= 512) f(RowShape<32, 16>{});
  else if (cols <= 1024) f(RowShape<256, 4>{});
  else if (cols <= 4096) f(RowShape<256, 16>{});
  else f(RowShape<256, 32>{});
  return true;
}

/// with_row_shape for rows of T. Two-byte elements (F16, BF16) get shapes of 32 items per
/// thread (four 16-byte vectors in flight) and smaller groups: the shapes above, sized for
/// four-byte elements, gave them two vectors per thread or none (N = 4 is less than one
/// vector of eight), and the row-wise BF16 kernels ran at 2.8-3.0 TB/s against 4.1 for F32.
/// The norms' backward keeps the shapes above: it also holds per-column partial sums.
template <class T, class F>
bool with_row_shape_for(std::int64_t cols, std::int64_t max_cols, F&& f) {
  if constexpr (sizeof(T) != 2) {
    return with_row_shape(cols, max_cols, f);
  } else {
    if (cols > max_cols) return false;
    if (cols <= 256) f(RowShape<32, 8>{});
    else if (cols <= 1024) f(RowShape<32, 32>{});
    else if (cols <= 2048) f(RowShape<64, 32>{});
    else if (cols <= 4096) f(RowShape<128, 32>{});
    else f(RowShape<256, 32>{});
    return true;
  }
}

/// Whether every row of `cols` elements of T starts 16-byte aligned in every buffer given.
template <class T>
bool rows_vectorisable(std::int64_t cols, std::initializer_list<const void*> buffers) {
  if ((cols * static_cast<std::int64_t>(sizeof(T))) % 16 != 0) return false;
  for (const void* p : buffers)
    if (p && reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  return true;
}

/// Column of item n of thread t (see the file comment).
template <class T, int G, int N>
__device__ __forceinline__ std::int64_t item_column(int n, int t, bool vec) {
  constexpr int kV = Vec16<T>::kSize;
  if (N % kV == 0 && vec) return (static_cast<std::int64_t>(n / kV) * G + t) * kV + n % kV;
  return static_cast<std::int64_t>(n) * G + t;
}

/// Items of a row of S in the layout of T's items (item_column<T, G, N>), widened to A (exactly);
/// items past the row's end are `fill`. S is T, or an element narrower than T (the norms'
/// F16/BF16 gradient of F32 rows): a vector of T's kV items is then one load of kV elements
/// of S (8 bytes for F32's four), so S need not be copied to T first.
template <class T, int G, int N, class A, class S>
__device__ __forceinline__ void load_items(const S* row, std::int64_t cols, int t, bool vec, A (&v)[N], A fill) {
  constexpr int kV = Vec16<T>::kSize;
  static_assert(std::is_same_v<S, T> || sizeof(S) < sizeof(T), "S is T or narrower");
  // The layout of Vec16<T> when S is T (the same code: the cubins are byte-identical).
  struct alignas(kV * sizeof(S)) Pack {
    S v[kV];
  };
  if (N % kV == 0 && vec) {
#pragma unroll
    for (int q = 0; q < N / kV; ++q) {
      const std::int64_t first = (static_cast<std::int64_t>(q) * G + t) * kV;
      if (first < cols) {
        const Pack pack = *reinterpret_cast<const Pack*>(row + first);
#pragma unroll
        for (int k = 0; k < kV; ++k) v[q * kV + k] = static_cast<A>(detail::widen(pack.v[k]));
      } else {
#pragma unroll
        for (int k = 0; k < kV; ++k) v[q * kV + k] = fill;
      }
    }
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const std::int64_t c = static_cast<std::int64_t>(n) * G + t;
      v[n] = c < cols ? static_cast<A>(detail::widen(row[c])) : fill;
    }
  }
}

/// One 16-byte vector of T from v[0 .. kSize): detail::narrow's rounding (nearest even).
/// F16 and BF16 take the paired conversion (cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32: one
/// instruction for two elements) and keep the hardware's NaN, where detail::narrow spends a
/// compare and a select per element on giving the CPU's signed quiet NaN: the row-wise ops'
/// NaNs come from arithmetic (Inf - Inf, 0 * Inf), whose sign bit already differs between
/// the CPU and the GPU, and the BF16 row-wise kernels are bound by instruction issue.
template <class T, class A>
__device__ __forceinline__ Vec16<T> narrow_vector(const A* v) {
  constexpr int kV = Vec16<T>::kSize;
  Vec16<T> pack;
  if constexpr (std::is_same_v<T, BFloat16> && std::is_same_v<A, float>) {
#pragma unroll
    for (int k = 0; k < kV; k += 2) {
      const __nv_bfloat162 pair = __floats2bfloat162_rn(v[k], v[k + 1]);
      memcpy(&pack.v[k], &pair, sizeof(pair));
    }
  } else if constexpr (std::is_same_v<T, Half> && std::is_same_v<A, float>) {
#pragma unroll
    for (int k = 0; k < kV; k += 2) {
      const __half2 pair = __floats2half2_rn(v[k], v[k + 1]);
      memcpy(&pack.v[k], &pair, sizeof(pair));
    }
  } else {
#pragma unroll
    for (int k = 0; k < kV; ++k) pack.v[k] = detail::narrow<T>(v[k]);
  }
  return pack;
}

template <class T, int G, int N, class A>
__device__ __forceinline__ void store_items(T* row, std::int64_t cols, int t, bool vec, const A (&v)[N]) {
  constexpr int kV = Vec16<T>::kSize;
  if (N % kV == 0 && vec) {
#pragma unroll
    for (int q = 0; q < N / kV; ++q) {
      const std::int64_t first = (static_cast<std::int64_t>(q) * G + t) * kV;
      if (first < cols) *reinterpret_cast<Vec16<T>*>(row + first) = narrow_vector<T>(&v[q * kV]);
    }
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const std::int64_t c = static_cast<std::int64_t>(n) * G + t;
      if (c < cols) row[c] = detail::narrow<T>(v[n]);
    }
  }
}

/// store_items for an output type O wider than T (an F32 result of F16/BF16 input): item n
/// goes to the column it was loaded from (T's layout), a vector of T's items becoming
/// sizeof(O) / sizeof(T) vectors of O.
template <class T, class O, int G, int N, class A>
__device__ __forceinline__ void store_items_widened(O* row, std::int64_t cols, int t, bool vec, const A (&v)[N]) {
  constexpr int kV = Vec16<T>::kSize, kOV = Vec16<O>::kSize;
  static_assert(kV % kOV == 0, "O is at least as wide as T");
  if (N % kV == 0 && vec) {
#pragma unroll
    for (int q = 0; q < N / kV; ++q) {
      const std::int64_t first = (static_cast<std::int64_t>(q) * G + t) * kV;
      if (first >= cols) continue;
#pragma unroll
      for (int h = 0; h < kV / kOV; ++h) {
        Vec16<O> pack;
#pragma unroll
        for (int k = 0; k < kOV; ++k) pack.v[k] = detail::narrow<O>(v[q * kV + h * kOV + k]);
        *reinterpret_cast<Vec16<O>*>(row + first + h * kOV) = pack;
      }
    }
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const std::int64_t c = static_cast<std::int64_t>(n) * G + t;
      if (c < cols) row[c] = detail::narrow<O>(v[n]);
    }
  }
}

/// The two elements of one 32-bit word of a two-byte vector (F16, BF16), widened: .x from the
/// low half (the element at the lower address), .y from the high half. The same values as
/// detail::widen of each element. BF16 is the upper half of an F32, so a shift (low) or a
/// mask (high) widens it in one instruction each; going through 16-bit elements, the
/// compiler spent two or three (byte permutes to extract and zero-extend, then the shift).
template <class T>
__device__ __forceinline__ float2 widen_word(unsigned word) {
  static_assert(sizeof(T) == 2, "two-byte elements");
  if constexpr (std::is_same_v<T, BFloat16>) {
    return make_float2(__uint_as_float(word << 16), __uint_as_float(word & 0xffff0000u));
  } else {
    __half2 pair;
    memcpy(&pair, &word, sizeof(pair));
    return __half22float2(pair);
  }
}

/// A word of two-byte elements whose both halves are 1 (F16 0x3C00, BF16 0x3F80).
template <class T>
inline constexpr unsigned kOnesWord = std::is_same_v<T, BFloat16> ? 0x3F803F80u : 0x3C003C00u;

/// Two sums reduced together (one pass through shared memory instead of two).
template <class A>
struct SumPair {
  A a, b;
};
struct AddPair {
  template <class A>
  __device__ __forceinline__ SumPair<A> operator()(SumPair<A> x, SumPair<A> y) const {
    return {x.a + y.a, x.b + y.b};
  }
};

}  // namespace ferrite::cuda::reduction
