// Which (op, dtype) pairs the elementwise families implement. Both backends implement the
// same set today, so they share the answer; a backend that diverges writes its own.
#pragma once

#include "ferrite/backend.hpp"
#include "ferrite/backend_families/matmul_ops.hpp"
#include "ferrite/backend_families/reduction_ops.hpp"
#include "ferrite/backend_families/shape_ops.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/op.hpp"

namespace ferrite::detail {

constexpr bool elementwise_supported(Op op, DType dtype) {
  switch (op_family(op)) {
    default:
      return false;
    case OpFamily::Memory:
      return op != Op::Arange || (is_numeric(dtype) && !is_complex(dtype));
    case OpFamily::Cast:
      return true;
    case OpFamily::Unary:
    case OpFamily::Binary:
      // Complex and Bool arithmetic belong to the rest of the elementwise family (issue #3).
      return is_numeric(dtype) && !is_complex(dtype);
  }
  return false;
}

/// Backend::supports for a backend whose elementwise group follows elementwise_supported:
/// the other groups ask their family object.
inline bool backend_supports(Backend& backend, Op op, DType dtype) {
  switch (op_group(op)) {
    case OpGroup::Elementwise:
      return elementwise_supported(op, dtype);
    case OpGroup::Reduction:
      return backend.reductions().supports(op, dtype);
    case OpGroup::Shape:
      return backend.shape_ops().supports(op, dtype);
    case OpGroup::Matmul:
      return backend.matmul_ops().supports(op, dtype);
  }
  return false;
}

}  // namespace ferrite::detail
