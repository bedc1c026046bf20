// Gradient of prod on the GPU: grad * (product of the elements before) * (product after),
// so inputs with zeros get exact gradients (no division by x). One thread per reduced
// column; the prefix products go through scratch memory in the accumulator type.
#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reduce_common.cuh"
#include "cuda/reduction/reduction_kernels.cuh"

namespace ferrite::cuda::reduction {
namespace {

constexpr int kThreads = 128;

template <class T>
__global__ void __launch_bounds__(kThreads)
    prod_backward_kernel(const T* grad, const T* x, T* out, acc_t<T>* before, std::int64_t outer, std::int64_t dim,
                         std::int64_t inner) {
  using A = acc_t<T>;
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (k >= outer * inner) return;
  const std::int64_t base = (k / inner) * dim * inner + k % inner;
  A run = 1;
  for (std::int64_t j = 0; j < dim; ++j) {
    before[base + j * inner] = run;
    run *= load_acc(x, base + j * inner);
  }
  const A g = load_acc(grad, k);
  run = 1;
  for (std::int64_t j = dim - 1; j >= 0; --j) {
    const std::int64_t at = base + j * inner;
    out[at] = detail::narrow<T>(g * before[at] * run);
    run *= load_acc(x, at);
  }
}

}  // namespace

void prod_backward(const Buffer& grad, const Buffer& x, const Buffer& out, const ReduceExtents& e,
                   cudaStream_t stream) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<acc_t<T>> || detail::is_complex_v<T>) {
      FERRITE_THROW(Unsupported, "prod_backward: ", dtype_name(x.dtype()), " on cuda");
    } else {
      auto before = scratch(x, static_cast<std::size_t>(e.numel()) * sizeof(acc_t<T>));
      prod_backward_kernel<T><<<blocks_for(e.outer * e.inner, kThreads), kThreads, 0, stream>>>(
          grad.data_as<const T>(), x.data_as<const T>(), out.data_as<T>(), static_cast<acc_t<T>*>(before->data()),
          e.outer, e.dim, e.inner);
      FERRITE_CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace ferrite::cuda::reduction
