// The CPU backend's eigh: Eigen's SelfAdjointEigenSolver.
// Non-finite input is never handed to Eigen's iterations: such a matrix gets info = n + 1
// and NaN outputs, so the call cannot spin and both backends report it the same way. (One
// file per decomposition: each instantiates Eigen's solvers for float, double and
// complex<double>, which runs C64 too (cpu_linalg_common.hpp); together they were the build's
// slowest file, 212 s on one core.)
#include "cpu/linalg/cpu_linalg_common.hpp"
#include "cpu/linalg/cpu_linalg_ops.hpp"

namespace ferrite::cpu::linalg {
namespace {

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
  dispatch("eigh", d.dtype, [&](auto tag, const Buffer& a, const Buffer& w, const Buffer& v) {
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
  }, input(a), output(w), output(vectors ? v : Buffer()));
}


}  // namespace ferrite::cpu::linalg
