#include "ferrite/device.hpp"

namespace ferrite {

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index);
}

}  // namespace ferrite
