// Benchmark cases of the linear-algebra family (issue #13): large factorisations at n = 1024
// and 4096 in F32 and F64, and batches of small matrices where PyTorch loops one cuSOLVER
// call per matrix. Times include the plain ops' one info read-back, as PyTorch's do.
#include "bench/bench_case.hpp"
#include "ferrite/linalg.hpp"

namespace ferrite::bench {
namespace {

std::string square_text(std::int64_t batch, std::int64_t n) {
  const std::string m = "[" + std::to_string(n) + ", " + std::to_string(n) + "]";
  return batch > 1 ? std::to_string(batch) + " x " + m : m;
}

// Nominal flop counts (LAPACK's leading terms, e.g. n³/3 for Cholesky), the same on both
// sides, so TFLOP/s compare like times. Every case is host-timed: the plain ops read their
// info back (a synchronisation), as PyTorch's do.
double flops(std::int64_t batch, std::int64_t n, double factor) {
  return factor * static_cast<double>(batch) * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
}

void linalg_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const bool full = ctx.full_size();
  const std::vector<std::int64_t> sizes = full ? std::vector<std::int64_t>{1024, 4096} : std::vector<std::int64_t>{64};
  for (DType dtype : {DType::F32, DType::F64}) {
    const std::string suffix = dtype == DType::F32 ? "f32" : "f64";
    for (std::int64_t n : sizes) {
      const std::string tag = suffix + "_" + std::to_string(n);
      auto a = ctx.hashed({n, n}, dtype, 31);
      // Symmetric positive-definite: a·aᵀ + n·I; symmetric for eigh: a + aᵀ.
      auto spd = ctx.hold(matmul(*a, *a, {.transpose_b = true}) + eye(n, n, dtype, ctx.device) * static_cast<double>(n));
      auto sym = ctx.hold(*a + a->mT());
      auto b = ctx.hashed({n, 1}, dtype, 32);
      cases.push_back({"linalg_cholesky_" + tag, square_text(1, n), 0, [=] { (void)linalg::cholesky(*spd); }, true, flops(1, n, 1.0 / 3)});
      // upper = true: PyTorch runs cuSOLVER's (slower) UPPER potrf; ferrite LOWER on aᵀ.
      cases.push_back({"linalg_cholesky_upper_" + tag, square_text(1, n), 0, [=] { (void)linalg::cholesky(*spd, true); },
                       true, flops(1, n, 1.0 / 3)});
      cases.push_back({"linalg_solve_" + tag, square_text(1, n) + " x [" + std::to_string(n) + ", 1]", 0,
                       [=] { (void)linalg::solve(*a, *b); }, true, flops(1, n, 2.0 / 3)});
      cases.push_back({"linalg_qr_" + tag, square_text(1, n), 0, [=] { (void)linalg::qr(*a); }, true, flops(1, n, 8.0 / 3)});
      cases.push_back({"linalg_eigh_" + tag, square_text(1, n), 0, [=] { (void)linalg::eigh(*sym); }, true, flops(1, n, 9)});
      cases.push_back({"linalg_svd_" + tag, square_text(1, n), 0, [=] { (void)linalg::svd(*a); }, true, flops(1, n, 22)});
      if (n <= 1024 && dtype == DType::F32)
        cases.push_back({"linalg_eig_" + tag, square_text(1, n), 0, [=] { (void)linalg::eig(*a); }, true, flops(1, n, 25)});
    }
  }
  // Batches of small matrices.
  const std::int64_t scale = full ? 1 : 16;
  for (std::int64_t n : {33, 64}) {
    auto a = ctx.hashed({1024 / scale, n, n}, DType::F64, 33);
    auto sym = ctx.hold(*a + a->mT());
    cases.push_back({"linalg_eigh_batched_f64_" + std::to_string(n), square_text(1024 / scale, n), 0,
                     [=] { (void)linalg::eigh(*sym); }, true, flops(1024 / scale, n, 9)});
  }
  for (auto [batch, n] : {std::pair<std::int64_t, std::int64_t>{512, 3}, {1024, 16}}) {
    auto a = ctx.hashed({batch / scale, n, n}, DType::F32, 34);
    cases.push_back({"linalg_eig_batched_f32_" + std::to_string(n), square_text(batch / scale, n), 0,
                     [=] { (void)linalg::eig(*a); }, true, flops(batch / scale, n, 25)});
  }
  for (DType dtype : {DType::F32, DType::F64}) {
    const std::string suffix = dtype == DType::F32 ? "f32" : "f64";
    auto s = ctx.hashed({1024 / scale, 32, 32}, dtype, 35);
    cases.push_back({"linalg_svd_batched_" + suffix + "_32", square_text(1024 / scale, 32), 0,
                     [=] { (void)linalg::svd(*s); }, true, flops(1024 / scale, 32, 22)});
  }
}

FERRITE_BENCH_CASES("linalg", linalg_cases);

}  // namespace
}  // namespace ferrite::bench
