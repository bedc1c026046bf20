// Shared by the cast_*.cu files: cast one source type to whatever out's dtype is.
#pragma once

#include <type_traits>

#include "core/dtype_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "core/elementwise_layout.hpp"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/primitives/elementwise_engine.cuh"

namespace ferrite::cuda::kernels {

template <class T>
inline constexpr bool kRealFloating =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

/// Whether the cast In -> Out has a strided kernel: the real floating pairs (F32, F64, F16,
/// BF16 both ends: 16 of the 100 pairs). Must agree with cast_reads_views (elementwise.cuh).
template <class In, class Out>
inline constexpr bool kCastReadsViews = kRealFloating<In> && kRealFloating<Out>;

/// x is read through `layout`: contiguous, or, for the pairs of kCastReadsViews, a view within
/// 32-bit offsets.
template <class In>
void cast_from(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout, cudaStream_t stream) {
  detail::visit_dtype(out.dtype(), [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    if constexpr (kCastReadsViews<In, Out>)
      launch_elementwise<Layouts::Strided>(detail::CastFn{}, layout, out.data_as<Out>(), stream, x.data_as<const In>());
    else
      launch_elementwise<Layouts::Contiguous>(detail::CastFn{}, layout, out.data_as<Out>(), stream,
                                              x.data_as<const In>());
  });
}

}  // namespace ferrite::cuda::kernels
