// Conformance entries of 2:4 semi-structured sparsity (ferrite/sparse.hpp: prune_24,
// compress_24, decompress_24, matmul_24, linear_24). The pruning reference is written here
// from the rule (NaN first, then magnitude, then the lower position); products are exact sums
// of the pruned values rounded once. On CUDA the products run through cuSPARSELt: F32 inputs
// are rounded to TF32 there (the CPU does not emulate it), F16/BF16 sums may round differently
// by an ulp; pruning is bit for bit. Entries are skipped, with the reason, on a device where
// cuSPARSELt cannot be loaded.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "conformance/conformance.hpp"
#include "conformance/reference.hpp"
#include "conformance/sparse_test_support.hpp"

namespace ferrite::conformance {
namespace {

using namespace sparse_test;  // NOLINT: the shared helpers of the sparse entries

const std::vector<DType> kStructuredDTypes = {DType::F32, DType::F16, DType::BF16};

std::string structured_unavailable(Device device) {
  std::string why;
  return sparse::structured_available(device, &why) ? std::string() : why;
}

// ---- the host reference of the pruning rule ----

std::vector<long double> prune_reference(const std::vector<long double>& v, std::int64_t rows, std::int64_t cols,
                                         std::int64_t group) {
  std::vector<long double> out(v.size(), 0.0L);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t g = 0; g < cols; g += group) {
      const std::size_t base = static_cast<std::size_t>(r * cols + g);
      std::vector<std::int64_t> order(static_cast<std::size_t>(group));
      std::iota(order.begin(), order.end(), 0);
      // Best first: NaN, then larger magnitude; stable, so ties keep the lower position first.
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        const long double x = v[base + static_cast<std::size_t>(a)], y = v[base + static_cast<std::size_t>(b)];
        if (std::isnan(x) != std::isnan(y)) return std::isnan(x);
        if (std::isnan(x)) return false;
        return std::fabs(x) > std::fabs(y);
      });
      for (std::int64_t j = 0; j < group / 2; ++j) {
        const std::size_t at = base + static_cast<std::size_t>(order[static_cast<std::size_t>(j)]);
        out[at] = v[at];
      }
    }
  return out;
}

Tensor pruned_reference(const Tensor& a) {
  const std::int64_t group = sparse::structured_group(a.dtype());
  return reference::from_values(prune_reference(reference::values(a), a.size(0), a.size(1), group), a.shape(),
                                a.dtype());
}

// Exact A B (A [m, k], B [k, n]) rounded once; `transpose_out` gives (A B)ᵀ.
Tensor product_reference(const std::vector<long double>& a, const std::vector<long double>& b, std::int64_t m,
                         std::int64_t k, std::int64_t n, DType dtype) {
  std::vector<long double> c(static_cast<std::size_t>(m * n), 0.0L);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t q = 0; q < k; ++q)
      for (std::int64_t j = 0; j < n; ++j)
        c[static_cast<std::size_t>(i * n + j)] +=
            a[static_cast<std::size_t>(i * k + q)] * b[static_cast<std::size_t>(q * n + j)];
  return reference::from_values(c, {m, n}, dtype);
}

// ---- pruning: random matrices of any row count, and the special values ----

// Rows of one group each, in the group's own order: ties, zeros, -0, NaN, Inf.
Tensor special_rows(DType dtype) {
  const double inf = INFINITY, nan = NAN;
  const std::vector<std::vector<double>> rows4 = {
      {1, -1, 1, -1}, {0, 0, 0, 0}, {-0.0, 0, 0, 5}, {nan, 1, inf, 2}, {1, nan, nan, nan},
      {-inf, 3, 2, 1}, {2, -3, 3, -2}, {0, 0, 0, -7}};
  const std::vector<std::vector<double>> rows2 = {{1, -1}, {0, 0}, {-0.0, 0}, {nan, inf},
                                                  {1, nan}, {-inf, 3}, {-3, 3}, {nan, nan}};
  const auto& rows = sparse::structured_group(dtype) == 4 ? rows4 : rows2;
  std::vector<double> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return from_vector<double>(flat, {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows[0].size())})
      .to(dtype);
}

std::vector<Case> prune_cases(DType dtype, Rng& rng) {
  const std::int64_t g = sparse::structured_group(dtype);
  std::vector<Case> cases;
  for (const auto& [rows, cols, density] : std::vector<std::tuple<std::int64_t, std::int64_t, double>>{
           {0, 0, 0.5}, {0, 4 * g, 0.5}, {3, 0, 0.5}, {1, g, 1.0}, {5, 3 * g, 0.6}, {37, 20 * g, 0.9}, {64, 64, 1.0}})
    cases.push_back({"[" + std::to_string(rows) + ", " + std::to_string(cols) + "] density " + std::to_string(density),
                     {sparse_dense(rows, cols, density, dtype, rng)}});
  cases.push_back({"real values [33, 128]", {random({33, 128}, dtype, rng, -1, 1)}});
  cases.push_back({"extremes [16, 64]", {extremes(dtype, 16 * 64, rng).reshape({16, 64})}});
  cases.push_back({"ties, zeros, -0, NaN and Inf", {special_rows(dtype)}});
  // Two rows of the special groups side by side: the group boundaries inside a row.
  const Tensor s = special_rows(dtype);
  cases.push_back({"special groups in one row", {s.reshape({2, -1})}});
  return cases;
}

FERRITE_CONFORMANCE(Entry{
    .op = "sparse_prune_24",
    .dtypes = kStructuredDTypes,
    .cases = prune_cases,
    .run = [](const std::vector<Tensor>& in) { return sparse::prune_24(in[0]); },
    .reference = [](const std::vector<Tensor>& in) { return pruned_reference(in[0]); },
    .reference_tolerance = exact,
    .backend_tolerance = exact,
    .errors = [](DType d) -> std::vector<ErrorCase> {
      const std::int64_t g = sparse::structured_group(d);
      return {
          {"3-D input", [=](Device dev) { (void)sparse::prune_24(zeros({2, 2, 4}, d, dev)); }, ErrorKind::ShapeMismatch,
           "sparse::prune_24: the input must be a 2-D matrix"},
          {"0-d input", [=](Device dev) { (void)sparse::prune_24(zeros({}, d, dev)); }, ErrorKind::ShapeMismatch,
           "sparse::prune_24: the input must be a 2-D matrix"},
          {"row length", [=](Device dev) { (void)sparse::prune_24(zeros({2, g + 1}, d, dev)); }, ErrorKind::ShapeMismatch,
           "must be a multiple of the group of " + std::to_string(g)},
          {"dtype", [=](Device dev) { (void)sparse::prune_24(zeros({2, 4}, DType::F64, dev)); }, ErrorKind::Unsupported,
           "takes F16, BF16 or F32"},
      };
    },
});

// ---- compression and the products ----

struct ProductSpec {
  std::int64_t m, k, n, p;
  bool real;  // values in [-1, 1] (TF32 and rounding matter) instead of small integers (exact)
};

std::vector<Case> product_cases(DType dtype, Rng& rng) {
  std::vector<ProductSpec> specs = {{16, 32, 8, 8, false},   {48, 64, 24, 16, false}, {32, 128, 40, 8, false},
                                    {0, 16, 8, 8, false},    {16, 0, 8, 8, false},    {16, 16, 0, 0, false},
                                    {64, 256, 32, 16, true}, {128, 64, 64, 24, true}};
  if (dtype == DType::F32) specs.push_back({8, 24, 4, 12, false});  // F32's smaller multiples (8 and 4)
  std::vector<Case> cases;
  for (const ProductSpec& s : specs) {
    const auto make = [&](std::int64_t r, std::int64_t c, double density) {
      return s.real ? random({r, c}, dtype, rng, -1, 1) : sparse_dense(r, c, density, dtype, rng);
    };
    cases.push_back({std::string(s.real ? "real" : "integer") + " A [" + std::to_string(s.m) + ", " + std::to_string(s.k) +
                         "] B [" + std::to_string(s.k) + ", " + std::to_string(s.n) + "] x [" + std::to_string(s.p) +
                         ", " + std::to_string(s.k) + "]",
                     {make(s.m, s.k, 0.8), make(s.k, s.n, 1.0), make(s.p, s.k, 1.0)}});
  }
  return cases;
}

std::vector<Tensor> run_products(const Case& c) {
  const Tensor pruned = sparse::prune_24(c.inputs[0]);
  const sparse::Sparse24Matrix a = sparse::compress_24(pruned);
  return {pruned, sparse::decompress_24(a), sparse::matmul_24(a, c.inputs[1]), sparse::linear_24(c.inputs[2], a)};
}

std::vector<Tensor> reference_products(const Case& c) {
  const Tensor& a = c.inputs[0];
  const DType d = a.dtype();
  const std::int64_t m = a.size(0), k = a.size(1), n = c.inputs[1].size(1), p = c.inputs[2].size(0);
  const Tensor pruned = pruned_reference(a);
  const std::vector<long double> av = reference::values(pruned), bv = reference::values(c.inputs[1]),
                                 xv = reference::values(c.inputs[2]);
  // x Aᵀ: the transposed operands' product.
  std::vector<long double> at(static_cast<std::size_t>(k * m));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t q = 0; q < k; ++q) at[static_cast<std::size_t>(q * m + i)] = av[static_cast<std::size_t>(i * k + q)];
  return {pruned, pruned, product_reference(av, bv, m, k, n, d), product_reference(xv, at, p, k, m, d)};
}

// The CPU sums in F32 in index order: exact for the integer cases, within F32's rounding of
// the partial sums for the real ones.
Tolerance cpu_product_tolerance(DType d) {
  switch (d) {
    case DType::F32: return {1e-4, 1e-4};
    case DType::F16: return {2e-3, 1e-3};
    default: return {1.6e-2, 1e-2};
  }
}

// CUDA against the CPU: TF32 inputs (10-bit mantissas) for F32; another summation order, so
// an ulp of the output, for F16/BF16.
Tolerance cuda_product_tolerance(DType d) {
  switch (d) {
    case DType::F32: return {1e-2, 2e-2};
    case DType::F16: return {2e-3, 2e-3};
    default: return {1.6e-2, 1e-2};
  }
}

std::vector<ErrorCase> product_errors(DType d) {
  const std::int64_t sm = 32 / static_cast<std::int64_t>(dtype_size(d)), dm = 16 / static_cast<std::int64_t>(dtype_size(d));
  const DType other = d == DType::F32 ? DType::F16 : DType::F32;
  return {
      {"not pruned", [=](Device dev) { (void)sparse::compress_24(ones({sm, sm}, d, dev)); }, ErrorKind::InvalidArgument,
       "row 0, elements 0.."},
      {"sparse rows", [=](Device dev) { (void)sparse::compress_24(zeros({sm / 2, sm}, d, dev)); }, ErrorKind::ShapeMismatch,
       "rows and cols must be multiples of " + std::to_string(sm)},
      {"sparse cols", [=](Device dev) { (void)sparse::compress_24(zeros({sm, sm + sm / 2}, d, dev)); },
       ErrorKind::ShapeMismatch, "breaks cuSPARSELt's rule for the sparse operand"},
      {"3-D input", [=](Device dev) { (void)sparse::compress_24(zeros({1, sm, sm}, d, dev)); }, ErrorKind::ShapeMismatch,
       "must be a 2-D matrix"},
      {"dtype", [=](Device dev) { (void)sparse::compress_24(zeros({32, 32}, DType::F64, dev)); }, ErrorKind::Unsupported,
       "takes F16, BF16 or F32"},
      {"dense columns", [=](Device dev) {
         (void)sparse::matmul_24(sparse::compress_24(zeros({sm, sm}, d, dev)), zeros({sm, dm / 2}, d, dev));
       },
       ErrorKind::ShapeMismatch, "column count must be a multiple of " + std::to_string(dm)},
      {"inner size", [=](Device dev) {
         (void)sparse::matmul_24(sparse::compress_24(zeros({sm, sm}, d, dev)), zeros({2 * sm, dm}, d, dev));
       },
       ErrorKind::ShapeMismatch, "sparse::matmul_24: B is"},
      {"3-D B", [=](Device dev) {
         (void)sparse::matmul_24(sparse::compress_24(zeros({sm, sm}, d, dev)), zeros({1, sm, dm}, d, dev));
       },
       ErrorKind::ShapeMismatch, "B must be a 2-D matrix"},
      {"B dtype", [=](Device dev) {
         (void)sparse::matmul_24(sparse::compress_24(zeros({sm, sm}, d, dev)), zeros({sm, dm}, other, dev));
       },
       ErrorKind::DTypeMismatch, "(one dtype)"},
      {"linear rows", [=](Device dev) {
         (void)sparse::linear_24(zeros({dm / 2, sm}, d, dev), sparse::compress_24(zeros({sm, sm}, d, dev)));
       },
       ErrorKind::ShapeMismatch, "row count must be a multiple of " + std::to_string(dm)},
      {"undefined", [=](Device dev) { (void)sparse::matmul_24(sparse::Sparse24Matrix(), zeros({sm, dm}, d, dev)); },
       ErrorKind::InvalidArgument, "the structured matrix is undefined"},
  };
}

FERRITE_CONFORMANCE(Entry{
    .op = "sparse_structured_products",
    .dtypes = kStructuredDTypes,
    .cases = product_cases,
    .run = {},
    .reference = {},
    .reference_tolerance = cpu_product_tolerance,
    .backend_tolerance = cuda_product_tolerance,
    .errors = product_errors,
    .run_outputs = run_products,
    .reference_outputs = reference_products,
    .output_backend_tolerance = [](DType d, std::size_t output) { return output < 2 ? Tolerance{} : cuda_product_tolerance(d); },
    .unavailable = structured_unavailable,
});

}  // namespace
}  // namespace ferrite::conformance
