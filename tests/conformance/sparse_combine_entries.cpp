// Conformance entries of the sparse ops with a sparse result (ferrite/sparse.hpp): spgemm,
// sddmm and add. Values are small integers (sparse_test_support.hpp), so the references,
// written here from the definitions in exact long double arithmetic and rounded once, match
// every backend exactly (F16/BF16 are computed in F32, where these sums are exact). Each entry
// returns the CSR arrays of the result and its dense form, so the structure (sorted columns,
// entries that sum to 0 kept) is compared element for element.
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "conformance/conformance.hpp"
#include "conformance/sparse_test_support.hpp"

namespace ferrite::conformance {
namespace {

using namespace sparse_test;  // NOLINT: the shared helpers of the sparse entries
using Entries = std::map<std::pair<std::int64_t, std::int64_t>, Value>;  // sorted by (row, col)


// crow, col, values and the dense form of a CSR [rows, cols] holding `entries`.
std::vector<Tensor> csr_outputs(const Entries& entries, std::int64_t rows, std::int64_t cols, DType dtype,
                                DType index) {
  std::vector<std::int64_t> ptr(static_cast<std::size_t>(rows + 1), 0), idx;
  std::vector<Value> values, dense(static_cast<std::size_t>(rows * cols));
  for (const auto& [key, v] : entries) {
    ++ptr[static_cast<std::size_t>(key.first + 1)];
    idx.push_back(key.second);
    values.push_back(v);
    dense[static_cast<std::size_t>(key.first * cols + key.second)] = v;
  }
  for (std::size_t i = 1; i < ptr.size(); ++i) ptr[i] += ptr[i - 1];
  const auto n = static_cast<std::int64_t>(values.size());
  return {index_of(ptr, index), index_of(idx, index), tensor_of(values, {n}, dtype),
          tensor_of(dense, {rows, cols}, dtype)};
}

std::vector<Tensor> run_outputs_of(const sparse::SparseMatrix& r) {
  return {r.crow_indices(), r.col_indices(), r.values(), sparse::to_dense(r)};
}

std::string shape_text(std::int64_t r, std::int64_t c) {
  return "[" + std::to_string(r) + ", " + std::to_string(c) + "]";
}

// Operand layouts exercised: (A, B) as indices into kLayouts.
const std::pair<std::int64_t, std::int64_t> kLayoutPairs[] = {{0, 0}, {1, 2}, {2, 1}};

// ---- spgemm ----

std::vector<Case> spgemm_cases(DType dtype, Rng& rng) {
  struct Spec {
    std::int64_t m, k, n;
    double da, db;
  };
  const std::vector<Spec> specs = {{0, 3, 2, 0.5, 0.5},  {3, 0, 2, 0.5, 0.5},  {2, 3, 0, 0.5, 0.5},
                                   {1, 1, 1, 1.0, 1.0},  {6, 5, 7, 0.3, 0.3},  {20, 20, 20, 0.0, 0.5},
                                   {40, 30, 50, 0.1, 0.15}, {130, 90, 70, 0.03, 0.05}, {5, 8, 300, 0.6, 0.6}};
  std::vector<Case> cases;
  std::int64_t index = 0;
  for (const Spec& s : specs)
    for (const auto& [la, lb] : kLayoutPairs) {
      index = 1 - index;
      cases.push_back({std::string(sparse::layout_name(kLayouts[la])) + " " + shape_text(s.m, s.k) + " x " +
                           std::string(sparse::layout_name(kLayouts[lb])) + " " + shape_text(s.k, s.n) +
                           (index ? " I64" : " I32"),
                       {sparse_dense(s.m, s.k, s.da, dtype, rng), sparse_dense(s.k, s.n, s.db, dtype, rng)},
                       {la, lb, index}});
    }
  // A skewed product: one row of A meets every row of B.
  Tensor skewed = sparse_dense(4, 300, 0.01, dtype, rng);
  skewed.select(0, 3).copy_(sparse_dense(1, 300, 1.0, dtype, rng).select(0, 0));
  cases.push_back({"skewed CSR [4, 300] x CSR [300, 2000]", {skewed, sparse_dense(300, 2000, 0.02, dtype, rng)}, {0, 0, 0}});
  // A product that cancels to 0 stays stored; one whose A columns meet only empty B rows is empty.
  const auto small = [&](std::vector<long double> v, Shape shape) {
    std::vector<Value> c;
    for (long double x : v) c.push_back({x, 0});
    return tensor_of(c, shape, dtype);
  };
  cases.push_back({"cancelling [1, 2] x [2, 1]", {small({1, 1}, {1, 2}), small({1, -1}, {2, 1})}, {0, 0, 1}});
  cases.push_back({"empty product [2, 2] x [2, 2]", {small({1, 0, 1, 0}, {2, 2}), small({0, 0, 3, 4}, {2, 2})}, {0, 0, 0}});
  // Empty rows of A, an empty row of B (A's row 3 meets only it: an empty row of C) and two
  // columns of C's row 0 that cancel to 0 among others that do not, at both index widths.
  const Tensor rows_a = small({1, 1, 0, 0, 0, 0, 2, 0, 1, 0, 0, 5, 0, 0, 0}, {5, 3});
  const Tensor rows_b = small({1, 2, 0, 3, -1, 0, 0, -3, 0, 0, 0, 0}, {3, 4});
  cases.push_back({"empty rows, cancelling [5, 3] x [3, 4] I32", {rows_a, rows_b}, {0, 0, 0}});
  cases.push_back({"empty rows, cancelling [5, 3] x [3, 4] I64", {rows_a, rows_b}, {0, 0, 1}});
  // Rows of A longer than 256 entries and rows of B longer than 256 (the CUDA kernel stages A's
  // row 256 entries at a time and covers a B row with 256 threads per step).
  cases.push_back({"long rows CSR [3, 600] x CSR [600, 700] I32",
                   {sparse_dense(3, 600, 0.6, dtype, rng), sparse_dense(600, 700, 0.45, dtype, rng)}, {0, 0, 0}});
  cases.push_back({"long rows CSR [3, 600] x CSR [600, 700] I64",
                   {sparse_dense(3, 600, 0.6, dtype, rng), sparse_dense(600, 700, 0.45, dtype, rng)}, {0, 0, 1}});
  // The CUDA backend's own kernel holds a row of C in shared memory up to n = 16384 columns for
  // F32 (F16/BF16 are computed in F32) and 8192 for F64; wider products and complex values run
  // cuSPARSE. Both sides of each limit, so both routes run on CUDA.
  const std::pair<std::int64_t, std::int64_t> limits[] = {{8192, 0}, {8193, 1}, {16384, 1}, {16385, 0}};
  for (const auto& [n, wide] : limits)
    cases.push_back({"shared-memory limit CSR [3, 4] x CSR [4, " + std::to_string(n) + "]" + (wide ? " I64" : " I32"),
                     {sparse_dense(3, 4, 0.7, dtype, rng), sparse_dense(4, n, 0.05, dtype, rng)}, {0, 0, wide}});
  return cases;
}

std::vector<Tensor> run_spgemm(const Case& c) {
  const DType index = index_dtype(c.ints[2]);
  const sparse::SparseMatrix a = sparse::from_dense(c.inputs[0], kLayouts[c.ints[0]], index);
  const sparse::SparseMatrix b = sparse::from_dense(c.inputs[1], kLayouts[c.ints[1]], index);
  return run_outputs_of(sparse::spgemm(a, b));
}

std::vector<Tensor> reference_spgemm(const Case& c) {
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  const std::int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  const auto av = host_values(a), bv = host_values(b);
  Entries out;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t q = 0; q < k; ++q) {
      const Value x = av[static_cast<std::size_t>(i * k + q)];
      if (!is_stored(x)) continue;
      for (std::int64_t j = 0; j < n; ++j) {
        const Value y = bv[static_cast<std::size_t>(q * n + j)];
        if (is_stored(y)) out[{i, j}] += x * y;  // the symbolic product: stored even if it sums to 0
      }
    }
  return csr_outputs(out, m, n, a.dtype(), index_dtype(c.ints[2]));
}

std::vector<ErrorCase> spgemm_errors(DType d) {
  const DType other = d == DType::F64 ? DType::F32 : DType::F64;
  auto s = [](std::int64_t r, std::int64_t c, DType t, Device dev, DType index = DType::I64) {
    return sparse::from_dense(ones({r, c}, t, dev), Layout::CSR, index);
  };
  return {
      {"spgemm shapes", [=](Device dev) { sparse::spgemm(s(2, 3, d, dev), s(2, 3, d, dev)); }, ErrorKind::ShapeMismatch,
       "sparse::spgemm: A is CSR [2, 3]"},
      {"spgemm dtypes", [=](Device dev) { sparse::spgemm(s(2, 3, d, dev), s(3, 2, other, dev)); },
       ErrorKind::DTypeMismatch, "(one values dtype)"},
      {"spgemm index dtypes", [=](Device dev) { sparse::spgemm(s(2, 3, d, dev), s(3, 2, d, dev, DType::I32)); },
       ErrorKind::DTypeMismatch, "(one index dtype)"},
      {"spgemm undefined", [=](Device dev) { sparse::spgemm(sparse::SparseMatrix(), s(3, 2, d, dev)); },
       ErrorKind::InvalidArgument, "sparse::spgemm: A is undefined"},
      {"sddmm shapes", [=](Device dev) { sparse::sddmm(s(2, 3, d, dev), ones({2, 4}, d, dev), ones({5, 3}, d, dev)); },
       ErrorKind::ShapeMismatch, "sparse::sddmm: mat1 [2, 4]"},
      {"sddmm dtypes", [=](Device dev) { sparse::sddmm(s(2, 3, d, dev), ones({2, 4}, other, dev), ones({4, 3}, d, dev)); },
       ErrorKind::DTypeMismatch, "sparse::sddmm: mat1 is"},
      {"add shapes", [=](Device dev) { sparse::add(s(2, 3, d, dev), s(3, 2, d, dev)); }, ErrorKind::ShapeMismatch,
       "sparse::add: A is CSR [2, 3]"},
      {"add dtypes", [=](Device dev) { sparse::add(s(2, 3, d, dev), s(2, 3, other, dev)); }, ErrorKind::DTypeMismatch,
       "(one values dtype)"},
  };
}

// Equal values, but either sign for a zero: cuSPARSE's complex multiply-add can give -0 where
// the CPU's gives +0 (the H200 run: "got -0, expected 0" in a C64 product), and torch makes no
// promise about that sign either. Any nonzero difference still fails.
Tolerance equal_values_either_zero(DType) { return {0, std::numeric_limits<double>::denorm_min()}; }

FERRITE_CONFORMANCE(Entry{
    .op = "sparse_spgemm",
    .dtypes = kValueDTypes,
    .cases = spgemm_cases,
    .run = {},
    .reference = {},
    .reference_tolerance = exact,
    .backend_tolerance = equal_values_either_zero,
    .errors = spgemm_errors,
    .run_outputs = run_spgemm,
    .reference_outputs = reference_spgemm,
});

// ---- sddmm (torch.sparse.sampled_addmm) ----

std::vector<Case> sddmm_cases(DType dtype, Rng& rng) {
  struct Spec {
    std::int64_t m, k, n;
    double density, beta, alpha;
  };
  const std::vector<Spec> specs = {{0, 3, 4, 0.5, 1, 1},    {3, 4, 0, 0.5, 1, 1},    {3, 0, 4, 0.5, 2, 1},
                                   {1, 1, 1, 1.0, 1, 1},    {6, 5, 7, 0.0, 1, 1},    {6, 5, 7, 0.3, 1, 1},
                                   {9, 4, 8, 0.4, 0, 2},    {17, 12, 23, 0.2, -0.5, 3}, {64, 40, 48, 0.05, 1, -1},
                                   {5, 33, 300, 0.3, 2, 0.5}};
  std::vector<Case> cases;
  std::int64_t layout = 0;
  for (const Spec& s : specs) {
    layout = (layout + 1) % 3;
    const std::int64_t index = layout % 2;
    cases.push_back({std::string(sparse::layout_name(kLayouts[layout])) + " " + shape_text(s.m, s.n) + " k " +
                         std::to_string(s.k) + " beta " + std::to_string(s.beta) + " alpha " + std::to_string(s.alpha),
                     {sparse_dense(s.m, s.n, s.density, dtype, rng), sparse_dense(s.m, s.k, 1.0, dtype, rng),
                      sparse_dense(s.k, s.n, 1.0, dtype, rng)},
                     {layout, index},
                     {s.beta, s.alpha}});
  }
  // A skewed input: one row holds most of the stored elements.
  Tensor skewed = sparse_dense(3, 20000, 0.001, dtype, rng);
  skewed.select(0, 2).copy_(sparse_dense(1, 20000, 0.5, dtype, rng).select(0, 0));
  cases.push_back({"skewed CSR [3, 20000] k 3", {skewed, sparse_dense(3, 3, 1.0, dtype, rng), sparse_dense(3, 20000, 1.0, dtype, rng)},
                   {0, 1}, {1, 1}});
  // beta = 0 ignores input's values: a NaN stored in input does not reach the result.
  if (!is_complex(dtype)) {
    const Tensor input = from_vector<double>({NAN, 0, 1, 0, 0, -2}, {2, 3}).to(dtype);
    cases.push_back({"CSR with NaN, beta 0", {input, sparse_dense(2, 3, 1.0, dtype, rng), sparse_dense(3, 3, 1.0, dtype, rng)},
                     {0, 1}, {0, 1}});
  }
  return cases;
}

std::vector<Tensor> run_sddmm(const Case& c) {
  const sparse::SparseMatrix input = sparse::from_dense(c.inputs[0], kLayouts[c.ints[0]], index_dtype(c.ints[1]));
  return run_outputs_of(sparse::sddmm(input, c.inputs[1], c.inputs[2], c.reals[0], c.reals[1]));
}

std::vector<Tensor> reference_sddmm(const Case& c) {
  const Tensor& input = c.inputs[0];
  const std::int64_t m = input.size(0), n = input.size(1), k = c.inputs[1].size(1);
  const auto iv = host_values(input), v1 = host_values(c.inputs[1]), v2 = host_values(c.inputs[2]);
  const long double beta = c.reals[0], alpha = c.reals[1];
  Entries out;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const Value x = iv[static_cast<std::size_t>(i * n + j)];
      if (!is_stored(x)) continue;
      Value dot(0, 0);
      for (std::int64_t q = 0; q < k; ++q)
        dot += v1[static_cast<std::size_t>(i * k + q)] * v2[static_cast<std::size_t>(q * n + j)];
      out[{i, j}] = beta == 0 ? alpha * dot : beta * x + alpha * dot;
    }
  return csr_outputs(out, m, n, input.dtype(), index_dtype(c.ints[1]));
}

FERRITE_CONFORMANCE(Entry{
    .op = "sparse_sddmm",
    .dtypes = kValueDTypes,
    .cases = sddmm_cases,
    .run = {},
    .reference = {},
    .reference_tolerance = exact,
    .backend_tolerance = exact,
    .errors = {},
    .run_outputs = run_sddmm,
    .reference_outputs = reference_sddmm,
});

// ---- add ----

std::vector<Case> add_cases(DType dtype, Rng& rng) {
  struct Spec {
    std::int64_t m, n;
    double da, db, alpha;
  };
  const std::vector<Spec> specs = {{0, 4, 0.5, 0.5, 1},   {4, 0, 0.5, 0.5, 1},  {1, 1, 1.0, 1.0, 1},
                                   {5, 6, 0.0, 0.0, 1},   {5, 6, 0.0, 0.4, 2},  {7, 9, 0.3, 0.3, 1},
                                   {7, 9, 0.3, 0.3, -1},  {50, 40, 0.05, 0.1, 0.5}, {3, 500, 0.4, 0.2, -2}};
  std::vector<Case> cases;
  std::int64_t index = 0;
  for (const Spec& s : specs)
    for (const auto& [la, lb] : kLayoutPairs) {
      index = 1 - index;
      cases.push_back({std::string(sparse::layout_name(kLayouts[la])) + " + " +
                           std::string(sparse::layout_name(kLayouts[lb])) + " " + shape_text(s.m, s.n) + " alpha " +
                           std::to_string(s.alpha) + (index ? " I64" : " I32"),
                       {sparse_dense(s.m, s.n, s.da, dtype, rng), sparse_dense(s.m, s.n, s.db, dtype, rng)},
                       {la, lb, index},
                       {s.alpha}});
    }
  // Skewed rows: one row holds most of the nonzeros (one GPU warp places all of it).
  Tensor sa = sparse_dense(3, 200000, 0.001, dtype, rng), sb = sparse_dense(3, 200000, 0.001, dtype, rng);
  sa.select(0, 1).copy_(sparse_dense(1, 200000, 0.5, dtype, rng).select(0, 0));
  sb.select(0, 1).copy_(sparse_dense(1, 200000, 0.3, dtype, rng).select(0, 0));
  cases.push_back({"skewed CSR + CSR [3, 200000]", {sa, sb}, {0, 0, 1}, {1}});
  // a + (-1) a: every entry sums to 0 and stays stored.
  const Tensor a = sparse_dense(6, 5, 0.4, dtype, rng);
  cases.push_back({"a - a keeps its zeros", {a, a}, {0, 2, 1}, {-1}});
  return cases;
}

std::vector<Tensor> run_add(const Case& c) {
  const DType index = index_dtype(c.ints[2]);
  const sparse::SparseMatrix a = sparse::from_dense(c.inputs[0], kLayouts[c.ints[0]], index);
  const sparse::SparseMatrix b = sparse::from_dense(c.inputs[1], kLayouts[c.ints[1]], index);
  return run_outputs_of(sparse::add(a, b, c.reals[0]));
}

std::vector<Tensor> reference_add(const Case& c) {
  const std::int64_t m = c.inputs[0].size(0), n = c.inputs[0].size(1);
  const auto av = host_values(c.inputs[0]), bv = host_values(c.inputs[1]);
  const long double alpha = c.reals[0];
  Entries out;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const Value x = av[static_cast<std::size_t>(i * n + j)], y = bv[static_cast<std::size_t>(i * n + j)];
      if (is_stored(x) && is_stored(y)) out[{i, j}] = x + alpha * y;
      else if (is_stored(x)) out[{i, j}] = x;
      else if (is_stored(y)) out[{i, j}] = alpha * y;
    }
  return csr_outputs(out, m, n, c.inputs[0].dtype(), index_dtype(c.ints[2]));
}

FERRITE_CONFORMANCE(Entry{
    .op = "sparse_add",
    .dtypes = kValueDTypes,
    .cases = add_cases,
    .run = {},
    .reference = {},
    .reference_tolerance = exact,
    .backend_tolerance = exact,
    .errors = {},
    .run_outputs = run_add,
    .reference_outputs = reference_add,
});

}  // namespace
}  // namespace ferrite::conformance
