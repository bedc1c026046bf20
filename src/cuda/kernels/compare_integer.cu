// eq/ne/lt/le/gt/ge -> Bool for I32, I64 and Bool operands.
#include "core/elementwise_functors.hpp"
#include "cuda/kernels/unary_kernels.cuh"

namespace ferrite::cuda::kernels {

void compare_integer(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                     cudaStream_t stream) {
  detail::visit_integer_or_bool(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_binary<T, bool>(detail::CompareFn{detail::compare_op_of(op)}, a, b, out, layout, stream);
  });
}

}  // namespace ferrite::cuda::kernels
