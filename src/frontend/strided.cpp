#include "frontend/strided.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "core/elementwise_layout.hpp"
#include "frontend/checks.hpp"
#include "frontend/shape_helpers.hpp"

namespace ferrite::frontend {
namespace {

// Dims of size 1 dropped, then adjacent dims merged wherever every operand steps across the
// pair as across one dim. Returns (sizes, strides per operand), outermost first.
struct MergedDims {
  std::vector<std::int64_t> sizes;
  std::vector<std::vector<std::int64_t>> strides;
};

MergedDims merge_dims(const Shape& shape, const std::vector<const Strides*>& operands) {
  MergedDims m;
  m.strides.resize(operands.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool mergeable = !m.sizes.empty();
    for (std::size_t k = 0; k < operands.size() && mergeable; ++k)
      mergeable = m.strides[k].back() == (*operands[k])[d] * shape[d];
    if (mergeable) {
      m.sizes.back() *= shape[d];
      for (std::size_t k = 0; k < operands.size(); ++k) m.strides[k].back() = (*operands[k])[d];
    } else {
      m.sizes.push_back(shape[d]);
      for (std::size_t k = 0; k < operands.size(); ++k) m.strides[k].push_back((*operands[k])[d]);
    }
  }
  return m;
}

}  // namespace

Buffer storage_buffer(const Tensor& t) {
  const std::shared_ptr<Storage>& storage = t.storage();
  return Buffer(storage, t.dtype(), static_cast<std::int64_t>(storage->bytes() / t.element_size()), 0);
}

StridedView storage_view(const Tensor& t) {
  FERRITE_CHECK(t.dim() <= kMaxViewDims, Unsupported, "a strided view of rank ", t.dim(), " (", t.description(),
                ") is more than the ", kMaxViewDims, " dims a copy supports; call contiguous() on a lower-rank view");
  StridedView v;
  v.rank = static_cast<int>(t.dim());
  v.offset = t.storage_offset();
  for (int k = 0; k < v.rank; ++k) {
    v.sizes[k] = t.shape()[static_cast<std::size_t>(k)];
    v.strides[k] = t.strides()[static_cast<std::size_t>(k)];
  }
  return v;
}

void copy_elements(const Tensor& src, const Tensor& dst) {
  if (dst.numel() == 0) return;
  const MergedDims m = merge_dims(dst.shape(), {&src.strides(), &dst.strides()});
  FERRITE_CHECK(m.sizes.size() <= static_cast<std::size_t>(kMaxViewDims), Unsupported, "copy: the views ",
                src.description(), " and ", dst.description(), " need ", m.sizes.size(),
                " dims after merging, more than the ", kMaxViewDims, " supported");
  StridedView from, to;
  from.rank = to.rank = std::max<int>(1, static_cast<int>(m.sizes.size()));
  from.offset = src.storage_offset();
  to.offset = dst.storage_offset();
  if (m.sizes.empty()) {  // one element
    from.sizes[0] = to.sizes[0] = 1;
    from.strides[0] = to.strides[0] = 1;
  }
  for (std::size_t k = 0; k < m.sizes.size(); ++k) {
    from.sizes[k] = to.sizes[k] = m.sizes[k];
    from.strides[k] = m.strides[0][k];
    to.strides[k] = m.strides[1][k];
  }
  shape_ops_of(dst.device()).copy_view(storage_buffer(src), from, storage_buffer(dst), to);
}

Tensor elementwise_operand(const Tensor& t) {
  if (t.is_contiguous() || t.numel() == 0) return t;
  const MergedDims m = merge_dims(t.shape(), {&t.strides()});
  if (m.sizes.size() > static_cast<std::size_t>(kMaxElementwiseDims)) return t.contiguous();
  // Consecutive elements 32 bytes or more apart (a transposed operand) would each cost a
  // memory sector of their own in a direct read; the copy kernel transposes through shared
  // memory at close to full bandwidth, so one dense copy first is faster (measured on an H200:
  // x.t() + y at 38% of the contiguous add's rate read directly, 58% through the copy). Rank-2
  // layouts that the GPU engine's tile serves never get here (run_binary checks first).
  // Rows off the 16-byte grid are read directly: the engine's strided kernel runs them
  // without vector loads, which beats a copy (2 more passes over the data) followed by them.
  if (!m.sizes.empty() && m.strides[0].back() * static_cast<std::int64_t>(t.element_size()) >= kScatteredStrideBytes)
    return t.contiguous();
  return t;
}

std::vector<Tensor> elementwise_operands(const Shape& out_shape, std::initializer_list<const Tensor*> operands,
                                         const char* op) {
  std::vector<Tensor> result;
  result.reserve(operands.size());
  for (const Tensor* t : operands) result.push_back(*t);
  // make_strided_layout would reject more dims than the engines take; such operands are
  // made dense below (and a tile needs rank 2 anyway).
  const auto dims = std::count_if(out_shape.begin(), out_shape.end(), [](std::int64_t s) { return s != 1; });
  if (dims <= kMaxElementwiseDims && shape_numel(out_shape) > 0) {
    std::vector<std::size_t> bytes;
    for (const Tensor* t : operands) bytes.push_back(t->element_size());
    if (uses_transpose_tile(make_strided_layout(out_shape, operands, op), bytes.data())) return result;
  }
  for (Tensor& t : result) t = elementwise_operand(t);
  return result;
}

Buffer strided_buffer(const Tensor& t) {
  // The raw window at any alignment: the elementwise engines compute each element alone, so
  // their results do not depend on alignment.
  if (t.numel() == 0) return t.buffer();
  std::int64_t span = 1;
  for (std::size_t k = 0; k < t.shape().size(); ++k) span += (t.shape()[k] - 1) * t.strides()[k];
  return Buffer(t.storage(), t.dtype(), span, t.storage_offset());
}

std::optional<std::vector<std::int64_t>> memory_order(const Tensor& t) {
  if (t.is_contiguous() || t.numel() == 0) return std::nullopt;
  std::vector<std::int64_t> order(t.shape().size());
  std::iota(order.begin(), order.end(), 0);
  // Decreasing stride; size-1 dims (any stride) keep their place relative to each other.
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    const auto sa = t.shape()[static_cast<std::size_t>(a)] == 1 ? 0 : t.strides()[static_cast<std::size_t>(a)];
    const auto sb = t.shape()[static_cast<std::size_t>(b)] == 1 ? 0 : t.strides()[static_cast<std::size_t>(b)];
    return sa > sb;
  });
  std::int64_t expected = 1;
  for (std::size_t k = order.size(); k-- > 0;) {
    const auto d = static_cast<std::size_t>(order[k]);
    if (t.shape()[d] == 1) continue;
    if (t.strides()[d] != expected) return std::nullopt;
    expected *= t.shape()[d];
  }
  return order;
}

std::vector<std::int64_t> inverse_permutation(const std::vector<std::int64_t>& order) {
  std::vector<std::int64_t> inverse(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) inverse[static_cast<std::size_t>(order[k])] = static_cast<std::int64_t>(k);
  return inverse;
}

void cast_elements(const Tensor& x, const Tensor& out) {
  if (x.numel() == 0) return;
  if (buffer_is_own(x)) {
    // The vector kernel, as before views existed.
    backend(x.device()).cast(x.buffer(), out.buffer(), contiguous_layout(x.numel(), 1));
    return;
  }
  // A view (narrowed, sliced with a step, or contiguous from an offset off the 16-byte grid,
  // which buffer() would copy) is read through its strides into the contiguous out, for every
  // pair of dtypes; elementwise_operand copies those a direct read would serve badly. A cast
  // computes each element alone, so where the view starts cannot change a result.
  const Tensor operand = elementwise_operand(x);
  const ElementwiseLayout layout = make_strided_layout(out.shape(), {&operand}, "to");
  backend(x.device()).cast(strided_buffer(operand), out.buffer(), layout);
}

std::optional<Strides> view_strides(const Shape& shape, const Strides& strides, const Shape& target) {
  Strides result(target.size());
  const std::int64_t numel = shape_numel(shape);
  if (numel == 0 || shape.empty()) {
    // No element is addressed (or one, for rank 0): any strides do; use the row-major ones.
    std::int64_t running = 1;
    for (std::size_t k = target.size(); k-- > 0;) {
      result[k] = running;
      running *= std::max<std::int64_t>(target[k], 1);
    }
    return result;
  }
  // Walk both shapes from the innermost dim in chunks: a chunk of `shape` is a run of dims
  // that are contiguous with each other (each stride = next stride * next size); a target
  // chunk of the same element count can take any shape over it, with strides derived from
  // the chunk's innermost stride. A target chunk that straddles two source chunks has no
  // single stride: no view.
  std::int64_t target_dim = static_cast<std::int64_t>(target.size()) - 1;
  std::int64_t chunk_stride = strides.back();
  std::int64_t source_count = 1, target_count = 1;
  for (std::int64_t d = static_cast<std::int64_t>(shape.size()) - 1; d >= 0; --d) {
    source_count *= shape[static_cast<std::size_t>(d)];
    const bool chunk_ends =
        d == 0 || (shape[static_cast<std::size_t>(d - 1)] != 1 &&
                   strides[static_cast<std::size_t>(d - 1)] != source_count * chunk_stride);
    if (!chunk_ends) continue;
    while (target_dim >= 0 && (target_count < source_count || target[static_cast<std::size_t>(target_dim)] == 1)) {
      result[static_cast<std::size_t>(target_dim)] = target_count * chunk_stride;
      target_count *= target[static_cast<std::size_t>(target_dim)];
      --target_dim;
    }
    if (target_count != source_count) return std::nullopt;
    if (d > 0) {
      chunk_stride = strides[static_cast<std::size_t>(d - 1)];
      source_count = target_count = 1;
    }
  }
  if (target_dim != -1) return std::nullopt;
  return result;
}

bool addresses_each_element_once(const Shape& shape, const Strides& strides) {
  std::vector<std::pair<__int128, __int128>> dims;  // stride, size
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0) return true;  // nothing addressed
    if (shape[k] > 1) dims.push_back({strides[k] < 0 ? -static_cast<__int128>(strides[k]) : strides[k], shape[k]});
  }
  std::sort(dims.begin(), dims.end());
  __int128 span = 0;
  for (const auto& [stride, size] : dims) {
    if (stride <= span) return false;
    span += stride * (size - 1);
  }
  return true;
}

bool buffer_is_own(const Tensor& t) {
  return t.numel() == 0 || (t.is_contiguous() && reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 16 == 0);
}

WriteWindow::WriteWindow(const char* op, const Tensor& target, bool read_first) : target_(&target) {
  if (buffer_is_own(target)) return;
  check_writable(op, target);
  dense_ = allocate(target.shape(), target.dtype(), target.device());
  if (read_first) copy_elements(target, dense_);
}

void WriteWindow::finish() const {
  if (dense_.defined()) copy_elements(dense_, *target_);
}

void check_writable(const char* op, const Tensor& t) {
  FERRITE_CHECK(addresses_each_element_once(t.shape(), t.strides()), InvalidArgument, op, ": ", t.description(),
                " with strides ", shape_str(t.strides()),
                " cannot be written in place: more than one of its elements refers to a single memory location "
                "(an expanded view); clone() it first");
}

bool may_overlap(const Tensor& a, const Tensor& b) {
  if (a.storage() != b.storage() || a.numel() == 0 || b.numel() == 0) return false;
  auto range = [](const Tensor& t) {
    __int128 lo = t.storage_offset(), hi = t.storage_offset();
    for (std::size_t k = 0; k < t.shape().size(); ++k) hi += static_cast<__int128>(t.shape()[k] - 1) * t.strides()[k];
    return std::pair{lo, hi};
  };
  const auto [alo, ahi] = range(a);
  const auto [blo, bhi] = range(b);
  return alo <= bhi && blo <= ahi;
}

}  // namespace ferrite::frontend
