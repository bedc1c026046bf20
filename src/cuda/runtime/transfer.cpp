// Staged transfers. A DMA engine only reads page-locked memory at full speed, so each
// transfer is cut into chunks that go through a few pinned buffers: while one chunk is on
// the bus, the CPU (all cores, since one core's memcpy is slower than the bus) fills or
// drains the next. No transfer needs a pinned block of its own size.
#include "cuda/runtime/transfer.hpp"

#include <algorithm>
#include <cstring>

#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda {
namespace {

constexpr std::size_t kParallelPiece = std::size_t(1) << 20;

void parallel_memcpy(void* dst, const void* src, std::size_t bytes) {
  const auto pieces = static_cast<std::int64_t>((bytes + kParallelPiece - 1) / kParallelPiece);
#pragma omp parallel for schedule(static) if (pieces >= 4)
  for (std::int64_t p = 0; p < pieces; ++p) {
    const std::size_t offset = static_cast<std::size_t>(p) * kParallelPiece;
    std::memcpy(static_cast<char*>(dst) + offset, static_cast<const char*>(src) + offset,
                std::min(kParallelPiece, bytes - offset));
  }
}

}  // namespace

void upload(DeviceContext& context, const void* src, void* dst, std::size_t bytes, cudaStream_t stream) {
  DeviceGuard guard(context.device());
  std::lock_guard lock(context.staging_mutex());
  auto& chunks = context.staging();
  const std::size_t chunk_bytes = DeviceContext::kStagingChunkBytes;
  for (std::size_t offset = 0, i = 0; offset < bytes; offset += chunk_bytes, ++i) {
    const std::size_t n = std::min(chunk_bytes, bytes - offset);
    StagingChunk& chunk = chunks[i % chunks.size()];
    FERRITE_CUDA_CHECK(cudaEventSynchronize(chunk.done));  // its previous DMA has finished
    parallel_memcpy(chunk.host, static_cast<const char*>(src) + offset, n);
    FERRITE_CUDA_CHECK(
        cudaMemcpyAsync(static_cast<char*>(dst) + offset, chunk.host, n, cudaMemcpyHostToDevice, stream));
    FERRITE_CUDA_CHECK(cudaEventRecord(chunk.done, stream));
  }
}

void download(DeviceContext& context, const void* src, void* dst, std::size_t bytes, cudaStream_t stream) {
  DeviceGuard guard(context.device());
  std::lock_guard lock(context.staging_mutex());
  auto& chunks = context.staging();
  const std::size_t chunk_bytes = DeviceContext::kStagingChunkBytes;
  const std::size_t count = (bytes + chunk_bytes - 1) / chunk_bytes;
  auto issue = [&](std::size_t i) {
    const std::size_t offset = i * chunk_bytes;
    StagingChunk& chunk = chunks[i % chunks.size()];
    FERRITE_CUDA_CHECK(cudaMemcpyAsync(chunk.host, static_cast<const char*>(src) + offset,
                                       std::min(chunk_bytes, bytes - offset), cudaMemcpyDeviceToHost, stream));
    FERRITE_CUDA_CHECK(cudaEventRecord(chunk.done, stream));
  };
  // Keep every staging chunk busy: the bus fills chunk i+K while the CPU drains chunk i.
  for (std::size_t i = 0; i < std::min(count, chunks.size()); ++i) issue(i);
  for (std::size_t i = 0; i < count; ++i) {
    StagingChunk& chunk = chunks[i % chunks.size()];
    FERRITE_CUDA_CHECK(cudaEventSynchronize(chunk.done));
    const std::size_t offset = i * chunk_bytes;
    parallel_memcpy(static_cast<char*>(dst) + offset, chunk.host, std::min(chunk_bytes, bytes - offset));
    if (i + chunks.size() < count) issue(i + chunks.size());
  }
}

}  // namespace ferrite::cuda
