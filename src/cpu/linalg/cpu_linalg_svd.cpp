// The CPU backend's svd: Eigen's BDCSVD (which runs Jacobi itself below 16 columns).
// Non-finite input is never handed to Eigen's iterations: such a matrix gets info = n + 1
// and NaN outputs, so the call cannot spin and both backends report it the same way. (One
// file per decomposition: each instantiates Eigen's solvers for float, double and
// complex<double>, which runs C64 too (cpu_linalg_common.hpp); together they were the build's
// slowest file, 212 s on one core.)
#include "cpu/linalg/cpu_linalg_common.hpp"
#include "cpu/linalg/cpu_linalg_ops.hpp"

namespace ferrite::cpu::linalg {

// BDCSVD is the accurate driver already: `accurate` changes nothing here.
void svd(const LinalgDims& d, const Buffer& a, bool full, bool vectors, bool /*accurate*/, const Buffer& u,
         const Buffer& s, const Buffer& vh, const Buffer& info) {
  dispatch("svd", d.dtype, [&](auto tag, const Buffer& a, const Buffer& u, const Buffer& s, const Buffer& vh) {
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
  }, input(a), output(vectors ? u : Buffer()), output(s), output(vectors ? vh : Buffer()));
}

}  // namespace ferrite::cpu::linalg
