// The conformance registry: one entry per op, run on every available backend.
//
// An entry says which dtypes the op takes, how to make random inputs (odd sizes, empty,
// one element, broadcast shapes, extreme values; the same on every run unless
// FERRITE_TEST_SEED picks other ones), how to run the op, and a host
// reference computed independently of any backend (exact or through float64). The test
// (conformance_test.cpp) then checks:
//   cpu  : the CPU backend against the reference;
//   cuda : the CUDA backend against the CPU backend;
// with outputs poisoned before the run, guard bytes after them, and the allocator's
// in-use bytes the same before and after (no leaks). Error cases expect an error kind and
// a fragment of the message.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ferrite/ferrite.hpp"
#include "ferrite/testing.hpp"

namespace ferrite::conformance {

using Rng = std::mt19937_64;

struct Case {
  std::string label;
  std::vector<Tensor> inputs;  // on the CPU
  /// Non-tensor parameters of the case (a dim, a shift, a flag; an epsilon, alpha, beta),
  /// for entries that use run_outputs/reference_outputs.
  std::vector<std::int64_t> ints = {};
  std::vector<double> reals = {};
};

struct ErrorCase {
  std::string label;
  std::function<void(Device)> call;
  ErrorKind kind;
  std::string message_fragment;
};

struct Tolerance {
  double rtol = 0, atol = 0;
  bool exact() const { return rtol == 0 && atol == 0; }
};

struct Entry {
  std::string op;
  std::vector<DType> dtypes;
  std::function<std::vector<Case>(DType, Rng&)> cases;
  std::function<Tensor(const std::vector<Tensor>&)> run;
  std::function<Tensor(const std::vector<Tensor>&)> reference;
  /// Tolerance of the CPU backend against the reference, per input dtype.
  std::function<Tolerance(DType)> reference_tolerance;
  /// Tolerance of CUDA against the CPU backend, per input dtype (design §7 by default).
  std::function<Tolerance(DType)> backend_tolerance;
  std::function<std::vector<ErrorCase>(DType)> errors;

  /// Instead of run/reference, for ops with several outputs (values and indices, y with
  /// mean and rstd, ...) or with parameters carried by the case (Case::ints, Case::reals).
  /// Outputs are compared one by one; tolerances apply to each.
  std::function<std::vector<Tensor>(const Case&)> run_outputs = {};
  std::function<std::vector<Tensor>(const Case&)> reference_outputs = {};
  /// Per-output tolerance override of CUDA against the CPU (integer outputs such as indices
  /// usually exact); when unset, backend_tolerance applies to every output.
  std::function<Tolerance(DType, std::size_t output)> output_backend_tolerance = {};
  /// Why the op cannot run on a device (a run-time library absent there), or empty; a
  /// non-empty reason skips the entry on that device with the reason (no other cause may skip).
  std::function<std::string(Device)> unavailable = {};
  /// Reductions, which read a transposed or permuted input as its dense block in memory order
  /// (so a float sum adds in another order than over x.contiguous(), as in PyTorch): given a
  /// case whose input is dense.permute(perm) in value, the same case over `dense` with its
  /// dims mapped through perm, and which of the input's dims the case reduces (one flag per
  /// dim). The strided passes then check the op on such views bit for bit against this case
  /// (PermutedReductionConformance) and within backend_tolerance against the contiguous input.
  std::function<std::pair<Case, std::vector<bool>>(const Case&, const Tensor& dense,
                                                   const std::vector<std::int64_t>& perm)>
      on_dense_block = {};
  /// Ops that read a transposed or permuted view in place, in its memory order, rather than
  /// through a dense copy (C2C FFT: cuFFT plans with the view's strides, as PyTorch's cuFFT
  /// path does): another plan rounds differently, so the strided passes compare their float
  /// results with the contiguous input's within backend_tolerance instead of bit for bit.
  bool reads_views_in_place = false;
};

std::vector<Entry>& registry();
bool register_entry(Entry entry);

/// design.md §7: F64 (1e-7, 1e-7), F32 (1.3e-6, 1e-5), F16 (1e-3, 1e-5), BF16 (1.6e-2, 1e-5).
Tolerance default_tolerance(DType dtype);
inline Tolerance exact(DType) { return {}; }

// ---- seeds ----
/// The base seed of every entry's inputs when FERRITE_TEST_SEED is unset: runs are repeatable.
inline constexpr std::uint64_t kDefaultSeed = 0;
/// The base seed of this run: kDefaultSeed, or FERRITE_TEST_SEED (a decimal number, or
/// "random" for a fresh one per run, for soak runs). Read once; a malformed value is an
/// Error(InvalidArgument).
std::uint64_t base_seed();
/// The seed of one entry's inputs for one dtype: the base mixed with the op's name and the
/// dtype, so it does not depend on the order in which the entries registered.
std::uint64_t case_seed(std::uint64_t base, const std::string& op, DType dtype);

// ---- case size limit (memcheck runs) ----
/// FERRITE_CONFORMANCE_MAX_ELEMENTS=N leaves out the cases whose inputs hold more than N
/// elements in all (unset: every case runs). compute-sanitizer makes large kernels so slow
/// that a whole-suite memcheck does not end; with a limit it covers every op and dtype on
/// the small cases, while the native runs keep the large ones. A malformed value is an
/// Error(InvalidArgument). The program says at its end how many cases were left out.
struct IndexedCase {
  std::size_t index;  // the case's position among all of the entry's cases (kept or not)
  Case value;
};
/// The entry's cases for `dtype` that the limit lets through, each with its index.
std::vector<IndexedCase> cases_to_run(const Entry& entry, DType dtype, Rng& rng);
/// Cases left out by the limit so far in this program.
std::int64_t cases_left_out();
/// The limit, or -1 when there is none.
std::int64_t case_element_limit();

// ---- input generators ----
/// Random values of `dtype` in [lo, hi] (integers: uniform ints; Bool: fair coin), never all zero.
Tensor random(Shape shape, DType dtype, Rng& rng, double lo = -4, double hi = 4);
/// Values that break careless kernels: +-0, +-Inf, NaN, denormals, the dtype's limits.
Tensor extremes(DType dtype, std::int64_t n, Rng& rng);
/// Shapes every elementwise entry runs: odd sizes, empty, rank 0, one element, large.
std::vector<Shape> unary_shapes();
/// Pairs of shapes that broadcast: a size-1 dim in the middle, rank 0 against rank 3, rows.
std::vector<std::pair<Shape, Shape>> binary_shape_pairs();

/// Elementwise comparison with NaN and Inf positions required to match. Empty string = equal.
std::string compare(const Tensor& actual, const Tensor& expected, Tolerance tol);

/// Runs `call` and reports how it failed to throw `kind` with `fragment` in the message.
std::string expect_error(const std::function<void()>& call, ErrorKind kind, const std::string& fragment);

}  // namespace ferrite::conformance

#define FERRITE_CONFORMANCE_CAT2(a, b) a##b
#define FERRITE_CONFORMANCE_CAT(a, b) FERRITE_CONFORMANCE_CAT2(a, b)
/// Registers an entry at static-initialisation time: FERRITE_CONFORMANCE(make_entry());
#define FERRITE_CONFORMANCE(...) \
  static const bool FERRITE_CONFORMANCE_CAT(conformance_entry_, __LINE__) = ::ferrite::conformance::register_entry(__VA_ARGS__)
