// Conformance entries of the matrix products: matmul (2-D, 1-D, broadcast batches, every
// transpose combination), matmul_out (alpha/beta), BF16/F16 -> F32 outputs, F32 through
// BF16/F16/TF32, bmm, dot, mv, vm (nn::linear's entries: linear_entries.cpp).
//
// Each result is compared by normalised error against the exact long-double product of
// product_reference.hpp (which explains the measure).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "conformance/conformance.hpp"
#include "conformance/product_reference.hpp"
#include "conformance/reference.hpp"

namespace ferrite::conformance {
namespace {

using namespace products;

// ---- cases ----

// The operand shapes of an [m, k] x [k, n] product with the given transpose flags.
Shape a_shape(Shape batch, std::int64_t m, std::int64_t k, bool ta) {
  batch.push_back(ta ? k : m);
  batch.push_back(ta ? m : k);
  return batch;
}
Shape b_shape(Shape batch, std::int64_t k, std::int64_t n, bool tb) {
  batch.push_back(tb ? n : k);
  batch.push_back(tb ? k : n);
  return batch;
}

Case product_case(DType dtype, Rng& rng, const Shape& sa, const Shape& sb, bool ta, bool tb) {
  std::string label = shape_str(sa) + (ta ? "ᵀ" : "") + " x " + shape_str(sb) + (tb ? "ᵀ" : "");
  return {label, {random(sa, dtype, rng), random(sb, dtype, rng)}, {ta, tb}};
}

struct Mkn {
  std::int64_t m, k, n;
};

// Sizes 1, 7, 127 and 1025 in every role, non-square, and empty m, k, n.
const std::vector<Mkn> kMatrixSizes = {{1, 1, 1},    {7, 7, 7},     {127, 127, 127}, {1025, 127, 7}, {7, 1025, 127},
                                       {127, 7, 1025}, {1, 1025, 1025}, {3, 5, 2},     {0, 7, 5},      {7, 0, 5},
                                       {7, 5, 0},    {0, 0, 0}};

std::vector<Case> matmul_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  for (const Mkn& s : kMatrixSizes)
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      cases.push_back(product_case(dtype, rng, a_shape({}, s.m, s.k, ta), b_shape({}, s.k, s.n, tb), ta, tb));
    }
  // 1-D operands (dot, vector-matrix, matrix-vector), transposed matrix operands included.
  cases.push_back(product_case(dtype, rng, {127}, {127}, false, false));
  cases.push_back(product_case(dtype, rng, {0}, {0}, false, false));
  for (bool t : {false, true}) {
    cases.push_back(product_case(dtype, rng, {33}, b_shape({}, 33, 65, t), false, t));
    cases.push_back(product_case(dtype, rng, a_shape({}, 65, 33, t), {33}, t, false));
    cases.push_back(product_case(dtype, rng, {9}, b_shape({3}, 9, 5, t), false, t));
    cases.push_back(product_case(dtype, rng, a_shape({2, 3}, 5, 9, t), {9}, t, false));
  }
  // Batches: equal, broadcast along one side, folded into rows, two-sided broadcast, empty.
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    cases.push_back(product_case(dtype, rng, a_shape({3}, 7, 9, ta), b_shape({3}, 9, 5, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({1}, 17, 9, ta), b_shape({4}, 9, 33, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({4}, 17, 9, ta), b_shape({1}, 9, 33, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({4}, 17, 9, ta), b_shape({}, 9, 33, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({}, 17, 9, ta), b_shape({2, 4}, 9, 33, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({2, 1}, 7, 9, ta), b_shape({1, 3}, 9, 5, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({2, 3, 1}, 5, 4, ta), b_shape({3, 4}, 4, 6, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({0}, 7, 9, ta), b_shape({1}, 9, 5, tb), ta, tb));
  }
  cases.push_back(product_case(dtype, rng, a_shape({6, 1}, 65, 129, false), b_shape({1, 5}, 129, 33, true), false, true));
  // A row vector times a wide matrix (a Linear layer at batch 1), GEMV-shaped for cuBLASLt.
  for (int t = 0; t < 3; ++t) {
    const bool ta = t == 1, tb = t == 2;
    cases.push_back(product_case(dtype, rng, a_shape({}, 1, 1100, ta), b_shape({}, 1100, 2050, tb), ta, tb));
  }
  return cases;
}

MatmulOptions options_of(const Case& c) {
  MatmulOptions o;
  o.transpose_a = c.ints.size() > 0 && c.ints[0] != 0;
  o.transpose_b = c.ints.size() > 1 && c.ints[1] != 0;
  return o;
}

// TF32 rounds both inputs to 10 fraction bits: products carry up to ~2^-10 relative error.
Tolerance tf32_tolerance(DType) { return {0, 2e-3}; }

// ---- error cases ----

std::vector<ErrorCase> matmul_errors(DType d) {
  const std::string name = dtype_name(d).data();
  std::vector<ErrorCase> errors = {
      {"inner dims differ", [=](Device dev) { matmul(zeros({2, 3}, d, dev), zeros({4, 5}, d, dev)); },
       ErrorKind::ShapeMismatch, "matmul: inner dimensions differ: a [2, 3] " + name},
      {"inner dims differ, transposed", [=](Device dev) {
         matmul(zeros({2, 3}, d, dev), zeros({2, 5}, d, dev), {.transpose_a = true, .transpose_b = true});
       },
       ErrorKind::ShapeMismatch, "(transposed) has k = 2, b [2, 5] " + name},
      {"batch dims do not broadcast", [=](Device dev) { matmul(zeros({2, 3, 4}, d, dev), zeros({3, 4, 5}, d, dev)); },
       ErrorKind::ShapeMismatch, "matmul: batch dims [2] of a [2, 3, 4] " + name},
      {"mixed dtypes", [=](Device dev) { matmul(zeros({2, 3}, d, dev), zeros({3, 2}, other_dtype(d), dev)); },
       ErrorKind::DTypeMismatch, "matmul: operand dtypes differ ([2, 3] " + name},
      {"integer operands", [=](Device dev) { matmul(zeros({2, 2}, DType::I32, dev), zeros({2, 2}, DType::I32, dev)); },
       ErrorKind::Unsupported, "matmul: dtype I32 is not supported"},
      {"rank 0 operand", [=](Device dev) { matmul(zeros({}, d, dev), zeros({3}, d, dev)); }, ErrorKind::ShapeMismatch,
       "matmul: operands need at least one dim"},
      {"undefined operand", [=](Device dev) { matmul(Tensor(), zeros({3}, d, dev)); }, ErrorKind::InvalidArgument,
       "matmul: an operand is an undefined"},
      {"out_dtype not offered", [=](Device dev) {
         matmul(zeros({2, 2}, d, dev), zeros({2, 2}, d, dev), {.out_dtype = DType::I64});
       },
       ErrorKind::InvalidArgument, "matmul: out_dtype I64 is not available for " + name + " operands"},
      {"out of the wrong shape", [=](Device dev) {
         matmul_out(zeros({2, 3}, d, dev), zeros({2, 4}, d, dev), zeros({4, 2}, d, dev));
       },
       ErrorKind::ShapeMismatch, "matmul: out is [2, 3] " + name},
      {"out of the wrong dtype", [=](Device dev) {
         matmul_out(zeros({2, 2}, other_dtype(d), dev), zeros({2, 4}, d, dev), zeros({4, 2}, d, dev));
       },
       ErrorKind::DTypeMismatch, "expected dtype " + name},
      {"out overlaps an operand", [=](Device dev) {
         const Tensor a = zeros({2, 2}, d, dev);
         matmul_out(a, a, zeros({2, 2}, d, dev));
       },
       ErrorKind::InvalidArgument, "matmul: out [2, 2] " + name},
  };
  if (d != DType::F32)
    errors.push_back({"compute option on non-F32 operands", [=](Device dev) {
                        matmul(zeros({2, 2}, d, dev), zeros({2, 2}, d, dev), {.compute = MatmulCompute::BF16});
                      },
                      ErrorKind::InvalidArgument, "matmul: compute BF16 applies to F32 operands, got " + name});
  return errors;
}

// ---- entries ----

FERRITE_CONFORMANCE([] {
  Entry e = product_entry("matmul", matmul_cases, [](const Case& c) { return matmul(c.inputs[0], c.inputs[1], options_of(c)); });
  e.errors = matmul_errors;
  return e;
}());

// bmm: 3-D only, equal batches, no broadcasting.
FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "bmm",
      [](DType dtype, Rng& rng) {
        std::vector<Case> cases;
        const std::vector<std::pair<std::int64_t, Mkn>> shapes = {
            {1, {7, 7, 7}}, {3, {127, 33, 65}}, {5, {1, 129, 1}}, {0, {3, 4, 5}}, {2, {0, 4, 5}}, {2, {3, 0, 5}}};
        for (const auto& [batch, s] : shapes)
          for (int t = 0; t < 4; ++t) {
            const bool ta = t & 1, tb = t & 2;
            cases.push_back(product_case(dtype, rng, a_shape({batch}, s.m, s.k, ta), b_shape({batch}, s.k, s.n, tb), ta, tb));
          }
        return cases;
      },
      [](const Case& c) { return bmm(c.inputs[0], c.inputs[1], options_of(c)); });
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"2-D operand", [=](Device dev) { bmm(zeros({2, 3}, d, dev), zeros({1, 3, 2}, d, dev)); }, ErrorKind::ShapeMismatch,
         "bmm: a must be 3-D, got [2, 3] " + std::string(dtype_name(d))},
        {"batch sizes differ", [=](Device dev) { bmm(zeros({2, 3, 4}, d, dev), zeros({1, 4, 2}, d, dev)); },
         ErrorKind::ShapeMismatch, "bmm: batch sizes differ: a [2, 3, 4] " + std::string(dtype_name(d))},
        {"inner dims differ", [=](Device dev) { bmm(zeros({2, 3, 4}, d, dev), zeros({2, 5, 2}, d, dev)); },
         ErrorKind::ShapeMismatch, "bmm: inner dimensions differ"},
    };
  };
  return e;
}());

// matmul_out and linear_out into a contiguous view that starts off the 16-byte grid (one row
// into its storage: 3 elements, 6 or 12 bytes), which the backends cannot write directly: the
// result must still land in out. inputs: a, b and out's starting values (beta = 1 for
// matmul_out, so they are read); ints: 0 matmul_out, 1 linear_out (a, b as x and weight).
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (std::int64_t linear : {0, 1}) {
      Case c = product_case(dtype, rng, {4, 5}, linear ? Shape{3, 5} : Shape{5, 3}, false, linear != 0);
      c.inputs.push_back(random({4, 3}, dtype, rng));
      c.ints = {0, linear};
      c.label += linear ? ", linear_out into a view one row into its storage"
                        : ", beta 1 into a view one row into its storage";
      cases.push_back(std::move(c));
    }
    return cases;
  };
  auto call = [](const Case& c) {
    const Tensor& start = c.inputs[2];
    const Tensor out = zeros({5, 3}, start.dtype(), start.device()).narrow(0, 1, 4);
    out.copy_(start);
    if (c.ints[1] != 0)
      nn::linear_out(out, c.inputs[0], c.inputs[1]);
    else
      matmul_out(out, c.inputs[0], c.inputs[1], 1.0, 1.0);
    return out.contiguous();
  };
  auto spec = [](const Case& c) {
    ProductSpec s;
    s.transpose_b = c.ints[1] != 0;
    if (c.ints[1] == 0) {
      s.beta = 1;
      s.c = &c.inputs[2];
    }
    return s;
  };
  return product_entry("product_out_misaligned", cases, call, std::nullopt, spec);
}());

FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "dot",
      [](DType dtype, Rng& rng) {
        std::vector<Case> cases;
        for (std::int64_t n : {0, 1, 7, 127, 1025, 4099}) cases.push_back(product_case(dtype, rng, {n}, {n}, false, false));
        return cases;
      },
      [](const Case& c) { return dot(c.inputs[0], c.inputs[1]); });
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"lengths differ", [=](Device dev) { dot(zeros({3}, d, dev), zeros({4}, d, dev)); }, ErrorKind::ShapeMismatch,
         "dot: inner dimensions differ: a [3] " + std::string(dtype_name(d))},
        {"2-D operand", [=](Device dev) { dot(zeros({3}, d, dev), zeros({3, 1}, d, dev)); }, ErrorKind::ShapeMismatch,
         "dot: b must be 1-D, got [3, 1]"},
    };
  };
  return e;
}());

FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "mv",
      [](DType dtype, Rng& rng) {
        std::vector<Case> cases;
        for (const auto& [m, k] : std::vector<std::pair<std::int64_t, std::int64_t>>{
                 {1, 1}, {7, 127}, {1025, 7}, {127, 1025}, {0, 5}, {5, 0}})
          for (bool t : {false, true}) cases.push_back(product_case(dtype, rng, a_shape({}, m, k, t), {k}, t, false));
        return cases;
      },
      [](const Case& c) { return mv(c.inputs[0], c.inputs[1], options_of(c)); });
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"vector too long", [=](Device dev) { mv(zeros({3, 4}, d, dev), zeros({5}, d, dev)); }, ErrorKind::ShapeMismatch,
         "mv: inner dimensions differ: a [3, 4] " + std::string(dtype_name(d))},
        {"matrix is 1-D", [=](Device dev) { mv(zeros({4}, d, dev), zeros({4}, d, dev)); }, ErrorKind::ShapeMismatch,
         "mv: the matrix must be 2-D"},
    };
  };
  return e;
}());

FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "vm",
      [](DType dtype, Rng& rng) {
        std::vector<Case> cases;
        for (const auto& [k, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{
                 {1, 1}, {127, 7}, {7, 1025}, {1025, 127}, {1025, 4099}, {0, 5}, {5, 0}})
          for (bool t : {false, true}) cases.push_back(product_case(dtype, rng, {k}, b_shape({}, k, n, t), false, t));
        return cases;
      },
      [](const Case& c) { return vm(c.inputs[0], c.inputs[1], options_of(c)); });
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"vector too short", [=](Device dev) { vm(zeros({3}, d, dev), zeros({4, 5}, d, dev)); }, ErrorKind::ShapeMismatch,
         "vm: inner dimensions differ: a [3] " + std::string(dtype_name(d))},
        {"vector is 2-D", [=](Device dev) { vm(zeros({1, 4}, d, dev), zeros({4, 5}, d, dev)); }, ErrorKind::ShapeMismatch,
         "vm: the vector must be 1-D"},
    };
  };
  return e;
}());

// matmul_out: out = alpha·A·B + beta·out, including k = 0 (out = beta·out) and beta = 0 on
// an out full of NaN (which must not be read). inputs: a, b, out; reals: alpha, beta.
FERRITE_CONFORMANCE([] {
  Entry e;
  e.op = "matmul_out";
  e.dtypes = kMatmulDTypes;
  e.cases = [](DType dtype, Rng& rng) {
    struct Spec {
      Shape a, b, out;
      bool ta, tb;
      double alpha, beta;
      bool nan_out;
    };
    const std::vector<Spec> specs = {
        {{7, 5}, {5, 3}, {7, 3}, false, false, 0.5, -1.5, false},
        {{33, 127}, {65, 127}, {33, 65}, false, true, 2.0, 0.25, false},
        {{127, 33}, {127, 65}, {33, 65}, true, false, -1.0, 1.0, false},
        {{4, 9, 17}, {33, 9}, {4, 17, 33}, true, true, 1.0, 1.0, false},
        {{2, 1, 7, 9}, {1, 3, 9, 5}, {2, 3, 7, 5}, false, false, 0.75, -0.5, false},
        {{7, 0}, {0, 5}, {7, 5}, false, false, 1.0, 2.0, false},    // k = 0: out = beta·out
        {{7, 0}, {0, 5}, {7, 5}, false, false, 1.0, 0.0, true},     // k = 0, beta = 0: zeros, NaN ignored
        {{17, 9}, {9, 33}, {17, 33}, false, false, 1.5, 0.0, true},  // beta = 0: out is write-only
        {{17, 9}, {9, 33}, {17, 33}, false, false, 0.0, 3.0, false},  // alpha = 0
        {{1, 1024}, {1024, 2048}, {1, 2048}, false, false, 0.5, 2.0, false},  // GEMV-shaped
        {{1, 1024}, {1024, 2048}, {1, 2048}, false, false, -1.0, 0.0, true},
    };
    std::vector<Case> cases;
    for (const Spec& s : specs) {
      Case c = product_case(dtype, rng, s.a, s.b, s.ta, s.tb);
      c.inputs.push_back(s.nan_out ? full(s.out, std::numeric_limits<double>::quiet_NaN(), dtype)
                                   : random(s.out, dtype, rng));
      c.reals = {s.alpha, s.beta};
      c.label += " alpha " + std::to_string(s.alpha) + " beta " + std::to_string(s.beta) + (s.nan_out ? " out NaN" : "");
      cases.push_back(std::move(c));
    }
    return cases;
  };
  auto spec = [](const Case& c) {
    ProductSpec s = spec_of(c);
    s.alpha = c.reals[0];
    s.beta = c.reals[1];
    s.c = &c.inputs[2];
    return s;
  };
  e.run_outputs = [spec](const Case& c) {
    const Tensor out = c.inputs[2].clone();  // the case runs twice on CUDA: keep the input intact
    matmul_out(out, c.inputs[0], c.inputs[1], c.reals[0], c.reals[1], options_of(c));
    return std::vector<Tensor>{normalised(out, reference_product(c.inputs[0], c.inputs[1], spec(c)), out.dtype())};
  };
  e.reference_outputs = [spec](const Case& c) {
    return std::vector<Tensor>{normalised_reference(reference_product(c.inputs[0], c.inputs[1], spec(c)))};
  };
  e.reference_tolerance = reference_tolerance;
  e.backend_tolerance = backend_tolerance;
  return e;
}());

// F16/BF16 operands with an F32 result (the product is exact in F32, only the sum rounds).
FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "matmul_out_dtype_f32",
      [](DType dtype, Rng& rng) {
        std::vector<Case> cases;
        for (int t = 0; t < 4; ++t) {
          const bool ta = t & 1, tb = t & 2;
          cases.push_back(product_case(dtype, rng, a_shape({}, 127, 1025, ta), b_shape({}, 1025, 7, tb), ta, tb));
          cases.push_back(product_case(dtype, rng, a_shape({3}, 33, 65, ta), b_shape({1}, 65, 17, tb), ta, tb));
        }
        cases.push_back(product_case(dtype, rng, {7, 0}, {0, 5}, false, false));
        return cases;
      },
      [](const Case& c) {
        MatmulOptions o = options_of(c);
        o.out_dtype = DType::F32;
        return matmul(c.inputs[0], c.inputs[1], o);
      },
      DType::F32);
  e.dtypes = {DType::F16, DType::BF16};
  e.reference_tolerance = f32_result_tolerance;
  e.backend_tolerance = f32_result_tolerance;
  return e;
}());

// F32 in and out through BF16 or F16 (the seed's matmul_bf16_f32 / matmul_f16_f32 and
// their bmm twins). ints: ta, tb, compute (0: BF16, 1: F16), bmm (0/1).
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (std::int64_t half = 0; half < 2; ++half)
      for (int t = 0; t < 4; ++t) {
        const bool ta = t & 1, tb = t & 2;
        Case c = product_case(dtype, rng, a_shape({}, 127, 1025, ta), b_shape({}, 1025, 33, tb), ta, tb);
        c.ints.push_back(half);
        c.ints.push_back(0);
        cases.push_back(c);
        Case batched = product_case(dtype, rng, a_shape({3}, 17, 65, ta), b_shape({3}, 65, 9, tb), ta, tb);
        batched.ints.push_back(half);
        batched.ints.push_back(1);
        batched.label = "bmm " + batched.label;
        cases.push_back(batched);
      }
    return cases;
  };
  auto spec = [](const Case& c) {
    ProductSpec s = spec_of(c);
    s.round_inputs_to = c.ints[2] ? DType::F16 : DType::BF16;
    return s;
  };
  auto call = [](const Case& c) {
    MatmulOptions o = options_of(c);
    o.compute = c.ints[2] ? MatmulCompute::F16 : MatmulCompute::BF16;
    return c.ints[3] ? bmm(c.inputs[0], c.inputs[1], o) : matmul(c.inputs[0], c.inputs[1], o);
  };
  Entry e = product_entry("matmul_compute_half", cases, call, DType::F32, spec);
  e.dtypes = {DType::F32};
  e.reference_tolerance = f32_result_tolerance;
  e.backend_tolerance = f32_result_tolerance;
  return e;
}());

// Restores the process-wide TF32 switch even when a check throws.
class Tf32Switch {
 public:
  explicit Tf32Switch(bool on) : previous_(allow_tf32()) { set_allow_tf32(on); }
  ~Tf32Switch() { set_allow_tf32(previous_); }
  Tf32Switch(const Tf32Switch&) = delete;
  Tf32Switch& operator=(const Tf32Switch&) = delete;

 private:
  bool previous_;
};

std::vector<Case> tf32_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    cases.push_back(product_case(dtype, rng, a_shape({}, 127, 1025, ta), b_shape({}, 1025, 65, tb), ta, tb));
    cases.push_back(product_case(dtype, rng, a_shape({2}, 33, 127, ta), b_shape({2}, 127, 17, tb), ta, tb));
  }
  return cases;
}

Entry f32_mode_entry(std::string op, Tolerance (*backend)(DType), std::function<Tensor(const Case&)> call) {
  Entry e = product_entry(std::move(op), tf32_cases, call);
  e.dtypes = {DType::F32};
  e.backend_tolerance = backend;
  return e;
}

// Long inner dimensions with half outputs: the result must be the exact product rounded once
// (F32 accumulation up to the final rounding, as PyTorch's). The inputs are integers in
// [-8, 8]: every product and every partial sum is an integer below 2^24, so F32 accumulates
// them exactly in any order, while the signs make partial sums larger than the result (the
// cancellation that exposes partial sums rounded to F16/BF16 on the way). The error is
// measured in units in the last place of the output dtype at the exact value:
// (result - exact) / ulp(exact). Correct rounding gives at most 0.5 on both backends, so
// CUDA and the CPU may differ by 1; a split-K that adds partial sums in BF16 was 3 ulps off
// at K = 5000.
std::vector<Case> long_k_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  auto add = [&](Shape sa, Shape sb, bool ta, bool tb) {
    std::string label = shape_str(sa) + (ta ? "ᵀ" : "") + " x " + shape_str(sb) + (tb ? "ᵀ" : "") + ", integers";
    cases.push_back({label, {small_integers(sa, dtype, rng), small_integers(sb, dtype, rng)}, {ta, tb}});
  };
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    add(a_shape({}, 4, 5000, ta), b_shape({}, 5000, 3, tb), ta, tb);
  }
  add(a_shape({}, 2, 20000, false), b_shape({}, 20000, 5, false), false, false);
  add(a_shape({3}, 2, 6000, false), b_shape({3}, 6000, 4, true), false, true);
  add(a_shape({}, 16, 8192, false), b_shape({}, 8192, 16, false), false, false);
  // Small outputs with very long K: too few output tiles to fill the GPU, so cuBLASLt splits
  // K, and a plan that adds the split-K partial sums in the output type rounds each to BF16.
  add(a_shape({}, 16, 65536, false), b_shape({}, 65536, 16, false), false, false);
  add(a_shape({}, 16, 262144, false), b_shape({}, 262144, 16, false), false, false);
  add({65537}, {65537}, false, false);
  return cases;
}

FERRITE_CONFORMANCE([] {
  Entry e;
  e.op = "matmul_long_k";
  e.dtypes = {DType::F16, DType::BF16};
  e.cases = long_k_cases;
  e.run_outputs = [](const Case& c) {
    const Tensor out = matmul(c.inputs[0], c.inputs[1], options_of(c));
    return std::vector<Tensor>{error_in_ulps(out, reference_product(c.inputs[0], c.inputs[1], spec_of(c)))};
  };
  e.reference_outputs = [](const Case& c) {
    return std::vector<Tensor>{zeros(reference_product(c.inputs[0], c.inputs[1], spec_of(c)).shape, DType::F64)};
  };
  // Half an ulp for the rounding, plus the F32 accumulation's own error (under 0.02 ulp).
  e.reference_tolerance = [](DType) { return Tolerance{0, 0.52}; };
  e.backend_tolerance = [](DType) { return Tolerance{0, 1.04}; };
  return e;
}());
// TF32 per call, and through the global switch. The CPU computes these in full F32 (TF32
// is a permission), so only CUDA against the CPU is looser.
FERRITE_CONFORMANCE(f32_mode_entry("matmul_tf32", tf32_tolerance, [](const Case& c) {
  MatmulOptions o = options_of(c);
  o.compute = MatmulCompute::TF32;
  return matmul(c.inputs[0], c.inputs[1], o);
}));
FERRITE_CONFORMANCE(f32_mode_entry("matmul_tf32_global", tf32_tolerance, [](const Case& c) {
  const Tf32Switch on(true);
  return matmul(c.inputs[0], c.inputs[1], options_of(c));
}));
// MatmulCompute::F32 overrides the global switch: F32 accuracy on CUDA too.
FERRITE_CONFORMANCE(f32_mode_entry("matmul_f32_strict", backend_tolerance, [](const Case& c) {
  const Tf32Switch on(true);
  MatmulOptions o = options_of(c);
  o.compute = MatmulCompute::F32;
  return matmul(c.inputs[0], c.inputs[1], o);
}));

}  // namespace
}  // namespace ferrite::conformance
