// Sparse matrices on any device (issue 15): CSR, CSC and COO made of ordinary tensors (index
// tensors I32 or I64, a values tensor of F32, F64, F16, BF16, C64 or C128) plus the dense
// shape [rows, cols]. Everything stays on the matrix's device: constructors validate there and
// read back one flag, from_dense and coalesce read back one count, and nothing else waits.
// Semantics follow torch.sparse where it has the op. docs/families/sparse.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ferrite/tensor.hpp"

namespace ferrite::sparse {

enum class Layout { CSR, CSC, COO };
std::string_view layout_name(Layout layout);

class SparseMatrix {
 public:
  SparseMatrix() = default;

  bool defined() const { return values_.defined(); }
  Layout layout() const { return layout_; }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t nnz() const { return values_.numel(); }
  /// The values' dtype.
  DType dtype() const { return values_.dtype(); }
  DType index_dtype() const { return first_.dtype(); }
  Device device() const { return values_.device(); }
  const Tensor& values() const { return values_; }
  /// CSR: the row pointers [rows + 1].
  const Tensor& crow_indices() const;
  /// CSR and COO: the column index of every stored element [nnz].
  const Tensor& col_indices() const;
  /// CSC: the column pointers [cols + 1].
  const Tensor& ccol_indices() const;
  /// CSC and COO: the row index of every stored element [nnz].
  const Tensor& row_indices() const;
  /// COO: whether the entries are sorted by (row, col) with no duplicates (always true for
  /// CSR and CSC).
  bool is_coalesced() const { return coalesced_; }
  /// "CSR [3, 4] nnz 5 F32 (I64 indices) cpu", for messages.
  std::string description() const;

  // Assembled by the factories below, which validate; `first`/`second` are (crow, col) for
  // CSR, (ccol, row) for CSC and (row, col) for COO.
  SparseMatrix(Layout layout, Tensor first, Tensor second, Tensor values, std::int64_t rows, std::int64_t cols,
               bool coalesced);

 private:
  Layout layout_ = Layout::CSR;
  Tensor first_, second_, values_;
  std::int64_t rows_ = 0, cols_ = 0;
  bool coalesced_ = true;
};

/// A CSR matrix [rows, cols]. crow_indices [rows + 1] and col_indices [nnz] share an index
/// dtype (I32 or I64), values [nnz]; all on one device. Validated on the device (one flag read
/// back): crow starts at 0, never decreases and ends at nnz; column indices lie in [0, cols)
/// and increase strictly within each row. Any violation is InvalidArgument naming the first
/// offending position.
SparseMatrix csr(Tensor crow_indices, Tensor col_indices, Tensor values, std::int64_t rows, std::int64_t cols);
/// A CSC matrix: the same rules with columns and rows exchanged.
SparseMatrix csc(Tensor ccol_indices, Tensor row_indices, Tensor values, std::int64_t rows, std::int64_t cols);
/// A COO matrix: entries in any order, duplicates allowed (they add up, as torch's
/// sparse_coo_tensor); indices must lie inside the shape (checked on the device).
SparseMatrix coo(Tensor row_indices, Tensor col_indices, Tensor values, std::int64_t rows, std::int64_t cols);

/// The nonzero elements (x != 0: NaN is stored, -0 is not) of a 2-D dense tensor.
SparseMatrix from_dense(const Tensor& dense, Layout layout = Layout::CSR, DType index_dtype = DType::I64);
/// The dense [rows, cols] tensor (COO duplicates summed).
Tensor to_dense(const SparseMatrix& a);
/// Conversions on the device. COO -> CSR/CSC sorts and sums duplicates.
SparseMatrix to_csr(const SparseMatrix& a);
SparseMatrix to_csc(const SparseMatrix& a);
SparseMatrix to_coo(const SparseMatrix& a);
/// COO sorted by (row, col) with duplicates summed in input order; CSR/CSC unchanged.
SparseMatrix coalesce(const SparseMatrix& a);
/// The transpose [cols, rows], free: CSR <-> CSC share arrays, COO swaps its index tensors.
SparseMatrix transpose(const SparseMatrix& a);

/// y = A x for a sparse A [m, k] and a dense vector x [k] of A's dtype; F16/BF16 accumulate in F32.
Tensor spmv(const SparseMatrix& a, const Tensor& x);
/// C = A B for a sparse A [m, k] and a dense B [k, n] (cuSPARSE on the GPU; deterministic).
Tensor spmm(const SparseMatrix& a, const Tensor& b);
/// C = A B for a dense A [m, k] and a sparse B [k, n] (computed as (Bᵀ Aᵀ)ᵀ; the result is a
/// transposed view).
Tensor spmm(const Tensor& a, const SparseMatrix& b);

/// C = A B for sparse A [m, k] and B [k, n] of one values dtype and one index dtype, as
/// torch.sparse.mm of two sparse matrices: a CSR result (any input layout) whose structure is
/// the symbolic product (every (i, j) with some stored A[i, q] and B[q, j]; a sum that cancels
/// to 0 stays stored), columns sorted. cuSPARSE SpGEMM on the GPU (deterministic algorithm);
/// F16/BF16 are computed in F32 and rounded once. nnz of C is read back once.
SparseMatrix spgemm(const SparseMatrix& a, const SparseMatrix& b);
/// beta * input + alpha * (mat1 @ mat2) sampled at input's stored positions, as
/// torch.sparse.sampled_addmm: input sparse [m, n] (any layout; the result is CSR with
/// input's structure), mat1 [m, k] and mat2 [k, n] dense of input's dtype. beta = 0 ignores
/// input's values (NaN/Inf in them do not propagate), as torch's addmm. cuSPARSE SDDMM on the
/// GPU; F16/BF16 are computed in F32 and rounded once. No sync.
SparseMatrix sddmm(const SparseMatrix& input, const Tensor& mat1, const Tensor& mat2, double beta = 1.0,
                   double alpha = 1.0);
/// a + alpha * b for sparse a and b of one shape, values dtype and index dtype, as torch's
/// `a + b` (torch.add(a, b, alpha=alpha)) of CSR tensors: a CSR result holding the union of
/// both structures (an entry that sums to 0 stays stored), columns sorted. nnz is read back once.
SparseMatrix add(const SparseMatrix& a, const SparseMatrix& b, double alpha = 1.0);

}  // namespace ferrite::sparse
