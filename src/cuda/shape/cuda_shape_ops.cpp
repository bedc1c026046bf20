// The cuda backend's ShapeOps. No op of the group is implemented yet: supports() is false
// for all, so the front end reports Unsupported before reaching here.
#include "cuda/cuda_families.hpp"

namespace ferrite::cuda {
namespace {

class CudaShapeOps final : public ShapeOps {
 public:
  bool supports(Op, DType) const override { return false; }
};

}  // namespace

std::unique_ptr<ShapeOps> make_cuda_shape_ops() { return std::make_unique<CudaShapeOps>(); }

}  // namespace ferrite::cuda
