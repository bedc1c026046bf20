// Per-GPU state: the device's non-blocking stream, its stream-ordered memory pool with
// counters, pinned staging buffers for transfers, and lazily created library handles.
// One DeviceContext per device, created on first use and kept for the process lifetime.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>

#include "ferrite/backend.hpp"

struct cublasContext;
struct cublasLtContext;

namespace ferrite::cuda {

/// Makes `device` current for the calling thread until destruction.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  int device_;
};

/// A pinned host chunk used to stage transfers, with the event that marks the last DMA
/// that reads or writes it.
struct StagingChunk {
  void* host = nullptr;
  cudaEvent_t done = nullptr;
};

class DeviceContext {
 public:
  static constexpr std::size_t kStagingChunkBytes = std::size_t(32) << 20;
  static constexpr int kStagingChunks = 3;

  /// The context of `device` (0 <= device < device count), created on first use.
  static DeviceContext& get(int device);
  static int count();

  int device() const { return device_; }
  cudaStream_t default_stream() const { return stream_; }
  /// This thread's current stream for the device (see StreamGuard).
  cudaStream_t current_stream() const;
  const cudaDeviceProp& properties() const { return properties_; }

  /// Stream-ordered allocation on `stream`. On out-of-memory: wait for the device, trim the
  /// pool, retry once, then throw OutOfMemory with the request and the stats.
  void* allocate(std::size_t bytes, cudaStream_t stream);
  void release(void* ptr, std::size_t bytes, cudaStream_t stream) noexcept;
  MemoryStats stats() const;
  void empty_cache();
  void reset_peak() { peak_.store(in_use_.load()); }

  /// Pinned staging chunks; hold staging_mutex() while using them.
  std::array<StagingChunk, kStagingChunks>& staging();
  std::mutex& staging_mutex() { return staging_mutex_; }

  /// cuBLAS / cuBLASLt handles and a workspace, created on first use.
  cublasContext* cublas();
  cublasLtContext* cublas_lt();
  void* blas_workspace(std::size_t* bytes);

 private:
  explicit DeviceContext(int device);

  int device_;
  cudaStream_t stream_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
  cudaDeviceProp properties_{};
  std::atomic<std::int64_t> in_use_{0}, peak_{0}, allocations_{0}, live_{0};

  std::mutex staging_mutex_;
  std::once_flag staging_once_;
  std::array<StagingChunk, kStagingChunks> staging_{};

  std::once_flag cublas_once_, cublas_lt_once_, workspace_once_;
  cublasContext* cublas_ = nullptr;
  cublasLtContext* cublas_lt_ = nullptr;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
};

}  // namespace ferrite::cuda
