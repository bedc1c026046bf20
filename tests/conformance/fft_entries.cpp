// Conformance entries of the FFT family. The CPU backend is checked against a direct O(n²)
// DFT in long double written here (torch.fft semantics from scratch: padding/truncation,
// Hermitian extension for irfft/hfft, the three norms), on sizes 1, 2, 3, 7, 16, 97, 1000,
// 4096 and the prime 4099, ranks 1-4, transforms over non-innermost and several dims, empty
// batches; and against identities at 2^20 (round trip, the transform of a delta and of a
// single tone, exact analytic values). CUDA is compared with the CPU backend.
//
// Inputs are scaled per case so that outputs are O(1) whatever the length and norm, so the
// default per-dtype tolerances bound the error relative to the signal's magnitude.
#include <cmath>
#include <complex>
#include <numbers>

#include "conformance/conformance.hpp"

namespace ferrite::conformance {
namespace {

using cl = std::complex<long double>;
using fft::Dims;
using fft::Norm;

enum Kind : std::int64_t { kFft, kIfft, kRfft, kIrfft, kHfft, kIhfft, kFftn, kIfftn, kRfftn, kIrfftn, kFft2, kRfft2, kIrfft2, kIfft2 };

struct Host {
  Shape shape;
  std::vector<cl> v;
};

Host to_host(const Tensor& t) {
  Host h{t.shape(), {}};
  const auto values = t.to(Device::cpu()).to(DType::C128).to_vector<std::complex<double>>();
  for (const auto& x : values) h.v.emplace_back(x.real(), x.imag());
  return h;
}

std::int64_t inner_of(const Shape& s, std::int64_t dim) {
  std::int64_t inner = 1;
  for (std::size_t i = static_cast<std::size_t>(dim) + 1; i < s.size(); ++i) inner *= s[i];
  return inner;
}

// Zero padding or truncation along dim.
Host resized(const Host& h, std::int64_t dim, std::int64_t n) {
  Host r{h.shape, {}};
  r.shape[static_cast<std::size_t>(dim)] = n;
  r.v.assign(static_cast<std::size_t>(shape_numel(r.shape)), cl(0, 0));
  const std::int64_t have = h.shape[static_cast<std::size_t>(dim)], inner = inner_of(h.shape, dim);
  const std::int64_t outer = have == 0 ? 0 : static_cast<std::int64_t>(h.v.size()) / (have * inner);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t j = 0; j < std::min(have, n); ++j)
      for (std::int64_t i = 0; i < inner; ++i)
        r.v[static_cast<std::size_t>((o * n + j) * inner + i)] = h.v[static_cast<std::size_t>((o * have + j) * inner + i)];
  return r;
}

// Direct DFT along dim, unnormalised; roots indexed by (j*k) mod n, each computed once.
Host dft(const Host& h, std::int64_t dim, bool inverse) {
  const std::int64_t n = h.shape[static_cast<std::size_t>(dim)], inner = inner_of(h.shape, dim);
  std::vector<cl> roots(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    const long double a = 2 * std::numbers::pi_v<long double> * static_cast<long double>(j) / static_cast<long double>(n);
    roots[static_cast<std::size_t>(j)] = cl(std::cos(a), inverse ? std::sin(a) : -std::sin(a));
  }
  Host r{h.shape, std::vector<cl>(h.v.size())};
  const std::int64_t outer = n == 0 ? 0 : static_cast<std::int64_t>(h.v.size()) / (n * inner);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i)
      for (std::int64_t k = 0; k < n; ++k) {
        cl sum(0, 0);
        for (std::int64_t j = 0; j < n; ++j)
          sum += h.v[static_cast<std::size_t>((o * n + j) * inner + i)] * roots[static_cast<std::size_t>((j * k) % n)];
        r.v[static_cast<std::size_t>((o * n + k) * inner + i)] = sum;
      }
  return r;
}

void scale(Host& h, long double s) {
  for (auto& x : h.v) x *= s;
}
void conjugate(Host& h) {
  for (auto& x : h.v) x = std::conj(x);
}

long double norm_factor(Norm norm, bool forward, long double n) {
  switch (norm) {
    case Norm::Backward: return forward ? 1 : 1 / n;
    case Norm::Ortho: return 1 / std::sqrt(n);
    case Norm::Forward: return forward ? 1 / n : 1;
  }
  return 1;
}

// One-sided spectrum along dim (first n/2 + 1 terms of the full one) -> real signal of n.
Host hermitian_inverse(const Host& h, std::int64_t dim, std::int64_t n) {
  Host half = resized(h, dim, n / 2 + 1);
  Host full = resized(half, dim, n);
  const std::int64_t inner = inner_of(full.shape, dim);
  const std::int64_t outer = static_cast<std::int64_t>(full.v.size()) / (n * inner);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i)
      for (std::int64_t j = n / 2 + 1; j < n; ++j)
        full.v[static_cast<std::size_t>((o * n + j) * inner + i)] =
            std::conj(half.v[static_cast<std::size_t>((o * (n / 2 + 1) + (n - j)) * inner + i)]);
  Host r = dft(full, dim, true);
  for (auto& x : r.v) x = cl(x.real(), 0);
  return r;
}

Tensor to_tensor(const Host& h, DType dtype) {
  if (is_complex(dtype)) {
    std::vector<std::complex<double>> v;
    for (const auto& x : h.v) v.emplace_back(static_cast<double>(x.real()), static_cast<double>(x.imag()));
    return from_vector(v, h.shape).to(dtype);
  }
  std::vector<double> v;
  for (const auto& x : h.v) v.push_back(static_cast<double>(x.real()));
  return from_vector(v, h.shape).to(dtype);
}

DType complex_of(DType d) { return d == DType::F64 || d == DType::C128 ? DType::C128 : DType::C64; }
DType real_of(DType d) { return d == DType::F64 || d == DType::C128 ? DType::F64 : DType::F32; }

// ---- the cases: ints = {kind, norm, count of s (-1: none), s..., count of dims (-1: none), dims...} ----

struct Spec {
  Kind kind;
  Norm norm;
  std::optional<Dims> s, dims;
};

std::vector<std::int64_t> encode(const Spec& sp) {
  std::vector<std::int64_t> v{sp.kind, static_cast<std::int64_t>(sp.norm)};
  for (const auto* list : {&sp.s, &sp.dims}) {
    v.push_back(*list ? static_cast<std::int64_t>((*list)->size()) : -1);
    if (*list) v.insert(v.end(), (*list)->begin(), (*list)->end());
  }
  return v;
}

Spec decode(const std::vector<std::int64_t>& v) {
  Spec sp{static_cast<Kind>(v[0]), static_cast<Norm>(v[1]), std::nullopt, std::nullopt};
  std::size_t at = 2;
  for (auto* list : {&sp.s, &sp.dims}) {
    const std::int64_t count = v[at++];
    if (count >= 0) {
      *list = Dims(v.begin() + static_cast<std::ptrdiff_t>(at), v.begin() + static_cast<std::ptrdiff_t>(at + static_cast<std::size_t>(count)));
      at += static_cast<std::size_t>(count);
    }
  }
  return sp;
}

bool one_dim(Kind k) { return k <= kIhfft; }
bool real_input(Kind k) { return k == kRfft || k == kIhfft || k == kRfftn || k == kRfft2; }
bool hermitian_input(Kind k) { return k == kIrfft || k == kHfft || k == kIrfftn || k == kIrfft2; }

Tensor run_spec(const Spec& sp, const Tensor& x) {
  const std::optional<std::int64_t> n = sp.s ? std::optional<std::int64_t>((*sp.s)[0]) : std::nullopt;
  const std::int64_t dim = sp.dims ? (*sp.dims)[0] : -1;
  switch (sp.kind) {
    case kFft: return fft::fft(x, n, dim, sp.norm);
    case kIfft: return fft::ifft(x, n, dim, sp.norm);
    case kRfft: return fft::rfft(x, n, dim, sp.norm);
    case kIrfft: return fft::irfft(x, n, dim, sp.norm);
    case kHfft: return fft::hfft(x, n, dim, sp.norm);
    case kIhfft: return fft::ihfft(x, n, dim, sp.norm);
    case kFftn: return fft::fftn(x, sp.s, sp.dims, sp.norm);
    case kIfftn: return fft::ifftn(x, sp.s, sp.dims, sp.norm);
    case kRfftn: return fft::rfftn(x, sp.s, sp.dims, sp.norm);
    case kIrfftn: return fft::irfftn(x, sp.s, sp.dims, sp.norm);
    case kFft2: return fft::fft2(x, sp.s, sp.dims.value_or(Dims{-2, -1}), sp.norm);
    case kIfft2: return fft::ifft2(x, sp.s, sp.dims.value_or(Dims{-2, -1}), sp.norm);
    case kRfft2: return fft::rfft2(x, sp.s, sp.dims.value_or(Dims{-2, -1}), sp.norm);
    case kIrfft2: return fft::irfft2(x, sp.s, sp.dims.value_or(Dims{-2, -1}), sp.norm);
  }
  return {};
}

// The transformed dims (wrapped, user order) and their signal lengths, torch's rules.
void resolve(const Spec& sp, const Shape& shape, Dims& dims, Dims& n) {
  const auto rank = static_cast<std::int64_t>(shape.size());
  auto wrap = [&](std::int64_t d) { return d < 0 ? d + rank : d; };
  dims.clear();
  n.clear();
  std::optional<Dims> given = sp.dims;
  if (!given && (sp.kind == kFft2 || sp.kind == kIfft2 || sp.kind == kRfft2 || sp.kind == kIrfft2)) given = Dims{-2, -1};
  if (one_dim(sp.kind) && !given) given = Dims{-1};
  if (given) {
    for (auto d : *given) dims.push_back(wrap(d));
  } else if (sp.s) {
    for (std::int64_t d = rank - static_cast<std::int64_t>(sp.s->size()); d < rank; ++d) dims.push_back(d);
  } else {
    for (std::int64_t d = 0; d < rank; ++d) dims.push_back(d);
  }
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const std::int64_t have = shape[static_cast<std::size_t>(dims[k])];
    const bool given_len = sp.s && (*sp.s)[k] != -1;
    std::int64_t len = given_len ? (*sp.s)[k] : have;
    if (!given_len && hermitian_input(sp.kind) && k + 1 == dims.size()) len = 2 * (have - 1);
    n.push_back(len);
  }
}

Tensor reference(const Spec& sp, const Tensor& x, DType out_dtype) {
  Dims dims, n;
  resolve(sp, x.shape(), dims, n);
  Host h = to_host(x);
  long double signal = 1;
  for (auto v : n) signal *= static_cast<long double>(v);
  const bool forward = sp.kind == kFft || sp.kind == kRfft || sp.kind == kHfft || sp.kind == kFftn ||
                       sp.kind == kRfftn || sp.kind == kFft2 || sp.kind == kRfft2;
  if (hermitian_input(sp.kind)) {
    if (sp.kind == kHfft) conjugate(h);
    for (std::size_t k = 0; k + 1 < dims.size(); ++k) h = dft(resized(h, dims[k], n[k]), dims[k], true);
    h = hermitian_inverse(h, dims.back(), n.back());
  } else {
    for (std::size_t k = 0; k < dims.size(); ++k) h = dft(resized(h, dims[k], n[k]), dims[k], !forward && sp.kind != kIhfft);
    if (real_input(sp.kind)) h = resized(h, dims.back(), n.back() / 2 + 1);
    if (sp.kind == kIhfft) conjugate(h);
  }
  scale(h, norm_factor(sp.norm, forward, signal));
  return to_tensor(h, out_dtype);
}

DType output_dtype(Kind k, DType in) { return hermitian_input(k) ? real_of(in) : complex_of(in); }

// Input amplitude that makes outputs O(1): rms(out) ≈ amp · sqrt(N) · norm factor.
double amplitude(const Spec& sp, const Shape& shape) {
  Dims dims, n;
  resolve(sp, shape, dims, n);
  double signal = 1;
  for (auto v : n) signal *= static_cast<double>(v);
  const bool forward = sp.kind == kFft || sp.kind == kRfft || sp.kind == kHfft || sp.kind == kFftn ||
                       sp.kind == kRfftn || sp.kind == kFft2 || sp.kind == kRfft2;
  const double f = static_cast<double>(norm_factor(sp.norm, forward, signal));
  return 1.0 / (std::sqrt(signal) * f);
}

Case make_case(const Spec& sp, const Shape& shape, DType dtype, Rng& rng) {
  const double amp = amplitude(sp, shape);
  Tensor x = random(shape, dtype, rng, -amp, amp);
  std::string label = shape_str(shape) + " kind " + std::to_string(sp.kind) + " norm " +
                      std::to_string(static_cast<int>(sp.norm));
  if (sp.s) label += " s " + shape_str(*sp.s);
  if (sp.dims) label += " dim " + shape_str(*sp.dims);
  return {label, {x}, encode(sp)};
}

Entry fft_entry(const std::string& op, std::vector<DType> dtypes, std::function<std::vector<Case>(DType, Rng&)> cases,
                Kind error_kind) {
  Entry e;
  e.op = op;
  e.dtypes = std::move(dtypes);
  e.cases = std::move(cases);
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{run_spec(decode(c.ints), c.inputs[0])}; };
  e.reference_outputs = [](const Case& c) {
    const Spec sp = decode(c.ints);
    return std::vector<Tensor>{reference(sp, c.inputs[0], output_dtype(sp.kind, c.inputs[0].dtype()))};
  };
  e.reference_tolerance = default_tolerance;
  e.backend_tolerance = default_tolerance;
  e.reads_views_in_place = true;  // C2C steps run cuFFT with a permuted view's strides
  e.errors = [error_kind](DType dtype) {
    std::vector<ErrorCase> errors;
    auto call = [error_kind](Spec sp, Shape shape, DType d) {
      return [=](Device device) { run_spec(sp, zeros(shape, d, device)); };
    };
    const Kind k = error_kind;
    const std::optional<Dims> last = one_dim(k) ? std::nullopt : std::optional<Dims>(Dims{-1});
    errors.push_back({"dim out of range", call({k, Norm::Backward, std::nullopt, Dims{5}}, {4, 4}, dtype),
                      ErrorKind::IndexOutOfRange, "dim"});
    errors.push_back({"n = 0", call({k, Norm::Backward, Dims{0}, last}, {4, 4}, dtype), ErrorKind::InvalidArgument,
                      "invalid number of data points (0)"});
    errors.push_back({"n = -3", call({k, Norm::Backward, Dims{-3}, last}, {4, 4}, dtype),
                      ErrorKind::InvalidArgument, "invalid number of data points (-3)"});
    errors.push_back({"F16 input", call({k, Norm::Backward, std::nullopt, std::nullopt}, {4, 4}, DType::F16),
                      ErrorKind::Unsupported, "F16"});
    errors.push_back({"I32 input", call({k, Norm::Backward, std::nullopt, std::nullopt}, {4, 4}, DType::I32),
                      ErrorKind::Unsupported, "I32"});
    errors.push_back({"0-d input", call({k, Norm::Backward, std::nullopt, std::nullopt}, {}, dtype),
                      ErrorKind::InvalidArgument, "rank >= 1"});
    if (real_input(k) && !is_complex(dtype))
      errors.push_back({"complex input", call({k, Norm::Backward, std::nullopt, std::nullopt}, {4, 4}, complex_of(dtype)),
                        ErrorKind::DTypeMismatch, "expects a real input tensor"});
    return errors;
  };
  return e;
}

const std::vector<DType> kAll = {DType::F32, DType::F64, DType::C64, DType::C128};
const std::vector<DType> kReal = {DType::F32, DType::F64};
const std::vector<DType> kComplexIn = {DType::C64, DType::C128};

Norm norm_of(std::size_t i) { return static_cast<Norm>(i % 3); }

// The 1-D cases of one kind: the sizes, non-innermost dims, rank 4, an empty batch,
// n smaller and larger than the input (odd n for the Hermitian kinds), every norm.
std::vector<Case> one_dim_cases(Kind k, DType dtype, Rng& rng) {
  std::vector<Case> cases;
  std::size_t i = 0;
  const bool herm = hermitian_input(k);
  for (std::int64_t n : {1, 2, 3, 7, 16, 97, 1000, 4096, 4099}) {
    if (herm && n == 1) continue;  // irfft of one term: default n = 0
    const std::int64_t rows = n >= 1000 ? 1 : 3;
    cases.push_back(make_case({k, norm_of(i++), std::nullopt, std::nullopt}, {rows, n}, dtype, rng));
  }
  cases.push_back(make_case({k, norm_of(i++), std::nullopt, Dims{0}}, {6, 5, 3}, dtype, rng));
  cases.push_back(make_case({k, norm_of(i++), std::nullopt, Dims{1}}, {3, 10, 7}, dtype, rng));
  cases.push_back(make_case({k, norm_of(i++), std::nullopt, Dims{-2}}, {2, 3, 9, 5}, dtype, rng));
  cases.push_back(make_case({k, norm_of(i++), std::nullopt, Dims{-1}}, {0, 8}, dtype, rng));
  cases.push_back(make_case({k, norm_of(i++), Dims{5}, Dims{-1}}, {2, 16}, dtype, rng));
  cases.push_back(make_case({k, norm_of(i++), Dims{20}, Dims{0}}, {7, 3}, dtype, rng));
  cases.push_back(make_case({k, norm_of(i++), Dims{herm ? 9 : 11}, Dims{-1}}, {2, 6}, dtype, rng));
  cases.push_back(make_case({k, norm_of(i++), Dims{herm ? 15 : 13}, Dims{1}}, {2, 12, 3}, dtype, rng));
  return cases;
}

std::vector<Case> multi_dim_cases(Kind k, DType dtype, Rng& rng) {
  std::vector<Case> cases;
  std::size_t i = 0;
  const bool two = k == kFft2 || k == kIfft2 || k == kRfft2 || k == kIrfft2;
  cases.push_back(make_case({k, norm_of(i++), std::nullopt, std::nullopt}, {4, 6, 10}, dtype, rng));
  cases.push_back(make_case({k, norm_of(i++), Dims{4, 9}, Dims{0, 2}}, {3, 7, 5}, dtype, rng));
  cases.push_back(make_case({k, norm_of(i++), std::nullopt, Dims{2, 0}}, {5, 3, 8}, dtype, rng));
  cases.push_back(make_case({k, norm_of(i++), Dims{6, -1}, std::nullopt}, {2, 5, 7}, dtype, rng));
  cases.push_back(make_case({k, norm_of(i++), std::nullopt, two ? std::nullopt : std::optional<Dims>(Dims{1, 2})},
                            {0, 4, 6}, dtype, rng));
  if (!two) {
    cases.push_back(make_case({k, norm_of(i++), std::nullopt, std::nullopt}, {3, 4, 5, 6}, dtype, rng));
    cases.push_back(make_case({k, norm_of(i++), std::nullopt, Dims{1, 3}}, {2, 3, 4, 5}, dtype, rng));
    cases.push_back(make_case({k, norm_of(i++), Dims{3, 5, 4, 7}, Dims{3, 0, 1, 2}}, {2, 3, 4, 5}, dtype, rng));
  }
  return cases;
}

Entry one_dim_entry(const std::string& op, Kind k, std::vector<DType> dtypes) {
  return fft_entry(op, std::move(dtypes), [k](DType d, Rng& rng) { return one_dim_cases(k, d, rng); }, k);
}
Entry multi_dim_entry(const std::string& op, Kind k, std::vector<DType> dtypes) {
  return fft_entry(op, std::move(dtypes), [k](DType d, Rng& rng) { return multi_dim_cases(k, d, rng); }, k);
}

FERRITE_CONFORMANCE(one_dim_entry("fft", kFft, kAll));
FERRITE_CONFORMANCE(one_dim_entry("ifft", kIfft, kAll));
FERRITE_CONFORMANCE(one_dim_entry("rfft", kRfft, kReal));
FERRITE_CONFORMANCE(one_dim_entry("irfft", kIrfft, kAll));
FERRITE_CONFORMANCE(one_dim_entry("hfft", kHfft, kAll));
FERRITE_CONFORMANCE(one_dim_entry("ihfft", kIhfft, kReal));
FERRITE_CONFORMANCE(multi_dim_entry("fft2", kFft2, kAll));
FERRITE_CONFORMANCE(multi_dim_entry("ifft2", kIfft2, kComplexIn));
FERRITE_CONFORMANCE(multi_dim_entry("rfft2", kRfft2, kReal));
FERRITE_CONFORMANCE(multi_dim_entry("irfft2", kIrfft2, kComplexIn));
FERRITE_CONFORMANCE(multi_dim_entry("fftn", kFftn, kAll));
FERRITE_CONFORMANCE(multi_dim_entry("ifftn", kIfftn, kAll));
FERRITE_CONFORMANCE(multi_dim_entry("rfftn", kRfftn, kReal));
FERRITE_CONFORMANCE(multi_dim_entry("irfftn", kIrfftn, kComplexIn));

// ---- identities at 2^20 (and the prime 4099): analytic references, no O(n²) sum ----
// ints = {which, n}: 0 round trip ifft(fft(x)) = x; 1 delta at p=3: X_k = e^{-2πi 3k/n};
// 2 tone at f=5 with amplitude 1/n: X_k = [k == 5].
Entry identities_entry() {
  Entry e;
  e.op = "fft_identities";
  e.dtypes = kComplexIn;
  e.cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (std::int64_t n : {std::int64_t(1) << 20, std::int64_t(4099)})
      for (std::int64_t which : {0, 1, 2}) {
        Tensor x;
        if (which == 0) {
          x = random({n}, dtype, rng, -1, 1);
        } else {
          std::vector<std::complex<double>> v(static_cast<std::size_t>(n));
          for (std::int64_t j = 0; j < n; ++j) {
            const double a = 2 * std::numbers::pi * static_cast<double>((5 * j) % n) / static_cast<double>(n);
            v[static_cast<std::size_t>(j)] = which == 1 ? std::complex<double>(j == 3, 0)
                                                        : std::complex<double>(std::cos(a), std::sin(a)) / static_cast<double>(n);
          }
          x = from_vector(v, {n}).to(dtype);
        }
        cases.push_back({"n " + std::to_string(n) + " identity " + std::to_string(which), {x}, {which, n}});
      }
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    return std::vector<Tensor>{c.ints[0] == 0 ? fft::ifft(fft::fft(x)) : fft::fft(x)};
  };
  e.reference_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    if (c.ints[0] == 0) return std::vector<Tensor>{x};
    const std::int64_t n = c.ints[1];
    std::vector<std::complex<double>> v(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) {
      const long double a = 2 * std::numbers::pi_v<long double> * static_cast<long double>((3 * k) % n) / static_cast<long double>(n);
      v[static_cast<std::size_t>(k)] = c.ints[0] == 1 ? std::complex<double>(static_cast<double>(std::cos(a)), static_cast<double>(-std::sin(a)))
                                                      : std::complex<double>(k == 5, 0);
    }
    return std::vector<Tensor>{from_vector(v, {n}).to(x.dtype())};
  };
  e.reference_tolerance = default_tolerance;
  e.backend_tolerance = default_tolerance;
  return e;
}
FERRITE_CONFORMANCE(identities_entry());

}  // namespace
}  // namespace ferrite::conformance
