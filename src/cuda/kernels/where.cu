// where(cond, x, y) and masked_fill, instantiated per element size (1, 2, 4, 8, 16 bytes):
// values move bit for bit, so every dtype shares its size's kernel.
#include "core/elementwise_functors.hpp"
#include "cuda/kernels/unary_kernels.cuh"

namespace ferrite::cuda::kernels {

void where(const Buffer& cond, const Buffer& x, const Buffer& y, const Buffer& out, const ElementwiseLayout& layout,
           cudaStream_t stream) {
  detail::visit_element_size(dtype_size(out.dtype()), [&](auto tag) {
    using U = typename decltype(tag)::type;
    launch_elementwise<Layouts::Any>(detail::WhereFn{}, layout, out.data_as<U>(), stream, cond.data_as<const bool>(),
                             x.data_as<const U>(), y.data_as<const U>());
  });
}

}  // namespace ferrite::cuda::kernels
