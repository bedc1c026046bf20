// Conformance entries of the composite reductions and joins: sum over a list of dims,
// max/min along a dim with indices, and stack, against independent host references.
#include <cmath>

#include "conformance/reduction_test_support.hpp"

namespace ferrite::conformance {
namespace {

using namespace reduction_support;

/// Case::ints: the dims; Case::reals[0]: keepdim (0 or 1).
std::vector<Case> dims_cases(DType d, Rng& rng) {
  const auto make = [&](const std::string& label, const Shape& s, std::vector<std::int64_t> dims, bool keep) {
    return Case{label, {values_for(s, d, rng, true)}, std::move(dims), {keep ? 1.0 : 0.0}};
  };
  return {make("[3, 4, 5] dims {0, 2}", {3, 4, 5}, {0, 2}, false),
          make("[3, 4, 5] dims {2, 0} keepdim", {3, 4, 5}, {2, 0}, true),
          make("[2, 3, 33, 17] dims {-1, -2} (trailing)", {2, 3, 33, 17}, {-1, -2}, false),
          make("[5, 2, 7, 3] dims {0, 1, 3}", {5, 2, 7, 3}, {0, 1, 3}, true),
          make("[64, 300] dims {0}", {64, 300}, {0}, false),
          make("[2, 0, 3] dims {0, 1}", {2, 0, 3}, {0, 1}, false),
          make("[4, 6] dims {} (all)", {4, 6}, {}, false),
          make("rank 0 dims {0}", {}, {0}, false)};
}

/// The exact sum over the listed dims (every dim when the list is empty).
Tensor ref_sum_dims(const Tensor& x, std::vector<std::int64_t> dims, bool keep) {
  const Shape& shape = x.shape();
  const auto rank = static_cast<std::int64_t>(shape.size());
  std::vector<bool> red(static_cast<std::size_t>(rank), dims.empty());
  for (auto d : dims)
    if (rank > 0) red[static_cast<std::size_t>(d < 0 ? d + rank : d)] = true;
  Shape out_shape, keep_shape;
  for (std::int64_t k = 0; k < rank; ++k) {
    keep_shape.push_back(red[k] ? 1 : shape[k]);
    if (!red[k]) out_shape.push_back(shape[k]);
  }
  const auto v = reference::values(x);
  std::vector<long double> out(static_cast<std::size_t>(shape_numel(keep_shape)), 0.0L);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    std::int64_t rest = i, o = 0, stride = 1;
    for (std::int64_t k = rank - 1; k >= 0; --k) {
      const std::int64_t idx = rest % shape[k];
      rest /= shape[k];
      if (!red[k]) o += idx * stride;
      stride *= keep_shape[k];
    }
    out[static_cast<std::size_t>(o)] += v[static_cast<std::size_t>(i)];
  }
  return reference::from_values(out, keep ? keep_shape : out_shape, is_floating(x.dtype()) ? x.dtype() : DType::I64);
}

Entry sum_dims_entry() {
  Entry e;
  e.op = "sum(dims)";
  e.dtypes = kRealTypes;
  e.cases = dims_cases;
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{sum(c.inputs[0], c.ints, c.reals[0] != 0)}; };
  e.reference_outputs = [](const Case& c) {
    return std::vector<Tensor>{ref_sum_dims(c.inputs[0], c.ints, c.reals[0] != 0)};
  };
  e.reference_tolerance = cpu_rounding;
  e.backend_tolerance = accumulated;
  e.on_dense_block = [](const Case& c, const Tensor& dense, const std::vector<std::int64_t>& perm) {
    const auto rank = static_cast<std::int64_t>(perm.size());
    Case mapped = c;
    mapped.inputs = {dense};
    mapped.ints.clear();
    std::vector<bool> reduced(static_cast<std::size_t>(rank), c.ints.empty());
    for (std::int64_t d : c.ints) {
      const std::int64_t w = d < 0 ? d + rank : d;
      reduced[static_cast<std::size_t>(w)] = true;
      mapped.ints.push_back(perm[static_cast<std::size_t>(w)]);
    }
    return std::make_pair(mapped, reduced);
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{{"repeated dim", [d](Device dev) { sum(zeros({2, 3}, d, dev), {1, -1}); },
                                   ErrorKind::InvalidArgument, "sum: dim 1 appears multiple times"}};
  };
  return e;
}
FERRITE_CONFORMANCE(sum_dims_entry());

Entry max_min_dim_entry(bool is_max) {
  Entry e;
  e.op = is_max ? "max(dim)" : "min(dim)";
  e.dtypes = kRealTypes;
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& [s, dim] : std::vector<std::pair<Shape, std::int64_t>>{
             {{7, 33}, 1}, {{7, 33}, 0}, {{3, 5, 4}, -2}, {{1, 1000}, -1}, {{}, 0}})
      cases.push_back({shape_str(s) + " dim " + std::to_string(dim), {values_for(s, d, rng)}, {dim}});
    // Many ties: the first occurrence wins.
    cases.push_back({"ties [8, 513]", {random({8, 513}, d, rng, -0.04, 0.04).to(DType::I32).to(d)}, {1}});
    if (is_floating(d)) cases.push_back({"extremes", {extremes(d, 1000, rng).reshape({10, 100})}, {1}});
    return cases;
  };
  e.run_outputs = [is_max](const Case& c) {
    auto [values, indices] = is_max ? max(c.inputs[0], c.ints[0]) : min(c.inputs[0], c.ints[0]);
    return std::vector<Tensor>{values, indices};
  };
  e.reference_outputs = [is_max](const Case& c) {
    const Tensor& x = c.inputs[0];
    const auto v = reference::values(x);
    const Extents ex = extents_of(x.shape(), c.ints[0]);
    std::vector<long double> values, indices;
    for (std::int64_t k = 0; k < ex.outer * ex.inner; ++k) {
      std::int64_t at = 0;
      for (std::int64_t j = 1; j < ex.dim; ++j) {
        const long double a = v[flat(ex, k, j)], b = v[flat(ex, k, at)];
        // The first NaN is the extreme; otherwise only a strictly better value moves it.
        if (!std::isnan(b) && (std::isnan(a) || (is_max ? a > b : a < b))) at = j;
      }
      values.push_back(v[flat(ex, k, at)]);
      indices.push_back(static_cast<long double>(at));
    }
    const Shape out = reduced(x.shape(), c.ints[0], false);
    return std::vector<Tensor>{reference::from_values(values, out, x.dtype()),
                               reference::from_values(indices, out, DType::I64)};
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.on_dense_block = dim_case_on_dense_block;
  e.errors = [is_max](DType d) {
    return std::vector<ErrorCase>{{"dim out of range",
                                   [d, is_max](Device dev) {
                                     const Tensor x = zeros({3, 4}, d, dev);
                                     is_max ? max(x, 2) : min(x, 2);
                                   },
                                   ErrorKind::IndexOutOfRange, "dim 2 is out of range"}};
  };
  return e;
}
FERRITE_CONFORMANCE(max_min_dim_entry(true));
FERRITE_CONFORMANCE(max_min_dim_entry(false));

Entry stack_entry() {
  Entry e;
  e.op = "stack";
  e.dtypes = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64, DType::Bool};
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    for (std::int64_t dim : {0, 1, 2, -1})
      cases.push_back({"3 x [3, 5] dim " + std::to_string(dim),
                       {random({3, 5}, d, rng), random({3, 5}, d, rng), random({3, 5}, d, rng)},
                       {dim}});
    cases.push_back({"2 x [0, 4] dim 1", {random({0, 4}, d, rng), random({0, 4}, d, rng)}, {1}});
    return cases;
  };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{stack(c.inputs, c.ints[0])}; };
  e.reference_outputs = [](const Case& c) {
    // out[o, n, i] = inputs[n][o, i] with `dim` splitting each input's shape into o and i.
    const Shape& s = c.inputs[0].shape();
    const auto rank = static_cast<std::int64_t>(s.size());
    const std::int64_t dim = c.ints[0] < 0 ? c.ints[0] + rank + 1 : c.ints[0];
    std::int64_t outer = 1, inner = 1;
    for (std::int64_t k = 0; k < rank; ++k) (k < dim ? outer : inner) *= s[k];
    const auto n = static_cast<std::int64_t>(c.inputs.size());
    std::vector<std::vector<long double>> in;
    for (const Tensor& t : c.inputs) in.push_back(reference::values(t));
    std::vector<long double> out;
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t t = 0; t < n; ++t)
        for (std::int64_t i = 0; i < inner; ++i) out.push_back(in[t][o * inner + i]);
    Shape out_shape = s;
    out_shape.insert(out_shape.begin() + dim, n);
    return std::vector<Tensor>{reference::from_values(out, out_shape, c.inputs[0].dtype())};
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{{"unequal shapes", [d](Device dev) { stack({zeros({2}, d, dev), zeros({3}, d, dev)}); },
                                   ErrorKind::ShapeMismatch, "stack: expects each tensor to be equal size"}};
  };
  return e;
}
FERRITE_CONFORMANCE(stack_entry());

}  // namespace
}  // namespace ferrite::conformance
