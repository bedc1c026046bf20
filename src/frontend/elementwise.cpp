// Front end of the binary elementwise ops (arithmetic, integer, logical, compare):
// validate, allocate, hand a broadcast layout to the backend.
#include "ferrite/elementwise.hpp"

#include "core/elementwise_layout.hpp"
#include "core/op_support.hpp"
#include "frontend/checks.hpp"
#include "frontend/elementwise_common.hpp"
#include "frontend/strided.hpp"

namespace ferrite {
namespace frontend {

void check_out_dtype(Op op, DType in, DType out) {
  FERRITE_CHECK(out == in || detail::mixed_precision_supported(op, in, out), Unsupported, name_of(op),
                ": output dtype ", dtype_name(out), " for ", dtype_name(in),
                " operands is not supported (mixed precision is F16/BF16 in, F32 out, for add, sub, mul, div, "
                "relu and sigmoid)");
}

}  // namespace frontend

namespace {

using frontend::name_of;

Shape checked_binary_shape(Op op, const Tensor& a, const Tensor& b) {
  const char* name = name_of(op);
  frontend::check_defined(name, {&a, &b});
  frontend::check_same_device(name, {&a, &b});
  frontend::check_same_dtype(name, {&a, &b});
  Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  frontend::check_supported(op, a.dtype(), a.device());
  return shape;
}

// `out` is contiguous; a and b are read through their own strides (views cost no copy).
void run_binary(Op op, const Tensor& a_in, const Tensor& b_in, const Tensor& out) {
  if (out.numel() == 0) return;
  Tensor a = a_in, b = b_in;
  if (!a.is_contiguous() || !b.is_contiguous()) {
    const std::vector<Tensor> operands = frontend::elementwise_operands(out.shape(), {&a_in, &b_in}, name_of(op));
    a = operands[0];
    b = operands[1];
  }
  const ElementwiseLayout layout = make_strided_layout(out.shape(), {&a, &b}, name_of(op));
  // out's own storage window at any alignment (buffer() would copy an unaligned view, and the
  // writes would land in the copy).
  backend(out.device()).binary(op, frontend::strided_buffer(a), frontend::strided_buffer(b),
                               frontend::strided_buffer(out), layout);
}

/// `out_dtype`: the operands' dtype, Bool for comparisons, F32 for mixed precision.
Tensor binary(Op op, const Tensor& a, const Tensor& b, std::optional<DType> out_dtype = {}) {
  const Shape shape = checked_binary_shape(op, a, b);
  const DType out = out_dtype ? *out_dtype : (op_family(op) == OpFamily::Compare ? DType::Bool : a.dtype());
  if (op_family(op) != OpFamily::Compare) frontend::check_out_dtype(op, a.dtype(), out);
  // Two operands with one transposed or permuted layout (and no broadcasting): computed in
  // memory order, the result taking that layout, as PyTorch does.
  if (a.shape() == shape && b.shape() == shape && a.strides() == b.strides()) {
    if (const auto order = frontend::memory_order(a)) {
      const Tensor result = frontend::allocate(a.permute(*order).shape(), out, a.device());
      run_binary(op, a.permute(*order), b.permute(*order), result);
      return result.permute(frontend::inverse_permutation(*order));
    }
  }
  Tensor result = frontend::allocate(shape, out, a.device());
  run_binary(op, a, b, result);
  return result;
}

const Tensor& binary_out(Op op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const Shape shape = checked_binary_shape(op, a, b);
  const char* name = name_of(op);
  frontend::check_defined(name, {&out});
  FERRITE_CHECK(out.device() == a.device(), DeviceMismatch, name, ": out is ", out.description(),
                " but the operands are on ", a.device().str());
  FERRITE_CHECK(out.dtype() == a.dtype(), DTypeMismatch, name, ": out is ", out.description(),
                ", expected dtype ", dtype_name(a.dtype()), " (operands ", a.description(), ", ", b.description(), ")");
  FERRITE_CHECK(out.shape() == shape, ShapeMismatch, name, ": out is ", out.description(), ", expected shape ",
                shape_str(shape), " (operands ", a.description(), ", ", b.description(), ")");
  frontend::check_writable(name, out);
  // Each output element reads only the operand elements of its own index, so out may be an
  // operand itself (a += b); any other overlap, or a strided out, goes through a dense result.
  const auto same_as = [&](const Tensor& t) {
    return t.storage() == out.storage() && t.storage_offset() == out.storage_offset() && t.shape() == out.shape() &&
           t.strides() == out.strides();
  };
  const bool safe = (same_as(a) || !frontend::may_overlap(a, out)) && (same_as(b) || !frontend::may_overlap(b, out));
  if (out.is_contiguous() && safe) {
    run_binary(op, a, b, out);
  } else if (const auto order = frontend::memory_order(out); order && safe) {
    // A transposed or permuted out (x.t().mul_(2)): every operand permuted to out's memory
    // order makes out contiguous, so the result is written in place at full speed.
    run_binary(op, a.expand(shape).permute(*order), b.expand(shape).permute(*order), out.permute(*order));
  } else {
    const Tensor dense = frontend::allocate(shape, out.dtype(), out.device());
    run_binary(op, a, b, dense);
    frontend::copy_elements(dense, out);
  }
  return out;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) { return binary(Op::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(Op::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(Op::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(Op::Div, a, b); }
Tensor add(const Tensor& a, const Tensor& b, DType out) { return binary(Op::Add, a, b, out); }
Tensor sub(const Tensor& a, const Tensor& b, DType out) { return binary(Op::Sub, a, b, out); }
Tensor mul(const Tensor& a, const Tensor& b, DType out) { return binary(Op::Mul, a, b, out); }
Tensor div(const Tensor& a, const Tensor& b, DType out) { return binary(Op::Div, a, b, out); }

const Tensor& add_out(const Tensor& a, const Tensor& b, const Tensor& out) { return binary_out(Op::Add, a, b, out); }
const Tensor& sub_out(const Tensor& a, const Tensor& b, const Tensor& out) { return binary_out(Op::Sub, a, b, out); }
const Tensor& mul_out(const Tensor& a, const Tensor& b, const Tensor& out) { return binary_out(Op::Mul, a, b, out); }
const Tensor& div_out(const Tensor& a, const Tensor& b, const Tensor& out) { return binary_out(Op::Div, a, b, out); }

Tensor maximum(const Tensor& a, const Tensor& b) { return binary(Op::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(Op::Minimum, a, b); }

Tensor floor_divide(const Tensor& a, const Tensor& b) { return binary(Op::FloorDivide, a, b); }
Tensor remainder(const Tensor& a, const Tensor& b) { return binary(Op::Remainder, a, b); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return binary(Op::BitwiseAnd, a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return binary(Op::BitwiseOr, a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return binary(Op::BitwiseXor, a, b); }
Tensor shift_left(const Tensor& a, const Tensor& counts) { return binary(Op::ShiftLeft, a, counts); }
Tensor shift_right(const Tensor& a, const Tensor& counts) { return binary(Op::ShiftRight, a, counts); }

Tensor logical_and(const Tensor& a, const Tensor& b) { return binary(Op::LogicalAnd, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return binary(Op::LogicalOr, a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return binary(Op::LogicalXor, a, b); }

Tensor eq(const Tensor& a, const Tensor& b) { return binary(Op::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return binary(Op::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return binary(Op::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return binary(Op::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return binary(Op::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return binary(Op::Ge, a, b); }

}  // namespace ferrite
