// Shared by the cast_*.cu files: cast one source type to whatever out's dtype is.
#pragma once

#include "core/dtype_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "core/elementwise_layout.hpp"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/primitives/elementwise_engine.cuh"

namespace ferrite::cuda::kernels {

/// x is read through `layout`: contiguous (the vector kernel), or a view within 32-bit
/// offsets (the strided kernel; the backend stages larger views through a dense copy). Every
/// dtype pair takes views: one launch_elementwise<Layouts::Strided> per pair, so a source
/// dtype's translation unit holds a strided kernel for each of the 10 destinations (the
/// sources are spread over four .cu files to keep each one's nvcc time short).
template <class In>
void cast_from(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout, cudaStream_t stream) {
  detail::visit_dtype(out.dtype(), [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    launch_elementwise<Layouts::Strided>(detail::CastFn{}, layout, out.data_as<Out>(), stream, x.data_as<const In>());
  });
}

}  // namespace ferrite::cuda::kernels
