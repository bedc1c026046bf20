#include "cuda/kernels/cast_kernels.cuh"

namespace ferrite::cuda::kernels {

void cast_from_single_precision(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout,
                                cudaStream_t stream) {
  switch (x.dtype()) {
    case DType::F32: return cast_from<float>(x, out, layout, stream);
    case DType::F16: return cast_from<Half>(x, out, layout, stream);
    case DType::BF16: return cast_from<BFloat16>(x, out, layout, stream);
    default: FERRITE_THROW(InvalidArgument, "cast_from_single_precision: source is ", dtype_name(x.dtype()));
  }
}

}  // namespace ferrite::cuda::kernels
