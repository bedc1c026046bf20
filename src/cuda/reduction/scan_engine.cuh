// The scan engine: inclusive scans along the middle extent of [outer, dim, inner]. Include
// only from the .cu files that instantiate it.
//
//  * inner == 1: one block per row walks the row in tiles of 256 threads x one 16-byte
//    vector each; cub::BlockScan scans a tile and a running-prefix callback carries the
//    total of the earlier tiles into the next, so each element is read once and written
//    once (single pass).
//  * inner > 1: one thread per (outer, inner) column walks the dim; neighbouring threads
//    touch neighbouring addresses.
// The combination order depends only on the extents: results are bitwise reproducible.
//
// A scan S provides acc_t, out_t, identity(), make(value, index), operator()(a, b) (the
// associative combination, earlier operand first) and store(out, indices, at, acc).
#pragma once

#include <cub/block/block_scan.cuh>

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

template <class T, class S>
__global__ void __launch_bounds__(kScanThreads)
    scan_rows_kernel(const T* x, typename S::out_t* out, std::int64_t* indices, S s, std::int64_t dim, bool vector) {
  using A = typename S::acc_t;
  constexpr int kItems = Vec16<T>::kSize;
  using BlockScan = cub::BlockScan<A, kScanThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * dim;
  const T* p = x + base;
  RunningPrefix<A, S> prefix{s.identity(), s};
  for (std::int64_t tile = 0; tile < dim; tile += static_cast<std::int64_t>(kScanThreads) * kItems) {
    const std::int64_t first = tile + static_cast<std::int64_t>(threadIdx.x) * kItems;
    A items[kItems];
    if (vector && first + kItems <= dim) {
      const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(p + first);
#pragma unroll
      for (int k = 0; k < kItems; ++k) items[k] = s.make(v.v[k], first + k);
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) items[k] = first + k < dim ? s.make(p[first + k], first + k) : s.identity();
    }
    BlockScan(temp).InclusiveScan(items, items, s, prefix);
    __syncthreads();  // the next tile reuses temp
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      if (first + k < dim) s.store(out, indices, base + first + k, items[k]);
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
    scan_rows_kernel<T, S><<<static_cast<unsigned>(e.outer), kScanThreads, 0, stream>>>(x, out, indices, s, e.dim,
                                                                                          vector);
  } else {
    scan_columns_kernel<T, S><<<blocks_for(e.outer * e.inner, kScanThreads), kScanThreads, 0, stream>>>(
        x, out, indices, s, e.outer, e.dim, e.inner);
  }
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::reduction
