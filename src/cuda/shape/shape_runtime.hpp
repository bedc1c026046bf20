// Host-side helpers of the shape family on the GPU: scratch memory from the device pool,
// and small read-backs (an index range, a count) through pinned memory.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "cuda/runtime/device_context.hpp"

namespace ferrite::cuda::shape {

/// A stream-ordered scratch allocation from the device's pool, given back on scope exit
/// (the release is ordered after the kernels already queued that use it).
class Scratch {
 public:
  Scratch(int device, std::size_t bytes, cudaStream_t stream)
      : ctx_(DeviceContext::get(device)), bytes_(std::max<std::size_t>(bytes, 1)), stream_(stream) {
    ptr_ = ctx_.allocate(bytes_, stream_);
  }
  ~Scratch() { ctx_.release(ptr_, bytes_, stream_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  DeviceContext& ctx_;
  void* ptr_ = nullptr;
  std::size_t bytes_;
  cudaStream_t stream_;
};

/// Up to four int64 values copied from the device into this thread's pinned slot. start()
/// queues the copy and an event; wait() blocks until that copy (not later work) is done,
/// so kernels queued in between keep the GPU busy while the host waits.
class Readback {
 public:
  static constexpr int kMax = 4;
  void start(const void* device_values, int count, int device, cudaStream_t stream);
  /// The pinned slot as the device sees it, for a kernel to write the values into directly;
  /// then record() instead of start().
  long long* device_slot(int device);
  void record(int device, cudaStream_t stream);
  /// Waits and returns the values.
  const std::int64_t* wait();

 private:
  std::int64_t* host_ = nullptr;
  cudaEvent_t event_ = nullptr;
};

/// This host thread's side stream on `device`, made to wait for everything queued on `main`
/// so far. Work that only the host waits for (an index's range check) goes there, so that it
/// runs beside the main stream's next kernel instead of before it.
cudaStream_t fork_side_stream(int device, cudaStream_t main);

}  // namespace ferrite::cuda::shape
