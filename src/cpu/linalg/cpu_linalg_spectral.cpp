// The CPU backend's spectral decompositions: eigh (SelfAdjointEigenSolver), svd (BDCSVD,
// which runs Jacobi itself below 16 columns), eig (EigenSolver / ComplexEigenSolver).
// Non-finite input is never handed to Eigen's iterations: such a matrix gets info = n + 1
// and NaN outputs, so the call cannot spin and both backends report it the same way.
#include <limits>

#include "cpu/linalg/cpu_linalg_common.hpp"
#include "cpu/linalg/cpu_linalg_ops.hpp"

namespace ferrite::cpu::linalg {
namespace {

template <class T>
void fill_nan(T* p, std::int64_t count) {
  const Real<T> nan = std::numeric_limits<Real<T>>::quiet_NaN();
  for (std::int64_t i = 0; i < count; ++i) p[i] = T(nan);
}

// Whether the triangle that eigh reads holds a non-finite value.
template <class M>
bool triangle_finite(const M& m, bool upper) {
  const Eigen::Index n = m.rows();
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = upper ? 0 : j; i < (upper ? j + 1 : n); ++i)
      if (!std::isfinite(std::real(m(i, j))) || !std::isfinite(std::imag(m(i, j)))) return false;
  return true;
}

}  // namespace

void eigh(const LinalgDims& d, const Buffer& a, bool upper, bool vectors, const Buffer& w, const Buffer& v,
          const Buffer& info) {
  dispatch(d.dtype, [&](auto tag) {
    using T = decltype(tag);
    using R = Real<T>;
    const std::int64_t n = d.n;
    for_each_matrix("eigh", d.batch, n, [&](std::int64_t b) {
      const ConstRowMap<T> m(a.data_as<T>() + b * n * n, n, n);  // row-major input, read only
      R* wb = w.data_as<R>() + b * n;
      T* vb = vectors ? v.data_as<T>() + b * n * n : nullptr;
      std::int32_t& code = info.data_as<std::int32_t>()[b];
      if (!triangle_finite(m, upper)) {
        fill_nan(wb, n);
        if (vectors) fill_nan(vb, n * n);
        code = static_cast<std::int32_t>(n + 1);
        return;
      }
      // Eigen's solver reads the lower triangle; the upper one is mirrored into it first.
      const Mat<T> full = upper ? Mat<T>(m.template selfadjointView<Eigen::Upper>())
                                : Mat<T>(m.template selfadjointView<Eigen::Lower>());
      const Eigen::SelfAdjointEigenSolver<Mat<T>> es(full, vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
      code = es.info() == Eigen::Success ? 0 : 1;
      Eigen::Map<Eigen::Matrix<R, Eigen::Dynamic, 1>>(wb, n) = es.eigenvalues();
      if (vectors) MatMap<T>(vb, n, n) = es.eigenvectors();  // column-major output
    });
  });
}

// BDCSVD is the accurate driver already: `accurate` changes nothing here.
void svd(const LinalgDims& d, const Buffer& a, bool full, bool vectors, bool /*accurate*/, const Buffer& u,
         const Buffer& s, const Buffer& vh, const Buffer& info) {
  dispatch(d.dtype, [&](auto tag) {
    using T = decltype(tag);
    using R = Real<T>;
    const std::int64_t m = d.m, n = d.n, ucols = full ? m : n;
    for_each_matrix("svd", d.batch, n, [&](std::int64_t b) {
      MatMap<T> am(a.data_as<T>() + b * m * n, m, n);
      R* sb = s.data_as<R>() + b * n;
      std::int32_t& code = info.data_as<std::int32_t>()[b];
      if (!all_finite(am.data(), m * n)) {
        fill_nan(sb, n);
        if (vectors) {
          fill_nan(u.data_as<T>() + b * m * ucols, m * ucols);
          fill_nan(vh.data_as<T>() + b * n * n, n * n);
        }
        code = static_cast<std::int32_t>(n + 1);
        return;
      }
      const unsigned options =
          vectors ? (full ? Eigen::ComputeFullU : Eigen::ComputeThinU) | Eigen::ComputeThinV : 0u;
      const Eigen::BDCSVD<Mat<T>> dec(am, options);
      code = dec.info() == Eigen::Success ? 0 : 1;
      Eigen::Map<Eigen::Matrix<R, Eigen::Dynamic, 1>>(sb, n) = dec.singularValues();
      if (vectors) {
        MatMap<T>(u.data_as<T>() + b * m * ucols, m, ucols) = dec.matrixU();
        MatMap<T>(vh.data_as<T>() + b * n * n, n, n) = dec.matrixV().adjoint();
      }
    });
  });
}

void eig(const LinalgDims& d, const Buffer& a, bool vectors, const Buffer& w, const Buffer& v, const Buffer& info) {
  dispatch(d.dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = Complex<T>;
    const std::int64_t n = d.n;
    for_each_matrix("eig", d.batch, n, [&](std::int64_t b) {
      MatMap<T> am(a.data_as<T>() + b * n * n, n, n);
      C* wb = w.data_as<C>() + b * n;
      std::int32_t& code = info.data_as<std::int32_t>()[b];
      if (!all_finite(am.data(), n * n)) {
        fill_nan(wb, n);
        if (vectors) fill_nan(v.data_as<C>() + b * n * n, n * n);
        code = static_cast<std::int32_t>(n + 1);
        return;
      }
      auto store = [&](const auto& es) {
        code = es.info() == Eigen::Success ? 0 : 1;
        Eigen::Map<Eigen::Matrix<C, Eigen::Dynamic, 1>>(wb, n) = es.eigenvalues();
        if (vectors) MatMap<C>(v.data_as<C>() + b * n * n, n, n) = es.eigenvectors();
      };
      if constexpr (Eigen::NumTraits<T>::IsComplex)
        store(Eigen::ComplexEigenSolver<Mat<T>>(am, vectors));
      else
        store(Eigen::EigenSolver<Mat<T>>(am, vectors));
    });
  });
}

}  // namespace ferrite::cpu::linalg
