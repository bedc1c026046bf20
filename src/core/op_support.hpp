// Which (op, dtype) pairs the elementwise families implement. Both backends implement the
// same set today, so they share the answer; a backend that diverges writes its own.
#pragma once

#include "ferrite/backend_families/matmul_ops.hpp"
#include "ferrite/backend_families/reduction_ops.hpp"
#include "ferrite/backend_families/shape_ops.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/op.hpp"

namespace ferrite::detail {

constexpr bool is_real_numeric(DType dtype) { return is_numeric(dtype) && !is_complex(dtype); }

constexpr bool elementwise_supported(Op op, DType dtype) {
  switch (op) {
    case Op::Fill:
    case Op::Copy:
    case Op::Transfer:
    case Op::Cast:
    case Op::Where:
    case Op::MaskedFill: return true;  // data movement: every dtype
    case Op::Arange: return is_real_numeric(dtype);
    // Arithmetic on every real numeric dtype (not Bool, not complex).
    case Op::Neg:
    case Op::Abs:
    case Op::Relu:
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Maximum:
    case Op::Minimum: return is_real_numeric(dtype);
    // Integer-only arithmetic.
    case Op::FloorDivide:
    case Op::Remainder:
    case Op::ShiftLeft:
    case Op::ShiftRight: return is_integral(dtype);
    // Bitwise ops on integers and Bool (as torch).
    case Op::BitwiseNot:
    case Op::BitwiseAnd:
    case Op::BitwiseOr:
    case Op::BitwiseXor: return is_integral(dtype) || dtype == DType::Bool;
    case Op::LogicalNot:
    case Op::LogicalAnd:
    case Op::LogicalOr:
    case Op::LogicalXor: return dtype == DType::Bool;
    // Comparisons take Bool operands too.
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge: return is_real_numeric(dtype) || dtype == DType::Bool;
    default: break;
  }
  // Everything else of the group is floating point only: transcendental unary ops,
  // activations and their backward, clamp/scale/pow, has_inf_nan.
  if (op_group(op) != OpGroup::Elementwise) return false;
  return is_floating(dtype);
}

/// The matrix products: the float dtypes (cuBLASLt on the GPU, Eigen on the CPU). Both
/// backends' MatmulOps answer with this.
constexpr bool matmul_supported(Op op, DType dtype) {
  return op_family(op) == OpFamily::Matmul &&
         (dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 || dtype == DType::BF16);
}

/// Mixed precision: whether `op` on `in` operands may write an `out`-dtype result other
/// than `in` (F16/BF16 in, F32 out for add/sub/mul/div/relu/sigmoid, as the seed's
/// *_bf16_f32 ops).
constexpr bool mixed_precision_supported(Op op, DType in, DType out) {
  if (!is_half_precision(in) || out != DType::F32) return false;
  switch (op) {
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Relu:
    case Op::Sigmoid: return true;
    default: return false;
  }
}

/// Backend::supports for a backend whose elementwise group follows elementwise_supported:
/// the other groups ask their family objects.
inline bool backend_supports(Op op, DType dtype, const ReductionOps& reductions, const ShapeOps& shape_ops,
                             const MatmulOps& matmul_ops) {
  switch (op_group(op)) {
    case OpGroup::Elementwise:
      return elementwise_supported(op, dtype);
    case OpGroup::Reduction:
      return reductions.supports(op, dtype);
    case OpGroup::Shape:
      return shape_ops.supports(op, dtype);
    case OpGroup::Matmul:
      return matmul_ops.supports(op, dtype);
    case OpGroup::Linalg:  // answered by the backend's LinalgOps before it gets here
    case OpGroup::Fft:  // answered by the backend's FftOps before it gets here
      return false;
  }
  return false;
}

}  // namespace ferrite::detail
