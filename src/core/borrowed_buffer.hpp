// A Buffer over memory it does not own, for an op that hands its own scratch (or its caller's
// operands) to kernels that take Buffers: the Storage's deleter does nothing, so the memory stays
// its owner's, and the Buffer must not outlive it (it never leaves the call that makes it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ferrite/buffer.hpp"

namespace ferrite::detail {

/// `numel` elements of `dtype` at `data` on `device`, as a Buffer that frees nothing.
inline Buffer borrowed_buffer(const void* data, DType dtype, std::int64_t numel, Device device) {
  return Buffer(std::make_shared<Storage>(const_cast<void*>(data), static_cast<std::size_t>(numel) * dtype_size(dtype),
                                          device, [](void*, std::size_t) {}),
                dtype, numel);
}

}  // namespace ferrite::detail
