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

#include "bench/bench_case.hpp"
#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ferrite::bench {

std::vector<CaseFamily>& case_families() {
  static std::vector<CaseFamily> families;
  return families;
}

bool register_cases(const char* family, CaseMaker maker) {
  case_families().push_back({family, maker});
  return true;
}

std::shared_ptr<Tensor> BenchContext::hold(Tensor t) const {
  auto p = std::make_shared<Tensor>(std::move(t));
  keep->push_back(p);
  return p;
}

std::shared_ptr<Tensor> BenchContext::random(Shape shape, DType dtype, unsigned seed) const {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> host(static_cast<std::size_t>(shape_numel(shape)));
  for (float& v : host) v = dist(rng);
  return hold(from_vector(host, shape, Device::cpu()).to(dtype).to(device));
}

}  // namespace ferrite::bench

namespace ferrite::tools {
namespace {

using bench::BenchCase;

constexpr double kGpuBandwidthCeiling = 4.3e12;  // bytes/s, perf.md's practical HBM ceiling
constexpr int kBackToBack = 5;

struct Result {
  std::string name, shape;
  double ms = 0, bytes = 0, flops = 0;
};

struct Options {
  Device device = Device::cpu();
  std::string json_path;
  std::string filter;
  bool quick = false;
};

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

/// `--filter a,b`: runs the cases whose names contain any of the comma-separated parts.
bool matches_filter(const std::string& name, const std::string& filter) {
  if (filter.empty()) return true;
  for (std::size_t start = 0; start <= filter.size();) {
    const std::size_t comma = std::min(filter.find(',', start), filter.size());
    const std::string part = filter.substr(start, comma - start);
    if (!part.empty() && name.find(part) != std::string::npos) return true;
    start = comma + 1;
  }
  return false;
}

}  // namespace

int run_bench(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  (void)backend(opt.device);  // fail early on an unavailable device
  std::vector<std::shared_ptr<void>> keep;
  const bench::BenchContext context{opt.device, opt.quick || !opt.device.is_cuda(), &keep};
  const int repeats = opt.quick ? 5 : 20;

  std::vector<Result> results;
  std::printf("ferrite bench on %s\n%-30s %-34s %10s %12s %8s\n", opt.device.str().c_str(), "case", "shape", "ms",
              "rate", "HBM");
  // One family at a time, its inputs released before the next family's are made.
  for (const bench::CaseFamily& family : bench::case_families()) {
    std::vector<BenchCase> cases;
    family.maker(context, cases);
    for (const BenchCase& c : cases) {
      if (!matches_filter(c.name, opt.filter)) continue;
      const double ms = time_case(c, opt.device, c.host_timed ? 1 : 3, c.host_timed ? std::min(repeats, 5) : repeats);
      results.push_back({c.name, c.shape, ms, c.bytes, c.flops});
      char rate[64];
      std::string ceiling = "-";
      if (c.flops > 0) {
        std::snprintf(rate, sizeof rate, "%.1f TFLOP/s", c.flops / (ms * 1e-3) / 1e12);
      } else {
        const double gbps = c.bytes / (ms * 1e-3) / 1e9;
        std::snprintf(rate, sizeof rate, "%.1f GB/s", gbps);
        if (opt.device.is_cuda() && !c.host_timed)
          ceiling = std::to_string(static_cast<int>(100 * gbps * 1e9 / kGpuBandwidthCeiling)) + "%";
      }
      std::printf("%-30s %-34s %10.4f %12s %8s\n", c.name.c_str(), c.shape.c_str(), ms, rate, ceiling.c_str());
      std::fflush(stdout);
    }
    cases.clear();
    keep.clear();
  }

  if (!opt.json_path.empty()) {
    std::ofstream out(opt.json_path);
    out << "{\n  \"device\": \"" << opt.device.str() << "\",\n  \"cases\": [\n";
    for (std::size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      out << "    {\"name\": \"" << r.name << "\", \"shape\": \"" << r.shape << "\", \"ms\": " << r.ms
          << ", \"bytes\": " << r.bytes << ", \"gbps\": " << r.bytes / (r.ms * 1e-3) / 1e9 << ", \"flops\": " << r.flops
          << ", \"tflops\": " << r.flops / (r.ms * 1e-3) / 1e12 << "}" << (i + 1 < results.size() ? ",\n" : "\n");
    }
    out << "  ]\n}\n";
  }
  return 0;
}

}  // namespace ferrite::tools
