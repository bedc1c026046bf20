#include "ferrite/buffer.hpp"

#include <utility>

namespace ferrite {

Storage::Storage(void* data, std::size_t bytes, Device device, Deleter deleter)
    : data_(data), bytes_(bytes), device_(device), deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (deleter_) deleter_(data_, bytes_);
}

Buffer::Buffer(std::shared_ptr<Storage> storage, DType dtype, std::int64_t numel)
    : storage_(std::move(storage)), dtype_(dtype), numel_(numel) {}

}  // namespace ferrite
