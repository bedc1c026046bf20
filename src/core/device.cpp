#include "ferrite/device.hpp"

namespace ferrite {

std::string Device::str() const {
  // "cpu" alone only for the one host device: an error about Device{CPU, 1} must show the 1.
  if (is_cpu()) return index == 0 ? std::string("cpu") : "cpu:" + std::to_string(index);
  if (is_cuda()) return "cuda:" + std::to_string(index);
  return "device-kind-" + std::to_string(static_cast<int>(kind)) + ":" + std::to_string(index);
}

}  // namespace ferrite
