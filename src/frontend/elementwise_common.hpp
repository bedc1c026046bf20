// Helpers shared by the elementwise front-end files.
#pragma once

#include "ferrite/backend.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite::frontend {

// op_name() views a string literal, so its data() is NUL-terminated: no copy per call.
inline const char* name_of(Op op) { return op_name(op).data(); }

/// Unsupported unless `out` is `in` or a mixed-precision result `op` offers (F16/BF16 -> F32).
void check_out_dtype(Op op, DType in, DType out);

/// A unary op on x: validated, allocated (with dtype `out`), run.
Tensor unary_op(Op op, const Tensor& x, const UnaryParams& params, DType out);
inline Tensor unary_op(Op op, const Tensor& x, const UnaryParams& params = {}) {
  return unary_op(op, x, params, x.defined() ? x.dtype() : DType::F32);
}

}  // namespace ferrite::frontend
