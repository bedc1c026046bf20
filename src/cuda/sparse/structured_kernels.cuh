// Kernel launcher of 2:4 semi-structured pruning on the GPU (structured_kernels.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ferrite/dtype.hpp"

namespace ferrite::cuda::sparse {

/// out = dense [rows, cols] row-major with every group of `group` (2 or 4) consecutive row
/// elements pruned by structured::prune_group (the CPU backend's rule, bit for bit).
void prune_structured(DType dtype, const void* dense, void* out, std::int64_t rows, std::int64_t cols, int group,
                      cudaStream_t stream);

}  // namespace ferrite::cuda::sparse
