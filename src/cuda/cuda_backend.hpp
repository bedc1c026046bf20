// The CUDA backend: every GPU of the machine, each with its own context (runtime/).
#pragma once

#include <memory>

#include "ferrite/backend.hpp"

namespace ferrite::cuda {

/// The CUDA backend when at least one GPU is usable, else null.
std::shared_ptr<Backend> make_cuda_backend_if_available();

}  // namespace ferrite::cuda
