// DLPack stream handshake through CUDA events (cuda_sync.hpp).
#include "cuda_sync.hpp"

#include <ferrite/cuda.hpp>
#include <ferrite/error.hpp>

#ifdef FERRITE_PY_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ferrite::py::cuda_sync {

#ifdef FERRITE_PY_WITH_CUDA
namespace {

// Sets the current device for one call and restores the caller's.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (previous_ != device) cudaSetDevice(device);
  }
  ~DeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }

 private:
  int previous_ = -1;
};

cudaStream_t decode(std::uintptr_t s) {
  if (s == 1) return cudaStreamLegacy;
  if (s == 2) return cudaStreamPerThread;
  return reinterpret_cast<cudaStream_t>(s);
}

// `waiter` waits for the work enqueued so far on `signaller`.
cudaError_t order(cudaStream_t signaller, cudaStream_t waiter) {
  cudaEvent_t event = nullptr;
  cudaError_t err = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  if (err != cudaSuccess) return err;
  err = cudaEventRecord(event, signaller);
  if (err == cudaSuccess) err = cudaStreamWaitEvent(waiter, event, 0);
  cudaEventDestroy(event);  // released once the wait has been satisfied
  return err;
}

}  // namespace

void consumer_waits_for_ferrite(int device, std::uintptr_t consumer_stream) {
  DeviceScope scope(device);
  auto ferrite_stream = static_cast<cudaStream_t>(cuda::current_stream(device));
  const cudaStream_t consumer = decode(consumer_stream);
  if (consumer == ferrite_stream) return;
  const cudaError_t err = order(ferrite_stream, consumer);
  if (err != cudaSuccess) {
    cudaGetLastError();
    FERRITE_THROW(Cuda, "__dlpack__: making the consumer's stream ", consumer_stream, " wait for ferrite's stream on cuda:",
                  device, " failed: ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
  }
}

void ferrite_waits_for_consumer(int device, std::uintptr_t consumer_stream) noexcept {
  try {
    DeviceScope scope(device);
    auto ferrite_stream = static_cast<cudaStream_t>(cuda::current_stream(device));
    const cudaStream_t consumer = decode(consumer_stream);
    if (consumer != ferrite_stream && order(consumer, ferrite_stream) != cudaSuccess) {
      // The consumer's stream may be gone by now: then the host waits for the device instead.
      cudaGetLastError();
      cudaDeviceSynchronize();
      cudaGetLastError();
    }
  } catch (...) {
  }
}

std::uintptr_t stream_for_producer(int device) {
  auto s = reinterpret_cast<std::uintptr_t>(cuda::current_stream(device));
  return s == 0 ? 1 : s;  // 0 is not allowed by the array API; the legacy stream is 1
}

void host_waits_for_ferrite(int device) noexcept {
  try {
    DeviceScope scope(device);
    if (cudaStreamSynchronize(static_cast<cudaStream_t>(cuda::current_stream(device))) != cudaSuccess) cudaGetLastError();
  } catch (...) {
  }
}

#else  // a build without CUDA: no CUDA tensor can exist

void consumer_waits_for_ferrite(int, std::uintptr_t) {
  FERRITE_THROW(Unsupported, "__dlpack__: this ferrite was built without CUDA");
}
void ferrite_waits_for_consumer(int, std::uintptr_t) noexcept {}
std::uintptr_t stream_for_producer(int) {
  FERRITE_THROW(Unsupported, "from_dlpack: this ferrite was built without CUDA, it cannot import CUDA memory");
}
void host_waits_for_ferrite(int) noexcept {}

#endif

}  // namespace ferrite::py::cuda_sync
