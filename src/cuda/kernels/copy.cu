// Device-to-device copy as a streaming kernel: 16-byte chunks through the elementwise
// engine, which keeps more bytes in flight than cudaMemcpyAsync's copy kernel.
#include "core/elementwise_functors.hpp"
#include "core/elementwise_layout.hpp"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/primitives/elementwise_engine.cuh"

namespace ferrite::cuda::kernels {
namespace {
struct alignas(16) Chunk16 {
  unsigned int word[4];
};
}  // namespace

void copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream) {
  const bool chunked = bytes % 16 == 0 && aligned_to(static_cast<const char*>(src), 16) &&
                       aligned_to(static_cast<char*>(dst), 16);
  if (!chunked) {
    FERRITE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const auto n = static_cast<std::int64_t>(bytes / 16);
  launch_elementwise<false>(detail::CastFn{}, contiguous_layout(n, 1), static_cast<Chunk16*>(dst), stream,
                            static_cast<const Chunk16*>(src));
}

}  // namespace ferrite::cuda::kernels
