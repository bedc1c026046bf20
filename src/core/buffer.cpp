#include "ferrite/buffer.hpp"

#include <string>
#include <utility>

#include "ferrite/error.hpp"

namespace ferrite {

Storage::Storage(void* data, std::size_t bytes, Device device, Deleter deleter)
    : data_(data), bytes_(bytes), device_(device), deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (deleter_) deleter_(data_, bytes_);
}

Buffer::Buffer(std::shared_ptr<Storage> storage, DType dtype, std::int64_t numel)
    : storage_(std::move(storage)), dtype_(dtype), numel_(numel) {
  // Every op trusts a Buffer's numel and dtype, so a public constructor must not let them
  // promise more memory than the storage has (ops would read and write past its end).
  FERRITE_CHECK(is_valid_dtype(dtype), InvalidArgument, "Buffer: dtype value ", static_cast<int>(dtype),
                " is not a DType");
  FERRITE_CHECK(numel >= 0, InvalidArgument, "Buffer: negative numel ", numel);
  const std::size_t have = storage_ ? storage_->bytes() : 0;
  FERRITE_CHECK(static_cast<std::uint64_t>(numel) <= have / dtype_size(dtype), InvalidArgument, "Buffer: ", numel,
                " elements of ", dtype_name(dtype), " do not fit in a storage of ", have, " bytes (room for ",
                have / dtype_size(dtype), ")");
}

}  // namespace ferrite
