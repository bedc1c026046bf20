// The cpu backend's ReductionOps. No op of the group is implemented yet: supports() is false
// for all, so the front end reports Unsupported before reaching here.
#include "cpu/cpu_families.hpp"

namespace ferrite::cpu {
namespace {

class CpuReductionOps final : public ReductionOps {
 public:
  bool supports(Op, DType) const override { return false; }
};

}  // namespace

std::unique_ptr<ReductionOps> make_cpu_reduction_ops() { return std::make_unique<CpuReductionOps>(); }

}  // namespace ferrite::cpu
