// The matrix products' own kernels (everything else runs in cuBLASLt).
#pragma once

#include <cuda_runtime_api.h>

#include "ferrite/backend_families/matmul_ops.hpp"
#include "ferrite/buffer.hpp"

namespace ferrite::cuda::kernels {

/// k == 0: C = beta * C in C's wide type, rounded once (0 when beta == 0, whatever C held),
/// the same arithmetic as the CPU backend.
void scale_gemm_output(const Buffer& c, double beta, cudaStream_t stream);

/// The row-vector kernel (row_times_matrix.cu) takes F32 [1, k] x [k, n] products with B
/// not transposed, no batch, and at least this many columns and rows: enough columns to
/// give every SM a block, enough rows for the stream to pay off. Smaller shapes stay on
/// cuBLASLt. FERRITE_GEMM_NO_ROW_KERNEL=1 turns the kernel off (for comparisons).
inline constexpr std::int64_t kRowKernelMinColumns = 2048;
inline constexpr std::int64_t kRowKernelMinDepth = 1024;
bool row_times_matrix_applies(const GemmDesc& desc);
void row_times_matrix(const GemmDesc& desc, const Buffer& a, const Buffer& b, const Buffer& c, cudaStream_t stream);

}  // namespace ferrite::cuda::kernels
