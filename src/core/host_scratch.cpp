#include "core/host_scratch.hpp"

#include <unistd.h>

#include <limits>

namespace ferrite::detail {

void throw_host_out_of_memory(const char* op, std::int64_t count, std::size_t element_size) {
  const long double bytes = static_cast<long double>(count) * static_cast<long double>(element_size);
  FERRITE_THROW(OutOfMemory, op, ": out of host memory for a scratch buffer of ", count, " elements of ",
                element_size, " bytes (", static_cast<double>(bytes / (1024.0L * 1024.0L * 1024.0L)), " GiB)");
}

std::uint64_t host_physical_memory_bytes() {
  static const std::uint64_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    // Unknown: no bound of ours (the allocation itself then decides).
    if (pages <= 0 || page <= 0) return std::numeric_limits<std::uint64_t>::max();
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  }();
  return bytes;
}

}  // namespace ferrite::detail
