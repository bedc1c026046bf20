// The CPU backend's factorisations: Cholesky (Eigen's in-place blocked LLT), LU with partial
// pivoting (Eigen's blocked LU kernel, which also takes m != n and reports the first zero
// pivot as LAPACK's info), lu_solve, lu_unpack and Householder QR.
#include "cpu/linalg/cpu_linalg_ops.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "cpu/linalg/cpu_linalg_common.hpp"

namespace ferrite::cpu::linalg {

// Row-major in; the factor out as linalg_ops.hpp stores it: L column-major, U row-major
// (either way Eigen's kernel runs on a map of the copy that shows A itself).
void cholesky(const LinalgDims& d, const Buffer& a, const Buffer& out, bool upper, const Buffer& info) {
  dispatch("cholesky", d.dtype, [&](auto tag, const Buffer& a, const Buffer& out) {
    using T = decltype(tag);
    const std::int64_t n = d.n;
    for_each_matrix("cholesky", d.batch, n, [&](std::int64_t b) {
      const ConstRowMap<T> src(a.data_as<T>() + b * n * n, n, n);
      T* dst = out.data_as<T>() + b * n * n;
      auto factor = [&](auto&& m) {
        m = src;
        // Eigen's kernels return the failing column (0-based) or -1; LAPACK's info is 1-based.
        const Eigen::Index failed = upper ? Eigen::internal::llt_inplace<T, Eigen::Upper>::blocked(m)
                                          : Eigen::internal::llt_inplace<T, Eigen::Lower>::blocked(m);
        std::int32_t code = failed < 0 ? 0 : static_cast<std::int32_t>(failed + 1);
        // Eigen's test is x <= 0, which NaN passes; LAPACK's potrf stops at a NaN pivot too.
        for (std::int64_t k = 0; k < n; ++k)
          if (std::isnan(std::real(m(k, k)))) {
            if (code == 0 || k + 1 < code) code = static_cast<std::int32_t>(k + 1);
            break;
          }
        if (upper)
          m.template triangularView<Eigen::StrictlyLower>().setZero();
        else
          m.template triangularView<Eigen::StrictlyUpper>().setZero();
        info.data_as<std::int32_t>()[b] = code;
      };
      if (upper)
        factor(RowMap<T>(dst, n, n));
      else
        factor(MatMap<T>(dst, n, n));
    });
  }, input(a), output(out));
}

void lu_factor(const LinalgDims& d, const Buffer& a, const Buffer& pivots, const Buffer& info) {
  dispatch("lu_factor", d.dtype, [&](auto tag, const Buffer& a) {
    using T = decltype(tag);
    const std::int64_t k = std::min(d.m, d.n);
    for_each_matrix("lu_factor", d.batch, k, [&](std::int64_t b) {
      std::vector<int> transpositions(static_cast<std::size_t>(k));
      int swaps = 0;
      T* base = a.data_as<T>() + b * d.m * d.n;
      // Eigen's blocked kernel updates only the leading min(m, n) columns, so a wide matrix
      // is factored as its left square block, then U12 = L11⁻¹·(P·A12).
      const Eigen::Index zero = Eigen::internal::partial_lu_impl<T, Eigen::ColMajor, int>::blocked_lu(
          d.m, k, base, d.m, transpositions.data(), swaps);
      if (d.n > d.m) {
        MatMap<T> whole(base, d.m, d.n);
        auto right = whole.rightCols(d.n - d.m);
        for (std::int64_t i = 0; i < k; ++i)
          if (transpositions[static_cast<std::size_t>(i)] != i) right.row(i).swap(right.row(transpositions[static_cast<std::size_t>(i)]));
        whole.leftCols(d.m).template triangularView<Eigen::UnitLower>().solveInPlace(right);
      }
      std::int32_t* piv = pivots.data_as<std::int32_t>() + b * k;
      for (std::int64_t i = 0; i < k; ++i) piv[i] = transpositions[static_cast<std::size_t>(i)] + 1;
      info.data_as<std::int32_t>()[b] = zero < 0 ? 0 : static_cast<std::int32_t>(zero + 1);
    });
  }, in_out(a));
}

void lu_solve(const LinalgDims& d, const Buffer& lu, const Buffer& pivots, const Buffer& rhs) {
  dispatch("lu_solve", d.dtype, [&](auto tag, const Buffer& lu, const Buffer& rhs) {
    using T = decltype(tag);
    const std::int64_t n = d.n, k = d.m;
    for_each_matrix("lu_solve", d.batch, n, [&](std::int64_t b) {
      const MatMap<T> f(lu.data_as<T>() + b * n * n, n, n);
      MatMap<T> x(rhs.data_as<T>() + b * n * k, n, k);
      const std::int32_t* piv = pivots.data_as<std::int32_t>() + b * n;
      for (std::int64_t i = 0; i < n; ++i)
        if (piv[i] - 1 != i) x.row(i).swap(x.row(piv[i] - 1));
      f.template triangularView<Eigen::UnitLower>().solveInPlace(x);
      f.template triangularView<Eigen::Upper>().solveInPlace(x);
    });
  }, input(lu), in_out(rhs));
}

void lu_unpack(const LinalgDims& d, const Buffer& lu, const Buffer& pivots, const Buffer& p, const Buffer& l,
               const Buffer& u) {
  dispatch("lu", d.dtype, [&](auto tag, const Buffer& lu, const Buffer& p, const Buffer& l, const Buffer& u) {
    using T = decltype(tag);
    const std::int64_t m = d.m, n = d.n, k = std::min(m, n);
    for_each_matrix("lu", d.batch, k, [&](std::int64_t b) {
      const MatMap<T> f(lu.data_as<T>() + b * m * n, m, n);
      const std::int32_t* piv = pivots.data_as<std::int32_t>() + b * k;
      // LAPACK's swaps make P_l·A = L·U, so A = P_lᵀ·L·U: torch's P is P_lᵀ, P[perm[i], i] = 1.
      std::vector<std::int64_t> perm(static_cast<std::size_t>(m));
      std::iota(perm.begin(), perm.end(), 0);
      for (std::int64_t i = 0; i < k; ++i) std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(piv[i] - 1)]);
      MatMap<T> pm(p.data_as<T>() + b * m * m, m, m);
      pm.setZero();
      for (std::int64_t i = 0; i < m; ++i) pm(perm[static_cast<std::size_t>(i)], i) = T(1);
      MatMap<T> lm(l.data_as<T>() + b * m * k, m, k);
      lm = f.leftCols(k).template triangularView<Eigen::UnitLower>();
      MatMap<T> um(u.data_as<T>() + b * k * n, k, n);
      um = f.topRows(k).template triangularView<Eigen::Upper>();
    });
  }, input(lu), output(p), output(l), output(u));
}

void qr(const LinalgDims& d, const Buffer& a, bool complete, const Buffer& q, const Buffer& r) {
  dispatch("qr", d.dtype, [&](auto tag, const Buffer& a, const Buffer& q, const Buffer& r) {
    using T = decltype(tag);
    const std::int64_t m = d.m, n = d.n, k = std::min(m, n), qcols = complete ? m : k;
    for_each_matrix("qr", d.batch, k, [&](std::int64_t b) {
      MatMap<T> am(a.data_as<T>() + b * m * n, m, n);
      const Eigen::HouseholderQR<Eigen::Ref<Mat<T>>> h(am);  // in place: a is scratch
      MatMap<T> rm(r.data_as<T>() + b * qcols * n, qcols, n);
      rm = h.matrixQR().topRows(qcols).template triangularView<Eigen::Upper>();
      if (q.defined()) {
        MatMap<T> qm(q.data_as<T>() + b * m * qcols, m, qcols);
        qm = h.householderQ() * Mat<T>::Identity(m, qcols);
      }
    });
  }, input(a), output(q), output(r));
}

}  // namespace ferrite::cpu::linalg
