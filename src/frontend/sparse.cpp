// Front end of the sparse matrices (ferrite/sparse.hpp): validation, the layout conversions
// expressed through the backend's few primitives, and the products.
#include "ferrite/sparse.hpp"

#include <limits>
#include <string>

#include "core/extent.hpp"
#include "ferrite/backend.hpp"
#include "ferrite/backend_families/sparse_ops.hpp"
#include "ferrite/elementwise.hpp"
#include "ferrite/operators.hpp"
#include "ferrite/reduction.hpp"
#include "frontend/checks.hpp"

namespace ferrite::sparse {
namespace {

SparseOps& ops_of(Device device) { return backend(device).sparse_ops(); }

bool is_index_dtype(DType d) { return d == DType::I32 || d == DType::I64; }

void check_supported(const char* op, DType values, DType index, Device device) {
  FERRITE_CHECK(is_index_dtype(index), DTypeMismatch, op, ": index dtype ", dtype_name(index),
                " is not supported (I32 or I64)");
  FERRITE_CHECK(ops_of(device).supports(values, index), Unsupported, op, ": values of dtype ", dtype_name(values),
                " are not supported on ", device.str(), " (F32, F64, F16, BF16, C64, C128)");
}

void check_one_d(const char* op, const char* what, const Tensor& t) {
  FERRITE_CHECK(t.dim() == 1, ShapeMismatch, op, ": ", what, " must be 1-D, got ", t.description());
}

Tensor index_tensor(std::int64_t n, DType index, Device device) { return frontend::allocate({n}, index, device); }

// The rows + 1 pointers of a compressed matrix: rows + 1 overflowed int64 for 2^63 - 1 rows
// (a legal COO or dense shape when empty; UBSan, found by api_fuzz_test).
Tensor pointer_tensor(const char* op, std::int64_t rows, DType index, Device device) {
  return index_tensor(detail::checked_add(rows, 1, [&] {
                        return std::string(op) + ": " + std::to_string(rows) +
                               " rows (or columns) need one more compressed pointer than an int64 can count";
                      }),
                      index, device);
}

SparseAllocate allocator(DType values, DType index, Device device) {
  return [=](std::int64_t count, bool index_like) {
    return frontend::allocate({count}, index_like ? index : values, device).buffer();
  };
}

// Tensors over buffers a backend allocated through `allocator`.
Tensor vector_over(const Buffer& b, std::int64_t n) { return Tensor(b, {n}); }

// The compressed rule, checked on the device: one flag read back.
void validate_compressed(const char* op, const char* pointers, const char* indices, const Tensor& ptr,
                         const Tensor& idx, std::int64_t major, std::int64_t minor) {
  const SparseCheck check = ops_of(ptr.device()).validate_compressed(ptr.buffer(), idx.buffer(), major, minor, idx.numel());
  switch (check.code) {
    case SparseCheck::kValid: return;
    case SparseCheck::kFirstPointerNotZero:
      FERRITE_THROW(InvalidArgument, op, ": ", pointers, "[0] must be 0");
    case SparseCheck::kPointersDecrease:
      FERRITE_THROW(InvalidArgument, op, ": ", pointers, " decrease at position ", check.where + 1,
                    " (they must be non-decreasing)");
    case SparseCheck::kLastPointerNotNnz:
      FERRITE_THROW(InvalidArgument, op, ": the last of ", pointers, " must equal nnz = ", idx.numel());
    case SparseCheck::kIndexOutOfRange:
      FERRITE_THROW(InvalidArgument, op, ": ", indices, "[", check.where, "] is outside [0, ", minor, ")");
    case SparseCheck::kIndicesNotSorted:
      FERRITE_THROW(InvalidArgument, op, ": ", indices, "[", check.where,
                    "] does not exceed the index before it in its slice (indices must be sorted and unique; "
                    "build a COO matrix and coalesce for unsorted input)");
    default: FERRITE_THROW(Library, op, ": unknown validation code ", check.code);
  }
}

SparseMatrix make_compressed(const char* op, Layout layout, Tensor ptr, Tensor idx, Tensor values, std::int64_t rows,
                             std::int64_t cols) {
  const bool row_major = layout == Layout::CSR;
  const char* pointers = row_major ? "crow_indices" : "ccol_indices";
  const char* indices = row_major ? "col_indices" : "row_indices";
  frontend::check_defined(op, {&ptr, &idx, &values});
  frontend::check_same_device(op, {&ptr, &idx, &values});
  FERRITE_CHECK(rows >= 0 && cols >= 0, InvalidArgument, op, ": negative shape [", rows, ", ", cols, "]");
  FERRITE_CHECK(ptr.dtype() == idx.dtype(), DTypeMismatch, op, ": ", pointers, " is ", ptr.description(), " but ",
                indices, " is ", idx.description(), " (one index dtype)");
  check_supported(op, values.dtype(), idx.dtype(), values.device());
  check_one_d(op, pointers, ptr);
  check_one_d(op, indices, idx);
  check_one_d(op, "values", values);
  const std::int64_t major = row_major ? rows : cols, minor = row_major ? cols : rows;
  // major + 1 overflows for a dim of 2^63 - 1 (UBSan, api_fuzz_test): compared as numel - 1.
  FERRITE_CHECK(ptr.numel() - 1 == major, ShapeMismatch, op, ": ", pointers, " has ", ptr.numel(),
                " elements, expected ",
                major < std::numeric_limits<std::int64_t>::max() ? std::to_string(major + 1)
                                                                 : std::to_string(major) + " + 1",
                " for shape [", rows, ", ", cols, "]");
  FERRITE_CHECK(idx.numel() == values.numel(), ShapeMismatch, op, ": ", indices, " has ", idx.numel(),
                " elements but values has ", values.numel());
  validate_compressed(op, pointers, indices, ptr, idx, major, minor);
  return SparseMatrix(layout, std::move(ptr), std::move(idx), std::move(values), rows, cols, true);
}

}  // namespace

std::string_view layout_name(Layout layout) {
  switch (layout) {
    case Layout::CSR: return "CSR";
    case Layout::CSC: return "CSC";
    case Layout::COO: return "COO";
  }
  return "?";
}

SparseMatrix::SparseMatrix(Layout layout, Tensor first, Tensor second, Tensor values, std::int64_t rows,
                           std::int64_t cols, bool coalesced)
    : layout_(layout), first_(std::move(first)), second_(std::move(second)), values_(std::move(values)), rows_(rows),
      cols_(cols), coalesced_(coalesced) {}

const Tensor& SparseMatrix::crow_indices() const {
  FERRITE_CHECK(layout_ == Layout::CSR, InvalidArgument, "crow_indices: ", description(), " is not CSR");
  return first_;
}
const Tensor& SparseMatrix::col_indices() const {
  FERRITE_CHECK(layout_ != Layout::CSC, InvalidArgument, "col_indices: ", description(), " is CSC (ccol_indices)");
  return second_;
}
const Tensor& SparseMatrix::ccol_indices() const {
  FERRITE_CHECK(layout_ == Layout::CSC, InvalidArgument, "ccol_indices: ", description(), " is not CSC");
  return first_;
}
const Tensor& SparseMatrix::row_indices() const {
  FERRITE_CHECK(layout_ != Layout::CSR, InvalidArgument, "row_indices: ", description(), " is CSR (crow_indices)");
  return layout_ == Layout::CSC ? second_ : first_;
}

std::string SparseMatrix::description() const {
  if (!defined()) return "undefined sparse matrix";
  return std::string(layout_name(layout_)) + " [" + std::to_string(rows_) + ", " + std::to_string(cols_) + "] nnz " +
         std::to_string(nnz()) + " " + std::string(dtype_name(dtype())) + " (" +
         std::string(dtype_name(index_dtype())) + " indices) " + device().str();
}

SparseMatrix csr(Tensor crow, Tensor col, Tensor values, std::int64_t rows, std::int64_t cols) {
  return make_compressed("sparse::csr", Layout::CSR, std::move(crow), std::move(col), std::move(values), rows, cols);
}

SparseMatrix csc(Tensor ccol, Tensor row, Tensor values, std::int64_t rows, std::int64_t cols) {
  return make_compressed("sparse::csc", Layout::CSC, std::move(ccol), std::move(row), std::move(values), rows, cols);
}

SparseMatrix coo(Tensor row, Tensor col, Tensor values, std::int64_t rows, std::int64_t cols) {
  const char* op = "sparse::coo";
  frontend::check_defined(op, {&row, &col, &values});
  frontend::check_same_device(op, {&row, &col, &values});
  FERRITE_CHECK(rows >= 0 && cols >= 0, InvalidArgument, op, ": negative shape [", rows, ", ", cols, "]");
  FERRITE_CHECK(row.dtype() == col.dtype(), DTypeMismatch, op, ": row_indices is ", row.description(),
                " but col_indices is ", col.description(), " (one index dtype)");
  check_supported(op, values.dtype(), row.dtype(), values.device());
  check_one_d(op, "row_indices", row);
  check_one_d(op, "col_indices", col);
  check_one_d(op, "values", values);
  FERRITE_CHECK(row.numel() == values.numel() && col.numel() == values.numel(), ShapeMismatch, op,
                ": row_indices, col_indices and values have ", row.numel(), ", ", col.numel(), " and ", values.numel(),
                " elements (one per stored element)");
  if (values.numel() > 0) {
    // One flag read back: any index outside the shape.
    // An I32 index cannot reach a bound above its range, so that bound needs no test.
    const auto beyond = [](const Tensor& idx, std::int64_t bound) {
      const bool unreachable = idx.dtype() == DType::I32 && bound > std::numeric_limits<std::int32_t>::max();
      return unreachable ? (idx < 0) : ((idx < 0) | (idx >= Scalar(bound)));
    };
    const bool outside = any(beyond(row, rows) | beyond(col, cols)).item<bool>();
    FERRITE_CHECK(!outside, InvalidArgument, op, ": an index lies outside the shape [", rows, ", ", cols, "]");
  }
  return SparseMatrix(Layout::COO, std::move(row), std::move(col), std::move(values), rows, cols, values.numel() <= 1);
}

SparseMatrix coalesce(const SparseMatrix& a) {
  if (a.layout() != Layout::COO || a.is_coalesced()) return a;
  const SparseOps::CooResult r =
      ops_of(a.device()).coalesce(a.row_indices().buffer(), a.col_indices().buffer(), a.values().buffer(), a.nnz(),
                                  a.rows(), a.cols(), allocator(a.dtype(), a.index_dtype(), a.device()));
  return SparseMatrix(Layout::COO, vector_over(r.rows, r.nnz), vector_over(r.cols, r.nnz), vector_over(r.values, r.nnz),
                      a.rows(), a.cols(), true);
}

SparseMatrix transpose(const SparseMatrix& a) {
  FERRITE_CHECK(a.defined(), InvalidArgument, "sparse::transpose: the matrix is undefined");
  switch (a.layout()) {
    case Layout::CSR:
      return SparseMatrix(Layout::CSC, a.crow_indices(), a.col_indices(), a.values(), a.cols(), a.rows(), true);
    case Layout::CSC:
      return SparseMatrix(Layout::CSR, a.ccol_indices(), a.row_indices(), a.values(), a.cols(), a.rows(), true);
    case Layout::COO:
      return SparseMatrix(Layout::COO, a.col_indices(), a.row_indices(), a.values(), a.cols(), a.rows(), a.nnz() <= 1);
  }
  return a;
}

SparseMatrix to_csr(const SparseMatrix& a) {
  FERRITE_CHECK(a.defined(), InvalidArgument, "sparse::to_csr: the matrix is undefined");
  SparseOps& ops = ops_of(a.device());
  if (a.layout() == Layout::CSR) return a;
  if (a.layout() == Layout::COO) {
    const SparseMatrix c = coalesce(a);
    Tensor ptr = pointer_tensor("sparse::to_csr", a.rows(), a.index_dtype(), a.device());
    ops.compress_indices(c.row_indices().buffer(), ptr.buffer(), a.rows(), c.nnz());
    return SparseMatrix(Layout::CSR, std::move(ptr), c.col_indices(), c.values(), a.rows(), a.cols(), true);
  }
  // CSC holds the CSR of the transpose: transposing that compressed form gives the CSR.
  Tensor ptr = pointer_tensor("sparse::to_csr", a.rows(), a.index_dtype(), a.device());
  Tensor idx = index_tensor(a.nnz(), a.index_dtype(), a.device());
  Tensor values = frontend::allocate({a.nnz()}, a.dtype(), a.device());
  ops.transpose_compressed(a.ccol_indices().buffer(), a.row_indices().buffer(), a.values().buffer(), a.cols(), a.rows(),
                           a.nnz(), ptr.buffer(), idx.buffer(), values.buffer());
  return SparseMatrix(Layout::CSR, std::move(ptr), std::move(idx), std::move(values), a.rows(), a.cols(), true);
}

SparseMatrix to_csc(const SparseMatrix& a) {
  FERRITE_CHECK(a.defined(), InvalidArgument, "sparse::to_csc: the matrix is undefined");
  if (a.layout() == Layout::CSC) return a;
  // The CSC of A is the CSR of Aᵀ.
  return transpose(to_csr(transpose(a)));
}

SparseMatrix to_coo(const SparseMatrix& a) {
  FERRITE_CHECK(a.defined(), InvalidArgument, "sparse::to_coo: the matrix is undefined");
  if (a.layout() == Layout::COO) return a;
  const SparseMatrix c = to_csr(a);
  Tensor rows = index_tensor(c.nnz(), c.index_dtype(), c.device());
  ops_of(c.device()).expand_pointers(c.crow_indices().buffer(), rows.buffer(), c.rows(), c.nnz());
  return SparseMatrix(Layout::COO, std::move(rows), c.col_indices(), c.values(), c.rows(), c.cols(), true);
}

SparseMatrix from_dense(const Tensor& dense, Layout layout, DType index_dtype) {
  const char* op = "sparse::from_dense";
  frontend::check_defined(op, {&dense});
  FERRITE_CHECK(dense.dim() == 2, ShapeMismatch, op, ": expects a 2-D tensor, got ", dense.description());
  check_supported(op, dense.dtype(), index_dtype, dense.device());
  if (layout == Layout::CSC) return transpose(from_dense(dense.t(), Layout::CSR, index_dtype));
  const std::int64_t rows = dense.size(0), cols = dense.size(1);
  Tensor ptr = pointer_tensor(op, rows, index_dtype, dense.device());
  const CompressedResult r = ops_of(dense.device())
                                 .dense_to_compressed(dense.buffer(), ptr.buffer(), rows, cols,
                                                      allocator(dense.dtype(), index_dtype, dense.device()));
  SparseMatrix m(Layout::CSR, std::move(ptr), vector_over(r.idx, r.nnz), vector_over(r.values, r.nnz), rows, cols, true);
  return layout == Layout::COO ? to_coo(m) : m;
}

Tensor to_dense(const SparseMatrix& a) {
  FERRITE_CHECK(a.defined(), InvalidArgument, "sparse::to_dense: the matrix is undefined");
  const SparseMatrix c = a.layout() == Layout::COO ? to_csr(a) : a;
  Tensor dense = frontend::allocate({a.rows(), a.cols()}, a.dtype(), a.device());
  const bool csc = c.layout() == Layout::CSC;
  if (dense.numel() > 0)
    ops_of(a.device()).compressed_to_dense(csc ? c.ccol_indices().buffer() : c.crow_indices().buffer(),
                                           csc ? c.row_indices().buffer() : c.col_indices().buffer(),
                                           c.values().buffer(), dense.buffer(), csc ? a.cols() : a.rows(),
                                           csc ? a.rows() : a.cols(), csc);
  return dense;
}

Tensor spmv(const SparseMatrix& a, const Tensor& x) {
  const char* op = "sparse::spmv";
  FERRITE_CHECK(a.defined(), InvalidArgument, op, ": the matrix is undefined");
  frontend::check_defined(op, {&x});
  FERRITE_CHECK(x.device() == a.device(), DeviceMismatch, op, ": x is ", x.description(), " but A is ", a.description());
  FERRITE_CHECK(x.dtype() == a.dtype(), DTypeMismatch, op, ": x is ", x.description(), " but A is ", a.description());
  FERRITE_CHECK(x.dim() == 1 && x.size(0) == a.cols(), ShapeMismatch, op, ": x is ", x.description(), ", expected [",
                a.cols(), "] for A ", a.description());
  const SparseMatrix c = to_csr(a);
  Tensor y = frontend::allocate({a.rows()}, a.dtype(), a.device());
  if (a.rows() > 0)
    ops_of(a.device()).spmv(c.crow_indices().buffer(), c.col_indices().buffer(), c.values().buffer(), x.buffer(),
                            y.buffer(), a.rows(), a.cols(), c.nnz());
  return y;
}

Tensor spmm(const SparseMatrix& a, const Tensor& b) {
  const char* op = "sparse::spmm";
  FERRITE_CHECK(a.defined(), InvalidArgument, op, ": the sparse matrix is undefined");
  frontend::check_defined(op, {&b});
  FERRITE_CHECK(b.device() == a.device(), DeviceMismatch, op, ": B is ", b.description(), " but A is ", a.description());
  FERRITE_CHECK(b.dtype() == a.dtype(), DTypeMismatch, op, ": B is ", b.description(), " but A is ", a.description());
  FERRITE_CHECK(b.dim() == 2 && b.size(0) == a.cols(), ShapeMismatch, op, ": B is ", b.description(), ", expected [",
                a.cols(), ", n] for A ", a.description());
  const SparseMatrix c = to_csr(a);
  Tensor out = frontend::allocate({a.rows(), b.size(1)}, a.dtype(), a.device());
  if (out.numel() > 0)
    ops_of(a.device()).spmm(c.crow_indices().buffer(), c.col_indices().buffer(), c.values().buffer(), b.buffer(),
                            out.buffer(), a.rows(), a.cols(), b.size(1), c.nnz());
  return out;
}

Tensor spmm(const Tensor& a, const SparseMatrix& b) {
  const char* op = "sparse::spmm";
  FERRITE_CHECK(b.defined(), InvalidArgument, op, ": the sparse matrix is undefined");
  frontend::check_defined(op, {&a});
  FERRITE_CHECK(a.dim() == 2 && a.size(1) == b.rows(), ShapeMismatch, op, ": A is ", a.description(), ", expected [m, ",
                b.rows(), "] for B ", b.description());
  // A B = (Bᵀ Aᵀ)ᵀ; the transpose of B is free, the result a transposed view.
  return spmm(transpose(b), a.t()).t();
}

}  // namespace ferrite::sparse
