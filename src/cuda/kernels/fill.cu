// fill (full/zeros) and arange.
#include "core/dtype_dispatch.hpp"
#include "core/elementwise_layout.hpp"
#include "core/scalar_convert.hpp"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/primitives/elementwise_engine.cuh"

namespace ferrite::cuda::kernels {
namespace {

template <class W>
struct ConstantFn {
  W value;
  __device__ W operator()() const { return value; }
};

template <class T>
__global__ void arange_kernel(T* out, std::int64_t n, double start, double step) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = detail::narrow<T>(start + static_cast<double>(i) * step);
}

}  // namespace

void fill(const Buffer& out, Scalar value, cudaStream_t stream) {
  detail::visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = detail::scalar_to<T>(value);
    launch_elementwise<Layouts::Contiguous>(ConstantFn<detail::wide_t<T>>{detail::widen(v)}, contiguous_layout(out.numel(), 0),
                              out.data_as<T>(), stream);
  });
}

void arange(const Buffer& out, double start, double step, cudaStream_t stream) {
  detail::visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::int64_t blocks = std::min<std::int64_t>((out.numel() + 255) / 256, 65535);
    arange_kernel<T><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(out.data_as<T>(), out.numel(), start, step);
    FERRITE_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace ferrite::cuda::kernels
