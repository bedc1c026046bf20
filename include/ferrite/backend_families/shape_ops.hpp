// The backend interface of the shape and indexing ops.
// A backend hands it out through Backend's accessor; each backend implements it in its
// own files (src/cpu/shape/, src/cuda/shape/). Like Backend, it receives validated, contiguous
// Buffers from the front end and may only assert.
#pragma once

#include "ferrite/buffer.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/op.hpp"

namespace ferrite {

class ShapeOps {
 public:
  virtual ~ShapeOps() = default;
  /// Whether `op` (of this group) runs for `dtype` on this backend.
  virtual bool supports(Op op, DType dtype) const = 0;
};

}  // namespace ferrite
