// Storage and Buffer: the flat, contiguous, typed memory that backends work on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "ferrite/device.hpp"
#include "ferrite/dtype.hpp"

namespace ferrite {

/// One allocation on one device. Frees itself through its deleter (the allocator that
/// made it) when the last Buffer sharing it goes away.
class Storage {
 public:
  using Deleter = std::function<void(void* data, std::size_t bytes)>;

  Storage(void* data, std::size_t bytes, Device device, Deleter deleter);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  void* data_;
  std::size_t bytes_;
  Device device_;
  Deleter deleter_;
};

/// Shared storage plus the dtype tag, the logical element count and the element offset of
/// the first element in the storage: numel dense elements starting `offset` elements into
/// the storage. Copying a Buffer shares the storage; the dtype tag is authoritative (never
/// reinterpreted). Backends only ever see data() and numel(): a window into a larger
/// storage (a contiguous view) is as good as an allocation of its own.
class Buffer {
 public:
  Buffer() = default;
  /// InvalidArgument when `dtype` is not a DType, numel or offset < 0, or the elements
  /// [offset, offset + numel) do not fit in the storage's bytes (every op trusts numel).
  Buffer(std::shared_ptr<Storage> storage, DType dtype, std::int64_t numel, std::int64_t offset = 0);

  bool defined() const { return storage_ != nullptr; }
  void* data() const {
    return storage_ ? static_cast<char*>(storage_->data()) + static_cast<std::size_t>(offset_) * dtype_size(dtype_)
                    : nullptr;
  }
  template <class T>
  T* data_as() const {
    return static_cast<T*>(data());
  }
  DType dtype() const { return dtype_; }
  std::int64_t numel() const { return numel_; }
  /// Elements of dtype() between the storage's start and data().
  std::int64_t offset() const { return offset_; }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel_) * dtype_size(dtype_); }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

 private:
  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::F32;
  std::int64_t numel_ = 0;
  std::int64_t offset_ = 0;
};

}  // namespace ferrite
