// Front end of the FFT family: torch.fft's argument rules (dims, n/s padding and
// truncation, norm, dtype promotion), the split of transforms over more than kMaxFftRank
// dims into several, and the FftDesc each backend call receives.
#include "ferrite/fft.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/extent.hpp"
#include "core/host_scratch.hpp"
#include "ferrite/backend.hpp"
#include "ferrite/shape.hpp"
#include "frontend/checks.hpp"
#include "frontend/strided.hpp"

namespace ferrite::fft {
namespace {

const char* name_of(Op op) { return op_name(op).data(); }

DType complex_of(DType real) { return real == DType::F64 ? DType::C128 : DType::C64; }
DType real_of(DType d) { return d == DType::F64 || d == DType::C128 ? DType::F64 : DType::F32; }

enum class Input : std::uint8_t { Any, Real };

// Input checks shared by every transform: defined, a dtype the family computes in, and (for
// rfft/ihfft) real, as torch's "expects a real input tensor".
void check_input(Op op, const Tensor& x, Input want) {
  const char* name = name_of(op);
  frontend::check_defined(name, {&x});
  const DType d = x.dtype();
  const bool ok = d == DType::F32 || d == DType::F64 || d == DType::C64 || d == DType::C128;
  FERRITE_CHECK(ok, Unsupported, name, ": dtype ", dtype_name(d), " of input ", x.description(),
                " is not supported (F32, F64, C64 or C128; cast F16/BF16/integers with .to(DType::F32) first)");
  FERRITE_CHECK(want == Input::Any || !is_complex(d), DTypeMismatch, name, " expects a real input tensor, got ",
                x.description());
  frontend::check_supported(op, d, x.device());
}

std::int64_t checked_length(Op op, std::int64_t n, std::int64_t dim) {
  FERRITE_CHECK(n >= 1, InvalidArgument, name_of(op), ": invalid number of data points (", n,
                ") specified for dim ", dim);
  return n;
}

// x resized along `dim` to `n`: a view when cut, zero padding when longer.
Tensor resize_dim(const Tensor& x, std::int64_t dim, std::int64_t n) {
  const std::int64_t have = x.size(dim);
  if (have == n) return x;
  if (have > n) return x.narrow(dim, 0, n);
  Shape shape = x.shape();
  shape[static_cast<std::size_t>(dim)] = n;
  Tensor out = zeros(shape, x.dtype(), x.device());
  if (have > 0) out.narrow(dim, 0, have).copy_(x);
  return out;
}

double norm_scale(Norm norm, bool forward, double signal) {
  switch (norm) {
    case Norm::Backward: return forward ? 1.0 : 1.0 / signal;
    case Norm::Ortho: return 1.0 / std::sqrt(signal);
    case Norm::Forward: return forward ? 1.0 / signal : 1.0;
  }
  return 1.0;
}

struct Step {
  FftType type;
  bool inverse;
  std::vector<std::int64_t> dims;  // sorted, at most kMaxFftRank
  std::int64_t last_n = 0;         // R2C/C2R: the real length of the last dim
  double scale = 1;
  bool conj_in = false, conj_out = false;
  // The result dense in index order rather than in PyTorch's result layout: for a C2C step
  // whose result a C2R step reads next (C2R reads dense index order; this saves a copy).
  bool index_order_out = false;
};

Tensor run_dense_step(Op op, const Tensor& x, const Step& s);

// One backend call: x (already of the step's input dtype and resized) -> a new tensor.
// A real-side transform (R2C, C2R) over dims that are not the innermost ones runs on a copy
// with those dims moved last: then every batch dim merges into one, so no real-side pointer
// ever sits at an odd element offset (cuFFT rejects R2C/C2R data not aligned to the complex
// type: CUFFT_INVALID_VALUE). Its result is returned as the view of that layout.
Tensor run_step(Op op, const Tensor& x, const Step& s) {
  const auto rank = static_cast<std::int64_t>(x.dim());
  const auto k = static_cast<std::int64_t>(s.dims.size());
  bool trailing = true;
  for (std::int64_t i = 0; i < k; ++i) trailing = trailing && s.dims[static_cast<std::size_t>(i)] == rank - k + i;
  if (s.type == FftType::C2C || trailing) return run_dense_step(op, x, s);
  std::vector<std::int64_t> perm;
  for (std::int64_t d = 0; d < rank; ++d)
    if (std::find(s.dims.begin(), s.dims.end(), d) == s.dims.end()) perm.push_back(d);
  perm.insert(perm.end(), s.dims.begin(), s.dims.end());
  Step moved = s;
  for (std::int64_t i = 0; i < k; ++i) moved.dims[static_cast<std::size_t>(i)] = rank - k + i;
  const Tensor y = run_dense_step(op, x.permute(perm).contiguous(), moved);
  return y.permute(frontend::inverse_permutation(perm));  // as PyTorch: the transformed dims stay innermost in memory
}

// The memory layout one backend call reads or writes: each dim's stride, in elements.
using Layout = std::vector<std::int64_t>;

// Row-major strides of `shape` with its dims laid out in `order` (outermost first).
Layout strides_in_order(const Shape& shape, const std::vector<std::int64_t>& order) {
  Layout strides(shape.size());
  std::int64_t step = 1;
  for (std::size_t j = order.size(); j-- > 0;) {
    const auto d = static_cast<std::size_t>(order[j]);
    strides[d] = step;
    step *= shape[d];
  }
  return strides;
}

// Whether the transformed dims of `strides` nest as cuFFT's advanced layout needs: each
// one's stride a multiple of the next one's, by at least the next one's length (dims sorted).
bool transformed_dims_nest(const Layout& strides, const Shape& shape, const std::vector<std::int64_t>& dims) {
  for (std::size_t k = 1; k < dims.size(); ++k) {
    const std::int64_t outer = strides[static_cast<std::size_t>(dims[k - 1])];
    const std::int64_t inner = strides[static_cast<std::size_t>(dims[k])];
    if (inner <= 0 || outer % inner != 0 || outer / inner < shape[static_cast<std::size_t>(dims[k])]) return false;
  }
  return true;
}

// One backend call. The input is read in place when it is dense in some dim order whose
// transformed dims nest (a contiguous tensor, or an earlier transform's permuted result);
// otherwise from a dense copy. The result is laid out as PyTorch's cuFFT and MKL paths lay it
// out: the batch dims outside in the input's memory order, the transformed dims inside, and
// returned as a view in the input's dim order. A transform over dim 0 of a matrix thus
// writes every signal contiguously (cuFFT's ostride 1) and returns a non-contiguous tensor,
// as torch.fft.fft(x, dim=0) does, instead of writing each signal with a stride of the row.
Tensor run_dense_step(Op op, const Tensor& x, const Step& s) {
  const DType real = real_of(x.dtype());
  const Shape& in_shape = x.shape();
  Shape out_shape = in_shape;
  const auto last = static_cast<std::size_t>(s.dims.back());
  if (s.type == FftType::R2C) out_shape[last] = s.last_n / 2 + 1;
  if (s.type == FftType::C2R) out_shape[last] = s.last_n;
  const DType out_dtype = s.type == FftType::C2R ? real : complex_of(real);
  const std::size_t rank = in_shape.size();
  auto transformed = [&](std::size_t i) {
    return std::find(s.dims.begin(), s.dims.end(), static_cast<std::int64_t>(i)) != s.dims.end();
  };

  // A C2C input that is a dense permutation of its memory (an earlier transform's result) is
  // read in that order; anything else, and every real-side input, dense in index order (run_step
  // moved real-side dims last: the CUDA backend's C2R preparation and R2C alignment copy assume
  // index order).
  std::vector<std::int64_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  std::vector<std::int64_t> in_order = identity;
  if (s.type == FftType::C2C)
    if (const auto order = frontend::memory_order(x)) in_order = *order;
  // The dense strides of that order, not x.strides(): they agree on every dim of size > 1,
  // but a size-1 dim's stride is arbitrary (0 after an expand, the parent's row after a
  // narrow), and a transformed size-1 dim's stride reaches cuFFT as istride or an inembed
  // ratio (istride 0, a huge inembed, a plan per distinct stride).
  Layout in_strides = strides_in_order(in_shape, in_order);
  Tensor in_memory = x.permute(in_order);
  if (!in_memory.is_contiguous() || !transformed_dims_nest(in_strides, in_shape, s.dims)) {
    in_memory = x.contiguous();
    in_order = identity;
    in_strides = strides_in_order(in_shape, in_order);
  }
  std::vector<std::int64_t> out_order;
  if (s.index_order_out) {
    out_order = identity;
  } else {
    for (const std::int64_t d : in_order)
      if (!transformed(static_cast<std::size_t>(d))) out_order.push_back(d);
    out_order.insert(out_order.end(), s.dims.begin(), s.dims.end());
  }
  Shape memory_shape;
  for (const std::int64_t d : out_order) memory_shape.push_back(out_shape[static_cast<std::size_t>(d)]);
  const Tensor out_memory = frontend::allocate(memory_shape, out_dtype, x.device());
  const Tensor out = out_memory.permute(frontend::inverse_permutation(out_order));
  if (out.numel() == 0) return out;
  const Layout out_strides = strides_in_order(out_shape, out_order);

  FftDesc d;
  d.type = s.type;
  d.real_dtype = real;
  d.inverse = s.inverse;
  d.rank = static_cast<int>(s.dims.size());
  d.scale = s.scale;
  d.conjugate_input = s.conj_in;
  d.conjugate_output = s.conj_out;
  for (std::size_t k = 0; k < s.dims.size(); ++k) {
    const auto dim = static_cast<std::size_t>(s.dims[k]);
    d.n[k] = (s.type != FftType::C2C && dim == last) ? s.last_n : in_shape[dim];
    d.in_stride[k] = in_strides[dim];
    d.out_stride[k] = out_strides[dim];
  }
  // Batch dims: every other dim of size > 1, taken in the input's memory order; one is merged
  // into the previous when both layouts chain them (stride = next size x next stride).
  int b = -1;
  std::int64_t previous = -1;  // the dim merged last into batch b
  for (const std::int64_t dim : in_order) {
    const auto i = static_cast<std::size_t>(dim);
    if (transformed(i) || in_shape[i] == 1) continue;
    if (previous >= 0) {
      const auto p = static_cast<std::size_t>(previous);
      if (in_strides[p] == in_shape[i] * in_strides[i] && out_strides[p] == out_shape[i] * out_strides[i]) {
        const auto u = static_cast<std::size_t>(b);
        d.batch_sizes[u] *= in_shape[i];
        d.in_batch_stride[u] = in_strides[i];
        d.out_batch_stride[u] = out_strides[i];
        previous = dim;
        continue;
      }
    }
    ++b;
    FERRITE_CHECK(b < kMaxFftBatchDims, Unsupported, name_of(op), ": more than ", kMaxFftBatchDims,
                  " separate batch dims in ", x.description());
    const auto u = static_cast<std::size_t>(b);
    d.batch_sizes[u] = in_shape[i];
    d.in_batch_stride[u] = in_strides[i];
    d.out_batch_stride[u] = out_strides[i];
    previous = dim;
  }
  d.batch_rank = b + 1;
  backend(x.device()).fft_ops().execute(d, in_memory.buffer(), out_memory.buffer());
  return out;
}

// Resolved (s, dim) of an n-dimensional transform: sorted dims with their lengths.
struct Plan {
  std::vector<std::int64_t> dims;  // in the user's order (the last is the halved one)
  std::vector<std::int64_t> n;     // signal lengths (-1: the input's, resolved later)
};

Plan resolve(Op op, const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& dim) {
  const char* name = name_of(op);
  Plan p;
  const std::int64_t rank = x.dim();
  FERRITE_CHECK(rank >= 1, InvalidArgument, name, ": expects a tensor of rank >= 1, got ", x.description());
  if (dim) {
    for (std::int64_t d : *dim) p.dims.push_back(frontend::wrap_dim(name, x, d));
    FERRITE_CHECK(!s || s->size() == dim->size(), InvalidArgument, name, ": s has ", s ? s->size() : 0,
                  " lengths but dim has ", dim->size(), " dims");
  } else if (s) {
    FERRITE_CHECK(static_cast<std::int64_t>(s->size()) <= rank, InvalidArgument, name, ": s has ", s->size(),
                  " lengths for an input of rank ", rank, " (", x.description(), ")");
    for (std::int64_t d = rank - static_cast<std::int64_t>(s->size()); d < rank; ++d) p.dims.push_back(d);
  } else {
    for (std::int64_t d = 0; d < rank; ++d) p.dims.push_back(d);
  }
  std::vector<std::int64_t> sorted = p.dims;
  std::sort(sorted.begin(), sorted.end());
  FERRITE_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), InvalidArgument, name,
                ": dims must be unique, got a repeated dim for ", x.description());
  FERRITE_CHECK(!p.dims.empty(), InvalidArgument, name, ": no dim to transform in ", x.description());
  for (std::size_t k = 0; k < p.dims.size(); ++k) {
    const std::int64_t want = s ? (*s)[k] : -1;
    FERRITE_CHECK(want == -1 || want >= 1, InvalidArgument, name, ": invalid number of data points (", want,
                  ") specified for dim ", p.dims[k]);
    p.n.push_back(want);
  }
  return p;
}

// Splits sorted dims into groups of at most kMaxFftRank, the last group holding the last dim.
std::vector<std::vector<std::int64_t>> groups_of(std::vector<std::int64_t> dims) {
  std::vector<std::vector<std::int64_t>> groups;
  while (!dims.empty()) {
    const std::size_t take = std::min<std::size_t>(dims.size(), kMaxFftRank);
    groups.insert(groups.begin(), std::vector<std::int64_t>(dims.end() - static_cast<std::ptrdiff_t>(take), dims.end()));
    dims.resize(dims.size() - take);
  }
  return groups;
}

Tensor to_complex(const Tensor& x) { return is_complex(x.dtype()) ? x : x.to(complex_of(x.dtype())); }

// The first `count` of the plan's dims cropped or zero-padded in `y` to their n (the input's
// extent where s gives none, checked); returns the product of those n (the signal size the norm
// divides by). c2r sizes its last dim from the output's n itself, so it passes one dim fewer.
double resize_to_plan(Op op, Tensor& y, const Plan& p, std::size_t count) {
  double signal = 1;
  for (std::size_t k = 0; k < count; ++k) {
    const std::int64_t n = p.n[k] == -1 ? checked_length(op, y.size(p.dims[k]), p.dims[k]) : p.n[k];
    y = resize_dim(y, p.dims[k], n);
    signal *= static_cast<double>(n);
  }
  return signal;
}

// c2c's and c2r's input: checked (any dtype), its plan, and its values as complex.
struct ComplexInput {
  Plan p;
  Tensor y;
};
ComplexInput complex_input(Op op, const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& dim) {
  check_input(op, x, Input::Any);
  return {resolve(op, x, s, dim), to_complex(x)};
}

Tensor c2c(Op op, const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& dim, Norm norm,
           bool forward) {
  auto [p, y] = complex_input(op, x, s, dim);
  const double signal = resize_to_plan(op, y, p, p.dims.size());
  std::vector<std::int64_t> sorted = p.dims;
  std::sort(sorted.begin(), sorted.end());
  const auto groups = groups_of(sorted);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    Step st{FftType::C2C, !forward, groups[g]};
    if (g + 1 == groups.size()) st.scale = norm_scale(norm, forward, signal);
    y = run_step(op, y, st);
  }
  return y;
}

// rfftn / ihfft: real x, R2C over the last dim's group first, then C2C forward over the rest.
Tensor r2c(Op op, const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& dim, Norm norm,
           bool conj_out) {
  check_input(op, x, Input::Real);
  const Plan p = resolve(op, x, s, dim);
  Tensor y = x;
  const double signal = resize_to_plan(op, y, p, p.dims.size());
  const std::int64_t last = p.dims.back();
  std::vector<std::int64_t> rest(p.dims.begin(), p.dims.end() - 1);
  std::sort(rest.begin(), rest.end());
  // The halved dim's step may take up to kMaxFftRank - 1 other dims that come before it.
  std::vector<std::int64_t> first{last};
  while (first.size() < static_cast<std::size_t>(kMaxFftRank) && !rest.empty() && rest.back() < last) {
    first.insert(first.begin(), rest.back());
    rest.pop_back();
  }
  const auto groups = groups_of(rest);
  // ihfft (conj_out) is an inverse-normalised transform.
  const double scale = norm_scale(norm, !conj_out, signal);
  Step st{FftType::R2C, false, first, y.size(last)};
  st.conj_out = conj_out;
  if (groups.empty()) st.scale = scale;
  y = run_step(op, y, st);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    Step c{FftType::C2C, false, groups[g]};
    if (g + 1 == groups.size()) c.scale = scale;
    y = run_step(op, y, c);
  }
  return y;
}

// irfftn / hfft: C2C inverse over the other dims first, then C2R over the last dim's group.
Tensor c2r(Op op, const Tensor& x, const std::optional<Dims>& s, const std::optional<Dims>& dim, Norm norm,
           bool conj_in) {
  auto [p, y] = complex_input(op, x, s, dim);
  double signal = resize_to_plan(op, y, p, p.dims.size() - 1);
  // The last dim holds n / 2 + 1 of the output's n (default: 2 (extent - 1)) points.
  const std::int64_t last = p.dims.back();
  // 2 (extent - 1), checked: an extent near 2^62 (an empty input's dim) overflowed it (UBSan,
  // api_fuzz_test).
  const std::int64_t last_n =
      p.n.back() != -1 ? p.n.back()
                       : detail::checked_mul(2, y.size(last) - 1, [&] {
                           return std::string(name_of(op)) + ": the default output length 2 * (" +
                                  std::to_string(y.size(last)) + " - 1) of dim " + std::to_string(last) +
                                  " overflows int64";
                         });
  checked_length(op, last_n, last);
  y = resize_dim(y, last, last_n / 2 + 1);
  signal *= static_cast<double>(last_n);
  std::vector<std::int64_t> rest(p.dims.begin(), p.dims.end() - 1);
  std::sort(rest.begin(), rest.end());
  // C2R runs over the last dim alone: the inverse C2C over the others comes first, so a
  // spectrum that is not exactly Hermitian in every dim gives the same result on every backend
  // (each 1-D C2R ignores only the imaginary parts of its zero-frequency and Nyquist terms).
  const std::vector<std::int64_t> final_dims{last};
  // hfft (conj_in) is a forward-normalised transform.
  const double scale = norm_scale(norm, conj_in, signal);
  // conj(x) commutes into the C2C steps as conj of their output only if applied first, so
  // hfft (always one dim) never has C2C steps; irfftn has no conjugation.
  for (const auto& g : groups_of(rest)) {
    Step c{FftType::C2C, true, g};
    c.index_order_out = true;
    y = run_step(op, y, c);
  }
  Step st{FftType::C2R, true, final_dims, last_n};
  st.scale = scale;
  st.conj_in = conj_in;
  return run_step(op, y, st);
}

// A 1-D transform's n as the n-D transforms' s (one dim): every 1-D form checks it here, before
// anything else about its input, with the message of its own ("number of data points").
std::optional<Dims> checked_one(Op op, std::optional<std::int64_t> n) {
  FERRITE_CHECK(!n || *n >= 1, InvalidArgument, name_of(op), ": invalid number of data points (", n.value_or(0),
                ") specified");
  if (!n) return std::nullopt;
  return Dims{*n};
}

}  // namespace

Tensor fft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t dim, Norm norm) {
  return c2c(Op::Fft, x, checked_one(Op::Fft, n), Dims{dim}, norm, true);
}
Tensor ifft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t dim, Norm norm) {
  return c2c(Op::Ifft, x, checked_one(Op::Ifft, n), Dims{dim}, norm, false);
}
Tensor rfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t dim, Norm norm) {
  return r2c(Op::Rfft, x, checked_one(Op::Rfft, n), Dims{dim}, norm, false);
}
Tensor irfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t dim, Norm norm) {
  return c2r(Op::Irfft, x, checked_one(Op::Irfft, n), Dims{dim}, norm, false);
}
Tensor hfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t dim, Norm norm) {
  return c2r(Op::Hfft, x, checked_one(Op::Hfft, n), Dims{dim}, norm, true);
}
Tensor ihfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t dim, Norm norm) {
  return r2c(Op::Ihfft, x, checked_one(Op::Ihfft, n), Dims{dim}, norm, true);
}

Tensor fft2(const Tensor& x, std::optional<Dims> s, Dims dim, Norm norm) {
  return c2c(Op::Fft2, x, s, dim, norm, true);
}
Tensor ifft2(const Tensor& x, std::optional<Dims> s, Dims dim, Norm norm) {
  return c2c(Op::Ifft2, x, s, dim, norm, false);
}
Tensor rfft2(const Tensor& x, std::optional<Dims> s, Dims dim, Norm norm) {
  return r2c(Op::Rfft2, x, s, dim, norm, false);
}
Tensor irfft2(const Tensor& x, std::optional<Dims> s, Dims dim, Norm norm) {
  return c2r(Op::Irfft2, x, s, dim, norm, false);
}
Tensor fftn(const Tensor& x, std::optional<Dims> s, std::optional<Dims> dim, Norm norm) {
  return c2c(Op::Fftn, x, s, dim, norm, true);
}
Tensor ifftn(const Tensor& x, std::optional<Dims> s, std::optional<Dims> dim, Norm norm) {
  return c2c(Op::Ifftn, x, s, dim, norm, false);
}
Tensor rfftn(const Tensor& x, std::optional<Dims> s, std::optional<Dims> dim, Norm norm) {
  return r2c(Op::Rfftn, x, s, dim, norm, false);
}
Tensor irfftn(const Tensor& x, std::optional<Dims> s, std::optional<Dims> dim, Norm norm) {
  return c2r(Op::Irfftn, x, s, dim, norm, false);
}

namespace {
Tensor frequencies(const char* name, std::int64_t n, double d, DType dtype, Device device, bool one_sided) {
  FERRITE_CHECK(n >= 0, InvalidArgument, name, ": n must be non-negative, got ", n);
  FERRITE_CHECK(dtype == DType::F32 || dtype == DType::F64, Unsupported, name, ": dtype ", dtype_name(dtype),
                " is not supported (F32 or F64)");
  const std::int64_t count = one_sided ? n / 2 + 1 : n;
  // host_scratch: an n beyond the host's memory (n = 2^40, or 2^63 - 1, which std::vector
  // refuses with length_error) is Error(OutOfMemory), never a std exception.
  std::vector<double> v = detail::host_scratch<double>(n == 0 ? 0 : count, name);
  const double scale = 1.0 / (d * static_cast<double>(n));
  const std::int64_t positive = (n + 1) / 2;  // 0 .. ceil(n/2) - 1
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(v.size()); ++i) {
    const std::int64_t k = one_sided || i < positive ? i : i - n;
    v[static_cast<std::size_t>(i)] = static_cast<double>(k) * scale;
  }
  Tensor t = from_vector(v, {static_cast<std::int64_t>(v.size())});
  return t.to(dtype).to(device);
}

Tensor shift(const Tensor& x, const std::optional<Dims>& dim, bool inverse) {
  const char* name = inverse ? "ifftshift" : "fftshift";
  frontend::check_defined(name, {&x});
  Dims dims;
  if (dim) {
    for (std::int64_t d : *dim) dims.push_back(frontend::wrap_dim(name, x, d));
  } else {
    for (std::int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  }
  Tensor y = x;
  for (std::int64_t d : dims) {
    const std::int64_t n = x.size(d);
    y = roll(y, inverse ? -(n / 2) : n / 2, d);
  }
  return dims.empty() ? x.clone() : y;
}
}  // namespace

Tensor fftfreq(std::int64_t n, double d, DType dtype, Device device) {
  return frequencies("fftfreq", n, d, dtype, device, false);
}
Tensor rfftfreq(std::int64_t n, double d, DType dtype, Device device) {
  return frequencies("rfftfreq", n, d, dtype, device, true);
}
Tensor fftshift(const Tensor& x, std::optional<Dims> dim) { return shift(x, dim, false); }
Tensor ifftshift(const Tensor& x, std::optional<Dims> dim) { return shift(x, dim, true); }

FftPlanCacheInfo plan_cache_info(Device device) { return backend(device).fft_ops().plan_cache_info(device.index); }
void set_plan_cache_capacity(Device device, std::size_t capacity) {
  backend(device).fft_ops().set_plan_cache_capacity(device.index, capacity);
}
void clear_plan_cache(Device device) { backend(device).fft_ops().clear_plan_cache(device.index); }

}  // namespace ferrite::fft
