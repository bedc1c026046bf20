// amin, amax (plain and masked) and any / all on the GPU.
#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reduce_engine.cuh"
#include "cuda/reduction/reducers.cuh"

namespace ferrite::cuda::reduction {

void reduce_extreme(Op op, const Buffer& x, const Buffer& mask, const Buffer& out, const ReduceExtents& e,
                    cudaStream_t stream) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      launch_reduce(PlainSource<bool>{x.data_as<const bool>()}, out.data_as<bool>(), AnyAllReducer{op == Op::Any}, e,
                    x, stream);
    } else if constexpr (detail::is_complex_v<T>) {
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cuda");
    } else {
      const bool max = op == Op::Amax || op == Op::MaskedAmax;
      const ExtremeReducer<T> r{max, extreme_identity<T>(max)};
      if (mask.defined())
        launch_reduce(MaskedSource<T>{x.data_as<const T>(), mask.data_as<const bool>(), detail::narrow<T>(r.empty)},
                      out.data_as<T>(), r, e, x, stream);
      else
        launch_reduce(PlainSource<T>{x.data_as<const T>()}, out.data_as<T>(), r, e, x, stream);
    }
  });
}

}  // namespace ferrite::cuda::reduction
