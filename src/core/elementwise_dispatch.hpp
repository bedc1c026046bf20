// Dtype visitors over the subsets the elementwise ops take, and the Op -> runtime-functor
// codes. Visiting only a subset keeps a functor from being instantiated for a type it has
// no meaning for (exp of an int64, a shift of a float).
#pragma once

#include "core/dtype_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "ferrite/error.hpp"
#include "ferrite/op.hpp"

namespace ferrite::detail {

template <class F>
decltype(auto) visit_floating(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32: return f(TypeTag<float>{});
    case DType::F64: return f(TypeTag<double>{});
    case DType::F16: return f(TypeTag<Half>{});
    case DType::BF16: return f(TypeTag<BFloat16>{});
    default: FERRITE_THROW(Unsupported, "elementwise: ", dtype_name(dtype), " is not a floating dtype");
  }
}

/// Floating and integer dtypes (not Bool, not complex).
template <class F>
decltype(auto) visit_real(DType dtype, F&& f) {
  switch (dtype) {
    case DType::I32: return f(TypeTag<std::int32_t>{});
    case DType::I64: return f(TypeTag<std::int64_t>{});
    default: return visit_floating(dtype, static_cast<F&&>(f));
  }
}

/// I32, I64 and Bool: the operands of bitwise ops.
template <class F>
decltype(auto) visit_integer_or_bool(DType dtype, F&& f) {
  switch (dtype) {
    case DType::I32: return f(TypeTag<std::int32_t>{});
    case DType::I64: return f(TypeTag<std::int64_t>{});
    case DType::Bool: return f(TypeTag<bool>{});
    default: FERRITE_THROW(Unsupported, "elementwise: ", dtype_name(dtype), " is not an integer or Bool dtype");
  }
}

/// Raw storage of the given element size: where and masked_fill move bits, not values.
template <class F>
decltype(auto) visit_element_size(std::size_t bytes, F&& f) {
  switch (bytes) {
    case 1: return f(TypeTag<std::uint8_t>{});
    case 2: return f(TypeTag<std::uint16_t>{});
    case 4: return f(TypeTag<std::uint32_t>{});
    case 8: return f(TypeTag<std::uint64_t>{});
    case 16: return f(TypeTag<Complex<double>>{});
    default: FERRITE_THROW(Unsupported, "elementwise: no storage of ", bytes, " bytes");
  }
}

constexpr ArithmeticOp arithmetic_op_of(Op op) {
  switch (op) {
    case Op::Sub: return ArithmeticOp::Sub;
    case Op::Mul: return ArithmeticOp::Mul;
    case Op::Div: return ArithmeticOp::Div;
    default: return ArithmeticOp::Add;
  }
}

constexpr CompareOp compare_op_of(Op op) {
  switch (op) {
    case Op::Ne: return CompareOp::Ne;
    case Op::Lt: return CompareOp::Lt;
    case Op::Le: return CompareOp::Le;
    case Op::Gt: return CompareOp::Gt;
    case Op::Ge: return CompareOp::Ge;
    default: return CompareOp::Eq;
  }
}

/// The integer/Bool binary ops that IntegerFn runs; false for the others.
constexpr bool is_integer_fn_op(Op op) {
  switch (op) {
    case Op::FloorDivide:
    case Op::Remainder:
    case Op::BitwiseAnd:
    case Op::BitwiseOr:
    case Op::BitwiseXor:
    case Op::ShiftLeft:
    case Op::ShiftRight:
    case Op::LogicalAnd:
    case Op::LogicalOr:
    case Op::LogicalXor: return true;
    default: return false;
  }
}

/// IntegerFn for `op` on a storage type of `bytes` bytes.
constexpr IntegerFn integer_fn_of(Op op, std::size_t bytes) {
  IntegerOp code = IntegerOp::And;
  switch (op) {
    case Op::FloorDivide: code = IntegerOp::FloorDivide; break;
    case Op::Remainder: code = IntegerOp::Remainder; break;
    case Op::BitwiseOr:
    case Op::LogicalOr: code = IntegerOp::Or; break;
    case Op::BitwiseXor:
    case Op::LogicalXor: code = IntegerOp::Xor; break;
    case Op::ShiftLeft: code = IntegerOp::ShiftLeft; break;
    case Op::ShiftRight: code = IntegerOp::ShiftRight; break;
    default: code = IntegerOp::And; break;
  }
  return IntegerFn{code, static_cast<int>(8 * bytes)};
}

constexpr bool is_compare_op(Op op) { return op_family(op) == OpFamily::Compare; }

}  // namespace ferrite::detail
