// Reductions over a list of dims, and max/min along a dim with indices, built from the
// single-dim reductions (src/frontend/reduction.cpp).
#include <algorithm>

#include "ferrite/reduction.hpp"
#include "ferrite/shape.hpp"
#include "frontend/checks.hpp"
#include "frontend/reduction_common.hpp"

namespace ferrite {
namespace {

using SingleDim = Tensor (*)(const Tensor&, std::int64_t, bool);

/// Moves the listed dims to the end (permute copies only when they are not trailing
/// already), merges them into one and reduces it once: one rounding, as a single-dim op.
/// A transposed or permuted dense x is reduced as its dense block, over the same dims mapped
/// through the permutation (frontend::ReductionInput), so its dims merge as they lie in memory.
Tensor reduce_dims(const char* op, SingleDim reduce, const Tensor& x, const std::vector<std::int64_t>& dims,
                   bool keepdim) {
  frontend::check_defined(op, {&x});
  const std::int64_t rank = x.dim();
  std::vector<bool> reduced(static_cast<std::size_t>(rank), dims.empty());  // [] reduces every dim
  for (std::int64_t d : dims) {
    const std::int64_t w = frontend::wrap_dim(op, x, d);
    if (rank == 0) continue;  // a rank-0 tensor takes 0 and -1 and has nothing to move
    FERRITE_CHECK(!reduced[static_cast<std::size_t>(w)], InvalidArgument, op, ": dim ", w,
                  " appears multiple times in the list of dims");
    reduced[static_cast<std::size_t>(w)] = true;
  }
  if (const frontend::ReductionInput in = frontend::reduction_input(x); in.permuted()) {
    std::vector<std::int64_t> mapped;
    for (std::int64_t d = 0; d < rank; ++d)
      if (reduced[static_cast<std::size_t>(d)]) mapped.push_back(in.dense_dim(d));
    return in.to_view_order(reduce_dims(op, reduce, in.dense, mapped, false), reduced, keepdim, x.shape());
  }
  std::vector<std::int64_t> order;
  Shape merged, kept_shape = x.shape();
  std::int64_t extent = 1;
  for (std::int64_t d = 0; d < rank; ++d)
    if (!reduced[static_cast<std::size_t>(d)]) {
      order.push_back(d);
      merged.push_back(x.shape()[static_cast<std::size_t>(d)]);
    }
  for (std::int64_t d = 0; d < rank; ++d)
    if (reduced[static_cast<std::size_t>(d)]) {
      order.push_back(d);
      extent *= x.shape()[static_cast<std::size_t>(d)];  // fits: a factor of numel
      kept_shape[static_cast<std::size_t>(d)] = 1;
    }
  merged.push_back(extent);
  bool identity = true;
  for (std::int64_t k = 0; k < rank; ++k) identity = identity && order[static_cast<std::size_t>(k)] == k;
  const Tensor moved = identity ? x : permute(x, order);
  Tensor out = reduce(moved.reshape(merged), -1, false);
  if (keepdim) return out.reshape(kept_shape);
  return out;
}

Tensor sum_dim(const Tensor& x, std::int64_t d, bool k) { return sum(x, d, k); }
Tensor mean_dim(const Tensor& x, std::int64_t d, bool k) { return mean(x, d, k); }
Tensor amin_dim(const Tensor& x, std::int64_t d, bool k) { return amin(x, d, k); }
Tensor amax_dim(const Tensor& x, std::int64_t d, bool k) { return amax(x, d, k); }
Tensor any_dim(const Tensor& x, std::int64_t d, bool k) { return any(x, d, k); }
Tensor all_dim(const Tensor& x, std::int64_t d, bool k) { return all(x, d, k); }

}  // namespace

Tensor sum(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  return reduce_dims("sum", sum_dim, x, dims, keepdim);
}
Tensor mean(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  return reduce_dims("mean", mean_dim, x, dims, keepdim);
}
Tensor amin(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  return reduce_dims("amin", amin_dim, x, dims, keepdim);
}
Tensor amax(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  return reduce_dims("amax", amax_dim, x, dims, keepdim);
}
Tensor any(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  return reduce_dims("any", any_dim, x, dims, keepdim);
}
Tensor all(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  return reduce_dims("all", all_dim, x, dims, keepdim);
}

std::pair<Tensor, Tensor> max(const Tensor& x, std::int64_t dim, bool keepdim) {
  return {amax(x, dim, keepdim), argmax(x, dim, keepdim)};
}
std::pair<Tensor, Tensor> min(const Tensor& x, std::int64_t dim, bool keepdim) {
  return {amin(x, dim, keepdim), argmin(x, dim, keepdim)};
}

}  // namespace ferrite
