// Where a tensor lives: the host (one CPU device) or one of the machine's GPUs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace ferrite {

enum class DeviceKind : std::uint8_t { CPU, CUDA };
inline constexpr int kNumDeviceKinds = 2;

struct Device {
  DeviceKind kind = DeviceKind::CPU;
  int index = 0;

  static constexpr Device cpu() { return {DeviceKind::CPU, 0}; }
  static constexpr Device cuda(int i = 0) { return {DeviceKind::CUDA, i}; }

  constexpr bool is_cpu() const { return kind == DeviceKind::CPU; }
  constexpr bool is_cuda() const { return kind == DeviceKind::CUDA; }
  friend constexpr bool operator==(Device, Device) = default;

  /// "cpu" (device 0), "cpu:1", "cuda:1"; an out-of-range kind prints as "device-kind-7:0".
  std::string str() const;
};

}  // namespace ferrite
