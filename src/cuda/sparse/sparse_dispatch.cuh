// Launch geometry and dtype dispatch shared by the CUDA sparse kernel files
// (sparse_kernels.cu, sparse_add_kernels.cu, sparse_spgemm_kernels.cu, ...). Included by .cu
// files only.
#pragma once

#include <cstdint>

#include "core/numeric.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/error.hpp"
#include "ferrite/half.hpp"

namespace ferrite::cuda::sparse::dispatch {

constexpr int kThreads = 256;

/// Blocks of kThreads for n grid-stride items (at least 1, capped; the kernels stride).
inline unsigned blocks_for(std::int64_t n) {
  const std::int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 16 ? 65535 * 16 : b));
}

/// f(I{}) for the index dtype (I32 or I64).
template <class F>
void with_index(DType index, F&& f) {
  if (index == DType::I32) return f(std::int32_t{});
  return f(std::int64_t{});
}

/// f(T{}) for a values dtype of the sparse family.
template <class F>
void with_values(DType values, F&& f) {
  switch (values) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::F16: return f(Half{});
    case DType::BF16: return f(BFloat16{});
    case DType::C64: return f(detail::Complex<float>{});
    case DType::C128: return f(detail::Complex<double>{});
    default: FERRITE_THROW(Unsupported, "sparse: values of dtype ", dtype_name(values), " are not supported on cuda");
  }
}

}  // namespace ferrite::cuda::sparse::dispatch
