// floor_divide, remainder, bitwise and shift ops on I32/I64, and the logical (= bitwise)
// ops on Bool: one kernel per dtype, the op chosen by a field of IntegerFn.
#include "core/elementwise_functors.hpp"
#include "cuda/kernels/unary_kernels.cuh"

namespace ferrite::cuda::kernels {

void binary_integer_ops(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                        cudaStream_t stream) {
  detail::visit_integer_or_bool(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_binary<T>(detail::integer_fn_of(op, sizeof(T)), a, b, out, layout, stream);
  });
}

}  // namespace ferrite::cuda::kernels
