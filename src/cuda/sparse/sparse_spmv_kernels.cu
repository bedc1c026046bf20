// Deterministic CSR SpMV, y = A x, for real values (F32, F64; F16/BF16 accumulated in F32) and
// I32/I64 indices (sparse_kernels.cuh). Replaces cuSPARSE's CSR_ALG2 for these dtypes, which
// ran at 0.78x PyTorch's (non-deterministic) default algorithm on the H200.
//
// Summation order, a function of the matrix alone (never of timing or of the launch):
// - G, the lanes per row, comes from the average row length nnz / rows (4, 8, 16 or 32).
// - A row of at most 64 G entries belongs to one group of G lanes: lane l sums the entries
//   lo + l, lo + l + G, lo + l + 2G, ... in that order, then the G partial sums combine in a
//   butterfly (xor offsets G/2, ..., 2, 1).
// - A longer row belongs to a whole block of 256 threads: thread t sums lo + t, lo + t + 256,
//   ..., each warp combines its 32 sums in the same butterfly, and thread 0 adds the 8 warp
//   sums in warp order.
// Products and sums run in the accumulator type (F32 for F16/BF16, else the values' type);
// y is rounded once. Only stored entries are multiplied (a structural zero never meets an Inf
// of x), as the CPU backend and PyTorch do. No atomics: each y[i] is written once.
#include "cuda/sparse/sparse_kernels.cuh"
#include "cuda/sparse/sparse_dispatch.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>

#include "core/numeric.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda::sparse {
namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;
constexpr int kLongFactor = 64;        // rows longer than kLongFactor * G take the block path
constexpr std::int64_t kMaxRowBlocks = std::int64_t(1) << 20;  // each path grid-strides past this many blocks

// A read through the read-only (non-coherent) cache, for any 2-, 4- or 8-byte type: every
// array here is read-only for the kernel's lifetime.
template <class T>
__device__ __forceinline__ T ldg(const T* p) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "ldg: unsupported size");
  T v;
  if constexpr (sizeof(T) == 2) {
    const unsigned short b = __ldg(reinterpret_cast<const unsigned short*>(p));
    memcpy(&v, &b, sizeof(T));
  } else if constexpr (sizeof(T) == 4) {
    const unsigned int b = __ldg(reinterpret_cast<const unsigned int*>(p));
    memcpy(&v, &b, sizeof(T));
  } else {
    const unsigned long long b = __ldg(reinterpret_cast<const unsigned long long*>(p));
    memcpy(&v, &b, sizeof(T));
  }
  return v;
}

// The fixed butterfly over `width` lanes (a power of two up to 32) of the lanes in `mask`.
template <class Acc>
__device__ __forceinline__ Acc butterfly(Acc v, unsigned mask, int width) {
  for (int off = width / 2; off > 0; off /= 2) v += __shfl_xor_sync(mask, v, off, width);
  return v;
}

// Grid: row_blocks blocks of groups (G lanes per row), then the long-row blocks.
template <class T, class I, int G>
__global__ __launch_bounds__(kBlock) void spmv_kernel(const I* __restrict__ ptr, const I* __restrict__ idx,
                                                      const T* __restrict__ values, const T* __restrict__ x,
                                                      T* __restrict__ y, std::int64_t m, std::int64_t row_blocks) {
  using Acc = detail::wide_t<T>;
  constexpr std::int64_t kLongRow = std::int64_t(kLongFactor) * G;
  if (static_cast<std::int64_t>(blockIdx.x) < row_blocks) {
    constexpr int kGroups = kBlock / G;
    const int lane = static_cast<int>(threadIdx.x) % G;
    const int group_in_warp = (static_cast<int>(threadIdx.x) % 32) / G;
    const unsigned mask = G == 32 ? 0xffffffffu : (((1u << G) - 1u) << (group_in_warp * G));
    for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kGroups + threadIdx.x / G; row < m;
         row += row_blocks * kGroups) {
      const std::int64_t lo = ldg(ptr + row), hi = ldg(ptr + row + 1);
      if (hi - lo > kLongRow) continue;  // the whole group skips: a long-row block owns it
      Acc acc = Acc(0);
      // Unrolled so that several loads are in flight per lane; one accumulator keeps the order.
#pragma unroll 4
      for (std::int64_t p = lo + lane; p < hi; p += G)
        acc += detail::widen(ldg(values + p)) * detail::widen(ldg(x + static_cast<std::int64_t>(ldg(idx + p))));
      acc = butterfly(acc, mask, G);
      if (lane == 0) y[row] = detail::narrow<T>(acc);
    }
    return;
  }
  // Long rows: this block inspects 256 rows at a time (one per thread, block-uniform loop) and
  // sums every one of them longer than kLongRow with all its threads, in row order.
  __shared__ unsigned long_rows[kWarps];
  __shared__ Acc partial[kWarps];
  const std::int64_t long_block = static_cast<std::int64_t>(blockIdx.x) - row_blocks;
  const std::int64_t long_blocks = static_cast<std::int64_t>(gridDim.x) - row_blocks;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  for (std::int64_t first = long_block * kBlock; first < m; first += long_blocks * kBlock) {
    const std::int64_t r = first + threadIdx.x;
    const bool is_long = r < m && static_cast<std::int64_t>(ldg(ptr + r + 1)) - ldg(ptr + r) > kLongRow;
    const unsigned ballot = __ballot_sync(0xffffffffu, is_long);
    if (lane == 0) long_rows[warp] = ballot;
    __syncthreads();
    for (int w = 0; w < kWarps; ++w) {
      unsigned pending = long_rows[w];  // the same in every thread: the loops below are block-uniform
      while (pending != 0u) {
        const std::int64_t row = first + w * 32 + (__ffs(static_cast<int>(pending)) - 1);
        pending &= pending - 1u;
        const std::int64_t lo = ldg(ptr + row), hi = ldg(ptr + row + 1);
        Acc acc = Acc(0);
#pragma unroll 4
        for (std::int64_t p = lo + threadIdx.x; p < hi; p += kBlock)
          acc += detail::widen(ldg(values + p)) * detail::widen(ldg(x + static_cast<std::int64_t>(ldg(idx + p))));
        acc = butterfly(acc, 0xffffffffu, 32);
        if (lane == 0) partial[warp] = acc;
        __syncthreads();
        if (threadIdx.x == 0) {
          Acc sum = partial[0];
          for (int v = 1; v < kWarps; ++v) sum += partial[v];
          y[row] = detail::narrow<T>(sum);
        }
        __syncthreads();  // partial is reused by the next long row
      }
    }
    __syncthreads();  // every thread has read long_rows before the next step rewrites it
  }
}

template <class T, class I, int G>
void launch(const void* ptr, const void* idx, const void* values, const void* x, void* y, std::int64_t m,
            cudaStream_t stream) {
  constexpr std::int64_t kGroups = kBlock / G;
  const std::int64_t row_blocks = std::min((m + kGroups - 1) / kGroups, kMaxRowBlocks);
  // One long-row block per 256 rows (each inspects its rows' lengths once; most find none).
  const std::int64_t long_blocks = std::min((m + kBlock - 1) / kBlock, kMaxRowBlocks);
  spmv_kernel<T, I, G><<<static_cast<unsigned>(row_blocks + long_blocks), kBlock, 0, stream>>>(
      static_cast<const I*>(ptr), static_cast<const I*>(idx), static_cast<const T*>(values),
      static_cast<const T*>(x), static_cast<T*>(y), m, row_blocks);
}

}  // namespace

bool spmv_supported(DType values) {
  return values == DType::F32 || values == DType::F64 || values == DType::F16 || values == DType::BF16;
}

int spmv_lanes(std::int64_t rows, std::int64_t nnz) {
  // Integer thresholds on the average row length (no rounding questions): <= 8 -> 4 lanes,
  // <= 24 -> 8, <= 64 -> 16, else a warp; about 2 to 4 entries per lane for typical rows.
  if (rows <= 0 || nnz <= 8 * rows) return 4;
  if (nnz <= 24 * rows) return 8;
  if (nnz <= 64 * rows) return 16;
  return 32;
}

void spmv_csr(DType values_dtype, DType index, const void* ptr, const void* idx, const void* values, const void* x,
              void* y, std::int64_t m, std::int64_t nnz, cudaStream_t stream) {
  if (m == 0) return;
  FERRITE_CHECK(spmv_supported(values_dtype), Unsupported, "sparse::spmv: own kernel has no dtype ",
                dtype_name(values_dtype));
  const int lanes = spmv_lanes(m, nnz);
  dispatch::with_index(index, [&](auto i) {
    using I = decltype(i);
    auto run = [&](auto t) {
      using T = decltype(t);
      switch (lanes) {
        case 4: return launch<T, I, 4>(ptr, idx, values, x, y, m, stream);
        case 8: return launch<T, I, 8>(ptr, idx, values, x, y, m, stream);
        case 16: return launch<T, I, 16>(ptr, idx, values, x, y, m, stream);
        default: return launch<T, I, 32>(ptr, idx, values, x, y, m, stream);
      }
    };
    switch (values_dtype) {
      case DType::F32: return run(float{});
      case DType::F64: return run(double{});
      case DType::F16: return run(Half{});
      default: return run(BFloat16{});
    }
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::sparse
