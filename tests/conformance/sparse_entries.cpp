// Conformance entries of the sparse matrices (ferrite/sparse.hpp). Inputs are integer-valued
// (in [-4, 4], most of them zero), so every sum is exact in every dtype's accumulator and the
// references below, written here from the definitions, can be compared exactly: layouts and
// conversions move values bit for bit, products and coalescing sum exactly and round once.
#include <limits>
#include <algorithm>
#include <complex>
#include <map>
#include <numeric>

#include "conformance/conformance.hpp"
#include "conformance/reference.hpp"
#include "conformance/sparse_test_support.hpp"

namespace ferrite::conformance {
namespace {

using namespace sparse_test;  // NOLINT: the shared helpers of the sparse entries
using sparse::Layout;

// ---- host references ----

struct Compressed {
  std::vector<std::int64_t> ptr, idx;
  std::vector<Value> values;
};

// CSR of a dense row-major matrix (x != 0), or of its transpose for `by_columns`.
Compressed compress(const std::vector<Value>& dense, std::int64_t rows, std::int64_t cols, bool by_columns) {
  Compressed c;
  const std::int64_t major = by_columns ? cols : rows, minor = by_columns ? rows : cols;
  c.ptr.push_back(0);
  for (std::int64_t i = 0; i < major; ++i) {
    for (std::int64_t j = 0; j < minor; ++j) {
      const Value& v = dense[static_cast<std::size_t>(by_columns ? j * cols + i : i * cols + j)];
      if (is_stored(v)) {
        c.idx.push_back(j);
        c.values.push_back(v);
      }
    }
    c.ptr.push_back(static_cast<std::int64_t>(c.idx.size()));
  }
  return c;
}

std::vector<Tensor> reference_layouts(const Case& c) {
  const Tensor& a = c.inputs[0];
  const DType index = index_dtype(c.ints[1]);
  const std::int64_t rows = a.size(0), cols = a.size(1);
  std::vector<Value> dense = host_values(a);
  for (Value& v : dense)
    if (v == Value(0, 0)) v = {0, 0};  // -0 is not stored: it comes back as +0
  const Compressed r = compress(dense, rows, cols, false), k = compress(dense, rows, cols, true);
  std::vector<std::int64_t> coo_rows;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t p = r.ptr[static_cast<std::size_t>(i)]; p < r.ptr[static_cast<std::size_t>(i) + 1]; ++p)
      coo_rows.push_back(i);
  std::vector<Value> transposed(dense.size());
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      transposed[static_cast<std::size_t>(j * rows + i)] = dense[static_cast<std::size_t>(i * cols + j)];
  const auto n = static_cast<std::int64_t>(r.values.size());
  return {tensor_of(dense, {rows, cols}, a.dtype()),
          index_of(r.ptr, index), index_of(r.idx, index), tensor_of(r.values, {n}, a.dtype()),
          index_of(k.ptr, index), index_of(k.idx, index), tensor_of(k.values, {n}, a.dtype()),
          index_of(coo_rows, index), index_of(r.idx, index),
          tensor_of(transposed, {cols, rows}, a.dtype())};
}

std::vector<Tensor> run_layouts(const Case& c) {
  const Tensor& a = c.inputs[0];
  const sparse::SparseMatrix s = sparse::from_dense(a, kLayouts[c.ints[0]], index_dtype(c.ints[1]));
  const sparse::SparseMatrix as_csr = sparse::to_csr(s), as_csc = sparse::to_csc(s), as_coo = sparse::to_coo(s);
  return {sparse::to_dense(s),
          as_csr.crow_indices(), as_csr.col_indices(), as_csr.values(),
          as_csc.ccol_indices(), as_csc.row_indices(), as_csc.values(),
          as_coo.row_indices(), as_coo.col_indices(),
          sparse::to_dense(sparse::transpose(s))};
}

std::vector<Case> layout_cases(DType dtype, Rng& rng) {
  struct Spec {
    std::int64_t rows, cols;
    double density;
  };
  const std::vector<Spec> specs = {{0, 0, 0.5}, {0, 5, 0.5}, {4, 0, 0.5}, {1, 1, 1.0}, {7, 13, 0.3},
                                   {33, 17, 0.05}, {16, 16, 0.0}, {5, 9, 1.0}, {70, 300, 0.02}};
  std::vector<Case> cases;
  for (const Spec& s : specs)
    for (std::int64_t layout = 0; layout < 3; ++layout)
      for (std::int64_t index = 0; index < 2; ++index)
        cases.push_back({std::string(sparse::layout_name(kLayouts[layout])) + (index ? " I64 " : " I32 ") + "[" +
                             std::to_string(s.rows) + ", " + std::to_string(s.cols) + "] density " +
                             std::to_string(s.density),
                         {sparse_dense(s.rows, s.cols, s.density, dtype, rng)}, {layout, index}});
  // A skewed matrix: one row holds most of the nonzeros (the GPU's per-row loops).
  Tensor skewed = sparse_dense(3, 200000, 0.0, dtype, rng);
  skewed.select(0, 1).copy_(sparse_dense(1, 200000, 0.5, dtype, rng).select(0, 0));
  cases.push_back({"CSR I64 skewed [3, 200000]", {skewed}, {0, 1}});
  // -0 and NaN: -0 is not stored, NaN is (x != 0).
  if (!is_complex(dtype)) {
    const Tensor special = from_vector<double>({-0.0, 1, 0, NAN, 0, -2}, {2, 3}).to(dtype);
    cases.push_back({"CSR I64 with -0 and NaN", {special}, {0, 1}});
    cases.push_back({"CSC I32 with -0 and NaN", {special}, {1, 0}});
  }
  return cases;
}

std::vector<ErrorCase> sparse_errors(DType d) {
  auto idx = [](std::vector<std::int64_t> v, Device dev) { return index_of(v, DType::I64).to(dev); };
  auto vals = [d](std::int64_t n, Device dev) { return zeros({n}, d, dev); };
  return {
      {"pointers decrease", [=](Device dev) { sparse::csr(idx({0, 2, 1}, dev), idx({0}, dev), vals(1, dev), 2, 3); },
       ErrorKind::InvalidArgument, "sparse::csr: crow_indices decrease at position 2"},
      {"first pointer", [=](Device dev) { sparse::csr(idx({1, 1}, dev), idx({0}, dev), vals(1, dev), 1, 3); },
       ErrorKind::InvalidArgument, "sparse::csr: crow_indices[0] must be 0"},
      {"last pointer", [=](Device dev) { sparse::csr(idx({0, 1}, dev), idx({0, 1}, dev), vals(2, dev), 1, 3); },
       ErrorKind::InvalidArgument, "the last of crow_indices must equal nnz = 2"},
      {"index out of range", [=](Device dev) { sparse::csr(idx({0, 2}, dev), idx({0, 3}, dev), vals(2, dev), 1, 3); },
       ErrorKind::InvalidArgument, "sparse::csr: col_indices[1] is outside [0, 3)"},
      {"unsorted", [=](Device dev) { sparse::csc(idx({0, 2}, dev), idx({1, 0}, dev), vals(2, dev), 3, 1); },
       ErrorKind::InvalidArgument, "sparse::csc: row_indices[1] does not exceed the index before it"},
      {"coo out of range", [=](Device dev) { sparse::coo(idx({0, 5}, dev), idx({0, 0}, dev), vals(2, dev), 5, 1); },
       ErrorKind::InvalidArgument, "sparse::coo: an index lies outside the shape [5, 1]"},
      {"pointer count", [=](Device dev) { sparse::csr(idx({0, 0}, dev), idx({}, dev), vals(0, dev), 2, 3); },
       ErrorKind::ShapeMismatch, "crow_indices has 2 elements, expected 3"},
      // rows + 1 overflowed int64 here (UBSan, found by api_fuzz_test).
      {"pointer count for 2^63 - 1 rows",
       [=](Device dev) { sparse::csr(idx({0, 0}, dev), idx({}, dev), vals(0, dev), std::numeric_limits<std::int64_t>::max(), 3); },
       ErrorKind::ShapeMismatch, "crow_indices has 2 elements, expected 9223372036854775807 + 1"},
      {"index dtype", [=](Device dev) { sparse::from_dense(zeros({2, 2}, d, dev), Layout::CSR, DType::F32); },
       ErrorKind::DTypeMismatch, "index dtype F32 is not supported"},
      {"values dtype", [=](Device dev) { sparse::from_dense(zeros({2, 2}, DType::I32, dev)); }, ErrorKind::Unsupported,
       "values of dtype I32 are not supported"},
      {"spmv shape", [=](Device dev) { sparse::spmv(sparse::from_dense(zeros({2, 3}, d, dev)), zeros({2}, d, dev)); },
       ErrorKind::ShapeMismatch, "sparse::spmv: x is [2]"},
      {"spmm dtype", [=](Device dev) {
         sparse::spmm(sparse::from_dense(zeros({2, 3}, d, dev)), zeros({3, 2}, d == DType::F64 ? DType::F32 : DType::F64, dev));
       },
       ErrorKind::DTypeMismatch, "sparse::spmm: B is"},
      {"wrong accessor", [=](Device dev) { (void)sparse::from_dense(zeros({2, 3}, d, dev)).row_indices(); },
       ErrorKind::InvalidArgument, "row_indices: CSR [2, 3]"},
  };
}

FERRITE_CONFORMANCE(Entry{
    .op = "sparse_layouts",
    .dtypes = kValueDTypes,
    .cases = layout_cases,
    .run = {},
    .reference = {},
    .reference_tolerance = exact,
    .backend_tolerance = exact,
    .errors = sparse_errors,
    .run_outputs = run_layouts,
    .reference_outputs = reference_layouts,
});

// ---- coalescing: unsorted COO with duplicates ----

std::vector<Case> coalesce_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  for (const auto& [m, n, count] : std::vector<std::array<std::int64_t, 3>>{{0, 0, 0}, {3, 4, 0}, {1, 1, 5}, {6, 5, 40}, {100, 80, 3000}}) {
    std::uniform_int_distribution<std::int64_t> row(0, std::max<std::int64_t>(m - 1, 0)), col(0, std::max<std::int64_t>(n - 1, 0));
    std::vector<std::int64_t> rows, cols;
    for (std::int64_t k = 0; k < count; ++k) {
      rows.push_back(row(rng));
      cols.push_back(col(rng));
    }
    const Tensor values = sparse_dense(1, count, 1.0, dtype, rng).reshape({count});
    for (std::int64_t index = 0; index < 2; ++index)
      cases.push_back({"COO " + std::string(index ? "I64" : "I32") + " [" + std::to_string(m) + ", " + std::to_string(n) +
                           "] " + std::to_string(count) + " entries",
                       {index_of(rows, DType::I64), index_of(cols, DType::I64), values}, {m, n, index}});
  }
  return cases;
}

std::vector<Tensor> run_coalesce(const Case& c) {
  const DType index = index_dtype(c.ints[2]);
  const sparse::SparseMatrix s =
      sparse::coo(c.inputs[0].to(index), c.inputs[1].to(index), c.inputs[2], c.ints[0], c.ints[1]);
  const sparse::SparseMatrix k = sparse::coalesce(s);
  return {k.row_indices(), k.col_indices(), k.values(), sparse::to_dense(s), sparse::to_dense(sparse::to_csc(s))};
}

std::vector<Tensor> reference_coalesce(const Case& c) {
  const DType index = index_dtype(c.ints[2]);
  const std::int64_t m = c.ints[0], n = c.ints[1];
  const auto rows = c.inputs[0].to_vector<std::int64_t>(), cols = c.inputs[1].to_vector<std::int64_t>();
  const std::vector<Value> values = host_values(c.inputs[2]);
  std::map<std::pair<std::int64_t, std::int64_t>, Value> sums;  // sorted by (row, col)
  for (std::size_t k = 0; k < rows.size(); ++k) sums[{rows[k], cols[k]}] += values[k];
  std::vector<std::int64_t> out_rows, out_cols;
  std::vector<Value> out_values, dense(static_cast<std::size_t>(m * n));
  for (const auto& [key, v] : sums) {
    out_rows.push_back(key.first);
    out_cols.push_back(key.second);
    out_values.push_back(v);
    dense[static_cast<std::size_t>(key.first * n + key.second)] = v;
  }
  const auto count = static_cast<std::int64_t>(out_values.size());
  const DType d = c.inputs[2].dtype();
  return {index_of(out_rows, index), index_of(out_cols, index), tensor_of(out_values, {count}, d),
          tensor_of(dense, {m, n}, d), tensor_of(dense, {m, n}, d)};
}

FERRITE_CONFORMANCE(Entry{
    .op = "sparse_coalesce",
    .dtypes = kValueDTypes,
    .cases = coalesce_cases,
    .run = {},
    .reference = {},
    .reference_tolerance = exact,
    .backend_tolerance = exact,
    .errors = {},
    .run_outputs = run_coalesce,
    .reference_outputs = reference_coalesce,
});

// ---- products ----

std::vector<Case> product_cases(DType dtype, Rng& rng) {
  struct Spec {
    std::int64_t m, k, n;
    double density;
  };
  const std::vector<Spec> specs = {{0, 3, 2, 0.5}, {3, 0, 2, 0.5}, {4, 5, 0, 0.5}, {1, 1, 1, 1.0},
                                   {9, 7, 5, 0.3}, {64, 48, 33, 0.1}, {20, 20, 3, 0.0}, {300, 257, 16, 0.02}};
  std::vector<Case> cases;
  for (const Spec& s : specs)
    for (std::int64_t layout = 0; layout < 3; ++layout)
      cases.push_back({std::string(sparse::layout_name(kLayouts[layout])) + " [" + std::to_string(s.m) + ", " +
                           std::to_string(s.k) + "] x [" + std::to_string(s.k) + ", " + std::to_string(s.n) + "]",
                       {sparse_dense(s.m, s.k, s.density, dtype, rng), sparse_dense(s.k, s.n, 1.0, dtype, rng),
                        sparse_dense(s.k, 1, 1.0, dtype, rng).reshape({s.k}),
                        sparse_dense(s.n + 1, s.m, 1.0, dtype, rng)},
                       {layout, layout % 2}});
  // ±Inf and NaN, stored in A and present in the dense operands: only A's stored entries take
  // part (as in PyTorch's sparse products), so an Inf of B that meets a structural zero of A
  // leaves no NaN, while one that meets a stored entry spreads as IEEE says.
  if (!is_complex(dtype)) {
    const double inf = INFINITY;
    const Tensor a = from_vector<double>({inf, 0, 1, 0, -inf, 0, NAN, 0, 2, 0, 0, -1}, {4, 3}).to(dtype);
    const Tensor b = from_vector<double>({1, inf, 2, -3, 0, 1}, {3, 2}).to(dtype);
    const Tensor x = from_vector<double>({0, inf, 1}, {3}).to(dtype);
    const Tensor d = from_vector<double>({1, 0, inf, 2, -1, 0, 0, 1}, {2, 4}).to(dtype);
    for (std::int64_t layout = 0; layout < 3; ++layout)
      cases.push_back({std::string(sparse::layout_name(kLayouts[layout])) + " with ±Inf and NaN", {a, b, x, d},
                       {layout, layout % 2}});
  }
  return cases;
}

std::vector<Tensor> run_products(const Case& c) {
  const sparse::SparseMatrix a = sparse::from_dense(c.inputs[0], kLayouts[c.ints[0]], index_dtype(c.ints[1]));
  return {sparse::spmm(a, c.inputs[1]), sparse::spmv(a, c.inputs[2]), sparse::spmm(c.inputs[3], a)};
}

// Exact sums of exact products, rounded once to the dtype.
std::vector<Tensor> reference_products(const Case& c) {
  const Tensor& a = c.inputs[0];
  const std::int64_t m = a.size(0), k = a.size(1), n = c.inputs[1].size(1), p = c.inputs[3].size(0);
  const auto av = host_values(a), bv = host_values(c.inputs[1]), xv = host_values(c.inputs[2]),
             dv = host_values(c.inputs[3]);
  std::vector<Value> ab(static_cast<std::size_t>(m * n)), ax(static_cast<std::size_t>(m)), da(static_cast<std::size_t>(p * k));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t q = 0; q < k; ++q) {
      const Value aiq = av[static_cast<std::size_t>(i * k + q)];
      if (!is_stored(aiq)) continue;  // a structural zero multiplies nothing (0 x Inf is not NaN here)
      for (std::int64_t j = 0; j < n; ++j) ab[static_cast<std::size_t>(i * n + j)] += aiq * bv[static_cast<std::size_t>(q * n + j)];
      ax[static_cast<std::size_t>(i)] += aiq * xv[static_cast<std::size_t>(q)];
    }
  da.assign(static_cast<std::size_t>(p * k), Value(0, 0));
  for (std::int64_t r = 0; r < p; ++r)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t q = 0; q < k; ++q)
        if (is_stored(av[static_cast<std::size_t>(i * k + q)]))
          da[static_cast<std::size_t>(r * k + q)] += dv[static_cast<std::size_t>(r * m + i)] * av[static_cast<std::size_t>(i * k + q)];
  const DType d = a.dtype();
  return {tensor_of(ab, {m, n}, d), tensor_of(ax, {m}, d), tensor_of(da, {p, k}, d)};
}

FERRITE_CONFORMANCE(Entry{
    .op = "sparse_products",
    .dtypes = kValueDTypes,
    .cases = product_cases,
    .run = {},
    .reference = {},
    .reference_tolerance = exact,
    .backend_tolerance = exact,
    .errors = {},
    .run_outputs = run_products,
    .reference_outputs = reference_products,
});

}  // namespace
}  // namespace ferrite::conformance
