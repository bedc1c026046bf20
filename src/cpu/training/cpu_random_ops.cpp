// The CPU backend's RandomOps: the same per-group functions as the CUDA kernels
// (src/core/random_elements.hpp), one group per loop iteration, OpenMP over groups.
#include <cstdint>
#include <type_traits>

#include "core/dtype_dispatch.hpp"
#include "core/random_elements.hpp"
#include "core/training_families.hpp"
#include "cpu/training/float_dispatch.hpp"

namespace ferrite::cpu {
namespace {

using namespace ferrite::detail;
using namespace ferrite::detail::philox;

constexpr std::int64_t kParallelGroups = 1 << 12;

// The CUDA kernels' fast path (the same functions): whole groups through fast_group, the
// last partial group through draw_group.
template <class T, FastDraw K>
void fill_fast(const DrawParams<T>& p, T* o, std::int64_t n) {
  const std::int64_t whole = n / 4;
#pragma omp parallel for schedule(static) if (whole >= kParallelGroups)
  for (std::int64_t g = 0; g < whole; ++g)
    fast_group<T, K>(p, group_words(p.seed, p.offset, static_cast<std::uint64_t>(g)), o + 4 * g);
  if (n > 4 * whole) draw_group<T>(p, static_cast<std::uint64_t>(whole), static_cast<int>(n - 4 * whole), nullptr, o + 4 * whole);
}

template <class T>
void fill_typed(const RandomDesc& desc, const Buffer& out, const Buffer& probs) {
  const DrawParams<T> p = draw_params<T>(desc);
  constexpr int E = kGroupElems<T>;
  const std::int64_t n = out.numel();
  const std::int64_t groups = (n + E - 1) / E;
  T* o = out.data_as<T>();
  const T* pr = probs.numel() ? probs.data_as<T>() : nullptr;
  if constexpr (!std::is_integral_v<T> && !std::is_same_v<T, double>) {
    FastDraw kind;
    if (!pr && fast_draw_of(p, kind)) {
      switch (kind) {
        case FastDraw::kUnitUniform: return fill_fast<T, FastDraw::kUnitUniform>(p, o, n);
        case FastDraw::kUniform: return fill_fast<T, FastDraw::kUniform>(p, o, n);
        case FastDraw::kUnitNormal: return fill_fast<T, FastDraw::kUnitNormal>(p, o, n);
        case FastDraw::kNormal: return fill_fast<T, FastDraw::kNormal>(p, o, n);
      }
    }
  }
#pragma omp parallel for schedule(static) if (groups >= kParallelGroups)
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::int64_t first = g * E;
    const int count = static_cast<int>(n - first < E ? n - first : E);
    draw_group<T>(p, static_cast<std::uint64_t>(g), count, pr ? pr + first : nullptr, o + first);
  }
}

template <class T>
void dropout_typed(const DropoutDesc& d, const Buffer& x, const Buffer& out, const Buffer& mask) {
  using W = draw_t<T>;
  const W scale = static_cast<W>(d.scale);
  const std::int64_t n = x.numel();
  const std::int64_t groups = (n + 3) / 4;
  const T* xs = x.data_as<T>();
  T* o = out.data_as<T>();
  bool* m = mask.data_as<bool>();
#pragma omp parallel for schedule(static) if (groups >= kParallelGroups)
  for (std::int64_t g = 0; g < groups; ++g) {
    const Words r = group_words(d.seed, d.offset, static_cast<std::uint64_t>(g));
    for (int e = 0; e < 4 && g * 4 + e < n; ++e) {
      const std::int64_t i = g * 4 + e;
      const bool keep = dropout_keep(r.w[e], d.threshold);
      m[i] = keep;
      o[i] = narrow<T>(mul(static_cast<W>(widen(xs[i])), keep ? scale : W(0)));
    }
  }
}

template <class T>
void dropout_backward_typed(const Buffer& grad, const Buffer& mask, double scale_d, const Buffer& out) {
  using W = draw_t<T>;
  const W scale = static_cast<W>(scale_d);
  const std::int64_t n = grad.numel();
  const T* gs = grad.data_as<T>();
  const bool* m = mask.data_as<bool>();
  T* o = out.data_as<T>();
#pragma omp parallel for schedule(static) if (n >= (kParallelGroups << 2))
  for (std::int64_t i = 0; i < n; ++i) o[i] = narrow<T>(mul(static_cast<W>(widen(gs[i])), m[i] ? scale : W(0)));
}

class CpuRandomOps final : public RandomOps {
 public:
  void fill(const RandomDesc& desc, const Buffer& out, const Buffer& probs) override {
    if (desc.kind == RandomKind::Integer) {
      if (out.dtype() == DType::I32) return fill_typed<std::int32_t>(desc, out, probs);
      if (out.dtype() == DType::I64) return fill_typed<std::int64_t>(desc, out, probs);
      FERRITE_THROW(Unsupported, "randint: dtype ", dtype_name(out.dtype()));
    }
    visit_float_dtype("random", out.dtype(), [&](auto tag) { fill_typed<typename decltype(tag)::type>(desc, out, probs); });
  }
  void dropout(const DropoutDesc& desc, const Buffer& x, const Buffer& out, const Buffer& mask) override {
    visit_float_dtype("dropout", x.dtype(), [&](auto tag) { dropout_typed<typename decltype(tag)::type>(desc, x, out, mask); });
  }
  void dropout_backward(const Buffer& grad, const Buffer& mask, double scale, const Buffer& out) override {
    visit_float_dtype("dropout_backward", grad.dtype(),
                      [&](auto tag) { dropout_backward_typed<typename decltype(tag)::type>(grad, mask, scale, out); });
  }
};

}  // namespace

std::unique_ptr<RandomOps> make_cpu_random_ops() { return std::make_unique<CpuRandomOps>(); }

}  // namespace ferrite::cpu
