// The per-device-kind RandomOps and TrainingOps (src/core/training_families.hpp), created
// on first use and never destroyed (buffers freed during static destruction may still run).
#include "core/training_families.hpp"

#include "ferrite/backend.hpp"
#include "ferrite/config.hpp"
#include "ferrite/error.hpp"

namespace ferrite::detail {

RandomOps& random_ops(Device device) {
  backend(device);
  if (device.is_cpu()) {
    static RandomOps* cpu = cpu::make_cpu_random_ops().release();
    return *cpu;
  }
#if FERRITE_WITH_CUDA
  static RandomOps* gpu = cuda::make_cuda_random_ops().release();
  return *gpu;
#else
  FERRITE_THROW(Unsupported, "random: no random ops for ", device.str());
#endif
}

TrainingOps& training_ops(Device device) {
  backend(device);
  if (device.is_cpu()) {
    static TrainingOps* cpu = cpu::make_cpu_training_ops().release();
    return *cpu;
  }
#if FERRITE_WITH_CUDA
  static TrainingOps* gpu = cuda::make_cuda_training_ops().release();
  return *gpu;
#else
  FERRITE_THROW(Unsupported, "training ops: none for ", device.str());
#endif
}

}  // namespace ferrite::detail
