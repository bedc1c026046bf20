// 2:4 semi-structured pruning on the GPU: one thread per group, the rule shared with the CPU
// backend (src/core/structured_sparsity.hpp), so both keep the same elements.
#include "cuda/sparse/structured_kernels.cuh"

#include "core/structured_sparsity.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/sparse/sparse_dispatch.cuh"
#include "ferrite/error.hpp"

namespace ferrite::cuda::sparse {
namespace {

template <class T, int kGroup>
__global__ void prune_kernel(const T* in, T* out, std::int64_t groups) {
  for (std::int64_t g = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; g < groups;
       g += std::int64_t(gridDim.x) * blockDim.x)
    structured::prune_group(in + g * kGroup, out + g * kGroup, kGroup);
}

template <class T>
void launch(const void* dense, void* out, std::int64_t groups, int group, cudaStream_t stream) {
  const unsigned blocks = dispatch::blocks_for(groups);
  if (group == 4)
    prune_kernel<T, 4><<<blocks, dispatch::kThreads, 0, stream>>>(static_cast<const T*>(dense), static_cast<T*>(out), groups);
  else
    prune_kernel<T, 2><<<blocks, dispatch::kThreads, 0, stream>>>(static_cast<const T*>(dense), static_cast<T*>(out), groups);
}

}  // namespace

void prune_structured(DType dtype, const void* dense, void* out, std::int64_t rows, std::int64_t cols, int group,
                      cudaStream_t stream) {
  FERRITE_CHECK(group == 2 || group == 4, InvalidArgument, "sparse::prune_24: group ", group, " is not 2 or 4");
  const std::int64_t groups = rows * (cols / group);
  if (groups == 0) return;
  switch (dtype) {
    case DType::F32: launch<float>(dense, out, groups, group, stream); break;
    case DType::F16: launch<Half>(dense, out, groups, group, stream); break;
    case DType::BF16: launch<BFloat16>(dense, out, groups, group, stream); break;
    default: FERRITE_THROW(Unsupported, "sparse::prune_24: dtype ", dtype_name(dtype), " is not F16, BF16 or F32");
  }
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::sparse
