// Helpers shared by the shape and indexing front ends (shape.cpp, index.cpp): dim
// wrapping, row-major strides, and the StridedView of a whole contiguous tensor.
#pragma once

#include <string>
#include <vector>

#include "ferrite/backend_families/shape_ops.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite::frontend {

/// A dim in [-rank, rank) as an index in [0, rank); a rank-0 tensor takes dims 0 and -1,
/// as in PyTorch. InvalidArgument naming op and tensor otherwise.
std::int64_t wrap_dim(const char* op, std::int64_t dim, std::int64_t rank, const Tensor& x);
/// Row-major element strides of `shape`.
std::vector<std::int64_t> contiguous_strides(const Shape& shape);
/// Product of shape[begin, end).
std::int64_t product(const Shape& shape, std::size_t begin, std::size_t end);
/// The view of a contiguous tensor of `shape` (rank <= kMaxViewDims).
StridedView contiguous_view(const Shape& shape);
/// "[1, -2, 3]".
std::string ints_str(const std::vector<std::int64_t>& v);
/// The ShapeOps of `device`'s backend.
ShapeOps& shape_ops_of(Device device);

}  // namespace ferrite::frontend
