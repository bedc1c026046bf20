// Broadcasting: from operand shapes to the ElementwiseLayout that backends execute.
#pragma once

#include <initializer_list>

#include "ferrite/backend.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite {

/// Strides of each input over `out_shape` (0 on broadcast dims), with adjacent dims merged
/// wherever every operand is contiguous across them and size-1 dims dropped.
/// Each input shape must broadcast to `out_shape` (the caller checked).
ElementwiseLayout make_elementwise_layout(const Shape& out_shape, std::initializer_list<const Shape*> inputs,
                                          const char* op);

/// The same for operands that are tensors read through their own strides (views): each
/// input's strides over `out_shape` are its tensor strides (0 on broadcast dims), relative to
/// its first element. Merged and checked as above.
ElementwiseLayout make_strided_layout(const Shape& out_shape, std::initializer_list<const Tensor*> inputs,
                                      const char* op);

/// The layout of `n` contiguous elements with `inputs` operands of the same length.
inline ElementwiseLayout contiguous_layout(std::int64_t n, int inputs) {
  ElementwiseLayout layout;
  layout.rank = 1;
  layout.num_inputs = inputs;
  layout.numel = n;
  layout.sizes[0] = n;
  for (int k = 0; k < inputs; ++k) layout.strides[k][0] = 1;
  layout.contiguous = true;
  return layout;
}

}  // namespace ferrite
