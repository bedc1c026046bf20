// Benchmark cases of the memory family: device copies and host <-> device transfers.
#include <cstring>

#include "bench/bench_case.hpp"

#if FERRITE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ferrite::bench {
namespace {

void memory_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  // 2^28 elements on the GPU (1 GiB of f32); smaller on the CPU, where the point is a sanity run.
  const std::int64_t n = ctx.full_size() ? (std::int64_t(1) << 28) : (std::int64_t(1) << 22);
  const double nf = static_cast<double>(n);
  const std::string n_text = "[" + std::to_string(n) + "]";
  auto x32 = ctx.random({n}, DType::F32, 1);
  cases.push_back({"copy_f32", n_text, 2 * 4 * nf, [=] { (void)x32->clone(); }});

#if FERRITE_WITH_CUDA
  if (ctx.gpu()) {
    // Transfers of 1 GiB through ferrite's pinned staging, against a plain cudaMemcpy from
    // (to) a pinned buffer of the same size measured in the same run.
    const Device dev = ctx.device;
    const std::size_t bytes = static_cast<std::size_t>(n) * 4;
    auto host = std::make_shared<std::vector<float>>(static_cast<std::size_t>(n), 1.5f);
    ctx.keep->push_back(host);
    auto device_copy = ctx.hold(empty({n}, DType::F32, dev));
    void* pinned = nullptr;
    cudaMallocHost(&pinned, bytes);
    std::memset(pinned, 1, bytes);
    ctx.keep->push_back(std::shared_ptr<void>(pinned, [](void* p) { cudaFreeHost(p); }));
    cases.push_back({"upload_staged", n_text + " F32", static_cast<double>(bytes),
                     [=] { (void)from_vector(*host, {n}, dev); }, true});
    cases.push_back({"upload_pinned_memcpy", n_text + " F32", static_cast<double>(bytes),
                     [=] { cudaMemcpy(device_copy->mutable_data_ptr(), pinned, bytes, cudaMemcpyHostToDevice); },
                     true});
    cases.push_back({"download_staged", n_text + " F32", static_cast<double>(bytes),
                     [=] { backend(dev).copy_to_host(device_copy->buffer(), host->data(), bytes); }, true});
    cases.push_back({"download_pinned_memcpy", n_text + " F32", static_cast<double>(bytes),
                     [=] { cudaMemcpy(pinned, device_copy->data_ptr(), bytes, cudaMemcpyDeviceToHost); }, true});
  }
#endif
}

FERRITE_BENCH_CASES("memory", memory_cases);

}  // namespace
}  // namespace ferrite::bench
