// Where the front end finds the RandomOps and TrainingOps of a device (issue #17).
//
// These two families are reached through this lookup rather than through Backend
// accessors (random_ops(), training_ops()) so that adding them did not touch
// ferrite/backend.hpp, which every translation unit includes (a change there rebuilds the
// whole CUDA library on the 2-core builders). Moving them onto Backend later is mechanical:
// the factories below become the backends' members.
#pragma once

#include <memory>

#include "ferrite/backend_families/random_ops.hpp"
#include "ferrite/backend_families/training_ops.hpp"
#include "ferrite/device.hpp"

namespace ferrite {

namespace cpu {
std::unique_ptr<RandomOps> make_cpu_random_ops();
std::unique_ptr<TrainingOps> make_cpu_training_ops();
}  // namespace cpu
namespace cuda {
std::unique_ptr<RandomOps> make_cuda_random_ops();
std::unique_ptr<TrainingOps> make_cuda_training_ops();
}  // namespace cuda

namespace detail {
/// The family objects of `device`'s backend. The device is validated first (backend(device):
/// Unsupported without a backend, InvalidArgument for a missing index).
RandomOps& random_ops(Device device);
TrainingOps& training_ops(Device device);
}  // namespace detail

}  // namespace ferrite
