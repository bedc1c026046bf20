// Sparse matrices on any device (issue 15): CSR, CSC and COO made of ordinary tensors (index
// tensors I32 or I64, a values tensor of F32, F64, F16, BF16, C64 or C128) plus the dense
// shape [rows, cols]. Everything stays on the matrix's device: constructors validate there and
// read back one flag, from_dense and coalesce read back one count, and nothing else waits.
// Semantics follow torch.sparse where it has the op. docs/families/sparse.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

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
/// to 0 stays stored), columns sorted. GPU: own kernel (A's storage order, as the CPU) when C's row fits shared
/// memory, else cuSPARSE SpGEMM (deterministic); F16/BF16 computed in F32, rounded once. nnz read back once.
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

// ---- 2:4 semi-structured sparsity (cuSPARSELt on the GPU; docs/families/sparse.md) ----
//
// A structured matrix [rows, cols] keeps at most half of every group of consecutive elements
// of a row (the reduction dimension of the products below): 2 of every 4 for F16 and BF16,
// 1 of every 2 for F32 (cuSPARSELt's 50% pattern for float, which is also 2:4). The products
// run on sparse tensor cores through cuSPARSELt, loaded at run time (libcusparseLt.so.0: the
// FERRITE_CUSPARSELT_LIB variable, the loader's path, then Python environments'
// site-packages/nvidia/*/lib); without it they are Unsupported, never a dense fallback. The
// CPU backend multiplies the pruned matrix densely.

/// A pruned matrix ready for the structured products: the pruned dense form (what
/// decompress_24 returns; cuSPARSELt has no decompression) and, on CUDA, cuSPARSELt's
/// compressed form (the kept values and their metadata: opaque bytes, held as I32 words).
class Sparse24Matrix {
 public:
  Sparse24Matrix() = default;
  Sparse24Matrix(Tensor pruned, Tensor compressed) : pruned_(std::move(pruned)), compressed_(std::move(compressed)) {}

  bool defined() const { return pruned_.defined(); }
  std::int64_t rows() const { return pruned_.size(0); }
  std::int64_t cols() const { return pruned_.size(1); }
  DType dtype() const { return pruned_.dtype(); }
  Device device() const { return pruned_.device(); }
  /// The pruned dense matrix [rows, cols].
  const Tensor& pruned() const { return pruned_; }
  /// cuSPARSELt's compressed form on CUDA; undefined on the CPU and for an empty matrix.
  const Tensor& compressed() const { return compressed_; }
  /// "2:4 [32, 64] F16 cuda:0", for messages.
  std::string description() const;

 private:
  Tensor pruned_, compressed_;
};

/// The group of the 50% pattern of `dtype`: 4 for F16/BF16 (2:4), 2 for F32 (1:2);
/// Unsupported for any other dtype.
std::int64_t structured_group(DType dtype);
/// Whether the structured products run on `device`; when not, `reason` (if given) says why
/// and how to install what is missing. No error is thrown.
bool structured_available(Device device, std::string* reason = nullptr);
/// `dense` [rows, cols] (F16, BF16, F32; cols a multiple of the group) with all but the
/// group / 2 largest magnitudes of every group of consecutive row elements set to +0. Ties go
/// to the lower position; NaN ranks above every number (it is kept); -0 and +0 tie. The kept
/// elements are copied bit for bit. Same result on every backend.
Tensor prune_24(const Tensor& dense);
/// The structured matrix of an already pruned `pruned` [rows, cols]: at most group / 2
/// nonzeros (x != 0, NaN counts) per group, else InvalidArgument naming the first bad group
/// (prune it first). cuSPARSELt's shape rule for the sparse operand applies on every backend:
/// rows and cols multiples of 16 (F16/BF16) or 8 (F32), i.e. of 32 bytes. One flag is read back.
Sparse24Matrix compress_24(const Tensor& pruned);
/// The pruned dense matrix (a copy).
Tensor decompress_24(const Sparse24Matrix& a);
/// C = A B for a structured A [m, k] and a dense B [k, n] of A's dtype and device; C has that
/// dtype, accumulated in F32 (F32 input: TF32 products on the GPU, plain F32 on the CPU).
/// n must be a multiple of 8 (F16/BF16) or 4 (F32), i.e. of 16 bytes (cuSPARSELt's dense rule).
/// Deterministic (cuSPARSELt's algorithm 0, no split-K).
Tensor matmul_24(const Sparse24Matrix& a, const Tensor& b);
/// x Wᵀ for a dense x [p, k] and a structured W [n, k] (torch.nn.functional.linear with a
/// semi-structured weight): [p, n]; p must be a multiple of 8 (F16/BF16) or 4 (F32).
Tensor linear_24(const Tensor& x, const Sparse24Matrix& w);

}  // namespace ferrite::sparse
