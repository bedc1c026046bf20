// Host memory that an op needs for itself (widened copies, accumulators, index lists): one
// helper, so that a request the host cannot satisfy is Error(OutOfMemory) naming the op and
// the size, never a std::bad_alloc or std::length_error leaving the library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <vector>

#include "ferrite/error.hpp"

namespace ferrite::detail {

[[noreturn]] void throw_host_out_of_memory(const char* op, std::int64_t count, std::size_t element_size);

/// The host's physical memory in bytes (read once). A request for more can never be backed:
/// where the kernel overcommits (vm.overcommit_memory = 1, common on GPU machines) malloc
/// still succeeds and the first pass over the pages runs until the OOM killer ends the
/// process (an 8 TiB fftfreq or chunk index list hung the CUDA API fuzz), so every host
/// allocation of the library refuses such a size up front, whatever the kernel's policy.
std::uint64_t host_physical_memory_bytes();

/// std::vector<T>(count, value), or Error(OutOfMemory) when the host cannot provide it.
template <class T>
std::vector<T> host_scratch(std::int64_t count, const char* op, const T& value = T()) {
  try {
    if (count < 0 || static_cast<std::uint64_t>(count) > std::vector<T>().max_size() ||
        static_cast<std::uint64_t>(count) > host_physical_memory_bytes() / sizeof(T))
      throw std::length_error("size");
    return std::vector<T>(static_cast<std::size_t>(count), value);
  } catch (const std::bad_alloc&) {
    throw_host_out_of_memory(op, count, sizeof(T));
  } catch (const std::length_error&) {
    throw_host_out_of_memory(op, count, sizeof(T));
  }
}

}  // namespace ferrite::detail
