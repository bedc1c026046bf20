// Conformance entries of the reductions: sum, mean, prod, amin, amax, any, all, argmax,
// argmin, masked_amin, masked_amax and prod_backward (with a finite-difference check in F64).
#include <functional>

#include "conformance/reduction_test_support.hpp"

namespace ferrite::conformance {
namespace {

using namespace reduction_support;

using Reduce = std::function<Tensor(const Tensor&, std::int64_t dim, bool keepdim)>;
/// The exact result of one output column (the input's elements along the dim, in order).
using ColumnRef = std::function<long double(DType, const std::vector<long double>&)>;

long double wrap_int64(__int128 v) { return static_cast<std::int64_t>(static_cast<std::uint64_t>(static_cast<unsigned __int128>(v))); }

long double ref_sum(DType d, const std::vector<long double>& col) {
  if (!is_floating(d)) {
    __int128 s = 0;
    for (long double v : col) s += static_cast<__int128>(v);
    return wrap_int64(s);
  }
  long double s = 0;
  for (long double v : col) s += v;
  return s;
}
long double ref_mean(DType d, const std::vector<long double>& col) {
  return col.empty() ? std::numeric_limits<long double>::quiet_NaN() : ref_sum(d, col) / static_cast<long double>(col.size());
}
long double ref_prod(DType d, const std::vector<long double>& col) {
  if (!is_floating(d)) {  // modulo 2^64, as int64 arithmetic wraps
    std::uint64_t p = 1;
    for (long double v : col) p *= static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    return static_cast<std::int64_t>(p);
  }
  long double p = 1;
  for (long double v : col) p *= v;
  return p;
}
long double ref_extreme(bool max, const std::vector<long double>& col) {
  long double best = col.at(0);
  for (long double v : col) {
    if (std::isnan(v)) return v;
    if (max ? v > best : v < best) best = v;
  }
  return best;
}

DType result_dtype(const std::string& op, DType d) {
  if ((op == "sum" || op == "prod") && !is_floating(d)) return DType::I64;
  return d;
}

Tensor reduce_reference(const std::string& op, const Case& c, const ColumnRef& ref) {
  const Tensor& x = c.inputs[0];
  const auto v = reference::values(x);
  const Extents e = extents_of(x.shape(), c.ints[0]);
  std::vector<long double> out(static_cast<std::size_t>(e.outer * e.inner));
  for (std::int64_t k = 0; k < e.outer * e.inner; ++k) {
    std::vector<long double> col(static_cast<std::size_t>(e.dim));
    for (std::int64_t j = 0; j < e.dim; ++j) col[j] = v[flat(e, k, j)];
    out[k] = ref(x.dtype(), col);
  }
  return reference::from_values(out, reduced(x.shape(), c.ints[0], c.ints[1] != 0), result_dtype(op, x.dtype()));
}

// Odd integers in [-7, 7]: products of long rows stay nonzero modulo 2^64.
Tensor odd_integers(const Shape& shape, DType dtype, Rng& rng) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(shape_numel(shape)));
  for (auto& x : v) x = 2 * static_cast<std::int64_t>(rng() % 8) - 7;
  return from_vector(v, shape).to(dtype);
}

enum class Values { Signed, Positive, NearOne };

Tensor make_values(Values kind, const Shape& shape, DType dtype, Rng& rng) {
  // Products over at most every element of the shape.
  if (kind == Values::NearOne)
    return is_floating(dtype) ? near_one(shape, dtype, rng, shape_numel(shape)) : odd_integers(shape, dtype, rng);
  return values_for(shape, dtype, rng, kind == Values::Positive);
}

struct ReduceCaseOptions {
  Values values = Values::Signed;
  bool empty_dims = true;  // ops with an identity (sum, prod, mean)
  bool long_rows = true;
};

std::vector<Case> reduce_cases(DType dtype, Rng& rng, ReduceCaseOptions o) {
  auto make = [&](const Shape& s) { return make_values(o.values, s, dtype, rng); };
  // Long rows: signed values cancel, so additive reductions take positive ones there.
  auto make_long = [&](const Shape& s) {
    return make_values(o.values == Values::Signed && o.empty_dims ? Values::Positive : o.values, s, dtype, rng);
  };
  std::vector<Case> cases = {
      {"[5, 7] dim -1", {make({5, 7})}, {-1, 0}},
      {"[3, 1] dim 1", {make({3, 1})}, {1, 0}},
      {"[4, 1025] dim -1", {make({4, 1025})}, {-1, 0}},
      {"[3, 4096] dim 1 keepdim", {make({3, 4096})}, {1, 1}},
      {"[7, 5, 3] dim 1", {make({7, 5, 3})}, {1, 0}},
      {"[7, 5, 3] dim 0 keepdim", {make({7, 5, 3})}, {0, 1}},
      {"[33, 17] dim -2", {make({33, 17})}, {-2, 0}},
      {"[2, 3, 4] all", {make({2, 3, 4})}, {kAll, 0}},
      {"rank 0 all", {make({})}, {kAll, 0}},
      {"rank 0 dim 0", {make({})}, {0, 0}},
      {"[1025] all", {make({1025})}, {kAll, 0}},
      {"[1] all", {make({1})}, {kAll, 0}},
      {"all equal [4, 1025]", {all_equal({4, 1025}, dtype)}, {-1, 0}},
      {"-Inf in rows [6, 1025]", {with_negative_infinity(make({6, 1025}), rng)}, {-1, 0}},
      {"[0, 5] dim -1 (no output)", {make({0, 5})}, {-1, 0}},
  };
  if (o.empty_dims) {
    cases.push_back({"[3, 0] dim -1 (empty rows)", {make({3, 0})}, {-1, 0}});
    cases.push_back({"[0] all", {make({0})}, {kAll, 0}});
  }
  if (o.long_rows) {
    cases.push_back({"[2, 262144] dim -1", {make_long({2, 262144})}, {-1, 0}});
    cases.push_back({"[262147] all", {make_long({262147})}, {kAll, 0}});
    cases.push_back({"[1000, 300] all", {make_long({1000, 300})}, {kAll, 0}});
    cases.push_back({"[16384, 3] dim 0", {make_long({16384, 3})}, {0, 0}});
  }
  return cases;
}

Entry reduce_entry(const std::string& name, const std::vector<DType>& dtypes, Reduce fn, ColumnRef ref,
                   ReduceCaseOptions options, std::function<Tolerance(DType)> gpu_tolerance) {
  Entry e;
  e.op = name;
  e.dtypes = dtypes;
  e.cases = [options](DType d, Rng& rng) { return reduce_cases(d, rng, options); };
  e.run_outputs = [fn](const Case& c) { return std::vector<Tensor>{fn(c.inputs[0], c.ints[0], c.ints[1] != 0)}; };
  e.reference_outputs = [name, ref](const Case& c) { return std::vector<Tensor>{reduce_reference(name, c, ref)}; };
  e.reference_tolerance = cpu_rounding;
  e.backend_tolerance = gpu_tolerance;
  e.on_dense_block = dim_case_on_dense_block;
  e.errors = [name, fn](DType d) {
    std::vector<ErrorCase> errors = {
        {"dim out of range", [fn, d](Device dev) { fn(zeros({3, 4}, d, dev), 2, false); }, ErrorKind::IndexOutOfRange,
         name + ": dim 2 is out of range for input [3, 4]"},
        {"negative dim out of range", [fn, d](Device dev) { fn(zeros({3, 4}, d, dev), -3, false); },
         ErrorKind::IndexOutOfRange, "expected a dim in [-2, 1]"},
        {"complex input", [fn](Device dev) { fn(zeros({3}, DType::C64, dev), kAll, false); }, ErrorKind::Unsupported,
         name + ": dtype C64 is not supported"},
        {"undefined input", [fn](Device) { fn(Tensor(), kAll, false); }, ErrorKind::InvalidArgument,
         name + ": an operand is an undefined"},
    };
    if (name == "amin" || name == "amax") {
      errors.push_back({"empty input", [fn, d](Device dev) { fn(zeros({0}, d, dev), kAll, false); },
                        ErrorKind::InvalidArgument, name + ": input [0] " + std::string(dtype_name(d))});
      errors.push_back({"empty dim", [fn, d](Device dev) { fn(zeros({2, 0}, d, dev), 1, false); },
                        ErrorKind::InvalidArgument, "reducing an empty dim of input [2, 0]"});
    }
    if (name == "mean")
      errors.push_back({"integer mean", [fn](Device dev) { fn(zeros({3}, DType::I32, dev), kAll, false); },
                        ErrorKind::Unsupported, "mean: dtype I32 is not supported"});
    return errors;
  };
  return e;
}

// The device name in the "empty input" message depends on where the case runs.
Reduce along(Tensor (*all)(const Tensor&), Tensor (*dim)(const Tensor&, std::int64_t, bool)) {
  return [all, dim](const Tensor& x, std::int64_t d, bool keep) { return d == kAll ? all(x) : dim(x, d, keep); };
}

const ReduceCaseOptions kSums{Values::Signed, true, true};
const ReduceCaseOptions kProducts{Values::NearOne, true, false};
const ReduceCaseOptions kExtremes{Values::Signed, false, true};

std::vector<DType> with_bool(std::vector<DType> d) {
  d.push_back(DType::Bool);
  return d;
}

FERRITE_CONFORMANCE(reduce_entry("sum", with_bool(kRealTypes), along(sum, sum), ref_sum, kSums, accumulated));
FERRITE_CONFORMANCE(reduce_entry("mean", kFloatTypes, along(mean, mean), ref_mean, kSums, accumulated));
// A float product's rounding error grows with the row: about n units of float rounding.
FERRITE_CONFORMANCE(reduce_entry("prod", kRealTypes, along(prod, prod), ref_prod, kProducts, [](DType d) {
  return d == DType::F32 ? Tolerance{5e-4, 1e-30} : d == DType::F64 ? Tolerance{1e-11, 1e-300} : accumulated(d);
}));
FERRITE_CONFORMANCE(reduce_entry("amin", kRealTypes, along(amin, amin),
                                 [](DType, const std::vector<long double>& c) { return ref_extreme(false, c); }, kExtremes,
                                 exact));
FERRITE_CONFORMANCE(reduce_entry("amax", kRealTypes, along(amax, amax),
                                 [](DType, const std::vector<long double>& c) { return ref_extreme(true, c); }, kExtremes,
                                 exact));

// ---- mixed precision: F32 results of F16/BF16 sums and means (the seed's *_bf16_f32) ----

Entry f32_result_entry(const std::string& name, Tensor (*all)(const Tensor&, DType),
                       Tensor (*dim)(const Tensor&, std::int64_t, bool, DType), ColumnRef ref) {
  Entry e = reduce_entry(name, {DType::F16, DType::BF16},
                         [all, dim](const Tensor& x, std::int64_t d, bool keep) {
                           return d == kAll ? all(x, DType::F32) : dim(x, d, keep, DType::F32);
                         },
                         ref, kSums, [](DType) { return accumulated(DType::F32); });
  e.op = name + " (F32 result)";
  e.reference_outputs = [name, ref](const Case& c) {
    const Tensor exact = reduce_reference(name, Case{c.label, {c.inputs[0].to(DType::F64)}, c.ints}, ref);
    return std::vector<Tensor>{exact.to(DType::F32)};  // the exact value rounded once, to F32
  };
  e.reference_tolerance = [](DType) { return cpu_rounding(DType::F32); };
  e.errors = [name, all, dim](DType d) {
    return std::vector<ErrorCase>{
        {"F64 result", [all, d](Device dev) { all(zeros({3}, d, dev), DType::F64); }, ErrorKind::Unsupported,
         name + ": dtype F64 requested for input [3] " + std::string(dtype_name(d))},
        {"F32 result of an F64 input", [dim](Device dev) { dim(zeros({3, 2}, DType::F64, dev), 1, false, DType::F32); },
         ErrorKind::Unsupported, name + ": dtype F32 requested for input [3, 2] F64"},
    };
  };
  return e;
}

FERRITE_CONFORMANCE(f32_result_entry("sum", sum, sum, ref_sum));
FERRITE_CONFORMANCE(f32_result_entry("mean", mean, mean, ref_mean));

// ---- any / all (Bool) ----

Entry any_all_entry(const std::string& name, Tensor (*all_fn)(const Tensor&), Tensor (*dim_fn)(const Tensor&, std::int64_t, bool)) {
  const bool is_any = name == "any";
  Entry e;
  e.op = name;
  e.dtypes = {DType::Bool};
  e.cases = [](DType, Rng& rng) {
    // Sparse true values, so that some rows are all false (and dense ones, all true).
    auto sparse = [&](const Shape& s, bool dense) {
      std::vector<bool> v(static_cast<std::size_t>(shape_numel(s)));
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = dense ? (rng() % 50 != 0) : (rng() % 50 == 0);
      return from_vector(v, s);
    };
    return std::vector<Case>{
        {"[5, 7] random", {random({5, 7}, DType::Bool, rng)}, {-1, 0}},
        {"[64, 33] sparse true", {sparse({64, 33}, false)}, {-1, 0}},
        {"[64, 33] sparse false", {sparse({64, 33}, true)}, {-1, 1}},
        {"all true [3, 1025]", {full({3, 1025}, true, DType::Bool)}, {-1, 0}},
        {"all false [3, 1025]", {zeros({3, 1025}, DType::Bool)}, {-1, 0}},
        {"[7, 5, 3] dim 1", {sparse({7, 5, 3}, false)}, {1, 0}},
        {"[0] all", {zeros({0}, DType::Bool)}, {kAll, 0}},
        {"[3, 0] dim 1", {zeros({3, 0}, DType::Bool)}, {1, 0}},
        {"[2, 262144] dim -1", {sparse({2, 262144}, false)}, {-1, 0}},
        {"[262147] all sparse", {sparse({262147}, true)}, {kAll, 0}},
        {"rank 0", {full({}, true, DType::Bool)}, {kAll, 0}},
    };
  };
  e.run_outputs = [all_fn, dim_fn](const Case& c) {
    return std::vector<Tensor>{c.ints[0] == kAll ? all_fn(c.inputs[0]) : dim_fn(c.inputs[0], c.ints[0], c.ints[1] != 0)};
  };
  e.reference_outputs = [name, is_any](const Case& c) {
    return std::vector<Tensor>{reduce_reference(name, c, [is_any](DType, const std::vector<long double>& col) {
      for (long double v : col)
        if ((v != 0) == is_any) return is_any ? 1.0L : 0.0L;
      return is_any ? 0.0L : 1.0L;
    })};
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.on_dense_block = dim_case_on_dense_block;
  e.errors = [name, dim_fn](DType) {
    return std::vector<ErrorCase>{
        {"float input", [dim_fn](Device d) { dim_fn(zeros({3}, DType::F32, d), 0, false); }, ErrorKind::Unsupported,
         name + ": dtype F32 is not supported"},
        {"dim out of range", [dim_fn](Device d) { dim_fn(zeros({3}, DType::Bool, d), 1, false); },
         ErrorKind::IndexOutOfRange, name + ": dim 1 is out of range"}};
  };
  return e;
}

FERRITE_CONFORMANCE(any_all_entry("any", any, any));
FERRITE_CONFORMANCE(any_all_entry("all", all, all));

// ---- argmax / argmin ----

Entry arg_entry(const std::string& name, Reduce fn, bool is_max) {
  Entry e;
  e.op = name;
  e.dtypes = kRealTypes;
  e.cases = [is_max](DType d, Rng& rng) {
    std::vector<Case> cases = reduce_cases(d, rng, kExtremes);
    if (is_floating(d)) {  // the first NaN wins
      std::vector<double> v = random({6, 1025}, DType::F64, rng).to_vector<double>();
      for (auto& x : v)
        if (rng() % 300 == 0) x = std::nan("");
      cases.push_back({"NaN in rows [6, 1025]", {from_vector(v, {6, 1025}).to(d)}, {-1, 0}});
      // The same on rows the dedicated CUDA row kernel takes (16-byte aligned lengths).
      std::vector<double> w = random({6, 4096}, DType::F64, rng).to_vector<double>();
      for (auto& x : w)
        if (rng() % 900 == 0) x = std::nan("");
      cases.push_back({"NaN in rows [6, 4096]", {from_vector(w, {6, 4096}).to(d)}, {-1, 0}});
    }
    // Rows holding only the value nothing beats: the first position must win.
    const double inf = std::numeric_limits<double>::infinity();
    const double worst = is_floating(d) ? (is_max ? -inf : inf) : (is_max ? -100 : 100);
    cases.push_back({"only the worst value [3, 4096]", {full({3, 4096}, worst, d)}, {-1, 0}});
    cases.push_back({"many short rows [600, 128]", {random({600, 128}, d, rng)}, {-1, 0}});
    // Few distinct values: many ties, the first occurrence must win.
    cases.push_back({"ties [8, 4096]", {random({8, 4096}, d, rng, -0.04, 0.04).to(DType::I32).to(d)}, {-1, 0}});
    cases.push_back({"[65, 4096] dim -1", {random({65, 4096}, d, rng)}, {-1, 0}});
    return cases;
  };
  e.run_outputs = [fn](const Case& c) { return std::vector<Tensor>{fn(c.inputs[0], c.ints[0], c.ints[1] != 0)}; };
  e.reference_outputs = [is_max](const Case& c) {
    const Tensor& x = c.inputs[0];
    const auto v = reference::values(x);
    const Extents ex = extents_of(x.shape(), c.ints[0]);
    std::vector<long double> out(static_cast<std::size_t>(ex.outer * ex.inner));
    for (std::int64_t k = 0; k < ex.outer * ex.inner; ++k) {
      std::int64_t at = 0;
      for (std::int64_t j = 0; j < ex.dim; ++j) {
        const long double a = v[flat(ex, k, j)], b = v[flat(ex, k, at)];
        if (std::isnan(b)) break;
        if (std::isnan(a) || (is_max ? a > b : a < b)) at = j;
      }
      out[k] = static_cast<long double>(at);
    }
    return std::vector<Tensor>{reference::from_values(out, reduced(x.shape(), c.ints[0], c.ints[1] != 0), DType::I64)};
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  // An index over all elements counts them in the input's own (row-major) order, not in
  // memory order: argmax/argmin of a whole permuted view reads it as x.contiguous().
  e.on_dense_block = [](const Case& c, const Tensor& dense, const std::vector<std::int64_t>& perm) {
    auto mapped = dim_case_on_dense_block(c, dense, perm);
    if (c.ints[0] == kAll) mapped.first.inputs = {dense.permute(perm).contiguous()};
    return mapped;
  };
  e.errors = [name, fn](DType d) {
    return std::vector<ErrorCase>{
        {"empty input", [fn, d](Device dev) { fn(zeros({0}, d, dev), kAll, false); }, ErrorKind::InvalidArgument,
         name + ": input [0] " + std::string(dtype_name(d))},
        {"empty dim", [fn, d](Device dev) { fn(zeros({4, 0}, d, dev), -1, false); }, ErrorKind::InvalidArgument,
         name + ": reducing an empty dim of input [4, 0]"},
        {"Bool input", [fn](Device dev) { fn(zeros({3}, DType::Bool, dev), kAll, false); }, ErrorKind::Unsupported,
         name + ": dtype Bool is not supported"},
        {"dim out of range", [fn, d](Device dev) { fn(zeros({3, 4, 5}, d, dev), 3, false); },
         ErrorKind::IndexOutOfRange, name + ": dim 3 is out of range for input [3, 4, 5]"}};
  };
  return e;
}

FERRITE_CONFORMANCE(arg_entry("argmax", along(argmax, argmax), true));
FERRITE_CONFORMANCE(arg_entry("argmin", along(argmin, argmin), false));

// ---- masked amin / amax ----

using MaskedReduce = std::function<Tensor(const Tensor&, const Tensor&, std::int64_t, bool)>;

Entry masked_entry(const std::string& name, MaskedReduce fn, bool is_max) {
  Entry e;
  e.op = name;
  e.dtypes = kRealTypes;
  e.cases = [](DType d, Rng& rng) {
    auto mask = [&](const Shape& s, int keep_one_in) {
      std::vector<bool> v(static_cast<std::size_t>(shape_numel(s)));
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = rng() % keep_one_in == 0;
      return from_vector(v, s);
    };
    return std::vector<Case>{
        {"[5, 7] dim -1", {random({5, 7}, d, rng), mask({5, 7}, 2)}, {-1, 0}},
        {"[40, 9] sparse mask (empty rows)", {random({40, 9}, d, rng), mask({40, 9}, 12)}, {-1, 0}},
        {"[7, 5, 3] dim 1 keepdim", {random({7, 5, 3}, d, rng), mask({7, 5, 3}, 2)}, {1, 1}},
        {"[1025] all", {random({1025}, d, rng), mask({1025}, 3)}, {kAll, 0}},
        {"all false", {random({33}, d, rng), zeros({33}, DType::Bool)}, {kAll, 0}},
        {"all true [3, 4096]", {random({3, 4096}, d, rng), full({3, 4096}, true, DType::Bool)}, {-1, 0}},
        {"-Inf [6, 1025]", {with_negative_infinity(random({6, 1025}, d, rng), rng), mask({6, 1025}, 2)}, {-1, 0}},
        {"[2, 262144] dim -1", {random({2, 262144}, d, rng), mask({2, 262144}, 2)}, {-1, 0}},
        {"[262147] all", {random({262147}, d, rng), mask({262147}, 5)}, {kAll, 0}},
    };
  };
  e.run_outputs = [fn](const Case& c) {
    return std::vector<Tensor>{fn(c.inputs[0], c.inputs[1], c.ints[0], c.ints[1] != 0)};
  };
  e.reference_outputs = [is_max](const Case& c) {
    const Tensor& x = c.inputs[0];
    const auto v = reference::values(x), m = reference::values(c.inputs[1]);
    const Extents ex = extents_of(x.shape(), c.ints[0]);
    long double identity = is_max ? -kInf : kInf;
    if (x.dtype() == DType::I32) identity = is_max ? INT32_MIN : INT32_MAX;
    if (x.dtype() == DType::I64) identity = is_max ? static_cast<long double>(INT64_MIN) : static_cast<long double>(INT64_MAX);
    std::vector<long double> out(static_cast<std::size_t>(ex.outer * ex.inner));
    for (std::int64_t k = 0; k < ex.outer * ex.inner; ++k) {
      std::vector<long double> col = {identity};
      for (std::int64_t j = 0; j < ex.dim; ++j)
        if (m[flat(ex, k, j)] != 0) col.push_back(v[flat(ex, k, j)]);
      out[k] = ref_extreme(is_max, col);
    }
    return std::vector<Tensor>{reference::from_values(out, reduced(x.shape(), c.ints[0], c.ints[1] != 0), x.dtype())};
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [name, fn](DType d) {
    return std::vector<ErrorCase>{
        {"float mask", [fn, d](Device dev) { fn(zeros({3}, d, dev), zeros({3}, DType::F32, dev), kAll, false); },
         ErrorKind::DTypeMismatch, name + ": mask is [3] F32"},
        {"mask of another shape", [fn, d](Device dev) { fn(zeros({3, 4}, d, dev), zeros({4, 3}, DType::Bool, dev), kAll, false); },
         ErrorKind::ShapeMismatch, "expected the input's shape [3, 4]"},
        {"dim out of range", [fn, d](Device dev) { fn(zeros({3}, d, dev), zeros({3}, DType::Bool, dev), 1, false); },
         ErrorKind::IndexOutOfRange, name + ": dim 1 is out of range"}};
  };
  return e;
}

MaskedReduce masked_along(Tensor (*all)(const Tensor&, const Tensor&),
                          Tensor (*dim)(const Tensor&, const Tensor&, std::int64_t, bool)) {
  return [all, dim](const Tensor& x, const Tensor& m, std::int64_t d, bool keep) {
    return d == kAll ? all(x, m) : dim(x, m, d, keep);
  };
}

FERRITE_CONFORMANCE(masked_entry("masked_amin", masked_along(masked_amin, masked_amin), false));
FERRITE_CONFORMANCE(masked_entry("masked_amax", masked_along(masked_amax, masked_amax), true));

// ---- prod_backward: analytic (product of the others) and finite differences ----

Tensor prod_backward_along(const Tensor& grad, const Tensor& x, std::int64_t dim, bool keepdim) {
  return dim == kAll ? prod_backward(grad, x) : prod_backward(grad, x, dim, keepdim);
}

// x near 1 with zeros planted: one zero in some rows, two in others.
Tensor with_zeros(const Tensor& x, Rng& rng) {
  std::vector<double> v = x.to(DType::F64).to_vector<double>();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (rng() % 9 == 0) v[i] = 0;
  return from_vector(v, x.shape()).to(x.dtype());
}

std::vector<Case> prod_backward_cases(DType d, Rng& rng) {
  std::vector<Case> cases;
  auto add = [&](const std::string& label, const Shape& s, std::int64_t dim, bool keep, bool zeros_in) {
    Tensor x = near_one(s, d, rng, shape_numel(s));
    if (zeros_in) x = with_zeros(x, rng);
    cases.push_back({label, {random(reduced(s, dim, keep), d, rng), x}, {dim, keep ? 1 : 0}});
  };
  add("[5, 7] dim -1", {5, 7}, -1, false, false);
  add("[5, 7] dim -1 with zeros", {5, 7}, -1, false, true);
  add("[7, 5, 3] dim 1 with zeros", {7, 5, 3}, 1, false, true);
  add("[4, 1025] dim 1 keepdim with zeros", {4, 1025}, 1, true, true);
  add("[33] all", {33}, kAll, false, false);
  add("[3, 4096] dim -1", {3, 4096}, -1, false, false);
  add("[0, 3] dim 0", {0, 3}, 0, false, false);
  return cases;
}

Entry prod_backward_entry() {
  Entry e;
  e.op = "prod_backward";
  e.dtypes = kFloatTypes;
  e.cases = prod_backward_cases;
  e.run_outputs = [](const Case& c) {
    return std::vector<Tensor>{prod_backward_along(c.inputs[0], c.inputs[1], c.ints[0], c.ints[1] != 0)};
  };
  e.reference_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[1];
    const auto g = reference::values(c.inputs[0]), v = reference::values(x);
    const Extents ex = extents_of(x.shape(), c.ints[0]);
    std::vector<long double> out(v.size());
    for (std::int64_t k = 0; k < ex.outer * ex.inner; ++k)
      for (std::int64_t j = 0; j < ex.dim; ++j) {
        long double p = g[k];
        for (std::int64_t i = 0; i < ex.dim; ++i)
          if (i != j) p *= v[flat(ex, k, i)];
        out[flat(ex, k, j)] = p;
      }
    return std::vector<Tensor>{reference::from_values(out, x.shape(), x.dtype())};
  };
  e.reference_tolerance = cpu_rounding;
  e.backend_tolerance = [](DType d) {
    return d == DType::F32 ? Tolerance{5e-4, 1e-30} : d == DType::F64 ? Tolerance{1e-11, 1e-300} : accumulated(d);
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"grad of the wrong shape", [d](Device dev) { prod_backward(zeros({4}, d, dev), zeros({3, 4}, d, dev), 1, false); },
         ErrorKind::ShapeMismatch, "prod_backward: grad is [4]"},
        {"grad of another dtype",
         [d](Device dev) {
           prod_backward(zeros({}, d == DType::F32 ? DType::F64 : DType::F32, dev), zeros({3}, d, dev));
         },
         ErrorKind::DTypeMismatch, "prod_backward: operand dtypes differ"},
        {"integer input", [](Device dev) { prod_backward(zeros({}, DType::I32, dev), zeros({3}, DType::I32, dev)); },
         ErrorKind::Unsupported, "prod_backward: dtype I32 is not supported"}};
  };
  return e;
}

FERRITE_CONFORMANCE(prod_backward_entry());

// The same op against central differences of the host product, in F64.
Entry prod_backward_fd_entry() {
  Entry e = prod_backward_entry();
  e.op = "prod_backward (finite differences)";
  e.dtypes = {DType::F64};
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    for (auto [s, dim] : std::vector<std::pair<Shape, std::int64_t>>{{{4, 6}, 1}, {{3, 5, 2}, 1}, {{9}, kAll}}) {
      Tensor x = with_zeros(random(s, d, rng, 0.5, 2), rng);
      cases.push_back({shape_str(s), {random(reduced(s, dim, false), d, rng), x}, {dim, 0}});
    }
    return cases;
  };
  e.reference_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[1];
    const Extents ex = extents_of(x.shape(), c.ints[0]);
    auto forward = [&](const std::vector<long double>& v) {
      std::vector<long double> out(static_cast<std::size_t>(ex.outer * ex.inner), 1);
      for (std::int64_t k = 0; k < ex.outer * ex.inner; ++k)
        for (std::int64_t j = 0; j < ex.dim; ++j) out[k] *= v[flat(ex, k, j)];
      return out;
    };
    const auto dx = finite_difference_vjp(forward, reference::values(x), reference::values(c.inputs[0]));
    return std::vector<Tensor>{reference::from_values(dx, x.shape(), x.dtype())};
  };
  e.reference_tolerance = [](DType) { return Tolerance{1e-8, 1e-9}; };
  e.errors = {};
  return e;
}

FERRITE_CONFORMANCE(prod_backward_fd_entry());

}  // namespace
}  // namespace ferrite::conformance
