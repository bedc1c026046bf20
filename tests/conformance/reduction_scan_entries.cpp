// Conformance entries of the scans: cumsum, cumprod, logcumsumexp, cummax and cummin.
#include <functional>

#include "conformance/reduction_test_support.hpp"

namespace ferrite::conformance {
namespace {

using namespace reduction_support;

enum class Values { Signed, NearOne, Large };

Tensor make_values(Values kind, const Shape& s, DType d, Rng& rng, bool long_row) {
  if (!is_floating(d)) {  // odd integers keep products nonzero modulo 2^64
    std::vector<std::int64_t> v(static_cast<std::size_t>(shape_numel(s)));
    for (auto& x : v) x = 2 * static_cast<std::int64_t>(rng() % 8) - 7;
    return from_vector(v, s).to(d);
  }
  switch (kind) {
    case Values::NearOne: return near_one(s, d, rng, shape_numel(s));  // products stay in range
    case Values::Large: return random(s, d, rng, 500, 1000);
    default: return long_row ? random(s, d, rng, 0.0625, 0.25) : random(s, d, rng);
  }
}

/// `special`: add rows with +-Inf, NaN and all-equal values (special_rows).
std::vector<Case> scan_cases(DType d, Rng& rng, Values kind, bool special = false) {
  auto make = [&](const Shape& s) { return make_values(kind, s, d, rng, false); };
  auto make_long = [&](const Shape& s) { return make_values(kind, s, d, rng, true); };
  std::vector<Case> cases = {
      {"[5, 7] dim -1", {make({5, 7})}, {-1}},
      {"[3, 1] dim 1", {make({3, 1})}, {1}},
      {"[4, 1025] dim -1", {make({4, 1025})}, {-1}},
      {"[3, 4096] dim 1", {make({3, 4096})}, {1}},
      {"[7, 5, 3] dim 1", {make({7, 5, 3})}, {1}},
      {"[7, 5, 3] dim 0", {make({7, 5, 3})}, {0}},
      {"[33, 64] dim -1", {make({33, 64})}, {-1}},
      {"rank 0", {make({})}, {0}},
      {"[0, 5] dim -1", {make({0, 5})}, {-1}},
      {"[3, 0] dim -1", {make({3, 0})}, {-1}},
      {"all equal [4, 1025]", {all_equal({4, 1025}, d)}, {-1}},
      {"-Inf in rows [6, 1025]", {with_negative_infinity(make({6, 1025}), rng)}, {-1}},
      {"[2, 262144] dim -1", {make_long({2, 262144})}, {-1}},
      {"[16384, 3] dim 0", {make_long({16384, 3})}, {0}},
      // Many rows of several 32-lane tiles: the warp-per-row GPU path with a carry.
      {"[8192, 600] dim -1", {make_long({8192, 600})}, {-1}},
  };
  if (kind == Values::Signed && is_floating(d))  // the longest rows the issue names: 2^20 columns
    cases.push_back({"[1, 1048576] dim -1", {random({1, 1048576}, d, rng, 1.0 / 256, 1.0 / 64)}, {-1}});
  if (special && is_floating(d)) {
    for (auto [rows, cols] : special_row_shapes())
      cases.push_back({"special rows " + shape_str({rows, cols}) + " dim -1", {special_rows(rows, cols, d, rng)}, {-1}});
    cases.push_back({"special rows [7, 18] dim 0", {special_rows(18, 7, d, rng, true)}, {0}});
  }
  return cases;
}

/// The exact scan of one column; ints wrap like int64.
using ColumnScan = std::function<std::vector<long double>(DType, const std::vector<long double>&)>;

std::vector<long double> ref_cumsum(DType d, const std::vector<long double>& col) {
  std::vector<long double> out(col.size());
  long double s = 0;
  __int128 si = 0;
  for (std::size_t j = 0; j < col.size(); ++j) {
    if (is_floating(d)) {
      out[j] = s += col[j];
    } else {
      si += static_cast<__int128>(col[j]);
      out[j] = static_cast<std::int64_t>(static_cast<std::uint64_t>(static_cast<unsigned __int128>(si)));
    }
  }
  return out;
}
std::vector<long double> ref_cumprod(DType d, const std::vector<long double>& col) {
  std::vector<long double> out(col.size());
  long double p = 1;
  std::uint64_t pi = 1;
  for (std::size_t j = 0; j < col.size(); ++j) {
    if (is_floating(d)) {
      out[j] = p *= col[j];
    } else {
      pi *= static_cast<std::uint64_t>(static_cast<std::int64_t>(col[j]));
      out[j] = static_cast<std::int64_t>(pi);
    }
  }
  return out;
}
// A running sum of exp(v - M) rescaled whenever the running maximum M grows.
std::vector<long double> ref_logcumsumexp(DType, const std::vector<long double>& col) {
  std::vector<long double> out(col.size());
  long double m = -kInf, s = 0;
  bool nan = false;
  for (std::size_t j = 0; j < col.size(); ++j) {
    const long double v = col[j];
    nan = nan || std::isnan(v);
    if (v > m) {
      s = (m == -kInf ? 0 : s * std::exp(m - v)) + 1;
      m = v;
    } else if (v != -kInf) {
      s += v == m ? 1 : std::exp(v - m);  // v == m == +Inf: exp(Inf - Inf) would be NaN, the sum is +Inf
    }
    out[j] = nan ? std::numeric_limits<long double>::quiet_NaN() : (m == -kInf ? -kInf : m + std::log(s));
  }
  return out;
}

DType scan_result_dtype(const std::string& op, DType d) {
  return (op == "cumsum" || op == "cumprod") && !is_floating(d) ? DType::I64 : d;
}

std::vector<ErrorCase> scan_errors(const std::string& name, std::function<void(const Tensor&, std::int64_t)> fn, DType d) {
  return {
      {"dim out of range", [fn, d](Device dev) { fn(zeros({3, 4}, d, dev), 2); }, ErrorKind::IndexOutOfRange,
       name + ": dim 2 is out of range for input [3, 4]"},
      {"complex input", [fn](Device dev) { fn(zeros({3}, DType::C64, dev), 0); }, ErrorKind::Unsupported,
       name + ": dtype C64 is not supported"},
      {"Bool input", [fn](Device dev) { fn(zeros({3}, DType::Bool, dev), 0); }, ErrorKind::Unsupported,
       name + ": dtype Bool is not supported"},
  };
}

Entry scan_entry(const std::string& name, Tensor (*fn)(const Tensor&, std::int64_t), ColumnScan ref, Values kind,
                 std::vector<DType> dtypes, std::function<Tolerance(DType)> gpu_tolerance) {
  Entry e;
  e.op = name;
  e.dtypes = std::move(dtypes);
  e.cases = [kind, name](DType d, Rng& rng) { return scan_cases(d, rng, kind, name == "logcumsumexp"); };
  e.run_outputs = [fn](const Case& c) { return std::vector<Tensor>{fn(c.inputs[0], c.ints[0])}; };
  e.reference_outputs = [name, ref](const Case& c) {
    const Tensor& x = c.inputs[0];
    const auto v = reference::values(x);
    const Extents ex = extents_of(x.shape(), c.ints[0]);
    std::vector<long double> out(v.size());
    for (std::int64_t k = 0; k < ex.outer * ex.inner; ++k) {
      std::vector<long double> col(static_cast<std::size_t>(ex.dim));
      for (std::int64_t j = 0; j < ex.dim; ++j) col[j] = v[flat(ex, k, j)];
      const auto scanned = ref(x.dtype(), col);
      for (std::int64_t j = 0; j < ex.dim; ++j) out[flat(ex, k, j)] = scanned[j];
    }
    return std::vector<Tensor>{reference::from_values(out, x.shape(), scan_result_dtype(name, x.dtype()))};
  };
  e.reference_tolerance = cpu_rounding;
  e.backend_tolerance = gpu_tolerance;
  e.errors = [name, fn](DType d) {
    auto errors = scan_errors(name, [fn](const Tensor& x, std::int64_t dim) { fn(x, dim); }, d);
    if (name == "logcumsumexp")
      errors.push_back({"integer input", [fn](Device dev) { fn(zeros({3}, DType::I64, dev), 0); }, ErrorKind::Unsupported,
                        "logcumsumexp: dtype I64 is not supported"});
    return errors;
  };
  return e;
}

FERRITE_CONFORMANCE(scan_entry("cumsum", cumsum, ref_cumsum, Values::Signed, kRealTypes, accumulated));
FERRITE_CONFORMANCE(scan_entry("cumprod", cumprod, ref_cumprod, Values::NearOne, kRealTypes, [](DType d) {
  return d == DType::F32 ? Tolerance{5e-4, 1e-30} : d == DType::F64 ? Tolerance{1e-11, 1e-300} : accumulated(d);
}));
FERRITE_CONFORMANCE(scan_entry("logcumsumexp", logcumsumexp, ref_logcumsumexp, Values::Signed, kFloatTypes, accumulated));

Entry logcumsumexp_large_entry() {
  Entry e = scan_entry("logcumsumexp", logcumsumexp, ref_logcumsumexp, Values::Large, kFloatTypes, accumulated);
  e.op = "logcumsumexp (inputs 500 to 1000: exp overflows)";
  e.errors = {};
  return e;
}
FERRITE_CONFORMANCE(logcumsumexp_large_entry());

// ---- cummax / cummin: values and I64 indices, both exact ----

Entry extreme_scan_entry(const std::string& name, std::pair<Tensor, Tensor> (*fn)(const Tensor&, std::int64_t), bool is_max) {
  Entry e;
  e.op = name;
  e.dtypes = kRealTypes;
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases = scan_cases(d, rng, Values::Signed);
    // Many ties: equal values move the index forward.
    cases.push_back({"ties [8, 4096]", {random({8, 4096}, d, rng, -0.04, 0.04).to(DType::I32).to(d)}, {-1}});
    if (is_floating(d)) {
      std::vector<double> v = random({6, 1025}, DType::F64, rng).to_vector<double>();
      for (auto& x : v)
        if (rng() % 200 == 0) x = std::nan("");
      cases.push_back({"NaN in rows [6, 1025]", {from_vector(v, {6, 1025}).to(d)}, {-1}});
    }
    return cases;
  };
  e.run_outputs = [fn](const Case& c) {
    auto [values, indices] = fn(c.inputs[0], c.ints[0]);
    return std::vector<Tensor>{values, indices};
  };
  e.reference_outputs = [is_max](const Case& c) {
    const Tensor& x = c.inputs[0];
    const auto v = reference::values(x);
    const Extents ex = extents_of(x.shape(), c.ints[0]);
    std::vector<long double> values(v.size()), indices(v.size());
    for (std::int64_t k = 0; k < ex.outer * ex.inner; ++k) {
      std::int64_t at = 0;
      for (std::int64_t j = 0; j < ex.dim; ++j) {
        const long double a = v[flat(ex, k, j)], b = v[flat(ex, k, at)];
        // PyTorch: NaN takes over and each later NaN moves the index; equal values move it too.
        if (std::isnan(a) || (!std::isnan(b) && (is_max ? a >= b : a <= b))) at = j;
        values[flat(ex, k, j)] = v[flat(ex, k, at)];
        indices[flat(ex, k, j)] = static_cast<long double>(at);
      }
    }
    return std::vector<Tensor>{reference::from_values(values, x.shape(), x.dtype()),
                               reference::from_values(indices, x.shape(), DType::I64)};
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [name, fn](DType d) { return scan_errors(name, [fn](const Tensor& x, std::int64_t dim) { fn(x, dim); }, d); };
  return e;
}

FERRITE_CONFORMANCE(extreme_scan_entry("cummax", cummax, true));
FERRITE_CONFORMANCE(extreme_scan_entry("cummin", cummin, false));

}  // namespace
}  // namespace ferrite::conformance
