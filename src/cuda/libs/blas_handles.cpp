// Lazily created cuBLAS / cuBLASLt handles and the GEMM workspaces (one per device and stream).
#include "cuda/libs/blas_handles.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <map>
#include <mutex>
#include <utility>

namespace ferrite::cuda {
namespace {

// Large enough for cuBLASLt's best Hopper kernels, as PyTorch sizes it.
constexpr std::size_t kWorkspaceBytes = std::size_t(32) << 20;

}  // namespace

void throw_cublas_error(cublasStatus_t status, const char* expression, const char* file, int line) {
  throw_library_error("cuBLAS", static_cast<int>(status), cublasGetStatusString(status), expression, file, line);
}

cublasContext* DeviceContext::cublas() {
  std::call_once(cublas_once_, [&] {
    DeviceGuard guard(device_);
    FERRITE_CUBLAS_CHECK(cublasCreate(&cublas_));
  });
  return cublas_;
}

cublasLtContext* DeviceContext::cublas_lt() {
  std::call_once(cublas_lt_once_, [&] {
    DeviceGuard guard(device_);
    FERRITE_CUBLAS_CHECK(cublasLtCreate(&cublas_lt_));
  });
  return cublas_lt_;
}

void* DeviceContext::blas_workspace(std::size_t* bytes) {
  std::call_once(workspace_once_, [&] {
    DeviceGuard guard(device_);
    // cudaMalloc, not the pool: the workspace lives as long as the process and must not
    // count as memory in use by tensors.
    FERRITE_CUDA_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
    workspace_bytes_ = kWorkspaceBytes;
  });
  *bytes = workspace_bytes_;
  return workspace_;
}

void* blas_workspace(DeviceContext& ctx, cudaStream_t stream, std::size_t* bytes) {
  // The device's own stream (nearly every call) uses the context's workspace.
  if (stream == ctx.default_stream()) return ctx.blas_workspace(bytes);
  // Other streams (StreamGuard) get their own, kept until exit: a stream handle may be
  // reused after its destruction, and the memory is small next to the tensors.
  static std::mutex mutex;
  static auto& workspaces = *new std::map<std::pair<int, cudaStream_t>, void*>();
  std::lock_guard<std::mutex> lock(mutex);
  void*& ws = workspaces[{ctx.device(), stream}];
  if (ws == nullptr) {
    DeviceGuard guard(ctx.device());
    FERRITE_CUDA_CHECK(cudaMalloc(&ws, kWorkspaceBytes));
  }
  *bytes = kWorkspaceBytes;
  return ws;
}

}  // namespace ferrite::cuda
