// Which (op, dtype) pairs the elementwise families implement. Both backends implement the
// same set today, so they share the answer; a backend that diverges writes its own.
#pragma once

#include "ferrite/dtype.hpp"
#include "ferrite/op.hpp"

namespace ferrite::detail {

constexpr bool elementwise_supported(Op op, DType dtype) {
  switch (op_family(op)) {
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

}  // namespace ferrite::detail
