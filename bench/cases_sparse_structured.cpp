// Benchmark cases of 2:4 semi-structured sparsity (issue 15; docs/families/sparse.md): the
// structured product A B with A [16384, 8192] pruned 2:4 along its rows and B [8192, 8192],
// in BF16 and F16, next to ferrite's dense product of the same pruned A (cuBLASLt). Both count
// the dense product's 2·m·n·k flops, as PyTorch's semi-structured benchmarks do, so the ratio
// of the two rates is the speedup. Registered only where cuSPARSELt can be loaded.
#include <iostream>

#include "bench/bench_case.hpp"

namespace ferrite::bench {
namespace {

void structured_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  std::string why;
  if (!sparse::structured_available(ctx.device, &why)) {
    std::cerr << "bench: the 2:4 structured cases are left out on " << ctx.device.str() << ": " << why << "\n";
    return;
  }
  const std::int64_t m = ctx.full_size() ? 16384 : 64, k = ctx.full_size() ? 8192 : 128, n = ctx.full_size() ? 8192 : 64;
  const std::string shape = "[" + std::to_string(m) + ", " + std::to_string(k) + "] 2:4 x [" + std::to_string(k) + ", " +
                            std::to_string(n) + "]";
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  for (const auto& [dtype, suffix] : {std::pair{DType::BF16, "bf16"}, std::pair{DType::F16, "f16"}}) {
    const auto pruned = ctx.hold(sparse::prune_24(*ctx.random({m, k}, dtype, 61)));
    auto a = std::make_shared<sparse::Sparse24Matrix>(sparse::compress_24(*pruned));
    ctx.keep->push_back(a);
    const auto b = ctx.random({k, n}, dtype, 62);
    cases.push_back({std::string("matmul_24_") + suffix, shape, 0, [=] { (void)sparse::matmul_24(*a, *b); }, false, flops});
    cases.push_back({std::string("matmul_24_dense_") + suffix, shape + " (dense product)", 0,
                     [=] { (void)matmul(*pruned, *b); }, false, flops});
  }
}

FERRITE_BENCH_CASES("sparse", structured_cases);

}  // namespace
}  // namespace ferrite::bench
