// The matrix products' own kernels (everything else runs in cuBLASLt).
#pragma once

#include <cuda_runtime_api.h>

#include "ferrite/buffer.hpp"

namespace ferrite::cuda::kernels {

/// k == 0: C = beta * C in C's wide type, rounded once (0 when beta == 0, whatever C held),
/// the same arithmetic as the CPU backend.
void scale_gemm_output(const Buffer& c, double beta, cudaStream_t stream);

}  // namespace ferrite::cuda::kernels
