// C = beta * C for products with an empty inner dimension (k == 0), where no GEMM runs.
#include "core/numeric.hpp"
#include "cuda/matmul/matmul_kernels.cuh"
#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda::kernels {
namespace {

template <class T>
__global__ void scale_kernel(T* c, std::int64_t n, double beta) {
  using W = detail::wide_t<T>;
  const W factor = static_cast<W>(beta);
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    c[i] = beta == 0 ? detail::narrow<T>(W(0)) : detail::narrow<T>(factor * detail::widen(c[i]));
}

template <class T>
void launch(const Buffer& c, double beta, cudaStream_t stream) {
  const std::int64_t n = c.numel();
  const std::int64_t blocks = std::min<std::int64_t>((n + 255) / 256, 65535);
  scale_kernel<T><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(c.data_as<T>(), n, beta);
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void scale_gemm_output(const Buffer& c, double beta, cudaStream_t stream) {
  if (c.numel() == 0) return;
  switch (c.dtype()) {
    case DType::F32: return launch<float>(c, beta, stream);
    case DType::F64: return launch<double>(c, beta, stream);
    case DType::F16: return launch<Half>(c, beta, stream);
    case DType::BF16: return launch<BFloat16>(c, beta, stream);
    default: break;
  }
  FERRITE_THROW(Unsupported, "matmul: no k == 0 kernel for output dtype ", dtype_name(c.dtype()));
}

}  // namespace ferrite::cuda::kernels
