// Ops of the linear-algebra family (issue #13), run by Backend::linalg_ops().
// X(enum name, front-end name, family); see ferrite/op.hpp. The _ex variants and the ops
// built from others (solve = lu_factor + lu_solve, lu = lu_factor + unpack, svdvals = svd
// without vectors, eigvalsh = eigh without vectors, eigvals = eig without vectors) share
// the backend entry they run on, so supports() is asked about these names.
#pragma once

#define FERRITE_LINALG_OP_LIST(X)          \
  X(Cholesky, "cholesky", Linalg)          \
  X(LuFactor, "lu_factor", Linalg)         \
  X(LuSolve, "lu_solve", Linalg)           \
  X(Solve, "solve", Linalg)                \
  X(Lu, "lu", Linalg)                      \
  X(Qr, "qr", Linalg)                      \
  X(Eigh, "eigh", Linalg)                  \
  X(Svd, "svd", Linalg)                    \
  X(Eig, "eig", Linalg)
