// CUDA runtime controls: devices, streams, the memory pool. Usable (and honest) without a
// GPU: device_count() is 0 and the rest throw Unsupported. No CUDA header is included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ferrite/backend.hpp"

namespace ferrite::cuda {

/// A cudaStream_t, passed as an opaque pointer so this header needs no CUDA headers.
using StreamHandle = void*;

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessors = 0;
  std::size_t total_memory = 0;
  std::size_t free_memory = 0;
  std::size_t l2_cache_bytes = 0;
};

/// Versions as "13.0" strings; "not found" when a library cannot be loaded.
struct LibraryVersions {
  std::string runtime, driver, cublas, cudnn, nccl;
};

int device_count();
std::vector<DeviceInfo> devices();
LibraryVersions library_versions();

/// The stream ferrite enqueues work for `device` on, in this thread.
StreamHandle current_stream(int device);
/// The non-blocking stream ferrite created for `device` (the default current stream).
StreamHandle default_stream(int device);

/// Makes `stream` the current stream of `device` for this thread until destruction.
class StreamGuard {
 public:
  StreamGuard(int device, StreamHandle stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  int device_;
  StreamHandle previous_;
};

/// Returns cached pool memory of `device` to the driver (after waiting for its work).
void empty_cache(int device);
void reset_peak_memory(int device);

}  // namespace ferrite::cuda
