// ferrite.linalg: torch.linalg's names, keywords and named-tuple results over ferrite/linalg.hpp
// (eigh -> (eigenvalues, eigenvectors), qr -> (Q, R), ...). Matrix results are column-major
// views, as torch.linalg's are (cholesky's upper factor is row-major: same values).
#include "common.hpp"

namespace ferrite::py {

namespace {

linalg::QrMode qr_mode(const std::string& mode) {
  if (mode == "reduced") return linalg::QrMode::Reduced;
  if (mode == "complete") return linalg::QrMode::Complete;
  if (mode == "r") return linalg::QrMode::R;
  FERRITE_THROW(InvalidArgument, "linalg.qr: mode must be 'reduced', 'complete' or 'r', got '", mode, "'");
}

char uplo_char(const std::string& uplo, const char* op) {
  FERRITE_CHECK(uplo == "L" || uplo == "U", InvalidArgument, op, ": UPLO must be 'L' or 'U', got '", uplo, "'");
  return uplo[0];
}

// check_errors=True raises as the plain op does (torch's _ex keyword); the info tensor is
// read back only then.
void check_info(const Tensor& info, const char* op) {
  const auto codes = info.to_vector<std::int64_t>();
  for (std::size_t b = 0; b < codes.size(); ++b)
    FERRITE_CHECK(codes[b] == 0, Numerical, op, ": failed at batch index ", b, " (info ", codes[b], ")");
}

}  // namespace

void bind_linalg(nb::module_& m) {
  nb::module_ la = submodule(m, "linalg", "torch.linalg's ops over ferrite::linalg (F32, F64, C64, C128).");
  const nb::object eigh_t = result_type(m, "linalg_eigh", "eigenvalues eigenvectors");
  const nb::object eig_t = result_type(m, "linalg_eig", "eigenvalues eigenvectors");
  const nb::object svd_t = result_type(m, "linalg_svd", "U S Vh");
  const nb::object qr_t = result_type(m, "linalg_qr", "Q R");
  const nb::object lu_t = result_type(m, "linalg_lu", "P L U");
  const nb::object lu_factor_t = result_type(m, "linalg_lu_factor", "LU pivots");
  const nb::object lu_factor_ex_t = result_type(m, "linalg_lu_factor_ex", "LU pivots info");
  const nb::object cholesky_ex_t = result_type(m, "linalg_cholesky_ex", "L info");
  const nb::object solve_ex_t = result_type(m, "linalg_solve_ex", "result info");
  const nb::object lstsq_t = result_type(m, "linalg_lstsq", "solution residuals rank singular_values");

  la.def("cholesky", [](const Tensor& a, bool upper) { return linalg::cholesky(a, upper); }, nb::arg("A"),
         nb::kw_only(), nb::arg("upper") = false, "L with A = L Lᴴ (U with A = Uᴴ U when upper); one triangle is read.");
  la.def("cholesky_ex", [cholesky_ex_t](const Tensor& a, bool upper, bool check_errors) {
        auto r = linalg::cholesky_ex(a, upper);
        if (check_errors) check_info(r.info, "linalg.cholesky_ex");
        return named(cholesky_ex_t, r.L, r.info);
      }, nb::arg("A"), nb::kw_only(), nb::arg("upper") = false, nb::arg("check_errors") = false,
      "(L, info) without synchronising: info[b] = k > 0 when the minor of order k is not positive-definite.");
  la.def("solve", [](const Tensor& a, const Tensor& b, bool left) {
        FERRITE_CHECK(left, Unsupported, "linalg.solve: left=False is not implemented");
        return linalg::solve(a, b);
      }, nb::arg("A"), nb::arg("B"), nb::kw_only(), nb::arg("left") = true, "X with A X = B; singular A raises.");
  la.def("solve_ex", [solve_ex_t](const Tensor& a, const Tensor& b, bool left, bool check_errors) {
        FERRITE_CHECK(left, Unsupported, "linalg.solve_ex: left=False is not implemented");
        auto r = linalg::solve_ex(a, b);
        if (check_errors) check_info(r.info, "linalg.solve_ex");
        return named(solve_ex_t, r.result, r.info);
      }, nb::arg("A"), nb::arg("B"), nb::kw_only(), nb::arg("left") = true, nb::arg("check_errors") = false,
      "(result, info) without synchronising.");
  la.def("lu_factor", [lu_factor_t](const Tensor& a, bool pivot) {
        FERRITE_CHECK(pivot, Unsupported, "linalg.lu_factor: pivot=False is not implemented");
        auto r = linalg::lu_factor(a);
        return named(lu_factor_t, r.LU, r.pivots);
      }, nb::arg("A"), nb::kw_only(), nb::arg("pivot") = true,
      "(LU, pivots): packed LU with partial pivoting, int32 pivots 1-based as LAPACK.");
  la.def("lu_factor_ex", [lu_factor_ex_t](const Tensor& a, bool pivot, bool check_errors) {
        FERRITE_CHECK(pivot, Unsupported, "linalg.lu_factor_ex: pivot=False is not implemented");
        auto r = linalg::lu_factor_ex(a);
        if (check_errors) check_info(r.info, "linalg.lu_factor_ex");
        return named(lu_factor_ex_t, r.LU, r.pivots, r.info);
      }, nb::arg("A"), nb::kw_only(), nb::arg("pivot") = true, nb::arg("check_errors") = false);
  la.def("lu_solve", [](const Tensor& LU, const Tensor& pivots, const Tensor& b, bool left, bool adjoint) {
        FERRITE_CHECK(left && !adjoint, Unsupported, "linalg.lu_solve: left=False and adjoint=True are not implemented");
        return linalg::lu_solve(LU, pivots, b);
      }, nb::arg("LU"), nb::arg("pivots"), nb::arg("B"), nb::kw_only(), nb::arg("left") = true,
      nb::arg("adjoint") = false, "X with A X = B from lu_factor's (LU, pivots).");
  la.def("lu", [lu_t](const Tensor& a, bool pivot) {
        FERRITE_CHECK(pivot, Unsupported, "linalg.lu: pivot=False is not implemented");
        auto r = linalg::lu(a);
        return named(lu_t, r.P, r.L, r.U);
      }, nb::arg("A"), nb::kw_only(), nb::arg("pivot") = true, "(P, L, U) with A = P L U.");
  la.def("qr", [qr_t](const Tensor& a, const std::string& mode) {
        auto r = linalg::qr(a, qr_mode(mode));
        // mode='r': Q is an empty tensor, as torch.linalg.qr's.
        Tensor q = r.Q.defined() ? r.Q : empty({0}, a.dtype(), a.device());
        return named(qr_t, q, r.R);
      }, nb::arg("A"), nb::arg("mode") = "reduced", "(Q, R); mode 'reduced', 'complete' or 'r' (Q empty).");
  la.def("eigh", [eigh_t](const Tensor& a, const std::string& uplo) {
        auto r = linalg::eigh(a, uplo_char(uplo, "linalg.eigh"));
        return named(eigh_t, r.eigenvalues, r.eigenvectors);
      }, nb::arg("A"), nb::arg("UPLO") = "L",
      "(eigenvalues ascending, eigenvectors as columns) of the Hermitian matrix in A's UPLO triangle.");
  la.def("eigvalsh", [](const Tensor& a, const std::string& uplo) {
        return linalg::eigvalsh(a, uplo_char(uplo, "linalg.eigvalsh"));
      }, nb::arg("A"), nb::arg("UPLO") = "L");
  la.def("svd", [svd_t](const Tensor& a, bool full_matrices, std::optional<std::string> driver) {
        FERRITE_CHECK(!driver, Unsupported, "linalg.svd: driver= is not implemented");
        auto r = linalg::svd(a, full_matrices);
        return named(svd_t, r.U, r.S, r.Vh);
      }, nb::arg("A"), nb::arg("full_matrices") = true, nb::kw_only(), nb::arg("driver") = nb::none(),
      "(U, S descending, Vh) with A = U diag(S) Vh.");
  la.def("svdvals", [](const Tensor& a) { return linalg::svdvals(a); }, nb::arg("A"));
  la.def("eig", [eig_t](const Tensor& a) {
        auto r = linalg::eig(a);
        return named(eig_t, r.eigenvalues, r.eigenvectors);
      }, nb::arg("A"), "Complex (eigenvalues, unit-norm eigenvectors as columns) of a general square matrix.");
  la.def("eigvals", [](const Tensor& a) { return linalg::eigvals(a); }, nb::arg("A"));
  la.def("lstsq", [lstsq_t](const Tensor& a, const Tensor& b, std::optional<double> rcond,
                            std::optional<std::string> driver) {
        FERRITE_CHECK(!driver || *driver == "gels", Unsupported, "linalg.lstsq: only driver='gels' is implemented, got '",
                      *driver, "'");
        (void)rcond;  // gels ignores rcond, as torch's does
        Tensor x = linalg::lstsq(a, b);
        // gels computes no residuals, rank or singular values: empty, as torch's gels.
        auto none = [&](DType d) { return empty({0}, d, a.device()); };
        return named(lstsq_t, x, none(a.dtype()), none(DType::I64), none(a.dtype()));
      }, nb::arg("A"), nb::arg("B"), nb::arg("rcond") = nb::none(), nb::kw_only(), nb::arg("driver") = nb::none(),
      "(solution, residuals, rank, singular_values) with the full-rank QR driver gels (the last three empty).");
  la.def("inv", [](const Tensor& a) { return linalg::inv(a); }, nb::arg("A"), "A⁻¹; singular A raises.");
}

}  // namespace ferrite::py
