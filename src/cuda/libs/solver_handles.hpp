// cuSOLVER glue for the CUDA linear algebra: status checking, and one dense handle (with its
// 64-bit API params object) per (device, stream), bound to that stream at creation so no
// two threads ever race on cusolverDnSetStream.
#pragma once

#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/device_context.hpp"

namespace ferrite::cuda {

[[noreturn]] void throw_cusolver_error(cusolverStatus_t status, const char* expression, const char* file, int line);

struct SolverHandle {
  cusolverDnHandle_t handle = nullptr;
  cusolverDnParams_t params = nullptr;
};

/// The handle for work queued on `stream` of ctx's device; created on first use and kept
/// for the process lifetime (as the BLAS workspaces are).
SolverHandle solver_handle(DeviceContext& ctx, cudaStream_t stream);

}  // namespace ferrite::cuda

#define FERRITE_CUSOLVER_CHECK(expr)                                                           \
  do {                                                                                         \
    const cusolverStatus_t ferrite_cusolver_status_ = (expr);                                  \
    if (ferrite_cusolver_status_ != CUSOLVER_STATUS_SUCCESS) [[unlikely]]                      \
      ::ferrite::cuda::throw_cusolver_error(ferrite_cusolver_status_, #expr, __FILE__, __LINE__); \
  } while (0)
