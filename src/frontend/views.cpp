// The view ops of Tensor: each returns a tensor over the same storage with new shape, strides
// and offset (PyTorch's semantics; docs/api.md). Nothing here moves data except flatten and
// reshape of views whose strides cannot express the new shape.
#include <algorithm>
#include <numeric>
#include <string>

#include "core/extent.hpp"
#include "ferrite/tensor.hpp"
#include "frontend/checks.hpp"
#include "frontend/strided.hpp"

namespace ferrite {
namespace {

std::size_t wrapped(const char* op, const Tensor& x, std::int64_t dim) {
  FERRITE_CHECK(x.defined(), InvalidArgument, op, ": tensor is undefined");
  return static_cast<std::size_t>(frontend::wrap_dim(op, x, dim));
}

// The stride of a new dim of `size` elements, stride * factor (or stride + factor when
// `add`). A slice or unfold step, or a diagonal of dims, near 2^63 overflowed it (undefined
// behaviour, found by api_fuzz_test under UBSan); that happens only when the new dim has at
// most one element, whose stride is never stepped over, so it keeps `stride` then.
std::int64_t new_stride(const char* op, std::int64_t size, std::int64_t stride, std::int64_t factor, bool add) {
  const auto r = add ? detail::add_if_fits(stride, factor) : detail::mul_if_fits(stride, factor);
  if (r) return *r;
  FERRITE_CHECK(size <= 1, InvalidArgument, op, ": the new stride overflows int64 (stride ", stride,
                add ? " + " : " * ", factor, ")");
  return stride;
}

}  // namespace

Tensor Tensor::view_as(const char* op, Shape shape, Strides strides, std::int64_t offset) const {
  FERRITE_CHECK(defined(), InvalidArgument, op, ": tensor is undefined");
  return Tensor(storage_, dtype_, std::move(shape), std::move(strides), offset);
}

Tensor Tensor::view(Shape target) const {
  FERRITE_CHECK(defined(), InvalidArgument, "view: tensor is undefined");
  // reshape's shape inference and checks, then insist on a view.
  const Tensor shaped = Tensor(storage_, dtype_, shape_, strides_, offset_).reshape(target);
  FERRITE_CHECK(shaped.storage() == storage_ && shaped.storage_offset() == offset_, ShapeMismatch, "view: ",
                description(), " with strides ", shape_str(strides_), " cannot be viewed as ", shape_str(target),
                " (the elements are not laid out so that one stride per dim reaches them); use reshape(), which "
                "copies when it must");
  return shaped;
}

Tensor Tensor::slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) const {
  const std::size_t d = wrapped("slice", *this, dim);
  FERRITE_CHECK(!shape_.empty(), InvalidArgument, "slice: a rank-0 tensor cannot be sliced");
  FERRITE_CHECK(step > 0, InvalidArgument, "slice: step must be positive, got ", step);
  const std::int64_t n = shape_[d];
  auto clamp_index = [n](std::int64_t i) {
    if (i < 0) i = i < -n ? 0 : i + n;  // PyTorch clamps, never wraps twice
    return std::min(i, n);
  };
  const std::int64_t from = clamp_index(start);
  const std::int64_t to = std::max(clamp_index(end), from);
  Shape shape = shape_;
  Strides strides = strides_;
  // (to - from + step - 1) / step without overflow for huge steps.
  shape[d] = (to - from) / step + ((to - from) % step != 0 ? 1 : 0);
  strides[d] = new_stride("slice", shape[d], strides_[d], step, false);
  const std::int64_t offset = shape[d] == 0 ? offset_ : offset_ + from * strides_[d];
  return view_as("slice", std::move(shape), std::move(strides), offset);
}

Tensor Tensor::narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
  const std::size_t d = wrapped("narrow", *this, dim);
  FERRITE_CHECK(!shape_.empty(), InvalidArgument, "narrow: a rank-0 tensor cannot be narrowed");
  const std::int64_t n = shape_[d];
  FERRITE_CHECK(start >= -n && start <= n, IndexOutOfRange, "narrow: start ", start, " is out of range for dim ",
                dim, " of size ", n, " (", description(), ")");
  const std::int64_t from = start < 0 ? start + n : start;
  FERRITE_CHECK(length >= 0 && length <= n - from, IndexOutOfRange, "narrow: start ", from, " + length ", length,
                " exceeds dim ", dim, " of size ", n, " (", description(), ")");
  return slice(dim, from, from + length, 1);
}

Tensor Tensor::select(std::int64_t dim, std::int64_t index) const {
  const std::size_t d = wrapped("select", *this, dim);
  FERRITE_CHECK(!shape_.empty(), InvalidArgument, "select: a rank-0 tensor has no dim to select from");
  const std::int64_t n = shape_[d];
  FERRITE_CHECK(index >= -n && index < n, IndexOutOfRange, "select: index ", index, " is out of range for dim ", dim,
                " of size ", n, " (", description(), ")");
  const std::int64_t i = index < 0 ? index + n : index;
  Shape shape = shape_;
  Strides strides = strides_;
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d));
  strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(d));
  return view_as("select", std::move(shape), std::move(strides), offset_ + i * strides_[d]);
}

Tensor Tensor::unsqueeze(std::int64_t dim) const {
  FERRITE_CHECK(defined(), InvalidArgument, "unsqueeze: tensor is undefined");
  const std::int64_t rank = this->dim();
  FERRITE_CHECK(dim >= -(rank + 1) && dim <= rank, IndexOutOfRange, "unsqueeze: dim ", dim,
                " is out of range for ", description(), " (expected [", -(rank + 1), ", ", rank, "])");
  const auto d = static_cast<std::size_t>(dim < 0 ? dim + rank + 1 : dim);
  Shape shape = shape_;
  Strides strides = strides_;
  const std::int64_t stride = d < shape_.size() ? shape_[d] * strides_[d] : 1;
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(d), 1);
  strides.insert(strides.begin() + static_cast<std::ptrdiff_t>(d), stride);
  return view_as("unsqueeze", std::move(shape), std::move(strides), offset_);
}

Tensor Tensor::squeeze() const {
  FERRITE_CHECK(defined(), InvalidArgument, "squeeze: tensor is undefined");
  Shape shape;
  Strides strides;
  for (std::size_t k = 0; k < shape_.size(); ++k) {
    if (shape_[k] == 1) continue;
    shape.push_back(shape_[k]);
    strides.push_back(strides_[k]);
  }
  return view_as("squeeze", std::move(shape), std::move(strides), offset_);
}

Tensor Tensor::squeeze(std::int64_t dim) const {
  const std::size_t d = wrapped("squeeze", *this, dim);
  if (shape_.empty() || shape_[d] != 1) return *this;
  Shape shape = shape_;
  Strides strides = strides_;
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d));
  strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(d));
  return view_as("squeeze", std::move(shape), std::move(strides), offset_);
}

Tensor Tensor::flatten(std::int64_t start_dim, std::int64_t end_dim) const {
  FERRITE_CHECK(defined(), InvalidArgument, "flatten: tensor is undefined");
  if (shape_.empty()) return reshape({1});
  const std::size_t s = wrapped("flatten", *this, start_dim);
  const std::size_t e = wrapped("flatten", *this, end_dim);
  FERRITE_CHECK(s <= e, InvalidArgument, "flatten: start_dim ", start_dim, " comes after end_dim ", end_dim, " for ",
                description());
  Shape shape(shape_.begin(), shape_.begin() + static_cast<std::ptrdiff_t>(s));
  std::int64_t merged = 1;
  for (std::size_t k = s; k <= e; ++k) merged *= shape_[k];  // no overflow: a factor of numel or 0
  shape.push_back(merged);
  shape.insert(shape.end(), shape_.begin() + static_cast<std::ptrdiff_t>(e) + 1, shape_.end());
  return reshape(std::move(shape));
}

Tensor Tensor::unflatten(std::int64_t dim, Shape sizes) const {
  const std::size_t d = wrapped("unflatten", *this, dim);
  FERRITE_CHECK(!shape_.empty(), InvalidArgument, "unflatten: a rank-0 tensor has no dim to unflatten");
  FERRITE_CHECK(!sizes.empty(), InvalidArgument, "unflatten: sizes must not be empty");
  // The dim becomes `sizes`, one of which may be -1 (inferred), then the rest around it.
  Shape inner = sizes;
  std::int64_t known = 1;
  int inferred = -1;
  for (std::size_t k = 0; k < inner.size(); ++k) {
    if (inner[k] == -1) {
      FERRITE_CHECK(inferred < 0, InvalidArgument, "unflatten: more than one -1 in ", shape_str(sizes));
      inferred = static_cast<int>(k);
      continue;
    }
    FERRITE_CHECK(inner[k] >= 0, InvalidArgument, "unflatten: negative size in ", shape_str(sizes));
    known = shape_numel({known, inner[k]});
  }
  if (inferred >= 0) {
    FERRITE_CHECK(known != 0 && shape_[d] % known == 0, ShapeMismatch, "unflatten: cannot infer -1 in ",
                  shape_str(sizes), " for dim ", dim, " of size ", shape_[d]);
    inner[static_cast<std::size_t>(inferred)] = shape_[d] / known;
  }
  FERRITE_CHECK(shape_numel(inner) == shape_[d], ShapeMismatch, "unflatten: sizes ", shape_str(sizes),
                " do not multiply to dim ", dim, " of size ", shape_[d], " (", description(), ")");
  Shape shape(shape_.begin(), shape_.begin() + static_cast<std::ptrdiff_t>(d));
  shape.insert(shape.end(), inner.begin(), inner.end());
  shape.insert(shape.end(), shape_.begin() + static_cast<std::ptrdiff_t>(d) + 1, shape_.end());
  return view(std::move(shape));
}

Tensor Tensor::expand(Shape target) const {
  FERRITE_CHECK(defined(), InvalidArgument, "expand: tensor is undefined");
  FERRITE_CHECK(target.size() >= shape_.size(), ShapeMismatch, "expand: ", description(), " cannot expand to ",
                shape_str(target), " (fewer dims than the tensor)");
  const std::size_t lead = target.size() - shape_.size();
  Shape shape(target.size());
  Strides strides(target.size());
  for (std::size_t k = 0; k < target.size(); ++k) {
    if (k < lead) {
      FERRITE_CHECK(target[k] >= 0, ShapeMismatch, "expand: ", shape_str(target), " for ", description(),
                    ": a new leading dim cannot be ", target[k]);
      shape[k] = target[k];
      strides[k] = 0;
      continue;
    }
    const std::int64_t have = shape_[k - lead];
    const std::int64_t want = target[k] == -1 ? have : target[k];
    FERRITE_CHECK(want == have || have == 1, ShapeMismatch, "expand: ", description(), " cannot expand to ",
                  shape_str(target), " (dim ", k, ": size ", have, " is not 1 and differs from ", target[k], ")");
    FERRITE_CHECK(want >= 0, ShapeMismatch, "expand: negative size ", want, " in ", shape_str(target));
    shape[k] = want;
    strides[k] = want == have ? strides_[k - lead] : 0;
  }
  return view_as("expand", std::move(shape), std::move(strides), offset_);
}

Tensor Tensor::transpose(std::int64_t d0, std::int64_t d1) const {
  FERRITE_CHECK(defined(), InvalidArgument, "transpose: tensor is undefined");
  if (shape_.empty()) {  // rank 0: dims 0 and -1 name the tensor itself, as PyTorch
    wrapped("transpose", *this, d0);
    wrapped("transpose", *this, d1);
    return *this;
  }
  const std::size_t a = wrapped("transpose", *this, d0);
  const std::size_t b = wrapped("transpose", *this, d1);
  Shape shape = shape_;
  Strides strides = strides_;
  std::swap(shape[a], shape[b]);
  std::swap(strides[a], strides[b]);
  return view_as("transpose", std::move(shape), std::move(strides), offset_);
}

Tensor Tensor::permute(const std::vector<std::int64_t>& dims) const {
  FERRITE_CHECK(defined(), InvalidArgument, "permute: tensor is undefined");
  FERRITE_CHECK(static_cast<std::int64_t>(dims.size()) == dim(), InvalidArgument, "permute: ", dims.size(),
                " dims given for ", description());
  std::vector<bool> seen(dims.size(), false);
  Shape shape(dims.size());
  Strides strides(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const std::size_t d = shape_.empty() ? 0 : wrapped("permute", *this, dims[k]);
    FERRITE_CHECK(!seen[d], InvalidArgument, "permute: dim ", dims[k], " appears twice in ", shape_str(dims));
    seen[d] = true;
    shape[k] = shape_[d];
    strides[k] = strides_[d];
  }
  return view_as("permute", std::move(shape), std::move(strides), offset_);
}

Tensor Tensor::t() const {
  FERRITE_CHECK(defined(), InvalidArgument, "t: tensor is undefined");
  FERRITE_CHECK(dim() <= 2, InvalidArgument, "t: expects a tensor with <= 2 dims, but ", description(), " has ", dim(),
                " (use mT or transpose)");
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::mT() const {
  FERRITE_CHECK(defined(), InvalidArgument, "mT: tensor is undefined");
  FERRITE_CHECK(dim() >= 2, InvalidArgument, "mT: expects a tensor with >= 2 dims, but ", description(), " has ",
                dim());
  return transpose(-2, -1);
}

Tensor Tensor::diagonal(std::int64_t offset, std::int64_t d1, std::int64_t d2) const {
  FERRITE_CHECK(dim() >= 2, InvalidArgument, "diagonal: expects a tensor with >= 2 dims, but ", description(),
                " has ", dim());
  const std::size_t a = wrapped("diagonal", *this, d1);
  const std::size_t b = wrapped("diagonal", *this, d2);
  FERRITE_CHECK(a != b, InvalidArgument, "diagonal: dims ", d1, " and ", d2, " name the same dim of ", description());
  // Elements (i, i + offset) for offset >= 0, (i - offset, i) below the main diagonal.
  // offset is compared with the dim before it is negated: -offset overflows for INT64_MIN.
  std::int64_t length = offset >= 0 ? std::min(shape_[a], shape_[b] - std::min(offset, shape_[b]))
                                    : std::min(offset < -shape_[a] ? 0 : shape_[a] + offset, shape_[b]);
  length = std::max<std::int64_t>(length, 0);
  std::int64_t start = offset_;
  if (length > 0) start += offset >= 0 ? offset * strides_[b] : -offset * strides_[a];
  Shape shape;
  Strides strides;
  for (std::size_t k = 0; k < shape_.size(); ++k) {
    if (k == a || k == b) continue;
    shape.push_back(shape_[k]);
    strides.push_back(strides_[k]);
  }
  shape.push_back(length);
  strides.push_back(new_stride("diagonal", length, strides_[a], strides_[b], true));
  return view_as("diagonal", std::move(shape), std::move(strides), start);
}

Tensor Tensor::unfold(std::int64_t dim, std::int64_t size, std::int64_t step) const {
  FERRITE_CHECK(defined(), InvalidArgument, "unfold: tensor is undefined");
  FERRITE_CHECK(step > 0, InvalidArgument, "unfold: step must be positive, got ", step);
  FERRITE_CHECK(size >= 0, InvalidArgument, "unfold: size must be non-negative, got ", size);
  if (shape_.empty()) {  // a rank-0 tensor unfolds as one element of a 1-D tensor
    wrapped("unfold", *this, dim);
    FERRITE_CHECK(size <= 1, IndexOutOfRange, "unfold: size ", size, " exceeds the 1 element of ", description());
    return view_as("unfold", {size}, {1}, offset_);
  }
  const std::size_t d = wrapped("unfold", *this, dim);
  FERRITE_CHECK(size <= shape_[d], IndexOutOfRange, "unfold: size ", size, " exceeds dim ", dim, " of size ",
                shape_[d], " (", description(), ")");
  Shape shape = shape_;
  Strides strides = strides_;
  // (n - size) / step + 1 windows: 2^63 windows of size 0 over a dim of 2^63 - 1 (an empty
  // tensor's) overflowed int64 (UBSan, api_fuzz_test).
  shape[d] = detail::checked_add((shape_[d] - size) / step, 1, [&] {
    return "unfold: dim " + std::to_string(dim) + " of " + description() + " has more windows of size " +
           std::to_string(size) + " than an int64 can count";
  });
  strides[d] = new_stride("unfold", shape[d], strides_[d], step, false);
  shape.push_back(size);
  strides.push_back(strides_[d]);
  return view_as("unfold", std::move(shape), std::move(strides), offset_);
}

Tensor Tensor::as_strided(Shape shape, Strides strides, std::int64_t storage_offset) const {
  FERRITE_CHECK(defined(), InvalidArgument, "as_strided: tensor is undefined");
  FERRITE_CHECK(shape.size() == strides.size(), InvalidArgument, "as_strided: shape ", shape_str(shape), " has ",
                shape.size(), " dims but strides ", shape_str(strides), " has ", strides.size());
  FERRITE_CHECK(storage_offset >= 0, InvalidArgument, "as_strided: negative storage offset ", storage_offset);
  const std::int64_t numel = shape_numel(shape);  // checks the sizes
  __int128 last = storage_offset;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    FERRITE_CHECK(strides[k] >= 0, InvalidArgument, "as_strided: negative stride in ", shape_str(strides));
    last += static_cast<__int128>(shape[k] - 1) * strides[k];
  }
  const auto room = static_cast<std::int64_t>(storage_->bytes() / element_size());
  FERRITE_CHECK(numel == 0 || last < room, IndexOutOfRange, "as_strided: shape ", shape_str(shape), ", strides ",
                shape_str(strides), " and offset ", storage_offset, " reach past the ", room,
                " elements of the storage of ", description());
  return view_as("as_strided", std::move(shape), std::move(strides), storage_offset);
}

}  // namespace ferrite
