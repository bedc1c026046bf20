// Host <-> device copies through the device's pinned staging chunks.
#pragma once

#include <cstddef>

#include "cuda/runtime/device_context.hpp"

namespace ferrite::cuda {

/// Copies `bytes` from pageable host memory to device memory on `stream`. Returns once
/// `src` has been read (the last DMA may still be in flight, ordered on `stream`).
void upload(DeviceContext& context, const void* src, void* dst, std::size_t bytes, cudaStream_t stream);

/// Copies `bytes` of device memory to pageable host memory after the work queued on
/// `stream`. Returns when the data is in `dst`.
void download(DeviceContext& context, const void* src, void* dst, std::size_t bytes, cudaStream_t stream);

}  // namespace ferrite::cuda
