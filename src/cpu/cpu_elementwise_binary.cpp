// CPU implementations of the binary ops: arithmetic and min/max (with mixed-precision F32
// outputs), the integer and Bool ops, and the compare ops.
#include "core/elementwise_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_elementwise_engine.hpp"

namespace ferrite::cpu {
namespace {

using detail::TypeTag;

// out has the operands' dtype, or F32 for F16/BF16 operands (mixed precision).
template <class T, class Fn>
void run_binary_to(Fn fn, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout) {
  if (out.dtype() == a.dtype())
    run_elementwise(layout, out.data_as<T>(), fn, a.data_as<const T>(), b.data_as<const T>());
  else
    run_elementwise(layout, out.data_as<float>(), fn, a.data_as<const T>(), b.data_as<const T>());
}

}  // namespace

void CpuBackend::binary(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout) {
  if (detail::is_compare_op(op)) {
    const detail::CompareFn fn{detail::compare_op_of(op)};
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      run_elementwise(layout, out.data_as<bool>(), fn, a.data_as<const T>(), b.data_as<const T>());
    };
    if (a.dtype() == DType::Bool) return run(TypeTag<bool>{});
    return detail::visit_real(a.dtype(), run);
  }
  if (detail::is_integer_fn_op(op)) {
    return detail::visit_integer_or_bool(a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      run_elementwise(layout, out.data_as<T>(), detail::integer_fn_of(op, sizeof(T)), a.data_as<const T>(),
                      b.data_as<const T>());
    });
  }
  detail::visit_real(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (op) {
      case Op::Add: return run_binary_to<T>(detail::AddFn{}, a, b, out, layout);
      case Op::Sub: return run_binary_to<T>(detail::SubFn{}, a, b, out, layout);
      case Op::Mul: return run_binary_to<T>(detail::MulFn{}, a, b, out, layout);
      case Op::Div: return run_binary_to<T>(detail::DivFn{}, a, b, out, layout);
      case Op::Maximum: return run_binary_to<T>(detail::MinMaxFn{true}, a, b, out, layout);
      case Op::Minimum: return run_binary_to<T>(detail::MinMaxFn{false}, a, b, out, layout);
      default: FERRITE_THROW(Unsupported, "cpu: ", op_name(op), " is not a binary op");
    }
  });
}

}  // namespace ferrite::cpu
