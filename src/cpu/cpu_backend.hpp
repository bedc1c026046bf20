// The CPU backend: the reference every CUDA result is compared with, and the backend that
// runs everything where no GPU is present. Plain loops, OpenMP where it pays.
#pragma once

#include <atomic>
#include <memory>

#include "cpu/cpu_families.hpp"
#include "ferrite/backend.hpp"
#include "ferrite/backend_families/conv_ops.hpp"
#include "ferrite/backend_families/linalg_ops.hpp"
#include "ferrite/backend_families/fft_ops.hpp"
#include "ferrite/backend_families/matmul_ops.hpp"
#include "ferrite/backend_families/sparse_ops.hpp"
#include "ferrite/backend_families/attention_ops.hpp"
#include "ferrite/backend_families/reduction_ops.hpp"
#include "ferrite/backend_families/shape_ops.hpp"

namespace ferrite::cpu {

class CpuBackend final : public Backend {
 public:
  CpuBackend();

  DeviceKind kind() const override { return DeviceKind::CPU; }
  std::string name() const override { return "cpu"; }
  int device_count() const override { return 1; }
  bool supports(Op op, DType dtype) const override;

  std::shared_ptr<Storage> allocate(std::size_t bytes, Device device) override;
  MemoryStats memory_stats(Device device) const override;
  void copy_from_host(const void* src, const Buffer& dst, std::size_t bytes) override;
  void copy_to_host(const Buffer& src, void* dst, std::size_t bytes) override;
  void copy(const Buffer& src, const Buffer& dst) override;
  void fill(const Buffer& out, Scalar value) override;
  void arange(const Buffer& out, double start, double step) override;
  void synchronize(Device) override {}

  void cast(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout) override;
  void unary(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params,
             const ElementwiseLayout& layout) override;
  void unary_backward(Op op, const Buffer& grad, const Buffer& x, const Buffer& out,
                      const UnaryParams& params, const ElementwiseLayout& layout) override;
  void binary(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout) override;
  void where(const Buffer& cond, const Buffer& x, const Buffer& y, const Buffer& out,
             const ElementwiseLayout& layout) override;
  bool has_inf_nan(const Buffer& x) override;

  ReductionOps& reductions() override { return *reductions_; }
  ShapeOps& shape_ops() override { return *shape_ops_; }
  MatmulOps& matmul_ops() override { return *matmul_ops_; }
  SparseOps& sparse_ops() override { return *sparse_ops_; }
  ConvOps& conv_ops() override { return *conv_ops_; }
  AttentionOps& attention_ops() override { return *attention_ops_; }
  LinalgOps& linalg_ops() override { return *linalg_ops_; }
  FftOps& fft_ops() override { return *fft_ops_; }

 private:
  std::atomic<std::int64_t> in_use_{0}, peak_{0}, allocations_{0}, live_{0};
  std::unique_ptr<ReductionOps> reductions_;
  std::unique_ptr<ShapeOps> shape_ops_;
  std::unique_ptr<MatmulOps> matmul_ops_;
  std::unique_ptr<SparseOps> sparse_ops_;
  std::unique_ptr<ConvOps> conv_ops_;
  std::unique_ptr<AttentionOps> attention_ops_;
  std::unique_ptr<LinalgOps> linalg_ops_ = make_cpu_linalg_ops();
  std::unique_ptr<FftOps> fft_ops_ = make_cpu_fft_ops();
};

}  // namespace ferrite::cpu
