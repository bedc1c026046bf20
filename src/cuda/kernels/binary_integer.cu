#include "cuda/kernels/binary_kernels.cuh"

namespace ferrite::cuda::kernels {

void binary_integer(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                    cudaStream_t stream) {
  switch (a.dtype()) {
    case DType::I32: return binary_typed<std::int32_t>(op, a, b, out, layout, stream);
    case DType::I64: return binary_typed<std::int64_t>(op, a, b, out, layout, stream);
    default: FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(a.dtype()), " is not an integer dtype");
  }
}

}  // namespace ferrite::cuda::kernels
