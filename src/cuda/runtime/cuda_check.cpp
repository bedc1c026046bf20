#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda {

void throw_cuda_error(cudaError_t status, const char* expression, const char* file, int line) {
  cudaGetLastError();  // reset the per-thread error so the next call is not blamed for this one
  int device = -1;
  cudaGetDevice(&device);
  const ErrorKind kind = status == cudaErrorMemoryAllocation ? ErrorKind::OutOfMemory : ErrorKind::Cuda;
  detail::throw_error(kind, detail::concat("CUDA error ", cudaGetErrorName(status), " (", cudaGetErrorString(status),
                                           ") in `", expression, "` at ", file, ":", line, " on cuda:", device));
}

void throw_library_error(const char* library, int status, const char* status_text, const char* expression,
                         const char* file, int line) {
  int device = -1;
  cudaGetDevice(&device);
  detail::throw_error(ErrorKind::Library, detail::concat(library, " error ", status, " (", status_text, ") in `",
                                                         expression, "` at ", file, ":", line, " on cuda:", device));
}

}  // namespace ferrite::cuda
