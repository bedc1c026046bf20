// The CPU backend's eig: Eigen's EigenSolver (real input) and ComplexEigenSolver.
// Non-finite input is never handed to Eigen's iterations: such a matrix gets info = n + 1
// and NaN outputs, so the call cannot spin and both backends report it the same way. (One
// file per decomposition: each instantiates Eigen's solvers for float, double and
// complex<double>, which runs C64 too (cpu_linalg_common.hpp); together they were the build's
// slowest file, 212 s on one core.)
#include "cpu/linalg/cpu_linalg_common.hpp"
#include "cpu/linalg/cpu_linalg_ops.hpp"

namespace ferrite::cpu::linalg {

void eig(const LinalgDims& d, const Buffer& a, bool vectors, const Buffer& w, const Buffer& v, const Buffer& info) {
  dispatch("eig", d.dtype, [&](auto tag, const Buffer& a, const Buffer& w, const Buffer& v) {
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
  }, input(a), output(w), output(vectors ? v : Buffer()));
}

}  // namespace ferrite::cpu::linalg
