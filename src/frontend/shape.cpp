// Front end of the shape ops: every op becomes one or more copy_view calls (a strided read
// into a strided write), validated here.
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "core/extent.hpp"
#include "core/host_scratch.hpp"
#include "ferrite/backend.hpp"
#include "ferrite/shape.hpp"
#include "frontend/checks.hpp"
#include "frontend/shape_helpers.hpp"
#include "frontend/strided.hpp"

namespace ferrite {
namespace {

using frontend::contiguous_view;
using frontend::wrap_dim;

const char* name_of(Op op) { return op_name(op).data(); }

void check_one(Op op, const Tensor& x) {
  frontend::check_defined(name_of(op), {&x});
  frontend::check_supported(op, x.dtype(), x.device());
}

void run_copy(const Tensor& src, const StridedView& src_view, const Tensor& dst, const StridedView& dst_view) {
  for (int k = 0; k < src_view.rank; ++k)
    if (src_view.sizes[k] == 0) return;  // nothing to copy
  // dst's own window at any alignment: it is written (buffer() may hand out a copy).
  frontend::shape_ops_of(dst.device()).copy_view(src.buffer(), src_view, frontend::strided_buffer(dst), dst_view);
}

// The lowest and highest element a view addresses (the view is not empty).
std::pair<__int128, __int128> view_extent(const Shape& shape, const std::vector<std::int64_t>& strides,
                                          std::int64_t offset) {
  __int128 lo = offset, hi = offset;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const __int128 span = static_cast<__int128>(shape[k] - 1) * strides[k];
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi};
}

// Decimal text of an extent, which may lie beyond int64 for views with huge strides.
std::string extent_str(__int128 v) {
  if (v >= std::numeric_limits<std::int64_t>::min() && v <= std::numeric_limits<std::int64_t>::max())
    return std::to_string(static_cast<long long>(v));
  std::string digits;
  const bool negative = v < 0;
  do {
    const int digit = static_cast<int>(v % 10);
    digits.insert(digits.begin(), static_cast<char>('0' + (negative ? -digit : digit)));
    v /= 10;
  } while (v != 0);
  return negative ? "-" + digits : digits;
}

StridedView make_view(const char* op, const Shape& shape, const std::vector<std::int64_t>& strides, std::int64_t offset,
                      const Tensor& storage) {
  FERRITE_CHECK(shape.size() <= static_cast<std::size_t>(kMaxViewDims), InvalidArgument, op, ": view shape ",
                shape_str(shape), " has more than ", kMaxViewDims, " dims");
  FERRITE_CHECK(strides.size() == shape.size(), InvalidArgument, op, ": view shape ", shape_str(shape), " has ",
                shape.size(), " dims but strides ", shape_str(strides), " has ", strides.size());
  const std::int64_t n = shape_numel(shape);
  if (n > 0) {
    const auto [lo, hi] = view_extent(shape, strides, offset);
    FERRITE_CHECK(lo >= 0 && hi < storage.numel(), IndexOutOfRange, op, ": the view (shape ", shape_str(shape),
                  ", strides ", shape_str(strides), ", offset ", offset, ") addresses elements ",
                  extent_str(lo), "..", extent_str(hi), ", outside the ", storage.numel(),
                  " elements of ", storage.description());
  }
  StridedView v;
  v.rank = static_cast<int>(shape.size());
  v.offset = offset;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    v.sizes[k] = shape[k];
    // A dim of one element is never stepped over, so any stride reaches the same elements;
    // 0 keeps the kernels' odometer, which steps one past the last index (offset + size *
    // stride), inside int64: a stride near 2^63 overflowed there (UBSan, api_fuzz_test).
    v.strides[k] = shape[k] == 1 ? 0 : strides[k];
  }
  return v;
}

// A copy of src that shares no element with dst, so an in-place op never reads what it has
// already overwritten.
Tensor unaliased(const Tensor& src, const Tensor& dst) { return frontend::may_overlap(src, dst) ? src.clone() : src; }

}  // namespace

Tensor transpose(const Tensor& x, std::int64_t d0, std::int64_t d1) {
  check_one(Op::Transpose, x);
  const char* op = name_of(Op::Transpose);
  wrap_dim(op, x, d0);
  wrap_dim(op, x, d1);
  return x.transpose(d0, d1);  // a view, as torch.transpose; .contiguous() materialises it
}

Tensor permute(const Tensor& x, const std::vector<std::int64_t>& dims) {
  check_one(Op::Permute, x);
  const char* op = name_of(Op::Permute);
  const std::int64_t rank = x.dim();
  FERRITE_CHECK(static_cast<std::int64_t>(dims.size()) == rank, InvalidArgument, op, ": dims ", shape_str(dims),
                " is not a permutation of the ", rank, " dims of ", x.description());
  std::vector<std::int64_t> wrapped(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (std::size_t k = 0; k < dims.size(); ++k) {
    wrapped[k] = wrap_dim(op, x, dims[k]);
    FERRITE_CHECK(!seen[wrapped[k]], InvalidArgument, op, ": dims ", shape_str(dims), " is not a permutation of the ",
                  rank, " dims of ", x.description(), " (dim ", wrapped[k], " repeats)");
    seen[wrapped[k]] = true;
  }
  return x.permute(wrapped);  // a view, as torch.permute
}

Tensor strided_copy(const Tensor& x, const Shape& shape, const std::vector<std::int64_t>& strides, std::int64_t offset) {
  check_one(Op::StridedCopy, x);
  const char* op = name_of(Op::StridedCopy);
  shape_numel(shape);  // rejects negative sizes
  const StridedView src = make_view(op, shape, strides, offset, x);
  Tensor out = frontend::allocate(shape, x.dtype(), x.device());
  run_copy(x, src, out, contiguous_view(shape));
  return out;
}

void strided_scatter(const Tensor& dst, const Tensor& src, const Shape& shape, const std::vector<std::int64_t>& strides,
                     std::int64_t offset) {
  const char* op = name_of(Op::StridedScatter);
  frontend::check_defined(op, {&dst, &src});
  frontend::check_same_device(op, {&dst, &src});
  frontend::check_same_dtype(op, {&dst, &src});
  frontend::check_supported(Op::StridedScatter, dst.dtype(), dst.device());
  if (!dst.is_contiguous()) {
    // The view addresses dst's elements in row-major order: scatter into a dense copy and
    // write that back through dst's strides.
    frontend::check_writable(op, dst);
    const Tensor dense = dst.contiguous();
    strided_scatter(dense, src, shape, strides, offset);
    frontend::copy_elements(dense, dst);
    return;
  }
  const std::int64_t n = shape_numel(shape);
  FERRITE_CHECK(src.numel() == n, ShapeMismatch, op, ": src ", src.description(), " has ", src.numel(),
                " elements but the view shape ", shape_str(shape), " has ", n);
  const StridedView dst_view = make_view(op, shape, strides, offset, dst);
  FERRITE_CHECK(frontend::addresses_each_element_once(shape, strides), InvalidArgument, op, ": the view (shape ", shape_str(shape),
                ", strides ", shape_str(strides), ") may address an element of ", dst.description(),
                " more than once; the order of such writes would be undefined");
  run_copy(unaliased(src, dst), contiguous_view(shape), dst, dst_view);
}

Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
  const char* op = name_of(Op::Cat);
  FERRITE_CHECK(!tensors.empty(), InvalidArgument, op, ": no tensors to concatenate");
  const Tensor& first = tensors[0];
  for (const Tensor& t : tensors) {
    frontend::check_defined(op, {&t});
    frontend::check_same_device(op, {&first, &t});
    frontend::check_same_dtype(op, {&first, &t});
  }
  frontend::check_supported(Op::Cat, first.dtype(), first.device());
  FERRITE_CHECK(first.dim() > 0, InvalidArgument, op, ": a rank-0 tensor ", first.description(),
                " cannot be concatenated (it has no dim to join along)");
  const std::int64_t d = wrap_dim(op, first, dim);
  Shape out_shape = first.shape();
  out_shape[d] = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    bool fits = t.dim() == first.dim();
    for (std::int64_t k = 0; fits && k < t.dim(); ++k) fits = k == d || t.shape()[k] == first.shape()[k];
    FERRITE_CHECK(fits, ShapeMismatch, op, ": tensor ", i, " is ", t.description(), " but tensor 0 is ",
                  first.description(), "; all dims except dim ", d, " must match");
    out_shape[d] = detail::checked_add(out_shape[d], t.shape()[d], [&] {
      return std::string(op) + ": the sizes of dim " + std::to_string(d) + " of the " +
             std::to_string(tensors.size()) + " tensors (tensor 0 " + first.description() +
             ") add up to more than an int64 can count";
    });
  }
  Tensor out = frontend::allocate(out_shape, first.dtype(), first.device());
  if (out.numel() == 0) return out;
  const auto out_strides = detail::checked_contiguous_strides(out_shape, op);
  std::int64_t at = 0;
  for (const Tensor& t : tensors) {
    StridedView dst = contiguous_view(t.shape());
    for (int k = 0; k < dst.rank; ++k) dst.strides[k] = out_strides[k];
    dst.offset = at * out_strides[d];
    run_copy(t, contiguous_view(t.shape()), out, dst);
    at += t.shape()[d];
  }
  return out;
}

namespace {
// Pieces along d as views of x (torch.split returns views).
// The pieces' vector through host_scratch: a count no host can hold is Error(OutOfMemory),
// not a std::bad_alloc from push_back.
std::vector<Tensor> split_impl(const char* op, const Tensor& x, const std::vector<std::int64_t>& sizes, std::int64_t d) {
  std::vector<Tensor> pieces = detail::host_scratch<Tensor>(static_cast<std::int64_t>(sizes.size()), op);
  std::int64_t at = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    pieces[i] = x.narrow(d, at, sizes[i]);
    at += sizes[i];
  }
  return pieces;
}
}  // namespace

std::vector<Tensor> split(const Tensor& x, const std::vector<std::int64_t>& sizes, std::int64_t dim) {
  check_one(Op::Split, x);
  const char* op = name_of(Op::Split);
  FERRITE_CHECK(x.dim() > 0, InvalidArgument, op, ": a rank-0 tensor ", x.description(), " cannot be split");
  const std::int64_t d = wrap_dim(op, x, dim);
  std::int64_t total = 0;
  for (std::int64_t s : sizes) {
    FERRITE_CHECK(s >= 0, InvalidArgument, op, ": sizes ", shape_str(sizes), " has a negative size");
    total = detail::checked_add(
        total, s,
        [&] {
          return std::string(op) + ": sizes " + shape_str(sizes) + " add up to more than an int64 can count but dim " +
                 std::to_string(d) + " of " + x.description() + " has " + std::to_string(x.shape()[d]);
        },
        ErrorKind::ShapeMismatch);
  }
  FERRITE_CHECK(total == x.shape()[d], ShapeMismatch, op, ": sizes ", shape_str(sizes), " add up to ", total,
                " but dim ", d, " of ", x.description(), " has ", x.shape()[d]);
  return split_impl(op, x, sizes, d);
}

std::vector<Tensor> chunk(const Tensor& x, std::int64_t n, std::int64_t dim) {
  check_one(Op::Chunk, x);
  const char* op = name_of(Op::Chunk);
  FERRITE_CHECK(n > 0, InvalidArgument, op, ": the number of chunks must be positive, got ", n);
  FERRITE_CHECK(x.dim() > 0, InvalidArgument, op, ": a rank-0 tensor ", x.description(), " cannot be chunked");
  const std::int64_t d = wrap_dim(op, x, dim);
  const std::int64_t size = x.shape()[d];
  const std::int64_t piece = size / n + (size % n != 0);  // ceil, without overflow for any n
  // torch.chunk of an empty dim gives `n` empty pieces (it calls split_with_sizes so that the
  // count is not lost); otherwise pieces of ceil(size / n), the last one shorter.
  // The count is known before anything is built: chunk(x, 2^62, d) of a dim of 2^40 (an
  // empty x) asks for 2^40 pieces, which pushing one by one took until memory ran out.
  const std::int64_t count = size == 0 ? n : size / piece + (size % piece != 0);
  std::vector<std::int64_t> sizes = detail::host_scratch<std::int64_t>(count, op, 0);
  for (std::int64_t i = 0; size > 0 && i < count; ++i)
    sizes[static_cast<std::size_t>(i)] = std::min(piece, size - i * piece);
  return split_impl(op, x, sizes, d);
}

Tensor repeat(const Tensor& x, const std::vector<std::int64_t>& reps) {
  check_one(Op::Repeat, x);
  const char* op = name_of(Op::Repeat);
  FERRITE_CHECK(static_cast<std::int64_t>(reps.size()) >= x.dim(), InvalidArgument, op, ": reps ", shape_str(reps),
                " has fewer entries than the ", x.dim(), " dims of ", x.description());
  FERRITE_CHECK(2 * reps.size() <= static_cast<std::size_t>(kMaxViewDims), InvalidArgument, op, ": reps ",
                shape_str(reps), " has more than ", kMaxViewDims / 2, " entries");
  const std::size_t r = reps.size(), lead = r - static_cast<std::size_t>(x.dim());
  Shape in_shape(lead, 1);
  in_shape.insert(in_shape.end(), x.shape().begin(), x.shape().end());
  const auto in_strides = detail::checked_contiguous_strides(in_shape, op);
  Shape out_shape(r), tiled(2 * r);
  StridedView src;
  src.rank = static_cast<int>(2 * r);
  for (std::size_t k = 0; k < r; ++k) {
    FERRITE_CHECK(reps[k] >= 0, InvalidArgument, op, ": reps ", shape_str(reps), " has a negative entry");
    out_shape[k] = detail::checked_mul(in_shape[k], reps[k], [&] {
      return std::string(op) + ": reps " + shape_str(reps) + " of " + x.description() +
             " give a dim of more elements than an int64 can count";
    });
    // Dim k of the output is [reps[k], in_shape[k]]: the repeat index reads with stride 0.
    tiled[2 * k] = src.sizes[2 * k] = reps[k];
    tiled[2 * k + 1] = src.sizes[2 * k + 1] = in_shape[k];
    src.strides[2 * k] = 0;
    src.strides[2 * k + 1] = in_strides[k];
  }
  Tensor out = frontend::allocate(out_shape, x.dtype(), x.device());
  // An empty result may come from huge tiles (reps 0 of a dim of 2^62): no view to build.
  if (out.numel() == 0) return out;
  run_copy(x, src, out, contiguous_view(tiled));
  return out;
}

Tensor roll(const Tensor& x, std::int64_t shift, std::int64_t dim) {
  check_one(Op::Roll, x);
  const char* op = name_of(Op::Roll);
  const std::int64_t d = wrap_dim(op, x, dim);
  if (x.dim() == 0 || x.numel() == 0) return x.clone();
  const Tensor dense = x.contiguous();  // read twice below: materialise a strided x once
  const std::int64_t n = x.shape()[d];
  const std::int64_t s = ((shift % n) + n) % n;
  Tensor out = frontend::allocate(x.shape(), x.dtype(), x.device());
  const auto strides = detail::checked_contiguous_strides(x.shape(), op);
  // Two block copies: x[.., 0:n-s, ..] -> out[.., s:n, ..] and x[.., n-s:n, ..] -> out[.., 0:s, ..].
  auto piece = [&](std::int64_t from, std::int64_t to, std::int64_t len) {
    StridedView src = contiguous_view(x.shape()), dst = contiguous_view(x.shape());
    src.sizes[d] = dst.sizes[d] = len;
    src.offset = from * strides[d];
    dst.offset = to * strides[d];
    run_copy(dense, src, out, dst);
  };
  piece(0, s, n - s);
  piece(n - s, 0, s);
  return out;
}

void slice_write(const Tensor& cache, const Tensor& src, std::int64_t pos) {
  const char* op = name_of(Op::SliceWrite);
  frontend::check_defined(op, {&cache, &src});
  frontend::check_same_device(op, {&cache, &src});
  frontend::check_same_dtype(op, {&cache, &src});
  frontend::check_supported(Op::SliceWrite, cache.dtype(), cache.device());
  FERRITE_CHECK(cache.dim() >= 2, InvalidArgument, op, ": cache ", cache.description(),
                " must be [batch, max_len, ...] (rank >= 2)");
  Shape row_shape = cache.shape();
  row_shape.erase(row_shape.begin() + 1);
  FERRITE_CHECK(src.shape() == row_shape, ShapeMismatch, op, ": src is ", src.description(), ", expected shape ",
                shape_str(row_shape), " for cache ", cache.description());
  const std::int64_t max_len = cache.shape()[1];
  FERRITE_CHECK(pos >= 0 && pos < max_len, IndexOutOfRange, op, ": position ", pos, " is outside [0, ", max_len,
                ") of cache ", cache.description());
  const Tensor row = cache.select(1, pos);  // a view of any cache, strided or not
  frontend::check_writable(op, row);
  frontend::copy_elements(unaliased(src, cache), row);
}

Tensor slice_read(const Tensor& cache, std::int64_t len) {
  check_one(Op::SliceRead, cache);
  const char* op = name_of(Op::SliceRead);
  FERRITE_CHECK(cache.dim() >= 2, InvalidArgument, op, ": cache ", cache.description(),
                " must be [batch, max_len, ...] (rank >= 2)");
  const std::int64_t max_len = cache.shape()[1];
  FERRITE_CHECK(len >= 0 && len <= max_len, IndexOutOfRange, op, ": length ", len, " is outside [0, ", max_len,
                "] of cache ", cache.description());
  return cache.narrow(1, 0, len);  // a view, as cache[:, :len] in PyTorch
}

}  // namespace ferrite
