// Helpers of the training kernels: aligned packs and the float-dtype switch.
#pragma once

#include <cstdint>

#include "core/dtype_dispatch.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/launch_grid.hpp"

namespace ferrite::cuda::training {

/// N consecutive elements moved with one (or two, for 32 bytes) vector access.
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <class T, int N>
inline bool pack_aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % sizeof(Pack<T, N>) == 0;
}

template <class F>
void visit_float(const char* op, DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32: f(detail::TypeTag<float>{}); return;
    case DType::F64: f(detail::TypeTag<double>{}); return;
    case DType::F16: f(detail::TypeTag<Half>{}); return;
    case DType::BF16: f(detail::TypeTag<BFloat16>{}); return;
    default: FERRITE_THROW(Unsupported, op, ": dtype ", dtype_name(dtype), " is not a float dtype");
  }
}

inline constexpr int kThreads = 256;

}  // namespace ferrite::cuda::training
