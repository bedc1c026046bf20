// The cuda backend's MatmulOps. No op of the group is implemented yet: supports() is false
// for all, so the front end reports Unsupported before reaching here.
#include "cuda/cuda_families.hpp"

namespace ferrite::cuda {
namespace {

class CudaMatmulOps final : public MatmulOps {
 public:
  bool supports(Op, DType) const override { return false; }
};

}  // namespace

std::unique_ptr<MatmulOps> make_cuda_matmul_ops() { return std::make_unique<CudaMatmulOps>(); }

}  // namespace ferrite::cuda
