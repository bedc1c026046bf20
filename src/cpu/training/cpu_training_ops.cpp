// The CPU backend's TrainingOps: the optimizer element updates shared with the CUDA
// kernels (src/core/optimizer_math.hpp, same bits), and cross-entropy with double
// accumulation per row (the reference the GPU's F32 accumulation is checked against).
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/dtype_dispatch.hpp"
#include "core/optimizer_math.hpp"
#include "core/training_families.hpp"
#include "cpu/training/float_dispatch.hpp"

namespace ferrite::cpu {
namespace {

using namespace ferrite::detail;

template <class T>
void step_tensor(const optim::StepConsts& c, const OptimizerTensor& t) {
  T* p = t.param.data_as<T>();
  const T* g = t.grad.data_as<T>();
  float* s0 = t.state0.numel() ? t.state0.data_as<float>() : nullptr;
  float* s1 = t.state1.numel() ? t.state1.data_as<float>() : nullptr;
  float* s2 = t.state2.numel() ? t.state2.data_as<float>() : nullptr;
  float* master = t.master.numel() ? t.master.data_as<float>() : nullptr;
  const std::int64_t n = t.param.numel();
#pragma omp parallel for schedule(static) if (n >= (1 << 16))
  for (std::int64_t i = 0; i < n; ++i) {
    float w = master ? master[i] : static_cast<float>(widen(p[i]));
    const float grad = static_cast<float>(widen(g[i]));
    if (c.kind == OptimizerKind::Sgd) {
      float unused = 0;
      optim::sgd_element(c, w, grad, s0 ? s0[i] : unused);
    } else {
      float unused = 0;
      optim::adam_element(c, w, grad, s0[i], s1[i], s2 ? s2[i] : unused);
    }
    if (master) master[i] = w;
    p[i] = narrow<T>(w);
  }
}

template <class T>
void ce_forward(const CrossEntropyDesc& d, const Buffer& logits, const Buffer& targets, const Buffer& loss,
                const Buffer& lse, const Buffer& counted) {
  const T* x = logits.data_as<T>();
  const std::int64_t* t = targets.data_as<std::int64_t>();
  float* lo = loss.data_as<float>();
  float* ls = lse.data_as<float>();
  float* co = counted.data_as<float>();
  const std::int64_t C = d.classes;
  const double eps = d.label_smoothing;
#pragma omp parallel for schedule(static) if (d.rows * C >= (1 << 16))
  for (std::int64_t r = 0; r < d.rows; ++r) {
    const T* row = x + r * C;
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < C; ++j) {
      const double v = static_cast<double>(widen(row[j]));
      if (v > m || v != v || m != m) m = m != m ? m : v;  // a NaN wins and stays
    }
    double s = 0, sx = 0;
    for (std::int64_t j = 0; j < C; ++j) {
      const double v = static_cast<double>(widen(row[j]));
      // -inf contributes 0 even when the max is -inf (the GPU's online merge does the same).
      s += v == -std::numeric_limits<double>::infinity() ? 0.0 : std::exp(v - m);
      sx += v;
    }
    const double l = m + std::log(s);
    ls[r] = static_cast<float>(l);
    const std::int64_t target = t[r];
    if (target == d.ignore_index) {
      lo[r] = 0;
      co[r] = 0;
      continue;
    }
    co[r] = 1;
    if (target < 0 || target >= C) {
      lo[r] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    const double xt = static_cast<double>(widen(row[target]));
    lo[r] = static_cast<float>(l - (1 - eps) * xt - (eps / static_cast<double>(C)) * sx);
  }
}

template <class T>
void ce_backward(const CrossEntropyDesc& d, const Buffer& grad, const Buffer& divisor, const Buffer& logits,
                 const Buffer& targets, const Buffer& lse, const Buffer& out) {
  const T* x = logits.data_as<T>();
  const std::int64_t* t = targets.data_as<std::int64_t>();
  const float* g = grad.data_as<float>();
  const float* ls = lse.data_as<float>();
  T* o = out.data_as<T>();
  const std::int64_t C = d.classes;
  const double eps = d.label_smoothing;
  const double div = divisor.numel() ? static_cast<double>(divisor.data_as<float>()[0]) : 1.0;
  const bool per_row = grad.numel() != 1;
#pragma omp parallel for schedule(static) if (d.rows * C >= (1 << 16))
  for (std::int64_t r = 0; r < d.rows; ++r) {
    const std::int64_t target = t[r];
    T* orow = o + r * C;
    const T* row = x + r * C;
    if (target == d.ignore_index) {
      for (std::int64_t j = 0; j < C; ++j) orow[j] = narrow<T>(0.0);
      continue;
    }
    const double scale = static_cast<double>(g[per_row ? r : 0]) / div;
    const double l = static_cast<double>(ls[r]);
    const double off = eps / static_cast<double>(C);
    for (std::int64_t j = 0; j < C; ++j) {
      const double p = std::exp(static_cast<double>(widen(row[j])) - l);
      orow[j] = narrow<T>(scale * (p - (j == target ? 1 - eps : 0.0) - off));
    }
  }
}

class CpuTrainingOps final : public TrainingOps {
 public:
  void optimizer_step(const OptimizerDesc& desc, const std::vector<OptimizerTensor>& tensors,
                      const Buffer& found_inf) override {
    if (found_inf.numel()) {
      const bool skip = found_inf.dtype() == DType::Bool ? found_inf.data_as<bool>()[0]
                                                         : found_inf.data_as<float>()[0] != 0.f;
      if (skip) return;
    }
    const optim::StepConsts c = optim::step_consts(desc);
    for (const OptimizerTensor& t : tensors) {
      switch (t.param.dtype()) {
        case DType::F32: step_tensor<float>(c, t); break;
        case DType::BF16: step_tensor<BFloat16>(c, t); break;
        case DType::F16: step_tensor<Half>(c, t); break;
        default: FERRITE_THROW(Unsupported, "optimizer: param dtype ", dtype_name(t.param.dtype()));
      }
    }
  }
  void cross_entropy_forward(const CrossEntropyDesc& d, const Buffer& logits, const Buffer& targets, const Buffer& loss,
                             const Buffer& lse, const Buffer& counted) override {
    visit_float_dtype("cross_entropy", logits.dtype(), [&](auto tag) {
      ce_forward<typename decltype(tag)::type>(d, logits, targets, loss, lse, counted);
    });
  }
  void cross_entropy_backward(const CrossEntropyDesc& d, const Buffer& grad, const Buffer& divisor,
                              const Buffer& logits, const Buffer& targets, const Buffer& lse,
                              const Buffer& out) override {
    visit_float_dtype("cross_entropy_backward", logits.dtype(), [&](auto tag) {
      ce_backward<typename decltype(tag)::type>(d, grad, divisor, logits, targets, lse, out);
    });
  }
};

}  // namespace

std::unique_ptr<TrainingOps> make_cpu_training_ops() { return std::make_unique<CpuTrainingOps>(); }

}  // namespace ferrite::cpu
