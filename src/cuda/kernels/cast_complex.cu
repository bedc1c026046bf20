#include "cuda/kernels/cast_kernels.cuh"

namespace ferrite::cuda::kernels {

void cast_from_complex(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout,
                       cudaStream_t stream) {
  switch (x.dtype()) {
    case DType::C64: return cast_from<detail::Complex<float>>(x, out, layout, stream);
    case DType::C128: return cast_from<detail::Complex<double>>(x, out, layout, stream);
    default: FERRITE_THROW(InvalidArgument, "cast_from_complex: source is ", dtype_name(x.dtype()));
  }
}

}  // namespace ferrite::cuda::kernels
