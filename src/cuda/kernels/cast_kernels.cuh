// Shared by the cast_*.cu files: cast one source type to whatever out's dtype is.
#pragma once

#include "core/dtype_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "core/elementwise_layout.hpp"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/primitives/elementwise_engine.cuh"

namespace ferrite::cuda::kernels {

template <class In>
void cast_from(const Buffer& x, const Buffer& out, cudaStream_t stream) {
  detail::visit_dtype(out.dtype(), [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    launch_elementwise<Layouts::Contiguous>(detail::CastFn{}, contiguous_layout(x.numel(), 1), out.data_as<Out>(), stream,
                              x.data_as<const In>());
  });
}

}  // namespace ferrite::cuda::kernels
