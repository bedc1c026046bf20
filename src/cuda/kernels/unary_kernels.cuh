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
/// the strided kernel with 8 items per thread: 16 loads in flight, what the binary ops' default
/// gives F32 (a narrowed add runs at 100% of the contiguous add on an H200). With 4 items the
/// narrowed gelu_backward_f32 ran at 74% of its contiguous rate, with 8 at 79% (runs of
/// 2026-12-01): past the loads in flight it was bound by instruction issue, which the strided
/// kernel's indexing now keeps low (elementwise_views.cuh). Each item inlines the backward
/// functor again (erf, exp, tanh), so 8 rather than the default 16 for F16/BF16:
/// activation_backward_single.cu 11.7 s -> 14.0 s of nvcc here (4 -> 8 items).
inline constexpr int kBackwardStridedItems = 8;
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
