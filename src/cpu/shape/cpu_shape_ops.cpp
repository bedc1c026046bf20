// The cpu backend's ShapeOps. No op of the group is implemented yet: supports() is false
// for all, so the front end reports Unsupported before reaching here.
#include "cpu/cpu_families.hpp"

namespace ferrite::cpu {
namespace {

class CpuShapeOps final : public ShapeOps {
 public:
  bool supports(Op, DType) const override { return false; }
};

}  // namespace

std::unique_ptr<ShapeOps> make_cpu_shape_ops() { return std::make_unique<CpuShapeOps>(); }

}  // namespace ferrite::cpu
