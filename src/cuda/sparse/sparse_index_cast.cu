// I32 <-> I64 index arrays on the device (sparse_kernels.cuh): SpGEMM hands cuSPARSE 32-bit
// indices when every count fits (its 32-bit path is the fast one, and PyTorch's), converting
// the caller's I64 operands down and the I32 result back up.
#include "cuda/sparse/sparse_dispatch.cuh"
#include "cuda/sparse/sparse_kernels.cuh"

#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda::sparse {
namespace {

template <class From, class To>
__global__ void cast_kernel(const From* __restrict__ in, To* __restrict__ out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = static_cast<To>(in[i]);
}

}  // namespace

void cast_indices(DType from, const void* in, DType to, void* out, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  dispatch::with_index(from, [&](auto f) {
    using F = decltype(f);
    dispatch::with_index(to, [&](auto t) {
      using T = decltype(t);
      cast_kernel<F, T><<<dispatch::blocks_for(n), dispatch::kThreads, 0, stream>>>(static_cast<const F*>(in),
                                                                                     static_cast<T*>(out), n);
    });
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::sparse
