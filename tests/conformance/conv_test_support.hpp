// Helpers shared by the convolution family's conformance entries (pool_entries.cpp,
// conv2d_entries.cpp, rnn_cell_entries.cpp): tolerances and central finite differences of
// long-double reference forwards.
#pragma once

#include <functional>
#include <vector>

#include "conformance/conformance.hpp"
#include "conformance/reference.hpp"

namespace ferrite::conformance::conv_test {

using LVec = std::vector<long double>;
inline const std::vector<DType> kFloat = {DType::F32, DType::F64, DType::F16, DType::BF16};

// ---- tolerances ----

// One rounding of a float (or double) sum of a few terms, against long double.
inline Tolerance rounded(DType d) {
  switch (d) {
    case DType::F32: return {1e-5, 1e-5};
    case DType::F64: return {1e-12, 1e-12};
    case DType::F16: return {2e-3, 1e-3};
    case DType::BF16: return {1.6e-2, 1e-2};
    default: return {};
  }
}
// Gradients whose inputs (the workspace, the forward's outputs) were rounded to the dtype,
// against finite differences of the exact forward.
inline Tolerance gradient(DType d) {
  switch (d) {
    case DType::F32: return {1e-4, 1e-4};
    case DType::F64: return {1e-8, 1e-8};
    case DType::F16: return {1e-2, 1e-2};
    case DType::BF16: return {6e-2, 6e-2};
    default: return {};
  }
}
// GEMM-based conv on the GPU against Eigen on the CPU: different summation orders.
inline Tolerance gemm_order(DType d) {
  switch (d) {
    case DType::F32: return {1e-4, 1e-4};
    case DType::F64: return {1e-11, 1e-11};
    case DType::F16: return {4e-3, 4e-3};
    case DType::BF16: return {2e-2, 2e-2};
    default: return {};
  }
}

inline Tensor to_dtype(const LVec& v, const Shape& s, DType d) { return reference::from_values(v, s, d); }

// Σ_i g_i · f(x)_i differentiated by central differences for every element of input `which`.
inline LVec finite_difference(std::vector<LVec> inputs, std::size_t which, const LVec& weights,
                       const std::function<LVec(const std::vector<LVec>&)>& forward, long double eps) {
  LVec grad(inputs[which].size());
  for (std::size_t i = 0; i < grad.size(); ++i) {
    const long double keep = inputs[which][i];
    auto loss = [&](long double v) {
      inputs[which][i] = v;
      const LVec out = forward(inputs);
      long double s = 0;
      for (std::size_t k = 0; k < out.size(); ++k) s += weights[k] * out[k];
      return s;
    };
    grad[i] = (loss(keep + eps) - loss(keep - eps)) / (2 * eps);
    inputs[which][i] = keep;
  }
  return grad;
}

}  // namespace ferrite::conformance::conv_test
