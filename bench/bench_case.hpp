// The benchmark case registry. Each op family registers its cases from its own file
// (bench/cases_<family>.cpp), and bench/bench_main.cpp times them all.
//
// A case counts the bytes it moves (each input read once, each output written once:
// perf.md), or the floating-point operations it performs (matrix products), and reports
// GB/s or TFLOP/s accordingly.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ferrite/ferrite.hpp"

namespace ferrite::bench {

struct BenchCase {
  std::string name;
  std::string shape;
  double bytes = 0;
  std::function<void()> run;
  bool host_timed = false;  // transfers: wall clock around a synchronous call
  double flops = 0;         // when set, the case reports TFLOP/s instead of GB/s
};

/// What a family's case maker gets: the device, the size mode, and a place to keep the
/// inputs alive while the cases run.
struct BenchContext {
  Device device = Device::cpu();
  /// Small sizes (the CPU, or `--quick`): a sanity run, not a measurement.
  bool quick = false;
  std::vector<std::shared_ptr<void>>* keep = nullptr;

  bool gpu() const { return device.is_cuda(); }
  bool full_size() const { return gpu() && !quick; }
  /// Keeps `t` alive for the whole run and returns a pointer the case lambdas may capture.
  std::shared_ptr<Tensor> hold(Tensor t) const;
  /// Fresh uniform values in [-2, 2] (never zeros: zeros can run faster than real data).
  std::shared_ptr<Tensor> random(Shape shape, DType dtype, unsigned seed) const;
  /// Values in [-1, 1) from an integer hash of each element's index and `seed`, the same
  /// values bench/torch_cases/__init__.py's hashed() makes: for cases whose time depends on
  /// the values (iterative solvers: eig, eigh, svd), so both libraries solve the same problem.
  std::shared_ptr<Tensor> hashed(Shape shape, DType dtype, unsigned seed) const;
};

using CaseMaker = void (*)(const BenchContext&, std::vector<BenchCase>&);

/// Adds a family's case maker; the cases run in registration order of the files, then in
/// the order each maker appends them.
bool register_cases(const char* family, CaseMaker maker);
struct CaseFamily {
  const char* family;
  CaseMaker maker;
};
std::vector<CaseFamily>& case_families();

}  // namespace ferrite::bench

#define FERRITE_BENCH_CAT2(a, b) a##b
#define FERRITE_BENCH_CAT(a, b) FERRITE_BENCH_CAT2(a, b)
/// FERRITE_BENCH_CASES("family", maker): registers at static-initialisation time.
#define FERRITE_BENCH_CASES(family, maker) \
  static const bool FERRITE_BENCH_CAT(bench_cases_, __LINE__) = ::ferrite::bench::register_cases(family, maker)
