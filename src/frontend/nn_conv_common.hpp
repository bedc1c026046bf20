// Checks shared by the convolution family's front-end files (nn_pool.cpp, nn_conv2d.cpp,
// nn_rnn_cell.cpp).
#pragma once

#include <string>

#include "ferrite/backend.hpp"
#include "ferrite/backend_families/conv_ops.hpp"
#include "ferrite/error.hpp"
#include "ferrite/nn_conv.hpp"
#include "frontend/checks.hpp"

namespace ferrite::frontend {

/// Unsupported unless `x` is F32, F64, F16 or BF16.
inline void check_float_input(const char* op, const Tensor& x) {
  const DType d = x.dtype();
  FERRITE_CHECK(d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16, Unsupported, op,
                ": dtype ", dtype_name(d), " is not supported (input ", x.description(),
                "; F32, F64, F16 and BF16 only)");
}

// Appended piece by piece: GCC 12's -Wrestrict misfires on `"(" + std::to_string(...) + ...`
// (a false overlap warning inside std::string's operator+, GCC bug 105329).
inline std::string size2_str(nn::Size2 s) {
  std::string text = "(";
  text += std::to_string(s[0]);
  text += ", ";
  text += std::to_string(s[1]);
  text += ")";
  return text;
}

inline ConvOps& conv_ops_of(const Tensor& x) { return backend(x.device()).conv_ops(); }

}  // namespace ferrite::frontend
