// Lazily created cuBLAS / cuBLASLt handles and the per-device GEMM workspace.
#include <cublasLt.h>
#include <cublas_v2.h>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/device_context.hpp"

namespace ferrite::cuda {
namespace {

void check_cublas(cublasStatus_t status, const char* expression) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw_library_error("cuBLAS", static_cast<int>(status), cublasGetStatusString(status), expression, __FILE__,
                        __LINE__);
}

// Large enough for cuBLASLt's best Hopper kernels, as PyTorch sizes it.
constexpr std::size_t kWorkspaceBytes = std::size_t(32) << 20;

}  // namespace

cublasContext* DeviceContext::cublas() {
  std::call_once(cublas_once_, [&] {
    DeviceGuard guard(device_);
    check_cublas(cublasCreate(&cublas_), "cublasCreate");
  });
  return cublas_;
}

cublasLtContext* DeviceContext::cublas_lt() {
  std::call_once(cublas_lt_once_, [&] {
    DeviceGuard guard(device_);
    check_cublas(cublasLtCreate(&cublas_lt_), "cublasLtCreate");
  });
  return cublas_lt_;
}

void* DeviceContext::blas_workspace(std::size_t* bytes) {
  std::call_once(workspace_once_, [&] {
    DeviceGuard guard(device_);
    FERRITE_CUDA_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
    workspace_bytes_ = kWorkspaceBytes;
  });
  *bytes = workspace_bytes_;
  return workspace_;
}

}  // namespace ferrite::cuda
