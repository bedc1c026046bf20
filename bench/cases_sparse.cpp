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

FERRITE_BENCH_CASES("sparse", sparse_cases);

}  // namespace
}  // namespace ferrite::bench
