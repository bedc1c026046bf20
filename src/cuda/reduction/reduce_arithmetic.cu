// Sum, mean and prod on the GPU, every real numeric dtype (sum also Bool).
#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reduce_engine.cuh"
#include "cuda/reduction/reducers.cuh"

namespace ferrite::cuda::reduction {

void reduce_arithmetic(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e, cudaStream_t stream) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T>) {
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cuda");
    } else {
      const PlainSource<T> src{x.data_as<const T>()};
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        if (out.dtype() == DType::F32)  // mixed precision: the float accumulator, unrounded
          return launch_reduce(src, out.data_as<float>(), SumReducer<T, float>{op == Op::Mean}, e, x, stream);
      }
      auto* o = out.data_as<sum_out_t<T>>();
      if (op == Op::Prod)
        launch_reduce(src, o, ProdReducer<T>{}, e, x, stream);
      else
        launch_reduce(src, o, SumReducer<T>{op == Op::Mean}, e, x, stream);
    }
  });
}

}  // namespace ferrite::cuda::reduction
