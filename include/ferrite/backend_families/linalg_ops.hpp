// The backend interface of the linear-algebra family (issue #13).
//
// Every matrix a backend sees here is COLUMN-MAJOR (LAPACK's layout): the front end hands
// over a fresh column-major copy of each input (so a backend may overwrite it) and views
// the column-major outputs back as row-major tensors (.mT(), as PyTorch's own linalg
// results are Fortran-ordered). Batches are dense: matrix b of an [m, n] batch starts at
// element b * m * n. Outputs are allocated by the front end. `info` tensors are I32 [batch]
// with LAPACK's meaning (0 = success, > 0 = the failing minor / pivot / unconverged count)
// and are written on the device; backends never synchronise on them.
#pragma once

#include <cstdint>

#include "ferrite/buffer.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/op.hpp"

namespace ferrite {

struct LinalgDims {
  DType dtype = DType::F64;
  std::int64_t batch = 0, m = 0, n = 0;
};

class LinalgOps {
 public:
  virtual ~LinalgOps() = default;
  virtual bool supports(Op op, DType dtype) const = 0;

  /// a: [batch] n×n (m == n). Overwritten with the Cholesky factor read from and written to
  /// the `upper` (U, A = UᴴU) or lower (L, A = LLᴴ) triangle; the other triangle is zeroed.
  /// info[b] = k > 0: the leading minor of order k is not positive-definite.
  virtual void cholesky(const LinalgDims& d, const Buffer& a, bool upper, const Buffer& info) = 0;
  /// a: [batch] m×n, overwritten with the packed LU of partial pivoting; pivots I32
  /// [batch, min(m, n)], 1-based (LAPACK's ipiv); info[b] = k > 0: U(k, k) is exactly zero.
  virtual void lu_factor(const LinalgDims& d, const Buffer& a, const Buffer& pivots, const Buffer& info) = 0;
  /// Solves A·X = B in place of b ([batch] n×nrhs, d.m = nrhs) from lu_factor's lu and pivots
  /// ([batch] n×n, d.n = n). No check: a zero pivot gives Inf/NaN, as LAPACK.
  virtual void lu_solve(const LinalgDims& d, const Buffer& lu, const Buffer& pivots, const Buffer& b) = 0;
  /// P [batch] m×m, L [batch] m×k (unit diagonal), U [batch] k×n from lu_factor's output.
  virtual void lu_unpack(const LinalgDims& d, const Buffer& lu, const Buffer& pivots, const Buffer& p,
                         const Buffer& l, const Buffer& u) = 0;
  /// Householder QR of a ([batch] m×n, destroyed): q [batch] m×qcols (qcols = k, or m when
  /// `complete`; not written when q is empty) and r [batch] rrows×n (rrows = qcols; zero
  /// below the diagonal).
  virtual void qr(const LinalgDims& d, const Buffer& a, bool complete, const Buffer& q, const Buffer& r) = 0;
  /// Eigen-decomposition of the Hermitian matrix whose `upper` (else lower) triangle a holds
  /// ([batch] n×n; the other triangle is never read). w: [batch, n] real, ascending. With
  /// `vectors`, a is overwritten with the orthonormal eigenvectors (columns); else a is
  /// scratch. info[b] > 0: no convergence (also for non-finite input).
  virtual void eigh(const LinalgDims& d, const Buffer& a, bool upper, bool vectors, const Buffer& w,
                    const Buffer& info) = 0;
  /// SVD of a ([batch] m×n with m >= n, destroyed): s [batch, n] real, descending; with
  /// `vectors`, u [batch] m×ucols (ucols = m when `full`, else n) and vh [batch] n×n.
  /// info[b] > 0: no convergence (also for non-finite input).
  virtual void svd(const LinalgDims& d, const Buffer& a, bool full, bool vectors, const Buffer& u, const Buffer& s,
                   const Buffer& vh, const Buffer& info) = 0;
  /// Eigen-decomposition of a general square matrix (a: [batch] n×n, destroyed): w [batch, n]
  /// and, with `vectors`, v [batch] n×n (unit-norm columns), both complex (C64 for F32/C64
  /// input, C128 for F64/C128). info[b] > 0: no convergence (also for non-finite input).
  virtual void eig(const LinalgDims& d, const Buffer& a, bool vectors, const Buffer& w, const Buffer& v,
                   const Buffer& info) = 0;
};

}  // namespace ferrite
