// The scan engine: inclusive scans along the middle extent of [outer, dim, inner]. Include
// only from the .cu files that instantiate it.
//
//  * inner == 1, rows up to 32 lanes x two vectors, or many rows: a warp per row (see the kernel).
//  * inner == 1, fewer longer rows: one block per row walks the row in tiles of 256 threads x two
//    16-byte vectors each; cub::BlockScan scans a tile and a running-prefix callback carries the
//    total of the earlier tiles into the next, so each element is read once and written
//    once (single pass).
//  * inner > 1: one thread per (outer, inner) column walks the dim; neighbouring threads
//    touch neighbouring addresses.
// The combination order depends only on the extents: results are bitwise reproducible.
//
// A scan S provides acc_t, out_t, identity(), make(value, index), operator()(a, b) (the
// associative combination, earlier operand first), value(acc) and store(out, indices, at, acc).
#pragma once

#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_scan.cuh>

#include "cuda/reduction/reduce_common.cuh"
#include "ferrite/backend_families/reduction_ops.hpp"

namespace ferrite::cuda::reduction {

inline constexpr int kScanThreads = 256;

template <class A, class S>
struct RunningPrefix {
  A running;
  S scan;
  __device__ A operator()(A tile_total) {
    const A before = running;
    running = scan(running, tile_total);
    return before;
  }
};

/// Items per thread: two 16-byte vectors, so each thread has 32 bytes in flight.
template <class T>
inline constexpr int kScanItems = 2 * Vec16<T>::kSize;

/// Loads items [first, first + kItems) of a row (identity past its end).
template <class T, class S, int kItems>
__device__ __forceinline__ void load_scan_items(const T* p, std::int64_t first, std::int64_t dim, bool vector, const S& s,
                                                typename S::acc_t (&items)[kItems]) {
  constexpr int kV = Vec16<T>::kSize;
  if (vector && first + kItems <= dim) {
#pragma unroll
    for (int q = 0; q < kItems / kV; ++q) {
      const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(p + first + q * kV);
#pragma unroll
      for (int k = 0; k < kV; ++k) items[q * kV + k] = s.make(v.v[k], first + q * kV + k);
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) items[k] = first + k < dim ? s.make(p[first + k], first + k) : s.identity();
  }
}

/// Stores the scanned items; whole vectors when the output has the input's element size.
template <class T, class S, int kItems>
__device__ __forceinline__ void store_scan_items(typename S::out_t* out, std::int64_t* indices, std::int64_t base,
                                                 std::int64_t first, std::int64_t dim, bool vector, const S& s,
                                                 const typename S::acc_t (&items)[kItems]) {
  using O = typename S::out_t;
  if constexpr (sizeof(O) == sizeof(T)) {
    constexpr int kV = Vec16<O>::kSize;
    if (vector && indices == nullptr && first + kItems <= dim) {
#pragma unroll
      for (int q = 0; q < kItems / kV; ++q) {
        Vec16<O> v;
#pragma unroll
        for (int k = 0; k < kV; ++k) v.v[k] = s.value(items[q * kV + k]);
        *reinterpret_cast<Vec16<O>*>(out + base + first + q * kV) = v;
      }
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    if (first + k < dim) s.store(out, indices, base + first + k, items[k]);
}

// Long rows: a block per row, tiles of 256 threads x kItems, a running prefix between tiles.
template <class T, class S>
__global__ void __launch_bounds__(kScanThreads)
    scan_rows_kernel(const T* x, typename S::out_t* out, std::int64_t* indices, S s, std::int64_t dim, bool vector) {
  using A = typename S::acc_t;
  constexpr int kItems = kScanItems<T>;
  using BlockScan = cub::BlockScan<A, kScanThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * dim;
  RunningPrefix<A, S> prefix{s.identity(), s};
  for (std::int64_t tile = 0; tile < dim; tile += static_cast<std::int64_t>(kScanThreads) * kItems) {
    const std::int64_t first = tile + static_cast<std::int64_t>(threadIdx.x) * kItems;
    A items[kItems];
    load_scan_items<T, S, kItems>(x + base, first, dim, vector, s, items);
    BlockScan(temp).InclusiveScan(items, items, s, prefix);
    __syncthreads();  // the next tile reuses temp
    store_scan_items<T, S, kItems>(out, indices, base, first, dim, vector, s, items);
  }
}

// Short rows: a warp per row (8 rows per block), so rows of 128 do not leave a block idle.
// Each lane scans its items, a warp scan gives each lane the total before it, and a carry
// takes the row's total from one 32-lane tile to the next.
template <class T, class S>
__global__ void __launch_bounds__(kScanThreads)
    scan_rows_warp_kernel(const T* x, typename S::out_t* out, std::int64_t* indices, S s, std::int64_t rows,
                          std::int64_t dim, bool vector) {
  using A = typename S::acc_t;
  constexpr int kItems = kScanItems<T>;
  using WarpScan = cub::WarpScan<A>;
  __shared__ typename WarpScan::TempStorage temp[kScanThreads / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kScanThreads / 32) + warp;
  if (row >= rows) return;  // a whole warp leaves together
  const std::int64_t base = row * dim;
  A carry = s.identity();
  for (std::int64_t tile = 0; tile < dim; tile += 32 * kItems) {
    const std::int64_t first = tile + static_cast<std::int64_t>(lane) * kItems;
    A items[kItems];
    load_scan_items<T, S, kItems>(x + base, first, dim, vector, s, items);
#pragma unroll
    for (int k = 1; k < kItems; ++k) items[k] = s(items[k - 1], items[k]);
    A before, total;
    WarpScan(temp[warp]).ExclusiveScan(items[kItems - 1], before, carry, s, total);
#pragma unroll
    for (int k = 0; k < kItems; ++k) items[k] = s(before, items[k]);
    carry = s(carry, total);
    store_scan_items<T, S, kItems>(out, indices, base, first, dim, vector, s, items);
    __syncwarp();
  }
}

template <class T, class S>
__global__ void __launch_bounds__(kScanThreads)
    scan_columns_kernel(const T* x, typename S::out_t* out, std::int64_t* indices, S s, std::int64_t outer,
                        std::int64_t dim, std::int64_t inner) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kScanThreads + threadIdx.x;
  if (k >= outer * inner) return;
  const std::int64_t base = (k / inner) * dim * inner + k % inner;
  typename S::acc_t acc = s.identity();
  for (std::int64_t j = 0; j < dim; ++j) {
    acc = s(acc, s.make(x[base + j * inner], j));
    s.store(out, indices, base + j * inner, acc);
  }
}

template <class T, class S>
void launch_scan(const T* x, typename S::out_t* out, std::int64_t* indices, const S& s, const ReduceExtents& e,
                 cudaStream_t stream) {
  if (e.numel() == 0) return;
  if (e.inner == 1) {
    const bool vector = (e.dim * sizeof(T)) % 16 == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
    const bool out_aligned = reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
    // A warp per row for short rows, and for many rows (enough warps to fill the GPU: a warp
    // keeps 1 KB in flight per tile, with no block-wide synchronisation between tiles).
    constexpr std::int64_t kManyRows = 8192;
    if (e.dim <= 32 * kScanItems<T> || e.outer >= kManyRows)
      scan_rows_warp_kernel<T, S><<<blocks_for(e.outer, kScanThreads / 32), kScanThreads, 0, stream>>>(
          x, out, indices, s, e.outer, e.dim, vector && out_aligned);
    else
      scan_rows_kernel<T, S><<<static_cast<unsigned>(e.outer), kScanThreads, 0, stream>>>(x, out, indices, s, e.dim,
                                                                                            vector && out_aligned);
  } else {
    scan_columns_kernel<T, S><<<blocks_for(e.outer * e.inner, kScanThreads), kScanThreads, 0, stream>>>(
        x, out, indices, s, e.outer, e.dim, e.inner);
  }
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::reduction
