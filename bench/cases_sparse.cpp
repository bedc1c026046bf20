// Benchmark cases of the sparse matrices (docs/families/sparse.md). The sparse operand is a
// [16384, 16384] F32 matrix with a fixed pseudo-random pattern of about 0.8% nonzeros (about
// 2.1M), the size of issue 15's reference. Bytes count the CSR arrays (I64 indices) and the
// dense operands read once and the result written once.
#include "bench/bench_case.hpp"

namespace ferrite::bench {
namespace {

// A dense matrix with a hashed pattern of about `per_mille` nonzeros per thousand, built on the
// device (the same pattern as bench/torch_cases/sparse.py).
Tensor patterned(const BenchContext& ctx, std::int64_t side, std::int64_t per_mille) {
  const Tensor index = arange(side * side, DType::I64, ctx.device);
  const Tensor keep = remainder(index * 2654435761LL, full({}, 1000, DType::I64, ctx.device)) < per_mille;
  const Tensor values = (remainder(index, full({}, 7, DType::I64, ctx.device)) + 1).to(DType::F32);
  return where(keep, values, zeros({}, DType::F32, ctx.device)).reshape({side, side});
}

void sparse_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const std::int64_t side = ctx.full_size() ? 16384 : 512;
  const std::int64_t cols = ctx.full_size() ? 256 : 16;
  auto dense = ctx.hold(patterned(ctx, side, 8));
  auto a = std::make_shared<sparse::SparseMatrix>(sparse::from_dense(*dense));
  ctx.keep->push_back(a);
  auto b = ctx.random({side, cols}, DType::F32, 31);
  auto x = ctx.random({side}, DType::F32, 32);
  const double nnz = static_cast<double>(a->nnz());
  const double csr_bytes = nnz * (8 + 4) + 8.0 * static_cast<double>(side + 1);
  const std::string shape = "[" + std::to_string(side) + ", " + std::to_string(side) + "] nnz " + std::to_string(a->nnz());
  const double n = static_cast<double>(side);
  cases.push_back({"spmm_csr_f32", shape + " x [" + std::to_string(side) + ", " + std::to_string(cols) + "]",
                   csr_bytes + 4 * 2 * n * static_cast<double>(cols), [=] { (void)sparse::spmm(*a, *b); }});
  cases.push_back({"spmv_csr_f32", shape, csr_bytes + 4 * 2 * n, [=] { (void)sparse::spmv(*a, *x); }});
  cases.push_back({"from_dense_csr_f32", shape, 4 * n * n + csr_bytes, [=] { (void)sparse::from_dense(*dense); }});
  cases.push_back({"to_dense_csr_f32", shape, csr_bytes + 4 * n * n, [=] { (void)sparse::to_dense(*a); }});
  cases.push_back({"csr_to_csc_f32", shape, 2 * csr_bytes, [=] { (void)sparse::to_csc(*a); }});
}

// A [side, side] F32 CSR matrix with a uniformly random `density` fraction of nonzeros (the
// twin in bench/torch_cases/sparse.py draws its own pattern of the same density).
std::shared_ptr<sparse::SparseMatrix> random_sparse(const BenchContext& ctx, std::int64_t side, double density,
                                                    unsigned seed) {
  const Tensor r = *ctx.random({side, side}, DType::F32, seed);  // uniform in [-2, 2]
  auto a = std::make_shared<sparse::SparseMatrix>(
      sparse::from_dense(where(abs(r) < 4 * density, r, zeros({}, DType::F32, ctx.device))));
  ctx.keep->push_back(a);
  return a;
}

double csr_bytes_of(const sparse::SparseMatrix& a) {
  return static_cast<double>(a.nnz()) * (8 + 4) + 8.0 * static_cast<double>(a.rows() + 1);
}

// Issue 15's sparse x sparse case (two random 1%-dense 8192² matrices), with sddmm and add on
// the same operands. Bytes count the operands' CSR arrays (and the dense factors of sddmm)
// read once and the result's arrays written once (its nnz measured before timing).
void sparse_combine_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const std::int64_t side = ctx.full_size() ? 8192 : 512;
  const std::int64_t k = ctx.full_size() ? 64 : 16;
  const auto a = random_sparse(ctx, side, 0.01, 41), b = random_sparse(ctx, side, 0.01, 42);
  const auto m1 = ctx.random({side, k}, DType::F32, 43), m2 = ctx.random({k, side}, DType::F32, 44);
  const std::string shape = "[" + std::to_string(side) + ", " + std::to_string(side) + "] nnz " +
                            std::to_string(a->nnz()) + " and " + std::to_string(b->nnz());
  const double product_bytes = csr_bytes_of(sparse::spgemm(*a, *b));
  cases.push_back({"spgemm_csr_f32", shape, csr_bytes_of(*a) + csr_bytes_of(*b) + product_bytes,
                   [=] { (void)sparse::spgemm(*a, *b); }});
  const double n = static_cast<double>(side), kk = static_cast<double>(k);
  cases.push_back({"sddmm_csr_f32", shape + ", k " + std::to_string(k), 2 * csr_bytes_of(*a) + 4 * 2 * n * kk,
                   [=] { (void)sparse::sddmm(*a, *m1, *m2); }});
  const double sum_bytes = csr_bytes_of(sparse::add(*a, *b));
  cases.push_back({"add_csr_f32", shape, csr_bytes_of(*a) + csr_bytes_of(*b) + sum_bytes,
                   [=] { (void)sparse::add(*a, *b); }});
}

FERRITE_BENCH_CASES("sparse", sparse_cases);
FERRITE_BENCH_CASES("sparse", sparse_combine_cases);

}  // namespace
}  // namespace ferrite::bench
