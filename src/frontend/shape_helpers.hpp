// Helpers shared by the shape and indexing front ends (shape.cpp, index.cpp): the StridedView
// of a whole contiguous tensor. Strides and extents come from core/extent.hpp (checked).
#pragma once

#include <string>
#include <vector>

#include "ferrite/backend_families/shape_ops.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite::frontend {

/// The view of a contiguous tensor of `shape` (rank <= kMaxViewDims).
StridedView contiguous_view(const Shape& shape);
/// The ShapeOps of `device`'s backend.
ShapeOps& shape_ops_of(Device device);

}  // namespace ferrite::frontend
