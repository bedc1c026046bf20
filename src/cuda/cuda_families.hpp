// Factories of the CUDA backend's family objects, one per op group outside the elementwise
// group. Each is defined in its family's folder (src/cuda/<family>/) and serves every GPU:
// the device comes from the Buffers it is handed.
#pragma once

#include <memory>

#include "ferrite/backend_families/conv_ops.hpp"
#include "ferrite/backend_families/linalg_ops.hpp"
#include "ferrite/backend_families/fft_ops.hpp"
#include "ferrite/backend_families/matmul_ops.hpp"
#include "ferrite/backend_families/sparse_ops.hpp"
#include "ferrite/backend_families/attention_ops.hpp"
#include "ferrite/backend_families/reduction_ops.hpp"
#include "ferrite/backend_families/shape_ops.hpp"

namespace ferrite::cuda {

std::unique_ptr<ReductionOps> make_cuda_reduction_ops();
std::unique_ptr<ShapeOps> make_cuda_shape_ops();
std::unique_ptr<MatmulOps> make_cuda_matmul_ops();
std::unique_ptr<SparseOps> make_cuda_sparse_ops();
std::unique_ptr<ConvOps> make_cuda_conv_ops();
std::unique_ptr<AttentionOps> make_cuda_attention_ops();
std::unique_ptr<LinalgOps> make_cuda_linalg_ops();
std::unique_ptr<FftOps> make_cuda_fft_ops();

}  // namespace ferrite::cuda
