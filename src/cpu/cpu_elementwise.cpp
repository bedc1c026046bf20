// CPU implementations of fill, arange, where and the Inf/NaN check; casts are in
// cpu_elementwise_cast.cpp, the binary and compare ops in cpu_elementwise_binary.cpp.
#include <cstring>

#include "core/elementwise_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "core/scalar_convert.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_elementwise_engine.hpp"

namespace ferrite::cpu {
namespace {

using detail::visit_dtype;

}  // namespace

void CpuBackend::fill(const Buffer& out, Scalar value) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = detail::scalar_to<T>(value);
    run_elementwise(ferrite::contiguous_layout(out.numel(), 0), out.data_as<T>(), [v] { return detail::widen(v); });
  });
}

void CpuBackend::arange(const Buffer& out, double start, double step) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = out.data_as<T>();
    for (std::int64_t i = 0; i < out.numel(); ++i)
      data[i] = detail::narrow<T>(start + static_cast<double>(i) * step);
  });
}

void CpuBackend::where(const Buffer& cond, const Buffer& x, const Buffer& y, const Buffer& out,
                       const ElementwiseLayout& layout) {
  detail::visit_element_size(dtype_size(out.dtype()), [&](auto tag) {
    using U = typename decltype(tag)::type;
    run_elementwise(layout, out.data_as<U>(), detail::WhereFn{}, cond.data_as<const bool>(), x.data_as<const U>(),
                    y.data_as<const U>());
  });
}

bool CpuBackend::has_inf_nan(const Buffer& x) {
  return detail::visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = x.data_as<const T>();
    const std::int64_t n = x.numel();
    bool found = false;
#pragma omp parallel for reduction(|| : found) schedule(static) if (n >= kParallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) {
      const auto w = detail::widen(data[i]);
      found = found || (w - w != w - w);  // Inf - Inf and NaN - NaN are NaN; finite - itself is 0
    }
    return found;
  });
}

}  // namespace ferrite::cpu
