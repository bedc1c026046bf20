// `ferrite bench`: the benchmark cases of docs/performance.md on one device.
//
// GPU cases are timed with CUDA events on ferrite's stream: 3 warm-ups, then the median of
// 20 samples, each sample kBackToBack calls between two events (so the host's per-call work
// overlaps the previous call's kernel, as in a real program; compare_torch.py times PyTorch
// the same way). Every input is at least 16x the H200's 60 MB L2, so no case measures the
// cache. Bytes count each input read once and each output written once (perf.md).
// Transfers are timed on the host clock around calls that return when the data has arrived.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ferrite::tools {
namespace {

constexpr double kGpuBandwidthCeiling = 4.3e12;  // bytes/s, perf.md's practical HBM ceiling
constexpr int kBackToBack = 5;

struct BenchCase {
  std::string name;
  std::string shape;
  double bytes = 0;
  std::function<void()> run;
  bool host_timed = false;  // transfers: wall clock around a synchronous call
};

struct Result {
  std::string name, shape;
  double ms = 0, bytes = 0;
};

struct Options {
  Device device = Device::cpu();
  std::string json_path;
  std::string filter;
  bool quick = false;
};

Tensor random_tensor(Shape shape, DType dtype, Device device, unsigned seed) {
  // Fresh random values, never zeros (zeros can run faster than real data).
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> host(static_cast<std::size_t>(shape_numel(shape)));
  for (float& v : host) v = dist(rng);
  return from_vector(host, shape, Device::cpu()).to(dtype).to(device);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double time_case(const BenchCase& c, Device device, int warmups, int repeats) {
  for (int i = 0; i < warmups; ++i) c.run();
  synchronize(device);
  std::vector<double> ms;
#if FERRITE_WITH_CUDA
  if (device.is_cuda() && !c.host_timed) {
    auto stream = static_cast<cudaStream_t>(cuda::current_stream(device.index));
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    for (int i = 0; i < repeats; ++i) {
      cudaEventRecord(start, stream);
      for (int k = 0; k < kBackToBack; ++k) c.run();
      cudaEventRecord(stop, stream);
      cudaEventSynchronize(stop);
      float elapsed = 0;
      cudaEventElapsedTime(&elapsed, start, stop);
      ms.push_back(elapsed / kBackToBack);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return median(ms);
  }
#endif
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    c.run();
    synchronize(device);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(ms);
}

std::vector<BenchCase> make_cases(const Options& opt, std::vector<std::shared_ptr<void>>& keep) {
  const Device dev = opt.device;
  const bool gpu = dev.is_cuda();
  // 2^28 elements on the GPU (1 GiB of f32); smaller on the CPU, where the point is a sanity run.
  const std::int64_t n = gpu && !opt.quick ? (std::int64_t(1) << 28) : (std::int64_t(1) << 22);
  const std::int64_t rows = gpu && !opt.quick ? 65536 : 1024, cols = 4096;
  auto hold = [&](Tensor t) {
    auto p = std::make_shared<Tensor>(std::move(t));
    keep.push_back(p);
    return p;
  };
  std::vector<BenchCase> cases;

  auto x32 = hold(random_tensor({n}, DType::F32, dev, 1));
  auto y32 = hold(random_tensor({n}, DType::F32, dev, 2));
  auto x16 = hold(random_tensor({n}, DType::BF16, dev, 3));
  auto y16 = hold(random_tensor({n}, DType::BF16, dev, 4));
  auto matrix = hold(random_tensor({rows, cols}, DType::F32, dev, 5));
  auto row = hold(random_tensor({cols}, DType::F32, dev, 6));
  const double nf = static_cast<double>(n);
  const std::string n_text = "[" + std::to_string(n) + "]";

  cases.push_back({"copy_f32", n_text, 2 * 4 * nf, [=] { (void)x32->clone(); }});
  cases.push_back({"add_f32", n_text, 3 * 4 * nf, [=] { (void)add(*x32, *y32); }});
  cases.push_back({"add_bf16", n_text, 3 * 2 * nf, [=] { (void)add(*x16, *y16); }});
  cases.push_back({"add_row_broadcast_f32", "[" + std::to_string(rows) + ", 4096] + [4096]",
                   2.0 * 4 * rows * cols + 4.0 * cols, [=] { (void)add(*matrix, *row); }});
  cases.push_back({"cast_f32_to_bf16", n_text, 6 * nf, [=] { (void)x32->to(DType::BF16); }});
  cases.push_back({"relu_f32", n_text, 2 * 4 * nf, [=] { (void)relu(*x32); }});

#if FERRITE_WITH_CUDA
  if (gpu) {
    // Transfers of 1 GiB through ferrite's pinned staging, against a plain cudaMemcpy from
    // (to) a pinned buffer of the same size measured in the same run.
    const std::size_t bytes = static_cast<std::size_t>(n) * 4;
    auto host = std::make_shared<std::vector<float>>(static_cast<std::size_t>(n), 1.5f);
    keep.push_back(host);
    auto device_copy = hold(empty({n}, DType::F32, dev));
    void* pinned = nullptr;
    cudaMallocHost(&pinned, bytes);
    std::memset(pinned, 1, bytes);
    keep.push_back(std::shared_ptr<void>(pinned, [](void* p) { cudaFreeHost(p); }));
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
  return cases;
}

Options parse(int argc, char** argv) {
  Options opt;
  opt.device = cuda_device_count() > 0 ? Device::cuda(0) : Device::cpu();
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      FERRITE_CHECK(i + 1 < argc, InvalidArgument, "bench: ", arg, " needs a value");
      return argv[++i];
    };
    if (arg == "--device") {
      const std::string d = value();
      opt.device = d == "cpu" ? Device::cpu() : Device::cuda(d.rfind("cuda:", 0) == 0 ? std::stoi(d.substr(5)) : 0);
    } else if (arg == "--json") {
      opt.json_path = value();
    } else if (arg == "--filter") {
      opt.filter = value();
    } else if (arg == "--quick") {
      opt.quick = true;
    } else {
      FERRITE_THROW(InvalidArgument, "bench: unknown option ", arg);
    }
  }
  return opt;
}

}  // namespace

int run_bench(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  (void)backend(opt.device);  // fail early on an unavailable device
  std::vector<std::shared_ptr<void>> keep;
  const std::vector<BenchCase> cases = make_cases(opt, keep);
  const int repeats = opt.quick ? 5 : 20;

  std::vector<Result> results;
  std::printf("ferrite bench on %s\n%-26s %-28s %10s %10s %8s\n", opt.device.str().c_str(), "case", "shape", "ms",
              "GB/s", "ceiling");
  for (const BenchCase& c : cases) {
    if (!opt.filter.empty() && c.name.find(opt.filter) == std::string::npos) continue;
    const double ms = time_case(c, opt.device, c.host_timed ? 1 : 3, c.host_timed ? std::min(repeats, 5) : repeats);
    results.push_back({c.name, c.shape, ms, c.bytes});
    const double gbps = c.bytes / (ms * 1e-3) / 1e9;
    const std::string ceiling =
        opt.device.is_cuda() && !c.host_timed ? std::to_string(static_cast<int>(100 * gbps * 1e9 / kGpuBandwidthCeiling)) + "%" : "-";
    std::printf("%-26s %-28s %10.4f %10.1f %8s\n", c.name.c_str(), c.shape.c_str(), ms, gbps, ceiling.c_str());
    std::fflush(stdout);
  }

  if (!opt.json_path.empty()) {
    std::ofstream out(opt.json_path);
    out << "{\n  \"device\": \"" << opt.device.str() << "\",\n  \"cases\": [\n";
    for (std::size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      out << "    {\"name\": \"" << r.name << "\", \"shape\": \"" << r.shape << "\", \"ms\": " << r.ms
          << ", \"bytes\": " << r.bytes << ", \"gbps\": " << r.bytes / (r.ms * 1e-3) / 1e9 << "}"
          << (i + 1 < results.size() ? ",\n" : "\n");
    }
    out << "  ]\n}\n";
  }
  return 0;
}

}  // namespace ferrite::tools
