// Conformance entries of the linear-algebra family (ferrite::linalg).
//
// Decompositions are not unique (signs and phases of vectors, Householder conventions), so
// every entry checks properties that need no reference, computed on the host in long
// double from the backend's outputs: reconstruction (L·Lᴴ = A, P·L·U = A, Q·R = A,
// U·diag(S)·Vh = A, A·V = V·diag(w)), orthonormality, A·X = B, triangles and orderings.
// Output 0 of every entry is that residual vector in units of n·ε·scale (must stay below
// kResidualUnits); the CPU's reference for it is zero. The other outputs are the uniquely
// defined results (L, X, LU and pivots, |R|, eigenvalues, singular values): the CUDA run
// compares them with the CPU backend; on the CPU they are compared with themselves (the
// residuals are the CPU's check).
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "conformance/conformance.hpp"

namespace ferrite::conformance {
namespace {

using C = std::complex<long double>;
const std::vector<DType> kLinalgDTypes = {DType::F32, DType::F64, DType::C64, DType::C128};
constexpr double kResidualUnits = 100;

// ---- host matrices ----

struct HMat {
  std::int64_t r = 0, c = 0;
  std::vector<C> v;  // row-major
  HMat(std::int64_t rows, std::int64_t cols) : r(rows), c(cols), v(static_cast<std::size_t>(rows * cols)) {}
  C& operator()(std::int64_t i, std::int64_t j) { return v[static_cast<std::size_t>(i * c + j)]; }
  C operator()(std::int64_t i, std::int64_t j) const { return v[static_cast<std::size_t>(i * c + j)]; }
};

// The matrices of t ([..., r, c], any device and dtype) in batch order.
std::vector<HMat> host_mats(const Tensor& t) {
  const std::int64_t r = t.size(-2), c = t.size(-1);
  const std::vector<std::complex<double>> flat =
      t.to(Device::cpu()).contiguous().to(DType::C128).to_vector<std::complex<double>>();
  const std::int64_t count = r * c == 0 ? shape_numel(Shape(t.shape().begin(), t.shape().end() - 2)) : static_cast<std::int64_t>(flat.size()) / (r * c);
  std::vector<HMat> out;
  for (std::int64_t b = 0; b < count; ++b) {
    HMat m(r, c);
    for (std::int64_t i = 0; i < r * c; ++i) m.v[static_cast<std::size_t>(i)] = C(flat[static_cast<std::size_t>(b * r * c + i)]);
    out.push_back(m);
  }
  return out;
}

HMat mul(const HMat& a, const HMat& b) {
  HMat o(a.r, b.c);
  for (std::int64_t i = 0; i < a.r; ++i)
    for (std::int64_t k = 0; k < a.c; ++k)
      for (std::int64_t j = 0; j < b.c; ++j) o(i, j) += a(i, k) * b(k, j);
  return o;
}
HMat adj(const HMat& a) {
  HMat o(a.c, a.r);
  for (std::int64_t i = 0; i < a.r; ++i)
    for (std::int64_t j = 0; j < a.c; ++j) o(j, i) = std::conj(a(i, j));
  return o;
}
HMat identity(std::int64_t n) {
  HMat o(n, n);
  for (std::int64_t i = 0; i < n; ++i) o(i, i) = 1;
  return o;
}
long double max_diff(const HMat& a, const HMat& b) {
  long double m = 0;
  for (std::size_t i = 0; i < a.v.size(); ++i) m = std::max(m, std::abs(a.v[i] - b.v[i]));
  return m;
}
long double max_abs(const HMat& a) {
  long double m = 0;
  for (const C& x : a.v) m = std::max(m, std::abs(x));
  return m;
}

// The Hermitian matrix that a's `upper` (else lower) triangle defines (the only part that
// cholesky and eigh read).
HMat hermitian_from(const HMat& a, bool upper) {
  HMat h(a.r, a.c);
  for (std::int64_t i = 0; i < a.r; ++i)
    for (std::int64_t j = 0; j < a.c; ++j) {
      const bool stored = upper ? i <= j : i >= j;
      h(i, j) = stored ? a(i, j) : std::conj(a(j, i));
    }
  for (std::int64_t i = 0; i < a.r; ++i) h(i, i) = std::real(h(i, i));
  return h;
}

long double eps_of(DType d) {
  return d == DType::F32 || d == DType::C64 ? std::numeric_limits<float>::epsilon()
                                             : std::numeric_limits<double>::epsilon();
}

// Residual r in units of n·ε·scale (NaN when r is NaN, so a NaN output fails loudly).
double units(long double r, long double scale, std::int64_t n, DType d) {
  const long double unit = eps_of(d) * static_cast<long double>(std::max<std::int64_t>(n, 1)) * std::max(scale, 1e-30L);
  return static_cast<double>(r / unit);
}

Tensor residual_tensor(const std::vector<double>& r, Device device) {
  return from_vector(r, {static_cast<std::int64_t>(r.size())}).to(device);
}

// ---- inputs ----

enum class Kind { General, Shifted, Spd, SpdLower, SpdUpper, HermitianLower, HermitianUpper, RankDeficient };

// Matrices [batch..., m, n] built on the host: uniform in [-1, 1] (complex parts too),
// shifted by 2√n·I (well-conditioned, still pivoting), B·Bᴴ + n·I (positive-definite; with
// SpdLower/SpdUpper only that triangle, garbage in the other one, which cholesky must never
// read), or one Hermitian triangle with garbage in the other (eigh must never read it).
// RankDeficient cycles through four singular matrices along the batch: a zero first column
// and the last column a copy of the second, the zero matrix, diag(B, B) (every singular
// value of B twice; the identity where B would be empty) and a rank-one x·yᵀ.
Tensor make(const Shape& batch, std::int64_t m, std::int64_t n, DType dt, Rng& rng, Kind kind) {
  std::uniform_real_distribution<double> dist(-1, 1);
  const bool cplx = is_complex(dt);
  const std::int64_t count = shape_numel(batch);
  std::vector<std::complex<double>> v;
  for (std::int64_t b = 0; b < count; ++b) {
    HMat a(m, n);
    for (auto& x : a.v) x = C(dist(rng), cplx ? dist(rng) : 0.0);
    if (kind == Kind::Shifted)
      for (std::int64_t i = 0; i < std::min(m, n); ++i) a(i, i) += 2 * std::sqrt(static_cast<long double>(n));
    if (kind == Kind::Spd || kind == Kind::SpdLower || kind == Kind::SpdUpper) {
      a = mul(a, adj(a));
      for (std::int64_t i = 0; i < n; ++i) a(i, i) = std::real(a(i, i)) + static_cast<long double>(n);
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          if ((kind == Kind::SpdLower && i < j) || (kind == Kind::SpdUpper && i > j))
            a(i, j) = C(3 * dist(rng), cplx ? 3 * dist(rng) : 0.0);
    }
    if (kind == Kind::RankDeficient) {
      const HMat g = a;
      const std::int64_t mh = m / 2, nh = n / 2;
      for (auto& x : a.v) x = 0;
      switch (b % 4) {
        case 0:
          a = g;
          for (std::int64_t i = 0; i < m; ++i) {
            a(i, 0) = 0;
            if (n > 2) a(i, n - 1) = a(i, 1);
          }
          break;
        case 1: break;
        case 2:
          for (std::int64_t i = 0; i < mh; ++i)
            for (std::int64_t j = 0; j < nh; ++j) a(i, j) = a(mh + i, nh + j) = g(i, j);
          if (mh == 0 || nh == 0)
            for (std::int64_t i = 0; i < std::min(m, n); ++i) a(i, i) = 1;
          break;
        default:
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) a(i, j) = g(i, 0) * g(0, j);
      }
    }
    if (kind == Kind::HermitianLower || kind == Kind::HermitianUpper)
      for (std::int64_t i = 0; i < n; ++i) a(i, i) = std::real(a(i, i));
    for (const C& x : a.v) v.emplace_back(static_cast<double>(x.real()), static_cast<double>(x.imag()));
  }
  Shape shape = batch;
  shape.push_back(m);
  shape.push_back(n);
  return Tensor::from_bytes(v.data(), v.size() * sizeof(std::complex<double>), DType::C128, shape).to(dt);
}

// The uniquely defined outputs come back to the device as F64 (|x| of complex values would
// lose phase information that differs between libraries only where it is not unique).
Tensor abs_f64(const Tensor& t, Device device) {
  std::vector<double> out;
  for (const HMat& m : host_mats(t))
    for (const C& x : m.v) out.push_back(static_cast<double>(std::abs(x)));
  return from_vector(out, t.shape()).to(device);
}

struct SquareShape {
  Shape batch;
  std::int64_t n;
};
const std::vector<SquareShape> kSquare = {{{}, 0}, {{}, 1}, {{}, 2}, {{}, 3}, {{}, 33}, {{0}, 3}, {{1}, 3},
                                          {{7}, 5}, {{2, 3}, 4}, {{40}, 8}, {{3}, 33}, {{}, 64}};
struct RectShape {
  Shape batch;
  std::int64_t m, n;
};
const std::vector<RectShape> kRect = {{{}, 0, 3}, {{}, 3, 0}, {{}, 1, 1}, {{}, 5, 3}, {{}, 3, 5}, {{}, 33, 33},
                                      {{}, 40, 17}, {{}, 17, 40}, {{0}, 4, 3}, {{1}, 4, 4}, {{6}, 7, 5}, {{2, 2}, 5, 7},
                                      {{20}, 12, 12}};

Tolerance unique_tolerance(DType d) {
  return d == DType::F32 || d == DType::C64 ? Tolerance{2e-3, 2e-3} : Tolerance{1e-9, 1e-9};
}

Entry base_entry(const std::string& op) {
  Entry e;
  e.op = op;
  e.dtypes = kLinalgDTypes;
  e.reference_tolerance = [](DType) { return Tolerance{0, kResidualUnits}; };
  e.backend_tolerance = unique_tolerance;
  e.output_backend_tolerance = [](DType d, std::size_t i) {
    return i == 0 ? Tolerance{0, kResidualUnits} : unique_tolerance(d);
  };
  return e;
}

// Reference: residual 0 (kept as zeros of the same length), the CPU's own unique outputs.
std::function<std::vector<Tensor>(const Case&)> residual_reference(std::function<std::vector<Tensor>(const Case&)> run) {
  return [run](const Case& c) {
    std::vector<Tensor> out = run(c);
    out[0] = zeros(out[0].shape(), DType::F64);
    for (Tensor& t : out) t = t.to(Device::cpu());
    return out;
  };
}

// 2·I with one NaN at (i, j), built on the host (complex arithmetic is not an op yet).
Tensor nan_matrix(DType dt, std::int64_t n, std::int64_t i, std::int64_t j) {
  std::vector<std::complex<double>> v(static_cast<std::size_t>(n * n));
  for (std::int64_t k = 0; k < n; ++k) v[static_cast<std::size_t>(k * n + k)] = 2;
  v[static_cast<std::size_t>(i * n + j)] = std::numeric_limits<double>::quiet_NaN();
  return Tensor::from_bytes(v.data(), v.size() * sizeof(v[0]), DType::C128, {n, n}).to(dt);
}

// ---- cholesky ----

std::vector<Tensor> run_cholesky(const Case& c) {
  const Tensor& a = c.inputs[0];
  const bool upper = c.ints[0] != 0;
  const Tensor l = linalg::cholesky(a, upper);
  std::vector<double> r(2, 0.0);
  const auto as = host_mats(a), ls = host_mats(l);
  for (std::size_t b = 0; b < as.size(); ++b) {
    const HMat& f = ls[b];
    const HMat recon = upper ? mul(adj(f), f) : mul(f, adj(f));
    const HMat h = hermitian_from(as[b], upper);  // only that triangle is read
    r[0] = std::max(r[0], units(max_diff(recon, h), max_abs(h), a.size(-1), a.dtype()));
    long double other = 0;
    for (std::int64_t i = 0; i < f.r; ++i)
      for (std::int64_t j = 0; j < f.c; ++j)
        if (upper ? i > j : i < j) other = std::max(other, std::abs(f(i, j)));
    r[1] = std::max(r[1], static_cast<double>(other));
  }
  return {residual_tensor(r, a.device()), l};
}

Entry cholesky_entry() {
  Entry e = base_entry("linalg.cholesky");
  e.cases = [](DType dt, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& s : kSquare)
      for (int upper = 0; upper < 2; ++upper)
        cases.push_back({shape_str(s.batch) + " n=" + std::to_string(s.n) + (upper ? " upper" : " lower"),
                         {make(s.batch, s.n, s.n, dt, rng, Kind::Spd)}, {upper}});
    // Garbage in the triangle that is not read (row-major input is the other triangle of the
    // column-major transpose on the GPU: a wrong triangle or conjugation shows here).
    for (int upper = 0; upper < 2; ++upper)
      for (const SquareShape& s : std::vector<SquareShape>{{{}, 5}, {{3}, 33}, {{}, 64}})
        cases.push_back({shape_str(s.batch) + " n=" + std::to_string(s.n) + (upper ? " upper" : " lower") +
                             " only",
                         {make(s.batch, s.n, s.n, dt, rng, upper ? Kind::SpdUpper : Kind::SpdLower)}, {upper}});
    return cases;
  };
  e.run_outputs = run_cholesky;
  e.reference_outputs = residual_reference(run_cholesky);
  e.errors = [](DType dt) {
    std::vector<ErrorCase> errors;
    errors.push_back({"not positive-definite at order 3 of batch 1",
                      [dt](Device d) {
                        Tensor a = stack({eye(3, 3, dt), eye(3, 3, dt)}, 0);
                        a.select(0, 1).select(0, 2).select(0, 2).fill_(-1.0);
                        linalg::cholesky(a.to(d));
                      },
                      ErrorKind::Numerical, "the leading minor of order 3 of batch 1 is not positive-definite"});
    errors.push_back({"NaN input", [dt](Device d) { linalg::cholesky(nan_matrix(dt, 3, 1, 1).to(d)); },
                      ErrorKind::Numerical, "is not positive-definite"});
    errors.push_back({"not square", [dt](Device d) { linalg::cholesky(zeros({3, 4}, dt, d)); }, ErrorKind::ShapeMismatch,
                      "must be square"});
    errors.push_back({"rank 1", [dt](Device d) { linalg::cholesky(zeros({3}, dt, d)); }, ErrorKind::ShapeMismatch,
                      "matrix or a batch of matrices"});
    errors.push_back({"I32", [](Device d) { linalg::cholesky(zeros({3, 3}, DType::I32, d)); }, ErrorKind::Unsupported,
                      "takes F32, F64, C64 or C128"});
    return errors;
  };
  return e;
}

// cholesky_ex: the info values, exact, for a batch mixing good and bad matrices.
Entry cholesky_ex_entry() {
  Entry e = base_entry("linalg.cholesky_ex");
  e.cases = [](DType dt, Rng& rng) {
    Tensor a = make({4}, 4, 4, dt, rng, Kind::Spd);
    a.select(0, 1).select(0, 0).select(0, 0).fill_(-1.0);  // order 1
    a.select(0, 3).select(0, 2).select(0, 2).fill_(-100.0);  // order 3
    return std::vector<Case>{{"mixed batch", {a}, {0}}, {"mixed batch upper", {a}, {1}}};
  };
  e.run_outputs = [](const Case& c) {
    const linalg::CholeskyEx r = linalg::cholesky_ex(c.inputs[0], c.ints[0] != 0);
    return std::vector<Tensor>{zeros({1}, DType::F64, c.inputs[0].device()), r.info};
  };
  e.reference_outputs = [](const Case&) {
    return std::vector<Tensor>{zeros({1}, DType::F64), from_vector(std::vector<std::int32_t>{0, 1, 0, 3}, {4})};
  };
  e.reference_tolerance = [](DType) { return Tolerance{}; };
  e.output_backend_tolerance = [](DType, std::size_t) { return Tolerance{}; };
  return e;
}

// ---- solve, lu_solve, inv ----

std::vector<Tensor> run_solve(const Case& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  const Tensor x = linalg::solve(a, b);
  const bool vector = b.dim() == 1 || (b.dim() == a.dim() - 1 && b.shape() == Shape(a.shape().begin(), a.shape().end() - 1));
  const Tensor xm = vector ? x.unsqueeze(-1) : x, bm = vector ? b.unsqueeze(-1) : b;
  // Broadcast a against the solution's batch on the host.
  Shape full = xm.shape();
  full[full.size() - 1] = a.size(-1);
  const auto as = host_mats(a.expand(full)), xs = host_mats(xm), bs = host_mats(bm.expand(xm.shape()));
  double r = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const long double scale = max_abs(as[i]) * max_abs(xs[i]) * static_cast<long double>(a.size(-1)) + max_abs(bs[i]);
    r = std::max(r, units(max_diff(mul(as[i], xs[i]), bs[i]), scale, a.size(-1), a.dtype()));
  }
  return {residual_tensor({r}, a.device()), x};
}

Entry solve_entry() {
  Entry e = base_entry("linalg.solve");
  e.cases = [](DType dt, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& s : kSquare) {
      cases.push_back({shape_str(s.batch) + " n=" + std::to_string(s.n) + " k=3",
                       {make(s.batch, s.n, s.n, dt, rng, Kind::Shifted), make(s.batch, s.n, 3, dt, rng, Kind::General)}});
      Shape vb = s.batch;
      vb.push_back(s.n);
      cases.push_back({shape_str(s.batch) + " n=" + std::to_string(s.n) + " vector",
                       {make(s.batch, s.n, s.n, dt, rng, Kind::Shifted), make(s.batch, s.n, 1, dt, rng, Kind::General).reshape(vb)}});
    }
    cases.push_back({"A batch broadcast", {make({3}, 6, 6, dt, rng, Kind::Shifted), make({}, 6, 2, dt, rng, Kind::General)}});
    cases.push_back({"B batch broadcast", {make({}, 6, 6, dt, rng, Kind::Shifted), make({2, 1}, 6, 4, dt, rng, Kind::General)}});
    cases.push_back({"k=0", {make({}, 5, 5, dt, rng, Kind::Shifted), make({}, 5, 0, dt, rng, Kind::General)}});
    cases.push_back({"1-D b, batched A", {make({2}, 4, 4, dt, rng, Kind::Shifted), make({}, 4, 1, dt, rng, Kind::General).reshape({4})}});
    return cases;
  };
  e.run_outputs = run_solve;
  e.reference_outputs = residual_reference(run_solve);
  e.errors = [](DType dt) {
    std::vector<ErrorCase> errors;
    errors.push_back({"singular",
                      [dt](Device d) {
                        const Tensor a = from_vector(std::vector<double>{1, 2, 2, 4}, {2, 2}).to(dt).to(d);
                        linalg::solve(a, ones({2, 1}, dt, d));
                      },
                      ErrorKind::Numerical, "solve: U[1, 1] of batch 0 is exactly zero"});
    errors.push_back({"rows differ", [dt](Device d) { linalg::solve(eye(3, 3, dt, d), ones({4, 2}, dt, d)); },
                      ErrorKind::ShapeMismatch, "must be [..., n, k]"});
    errors.push_back({"dtypes differ",
                      [dt](Device d) {
                        linalg::solve(eye(3, 3, dt, d), ones({3, 2}, dt == DType::F64 ? DType::F32 : DType::F64, d));
                      },
                      ErrorKind::DTypeMismatch, "solve"});
    errors.push_back({"inv singular", [dt](Device d) { linalg::inv(zeros({2, 3, 3}, dt, d)); }, ErrorKind::Numerical,
                      "inv: U[0, 0] of batch 0 is exactly zero"});
    return errors;
  };
  return e;
}

Entry solve_ex_entry() {
  Entry e = base_entry("linalg.solve_ex");
  e.cases = [](DType dt, Rng& rng) {
    Tensor a = make({3}, 3, 3, dt, rng, Kind::Shifted);
    a.select(0, 1).zero_();                              // U[0, 0] = 0
    a.select(0, 2).select(-1, 2).zero_();                // last column zero: U[2, 2] = 0
    return std::vector<Case>{{"singular members", {a, make({3}, 3, 2, dt, rng, Kind::General)}}};
  };
  e.run_outputs = [](const Case& c) {
    const linalg::SolveEx r = linalg::solve_ex(c.inputs[0], c.inputs[1]);
    const linalg::LuFactorEx f = linalg::lu_factor_ex(c.inputs[0]);
    return std::vector<Tensor>{zeros({1}, DType::F64, c.inputs[0].device()), r.info, f.info};
  };
  e.reference_outputs = [](const Case&) {
    const Tensor info = from_vector(std::vector<std::int32_t>{0, 1, 3}, {3});
    return std::vector<Tensor>{zeros({1}, DType::F64), info, info};
  };
  e.reference_tolerance = [](DType) { return Tolerance{}; };
  e.output_backend_tolerance = [](DType, std::size_t) { return Tolerance{}; };
  return e;
}

std::vector<Tensor> run_inv(const Case& c) {
  const Tensor& a = c.inputs[0];
  const Tensor x = linalg::inv(a);
  const auto as = host_mats(a), xs = host_mats(x);
  double r = 0;
  for (std::size_t i = 0; i < as.size(); ++i)
    r = std::max(r, units(max_diff(mul(as[i], xs[i]), identity(a.size(-1))),
                          max_abs(as[i]) * max_abs(xs[i]) * static_cast<long double>(a.size(-1)), a.size(-1), a.dtype()));
  return {residual_tensor({r}, a.device()), x};
}

Entry inv_entry() {
  Entry e = base_entry("linalg.inv");
  e.cases = [](DType dt, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& s : kSquare)
      cases.push_back({shape_str(s.batch) + " n=" + std::to_string(s.n), {make(s.batch, s.n, s.n, dt, rng, Kind::Shifted)}});
    return cases;
  };
  e.run_outputs = run_inv;
  e.reference_outputs = residual_reference(run_inv);
  return e;
}

// lstsq: the normal equations Aᴴ·(A·X − B) = 0 (tall), A·X = B (wide).
std::vector<Tensor> run_lstsq(const Case& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  const Tensor x = linalg::lstsq(a, b);
  const auto as = host_mats(a), xs = host_mats(x), bs = host_mats(b);
  const std::int64_t m = a.size(-2), n = a.size(-1);
  double r = 0;
  for (std::size_t i = 0; i < as.size(); ++i) {
    const HMat ax = mul(as[i], xs[i]);
    HMat diff = ax;
    for (std::size_t e = 0; e < diff.v.size(); ++e) diff.v[e] -= bs[i].v[e];
    const long double scale = max_abs(as[i]) * (max_abs(as[i]) * max_abs(xs[i]) + max_abs(bs[i])) * static_cast<long double>(m);
    const HMat normal = m >= n ? mul(adj(as[i]), diff) : diff;
    r = std::max(r, units(max_abs(normal), m >= n ? scale : scale / std::max(max_abs(as[i]), 1e-30L), std::max(m, n), a.dtype()));
  }
  return {residual_tensor({r}, a.device()), x};
}

Entry lstsq_entry() {
  Entry e = base_entry("linalg.lstsq");
  e.dtypes = {DType::F32, DType::F64};
  e.cases = [](DType dt, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& s : kRect)
      cases.push_back({shape_str(s.batch) + " " + std::to_string(s.m) + "x" + std::to_string(s.n),
                       {make(s.batch, s.m, s.n, dt, rng, Kind::Shifted), make(s.batch, s.m, 2, dt, rng, Kind::General)}});
    return cases;
  };
  e.run_outputs = run_lstsq;
  e.reference_outputs = residual_reference(run_lstsq);
  e.errors = [](DType dt) {
    return std::vector<ErrorCase>{{"rank-deficient", [dt](Device d) { linalg::lstsq(zeros({4, 2}, dt, d), ones({4, 1}, dt, d)); },
                                   ErrorKind::Numerical, "lstsq: A of batch 0 is rank-deficient"},
                                  {"complex", [](Device d) { linalg::lstsq(zeros({4, 2}, DType::C64, d), zeros({4, 1}, DType::C64, d)); },
                                   ErrorKind::Unsupported, "lstsq: complex"}};
  };
  return e;
}

// ---- LU ----

std::vector<Tensor> run_lu(const Case& c) {
  const Tensor& a = c.inputs[0];
  const linalg::LuFactorEx f = linalg::lu_factor_ex(a);
  const linalg::Lu plu = linalg::lu(a);
  const std::int64_t m = a.size(-2), n = a.size(-1);
  const auto as = host_mats(a), ps = host_mats(plu.P), ls = host_mats(plu.L), us = host_mats(plu.U);
  std::vector<double> r(3, 0.0);
  for (std::size_t b = 0; b < as.size(); ++b) {
    r[0] = std::max(r[0], units(max_diff(mul(ps[b], mul(ls[b], us[b])), as[b]), max_abs(as[b]) * 4, std::max(m, n), a.dtype()));
    long double bad = 0;
    for (std::int64_t i = 0; i < ls[b].r; ++i)
      for (std::int64_t j = 0; j < ls[b].c; ++j)
        if (i < j) bad = std::max(bad, std::abs(ls[b](i, j)));
        else if (i == j) bad = std::max(bad, std::abs(ls[b](i, j) - C(1)));
    for (std::int64_t i = 0; i < us[b].r; ++i)
      for (std::int64_t j = 0; j < std::min(i, us[b].c); ++j) bad = std::max(bad, std::abs(us[b](i, j)));
    r[1] = std::max(r[1], static_cast<double>(bad));
  }
  // Complex pivoting differs between libraries: LAPACK/cuSOLVER pick the largest |re| + |im|,
  // Eigen the largest |z|, so complex LU factors are only checked through the residuals.
  if (is_complex(a.dtype())) return {residual_tensor(r, a.device())};
  return {residual_tensor(r, a.device()), f.LU, f.pivots};
}

Entry lu_entry() {
  Entry e = base_entry("linalg.lu_factor");
  e.cases = [](DType dt, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& s : kRect)
      cases.push_back({shape_str(s.batch) + " " + std::to_string(s.m) + "x" + std::to_string(s.n),
                       {make(s.batch, s.m, s.n, dt, rng, Kind::General)}});
    return cases;
  };
  e.run_outputs = run_lu;
  e.reference_outputs = residual_reference(run_lu);
  e.errors = [](DType dt) {
    return std::vector<ErrorCase>{{"singular", [dt](Device d) { linalg::lu_factor(zeros({3, 2, 2}, dt, d)); },
                                   ErrorKind::Numerical, "lu_factor: U[0, 0] of batch 0 is exactly zero"}};
  };
  return e;
}

std::vector<Tensor> run_lu_solve(const Case& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  const linalg::LuFactor f = linalg::lu_factor(a);
  const Tensor x = linalg::lu_solve(f.LU, f.pivots, b);
  const auto as = host_mats(a), xs = host_mats(x), bs = host_mats(b);
  double r = 0;
  for (std::size_t i = 0; i < xs.size(); ++i)
    r = std::max(r, units(max_diff(mul(as[i], xs[i]), bs[i]),
                          max_abs(as[i]) * max_abs(xs[i]) * static_cast<long double>(a.size(-1)) + max_abs(bs[i]),
                          a.size(-1), a.dtype()));
  return {residual_tensor({r}, a.device()), x};
}

Entry lu_solve_entry() {
  Entry e = base_entry("linalg.lu_solve");
  e.cases = [](DType dt, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& s : kSquare)
      cases.push_back({shape_str(s.batch) + " n=" + std::to_string(s.n),
                       {make(s.batch, s.n, s.n, dt, rng, Kind::Shifted), make(s.batch, s.n, 2, dt, rng, Kind::General)}});
    return cases;
  };
  e.run_outputs = run_lu_solve;
  e.reference_outputs = residual_reference(run_lu_solve);
  // Pivots outside [1, n] made the CPU kernel swap rows outside B (heap corruption; found by
  // tests/unit/api_fuzz_test.cpp, seed 17 call 35169): refused before any backend runs.
  e.errors = [](DType dt) {
    std::vector<ErrorCase> errors;
    for (const std::int32_t bad : {0, 4, -1, 1 << 30})
      errors.push_back({"pivot " + std::to_string(bad),
                        [dt, bad](Device d) {
                          const linalg::LuFactor f = linalg::lu_factor(eye(3, 3, dt, d));
                          const Tensor piv = from_vector(std::vector<std::int32_t>{1, bad, 3}, {3}).to(d);
                          linalg::lu_solve(f.LU, piv, ones({3, 2}, dt, d));
                        },
                        ErrorKind::IndexOutOfRange, "lu_solve: pivot " + std::to_string(bad) + " is outside [1, 3]"});
    errors.push_back({"pivot 3 of batch 1 for n = 2",
                      [dt](Device d) {
                        const linalg::LuFactor f = linalg::lu_factor(eye(2, 2, dt, d).expand({2, 2, 2}));
                        const Tensor piv = from_vector(std::vector<std::int32_t>{1, 2, 2, 3}, {2, 2}).to(d);
                        linalg::lu_solve(f.LU, piv, ones({2, 2, 1}, dt, d));
                      },
                      ErrorKind::IndexOutOfRange, "lu_solve: pivot 3 is outside [1, 2]"});
    return errors;
  };
  return e;
}

// ---- QR ----

std::vector<Tensor> run_qr(const Case& c) {
  const Tensor& a = c.inputs[0];
  const auto mode = static_cast<linalg::QrMode>(c.ints[0]);
  const linalg::Qr qr = linalg::qr(a, mode);
  const std::int64_t m = a.size(-2), n = a.size(-1);
  std::vector<double> r(3, 0.0);
  const auto rs = host_mats(qr.R);
  for (std::size_t b = 0; b < rs.size(); ++b)
    for (std::int64_t i = 0; i < rs[b].r; ++i)
      for (std::int64_t j = 0; j < std::min(i, rs[b].c); ++j) r[2] = std::max(r[2], static_cast<double>(std::abs(rs[b](i, j))));
  if (mode != linalg::QrMode::R) {
    const auto as = host_mats(a), qs = host_mats(qr.Q);
    for (std::size_t b = 0; b < as.size(); ++b) {
      r[0] = std::max(r[0], units(max_diff(mul(qs[b], rs[b]), as[b]), max_abs(as[b]) * 4, std::max(m, n), a.dtype()));
      r[1] = std::max(r[1], units(max_diff(mul(adj(qs[b]), qs[b]), identity(qs[b].c)), 1, m, a.dtype()));
    }
  }
  return {residual_tensor(r, a.device()), abs_f64(qr.R, a.device())};
}

Entry qr_entry() {
  Entry e = base_entry("linalg.qr");
  e.cases = [](DType dt, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& s : kRect)
      for (int mode = 0; mode < 3; ++mode)
        cases.push_back({shape_str(s.batch) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + " mode " +
                             std::to_string(mode),
                         {make(s.batch, s.m, s.n, dt, rng, Kind::General)}, {mode}});
    return cases;
  };
  e.run_outputs = run_qr;
  e.reference_outputs = residual_reference(run_qr);
  return e;
}

// ---- eigh ----

std::vector<Tensor> run_eigh(const Case& c) {
  const Tensor& a = c.inputs[0];
  const bool upper = c.ints[0] != 0;
  const linalg::Eigh e = linalg::eigh(a, upper ? 'U' : 'L');
  const Tensor values_only = linalg::eigvalsh(a, upper ? 'U' : 'L');
  const std::int64_t n = a.size(-1);
  const auto as = host_mats(a), vs = host_mats(e.eigenvectors);
  const auto ws = host_mats(e.eigenvalues.unsqueeze(-2));
  std::vector<double> r(3, 0.0);
  for (std::size_t b = 0; b < as.size(); ++b) {
    const HMat h = hermitian_from(as[b], upper);
    HMat vw = vs[b];
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) vw(i, j) *= ws[b](0, j);
    r[0] = std::max(r[0], units(max_diff(mul(h, vs[b]), vw), max_abs(h) * 4, n, a.dtype()));
    r[1] = std::max(r[1], units(max_diff(mul(adj(vs[b]), vs[b]), identity(n)), 1, n, a.dtype()));
    for (std::int64_t j = 1; j < n; ++j)
      if (std::real(ws[b](0, j)) < std::real(ws[b](0, j - 1))) r[2] = 1;
  }
  return {residual_tensor(r, a.device()), e.eigenvalues, values_only};
}

Entry eigh_entry() {
  Entry e = base_entry("linalg.eigh");
  e.cases = [](DType dt, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& s : kSquare)
      for (int upper = 0; upper < 2; ++upper)
        cases.push_back({shape_str(s.batch) + " n=" + std::to_string(s.n) + (upper ? " U" : " L"),
                         {make(s.batch, s.n, s.n, dt, rng, upper ? Kind::HermitianUpper : Kind::HermitianLower)}, {upper}});
    cases.push_back({"[100] n=33 L", {make({100}, 33, 33, dt, rng, Kind::HermitianLower)}, {0}});
    return cases;
  };
  e.run_outputs = run_eigh;
  e.reference_outputs = residual_reference(run_eigh);
  e.errors = [](DType dt) {
    return std::vector<ErrorCase>{
        {"uplo", [dt](Device d) { linalg::eigh(eye(3, 3, dt, d), 'X'); }, ErrorKind::InvalidArgument, "uplo must be"},
        {"NaN in the lower triangle", [dt](Device d) { linalg::eigh(nan_matrix(dt, 4, 2, 1).to(d)); },
         ErrorKind::Numerical, "eigh: the algorithm did not converge for batch 0"},
        {"NaN batched", [dt](Device d) { linalg::eigvalsh(stack({eye(4, 4, dt), nan_matrix(dt, 4, 3, 3)}, 0).to(d)); },
         ErrorKind::Numerical, "eigvalsh: the algorithm did not converge for batch 1"}};
  };
  return e;
}

// ---- SVD ----

std::vector<Tensor> run_svd(const Case& c) {
  const Tensor& a = c.inputs[0];
  const bool full = c.ints[0] != 0;
  const linalg::Svd s = linalg::svd(a, full);
  const Tensor values_only = linalg::svdvals(a);
  const std::int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  const auto as = host_mats(a), us = host_mats(s.U), vhs = host_mats(s.Vh), ss = host_mats(s.S.unsqueeze(-2));
  std::vector<double> r(4, 0.0);
  for (std::size_t b = 0; b < as.size(); ++b) {
    HMat us_k(m, k);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < k; ++j) us_k(i, j) = us[b](i, j) * ss[b](0, j);
    HMat vh_k(k, n);
    for (std::int64_t i = 0; i < k; ++i)
      for (std::int64_t j = 0; j < n; ++j) vh_k(i, j) = vhs[b](i, j);
    r[0] = std::max(r[0], units(max_diff(mul(us_k, vh_k), as[b]), max_abs(as[b]) * 4, std::max(m, n), a.dtype()));
    r[1] = std::max(r[1], units(max_diff(mul(adj(us[b]), us[b]), identity(us[b].c)), 1, m, a.dtype()));
    r[2] = std::max(r[2], units(max_diff(mul(vhs[b], adj(vhs[b])), identity(vhs[b].r)), 1, n, a.dtype()));
    for (std::int64_t j = 1; j < k; ++j)
      if (std::real(ss[b](0, j)) > std::real(ss[b](0, j - 1))) r[3] = 1;
  }
  return {residual_tensor(r, a.device()), s.S, values_only};
}

Entry svd_entry() {
  Entry e = base_entry("linalg.svd");
  e.cases = [](DType dt, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& s : kRect)
      for (int full = 0; full < 2; ++full)
        cases.push_back({shape_str(s.batch) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) +
                             (full ? " full" : " reduced"),
                         {make(s.batch, s.m, s.n, dt, rng, Kind::General)}, {full}});
    cases.push_back({"[64] 32x32 full", {make({64}, 32, 32, dt, rng, Kind::General)}, {1}});
    cases.push_back({"[64] 20x9 reduced", {make({64}, 20, 9, dt, rng, Kind::General)}, {0}});
    // Batches up to 32×32 (real: the CUDA backend's own Jacobi kernel; complex: gesvdjBatched):
    // tall, wide, one row or column, 1×1.
    for (const RectShape& r : std::vector<RectShape>{{{16}, 32, 17}, {{16}, 17, 32}, {{8}, 32, 1}, {{8}, 1, 32},
                                                     {{16}, 1, 1}, {{16}, 2, 2}, {{3}, 31, 31}})
      for (int full = 0; full < 2; ++full)
        cases.push_back({shape_str(r.batch) + " " + std::to_string(r.m) + "x" + std::to_string(r.n) +
                             (full ? " full" : " reduced"),
                         {make(r.batch, r.m, r.n, dt, rng, Kind::General)}, {full}});
    // Singular matrices (zero and repeated singular values): U must still be orthonormal,
    // completed where a column has no direction of its own. Real dtypes: the CUDA backend's
    // own kernel (complex keeps cuSOLVER's gesvdjBatched).
    if (!is_complex(dt))
      for (const RectShape& r : std::vector<RectShape>{{{8}, 6, 4}, {{8}, 32, 32}, {{8}, 32, 7}, {{8}, 5, 9},
                                                       {{8}, 1, 1}, {{4}, 2, 2}})
        for (int full = 0; full < 2; ++full)
          cases.push_back({shape_str(r.batch) + " " + std::to_string(r.m) + "x" + std::to_string(r.n) +
                               (full ? " full" : " reduced") + " rank-deficient",
                           {make(r.batch, r.m, r.n, dt, rng, Kind::RankDeficient)}, {full}});
    return cases;
  };
  e.run_outputs = run_svd;
  e.reference_outputs = residual_reference(run_svd);
  e.errors = [](DType dt) {
    return std::vector<ErrorCase>{{"NaN", [dt](Device d) { linalg::svd(nan_matrix(dt, 3, 0, 2).to(d)); },
                                   ErrorKind::Numerical, "svd: the algorithm did not converge for batch 0"},
                                  {"NaN batched small", [dt](Device d) {
                                     linalg::svdvals(stack({eye(4, 4, dt), nan_matrix(dt, 4, 3, 3)}, 0).to(d));
                                   },
                                   ErrorKind::Numerical, "svdvals: the algorithm did not converge for batch 1"},
                                  {"NaN batched 32x32", [dt](Device d) {
                                     linalg::svd(stack({eye(32, 32, dt), nan_matrix(dt, 32, 5, 7), eye(32, 32, dt)}, 0).to(d));
                                   },
                                   ErrorKind::Numerical, "svd: the algorithm did not converge for batch 1"}};
  };
  return e;
}

// ---- eig ----

// Eigenvalues as [n, 2] (real, imag) sorted by real part, ties (conjugate pairs) by imag.
std::vector<double> sorted_eigenvalues(const HMat& w) {
  std::vector<std::pair<double, double>> v;
  for (const C& x : w.v) v.emplace_back(static_cast<double>(x.real()), static_cast<double>(x.imag()));
  std::sort(v.begin(), v.end(), [](const auto& p, const auto& q) {
    if (std::abs(p.first - q.first) > 1e-3 * (1 + std::abs(p.first))) return p.first < q.first;
    return p.second < q.second;
  });
  std::vector<double> out;
  for (const auto& p : v) {
    out.push_back(p.first);
    out.push_back(p.second);
  }
  return out;
}

std::vector<Tensor> run_eig(const Case& c) {
  const Tensor& a = c.inputs[0];
  const linalg::Eig e = linalg::eig(a);
  const Tensor values_only = linalg::eigvals(a);
  const std::int64_t n = a.size(-1);
  const auto as = host_mats(a), vs = host_mats(e.eigenvectors), ws = host_mats(e.eigenvalues.unsqueeze(-2));
  const auto ws2 = host_mats(values_only.unsqueeze(-2));
  std::vector<double> r(2, 0.0), sorted, sorted2;
  for (std::size_t b = 0; b < as.size(); ++b) {
    HMat vw = vs[b];
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) vw(i, j) *= ws[b](0, j);
    r[0] = std::max(r[0], units(max_diff(mul(as[b], vs[b]), vw), max_abs(as[b]) * 4, n, a.dtype()));
    for (std::int64_t j = 0; j < n; ++j) {
      long double norm = 0;
      for (std::int64_t i = 0; i < n; ++i) norm += std::norm(vs[b](i, j));
      r[1] = std::max(r[1], units(std::abs(std::sqrt(norm) - 1), 1, n, a.dtype()));
    }
    const auto s1 = sorted_eigenvalues(ws[b]), s2 = sorted_eigenvalues(ws2[b]);
    sorted.insert(sorted.end(), s1.begin(), s1.end());
    sorted2.insert(sorted2.end(), s2.begin(), s2.end());
  }
  const auto count = static_cast<std::int64_t>(as.size());
  return {residual_tensor(r, a.device()), from_vector(sorted, {count, n, 2}).to(a.device()),
          from_vector(sorted2, {count, n, 2}).to(a.device())};
}

Entry eig_entry() {
  Entry e = base_entry("linalg.eig");
  e.cases = [](DType dt, Rng& rng) {
    std::vector<Case> cases;
    for (const auto& s : kSquare)
      cases.push_back({shape_str(s.batch) + " n=" + std::to_string(s.n), {make(s.batch, s.n, s.n, dt, rng, Kind::General)}});
    return cases;
  };
  e.run_outputs = run_eig;
  e.reference_outputs = residual_reference(run_eig);
  e.errors = [](DType dt) {
    return std::vector<ErrorCase>{{"NaN", [dt](Device d) { linalg::eig(nan_matrix(dt, 3, 0, 2).to(d)); },
                                   ErrorKind::Numerical, "eig: the algorithm did not converge for batch 0"}};
  };
  return e;
}

FERRITE_CONFORMANCE(cholesky_entry());
FERRITE_CONFORMANCE(cholesky_ex_entry());
FERRITE_CONFORMANCE(solve_entry());
FERRITE_CONFORMANCE(solve_ex_entry());
FERRITE_CONFORMANCE(inv_entry());
FERRITE_CONFORMANCE(lu_entry());
FERRITE_CONFORMANCE(lstsq_entry());
FERRITE_CONFORMANCE(lu_solve_entry());
FERRITE_CONFORMANCE(qr_entry());
FERRITE_CONFORMANCE(eigh_entry());
FERRITE_CONFORMANCE(svd_entry());
FERRITE_CONFORMANCE(eig_entry());

}  // namespace
}  // namespace ferrite::conformance
