// Lazily created cuSOLVER dense handles, one per (device, stream).
#include "cuda/libs/solver_handles.hpp"

#include <map>
#include <mutex>
#include <utility>

namespace ferrite::cuda {
namespace {

const char* status_text(cusolverStatus_t status) {
  switch (status) {
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "not initialized";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "allocation failed";
    case CUSOLVER_STATUS_INVALID_VALUE: return "invalid value";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "architecture mismatch";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "execution failed";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "internal error";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "not supported";
    default: return "error";
  }
}

}  // namespace

void throw_cusolver_error(cusolverStatus_t status, const char* expression, const char* file, int line) {
  throw_library_error("cuSOLVER", static_cast<int>(status), status_text(status), expression, file, line);
}

SolverHandle solver_handle(DeviceContext& ctx, cudaStream_t stream) {
  static std::mutex mutex;
  // Never destroyed: handles may be used by other static destructors' work, and the driver
  // reclaims them at exit.
  static auto& handles = *new std::map<std::pair<int, cudaStream_t>, SolverHandle>();
  std::lock_guard<std::mutex> lock(mutex);
  SolverHandle& h = handles[{ctx.device(), stream}];
  if (h.handle == nullptr) {
    DeviceGuard guard(ctx.device());
    SolverHandle fresh;
    FERRITE_CUSOLVER_CHECK(cusolverDnCreate(&fresh.handle));
    FERRITE_CUSOLVER_CHECK(cusolverDnSetStream(fresh.handle, stream));
    FERRITE_CUSOLVER_CHECK(cusolverDnCreateParams(&fresh.params));
    h = fresh;
  }
  return h;
}

}  // namespace ferrite::cuda
