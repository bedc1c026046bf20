#include "cuda/kernels/cast_kernels.cuh"

namespace ferrite::cuda::kernels {

void cast_from_double_precision(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout,
                                cudaStream_t stream) {
  FERRITE_CHECK(x.dtype() == DType::F64, InvalidArgument, "cast_from_double_precision: source is ",
                dtype_name(x.dtype()));
  cast_from<double>(x, out, layout, stream);
}

}  // namespace ferrite::cuda::kernels
