// Dispatch over the float dtypes of the training ops (F32, F64, F16, BF16).
#pragma once

#include "core/dtype_dispatch.hpp"

namespace ferrite::detail {

template <class F>
void visit_float_dtype(const char* op, DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32: f(TypeTag<float>{}); return;
    case DType::F64: f(TypeTag<double>{}); return;
    case DType::F16: f(TypeTag<Half>{}); return;
    case DType::BF16: f(TypeTag<BFloat16>{}); return;
    default: FERRITE_THROW(Unsupported, op, ": dtype ", dtype_name(dtype), " is not a float dtype");
  }
}

}  // namespace ferrite::detail
