// The backend interface of the shape and indexing ops.
// A backend hands it out through Backend's accessor; each backend implements it in its
// own files (src/cpu/shape/, src/cuda/shape/). Like Backend, it receives validated, contiguous
// Buffers from the front end and may only assert.
//
// Data movement is described by element strides, so one primitive (copy_view) serves
// transpose, permute, strided_copy/scatter, cat, split, repeat, roll and the KV-cache slices;
// backends move elements by size (1, 2, 4, 8, 16 bytes), never by dtype.
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "ferrite/buffer.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/op.hpp"

namespace ferrite {

/// Rank limit of a view handed to a backend (repeat doubles the rank of its input).
inline constexpr int kMaxViewDims = 16;
/// Rank limit of gather / scatter_add.
inline constexpr int kMaxIndexDims = 8;

/// Elements of a flat buffer addressed by a multi-index: element
/// offset + sum_k i_k * strides[k], for 0 <= i_k < sizes[k]. Strides are in elements and
/// may be negative or zero.
struct StridedView {
  int rank = 0;
  std::array<std::int64_t, kMaxViewDims> sizes{};
  std::array<std::int64_t, kMaxViewDims> strides{};
  std::int64_t offset = 0;
};

/// Smallest and largest index value an indexing op read (as stored, before negative
/// indices are wrapped). With no index read, min > max. The front end turns a value outside
/// [-size, size) into IndexOutOfRange; backends never read or write out of bounds for one
/// (the elements it addresses are given a defined but meaningless value, and the front end
/// discards the result).
struct IndexRange {
  std::int64_t min = 1;
  std::int64_t max = 0;
};

/// gather and scatter_add along `dim`, over the index's shape `sizes` (rank <= 8).
/// gather:      out[i] = data[sum_{k != dim} i_k * data_strides[k] + wrap(index[i]) * data_strides[dim]]
/// scatter_add: data[same address] += src[sum_k i_k * src_strides[k]]   (data = out, a copy of x)
/// `index` is contiguous over `sizes`; wrap(v) = v < 0 ? v + dim_size : v.
struct IndexLayout {
  int rank = 0;
  int dim = 0;
  std::int64_t dim_size = 0;
  std::array<std::int64_t, kMaxIndexDims> sizes{};
  std::array<std::int64_t, kMaxIndexDims> data_strides{};
  std::array<std::int64_t, kMaxIndexDims> src_strides{};
};

class ShapeOps {
 public:
  virtual ~ShapeOps() = default;
  /// Whether `op` (of this group) runs for `dtype` on this backend.
  virtual bool supports(Op op, DType dtype) const = 0;

  /// dst[dst_view(i)] = src[src_view(i)] for every multi-index i; both views have the same
  /// sizes, src and dst the same dtype, and no two i address the same dst element.
  virtual void copy_view(const Buffer& src, const StridedView& src_view, const Buffer& dst,
                         const StridedView& dst_view) = 0;

  /// out[o, j, i] = x[o, wrap(index[j]), i]; x is [outer, in_dim, inner], out is
  /// [outer, out_dim, inner], index holds out_dim I32 or I64 values.
  virtual IndexRange index_select(const Buffer& x, const Buffer& index, const Buffer& out, std::int64_t outer,
                                  std::int64_t in_dim, std::int64_t out_dim, std::int64_t inner) = 0;
  /// out (contiguous over layout.sizes) = x gathered along layout.dim (see IndexLayout).
  virtual IndexRange gather(const Buffer& x, const Buffer& index, const Buffer& out, const IndexLayout& layout) = 0;
  /// out = x, then every src element added into the out element its index addresses, duplicates
  /// summed in ascending index-position order (deterministic). Half types accumulate in float
  /// and round once.
  virtual IndexRange scatter_add(const Buffer& x, const Buffer& index, const Buffer& src, const Buffer& out,
                                 const IndexLayout& layout) = 0;
  /// out [num_rows, width] = 0, then out[wrap(index[r]), :] += grad[r, :] for every r, in
  /// ascending r for each row (deterministic).
  virtual IndexRange embedding_backward(const Buffer& grad, const Buffer& index, const Buffer& out,
                                        std::int64_t num_rows, std::int64_t width) = 0;

  /// The elements of x where mask (Bool, same numel) is true, in order, into the Buffer that
  /// `allocate_out(count)` returns (exactly count elements). Waits for the count.
  virtual Buffer masked_select(const Buffer& x, const Buffer& mask,
                               const std::function<Buffer(std::int64_t)>& allocate_out) = 0;
  /// out = x where the mask is false; the k-th true position (in order) takes source[k].
  /// Returns the number of true positions (waits for it); positions k >= source.numel()
  /// are not read from source (the front end reports them).
  virtual std::int64_t masked_scatter(const Buffer& x, const Buffer& mask, const Buffer& source,
                                      const Buffer& out) = 0;
};

}  // namespace ferrite
