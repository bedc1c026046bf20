// Reductions, scans, softmax, log-softmax, layer norm and RMS norm (issue #4).
// Validation happens here (src/frontend/reduction*.cpp); backends receive checked Buffers.
#pragma once

#include "ferrite/tensor.hpp"

namespace ferrite {}  // namespace ferrite
