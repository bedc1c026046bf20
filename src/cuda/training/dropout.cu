// dropout and its backward on the GPU: one thread per Philox group of 4 elements, vector
// loads and stores (4 values, 4 mask bytes) when the pointers are aligned. The keep rule is
// the CPU backend's (src/core/random_elements.hpp: dropout_keep).
#include "core/random_elements.hpp"
#include "cuda/training/training_common.cuh"
#include "cuda/training/training_kernels.cuh"

namespace ferrite::cuda::training {
namespace {

using namespace ferrite::detail;
using namespace ferrite::detail::philox;

template <class T, bool kPacked>
__global__ void __launch_bounds__(kThreads)
    dropout_kernel(const DropoutDesc d, draw_t<T> scale, const T* __restrict__ x, T* __restrict__ out,
                   std::uint8_t* __restrict__ mask, std::int64_t n) {
  using W = draw_t<T>;
  const std::int64_t groups = (n + 3) / 4;
  for (std::int64_t g = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t first = g * 4;
    const Words r = group_words(d.seed, d.offset, static_cast<std::uint64_t>(g));
    if (kPacked && first + 4 <= n) {
      const Pack<T, 4> xv = *reinterpret_cast<const Pack<T, 4>*>(x + first);
      Pack<T, 4> ov;
      Pack<std::uint8_t, 4> mv;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool keep = dropout_keep(r.w[e], d.threshold);
        mv.v[e] = keep;
        ov.v[e] = narrow<T>(mul(static_cast<W>(widen(xv.v[e])), keep ? scale : W(0)));
      }
      *reinterpret_cast<Pack<T, 4>*>(out + first) = ov;
      *reinterpret_cast<Pack<std::uint8_t, 4>*>(mask + first) = mv;
    } else {
      for (int e = 0; e < 4 && first + e < n; ++e) {
        const bool keep = dropout_keep(r.w[e], d.threshold);
        mask[first + e] = keep;
        out[first + e] = narrow<T>(mul(static_cast<W>(widen(x[first + e])), keep ? scale : W(0)));
      }
    }
  }
}

template <class T, bool kPacked>
__global__ void __launch_bounds__(kThreads)
    dropout_backward_kernel(draw_t<T> scale, const T* __restrict__ grad, const std::uint8_t* __restrict__ mask,
                            T* __restrict__ out, std::int64_t n) {
  using W = draw_t<T>;
  const std::int64_t groups = (n + 3) / 4;
  for (std::int64_t g = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t first = g * 4;
    if (kPacked && first + 4 <= n) {
      const Pack<T, 4> gv = *reinterpret_cast<const Pack<T, 4>*>(grad + first);
      const Pack<std::uint8_t, 4> mv = *reinterpret_cast<const Pack<std::uint8_t, 4>*>(mask + first);
      Pack<T, 4> ov;
#pragma unroll
      for (int e = 0; e < 4; ++e) ov.v[e] = narrow<T>(mul(static_cast<W>(widen(gv.v[e])), mv.v[e] ? scale : W(0)));
      *reinterpret_cast<Pack<T, 4>*>(out + first) = ov;
    } else {
      for (int e = 0; e < 4 && first + e < n; ++e)
        out[first + e] = narrow<T>(mul(static_cast<W>(widen(grad[first + e])), mask[first + e] ? scale : W(0)));
    }
  }
}

template <class T>
void launch_dropout(const DropoutDesc& d, const Buffer& x, const Buffer& out, const Buffer& mask, cudaStream_t stream) {
  const std::int64_t n = x.numel();
  const unsigned blocks = grid_stride_blocks((n + 3) / 4, kThreads, std::int64_t(1) << 20);
  const T* xp = x.data_as<T>();
  T* op = out.data_as<T>();
  auto* mp = static_cast<std::uint8_t*>(mask.data());
  const auto scale = static_cast<draw_t<T>>(d.scale);
  if (pack_aligned<T, 4>(xp) && pack_aligned<T, 4>(op) && pack_aligned<std::uint8_t, 4>(mp))
    dropout_kernel<T, true><<<blocks, kThreads, 0, stream>>>(d, scale, xp, op, mp, n);
  else
    dropout_kernel<T, false><<<blocks, kThreads, 0, stream>>>(d, scale, xp, op, mp, n);
  FERRITE_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_backward(const Buffer& grad, const Buffer& mask, double scale_d, const Buffer& out, cudaStream_t stream) {
  const std::int64_t n = grad.numel();
  const unsigned blocks = grid_stride_blocks((n + 3) / 4, kThreads, std::int64_t(1) << 20);
  const T* gp = grad.data_as<T>();
  T* op = out.data_as<T>();
  const auto* mp = static_cast<const std::uint8_t*>(mask.data());
  const auto scale = static_cast<draw_t<T>>(scale_d);
  if (pack_aligned<T, 4>(gp) && pack_aligned<T, 4>(op) && pack_aligned<std::uint8_t, 4>(mp))
    dropout_backward_kernel<T, true><<<blocks, kThreads, 0, stream>>>(scale, gp, mp, op, n);
  else
    dropout_backward_kernel<T, false><<<blocks, kThreads, 0, stream>>>(scale, gp, mp, op, n);
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void dropout(const DropoutDesc& desc, const Buffer& x, const Buffer& out, const Buffer& mask, cudaStream_t stream) {
  if (x.numel() == 0) return;
  visit_float("dropout", x.dtype(), [&](auto tag) { launch_dropout<typename decltype(tag)::type>(desc, x, out, mask, stream); });
}

void dropout_backward(const Buffer& grad, const Buffer& mask, double scale, const Buffer& out, cudaStream_t stream) {
  if (grad.numel() == 0) return;
  visit_float("dropout_backward", grad.dtype(),
              [&](auto tag) { launch_backward<typename decltype(tag)::type>(grad, mask, scale, out, stream); });
}

}  // namespace ferrite::cuda::training
