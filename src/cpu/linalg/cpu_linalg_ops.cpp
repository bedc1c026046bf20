// The CPU backend's LinalgOps object: every op for F32, F64, C64 and C128 through Eigen (C64 in
// double precision: cpu_linalg_common.hpp's dispatch).
#include "cpu/linalg/cpu_linalg_ops.hpp"

#include "cpu/cpu_families.hpp"

namespace ferrite::cpu {
namespace {

class CpuLinalgOps final : public LinalgOps {
 public:
  bool supports(Op op, DType dtype) const override {
    return op_group(op) == OpGroup::Linalg &&
           (dtype == DType::F32 || dtype == DType::F64 || dtype == DType::C64 || dtype == DType::C128);
  }
  void cholesky(const LinalgDims& d, const Buffer& a, const Buffer& out, bool upper, const Buffer& info) override {
    linalg::cholesky(d, a, out, upper, info);
  }
  void lu_factor(const LinalgDims& d, const Buffer& a, const Buffer& pivots, const Buffer& info) override {
    linalg::lu_factor(d, a, pivots, info);
  }
  void lu_solve(const LinalgDims& d, const Buffer& lu, const Buffer& pivots, const Buffer& b) override {
    linalg::lu_solve(d, lu, pivots, b);
  }
  void lu_unpack(const LinalgDims& d, const Buffer& lu, const Buffer& pivots, const Buffer& p, const Buffer& l,
                 const Buffer& u) override {
    linalg::lu_unpack(d, lu, pivots, p, l, u);
  }
  void qr(const LinalgDims& d, const Buffer& a, bool complete, const Buffer& q, const Buffer& r) override {
    linalg::qr(d, a, complete, q, r);
  }
  void eigh(const LinalgDims& d, const Buffer& a, bool upper, bool vectors, const Buffer& w, const Buffer& v,
            const Buffer& info) override {
    linalg::eigh(d, a, upper, vectors, w, v, info);
  }
  void svd(const LinalgDims& d, const Buffer& a, bool full, bool vectors, bool accurate, const Buffer& u,
           const Buffer& s, const Buffer& vh, const Buffer& info) override {
    linalg::svd(d, a, full, vectors, accurate, u, s, vh, info);
  }
  void eig(const LinalgDims& d, const Buffer& a, bool vectors, const Buffer& w, const Buffer& v,
           const Buffer& info) override {
    linalg::eig(d, a, vectors, w, v, info);
  }
};

}  // namespace

std::unique_ptr<LinalgOps> make_cpu_linalg_ops() { return std::make_unique<CpuLinalgOps>(); }

}  // namespace ferrite::cpu
