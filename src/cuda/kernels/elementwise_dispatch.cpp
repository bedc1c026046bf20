// Routes cast and binary requests to the translation unit that instantiates their dtypes.
#include "cuda/kernels/elementwise.cuh"

namespace ferrite::cuda::kernels {

void cast(const Buffer& x, const Buffer& out, cudaStream_t stream) {
  switch (x.dtype()) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: return cast_from_single_precision(x, out, stream);
    case DType::F64: return cast_from_double_precision(x, out, stream);
    case DType::I32:
    case DType::I64:
    case DType::Bool: return cast_from_integer(x, out, stream);
    case DType::C64:
    case DType::C128: return cast_from_complex(x, out, stream);
  }
}

void binary(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
            cudaStream_t stream) {
  if (is_floating(a.dtype())) return binary_floating(op, a, b, out, layout, stream);
  return binary_integer(op, a, b, out, layout, stream);
}

}  // namespace ferrite::cuda::kernels
