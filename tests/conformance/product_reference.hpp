// The matrix products' conformance reference, shared by matmul_entries.cpp and
// linear_entries.cpp.
//
// Products are compared by normalised error: every output element is divided by
//   scale = Σ_p |alpha · a_ip · b_pj| + |beta · c_ij|
// (the bound a floating-point dot product's error is proportional to), and the quotients
// are compared with an absolute tolerance per dtype. The division runs through ferrite's
// own cast and div, which are bit-exact on both backends, so the CUDA run still compares
// bits for determinism. The reference is a plain long-double triple loop.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "conformance/conformance.hpp"

namespace ferrite::conformance::products {

inline const std::vector<DType> kMatmulDTypes = {DType::F32, DType::F64, DType::F16, DType::BF16};

struct ProductSpec {
  bool transpose_a = false, transpose_b = false;
  long double alpha = 1, beta = 0;
  const Tensor* c = nullptr;          // the accumulated output (beta != 0), else null
  const Tensor* bias = nullptr;       // [n], added to every row (nn::linear), else null
  DType round_inputs_to = DType::F64;  // F16/BF16: the inputs are rounded first (compute = F16/BF16)
};

struct Product {
  Shape shape;
  std::vector<long double> values, scale;
};

/// torch.matmul semantics from scratch, summed exactly in long double (see the .cpp).
Product reference_product(const Tensor& a, const Tensor& b, const ProductSpec& spec);
/// The backend's result divided by the reference scale, on the result's device; throws when
/// its shape or dtype is not the expected one.
Tensor normalised(const Tensor& out, const Product& p, DType expected_dtype);
/// The reference values divided by their scale.
Tensor normalised_reference(const Product& p);
/// ints[0], ints[1]: the transpose flags of a and b.
ProductSpec spec_of(const Case& c);

/// Normalised-error tolerances: the CPU against the reference, CUDA against the CPU, and
/// F32 results of exactly representable products.
Tolerance reference_tolerance(DType d);
Tolerance backend_tolerance(DType d);
Tolerance f32_result_tolerance(DType);
/// A dtype other than d (for dtype-mismatch error cases).
DType other_dtype(DType d);

/// An entry whose run is `call` on inputs a and b, checked against the reference product that
/// `spec` describes (default spec_of: ints are the transpose flags). The result must have the
/// inputs' dtype, or `result_dtype` when given.
Entry product_entry(std::string op, std::function<std::vector<Case>(DType, Rng&)> cases,
                    std::function<Tensor(const Case&)> call, std::optional<DType> result_dtype = std::nullopt,
                    std::function<ProductSpec(const Case&)> spec = spec_of);

/// Integers in [-8, 8] of `dtype`: every product and partial sum of a long-K product is then
/// an integer below 2^24, exact in F32 in any order.
Tensor small_integers(const Shape& shape, DType dtype, Rng& rng);
/// (result - exact) / ulp(exact) of a half-precision result, in F64 on the result's device.
Tensor error_in_ulps(const Tensor& out, const Product& p);

}  // namespace ferrite::conformance::products
