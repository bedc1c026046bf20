// `ferrite bench`: the benchmark cases of docs/performance.md on one device.
//
// GPU cases are timed with CUDA events on ferrite's stream: 3 warm-ups, then the median of
// 20 samples, each sample kBackToBack calls between two events (so the host's per-call work
// overlaps the previous call's kernel, as in a real program; compare_torch.py times PyTorch
// the same way). Every input is at least 16x the H200's 60 MB L2, so no case measures the
// cache. Bytes count each input read once and each output written once (perf.md).
// Transfers (and other host-timed cases) are timed on the host clock around calls that return
// when the data has arrived: one call a sample, up to 15 samples while they add up to under a
// second past the fifth.
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
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
#include "tools/commands.hpp"

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

// Every step is exact in 64-bit integers (products stay below 2^59) and in double (x < 2^32,
// so x * 2^-31 - 1 is exact), and the one rounding is the cast to dtype: PyTorch's twin,
// computing the same steps with int64 tensors, gets the same values bit for bit.
std::shared_ptr<Tensor> BenchContext::hashed(Shape shape, DType dtype, unsigned seed) const {
  constexpr std::uint64_t kMask = 0xffffffffu, kMul = 0x045d9f3bu;
  std::vector<double> host(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < host.size(); ++i) {
    std::uint64_t x = (i + std::uint64_t{seed} * 0x9e3779b9u) & kMask;
    x = (x * kMul) & kMask;
    x ^= x >> 16;
    x = (x * kMul) & kMask;
    x ^= x >> 16;
    host[i] = static_cast<double>(x) * 0x1p-31 - 1.0;
  }
  return hold(from_vector(host, shape, Device::cpu()).to(dtype).to(device));
}

}  // namespace ferrite::bench

namespace ferrite::tools {
namespace {

using bench::BenchCase;

constexpr double kGpuBandwidthCeiling = 4.3e12;  // bytes/s, perf.md's practical HBM ceiling
constexpr int kBackToBack = 5;

struct Result {
  std::string family, name, shape;
  double ms = 0, bytes = 0, flops = 0;
};

constexpr int kMinHostSamples = 5;
constexpr double kHostSampleBudgetMs = 1000;

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
  // Host-timed: one call a sample, `repeats` samples, but no more than about a second's worth
  // beyond the first kMinHostSamples (bench/compare_torch.py times PyTorch's twins by the same
  // rule): millisecond calls get enough samples for a median that host jitter moves by well
  // under a percent, second-long ones (svd 4096) stay affordable.
  double total = 0;
  for (int i = 0; i < repeats && (i < kMinHostSamples || total < kHostSampleBudgetMs); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    c.run();
    synchronize(device);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    total += ms.back();
  }
  return median(ms);
}

/// `--filter`: each pattern is a glob (fnmatch: `*`, `?`, `[...]`) matched against the whole
/// case name, so a plain name selects exactly that case (`sum_f32` is not `cumsum_f32`).
/// Records which patterns matched, so that a pattern matching nothing can be reported.
class CaseFilter {
 public:
  explicit CaseFilter(const std::vector<std::string>& patterns) {
    for (const std::string& p : patterns)
      if (!p.empty()) patterns_.push_back(p);
    matched_.assign(patterns_.size(), false);
  }
  bool wants(const std::string& name) {
    if (patterns_.empty()) return true;
    bool wanted = false;
    for (std::size_t i = 0; i < patterns_.size(); ++i)
      if (fnmatch(patterns_[i].c_str(), name.c_str(), 0) == 0) wanted = matched_[i] = true;
    return wanted;
  }
  std::vector<std::string> unmatched() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < patterns_.size(); ++i)
      if (!matched_[i]) out.push_back(patterns_[i]);
    return out;
  }

 private:
  std::vector<std::string> patterns_;
  std::vector<bool> matched_;
};

// `name` with every run of digits as one '#': the names a family makes at reduced sizes
// (`--quick`) and at full size differ only in their digits (linalg_svd_f32_64 and _1024,
// layer_norm_f32_4096x128 and _1048576x128), so a pattern that selects a full-size case
// selects, digit-folded, one of the reduced names too.
std::string fold_digits(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(name[i]))) {
      if (out.empty() || out.back() != '#') out += '#';
    } else {
      out += name[i];
    }
  }
  return out;
}

// Whether some pattern may select a case of a family whose reduced-size case names are
// `names`: a family none of whose cases a pattern can select is not made at full size (its
// inputs, gigabytes on the device and some built on the host, took most of a filtered run).
bool family_wanted(const std::vector<std::string>& patterns, const std::vector<std::string>& names) {
  if (patterns.empty()) return true;
  for (const std::string& p : patterns) {
    // '?' and '[...]' may stand for digits, which folding would no longer see: such a
    // pattern keeps every family.
    if (p.find_first_of("?[") != std::string::npos) return true;
    const std::string folded = fold_digits(p);
    for (const std::string& n : names)
      if (fnmatch(folded.c_str(), fold_digits(n).c_str(), 0) == 0) return true;
  }
  return false;
}

std::string format(const char* fmt, double value) {
  char text[64];
  std::snprintf(text, sizeof text, fmt, value);
  return text;
}

/// GB/s for data movement; TFLOP/s for products on the GPU and GFLOP/s below one TFLOP/s
/// (the CPU), so that a CPU product does not print as 0.0.
std::string rate_text(const BenchCase& c, double ms) {
  const double per_second = 1e3 / ms;
  if (c.flops > 0) {
    const double flops = c.flops * per_second;
    return flops >= 1e12 ? format("%.1f TFLOP/s", flops / 1e12) : format("%.1f GFLOP/s", flops / 1e9);
  }
  return format("%.1f GB/s", c.bytes * per_second / 1e9);
}

/// Opens the --json file before any case runs, so that a path that cannot be written fails
/// at once rather than after the whole run.
std::ofstream open_json(const std::string& path) {
  std::ofstream out(path);
  FERRITE_CHECK(out.is_open(), InvalidArgument, "cannot write the --json file '", path,
                "': ", std::strerror(errno));
  return out;
}

void write_json(std::ofstream& out, const std::string& path, Device device, const std::vector<Result>& results) {
  out << "{\n  \"device\": \"" << device.str() << "\",\n  \"cases\": [\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    out << "    {\"family\": \"" << r.family << "\", \"name\": \"" << r.name << "\", \"shape\": \"" << r.shape << "\", \"ms\": " << r.ms
        << ", \"bytes\": " << r.bytes << ", \"gbps\": " << r.bytes / (r.ms * 1e-3) / 1e9 << ", \"flops\": " << r.flops
        << ", \"tflops\": " << r.flops / (r.ms * 1e-3) / 1e12 << "}" << (i + 1 < results.size() ? ",\n" : "\n");
  }
  out << "  ]\n}\n";
  out.close();
  FERRITE_CHECK(!out.fail(), InvalidArgument, "writing the --json file '", path, "' failed");
}

}  // namespace

int run_bench(const BenchOptions& opt) {
  const Device device = opt.device.value_or(cuda_device_count() > 0 ? Device::cuda(0) : Device::cpu());
  (void)backend(device);  // fail early on an unavailable device
  std::ofstream json;
  if (!opt.json_path.empty()) json = open_json(opt.json_path);
  CaseFilter filter(opt.filter);
  std::vector<std::shared_ptr<void>> keep;
  const bench::BenchContext context{device, opt.quick || !device.is_cuda(), &keep};
  const int repeats = opt.quick ? 5 : 20;
  // The "% HBM" column (of the H200's practical bandwidth ceiling) only means something on a GPU.
  const bool show_ceiling = device.is_cuda();

  std::vector<Result> results;
  std::printf("ferrite bench on %s%s\n", device.str().c_str(),
              context.full_size() ? "" : " (reduced sizes: a sanity run, not a measurement)");
  if (opt.list)
    std::printf("%-36s %s\n", "case", "shape");
  else
    std::printf("%-36s %-34s %10s %14s%s\n", "case", "shape", "ms", "rate", show_ceiling ? "    % HBM" : "");
  // One family at a time, its inputs released before the next family's are made.
  std::vector<std::string> patterns;
  for (const std::string& p : opt.filter)
    if (!p.empty()) patterns.push_back(p);
  for (const bench::CaseFamily& family : bench::case_families()) {
    std::vector<BenchCase> cases;
    if (!patterns.empty() && context.full_size()) {
      // The family's case names from its reduced sizes on the same device (small inputs,
      // made in milliseconds), then the full-size family only where a pattern may want it.
      std::vector<std::shared_ptr<void>> small_inputs;
      const bench::BenchContext names_context{device, true, &small_inputs};
      std::vector<BenchCase> small;
      family.maker(names_context, small);
      std::vector<std::string> names;
      for (const BenchCase& c : small) names.push_back(c.name);
      small.clear();
      small_inputs.clear();
      if (!family_wanted(patterns, names)) continue;
    }
    family.maker(context, cases);
    for (const BenchCase& c : cases) {
      if (!filter.wants(c.name)) continue;
      if (opt.list) {
        std::printf("%-36s %s\n", c.name.c_str(), c.shape.c_str());
        continue;
      }
      const double ms = time_case(c, device, c.host_timed ? 1 : 3, c.host_timed && !opt.quick ? 15 : repeats);
      results.push_back({family.family, c.name, c.shape, ms, c.bytes, c.flops});
      // "% HBM": achieved bandwidth over the ceiling; not for products or host-timed transfers.
      std::string ceiling;
      if (show_ceiling)
        ceiling = c.flops > 0 || c.host_timed ? "-" : format("%.0f%%", 100 * c.bytes / (ms * 1e-3) / kGpuBandwidthCeiling);
      std::printf("%-36s %-34s %10.4f %14s", c.name.c_str(), c.shape.c_str(), ms, rate_text(c, ms).c_str());
      if (show_ceiling) std::printf(" %8s", ceiling.c_str());
      std::printf("\n");
      std::fflush(stdout);
    }
    cases.clear();
    keep.clear();
  }

  if (json.is_open()) write_json(json, opt.json_path, device, results);
  const std::vector<std::string> unmatched = filter.unmatched();
  if (!unmatched.empty()) {
    std::string names;
    for (const std::string& p : unmatched) names += (names.empty() ? "'" : ", '") + p + "'";
    FERRITE_THROW(InvalidArgument, "--filter ", names, " matched no case on ", device.str(),
                  " (`ferrite bench --list` prints the names)");
  }
  return 0;
}

}  // namespace ferrite::tools
