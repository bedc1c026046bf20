#include "cuda/runtime/device_context.hpp"

#include <memory>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda {

DeviceGuard::DeviceGuard(int device) : device_(device) {
  FERRITE_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device_) FERRITE_CUDA_CHECK(cudaSetDevice(device_));
}

DeviceGuard::~DeviceGuard() {
  if (previous_ != device_ && previous_ >= 0) cudaSetDevice(previous_);
}

int DeviceContext::count() {
  static const int devices = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // no driver or no GPU: ferrite runs on the CPU backend alone
      return 0;
    }
    return n;
  }();
  return devices;
}

DeviceContext& DeviceContext::get(int device) {
  static const int n = count();
  // Never destroyed: buffers freed during static destruction still need their context.
  static auto& contexts = *new std::vector<std::unique_ptr<DeviceContext>>(static_cast<std::size_t>(n));
  static auto& once = *new std::vector<std::once_flag>(static_cast<std::size_t>(n));
  // No GPU at all is Unsupported, as ferrite/cuda.hpp promises (and as the build without
  // CUDA says); a wrong index on a machine with GPUs is InvalidArgument.
  FERRITE_CHECK(n > 0, Unsupported, "cuda:", device, " is not available: no CUDA device was found on this machine");
  FERRITE_CHECK(device >= 0 && device < n, InvalidArgument, "cuda:", device, " is not available (", n,
                " CUDA device(s))");
  const auto i = static_cast<std::size_t>(device);
  std::call_once(once[i], [&] { contexts[i].reset(new DeviceContext(device)); });
  return *contexts[i];
}

DeviceContext::DeviceContext(int device) : device_(device) {
  DeviceGuard guard(device);
  FERRITE_CUDA_CHECK(cudaGetDeviceProperties(&properties_, device));
  FERRITE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  FERRITE_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool_, device));
  // Keep freed memory in the pool instead of returning it at every synchronisation:
  // this is what makes the pool a caching allocator.
  std::uint64_t threshold = UINT64_MAX;
  FERRITE_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold));
}

void* DeviceContext::allocate(std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return nullptr;
  // More than the device holds can never succeed: refused here, without asking the driver
  // (a 4 TiB request ran past the API fuzz's 20 s call limit on the H200 instead of failing).
  FERRITE_CHECK(bytes <= properties_.totalGlobalMem, OutOfMemory, "cuda:", device_, ": out of memory allocating ", bytes,
                " bytes: more than the device's ", properties_.totalGlobalMem, " bytes");
  DeviceGuard guard(device_);
  void* ptr = nullptr;
  cudaError_t status = cudaMallocAsync(&ptr, bytes, stream);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    // Cached blocks may be enough once returned to the driver: wait, trim, retry once.
    FERRITE_CUDA_CHECK(cudaDeviceSynchronize());
    FERRITE_CUDA_CHECK(cudaMemPoolTrimTo(pool_, 0));
    status = cudaMallocAsync(&ptr, bytes, stream);
  }
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    const MemoryStats s = stats();
    FERRITE_THROW(OutOfMemory, "cuda:", device_, ": out of memory allocating ", bytes, " bytes (in use ",
                  s.in_use_bytes, ", reserved ", s.reserved_bytes, ", peak ", s.peak_bytes, ", ", s.live_allocations,
                  " live allocations; device has ", free_bytes, " of ", total_bytes, " bytes free)");
  }
  FERRITE_CUDA_CHECK(status);
  const auto signed_bytes = static_cast<std::int64_t>(bytes);
  const std::int64_t now = in_use_.fetch_add(signed_bytes) + signed_bytes;
  for (std::int64_t peak = peak_.load(); now > peak && !peak_.compare_exchange_weak(peak, now);) {
  }
  allocations_.fetch_add(1);
  live_.fetch_add(1);
  return ptr;
}

void DeviceContext::release(void* ptr, std::size_t bytes, cudaStream_t stream) noexcept {
  if (ptr == nullptr) return;
  int previous = -1;
  cudaGetDevice(&previous);
  if (previous != device_) cudaSetDevice(device_);
  // Stream-ordered: the block is reusable once the work queued on `stream` has run.
  if (cudaFreeAsync(ptr, stream) != cudaSuccess) cudaGetLastError();
  if (previous != device_ && previous >= 0) cudaSetDevice(previous);
  in_use_.fetch_sub(static_cast<std::int64_t>(bytes));
  live_.fetch_sub(1);
}

MemoryStats DeviceContext::stats() const {
  MemoryStats s;
  s.in_use_bytes = in_use_.load();
  s.peak_bytes = peak_.load();
  s.allocations = allocations_.load();
  s.live_allocations = live_.load();
  std::uint64_t reserved = 0;
  if (cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess)
    s.reserved_bytes = static_cast<std::int64_t>(reserved);
  else
    cudaGetLastError();
  return s;
}

void DeviceContext::empty_cache() {
  DeviceGuard guard(device_);
  FERRITE_CUDA_CHECK(cudaDeviceSynchronize());
  FERRITE_CUDA_CHECK(cudaMemPoolTrimTo(pool_, 0));
}

std::array<StagingChunk, DeviceContext::kStagingChunks>& DeviceContext::staging() {
  std::call_once(staging_once_, [&] {
    DeviceGuard guard(device_);
    for (StagingChunk& chunk : staging_) {
      FERRITE_CUDA_CHECK(cudaHostAlloc(&chunk.host, kStagingChunkBytes, cudaHostAllocPortable));
      FERRITE_CUDA_CHECK(cudaEventCreateWithFlags(&chunk.done, cudaEventDisableTiming));
    }
  });
  return staging_;
}

}  // namespace ferrite::cuda
