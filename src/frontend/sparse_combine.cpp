// Front end of the sparse ops whose result is sparse (ferrite/sparse.hpp): spgemm (sparse ×
// sparse), sddmm (torch.sparse.sampled_addmm) and add. Inputs of any layout become CSR; the
// results are CSR. F16/BF16 operands are widened to F32 here, so every backend computes in F32
// and the result is rounded once (cuSPARSE's SpGEMM and SDDMM have no F32-accumulating mode
// for 16-bit values that both backends could match).
#include <limits>
#include <string>

#include "core/extent.hpp"
#include "ferrite/backend.hpp"
#include "ferrite/backend_families/sparse_ops.hpp"
#include "ferrite/sparse.hpp"
#include "frontend/checks.hpp"

namespace ferrite::sparse {
namespace {

SparseOps& ops_of(Device device) { return backend(device).sparse_ops(); }

bool is_half(DType d) { return d == DType::F16 || d == DType::BF16; }

// The dtype the backends compute in.
DType work_dtype(DType d) { return is_half(d) ? DType::F32 : d; }

SparseAllocate allocator(DType values, DType index, Device device) {
  return [=](std::int64_t count, bool index_like) {
    return frontend::allocate({count}, index_like ? index : values, device).buffer();
  };
}

void check_matrix(const char* op, const char* name, const SparseMatrix& m) {
  FERRITE_CHECK(m.defined(), InvalidArgument, op, ": ", name, " is undefined");
}

// One device, one values dtype and one index dtype for two sparse operands.
void check_pair(const char* op, const SparseMatrix& a, const SparseMatrix& b) {
  check_matrix(op, "A", a);
  check_matrix(op, "B", b);
  FERRITE_CHECK(a.device() == b.device(), DeviceMismatch, op, ": A is ", a.description(), " but B is ",
                b.description());
  FERRITE_CHECK(a.dtype() == b.dtype(), DTypeMismatch, op, ": A is ", a.description(), " but B is ", b.description(),
                " (one values dtype)");
  FERRITE_CHECK(a.index_dtype() == b.index_dtype(), DTypeMismatch, op, ": A is ", a.description(), " but B is ",
                b.description(), " (one index dtype)");
}

// A CSR [rows, cols] with no stored element.
SparseMatrix empty_csr(std::int64_t rows, std::int64_t cols, DType values, DType index, Device device) {
  // rows + 1 overflows for 2^63 - 1 rows (as in sparse.cpp's pointer_tensor).
  const std::int64_t pointers = detail::checked_add(rows, 1, [&] {
    return "sparse: " + std::to_string(rows) + " rows need one more compressed pointer than an int64 can count";
  });
  return SparseMatrix(Layout::CSR, zeros({pointers}, index, device), zeros({0}, index, device),
                      zeros({0}, values, device), rows, cols, true);
}

// The CSR built from a backend's result, its values rounded back to `dtype`.
SparseMatrix from_result(Tensor ptr, const CompressedResult& r, std::int64_t rows, std::int64_t cols, DType dtype) {
  Tensor values(r.values, {r.nnz});
  return SparseMatrix(Layout::CSR, std::move(ptr), Tensor(r.idx, {r.nnz}), values.to(dtype), rows, cols, true);
}

}  // namespace

SparseMatrix spgemm(const SparseMatrix& a, const SparseMatrix& b) {
  const char* op = "sparse::spgemm";
  check_pair(op, a, b);
  FERRITE_CHECK(a.cols() == b.rows(), ShapeMismatch, op, ": A is ", a.description(), " but B is ", b.description(),
                " (A's columns must equal B's rows)");
  const std::int64_t m = a.rows(), k = a.cols(), n = b.cols();
  const DType dtype = a.dtype(), index = a.index_dtype(), work = work_dtype(dtype);
  const Device device = a.device();
  const SparseMatrix ca = to_csr(a), cb = to_csr(b);
  if (ca.nnz() == 0 || cb.nnz() == 0 || m == 0 || n == 0) return empty_csr(m, n, dtype, index, device);
  const Tensor av = ca.values().to(work), bv = cb.values().to(work);
  Tensor ptr = frontend::allocate({m + 1}, index, device);
  const CompressedResult r = ops_of(device).spgemm(
      ca.crow_indices().buffer(), ca.col_indices().buffer(), av.buffer(), ca.nnz(), cb.crow_indices().buffer(),
      cb.col_indices().buffer(), bv.buffer(), cb.nnz(), ptr.buffer(), m, k, n, allocator(work, index, device));
  return from_result(std::move(ptr), r, m, n, dtype);
}

SparseMatrix sddmm(const SparseMatrix& input, const Tensor& mat1, const Tensor& mat2, double beta, double alpha) {
  const char* op = "sparse::sddmm";
  check_matrix(op, "input", input);
  frontend::check_defined(op, {&mat1, &mat2});
  for (const Tensor* t : {&mat1, &mat2}) {
    FERRITE_CHECK(t->device() == input.device(), DeviceMismatch, op, ": ", t == &mat1 ? "mat1" : "mat2", " is ",
                  t->description(), " but input is ", input.description());
    FERRITE_CHECK(t->dtype() == input.dtype(), DTypeMismatch, op, ": ", t == &mat1 ? "mat1" : "mat2", " is ",
                  t->description(), " but input is ", input.description());
  }
  FERRITE_CHECK(mat1.dim() == 2 && mat2.dim() == 2 && mat1.size(0) == input.rows() && mat2.size(1) == input.cols() &&
                    mat1.size(1) == mat2.size(0),
                ShapeMismatch, op, ": mat1 ", mat1.description(), " @ mat2 ", mat2.description(),
                " does not give input's shape [", input.rows(), ", ", input.cols(), "]");
  const std::int64_t m = input.rows(), k = mat1.size(1), n = input.cols();
  const DType dtype = input.dtype(), work = work_dtype(dtype);
  const SparseMatrix c = to_csr(input);
  // The result's values start as input's (a copy: sddmm writes in place), or as zeros when
  // beta = 0 so that NaN/Inf in input cannot reach the result.
  Tensor values = beta == 0 ? zeros({c.nnz()}, work, c.device())
                            : (is_half(dtype) ? c.values().to(work) : c.values().clone());
  if (c.nnz() > 0 && (k > 0 || beta != 1)) {
    // k = 0: the product is an empty sum, the result beta * input; the backends get it as a
    // product of zero [m, 1] and [1, n] factors (cuSPARSE takes no empty dense operand).
    const bool empty = k == 0;
    const Tensor m1 = empty ? zeros({m, 1}, work, c.device()) : mat1.to(work);
    const Tensor m2 = empty ? zeros({1, n}, work, c.device()) : mat2.to(work);
    ops_of(c.device()).sddmm(c.crow_indices().buffer(), c.col_indices().buffer(), values.buffer(), c.nnz(),
                             m1.buffer(), m2.buffer(), m, empty ? 1 : k, n, alpha, beta);
  }
  return SparseMatrix(Layout::CSR, c.crow_indices(), c.col_indices(), values.to(dtype), m, n, true);
}

SparseMatrix add(const SparseMatrix& a, const SparseMatrix& b, double alpha) {
  const char* op = "sparse::add";
  check_pair(op, a, b);
  FERRITE_CHECK(a.rows() == b.rows() && a.cols() == b.cols(), ShapeMismatch, op, ": A is ", a.description(),
                " but B is ", b.description(), " (one shape)");
  const std::int64_t m = a.rows(), n = a.cols();
  const DType dtype = a.dtype(), index = a.index_dtype();
  const Device device = a.device();
  const SparseMatrix ca = to_csr(a), cb = to_csr(b);
  if ((ca.nnz() == 0 && cb.nnz() == 0) || m == 0 || n == 0) return empty_csr(m, n, dtype, index, device);
  FERRITE_CHECK(index == DType::I64 || ca.nnz() + cb.nnz() <= std::numeric_limits<std::int32_t>::max(),
                InvalidArgument, op, ": up to ", ca.nnz() + cb.nnz(), " stored elements may not fit I32 indices; use I64");
  Tensor ptr = frontend::allocate({m + 1}, index, device);
  const CompressedResult r =
      ops_of(device).add(ca.crow_indices().buffer(), ca.col_indices().buffer(), ca.values().buffer(),
                         cb.crow_indices().buffer(), cb.col_indices().buffer(), cb.values().buffer(), ptr.buffer(), m,
                         n, alpha, allocator(dtype, index, device));
  return from_result(std::move(ptr), r, m, n, dtype);
}

}  // namespace ferrite::sparse
