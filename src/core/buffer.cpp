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

Buffer::Buffer(std::shared_ptr<Storage> storage, DType dtype, std::int64_t numel, std::int64_t offset)
    : storage_(std::move(storage)), dtype_(dtype), numel_(numel), offset_(offset) {
  // Every op trusts a Buffer's numel and dtype, so a public constructor must not let them
  // promise more memory than the storage has (ops would read and write past its end).
  FERRITE_CHECK(is_valid_dtype(dtype), InvalidArgument, "Buffer: dtype value ", static_cast<int>(dtype),
                " is not a DType");
  FERRITE_CHECK(numel >= 0, InvalidArgument, "Buffer: negative numel ", numel);
  FERRITE_CHECK(offset >= 0, InvalidArgument, "Buffer: negative offset ", offset);
  const std::size_t have = storage_ ? storage_->bytes() : 0;
  const std::uint64_t room = have / dtype_size(dtype);
  FERRITE_CHECK(static_cast<std::uint64_t>(offset) <= room && static_cast<std::uint64_t>(numel) <= room - static_cast<std::uint64_t>(offset),
                InvalidArgument, "Buffer: ", numel, " elements of ", dtype_name(dtype), " do not fit in a storage of ",
                have, " bytes (room for ", room, ")", offset ? " after an offset of " + std::to_string(offset) : "");
}

}  // namespace ferrite
