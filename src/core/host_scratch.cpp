#include "core/host_scratch.hpp"

namespace ferrite::detail {

void throw_host_out_of_memory(const char* op, std::int64_t count, std::size_t element_size) {
  const long double bytes = static_cast<long double>(count) * static_cast<long double>(element_size);
  FERRITE_THROW(OutOfMemory, op, ": out of host memory for a scratch buffer of ", count, " elements of ",
                element_size, " bytes (", static_cast<double>(bytes / (1024.0L * 1024.0L * 1024.0L)), " GiB)");
}

}  // namespace ferrite::detail
