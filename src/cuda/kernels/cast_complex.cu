#include "cuda/kernels/cast_kernels.cuh"

namespace ferrite::cuda::kernels {

void cast_from_complex(const Buffer& x, const Buffer& out, cudaStream_t stream) {
  switch (x.dtype()) {
    case DType::C64: return cast_from<detail::Complex<float>>(x, out, stream);
    case DType::C128: return cast_from<detail::Complex<double>>(x, out, stream);
    default: FERRITE_THROW(InvalidArgument, "cast_from_complex: source is ", dtype_name(x.dtype()));
  }
}

}  // namespace ferrite::cuda::kernels
