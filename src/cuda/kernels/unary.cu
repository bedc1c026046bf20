// Unary elementwise ops (neg, relu) for every numeric real dtype.
#include "core/dtype_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "core/elementwise_layout.hpp"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/primitives/elementwise_engine.cuh"

namespace ferrite::cuda::kernels {

void unary(Op op, const Buffer& x, const Buffer& out, const UnaryParams&, cudaStream_t stream) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T> || std::is_same_v<T, bool>) {
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cuda");
    } else {
      auto run = [&](auto fn) {
        launch_elementwise<false>(fn, contiguous_layout(x.numel(), 1), out.data_as<T>(), stream, x.data_as<const T>());
      };
      switch (op) {
        case Op::Neg: return run(detail::NegFn{});
        case Op::Relu: return run(detail::ReluFn{});
        default: FERRITE_THROW(Unsupported, op_name(op), " is not a unary op");
      }
    }
  });
}

}  // namespace ferrite::cuda::kernels
