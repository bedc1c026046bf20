// Dim handling shared by the reduction front-end files: a dim becomes [outer, dim, inner].
#pragma once

#include <cstdint>
#include <vector>

#include "ferrite/backend_families/reduction_ops.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite::frontend {

/// [outer, shape[dim], inner] of x around the (wrapped) dim; rank 0 gives [1, 1, 1].
ReduceExtents extents_around(const Tensor& x, std::int64_t wrapped_dim);
/// x's shape with `dim` removed, or kept with size 1.
Shape reduced_shape(const Tensor& x, std::int64_t wrapped_dim, bool keepdim);

/// The tensor a reduction of x hands to the backend. For a transposed or permuted dense x
/// (memory_order, any storage offset) that is the dense block itself, x.permute(order): the
/// kernels reduce it with x's dims mapped through the permutation (a sum over dim 1 of x.t()
/// is a sum over dim 0 of x), so the input is never copied; only the small result may be
/// (to_view_order). Other tensors are used as they are (buffer() copies strided ones).
/// Every reduction of the family (sum, mean, prod, amin, amax, any, all, argmax, argmin, and
/// the lists of dims built on them) goes through this one step, so a reduction of a view
/// adds in the view's memory order, as PyTorch does: bit for bit the same op on the dense
/// block, within rounding of the same op on x.contiguous().
struct ReductionInput {
  Tensor dense;                     // x, or x.permute(order) (contiguous)
  std::vector<std::int64_t> order;  // x's dims in memory order; empty when dense is x

  bool permuted() const { return !order.empty(); }
  /// dense's dim that is x's (wrapped) dim d.
  std::int64_t dense_dim(std::int64_t d) const;
  /// A reduction of dense without keepdim over the dims that are x's `reduced` ones (one flag
  /// per dim of x), brought into x's dim order: a permute and a contiguous copy of the result
  /// only when x's kept dims lie in another order in memory; x's reduced dims as size 1 when
  /// keepdim. The result is contiguous.
  Tensor to_view_order(Tensor out, const std::vector<bool>& reduced, bool keepdim, const Shape& x_shape) const;
};
ReductionInput reduction_input(const Tensor& x);

}  // namespace ferrite::frontend
