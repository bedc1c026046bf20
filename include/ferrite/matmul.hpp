// Matrix products: matmul, bmm, dot, mv, vm (issue #6).
// Validation happens here (src/frontend/matmul*.cpp); backends receive checked Buffers.
#pragma once

#include "ferrite/tensor.hpp"

namespace ferrite {}  // namespace ferrite
