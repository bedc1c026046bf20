// The backend interface of the linear-algebra family (issue #13).
//
// Most matrices a backend sees here are COLUMN-MAJOR (LAPACK's layout): the front end hands
// over a fresh column-major copy of each input (so a backend may overwrite it) and views
// the column-major outputs back as row-major tensors (.mT(), as PyTorch's own linalg
// results are Fortran-ordered). cholesky and eigh are the exceptions: they read the
// ROW-MAJOR input itself (never written) and copy the triangle they need on the device (a
// row-major upper triangle is the column-major transpose's lower one: that case needs no
// transpose at all; see each method). Batches are dense: matrix b of an [m, n]
// batch starts at element b * m * n. Outputs are allocated by the front end. `info` tensors
// are I32 [batch] with LAPACK's meaning (0 = success, > 0 = the failing minor / pivot /
// unconverged count), are written for every matrix by the backend (their previous contents
// do not matter) on the device; backends never synchronise on them.
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

  /// a: [batch] n×n (m == n) ROW-MAJOR, read only. out: [batch] n×n, the Cholesky factor of
  /// the Hermitian matrix given by a's `upper` (U, A = UᴴU) or lower (L, A = LLᴴ) triangle
  /// (the other triangle of a is never read; that of the factor is zero), stored so that
  /// its memory is a column-major LOWER triangle, the form LAPACK's fast potrf(LOWER) writes:
  /// L COLUMN-MAJOR, U ROW-MAJOR. info[b] = k > 0: the leading minor of order k is not
  /// positive-definite (or its pivot is NaN, as LAPACK's potrf).
  virtual void cholesky(const LinalgDims& d, const Buffer& a, const Buffer& out, bool upper, const Buffer& info) = 0;
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
  /// (a: [batch] n×n ROW-MAJOR, read only; the other triangle is never read). w: [batch, n]
  /// real, ascending. With `vectors`, v ([batch] n×n COLUMN-MAJOR) gets the orthonormal
  /// eigenvectors (columns); else v is undefined. info[b] > 0: no convergence; n + 1 for a
  /// matrix whose triangle holds Inf/NaN (its outputs are then unspecified).
  virtual void eigh(const LinalgDims& d, const Buffer& a, bool upper, bool vectors, const Buffer& w,
                    const Buffer& v, const Buffer& info) = 0;
  /// SVD of a ([batch] m×n with m >= n, destroyed): s [batch, n] real, descending; with
  /// `vectors`, u [batch] m×ucols (ucols = m when `full`, else n) and vh [batch] n×n.
  /// info[b] > 0: no convergence (also for non-finite input). `accurate` = false lets a
  /// backend use a faster iterative driver whose rare non-convergence shows as info > 0
  /// (CUDA: Jacobi, gesvdj); the front end then runs the whole call again with
  /// `accurate` = true (CUDA: QR iteration, gesvd), as PyTorch falls back to gesvd.
  virtual void svd(const LinalgDims& d, const Buffer& a, bool full, bool vectors, bool accurate, const Buffer& u,
                   const Buffer& s, const Buffer& vh, const Buffer& info) = 0;
  /// Eigen-decomposition of a general square matrix (a: [batch] n×n, destroyed): w [batch, n]
  /// and, with `vectors`, v [batch] n×n (unit-norm columns), both complex (C64 for F32/C64
  /// input, C128 for F64/C128). info[b] > 0: no convergence (also for non-finite input).
  virtual void eig(const LinalgDims& d, const Buffer& a, bool vectors, const Buffer& w, const Buffer& v,
                   const Buffer& info) = 0;
};

}  // namespace ferrite
