// argmax / argmin on the GPU, every real numeric dtype, I64 indices.
#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reduce_engine.cuh"
#include "cuda/reduction/reducers.cuh"

namespace ferrite::cuda::reduction {

void arg_reduce(Op op, const Buffer& x, const Buffer& indices, const ReduceExtents& e, cudaStream_t stream) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T> || std::is_same_v<T, bool>) {
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cuda");
    } else {
      const bool max = op == Op::Argmax;
      launch_reduce(PlainSource<T>{x.data_as<const T>()}, indices.data_as<std::int64_t>(),
                    ArgReducer<T>{max, extreme_identity<T>(max)}, e, x, stream);
    }
  });
}

}  // namespace ferrite::cuda::reduction
