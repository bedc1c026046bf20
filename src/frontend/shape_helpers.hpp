// Helpers shared by the shape and indexing front ends (shape.cpp, index.cpp): row-major
// strides, and the StridedView of a whole contiguous tensor.
#pragma once

#include <string>
#include <vector>

#include "ferrite/backend_families/shape_ops.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite::frontend {

/// Row-major element strides of `shape`.
std::vector<std::int64_t> contiguous_strides(const Shape& shape);
/// Product of shape[begin, end).
std::int64_t product(const Shape& shape, std::size_t begin, std::size_t end);
/// The view of a contiguous tensor of `shape` (rank <= kMaxViewDims).
StridedView contiguous_view(const Shape& shape);
/// The ShapeOps of `device`'s backend.
ShapeOps& shape_ops_of(Device device);

}  // namespace ferrite::frontend
