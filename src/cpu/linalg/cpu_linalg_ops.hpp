// The CPU backend's linear algebra (Eigen), one free function per LinalgOps method; the
// LinalgOps object (cpu_linalg_ops.cpp) forwards to them. Arguments as in linalg_ops.hpp.
#pragma once

#include "ferrite/backend_families/linalg_ops.hpp"

namespace ferrite::cpu::linalg {

void cholesky(const LinalgDims& d, const Buffer& a, const Buffer& out, bool upper, const Buffer& info);
void lu_factor(const LinalgDims& d, const Buffer& a, const Buffer& pivots, const Buffer& info);
void lu_solve(const LinalgDims& d, const Buffer& lu, const Buffer& pivots, const Buffer& rhs);
void lu_unpack(const LinalgDims& d, const Buffer& lu, const Buffer& pivots, const Buffer& p, const Buffer& l,
               const Buffer& u);
void qr(const LinalgDims& d, const Buffer& a, bool complete, const Buffer& q, const Buffer& r);
void eigh(const LinalgDims& d, const Buffer& a, bool upper, bool vectors, const Buffer& w, const Buffer& v,
          const Buffer& info);
void svd(const LinalgDims& d, const Buffer& a, bool full, bool vectors, bool accurate, const Buffer& u,
         const Buffer& s, const Buffer& vh, const Buffer& info);
void eig(const LinalgDims& d, const Buffer& a, bool vectors, const Buffer& w, const Buffer& v, const Buffer& info);

}  // namespace ferrite::cpu::linalg
