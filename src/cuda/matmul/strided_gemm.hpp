// One strided-batched row-major GEMM on the GPU (cublaslt_gemm.cpp): the unit the CUDA
// matrix products are made of. Broadcast batch dims beyond the innermost one are looped by
// the caller (cuda_matmul_ops.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/runtime/device_context.hpp"
#include "ferrite/dtype.hpp"

namespace ferrite::cuda {

struct StridedGemm {
  DType input = DType::F32, output = DType::F32;
  std::int64_t m = 0, n = 0, k = 0;  // all > 0
  bool transpose_a = false, transpose_b = false, allow_tf32 = false;
  std::int64_t batch = 1;                         // >= 1
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements; 0 broadcasts A or B
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  /// Optional (nn::linear's residual): a C matrix read in place of `c` while the result is
  /// written to `c` (cuBLASLt's C and D): D = alpha·op(A)·op(B) + beta·C_in (+ bias), with
  /// C_in of the output dtype and D's layout, sharing no memory with it or equal to `c` (in
  /// place). Only with batch = 1.
  const void* c_in = nullptr;
  double alpha = 1, beta = 0;
  /// Optional: n elements of bias_dtype added to every row of C in the compute type before
  /// C's rounding (cuBLASLt's bias epilogue). Only with alpha = 1, beta = 0 (or beta = 1 with
  /// c_in), batch = 1, and a 16-byte aligned pointer.
  const void* bias = nullptr;
  DType bias_dtype = DType::F32;
};

/// Enqueues C = alpha * op(A) * op(B) + beta * C (+ bias) for every batch element on `stream`
/// (beta * C_in instead of beta * C when c_in is set).
/// No host synchronisation; the plan (descriptors and algorithm) is cached per shape.
/// Returns false, having enqueued nothing, when a bias or a separate C_in was asked for and
/// cuBLASLt offers no algorithm for this problem (the caller adds them another way); true
/// otherwise.
bool strided_gemm(DeviceContext& ctx, cudaStream_t stream, const StridedGemm& g);

}  // namespace ferrite::cuda
