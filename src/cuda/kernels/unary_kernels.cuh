// Shared by the unary and backward .cu files: run one functor over a unary op's layout (x may
// be a view read through its strides) or over contiguous buffers.
#pragma once

#include "core/elementwise_dispatch.hpp"
#include "core/elementwise_layout.hpp"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/primitives/elementwise_engine.cuh"

namespace ferrite::cuda::kernels {

/// out[i] = fn(x[offset(i)]) over `layout` (contiguous, or a view within 32-bit offsets); Out
/// is x's storage type unless given (mixed precision).
template <class T, class Out = T, class Fn>
void launch_unary(Fn fn, const Buffer& x, const Buffer& out, const ElementwiseLayout& layout, cudaStream_t stream) {
  launch_elementwise<Layouts::Strided>(fn, layout, out.data_as<Out>(), stream, x.data_as<const T>());
}

/// out[i] = fn(grad[offset_0(i)], x[offset_1(i)]) over `layout` (contiguous, or views within
/// 32-bit offsets: contiguous input takes the same kernel as before views existed). Views run
/// the strided kernel with 4 items per thread (8 loads in flight, 32 bytes for F32: by estimate
/// about twice what an H200 SM needs at full occupancy) instead of its default 4-16: each item
/// inlines the backward functor again (erf, exp, tanh), and the default made
/// activation_backward_single.cu compile 65% longer (nvcc user time); 4 items +31-46%, 2 items
/// +30% (half the loads in flight, too few to be sure of the bandwidth).
inline constexpr int kBackwardStridedItems = 4;
template <class T, class Fn>
void launch_backward(Fn fn, const Buffer& grad, const Buffer& x, const Buffer& out, const ElementwiseLayout& layout,
                     cudaStream_t stream) {
  launch_elementwise<Layouts::Strided, kBackwardStridedItems>(fn, layout, out.data_as<T>(), stream,
                                                              grad.data_as<const T>(), x.data_as<const T>());
}

/// out = fn(a, b) over a broadcast layout.
template <class T, class Out = T, class Fn>
void launch_binary(Fn fn, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                   cudaStream_t stream) {
  launch_elementwise<Layouts::Any>(fn, layout, out.data_as<Out>(), stream, a.data_as<const T>(), b.data_as<const T>());
}

}  // namespace ferrite::cuda::kernels
