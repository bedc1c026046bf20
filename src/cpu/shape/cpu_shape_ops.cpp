// The CPU backend's ShapeOps: plain loops. Data movement copies elements as raw bytes of
// their size; the adding ops (scatter_add, embedding_backward) accumulate as the CUDA
// backend does (the widened type, detail::wide_t: float for F16/BF16, I64 for I32, integers
// wrapping through detail::AddFn; one rounding at the end), adding each target's sources in
// index order. CUDA adds runs longer than its chunk of sorted positions as chunk partials,
// so float sums of long runs may differ in the last bits; integers agree exactly.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "core/dtype_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "core/host_scratch.hpp"
#include "cpu/cpu_families.hpp"

namespace ferrite::cpu {
namespace {

bool is_movement(Op op) { return op != Op::ScatterAdd && op != Op::EmbeddingBackward; }
bool is_addable(DType d) { return is_floating(d) || is_integral(d); }

// ---- copy_view ----

template <std::size_t E>
void copy_view_sized(const std::uint8_t* src, const StridedView& sv, std::uint8_t* dst, const StridedView& dv) {
  const int rank = sv.rank;
  if (rank == 0) {
    std::memcpy(dst + dv.offset * E, src + sv.offset * E, E);
    return;
  }
  const std::int64_t inner = sv.sizes[rank - 1];
  const std::int64_t s_in = sv.strides[rank - 1], d_in = dv.strides[rank - 1];
  std::array<std::int64_t, kMaxViewDims> idx{};
  std::int64_t s_off = sv.offset, d_off = dv.offset;
  while (true) {
    if (s_in == 1 && d_in == 1) {
      std::memcpy(dst + d_off * E, src + s_off * E, static_cast<std::size_t>(inner) * E);
    } else {
      for (std::int64_t i = 0; i < inner; ++i) std::memcpy(dst + (d_off + i * d_in) * E, src + (s_off + i * s_in) * E, E);
    }
    // Odometer over the outer dims.
    int k = rank - 2;
    for (; k >= 0; --k) {
      ++idx[k];
      s_off += sv.strides[k];
      d_off += dv.strides[k];
      if (idx[k] < sv.sizes[k]) break;
      s_off -= sv.strides[k] * sv.sizes[k];
      d_off -= dv.strides[k] * sv.sizes[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

// ---- index helpers ----

std::int64_t index_at(const Buffer& index, std::int64_t i) {
  return index.dtype() == DType::I32 ? index.data_as<std::int32_t>()[i] : index.data_as<std::int64_t>()[i];
}

IndexRange range_of(const Buffer& index) {
  IndexRange r{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
  for (std::int64_t i = 0; i < index.numel(); ++i) {
    const std::int64_t v = index_at(index, i);
    r.min = std::min(r.min, v);
    r.max = std::max(r.max, v);
  }
  return r;
}

/// The wrapped index, or -1 when it is outside [-size, size).
std::int64_t wrapped(std::int64_t v, std::int64_t size) {
  if (v < -size || v >= size) return -1;
  return v < 0 ? v + size : v;
}

// Offsets of index position `linear` in the data and src tensors of a gather/scatter.
struct IndexAddress {
  std::int64_t data_base;  // without the dim term
  std::int64_t src;
};
IndexAddress address_of(const IndexLayout& l, std::int64_t linear) {
  IndexAddress a{0, 0};
  for (int k = l.rank - 1; k >= 0; --k) {
    const std::int64_t c = linear % l.sizes[k];
    linear /= l.sizes[k];
    if (k != l.dim) a.data_base += c * l.data_strides[k];
    a.src += c * l.src_strides[k];
  }
  return a;
}

std::int64_t index_count(const IndexLayout& l) {
  std::int64_t n = 1;
  for (int k = 0; k < l.rank; ++k) n *= l.sizes[k];
  return n;
}

class CpuShapeOps final : public ShapeOps {
 public:
  bool supports(Op op, DType dtype) const override {
    if (op_group(op) != OpGroup::Shape) return false;
    return is_movement(op) || is_addable(dtype);
  }

  void copy_view(const Buffer& src, const StridedView& sv, const Buffer& dst, const StridedView& dv) override {
    const auto* s = static_cast<const std::uint8_t*>(src.data());
    auto* d = static_cast<std::uint8_t*>(dst.data());
    switch (dtype_size(src.dtype())) {
      case 1: return copy_view_sized<1>(s, sv, d, dv);
      case 2: return copy_view_sized<2>(s, sv, d, dv);
      case 4: return copy_view_sized<4>(s, sv, d, dv);
      case 8: return copy_view_sized<8>(s, sv, d, dv);
      default: return copy_view_sized<16>(s, sv, d, dv);
    }
  }

  IndexRange index_select(const Buffer& x, const Buffer& index, const Buffer& out, std::int64_t outer,
                          std::int64_t in_dim, std::int64_t out_dim, std::int64_t inner) override {
    const std::size_t row = static_cast<std::size_t>(inner) * dtype_size(x.dtype());
    const auto* xs = static_cast<const std::uint8_t*>(x.data());
    auto* os = static_cast<std::uint8_t*>(out.data());
    // An empty output (a zero dim before or after `dim`) has nothing to copy, but the loops
    // below would still run outer * out_dim times, which for an input such as [2^40, 7, 0]
    // never ends. The index range is still reported, as the CUDA backend does.
    if (outer == 0 || row == 0) return range_of(index);
    for (std::int64_t j = 0; j < out_dim; ++j) {
      const std::int64_t w = wrapped(index_at(index, j), in_dim);
      for (std::int64_t o = 0; o < outer; ++o) {
        std::uint8_t* to = os + static_cast<std::size_t>(o * out_dim + j) * row;
        if (w < 0) std::memset(to, 0, row);  // a bad index: never read x; the front end throws
        else std::memcpy(to, xs + static_cast<std::size_t>(o * in_dim + w) * row, row);
      }
    }
    return range_of(index);
  }

  IndexRange gather(const Buffer& x, const Buffer& index, const Buffer& out, const IndexLayout& l) override {
    const std::size_t e = dtype_size(x.dtype());
    const auto* xs = static_cast<const std::uint8_t*>(x.data());
    auto* os = static_cast<std::uint8_t*>(out.data());
    const std::int64_t n = index_count(l);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t w = wrapped(index_at(index, i), l.dim_size);
      if (w < 0) {
        std::memset(os + i * e, 0, e);
        continue;
      }
      const std::int64_t at = address_of(l, i).data_base + w * l.data_strides[l.dim];
      std::memcpy(os + i * e, xs + at * e, e);
    }
    return range_of(index);
  }

  IndexRange scatter_add(const Buffer& x, const Buffer& index, const Buffer& src, const Buffer& out,
                         const IndexLayout& l) override {
    detail::visit_dtype(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool> || detail::is_complex_v<T>) {
        FERRITE_THROW(Unsupported, "scatter_add: dtype ", dtype_name(x.dtype()), " is not supported on cpu");
      } else {
        using A = detail::wide_t<T>;
        const T* xv = x.data_as<T>();
        const T* sv = src.data_as<T>();
        std::vector<A> acc = detail::host_scratch<A>(x.numel(), "scatter_add");
        for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = detail::widen(xv[i]);
        const std::int64_t n = index_count(l);
        for (std::int64_t i = 0; i < n; ++i) {  // ascending index position: the documented order
          const std::int64_t w = wrapped(index_at(index, i), l.dim_size);
          if (w < 0) continue;
          const IndexAddress a = address_of(l, i);
          A& target = acc[static_cast<std::size_t>(a.data_base + w * l.data_strides[l.dim])];
          target = detail::AddFn{}(target, detail::widen(sv[a.src]));
        }
        T* ov = out.data_as<T>();
        for (std::size_t i = 0; i < acc.size(); ++i) ov[i] = detail::narrow<T>(acc[i]);
      }
    });
    return range_of(index);
  }

  IndexRange embedding_backward(const Buffer& grad, const Buffer& index, const Buffer& out, std::int64_t num_rows,
                                std::int64_t width) override {
    detail::visit_dtype(grad.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool> || detail::is_complex_v<T>) {
        FERRITE_THROW(Unsupported, "embedding_backward: dtype ", dtype_name(grad.dtype()), " is not supported on cpu");
      } else {
        using A = detail::wide_t<T>;
        const T* g = grad.data_as<T>();
        std::vector<A> acc = detail::host_scratch<A>(num_rows * width, "embedding_backward", A(0));
        for (std::int64_t r = 0; r < index.numel(); ++r) {
          const std::int64_t w = wrapped(index_at(index, r), num_rows);
          if (w < 0) continue;
          for (std::int64_t c = 0; c < width; ++c) {
            A& target = acc[static_cast<std::size_t>(w * width + c)];
            target = detail::AddFn{}(target, detail::widen(g[r * width + c]));
          }
        }
        T* ov = out.data_as<T>();
        for (std::size_t i = 0; i < acc.size(); ++i) ov[i] = detail::narrow<T>(acc[i]);
      }
    });
    return range_of(index);
  }

  Buffer masked_select(const Buffer& x, const Buffer& mask,
                       const std::function<Buffer(std::int64_t)>& allocate_out) override {
    const bool* m = mask.data_as<bool>();
    const std::int64_t count = std::count_if(m, m + mask.numel(), [](bool b) { return b; });
    Buffer out = allocate_out(count);
    const std::size_t e = dtype_size(x.dtype());
    const auto* xs = static_cast<const std::uint8_t*>(x.data());
    auto* os = static_cast<std::uint8_t*>(out.data());
    std::int64_t k = 0;
    for (std::int64_t i = 0; i < x.numel(); ++i)
      if (m[i]) std::memcpy(os + (k++) * e, xs + i * e, e);
    return out;
  }

  std::int64_t masked_scatter(const Buffer& x, const Buffer& mask, const Buffer& source, const Buffer& out) override {
    const bool* m = mask.data_as<bool>();
    const std::size_t e = dtype_size(x.dtype());
    const auto* xs = static_cast<const std::uint8_t*>(x.data());
    const auto* ss = static_cast<const std::uint8_t*>(source.data());
    auto* os = static_cast<std::uint8_t*>(out.data());
    std::int64_t k = 0;
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      const bool take = m[i] && k < source.numel();
      std::memcpy(os + i * e, take ? ss + k * e : xs + i * e, e);
      if (m[i]) ++k;
    }
    return k;
  }
};

}  // namespace

std::unique_ptr<ShapeOps> make_cpu_shape_ops() { return std::make_unique<CpuShapeOps>(); }

}  // namespace ferrite::cpu
