// Runtime dtype -> compile-time storage type. Used by backend code that instantiates a
// template per dtype; the lambda receives a TypeTag whose ::type is the storage type.
#pragma once

#include "core/numeric.hpp"
#include "ferrite/error.hpp"

namespace ferrite::detail {

template <class T>
struct TypeTag {
  using type = T;
};

template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32: return f(TypeTag<float>{});
    case DType::F64: return f(TypeTag<double>{});
    case DType::F16: return f(TypeTag<Half>{});
    case DType::BF16: return f(TypeTag<BFloat16>{});
    case DType::I32: return f(TypeTag<std::int32_t>{});
    case DType::I64: return f(TypeTag<std::int64_t>{});
    case DType::Bool: return f(TypeTag<bool>{});
    case DType::C64: return f(TypeTag<Complex<float>>{});
    case DType::C128: return f(TypeTag<Complex<double>>{});
  }
  FERRITE_THROW(InvalidArgument, "unknown dtype tag ", static_cast<int>(dtype));
}

}  // namespace ferrite::detail
