// Launchers of the shape family's kernels (src/cuda/shape/*.cu). Plain functions: the
// kernel templates stay inside their .cu files, instantiated by element size.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>

#include "ferrite/backend_families/shape_ops.hpp"

namespace ferrite::cuda::shape {

/// A copy after the host has merged dims and widened the element where it could:
/// dst[dst_offset + sum i_k dst_strides[k]] = src[src_offset + sum i_k src_strides[k]].
struct CopyPlan {
  int rank = 0;
  int elem_bytes = 0;
  std::int64_t numel = 0;
  std::int64_t sizes[kMaxViewDims] = {};
  std::int64_t src_strides[kMaxViewDims] = {};
  std::int64_t dst_strides[kMaxViewDims] = {};
  std::int64_t src_offset = 0, dst_offset = 0;
};

/// Any plan: one thread per element (four in flight), index arithmetic by FastDivmod.
void strided_copy(const void* src, void* dst, const CopyPlan& plan, cudaStream_t stream);
/// Plans where dim `a` is contiguous in src and the last dim is contiguous in dst: tiles go
/// through shared memory so that both sides are read and written in whole 16-byte vectors.
void tiled_transpose(const void* src, void* dst, const CopyPlan& plan, int a, cudaStream_t stream);

// ---- indexing (index_gather.cu, index_scatter.cu) ----

/// Up to this many index values, index_minmax uses one block and plain stores, so `range`
/// may be pinned host memory (mapped); above it, device atomics, so `range` must be device
/// memory. The one block (256 threads) reads at most 128 values per thread, in eight rounds of
/// sixteen loads: past that, the init kernel and the copy cost less than its round trips.
inline constexpr std::int64_t kSmallIndexRange = std::int64_t(1) << 15;
/// range[0] = min, range[1] = max of the index values (min > max for an empty index).
void index_minmax(const Buffer& index, long long* range, cudaStream_t stream);
/// out[o, j, c] = x[o, wrap(index[j]), c] in units of elem_bytes (zeros for a bad index).
void index_select(int elem_bytes, const void* x, const Buffer& index, void* out, std::int64_t outer,
                  std::int64_t in_dim, std::int64_t out_dim, std::int64_t inner, cudaStream_t stream);
/// gather, with the index range folded into range[0..1] (initialised by the caller).
void gather(int elem_bytes, const void* x, const Buffer& index, void* out, const IndexLayout& layout, long long* range,
            cudaStream_t stream);
/// Sets range to {INT64_MAX, INT64_MIN}.
void init_range(long long* range, cudaStream_t stream);

/// The deterministic scatter sum behind scatter_add and embedding_backward: out holds its
/// starting values; for each index position p (over layout.sizes) with a valid index,
/// out[target(p) * width + c] += src[source(p) * width + c], in an order fixed by the input
/// (a stable radix sort of the targets; runs of one target summed in ascending p within
/// chunks of 64 sorted positions, then the chunk partials in chunk order: bit-repeatable).
/// target(p) = data address of p with the dim term wrap(index[p]) * data_strides[dim];
/// source(p) = src address of p. embedding_backward is the rank-1 layout with unit strides
/// and width d. Folds the index range into range[0..1]; scratch comes from the device pool.
void scatter_sum(DType dtype, const Buffer& index, const void* src, void* out, const IndexLayout& layout,
                 std::int64_t num_targets, std::int64_t width, long long* range, int device, cudaStream_t stream);

// ---- masks (masked.cu) ----

/// masked_select: counts, reads the count back, allocates through allocate_out, compacts.
Buffer masked_select(const Buffer& x, const Buffer& mask, const std::function<Buffer(std::int64_t)>& allocate_out,
                     int device, cudaStream_t stream);
/// masked_scatter; returns the number of true elements.
std::int64_t masked_scatter(const Buffer& x, const Buffer& mask, const Buffer& source, const Buffer& out, int device,
                            cudaStream_t stream);

}  // namespace ferrite::cuda::shape
