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

/// std::vector<T>(count, value), or Error(OutOfMemory) when the host cannot provide it.
template <class T>
std::vector<T> host_scratch(std::int64_t count, const char* op, const T& value = T()) {
  try {
    if (count < 0 || static_cast<std::uint64_t>(count) > std::vector<T>().max_size()) throw std::length_error("size");
    return std::vector<T>(static_cast<std::size_t>(count), value);
  } catch (const std::bad_alloc&) {
    throw_host_out_of_memory(op, count, sizeof(T));
  } catch (const std::length_error&) {
    throw_host_out_of_memory(op, count, sizeof(T));
  }
}

}  // namespace ferrite::detail
