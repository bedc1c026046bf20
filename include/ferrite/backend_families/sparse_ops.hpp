// The backend interface of the sparse matrices (ferrite/sparse.hpp). A backend hands it out
// through Backend::sparse_ops(); each backend implements it in its own files
// (src/cpu/sparse/, src/cuda/sparse/). Like Backend, it receives validated Buffers from the
// front end and may only assert.
//
// One compressed format serves CSR and CSC: `ptr` [major + 1] and `idx` [nnz] of the index
// dtype (I32 or I64), `values` [nnz]. For CSR, major = rows and idx are column indices; CSC is
// the CSR of the transpose (major = cols, idx = row indices). Compressed inputs are valid:
// ptr[0] = 0, non-decreasing, ptr[major] = nnz, idx in [0, minor) and strictly increasing
// within each major slice (sorted, no duplicates).
#pragma once

#include <cstdint>
#include <cstddef>
#include <functional>
#include <string>

#include "ferrite/buffer.hpp"
#include "ferrite/dtype.hpp"

namespace ferrite {

/// What validate_compressed found: the first problem in index order, or kValid.
struct SparseCheck {
  enum Code : int {
    kValid = 0,
    kFirstPointerNotZero = 1,
    kPointersDecrease = 2,   // ptr[where + 1] < ptr[where]
    kLastPointerNotNnz = 3,  // ptr[major] != nnz
    kIndexOutOfRange = 4,    // idx[where] outside [0, minor)
    kIndicesNotSorted = 5,   // idx[where] <= idx[where - 1] within one major slice
  };
  int code = kValid;
  std::int64_t where = 0;
};

/// A Buffer the backend asks the front end for once it knows a count (nnz after coalescing or
/// after dense_to_compressed): index_like = true gives one of the index dtype, else one of the
/// values' dtype.
using SparseAllocate = std::function<Buffer(std::int64_t count, bool index_like)>;

struct CompressedResult {
  Buffer idx, values;
  std::int64_t nnz = 0;
};

class SparseOps {
 public:
  virtual ~SparseOps() = default;
  /// Whether sparse matrices of `values` and `index` dtypes run on this backend.
  virtual bool supports(DType values, DType index) const = 0;

  /// The first problem of a compressed structure (reads the result back to the host).
  virtual SparseCheck validate_compressed(const Buffer& ptr, const Buffer& idx, std::int64_t major,
                                          std::int64_t minor, std::int64_t nnz) = 0;
  /// dense = 0, then dense[i, idx[p]] = values[p] for p in [ptr[i], ptr[i+1]); dense is
  /// [major, minor] row-major, or [minor, major] when `transposed` (a CSC matrix).
  virtual void compressed_to_dense(const Buffer& ptr, const Buffer& idx, const Buffer& values, const Buffer& dense,
                                   std::int64_t major, std::int64_t minor, bool transposed) = 0;
  /// out[p] = i for p in [ptr[i], ptr[i+1]): the major index of every stored element.
  virtual void expand_pointers(const Buffer& ptr, const Buffer& out, std::int64_t major, std::int64_t nnz) = 0;
  /// ptr[i] = the number of sorted major indices < i, for i in [0, major].
  virtual void compress_indices(const Buffer& sorted_major, const Buffer& ptr, std::int64_t major,
                                std::int64_t nnz) = 0;
  /// COO entries in any order, duplicates allowed -> sorted by (row, col) with duplicates
  /// summed in their input order (deterministic). Returns the new rows, cols and values
  /// (allocated through `allocate`) and their count (read back).
  struct CooResult {
    Buffer rows, cols, values;
    std::int64_t nnz = 0;
  };
  virtual CooResult coalesce(const Buffer& rows, const Buffer& cols, const Buffer& values, std::int64_t nnz,
                             std::int64_t num_rows, std::int64_t num_cols, const SparseAllocate& allocate) = 0;
  /// The compressed form of the transpose (CSR <-> CSC): out_ptr [minor + 1], out_idx and
  /// out_values [nnz], each slice sorted.
  virtual void transpose_compressed(const Buffer& ptr, const Buffer& idx, const Buffer& values, std::int64_t major,
                                    std::int64_t minor, std::int64_t nnz, const Buffer& out_ptr,
                                    const Buffer& out_idx, const Buffer& out_values) = 0;
  /// CSR of the nonzero elements of dense [rows, cols] (row-major; a NaN counts as nonzero,
  /// -0 as zero, as `x != 0`): writes `ptr` [rows + 1], reads nnz back, then allocates and fills
  /// idx and values.
  virtual CompressedResult dense_to_compressed(const Buffer& dense, const Buffer& ptr, std::int64_t rows,
                                               std::int64_t cols, const SparseAllocate& allocate) = 0;
  /// y [m] = A x for CSR A [m, k] and x [k].
  virtual void spmv(const Buffer& ptr, const Buffer& idx, const Buffer& values, const Buffer& x, const Buffer& y,
                    std::int64_t m, std::int64_t k, std::int64_t nnz) = 0;
  /// C [m, n] = A B for CSR A [m, k] and dense row-major B [k, n].
  virtual void spmm(const Buffer& ptr, const Buffer& idx, const Buffer& values, const Buffer& b, const Buffer& c,
                    std::int64_t m, std::int64_t k, std::int64_t n, std::int64_t nnz) = 0;

  // Sparse results (spgemm, add): the backend writes `c_ptr` [m + 1], reads nnz back (the one
  // sync), then allocates idx and values through `allocate`. Columns come out sorted within
  // each row, with no duplicates; structural entries are kept even when their value is 0.

  /// C = A B for CSR A [m, k] and CSR B [k, n] (values F32, F64, C64 or C128: the front end
  /// widens F16/BF16). C's structure is the symbolic product: every (i, j) with some stored
  /// A[i, q] and B[q, j]; each sum runs in a fixed order (deterministic).
  virtual CompressedResult spgemm(const Buffer& a_ptr, const Buffer& a_idx, const Buffer& a_values,
                                  std::int64_t a_nnz, const Buffer& b_ptr, const Buffer& b_idx,
                                  const Buffer& b_values, std::int64_t b_nnz, const Buffer& c_ptr, std::int64_t m,
                                  std::int64_t k, std::int64_t n, const SparseAllocate& allocate) = 0;
  /// For every stored (i, j) of CSR C [m, n] (nnz > 0, k > 0): values[p] = beta * values[p] +
  /// alpha * sum_q mat1[i, q] mat2[q, j], in place; mat1 [m, k] and mat2 [k, n] dense
  /// row-major of the values' dtype (F32, F64, C64 or C128). beta = 0 does not read values.
  virtual void sddmm(const Buffer& ptr, const Buffer& idx, const Buffer& values, std::int64_t nnz,
                     const Buffer& mat1, const Buffer& mat2, std::int64_t m, std::int64_t k, std::int64_t n,
                     double alpha, double beta) = 0;
  /// C = A + alpha B for CSR A and B [m, n] (any values dtype; F16/BF16 computed in F32 and
  /// rounded once): the union of both structures.
  virtual CompressedResult add(const Buffer& a_ptr, const Buffer& a_idx, const Buffer& a_values,
                               const Buffer& b_ptr, const Buffer& b_idx, const Buffer& b_values, const Buffer& c_ptr,
                               std::int64_t m, std::int64_t n, double alpha, const SparseAllocate& allocate) = 0;

  // ---- 2:4 semi-structured sparsity (ferrite/sparse.hpp: prune_24, compress_24, matmul_24) ----
  // Dtypes F16, BF16 (group 4) and F32 (group 2); matrices row-major and 16-byte aligned; the
  // front end has checked shapes (cuSPARSELt's multiples) and the pattern.

  /// Empty when the structured products run on this backend, else why not and how to
  /// install what is missing (a library that could not be loaded). Never throws.
  virtual std::string structured_unavailable() = 0;
  /// out [rows, cols] = dense with every group of `group` consecutive row elements pruned by
  /// structured::prune_group (src/core/structured_sparsity.hpp); rows * cols > 0.
  virtual void prune_structured(const Buffer& dense, const Buffer& out, std::int64_t rows, std::int64_t cols,
                                int group) = 0;
  /// Bytes of the backend's compressed form of `pruned` [rows, cols] (rows, cols > 0); 0 when
  /// the backend multiplies the pruned matrix itself (the CPU).
  virtual std::size_t structured_compressed_bytes(const Buffer& pruned, std::int64_t rows, std::int64_t cols) = 0;
  /// Writes the compressed form (structured_compressed_bytes() of them) of `pruned`.
  virtual void compress_structured(const Buffer& pruned, const Buffer& compressed, std::int64_t rows,
                                   std::int64_t cols) = 0;
  /// C = A B with A [m, k] structured (`pruned` and, where the backend has one, `compressed`),
  /// B [k, n] given row-major, or as its transpose [n, k] row-major when `b_transposed`; C
  /// [m, n] row-major, or written as its transpose [n, m] row-major when `c_transposed`.
  /// m, k, n > 0. Accumulates in F32; rounds once to the dtype.
  virtual void structured_matmul(const Buffer& pruned, const Buffer& compressed, const Buffer& b, bool b_transposed,
                                 const Buffer& c, bool c_transposed, std::int64_t m, std::int64_t k,
                                 std::int64_t n) = 0;
};

}  // namespace ferrite
