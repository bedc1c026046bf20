// cuDNN handles, one per (device, host thread), pooled across threads (cudnn_handle.hpp).
#include "cuda/libs/cudnn_handle.hpp"

#if FERRITE_HAVE_CUDNN_FRONTEND  // set for the TUs that get cuDNN's include directory

#include <cudnn.h>

#include <map>
#include <mutex>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/device_context.hpp"

namespace ferrite::cuda {
namespace {

// Handles no thread holds, per device. Leaked: a thread's handles come back here from its
// thread_local destructor, which may run during static destruction (the main thread's).
struct Pool {
  std::mutex mutex;
  std::map<int, std::vector<cudnnHandle_t>> free;
};

Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

// The handles this thread holds, by device; given back to the pool when the thread exits.
// Only a mutex and a vector are touched then, never CUDA or cuDNN.
struct ThreadHandles {
  std::map<int, cudnnHandle_t> by_device;
  ~ThreadHandles() {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    for (const auto& [device, handle] : by_device) p.free[device].push_back(handle);
  }
};

cudnnHandle_t acquire(int device) {
  Pool& p = pool();
  // Held across cudnnCreate as well: NVIDIA advises against creating handles concurrently
  // before one creation has completed, and creation is rare.
  std::lock_guard<std::mutex> lock(p.mutex);
  std::vector<cudnnHandle_t>& free = p.free[device];
  if (!free.empty()) {
    const cudnnHandle_t h = free.back();
    free.pop_back();
    return h;
  }
  DeviceGuard guard(device);
  cudnnHandle_t h = nullptr;
  FERRITE_CUDNN_CHECK(cudnnCreate(&h));
  return h;
}

}  // namespace

void throw_cudnn_error(int status, const char* expression, const char* file, int line) {
  throw_library_error("cuDNN", status, cudnnGetErrorString(static_cast<cudnnStatus_t>(status)), expression, file,
                      line);
}

cudnnHandle_t cudnn_handle(int device, cudaStream_t stream) {
  thread_local ThreadHandles mine;
  cudnnHandle_t& h = mine.by_device[device];
  if (h == nullptr) h = acquire(device);
  FERRITE_CUDNN_CHECK(cudnnSetStream(h, stream));
  return h;
}

}  // namespace ferrite::cuda

#endif
