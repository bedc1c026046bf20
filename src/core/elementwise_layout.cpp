#include "core/elementwise_layout.hpp"

#include <algorithm>
#include <string>

#include "core/extent.hpp"

namespace ferrite {

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    FERRITE_CHECK(da == db || da == 1 || db == 1, ShapeMismatch, op, ": shapes ", shape_str(a), " and ",
                  shape_str(b), " do not broadcast (dim ", i, ": ", da, " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

ElementwiseLayout merge_layout(const Shape& out_shape, const std::vector<std::vector<std::int64_t>>& strides,
                               const char* op);

}  // namespace

ElementwiseLayout make_elementwise_layout(const Shape& out_shape, std::initializer_list<const Shape*> inputs,
                                          const char* op) {
  const int num_inputs = static_cast<int>(inputs.size());
  FERRITE_CHECK(num_inputs <= kMaxElementwiseInputs, InvalidArgument, op, ": too many operands");
  const std::size_t rank = out_shape.size();

  // Full-rank strides of every input over the output shape (inputs right-aligned).
  std::vector<std::vector<std::int64_t>> strides;
  for (const Shape* in : inputs) {
    std::vector<std::int64_t> s(rank, 0);
    std::int64_t running = 1;
    for (std::size_t k = 0; k < in->size(); ++k) {
      const std::size_t in_dim = in->size() - 1 - k;
      const std::size_t out_dim = rank - 1 - k;
      s[out_dim] = (*in)[in_dim] == 1 && out_shape[out_dim] != 1 ? 0 : running;
      running = detail::checked_mul(running, (*in)[in_dim], [&] {
        return std::string(op) + ": a stride of operand shape " + shape_str(*in) + " is more than an int64 can count";
      });
    }
    strides.push_back(std::move(s));
  }
  return merge_layout(out_shape, strides, op);
}

ElementwiseLayout make_strided_layout(const Shape& out_shape, std::initializer_list<const Tensor*> inputs,
                                      const char* op) {
  FERRITE_CHECK(static_cast<int>(inputs.size()) <= kMaxElementwiseInputs, InvalidArgument, op, ": too many operands");
  const std::size_t rank = out_shape.size();
  std::vector<std::vector<std::int64_t>> strides;
  for (const Tensor* in : inputs) {
    std::vector<std::int64_t> s(rank, 0);
    const std::size_t in_rank = in->shape().size();
    for (std::size_t k = 0; k < in_rank; ++k) {
      const std::size_t in_dim = in_rank - 1 - k;
      const std::size_t out_dim = rank - 1 - k;
      s[out_dim] = in->shape()[in_dim] == 1 && out_shape[out_dim] != 1 ? 0 : in->strides()[in_dim];
    }
    strides.push_back(std::move(s));
  }
  return merge_layout(out_shape, strides, op);
}

namespace {

ElementwiseLayout merge_layout(const Shape& out_shape, const std::vector<std::vector<std::int64_t>>& strides,
                               const char* op) {
  const int num_inputs = static_cast<int>(strides.size());
  const std::size_t rank = out_shape.size();
  std::vector<std::int64_t> sizes(out_shape.begin(), out_shape.end());

  // Merge from the innermost dim outwards: dim d folds into the dim kept inside it when every
  // operand steps across d exactly as if the two were one dim. Size-1 dims vanish.
  std::vector<std::int64_t> merged_sizes;  // innermost first while merging
  std::vector<std::vector<std::int64_t>> merged_strides(static_cast<std::size_t>(num_inputs));
  for (std::size_t k = 0; k < rank; ++k) {
    const std::size_t d = rank - 1 - k;
    if (sizes[d] == 1) continue;
    bool mergeable = !merged_sizes.empty();
    for (int i = 0; i < num_inputs && mergeable; ++i)
      mergeable = strides[i][d] == merged_strides[i].back() * merged_sizes.back();
    if (mergeable) {
      merged_sizes.back() = detail::checked_mul(merged_sizes.back(), sizes[d], [&] {
        return std::string(op) + ": merged dims of " + shape_str(out_shape) + " are more than an int64 can count";
      });
    } else {
      merged_sizes.push_back(sizes[d]);
      for (int i = 0; i < num_inputs; ++i) merged_strides[i].push_back(strides[i][d]);
    }
  }
  if (merged_sizes.empty()) {  // rank 0 or all dims of size 1: one element
    merged_sizes.push_back(1);
    for (int i = 0; i < num_inputs; ++i) merged_strides[i].push_back(1);
  }
  FERRITE_CHECK(merged_sizes.size() <= static_cast<std::size_t>(kMaxElementwiseDims), Unsupported, op,
                ": broadcasting ", shape_str(out_shape), " needs ", merged_sizes.size(),
                " dims after merging, more than the ", kMaxElementwiseDims, " supported");

  ElementwiseLayout layout;
  layout.rank = static_cast<int>(merged_sizes.size());
  layout.num_inputs = num_inputs;
  layout.numel = shape_numel(out_shape);
  for (int j = 0; j < layout.rank; ++j) {
    const std::size_t from = merged_sizes.size() - 1 - static_cast<std::size_t>(j);  // back to outermost first
    layout.sizes[j] = merged_sizes[from];
    for (int i = 0; i < num_inputs; ++i) layout.strides[i][j] = merged_strides[i][from];
  }
  layout.contiguous = layout.rank == 1;
  for (int i = 0; i < num_inputs; ++i) layout.contiguous = layout.contiguous && layout.strides[i][0] == 1;
  return layout;
}

}  // namespace

bool offsets_fit_32_bits(const ElementwiseLayout& layout) {
  constexpr std::int64_t kLimit = std::int64_t(1) << 31;
  if (layout.numel >= kLimit) return false;
  for (int k = 0; k < layout.num_inputs; ++k) {
    std::int64_t span = 0;  // the largest offset so far, always below 2^31
    for (int d = 0; d < layout.rank; ++d) {
      const std::int64_t stride = layout.strides[k][d], size = layout.sizes[d];
      if (stride < 0) return false;
      if (size <= 1 || stride == 0) continue;
      // span + stride * (size - 1) <= 2^31 - 1, tested without forming the product.
      if (size - 1 > (kLimit - 1 - span) / stride) return false;
      span += stride * (size - 1);
    }
  }
  return true;
}

bool uses_transpose_tile(const ElementwiseLayout& layout, const std::size_t* element_bytes) {
  if (layout.rank != 2 || layout.numel == 0) return false;
  bool staged = false;
  for (int k = 0; k < layout.num_inputs; ++k) {
    const auto bytes = static_cast<std::int64_t>(element_bytes[k]);
    const bool rows_scattered = layout.strides[k][0] * bytes >= kScatteredStrideBytes;
    const bool cols_scattered = layout.strides[k][1] * bytes >= kScatteredStrideBytes;
    if (rows_scattered && cols_scattered) return false;  // neither direction reads well
    staged = staged || cols_scattered;
  }
  return staged && offsets_fit_32_bits(layout);
}

}  // namespace ferrite
