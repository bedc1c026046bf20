// maximum and minimum for every real dtype (one kernel per dtype; the op is a field).
#include "core/elementwise_functors.hpp"
#include "cuda/kernels/unary_kernels.cuh"

namespace ferrite::cuda::kernels {

void binary_minmax(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                   cudaStream_t stream) {
  detail::visit_real(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_binary<T>(detail::MinMaxFn{op == Op::Maximum}, a, b, out, layout, stream);
  });
}

}  // namespace ferrite::cuda::kernels
