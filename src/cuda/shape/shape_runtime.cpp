#include "cuda/shape/shape_runtime.hpp"

#include <array>

#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda::shape {
namespace {

// One pinned slot and one event per device for each host thread. A thread finishes each
// read-back before its next one, so the slot is never shared; both live as long as the
// thread (a few bytes, never freed: freeing at thread exit may race CUDA's own teardown).
constexpr int kMaxDevices = 64;

struct ThreadSlots {
  std::int64_t* host = nullptr;
  std::array<cudaEvent_t, kMaxDevices> events{};
  std::array<cudaStream_t, kMaxDevices> side_streams{};
  std::array<cudaEvent_t, kMaxDevices> fork_events{};
};

ThreadSlots& slots() {
  thread_local ThreadSlots s;
  return s;
}

}  // namespace

namespace {
ThreadSlots& ready_slots(int device) {
  ThreadSlots& s = slots();
  FERRITE_CHECK(device >= 0 && device < kMaxDevices, InvalidArgument, "cuda: device index ", device,
                " is above the shape family's limit of ", kMaxDevices);
  // Pinned memory from cudaMallocHost is mapped into every device's address space (UVA).
  if (s.host == nullptr) FERRITE_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&s.host), Readback::kMax * sizeof(std::int64_t)));
  if (s.events[device] == nullptr) FERRITE_CUDA_CHECK(cudaEventCreateWithFlags(&s.events[device], cudaEventDisableTiming));
  return s;
}
}  // namespace

void Readback::start(const void* device_values, int count, int device, cudaStream_t stream) {
  ThreadSlots& s = ready_slots(device);
  host_ = s.host;
  event_ = s.events[device];
  FERRITE_CUDA_CHECK(cudaMemcpyAsync(host_, device_values, static_cast<std::size_t>(count) * sizeof(std::int64_t),
                                     cudaMemcpyDeviceToHost, stream));
  FERRITE_CUDA_CHECK(cudaEventRecord(event_, stream));
}

long long* Readback::device_slot(int device) {
  ThreadSlots& s = ready_slots(device);
  host_ = s.host;
  event_ = s.events[device];
  void* mapped = nullptr;
  FERRITE_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, host_, 0));
  return static_cast<long long*>(mapped);
}

void Readback::record(int device, cudaStream_t stream) {
  (void)device;
  FERRITE_CUDA_CHECK(cudaEventRecord(event_, stream));
}

cudaStream_t fork_side_stream(int device, cudaStream_t main) {
  ThreadSlots& s = ready_slots(device);
  const auto d = static_cast<std::size_t>(device);
  if (s.side_streams[d] == nullptr) {
    // The highest priority: the block scheduler then starts the side stream's small blocks as
    // soon as an SM has room, instead of after every pending block of the main stream's
    // kernel (which the host would then wait for).
    int least = 0, greatest = 0;
    FERRITE_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    FERRITE_CUDA_CHECK(cudaStreamCreateWithPriority(&s.side_streams[d], cudaStreamNonBlocking, greatest));
    FERRITE_CUDA_CHECK(cudaEventCreateWithFlags(&s.fork_events[d], cudaEventDisableTiming));
  }
  FERRITE_CUDA_CHECK(cudaEventRecord(s.fork_events[d], main));
  FERRITE_CUDA_CHECK(cudaStreamWaitEvent(s.side_streams[d], s.fork_events[d], 0));
  return s.side_streams[d];
}

const std::int64_t* Readback::wait() {
  FERRITE_CUDA_CHECK(cudaEventSynchronize(event_));
  return host_;
}

}  // namespace ferrite::cuda::shape
