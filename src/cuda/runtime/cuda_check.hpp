// Turning CUDA runtime and library status codes into ferrite::Error.
#pragma once

#include <cuda_runtime_api.h>

#include "ferrite/error.hpp"

namespace ferrite::cuda {

/// Throws ErrorKind::Cuda with the expression, file:line, current device and CUDA's own
/// description. Clears the (non-sticky) error state first so later calls start clean.
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* expression, const char* file, int line);
[[noreturn]] void throw_library_error(const char* library, int status, const char* status_text,
                                      const char* expression, const char* file, int line);

}  // namespace ferrite::cuda

#define FERRITE_CUDA_CHECK(expr)                                                    \
  do {                                                                              \
    const cudaError_t ferrite_status_ = (expr);                                     \
    if (ferrite_status_ != cudaSuccess) [[unlikely]]                                \
      ::ferrite::cuda::throw_cuda_error(ferrite_status_, #expr, __FILE__, __LINE__); \
  } while (0)

/// After a kernel launch: configuration errors surface here, not at the next call.
#define FERRITE_CUDA_CHECK_LAUNCH() FERRITE_CUDA_CHECK(cudaGetLastError())
