// Front end of the linear-algebra family: shape and dtype rules (torch.linalg semantics),
// the column-major copies handed to LinalgOps (cholesky and eigh take the row-major input
// itself), the result views, empty matrices (answered here, never by a backend) and the one
// info read-back of the plain ops.
#include "ferrite/linalg.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ferrite/backend.hpp"
#include "ferrite/backend_families/linalg_ops.hpp"
#include "ferrite/factories.hpp"
#include "ferrite/matmul.hpp"
#include "ferrite/reduction.hpp"
#include "ferrite/shape.hpp"
#include "frontend/checks.hpp"

namespace ferrite::linalg {
namespace {

const char* name_of(Op op) { return op_name(op).data(); }

DType real_of(DType d) { return d == DType::C64 ? DType::F32 : d == DType::C128 ? DType::F64 : d; }
DType complex_of(DType d) { return d == DType::F32 || d == DType::C64 ? DType::C64 : DType::C128; }

struct Matrices {
  Shape batch;  // the leading dims
  std::int64_t count = 0, m = 0, n = 0;
  LinalgDims dims(DType dtype) const { return {dtype, count, m, n}; }
};

Shape with(Shape batch, std::initializer_list<std::int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

// The checks every op starts with: a defined tensor of rank >= 2 (square when asked) of a
// dtype the device's backend runs for `op`.
Matrices check_matrices(Op op, const Tensor& a, bool square, const char* what = "a") {
  const char* name = name_of(op);
  frontend::check_defined(name, {&a});
  FERRITE_CHECK(a.dim() >= 2, ShapeMismatch, name, ": ", what, " must be a matrix or a batch of matrices [..., m, n], got ",
                a.description());
  Matrices mats;
  mats.batch.assign(a.shape().begin(), a.shape().end() - 2);
  mats.count = shape_numel(mats.batch);
  mats.m = a.size(-2);
  mats.n = a.size(-1);
  FERRITE_CHECK(!square || mats.m == mats.n, ShapeMismatch, name, ": ", what, " must be square [..., n, n], got ",
                a.description());
  FERRITE_CHECK(a.dtype() == DType::F32 || a.dtype() == DType::F64 || a.dtype() == DType::C64 ||
                    a.dtype() == DType::C128,
                Unsupported, name, ": takes F32, F64, C64 or C128 matrices, got ", a.description());
  frontend::check_supported(op, a.dtype(), a.device());
  return mats;
}

// A fresh column-major copy of the matrices of a (the backend may overwrite it): the
// row-major storage of aᵀ.
Tensor column_major(const Tensor& a) { return a.mT().clone(); }

// A new [batch..., cols, rows] tensor whose buffer a backend fills column-major; .mT() of it
// is the rows x cols result.
Tensor column_major_output(const Shape& batch, std::int64_t rows, std::int64_t cols, DType dtype, Device device) {
  return empty(with(batch, {cols, rows}), dtype, device);
}

Tensor zero_info(const Shape& batch, Device device) { return zeros(batch, DType::I32, device); }
// For a backend call, which writes every matrix's info (no fill needed).
Tensor backend_info(const Shape& batch, Device device) { return empty(batch, DType::I32, device); }

// The one read-back of a plain op.
std::vector<std::int32_t> read_info(const Tensor& info) {
  return info.numel() == 0 ? std::vector<std::int32_t>() : info.to_vector<std::int32_t>();
}
bool any_failed(const std::vector<std::int32_t>& values) {
  return std::any_of(values.begin(), values.end(), [](std::int32_t v) { return v != 0; });
}
// The first nonzero info (in batch order) becomes a Numerical error whose message
// `describe` writes from (info value, flat batch index).
void throw_on_values(const std::vector<std::int32_t>& values,
                     const std::function<std::string(int, std::int64_t)>& describe) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] != 0) FERRITE_THROW(Numerical, describe(values[i], static_cast<std::int64_t>(i)));
}
void throw_on_info(const Tensor& info, const std::function<std::string(int, std::int64_t)>& describe) {
  throw_on_values(read_info(info), describe);
}

// The identity [batch..., n, n] (broadcast view of one n x n eye, made contiguous).
Tensor identity(const Shape& batch, std::int64_t n, DType dtype, Device device) {
  return eye(n, n, dtype, device).expand(with(batch, {n, n})).contiguous();
}

// ---- LU ----

struct LuParts {
  Tensor lu_cm, pivots, info;  // lu_cm: [batch..., n, m] holding the column-major LU
};

LuParts factor(Op op, const Tensor& a, const Matrices& mats) {
  LuParts parts;
  const std::int64_t k = std::min(mats.m, mats.n);
  parts.lu_cm = column_major(a);
  parts.pivots = empty(with(mats.batch, {k}), DType::I32, a.device());
  parts.info = zero_info(mats.batch, a.device());
  if (mats.count > 0 && k > 0)
    backend(a.device()).linalg_ops().lu_factor(mats.dims(a.dtype()), parts.lu_cm.buffer(), parts.pivots.buffer(),
                                               parts.info.buffer());
  (void)op;
  return parts;
}

std::string zero_pivot(const char* name, int info, std::int64_t index) {
  return std::string(name) + ": U[" + std::to_string(info - 1) + ", " + std::to_string(info - 1) + "] of batch " +
         std::to_string(index) + " is exactly zero: the matrix is singular";
}

// Broadcast batch dims of two operands (NumPy rules), for solve and lu_solve.
Shape broadcast_batch(const char* name, const Shape& x, const Shape& y, const Tensor& a, const Tensor& b) {
  const std::size_t rank = std::max(x.size(), y.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t dx = i + x.size() >= rank ? x[i + x.size() - rank] : 1;
    const std::int64_t dy = i + y.size() >= rank ? y[i + y.size() - rank] : 1;
    FERRITE_CHECK(dx == dy || dx == 1 || dy == 1, ShapeMismatch, name, ": batch dims of ", a.description(), " and ",
                  b.description(), " do not broadcast");
    out[i] = dx == 1 ? dy : dx;
  }
  return out;
}

// X with A·X = B given A's factors (lu_cm column-major, pivots), B [batch..., n, k] already
// broadcast to the factors' batch. Returns X as a column-major view.
Tensor solve_with(const LuParts& parts, const Tensor& b, const Shape& batch, std::int64_t n, DType dtype) {
  const std::int64_t k = b.size(-1);
  Tensor x_cm = column_major(b);
  const std::int64_t count = shape_numel(batch);
  if (count > 0 && n > 0 && k > 0)
    backend(b.device()).linalg_ops().lu_solve({dtype, count, k, n}, parts.lu_cm.buffer(), parts.pivots.buffer(),
                                              x_cm.buffer());
  return x_cm.mT();
}

struct SolvePlan {
  Shape batch;
  bool vector = false;
  Tensor a, b;  // broadcast to the common batch; b as [batch..., n, k]
};

SolvePlan plan_solve(Op op, const Tensor& a, const Tensor& b) {
  const char* name = name_of(op);
  const Matrices mats = check_matrices(op, a, true, "A");
  frontend::check_defined(name, {&b});
  frontend::check_same_device(name, {&a, &b});
  frontend::check_same_dtype(name, {&a, &b});
  SolvePlan plan;
  // torch.linalg.solve: b is a vector when it is 1-D or has exactly a's batch dims plus n.
  const Shape a_rows(a.shape().begin(), a.shape().end() - 1);
  plan.vector = b.dim() == 1 || (b.dim() == a.dim() - 1 && b.shape() == a_rows);
  const Tensor bm = plan.vector ? b.unsqueeze(-1) : b;
  FERRITE_CHECK(bm.dim() >= 2 && bm.size(-2) == mats.n, ShapeMismatch, name, ": B ", b.description(),
                " must be [..., n, k] or [..., n] with n = ", mats.n, " of A ", a.description());
  plan.batch = broadcast_batch(name, mats.batch, Shape(bm.shape().begin(), bm.shape().end() - 2), a, b);
  plan.a = a.expand(with(plan.batch, {mats.n, mats.n}));
  plan.b = bm.expand(with(plan.batch, {mats.n, bm.size(-1)}));
  return plan;
}

SolveEx solve_impl(Op op, const Tensor& a, const Tensor& b) {
  SolvePlan plan = plan_solve(op, a, b);
  const Matrices mats{plan.batch, shape_numel(plan.batch), a.size(-1), a.size(-1)};
  const LuParts parts = factor(op, plan.a, mats);
  Tensor x = solve_with(parts, plan.b, plan.batch, mats.n, a.dtype());
  if (plan.vector) x = x.squeeze(-1);
  return {x, parts.info};
}

}  // namespace

// ---- Cholesky ----

// The backend reads a row-major (no copy here) and writes the factor as a column-major
// lower triangle (linalg_ops.hpp): L column-major (returned as its .mT() view, as PyTorch's
// Fortran-ordered result) or U row-major (returned as it is).
CholeskyEx cholesky_ex(const Tensor& a, bool upper) {
  const Matrices mats = check_matrices(Op::Cholesky, a, true);
  Tensor factor = empty(a.shape(), a.dtype(), a.device());
  if (mats.count == 0 || mats.n == 0) return {factor, zero_info(mats.batch, a.device())};
  Tensor info = backend_info(mats.batch, a.device());
  backend(a.device()).linalg_ops().cholesky(mats.dims(a.dtype()), a.buffer(), factor.buffer(), upper, info.buffer());
  return {upper ? factor : factor.mT(), info};
}

Tensor cholesky(const Tensor& a, bool upper) {
  CholeskyEx r = cholesky_ex(a, upper);
  throw_on_info(r.info, [](int info, std::int64_t index) {
    return "cholesky: the leading minor of order " + std::to_string(info) + " of batch " + std::to_string(index) +
           " is not positive-definite";
  });
  return r.L;
}

// ---- LU, solve ----

LuFactorEx lu_factor_ex(const Tensor& a) {
  const Matrices mats = check_matrices(Op::LuFactor, a, false);
  const LuParts parts = factor(Op::LuFactor, a, mats);
  return {parts.lu_cm.mT(), parts.pivots, parts.info};
}

LuFactor lu_factor(const Tensor& a) {
  LuFactorEx r = lu_factor_ex(a);
  throw_on_info(r.info, [](int info, std::int64_t index) { return zero_pivot("lu_factor", info, index); });
  return {r.LU, r.pivots};
}

Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B) {
  const char* name = "lu_solve";
  const Matrices mats = check_matrices(Op::LuSolve, LU, true, "LU");
  frontend::check_defined(name, {&pivots, &B});
  frontend::check_same_device(name, {&LU, &pivots, &B});
  frontend::check_same_dtype(name, {&LU, &B});
  FERRITE_CHECK(pivots.dtype() == DType::I32, DTypeMismatch, name, ": pivots must be I32 (lu_factor's), got ",
                pivots.description());
  FERRITE_CHECK(pivots.dim() >= 1 && pivots.size(-1) == mats.n &&
                    Shape(pivots.shape().begin(), pivots.shape().end() - 1) == mats.batch,
                ShapeMismatch, name, ": pivots ", pivots.description(), " do not match LU ", LU.description());
  FERRITE_CHECK(B.dim() >= 2 && B.size(-2) == mats.n, ShapeMismatch, name, ": B ", B.description(),
                " must be [..., n, k] with n = ", mats.n, " of LU ", LU.description());
  // The pivots are the caller's: the backends swap B's row i with row pivots[i] - 1, so a
  // value outside [1, n] would read and write outside B (heap corruption on the CPU).
  if (pivots.numel() > 0) {
    // Both extremes in one read back (one synchronisation on a GPU, not two).
    const std::vector<std::int32_t> range = stack({amin(pivots), amax(pivots)}).to_vector<std::int32_t>();
    const std::int32_t lo = range[0], hi = range[1];
    FERRITE_CHECK(lo >= 1 && hi <= mats.n, IndexOutOfRange, name, ": pivot ", lo < 1 ? lo : hi,
                  " is outside [1, ", mats.n, "] (pivots ", pivots.description(), ", LU ", LU.description(),
                  "; pivots are lu_factor's 1-based row swaps)");
  }
  const Shape batch = broadcast_batch(name, mats.batch, Shape(B.shape().begin(), B.shape().end() - 2), LU, B);
  LuParts parts;
  parts.lu_cm = column_major(LU.expand(with(batch, {mats.n, mats.n})));
  parts.pivots = pivots.expand(with(batch, {mats.n})).contiguous();
  return solve_with(parts, B.expand(with(batch, {mats.n, B.size(-1)})), batch, mats.n, LU.dtype());
}

Lu lu(const Tensor& a) {
  const Matrices mats = check_matrices(Op::Lu, a, false);
  const std::int64_t k = std::min(mats.m, mats.n);
  const LuParts parts = factor(Op::Lu, a, mats);
  if (mats.count == 0 || k == 0)
    return {identity(mats.batch, mats.m, a.dtype(), a.device()), zeros(with(mats.batch, {mats.m, k}), a.dtype(), a.device()),
            zeros(with(mats.batch, {k, mats.n}), a.dtype(), a.device())};
  Tensor p = column_major_output(mats.batch, mats.m, mats.m, a.dtype(), a.device());
  Tensor l = column_major_output(mats.batch, mats.m, k, a.dtype(), a.device());
  Tensor u = column_major_output(mats.batch, k, mats.n, a.dtype(), a.device());
  backend(a.device()).linalg_ops().lu_unpack(mats.dims(a.dtype()), parts.lu_cm.buffer(), parts.pivots.buffer(),
                                             p.buffer(), l.buffer(), u.buffer());
  return {p.mT(), l.mT(), u.mT()};
}

SolveEx solve_ex(const Tensor& a, const Tensor& b) { return solve_impl(Op::Solve, a, b); }

Tensor solve(const Tensor& a, const Tensor& b) {
  SolveEx r = solve_impl(Op::Solve, a, b);
  throw_on_info(r.info, [](int info, std::int64_t index) { return zero_pivot("solve", info, index); });
  return r.result;
}

Tensor inv(const Tensor& a) {
  const Matrices mats = check_matrices(Op::Solve, a, true);
  SolveEx r = solve_impl(Op::Solve, a, identity(mats.batch, mats.n, a.dtype(), a.device()));
  throw_on_info(r.info, [](int info, std::int64_t index) { return zero_pivot("inv", info, index); });
  return r.result;
}

// ---- least squares ----

Tensor lstsq(const Tensor& a, const Tensor& b) {
  const char* name = "lstsq";
  const Matrices mats = check_matrices(Op::Qr, a, false, "A");
  frontend::check_defined(name, {&b});
  frontend::check_same_device(name, {&a, &b});
  frontend::check_same_dtype(name, {&a, &b});
  FERRITE_CHECK(!is_complex(a.dtype()), Unsupported, name, ": complex A ", a.description(),
                " is not supported yet (the driver multiplies by Qᴴ, and matmul has no complex dtypes)");
  const bool vector = b.dim() == 1;
  const Tensor bm = vector ? b.unsqueeze(-1) : b;
  FERRITE_CHECK(bm.dim() >= 2 && bm.size(-2) == mats.m, ShapeMismatch, name, ": B ", b.description(),
                " must be [..., m, k] or [m] with m = ", mats.m, " of A ", a.description());
  auto check = [&](const Tensor& info) {
    throw_on_info(info, [](int code, std::int64_t index) {
      return "lstsq: A of batch " + std::to_string(index) + " is rank-deficient (R[" + std::to_string(code - 1) + ", " +
             std::to_string(code - 1) + "] is zero); the full-rank QR driver needs full rank (use svd)";
    });
  };
  Tensor x;
  if (mats.m >= mats.n) {  // A = Q·R: X = R⁻¹·Qᵀ·B
    const Qr f = qr(a);
    const SolveEx s = solve_impl(Op::Solve, f.R, matmul(f.Q, bm, {.transpose_a = true}));
    check(s.info);
    x = s.result;
  } else {  // Aᵀ = Q·R, so A = Rᵀ·Qᵀ and the minimum-norm solution is Q·(Rᵀ)⁻¹·B
    const Qr f = qr(a.mT());
    const SolveEx s = solve_impl(Op::Solve, f.R.mT(), bm);
    check(s.info);
    x = matmul(f.Q, s.result);
  }
  return vector ? x.squeeze(-1) : x;
}

// ---- QR ----

Qr qr(const Tensor& a, QrMode mode) {
  const Matrices mats = check_matrices(Op::Qr, a, false);
  const std::int64_t k = std::min(mats.m, mats.n);
  const bool complete = mode == QrMode::Complete;
  const std::int64_t qcols = complete ? mats.m : k;
  if (mats.count == 0 || k == 0) {
    Tensor r = zeros(with(mats.batch, {qcols, mats.n}), a.dtype(), a.device());
    if (mode == QrMode::R) return {Tensor(), r};
    Tensor q = complete ? identity(mats.batch, mats.m, a.dtype(), a.device())
                        : zeros(with(mats.batch, {mats.m, k}), a.dtype(), a.device());
    return {q, r};
  }
  Tensor work = column_major(a);
  Tensor q = mode == QrMode::R ? Tensor() : column_major_output(mats.batch, mats.m, qcols, a.dtype(), a.device());
  Tensor r = column_major_output(mats.batch, qcols, mats.n, a.dtype(), a.device());
  backend(a.device()).linalg_ops().qr(mats.dims(a.dtype()), work.buffer(), complete, q.defined() ? q.buffer() : Buffer(),
                                      r.buffer());
  return {q.defined() ? q.mT() : Tensor(), r.mT()};
}

// ---- eigh ----

namespace {

Eigh eigh_impl(Op op, const Tensor& a, char uplo, bool vectors) {
  const Matrices mats = check_matrices(op, a, true);
  FERRITE_CHECK(uplo == 'L' || uplo == 'U', InvalidArgument, vectors ? "eigh" : "eigvalsh",
                ": uplo must be 'L' or 'U', got '", std::string(1, uplo), "'");
  // The backend reads a row-major as it is (its triangle is the other triangle of the
  // column-major aᴴ, linalg_ops.hpp): no transposed copy here.
  Tensor w = empty(with(mats.batch, {mats.n}), real_of(a.dtype()), a.device());
  Tensor v = vectors ? column_major_output(mats.batch, mats.n, mats.n, a.dtype(), a.device()) : Tensor();
  const bool run = mats.count > 0 && mats.n > 0;
  Tensor info = run ? backend_info(mats.batch, a.device()) : zero_info(mats.batch, a.device());
  if (run) {
    backend(a.device()).linalg_ops().eigh(mats.dims(a.dtype()), a.buffer(), uplo == 'U', vectors, w.buffer(),
                                          vectors ? v.buffer() : Buffer(), info.buffer());
  }
  throw_on_info(info, [vectors](int code, std::int64_t index) {
    return std::string(vectors ? "eigh" : "eigvalsh") + ": the algorithm did not converge for batch " +
           std::to_string(index) + " (info " + std::to_string(code) + "; non-finite input?)";
  });
  return {w, vectors ? v.mT() : Tensor()};
}

Svd svd_impl(const Tensor& a, bool full, bool vectors) {
  const Matrices mats = check_matrices(Op::Svd, a, false);
  const char* name = vectors ? "svd" : "svdvals";
  const std::int64_t k = std::min(mats.m, mats.n);
  const DType dt = a.dtype();
  const Device dev = a.device();
  if (mats.count == 0 || k == 0) {
    Tensor s = empty(with(mats.batch, {k}), real_of(dt), dev);
    if (!vectors) return {Tensor(), s, Tensor()};
    if (full) return {identity(mats.batch, mats.m, dt, dev), s, identity(mats.batch, mats.n, dt, dev)};
    return {zeros(with(mats.batch, {mats.m, k}), dt, dev), s, zeros(with(mats.batch, {k, mats.n}), dt, dev)};
  }
  // Backends take m >= n. A wide a runs as aᵀ = U'·S·Vh' (a's row-major copy is aᵀ's
  // column-major one), and a = Vh'ᵀ·S·U'ᵀ: the transposes of unitary factors are unitary.
  const bool wide = mats.m < mats.n;
  const std::int64_t big = wide ? mats.n : mats.m;
  const std::int64_t ucols = full ? big : k;
  Tensor s = empty(with(mats.batch, {k}), real_of(dt), dev);
  Tensor u = vectors ? column_major_output(mats.batch, big, ucols, dt, dev) : Tensor();
  Tensor vh = vectors ? column_major_output(mats.batch, k, k, dt, dev) : Tensor();
  Tensor info = backend_info(mats.batch, dev);
  auto run = [&](bool accurate) {
    Tensor work = wide ? a.clone() : column_major(a);
    backend(dev).linalg_ops().svd({dt, mats.count, big, k}, work.buffer(), full, vectors, accurate,
                                  vectors ? u.buffer() : Buffer(), s.buffer(), vectors ? vh.buffer() : Buffer(),
                                  info.buffer());
  };
  // The fast driver first; any failure reruns the whole call with the accurate one (as
  // PyTorch's gesvdj -> gesvd fallback), whose info is then final. Non-finite input fails
  // both (info n + 1), so it costs a second call only on the error path.
  run(false);
  std::vector<std::int32_t> values = read_info(info);
  if (any_failed(values)) {
    run(true);
    values = read_info(info);
  }
  throw_on_values(values, [name](int code, std::int64_t index) {
    return std::string(name) + ": the algorithm did not converge for batch " + std::to_string(index) + " (info " +
           std::to_string(code) + "; non-finite input?)";
  });
  if (!vectors) return {Tensor(), s, Tensor()};
  // u holds U' column-major ([ucols, big] row-major = U'ᵀ); vh holds Vh' ([k, k] = Vh'ᵀ).
  if (wide) return {vh, s, u};
  return {u.mT(), s, vh.mT()};
}

Eig eig_impl(const Tensor& a, bool vectors) {
  const Matrices mats = check_matrices(Op::Eig, a, true);
  const DType ct = complex_of(a.dtype());
  Tensor work = column_major(a);
  Tensor w = empty(with(mats.batch, {mats.n}), ct, a.device());
  Tensor v = vectors ? column_major_output(mats.batch, mats.n, mats.n, ct, a.device()) : Tensor();
  const bool run = mats.count > 0 && mats.n > 0;
  Tensor info = run ? backend_info(mats.batch, a.device()) : zero_info(mats.batch, a.device());
  if (run) {
    backend(a.device()).linalg_ops().eig(mats.dims(a.dtype()), work.buffer(), vectors, w.buffer(),
                                         vectors ? v.buffer() : Buffer(), info.buffer());
  }
  throw_on_info(info, [vectors](int code, std::int64_t index) {
    return std::string(vectors ? "eig" : "eigvals") + ": the algorithm did not converge for batch " +
           std::to_string(index) + " (info " + std::to_string(code) + "; non-finite input?)";
  });
  return {w, vectors ? v.mT() : Tensor()};
}

}  // namespace

Eigh eigh(const Tensor& a, char uplo) { return eigh_impl(Op::Eigh, a, uplo, true); }
Tensor eigvalsh(const Tensor& a, char uplo) { return eigh_impl(Op::Eigh, a, uplo, false).eigenvalues; }
Svd svd(const Tensor& a, bool full_matrices) { return svd_impl(a, full_matrices, true); }
Tensor svdvals(const Tensor& a) { return svd_impl(a, false, false).S; }
Eig eig(const Tensor& a) { return eig_impl(a, true); }
Tensor eigvals(const Tensor& a) { return eig_impl(a, false).eigenvalues; }

}  // namespace ferrite::linalg
