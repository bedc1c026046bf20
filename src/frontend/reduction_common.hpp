// Dim handling shared by the reduction front-end files: a dim becomes [outer, dim, inner].
#pragma once

#include "ferrite/backend_families/reduction_ops.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite::frontend {

/// [outer, shape[dim], inner] of x around the (wrapped) dim; rank 0 gives [1, 1, 1].
ReduceExtents extents_around(const Tensor& x, std::int64_t wrapped_dim);
/// x's shape with `dim` removed, or kept with size 1.
Shape reduced_shape(const Tensor& x, std::int64_t wrapped_dim, bool keepdim);

}  // namespace ferrite::frontend
