// Conformance entries of nn::linear (with and without bias, with a residual, long K), checked
// against the exact product of product_reference.hpp.
#include <cmath>
#include <limits>
#include <optional>

#include "conformance/conformance.hpp"
#include "conformance/product_reference.hpp"
#include "conformance/reference.hpp"

namespace ferrite::conformance {
namespace {

using namespace products;

// ---- nn::linear: x [..., in] · weightᵀ ([out, in]) + bias [out] ----
// inputs: x, weight and, where the case has one, bias. The reference is the product with
// transpose_b and the bias added exactly; on CUDA the bias rides in cuBLASLt's epilogue
// (F32, F16, BF16) or, for F64 and where cuBLASLt has no epilogue algorithm, is the output's
// starting value for a beta = 1 product: both round once, so the tolerances are matmul's.

// x and weight of an [..., in] x [out, in]ᵀ product, labelled; callers append the rest.
Case linear_operands(DType dtype, Rng& rng, const Shape& x, std::int64_t out_features) {
  const std::int64_t in = x.empty() ? 0 : x.back();
  return {shape_str(x) + " x [" + std::to_string(out_features) + ", " + std::to_string(in) + "]ᵀ",
          {random(x, dtype, rng), random({out_features, in}, dtype, rng)}};
}

// x's shape and the out features of one product case.
struct LinearShape {
  Shape x;
  std::int64_t out;
};

Case linear_case(DType dtype, Rng& rng, const Shape& x, std::int64_t out_features, bool with_bias) {
  Case c = linear_operands(dtype, rng, x, out_features);
  if (with_bias) {
    c.label += " + bias";
    c.inputs.push_back(random({out_features}, dtype, rng));
  }
  return c;
}

// out features 5, 17, 33, 127 (not multiples of 8: C rows and the bias vector off the 16-byte
// grid after the first row) next to 40 and 96; 2-D, 1-D, 3-D and 4-D x; a GEMV-shaped batch
// of 1; empty m, n and k (k = 0: the result is the bias).
std::vector<Case> linear_cases(DType dtype, Rng& rng) {
  const std::vector<LinearShape> specs = {
      {{7, 9}, 5},        {{33, 65}, 17},     {{127, 129}, 33}, {{64, 128}, 96},  {{1025, 127}, 7},
      {{17, 1025}, 127},  {{1, 1100}, 2050},  {{33}, 17},       {{2, 7, 33}, 9},  {{3, 65, 96}, 40},
      {{4, 17, 31}, 13},  {{2, 3, 5, 9}, 7},  {{0, 5}, 3},      {{4, 0}, 3},      {{4, 5}, 0},
      {{2, 0, 7}, 5},
  };
  std::vector<Case> cases;
  for (const LinearShape& s : specs)
    for (bool with_bias : {true, false}) cases.push_back(linear_case(dtype, rng, s.x, s.out, with_bias));
  // Edge values: x rows holding NaN, +Inf, +Inf beside -Inf, and -0 only; the bias holds -0
  // and +Inf. Every result is fixed by IEEE rules whatever the summation order (Inf + finite,
  // Inf - Inf = NaN), so the backends and the reference must agree on each NaN and Inf.
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Case edge = linear_case(dtype, rng, {4, 6}, 5, true);
  edge.label += ", NaN/Inf/-0 rows and bias";
  edge.inputs[0] = from_vector<double>({1, nan, 2, 3, 4, 5,       //
                                        1, 2, inf, 3, 4, 5,       //
                                        inf, 1, 2, -inf, 3, 4,    //
                                        -0.0, -0.0, -0.0, -0.0, -0.0, -0.0},
                                       {4, 6})
                       .to(dtype);
  edge.inputs[2] = from_vector<double>({-0.0, 1, inf, 2, 3}, {5}).to(dtype);
  cases.push_back(std::move(edge));
  return cases;
}

ProductSpec linear_spec(const Case& c, DType round_inputs_to = DType::F64) {
  ProductSpec s;
  s.transpose_b = true;
  s.bias = c.inputs.size() > 2 ? &c.inputs[2] : nullptr;
  s.round_inputs_to = round_inputs_to;
  return s;
}

std::optional<Tensor> bias_of(const Case& c) {
  return c.inputs.size() > 2 ? std::optional<Tensor>(c.inputs[2]) : std::nullopt;
}

std::vector<ErrorCase> linear_errors(DType d) {
  const std::string name = dtype_name(d).data();
  return {
      {"bias of the wrong length", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), zeros({5}, d, dev));
       },
       ErrorKind::ShapeMismatch, "linear: bias is [5] " + name},
      {"bias of the wrong length names the shapes", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), zeros({5}, d, dev));
       },
       ErrorKind::ShapeMismatch, "expected [4], one per output feature (input [2, 3] " + name},
      {"2-D bias", [=](Device dev) { nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), zeros({1, 4}, d, dev)); },
       ErrorKind::ShapeMismatch, "linear: bias is [1, 4] " + name},
      {"bias of another dtype", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), zeros({4}, other_dtype(d), dev));
       },
       ErrorKind::DTypeMismatch, "linear: bias is [4] " + std::string(dtype_name(other_dtype(d)))},
      {"0-d input", [=](Device dev) { nn::linear(zeros({}, d, dev), zeros({4, 3}, d, dev)); },
       ErrorKind::ShapeMismatch, "linear: operands need at least one dim, got [] " + name},
      {"in_features differ", [=](Device dev) { nn::linear(zeros({2, 3}, d, dev), zeros({4, 5}, d, dev)); },
       ErrorKind::ShapeMismatch, "linear: inner dimensions differ: a [2, 3] " + name},
      {"3-D weight", [=](Device dev) { nn::linear(zeros({2, 3}, d, dev), zeros({1, 4, 3}, d, dev)); },
       ErrorKind::ShapeMismatch, "linear: weight must be 2-D [out_features, in_features], got [1, 4, 3]"},
      {"integer operands", [=](Device dev) {
         nn::linear(zeros({2, 2}, DType::I32, dev), zeros({2, 2}, DType::I32, dev), zeros({2}, DType::I32, dev));
       },
       ErrorKind::Unsupported, "linear: dtype I32 is not supported"},
      {"undefined weight", [=](Device dev) { nn::linear(zeros({2, 2}, d, dev), Tensor()); }, ErrorKind::InvalidArgument,
       "linear: an operand is an undefined"},
      {"out of the wrong shape", [=](Device dev) {
         nn::linear_out(zeros({2, 3}, d, dev), zeros({2, 5}, d, dev), zeros({4, 5}, d, dev), zeros({4}, d, dev));
       },
       ErrorKind::ShapeMismatch, "linear: out is [2, 3] " + name},
      {"out overlaps the bias", [=](Device dev) {
         const Tensor out = zeros({1, 4}, d, dev);
         nn::linear_out(out, zeros({1, 5}, d, dev), zeros({4, 5}, d, dev), out.view({4}));
       },
       ErrorKind::InvalidArgument, "linear: out [1, 4] " + name},
  };
}

ProductSpec plain_linear_spec(const Case& c) { return linear_spec(c); }

FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "linear", linear_cases, [](const Case& c) { return nn::linear(c.inputs[0], c.inputs[1], bias_of(c)); },
      std::nullopt, plain_linear_spec);
  e.errors = linear_errors;
  return e;
}());

// linear_out into a dense out full of NaN (write-only, as beta = 0: neither the fused bias nor
// the bias-filled fallback may read it) and into a transposed view (computed densely and
// written back through the strides).
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (std::int64_t view = 0; view < 2; ++view)
      for (bool with_bias : {true, false}) {
        Case c = linear_case(dtype, rng, {2, 17, 33}, 9, with_bias);
        c.ints = {view};
        c.label += view ? ", out a transposed view" : ", out NaN";
        cases.push_back(std::move(c));
      }
    return cases;
  };
  auto call = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    const Shape shape = {x.size(0), x.size(1), c.inputs[1].size(0)};
    Tensor out;
    if (c.ints[0] != 0) {
      out = zeros({shape[0], shape[2], shape[1]}, x.dtype(), x.device()).transpose(1, 2);
    } else {
      out = full(shape, std::numeric_limits<double>::quiet_NaN(), x.dtype(), x.device());
    }
    nn::linear_out(out, x, c.inputs[1], bias_of(c));
    return out.contiguous();
  };
  return product_entry("linear_out", std::move(cases), call, std::nullopt, plain_linear_spec);
}());

// Mixed precision with a bias: F16/BF16 operands and bias with an F32 result (the epilogue's
// bias dtype differs from the output's), and F32 operands and bias computed through BF16/F16
// (the bias stays F32; only x and weight are rounded). ints: mode (0: out_dtype F32,
// 1: compute BF16, 2: compute F16).
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    const std::vector<std::int64_t> modes =
        dtype == DType::F32 ? std::vector<std::int64_t>{1, 2} : std::vector<std::int64_t>{0};
    for (std::int64_t mode : modes)
      for (bool with_bias : {true, false})
        for (const auto& [x, out] : std::vector<std::pair<Shape, std::int64_t>>{{{127, 1025}, 33}, {{3, 33, 65}, 17}}) {
          Case c = linear_case(dtype, rng, x, out, with_bias);
          c.ints = {mode};
          c.label += mode == 0 ? ", out F32" : mode == 1 ? ", compute BF16" : ", compute F16";
          cases.push_back(std::move(c));
        }
    return cases;
  };
  auto spec = [](const Case& c) {
    const std::int64_t mode = c.ints[0];
    return linear_spec(c, mode == 1 ? DType::BF16 : mode == 2 ? DType::F16 : DType::F64);
  };
  auto call = [](const Case& c) {
    nn::LinearOptions o;
    if (c.ints[0] == 0) o.out_dtype = DType::F32;
    if (c.ints[0] == 1) o.compute = MatmulCompute::BF16;
    if (c.ints[0] == 2) o.compute = MatmulCompute::F16;
    return nn::linear(c.inputs[0], c.inputs[1], bias_of(c), o);
  };
  Entry e = product_entry("linear_mixed_precision", cases, call, DType::F32, spec);
  e.dtypes = {DType::F32, DType::F16, DType::BF16};
  e.reference_tolerance = f32_result_tolerance;
  e.backend_tolerance = f32_result_tolerance;
  return e;
}());

// ---- nn::linear with a residual: residual + (x · weightᵀ + bias) ----
// inputs: x, weight, residual (the result's shape and dtype) and, where the case has one,
// bias. The reference is the product with transpose_b, the residual as an accumulated C
// (beta = 1) and the bias, all added exactly. On CUDA the residual is cuBLASLt's C (C ≠ D)
// with the bias in the epilogue, one rounding; the CPU (and CUDA where nothing fuses) starts
// the result as residual + bias, rounded to the result's dtype, and accumulates the product
// onto it: a second rounding, within the F16/BF16 tolerances (each rounding is at most one
// unit roundoff of the normalising scale, which includes |residual| and |bias|).

ProductSpec residual_linear_spec(const Case& c, DType round_inputs_to = DType::F64) {
  ProductSpec s;
  s.transpose_b = true;
  s.beta = 1;
  s.c = &c.inputs[2];
  s.bias = c.inputs.size() > 3 ? &c.inputs[3] : nullptr;
  s.round_inputs_to = round_inputs_to;
  return s;
}
ProductSpec plain_residual_linear_spec(const Case& c) { return residual_linear_spec(c); }

std::optional<Tensor> residual_bias_of(const Case& c) {
  return c.inputs.size() > 3 ? std::optional<Tensor>(c.inputs[3]) : std::nullopt;
}

// x [..., in] and weight [out, in] of `dtype`, the residual [..., out] of `result` and, when
// bias_dtype is given, a bias [out] of that dtype.
Case residual_linear_case(DType dtype, Rng& rng, const Shape& x, std::int64_t out_features, DType result,
                          std::optional<DType> bias_dtype) {
  Shape y(x.begin(), x.end() - 1);
  y.push_back(out_features);
  Case c = linear_operands(dtype, rng, x, out_features);
  c.label += " + " + std::string(dtype_name(result)) + " residual";
  c.inputs.push_back(random(y, result, rng));
  if (bias_dtype) {
    c.label += " + " + std::string(dtype_name(*bias_dtype)) + " bias";
    c.inputs.push_back(random({out_features}, *bias_dtype, rng));
  }
  return c;
}

// 2-D, 1-D, 3-D and 4-D x (batch dims folded into m), out features off the 8-element grid,
// a GEMV-shaped batch of 1, a product large enough for several tiles, empty m and n, and
// k = 0 (the result is residual + bias).
std::vector<Case> residual_linear_cases(DType dtype, Rng& rng) {
  const std::vector<LinearShape> specs = {
      {{7, 9}, 5},        {{33, 65}, 17},   {{64, 128}, 96}, {{17, 1025}, 127}, {{1, 1100}, 2050}, {{33}, 17},
      {{2, 7, 33}, 9},    {{3, 65, 96}, 40}, {{2, 3, 5, 9}, 7}, {{0, 5}, 3},      {{4, 5}, 0},       {{4, 0}, 3},
      {{2, 0, 7}, 5},     {{2, 3, 0}, 6},
  };
  std::vector<Case> cases;
  for (const LinearShape& s : specs)
    for (bool with_bias : {true, false})
      cases.push_back(residual_linear_case(dtype, rng, s.x, s.out, dtype,
                                           with_bias ? std::optional<DType>(dtype) : std::nullopt));
  // Edge values in the residual: NaN, +Inf and -Inf propagate through the sum (Inf + finite),
  // and +Inf in the residual meets -Inf in the bias (NaN), whatever the summation order.
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Case edge = residual_linear_case(dtype, rng, {3, 6}, 4, dtype, dtype);
  edge.label += ", NaN/Inf in the residual and bias";
  edge.inputs[2] = from_vector<double>({nan, 1, inf, 2,     //
                                        -inf, 3, inf, 4,    //
                                        -0.0, inf, 5, -inf},
                                       {3, 4})
                       .to(dtype);
  edge.inputs[3] = from_vector<double>({1, 2, -inf, 3}, {4}).to(dtype);
  cases.push_back(std::move(edge));
  return cases;
}

std::vector<ErrorCase> residual_linear_errors(DType d) {
  const std::string name = dtype_name(d).data();
  auto with_residual = [](Tensor r) {
    nn::LinearOptions o;
    o.residual = std::move(r);
    return o;
  };
  std::vector<ErrorCase> errors = {
      {"residual of the wrong shape", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt, with_residual(zeros({2, 5}, d, dev)));
       },
       ErrorKind::ShapeMismatch, "linear: residual is [2, 5] " + name},
      {"residual of the wrong shape names the result's", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt, with_residual(zeros({4}, d, dev)));
       },
       ErrorKind::ShapeMismatch, "expected the result's shape [2, 4]"},
      {"residual of another dtype", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), zeros({4}, d, dev),
                    with_residual(zeros({2, 4}, other_dtype(d), dev)));
       },
       ErrorKind::DTypeMismatch, "linear: residual is [2, 4] " + std::string(dtype_name(other_dtype(d)))},
      {"residual of another dtype names the result's", [=](Device dev) {
         nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt,
                    with_residual(zeros({2, 4}, other_dtype(d), dev)));
       },
       ErrorKind::DTypeMismatch, "expected the result's dtype " + name + " (input [2, 3] " + name},
      {"out overlaps the residual", [=](Device dev) {
         const Tensor storage = zeros({3, 4}, d, dev);
         const Tensor out = storage.as_strided({2, 4}, {4, 1}, 0), r = storage.as_strided({2, 4}, {4, 1}, 4);
         nn::linear_out(out, zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt, with_residual(r));
       },
       ErrorKind::InvalidArgument, "linear: out [2, 4] " + name},
      {"out overlapping the residual is named as such", [=](Device dev) {
         const Tensor storage = zeros({3, 4}, d, dev);
         const Tensor out = storage.as_strided({2, 4}, {4, 1}, 0), r = storage.as_strided({2, 4}, {4, 1}, 4);
         nn::linear_out(out, zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt, with_residual(r));
       },
       ErrorKind::InvalidArgument, "overlaps the residual [2, 4] " + name},
      {"out a transposed view of the residual", [=](Device dev) {
         const Tensor r = zeros({4, 4}, d, dev);
         nn::linear_out(r.t(), zeros({4, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt, with_residual(r));
       },
       ErrorKind::InvalidArgument, "overlaps the residual"},
  };
  if (is_half_precision(d)) {
    // With out_dtype F32 the residual is F32: the inputs' dtype is refused.
    errors.push_back({"residual of the inputs' dtype with out_dtype F32", [=](Device dev) {
                        nn::LinearOptions o = with_residual(zeros({2, 4}, d, dev));
                        o.out_dtype = DType::F32;
                        nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), std::nullopt, o);
                      },
                      ErrorKind::DTypeMismatch, "expected the result's dtype F32 (input [2, 3] " + name});
    // The bias may be the inputs' dtype or the result's, nothing else.
    errors.push_back({"bias of a third dtype with out_dtype F32", [=](Device dev) {
                        nn::linear(zeros({2, 3}, d, dev), zeros({4, 3}, d, dev), zeros({4}, DType::F64, dev),
                                   {.out_dtype = DType::F32});
                      },
                      ErrorKind::DTypeMismatch, "expected dtype " + name + " or F32 (input [2, 3] " + name});
  }
  return errors;
}

FERRITE_CONFORMANCE([] {
  Entry e = product_entry(
      "linear_residual", residual_linear_cases,
      [](const Case& c) {
        nn::LinearOptions o;
        o.residual = c.inputs[2];
        const std::vector<double> before = c.inputs[2].to_vector<double>();
        Tensor y = nn::linear(c.inputs[0], c.inputs[1], residual_bias_of(c), o);
        // The residual is only read.
        const std::vector<double> after = c.inputs[2].to_vector<double>();
        for (std::size_t i = 0; i < before.size(); ++i)
          if (!(before[i] == after[i] || (std::isnan(before[i]) && std::isnan(after[i]))))
            throw std::runtime_error("linear: the residual " + c.inputs[2].description() + " was written");
        return y;
      },
      std::nullopt, plain_residual_linear_spec);
  e.errors = residual_linear_errors;
  return e;
}());

// linear_out with a residual: into a separate out full of NaN (never read), into the residual
// itself (dense: accumulated in place; a transposed view: through a dense copy), and into a
// transposed view distinct from the residual. The call works on a copy of the case's residual
// where it is written, so the reference (and CUDA's repeat run) sees the original.
// ints: where out is (0: separate NaN, 1: the residual, 2: the residual as a transposed view,
// 3: a separate transposed view).
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    const char* labels[] = {", out NaN", ", out the residual", ", out the residual, a transposed view",
                            ", out a transposed view"};
    for (std::int64_t where = 0; where < 4; ++where)
      for (bool with_bias : {true, false}) {
        Case c = residual_linear_case(dtype, rng, {2, 17, 33}, 9, dtype,
                                      with_bias ? std::optional<DType>(dtype) : std::nullopt);
        c.ints = {where};
        c.label += labels[where];
        cases.push_back(std::move(c));
      }
    return cases;
  };
  auto call = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    const Shape shape = {x.size(0), x.size(1), c.inputs[1].size(0)};
    const std::int64_t where = c.ints[0];
    auto transposed = [&] { return zeros({shape[0], shape[2], shape[1]}, x.dtype(), x.device()).transpose(1, 2); };
    Tensor out, residual = c.inputs[2];
    if (where == 0) out = full(shape, std::numeric_limits<double>::quiet_NaN(), x.dtype(), x.device());
    if (where == 1) out = residual = c.inputs[2].clone();
    if (where == 2) {
      out = residual = transposed();
      out.copy_(c.inputs[2]);
    }
    if (where == 3) out = transposed();
    nn::LinearOptions o;
    o.residual = residual;
    nn::linear_out(out, x, c.inputs[1], residual_bias_of(c), o);
    return out.contiguous();
  };
  return product_entry("linear_out_residual", std::move(cases), call, std::nullopt, plain_residual_linear_spec);
}());

// x and out features of the mixed-precision residual and F32-bias entries: several tiles with
// a long k, a 3-D x, k = 0 (residual + bias) and empty m.
const std::vector<std::pair<Shape, std::int64_t>> kMixedLinearShapes = {
    {{127, 1025}, 33}, {{3, 33, 64}, 96}, {{4, 0}, 5}, {{0, 8}, 3}};

// A transformer block's residual stream: F16/BF16 x and weight with out_dtype F32, an F32
// residual, and no bias, a bias of the inputs' dtype or an F32 bias (the result's dtype); and
// F32 operands computed through BF16 with an F32 residual and bias. ints: bias (0: none,
// 1: the inputs' dtype, 2: F32).
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (std::int64_t bias : {0, 1, 2}) {
      if (dtype == DType::F32 && bias == 2) continue;  // the inputs' dtype is F32 already
      for (const auto& [x, out] : kMixedLinearShapes) {
        const std::optional<DType> bias_dtype =
            bias == 0 ? std::nullopt : std::optional<DType>(bias == 1 ? dtype : DType::F32);
        Case c = residual_linear_case(dtype, rng, x, out, DType::F32, bias_dtype);
        c.label += dtype == DType::F32 ? ", compute BF16" : ", out F32";
        cases.push_back(std::move(c));
      }
    }
    return cases;
  };
  auto spec = [](const Case& c) {
    return residual_linear_spec(c, c.inputs[0].dtype() == DType::F32 ? DType::BF16 : DType::F64);
  };
  auto call = [](const Case& c) {
    nn::LinearOptions o;
    o.residual = c.inputs[2];
    if (c.inputs[0].dtype() == DType::F32)
      o.compute = MatmulCompute::BF16;
    else
      o.out_dtype = DType::F32;
    return nn::linear(c.inputs[0], c.inputs[1], residual_bias_of(c), o);
  };
  Entry e = product_entry("linear_residual_mixed_precision", cases, call, DType::F32, spec);
  e.dtypes = {DType::F32, DType::F16, DType::BF16};
  e.reference_tolerance = f32_result_tolerance;
  e.backend_tolerance = f32_result_tolerance;
  return e;
}());

// An F32 bias (the result's dtype) of F16/BF16 operands with out_dtype F32, without a
// residual: gemm_bias with the bias in D's type, cuBLASLt's documented bias type.
FERRITE_CONFORMANCE([] {
  auto cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& [x, out] : kMixedLinearShapes) {
      Case c = linear_case(dtype, rng, x, out, true);
      c.inputs[2] = random({out}, DType::F32, rng);
      c.label += ", F32 bias, out F32";
      cases.push_back(std::move(c));
    }
    return cases;
  };
  auto call = [](const Case& c) {
    return nn::linear(c.inputs[0], c.inputs[1], c.inputs[2], {.out_dtype = DType::F32});
  };
  Entry e = product_entry("linear_f32_bias", cases, call, DType::F32, plain_linear_spec);
  e.dtypes = {DType::F16, DType::BF16};
  e.reference_tolerance = f32_result_tolerance;
  e.backend_tolerance = f32_result_tolerance;
  return e;
}());


// linear's bias is added before the one rounding (PyTorch's addmm), not to a rounded product:
// integer operands and integer biases of the product's size (to ±4096, rounded to the dtype,
// so still integers), exact in F32 in any order, measured in ulps of the exact result as in
// matmul_long_k. Rounding the product first and the sum again adds up to half an ulp of the
// product, several ulps of the result where the bias cancels part of the product.
FERRITE_CONFORMANCE([] {
  Entry e;
  e.op = "linear_long_k";
  e.dtypes = {DType::F16, DType::BF16};
  e.cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    std::uniform_int_distribution<int> pick(-4096, 4096);
    for (const auto& [x, out] : std::vector<std::pair<Shape, std::int64_t>>{
             {{4, 5000}, 33}, {{2, 3, 6000}, 17}, {{16, 8192}, 40}, {{16, 65536}, 16}}) {
      std::vector<float> bias(static_cast<std::size_t>(out));
      for (float& b : bias) b = static_cast<float>(pick(rng));
      cases.push_back({shape_str(x) + " x [" + std::to_string(out) + ", " + std::to_string(x.back()) +
                           "]ᵀ + bias, integers",
                       {small_integers(x, dtype, rng), small_integers({out, x.back()}, dtype, rng),
                        from_vector(bias, {out}).to(dtype)}});
    }
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    const Tensor out = nn::linear(c.inputs[0], c.inputs[1], c.inputs[2]);
    return std::vector<Tensor>{error_in_ulps(out, reference_product(c.inputs[0], c.inputs[1], linear_spec(c)))};
  };
  e.reference_outputs = [](const Case& c) {
    return std::vector<Tensor>{zeros(reference_product(c.inputs[0], c.inputs[1], linear_spec(c)).shape, DType::F64)};
  };
  e.reference_tolerance = [](DType) { return Tolerance{0, 0.52}; };
  e.backend_tolerance = [](DType) { return Tolerance{0, 1.04}; };
  return e;
}());

}  // namespace
}  // namespace ferrite::conformance
