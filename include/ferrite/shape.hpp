// Shape and indexing ops (issue #5).
// Validation happens here (src/frontend/shape*.cpp); backends receive checked Buffers.
#pragma once

#include "ferrite/tensor.hpp"

namespace ferrite {}  // namespace ferrite
