// cuBLAS / cuBLASLt glue shared by the CUDA matrix products: status checking and the GEMM
// workspace of a (device, stream). The handles themselves are DeviceContext::cublas() and
// DeviceContext::cublas_lt() (one per device, created on first use).
#pragma once

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/device_context.hpp"

namespace ferrite::cuda {

/// Throws ErrorKind::Library naming the expression, file:line, device and cuBLAS's status text.
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* expression, const char* file, int line);

/// The GEMM workspace for work queued on `stream` of ctx's device (32 MiB). Two streams
/// never share one: a split-K kernel on one stream would overwrite the partial sums of a
/// kernel running on the other. Created on first use and kept for the process lifetime.
void* blas_workspace(DeviceContext& ctx, cudaStream_t stream, std::size_t* bytes);

}  // namespace ferrite::cuda

#define FERRITE_CUBLAS_CHECK(expr)                                                      \
  do {                                                                                  \
    const cublasStatus_t ferrite_cublas_status_ = (expr);                               \
    if (ferrite_cublas_status_ != CUBLAS_STATUS_SUCCESS) [[unlikely]]                   \
      ::ferrite::cuda::throw_cublas_error(ferrite_cublas_status_, #expr, __FILE__, __LINE__); \
  } while (0)
