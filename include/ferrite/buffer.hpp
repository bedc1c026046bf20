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

/// Shared storage plus the dtype tag and the logical element count. Copying a Buffer
/// shares the storage; the dtype tag is authoritative (never reinterpreted).
class Buffer {
 public:
  Buffer() = default;
  /// InvalidArgument when `dtype` is not a DType, numel < 0, or numel elements do not fit in
  /// the storage's bytes (every op trusts numel).
  Buffer(std::shared_ptr<Storage> storage, DType dtype, std::int64_t numel);

  bool defined() const { return storage_ != nullptr; }
  void* data() const { return storage_ ? storage_->data() : nullptr; }
  template <class T>
  T* data_as() const {
    return static_cast<T*>(data());
  }
  DType dtype() const { return dtype_; }
  std::int64_t numel() const { return numel_; }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel_) * dtype_size(dtype_); }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

 private:
  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::F32;
  std::int64_t numel_ = 0;
};

}  // namespace ferrite
