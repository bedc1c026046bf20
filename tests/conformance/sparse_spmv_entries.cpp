// Conformance of sparse::spmv on CSR matrices built from their arrays, shaped to reach every
// path of the CUDA kernel (src/cuda/sparse/sparse_spmv_kernels.cu): the lanes per row come
// from the average row length (<= 8 entries: 4 lanes, <= 24: 8, <= 64: 16, else 32) and rows
// longer than 64 x lanes are summed by a whole block (each block inspecting 256 rows at a
// time). Cases: every lane count, empty rows, nnz = 0, no rows, rows just at and just past the
// long-row threshold, several long rows in one 256-row step, and one row of 10^6 entries
// (issue 15's skewed case); I32 and I64 indices.
// Values and x are small integers, so every sum is exact in every accumulator whatever the
// order: CUDA (its own summation order) must match the CPU bit for bit, and both the exact
// reference rounded once.
#include <algorithm>
#include <numeric>
#include <set>

#include "conformance/conformance.hpp"
#include "conformance/reference.hpp"
#include "conformance/sparse_test_support.hpp"

namespace ferrite::conformance {
namespace {

using namespace sparse_test;  // NOLINT: the shared helpers of the sparse entries

// `length` distinct sorted columns in [0, cols) (Floyd's sampling; all of them when full).
std::vector<std::int64_t> pick_columns(std::int64_t length, std::int64_t cols, Rng& rng) {
  std::vector<std::int64_t> out;
  if (length >= cols) {
    out.resize(static_cast<std::size_t>(cols));
    std::iota(out.begin(), out.end(), std::int64_t{0});
    return out;
  }
  std::set<std::int64_t> chosen;
  for (std::int64_t j = cols - length; j < cols; ++j) {
    const std::int64_t t = std::uniform_int_distribution<std::int64_t>(0, j)(rng);
    chosen.insert(chosen.count(t) ? j : t);
  }
  return {chosen.begin(), chosen.end()};
}

// A nonzero small integer (complex dtypes get an imaginary part too).
Value small_value(DType dtype, Rng& rng) {
  std::uniform_int_distribution<int> v(-4, 4);
  const int re = v(rng);
  return {static_cast<long double>(re != 0 ? re : 1), static_cast<long double>(is_complex(dtype) ? v(rng) : 0)};
}

// A case from the rows' lengths: inputs crow (I64), col (I64), values, x; ints rows, cols, index code.
void add_case(std::vector<Case>& cases, const std::string& label, const std::vector<std::int64_t>& lengths,
              std::int64_t cols, DType dtype, Rng& rng) {
  std::vector<std::int64_t> crow = {0}, col;
  std::vector<Value> values;
  for (std::int64_t length : lengths) {
    for (std::int64_t j : pick_columns(length, cols, rng)) {
      col.push_back(j);
      values.push_back(small_value(dtype, rng));
    }
    crow.push_back(static_cast<std::int64_t>(col.size()));
  }
  std::vector<Value> x(static_cast<std::size_t>(cols));
  for (Value& v : x) v = small_value(dtype, rng);
  const auto rows = static_cast<std::int64_t>(lengths.size()), nnz = static_cast<std::int64_t>(col.size());
  for (std::int64_t index = 0; index < 2; ++index)
    cases.push_back({label + (index ? " I64" : " I32") + " [" + std::to_string(rows) + ", " + std::to_string(cols) +
                         "] nnz " + std::to_string(nnz),
                     {index_of(crow, DType::I64), index_of(col, DType::I64), tensor_of(values, {nnz}, dtype),
                      tensor_of(x, {cols}, dtype)},
                     {rows, cols, index}});
}

// `rows` lengths drawn from [lo, hi], every `empty_every`-th row empty (0: none).
std::vector<std::int64_t> lengths_between(std::int64_t rows, std::int64_t lo, std::int64_t hi,
                                          std::int64_t empty_every, Rng& rng) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(rows));
  std::uniform_int_distribution<std::int64_t> length(lo, hi);
  for (std::int64_t i = 0; i < rows; ++i) out[static_cast<std::size_t>(i)] = empty_every && i % empty_every == 0 ? 0 : length(rng);
  return out;
}

std::vector<Case> spmv_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  add_case(cases, "no rows", {}, 4, dtype, rng);
  add_case(cases, "nnz 0", {0, 0, 0, 0, 0}, 7, dtype, rng);
  add_case(cases, "1 x 1", {1}, 1, dtype, rng);
  // Average lengths in each lane band (the bands' edges are the averages 8, 24 and 64).
  add_case(cases, "4 lanes, empty rows", lengths_between(300, 0, 8, 5, rng), 200, dtype, rng);
  add_case(cases, "8 lanes", lengths_between(200, 10, 24, 0, rng), 300, dtype, rng);
  add_case(cases, "16 lanes, empty rows", lengths_between(150, 30, 70, 9, rng), 400, dtype, rng);
  add_case(cases, "32 lanes, empty rows", lengths_between(100, 80, 300, 7, rng), 1000, dtype, rng);
  // 4 lanes (average about 1.2), rows of exactly 256 = 64 x 4 entries (the group's) and of 257
  // and 600 (a block's), the long ones in one 256-row step and in the last, partial step.
  {
    std::vector<std::int64_t> lengths = lengths_between(5000, 0, 2, 0, rng);
    lengths[3] = 256;
    lengths[5] = 257;
    lengths[6] = 600;
    lengths[4999] = 300;
    add_case(cases, "4 lanes with long rows", lengths, 600, dtype, rng);
  }
  // 32 lanes (average about 25000): one row of 10^6 entries (every column), rows of 2048 (the
  // group's) and 2049 and 3000 (a block's), some rows empty.
  {
    std::vector<std::int64_t> lengths = lengths_between(40, 0, 100, 6, rng);
    lengths[7] = 1000000;
    lengths[8] = 2048;
    lengths[9] = 2049;
    lengths[35] = 3000;
    add_case(cases, "a row of 10^6 entries", lengths, 1000000, dtype, rng);
  }
  return cases;
}

std::vector<Tensor> run_spmv(const Case& c) {
  const DType index = index_dtype(c.ints[2]);
  const sparse::SparseMatrix a =
      sparse::csr(c.inputs[0].to(index), c.inputs[1].to(index), c.inputs[2], c.ints[0], c.ints[1]);
  return {sparse::spmv(a, c.inputs[3])};
}

// Exact sums of exact products over the stored entries, rounded once to the dtype.
std::vector<Tensor> reference_spmv(const Case& c) {
  const auto crow = c.inputs[0].to_vector<std::int64_t>(), col = c.inputs[1].to_vector<std::int64_t>();
  const std::vector<Value> values = host_values(c.inputs[2]), x = host_values(c.inputs[3]);
  const std::int64_t rows = c.ints[0];
  std::vector<Value> y(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t p = crow[static_cast<std::size_t>(i)]; p < crow[static_cast<std::size_t>(i + 1)]; ++p)
      y[static_cast<std::size_t>(i)] +=
          values[static_cast<std::size_t>(p)] * x[static_cast<std::size_t>(col[static_cast<std::size_t>(p)])];
  return {tensor_of(y, {rows}, c.inputs[2].dtype())};
}

FERRITE_CONFORMANCE(Entry{
    .op = "sparse_spmv",
    .dtypes = kValueDTypes,
    .cases = spmv_cases,
    .run = {},
    .reference = {},
    .reference_tolerance = exact,
    .backend_tolerance = exact,
    .errors = {},
    .run_outputs = run_spmv,
    .reference_outputs = reference_spmv,
});

}  // namespace
}  // namespace ferrite::conformance
