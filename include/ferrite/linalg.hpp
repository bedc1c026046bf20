// Linear algebra (issue #13): torch.linalg's names and semantics in namespace ferrite::linalg.
//
// Every op takes leading batch dims ([..., m, n]) and F32, F64, C64 or C128 input (other
// dtypes: Unsupported). Matrix results are returned as column-major views (.mT() of a
// contiguous buffer), as PyTorch's linalg results are, except cholesky's upper factor U,
// which is row-major contiguous (computed so without a transpose); use .contiguous() for
// row-major.
// Plain ops read the per-matrix `info` back once and throw ErrorKind::Numerical naming the
// op and the first failing batch index; the _ex variants return `info` (I32, batch shape,
// on the input's device) and never synchronise. Eigen on the CPU, cuSOLVER on the GPU;
// docs/families/linalg.md has the conventions and the dtype table.
#pragma once

#include "ferrite/tensor.hpp"

namespace ferrite::linalg {

/// The Cholesky factor of Hermitian positive-definite a: L with a = L·Lᴴ (or U with
/// a = Uᴴ·U when `upper`). Only that triangle of a is read.
Tensor cholesky(const Tensor& a, bool upper = false);
struct CholeskyEx {
  Tensor L, info;  // info[b] = k > 0: the leading minor of order k is not positive-definite
};
CholeskyEx cholesky_ex(const Tensor& a, bool upper = false);

/// X with a·X = b for square a [..., n, n]; b is [..., n, k] or a vector [..., n] (batch dims
/// broadcast). Singular a: Numerical.
Tensor solve(const Tensor& a, const Tensor& b);
struct SolveEx {
  Tensor result, info;  // info[b] = k > 0: U(k, k) of a's LU is zero (result is Inf/NaN there)
};
SolveEx solve_ex(const Tensor& a, const Tensor& b);

/// Packed LU with partial pivoting of a [..., m, n] and I32 pivots [..., min(m, n)], 1-based
/// as LAPACK (row i was swapped with row pivots[i] - 1). A zero pivot is Numerical.
struct LuFactor {
  Tensor LU, pivots;
};
LuFactor lu_factor(const Tensor& a);
struct LuFactorEx {
  Tensor LU, pivots, info;  // info[b] = k > 0: U(k, k) is exactly zero
};
LuFactorEx lu_factor_ex(const Tensor& a);
/// X with A·X = B from lu_factor's output of a square A; B is [..., n, k].
Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B);
/// a = P·L·U: P [..., m, m], L [..., m, k] unit lower, U [..., k, n] upper (k = min(m, n)).
struct Lu {
  Tensor P, L, U;
};
Lu lu(const Tensor& a);

/// torch.linalg.qr's modes: Q [m, k] R [k, n] (reduced), Q [m, m] R [m, n] (complete), or
/// only R [k, n] (r; Q is an undefined Tensor).
enum class QrMode { Reduced, Complete, R };
struct Qr {
  Tensor Q, R;
};
Qr qr(const Tensor& a, QrMode mode = QrMode::Reduced);

/// Eigenvalues (ascending, real dtype) and orthonormal eigenvectors (columns) of the
/// Hermitian matrix held in a's lower triangle (uplo 'L') or upper triangle ('U'); the other
/// triangle is never read. No convergence (e.g. NaN input): Numerical.
struct Eigh {
  Tensor eigenvalues, eigenvectors;
};
Eigh eigh(const Tensor& a, char uplo = 'L');
Tensor eigvalsh(const Tensor& a, char uplo = 'L');

/// a = U·diag(S)·Vh. S is real and descending; U [..., m, m] and Vh [..., n, n] with
/// full_matrices, else U [..., m, k] and Vh [..., k, n]. No convergence: Numerical.
struct Svd {
  Tensor U, S, Vh;
};
Svd svd(const Tensor& a, bool full_matrices = true);
Tensor svdvals(const Tensor& a);

/// Eigenvalues and unit-norm eigenvectors (columns) of a general square matrix, complex
/// (C64 for F32/C64 input, C128 for F64/C128). No convergence: Numerical.
struct Eig {
  Tensor eigenvalues, eigenvectors;
};
Eig eig(const Tensor& a);
Tensor eigvals(const Tensor& a);

/// Least squares with the full-rank QR driver (PyTorch's CUDA `gels`): for a [..., m, n]
/// with m >= n, X minimising ‖a·X − b‖; for m < n, the minimum-norm X with a·X = b. b is
/// [..., m, k] or [m]; batch dims broadcast. Only the solution is returned (PyTorch's
/// residuals/rank/singular_values are empty for gels too). Rank-deficient a: an exactly zero
/// diagonal of R is Numerical; a nearly rank-deficient a gives large values, as gels (use
/// svd for a rank-revealing solve). F32 and F64 (complex: Unsupported).
Tensor lstsq(const Tensor& a, const Tensor& b);

/// a⁻¹ of square a (through lu_factor and lu_solve against the identity). Singular: Numerical.
Tensor inv(const Tensor& a);

}  // namespace ferrite::linalg
