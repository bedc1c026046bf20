// The cpu backend's MatmulOps. No op of the group is implemented yet: supports() is false
// for all, so the front end reports Unsupported before reaching here.
#include "cpu/cpu_families.hpp"

namespace ferrite::cpu {
namespace {

class CpuMatmulOps final : public MatmulOps {
 public:
  bool supports(Op, DType) const override { return false; }
};

}  // namespace

std::unique_ptr<MatmulOps> make_cpu_matmul_ops() { return std::make_unique<CpuMatmulOps>(); }

}  // namespace ferrite::cpu
