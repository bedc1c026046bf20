#include "cuda/kernels/cast_kernels.cuh"

namespace ferrite::cuda::kernels {

void cast_from_integer(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout,
                       cudaStream_t stream) {
  switch (x.dtype()) {
    case DType::I32: return cast_from<std::int32_t>(x, out, layout, stream);
    case DType::I64: return cast_from<std::int64_t>(x, out, layout, stream);
    case DType::Bool: return cast_from<bool>(x, out, layout, stream);
    default: FERRITE_THROW(InvalidArgument, "cast_from_integer: source is ", dtype_name(x.dtype()));
  }
}

}  // namespace ferrite::cuda::kernels
