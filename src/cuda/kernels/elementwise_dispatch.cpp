// Routes elementwise requests to the translation unit that instantiates their dtypes.
#include "core/activation_functors.hpp"
#include "core/elementwise_dispatch.hpp"
#include "cuda/kernels/elementwise.cuh"

namespace ferrite::cuda::kernels {

void cast(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout, cudaStream_t stream) {
  switch (x.dtype()) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: return cast_from_single_precision(x, out, layout, stream);
    case DType::F64: return cast_from_double_precision(x, out, layout, stream);
    case DType::I32:
    case DType::I64:
    case DType::Bool: return cast_from_integer(x, out, layout, stream);
    case DType::C64:
    case DType::C128: return cast_from_complex(x, out, layout, stream);
  }
}

void unary(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params, const ElementwiseLayout& layout,
           cudaStream_t stream) {
  if (out.dtype() != x.dtype()) return unary_mixed(op, x, out, layout, stream);
  switch (op) {
    case Op::Neg:
    case Op::Abs:
    case Op::Relu:
    case Op::BitwiseNot:
    case Op::LogicalNot: return unary_basic(op, x, out, layout, stream);
    default: break;
  }
  const bool f64 = x.dtype() == DType::F64;
  if (detail::is_activation(op))
    return f64 ? activation_double(op, x, out, params, layout, stream)
               : activation_single(op, x, out, params, layout, stream);
  return f64 ? unary_math_double(op, x, out, params, layout, stream)
             : unary_math_single(op, x, out, params, layout, stream);
}

void unary_backward(Op op, const Buffer& grad, const Buffer& x, const Buffer& out, const UnaryParams& params,
                    const ElementwiseLayout& layout, cudaStream_t stream) {
  if (x.dtype() == DType::F64) return activation_backward_double(op, grad, x, out, params, layout, stream);
  return activation_backward_single(op, grad, x, out, params, layout, stream);
}

void binary(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
            cudaStream_t stream) {
  if (detail::is_compare_op(op)) {
    if (is_floating(a.dtype())) return compare_floating(op, a, b, out, layout, stream);
    return compare_integer(op, a, b, out, layout, stream);
  }
  if (detail::is_integer_fn_op(op)) return binary_integer_ops(op, a, b, out, layout, stream);
  if (op == Op::Maximum || op == Op::Minimum) return binary_minmax(op, a, b, out, layout, stream);
  if (out.dtype() != a.dtype()) return binary_mixed(op, a, b, out, layout, stream);
  if (is_floating(a.dtype())) return binary_floating(op, a, b, out, layout, stream);
  return binary_integer(op, a, b, out, layout, stream);
}

}  // namespace ferrite::cuda::kernels
