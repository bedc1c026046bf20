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

/// Whether every element index of `layout` and every element offset of each input (strides
/// non-negative) is below 2^31: the GPU engine's 32-bit index arithmetic (and its fast
/// divisions, core/fast_divmod.hpp) cannot overflow. The element count alone is not enough:
/// a few rows of a huge tensor have small indices but large offsets.
bool offsets_fit_32_bits(const ElementwiseLayout& layout);

/// An input's consecutive elements at least this many bytes apart cost a memory sector each
/// when read directly; such reads go through a transposing tile (or a dense copy) instead.
inline constexpr std::int64_t kScatteredStrideBytes = 32;

/// Whether the GPU engine's tiled path runs `layout`: rank 2 [rows, cols], offsets within
/// 32 bits, at least one input whose consecutive elements along cols are scattered
/// (kScatteredStrideBytes apart) while those along rows are not, and every other input
/// read well along cols (x.t() + y, x.t() * row). The tiled inputs are read along rows into
/// shared memory and written out along cols. `element_bytes[k]` is input k's element size.
bool uses_transpose_tile(const ElementwiseLayout& layout, const std::size_t* element_bytes);

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
