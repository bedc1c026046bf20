// The cuda backend's ReductionOps. No op of the group is implemented yet: supports() is false
// for all, so the front end reports Unsupported before reaching here.
#include "cuda/cuda_families.hpp"

namespace ferrite::cuda {
namespace {

class CudaReductionOps final : public ReductionOps {
 public:
  bool supports(Op, DType) const override { return false; }
};

}  // namespace

std::unique_ptr<ReductionOps> make_cuda_reduction_ops() { return std::make_unique<CudaReductionOps>(); }

}  // namespace ferrite::cuda
