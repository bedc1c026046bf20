// Factories of the CPU backend's family objects, one per op group outside the elementwise
// group. Each is defined in its family's folder (src/cpu/<family>/).
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

namespace ferrite::cpu {

std::unique_ptr<ReductionOps> make_cpu_reduction_ops();
std::unique_ptr<ShapeOps> make_cpu_shape_ops();
std::unique_ptr<MatmulOps> make_cpu_matmul_ops();
std::unique_ptr<SparseOps> make_cpu_sparse_ops();
std::unique_ptr<ConvOps> make_cpu_conv_ops();
std::unique_ptr<AttentionOps> make_cpu_attention_ops();
std::unique_ptr<LinalgOps> make_cpu_linalg_ops();
std::unique_ptr<FftOps> make_cpu_fft_ops();

}  // namespace ferrite::cpu
