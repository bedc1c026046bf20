// The DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html), versions 0.x (legacy
// capsule "dltensor") and 1.x (capsule "dltensor_versioned"): the C structs a producer and a
// consumer share. Declared here from the specification so the build needs no extra header;
// the layouts are fixed by the standard.
#pragma once

#include <cstdint>

namespace ferrite::py::dlpack {

enum DeviceType : std::int32_t {
  kCPU = 1,
  kCUDA = 2,
  kCUDAHost = 3,  // pinned host memory: readable by the CPU
  kCUDAManaged = 13,
};

enum TypeCode : std::uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kOpaque = 3, kBfloat = 4, kComplex = 5, kBool = 6 };

struct Device {
  std::int32_t device_type;
  std::int32_t device_id;
};

struct DataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  std::int32_t ndim;
  DataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; NULL means row-major
  std::uint64_t byte_offset;
};

struct ManagedTensor {  // legacy (DLPack < 1.0)
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

struct Version {
  std::uint32_t major;
  std::uint32_t minor;
};

inline constexpr std::uint64_t kFlagReadOnly = 1u << 0;
inline constexpr std::uint64_t kFlagIsCopied = 1u << 1;

struct ManagedTensorVersioned {  // DLPack >= 1.0
  Version version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  std::uint64_t flags;
  Tensor dl_tensor;
};

inline constexpr std::uint32_t kMajorVersion = 1;
inline constexpr std::uint32_t kMinorVersion = 0;

}  // namespace ferrite::py::dlpack
