// Kernel launchers of the CUDA sparse family (src/cuda/sparse/sparse_kernels.cu). Index
// arrays are I32 or I64 (`index_bytes` 4 or 8); values move by element size unless a dtype is
// needed (the nonzero test, sums).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ferrite/dtype.hpp"

namespace ferrite::cuda::sparse {

/// The first validation problem as one sortable key (SparseCheck's order), written into
/// `*first` (initialised to all ones by the caller, which reads it back).
void validate_compressed(DType index, const void* ptr, const void* idx, std::int64_t major, std::int64_t minor,
                         std::int64_t nnz, unsigned long long* first, cudaStream_t stream);
void compressed_to_dense(DType index, std::size_t value_bytes, const void* ptr, const void* idx, const void* values,
                         void* dense, std::int64_t major, std::int64_t minor, bool transposed, cudaStream_t stream);
void expand_pointers(DType index, const void* ptr, void* out, std::int64_t major, cudaStream_t stream);
/// ptr[i] = lower_bound(sorted, i) for i in [0, major]; `sorted` holds uint64 keys when
/// `keys64`, else the index dtype.
void compress_sorted(DType index, const void* sorted, bool keys64, void* ptr, std::int64_t major, std::int64_t nnz,
                     cudaStream_t stream);
/// keys[p] = the uint64 key of entry p (row * cols + col from two index arrays, or one index
/// array when `cols_idx` is null); positions[p] = p.
void make_keys(DType index, const void* rows_idx, const void* cols_idx, std::int64_t cols, std::uint64_t* keys,
               std::int64_t* positions, std::int64_t n, cudaStream_t stream);
/// heads[k] = 1 where sorted key k starts a run (k == 0 or key differs from key k-1).
void mark_heads(const std::uint64_t* keys, std::int64_t* heads, std::int64_t n, cudaStream_t stream);
/// For each run head k (out position slot[k] - 1, slot holding the inclusive count of heads): rows/cols from the key, the run's values summed
/// in order (positions index the input values).
void sum_runs(DType values_dtype, DType index, const std::uint64_t* keys, const std::int64_t* positions,
              const std::int64_t* slot, const void* values, std::int64_t n, std::int64_t cols, void* out_rows,
              void* out_cols, void* out_values, cudaStream_t stream);
/// out_idx[q] = majors[positions[q]], out_values[q] = values[positions[q]].
void gather_transposed(DType index, std::size_t value_bytes, const std::int64_t* positions, const void* majors,
                       const void* values, void* out_idx, void* out_values, std::int64_t n, cudaStream_t stream);
/// counts[r] = nonzeros of row r of dense [rows, cols].
void count_nonzeros(DType values, const void* dense, std::int64_t rows, std::int64_t cols, std::int64_t* counts,
                    cudaStream_t stream);
/// ptr (index dtype) [rows + 1] from the inclusive sums of counts.
void write_pointers(DType index, const std::int64_t* inclusive, void* ptr, std::int64_t rows, cudaStream_t stream);
/// The nonzeros of each row in order, from ptr.
void fill_compressed(DType values_dtype, DType index, const void* dense, const void* ptr, std::int64_t rows,
                     std::int64_t cols, void* idx, void* values, cudaStream_t stream);

/// C = A + alpha B of CSR A and B [rows, *] (sparse_add_kernels.cu), one thread merging each
/// row's two sorted column lists: first counts[r] = the row's union size, then (with C's
/// pointers written) the merged columns and values (F16/BF16 computed in float, rounded once).
void add_count(DType index, const void* a_ptr, const void* a_idx, const void* b_ptr, const void* b_idx,
               std::int64_t rows, std::int64_t* counts, cudaStream_t stream);
void add_fill(DType values_dtype, DType index, const void* a_ptr, const void* a_idx, const void* a_values,
              const void* b_ptr, const void* b_idx, const void* b_values, const void* c_ptr, std::int64_t rows,
              double alpha, void* c_idx, void* c_values, cudaStream_t stream);

/// y = A x of CSR A [rows, *] with the own deterministic kernel (sparse_spmv_kernels.cu) for
/// real values (`spmv_supported`: F32, F64, F16, BF16; 16-bit values accumulate in F32). The
/// summation order depends on the matrix only: `spmv_lanes(rows, nnz)` lanes per row (4, 8, 16
/// or 32, from the average row length), rows longer than 64 x lanes summed by a whole block.
bool spmv_supported(DType values);
int spmv_lanes(std::int64_t rows, std::int64_t nnz);
void spmv_csr(DType values_dtype, DType index, const void* ptr, const void* idx, const void* values, const void* x,
              void* y, std::int64_t rows, std::int64_t nnz, cudaStream_t stream);

/// C = A B of CSR A [m, k] and B [k, n] with the own deterministic kernels
/// (sparse_spgemm_kernels.cu), one block per row of C with a dense accumulator of n values in
/// shared memory: `spgemm_supported` says whether they apply (F32 or F64 values, n x the value
/// size at most 64 KB, and the shared memory fitting `device`). First counts[i] = row i's
/// length (the union of B's columns reached from row i of A), then (with C's pointers
/// written) the columns in ascending order and the values, each C(i, j) summed over A's row in
/// storage order from 0, product rounded then added (the CPU backend's order).
bool spgemm_supported(DType values, DType index, std::int64_t n, int device);
void spgemm_count(DType index, const void* a_ptr, const void* a_idx, const void* b_ptr, const void* b_idx,
                  std::int64_t m, std::int64_t n, std::int64_t* counts, cudaStream_t stream);
void spgemm_fill(DType values_dtype, DType index, const void* a_ptr, const void* a_idx, const void* a_values,
                 const void* b_ptr, const void* b_idx, const void* b_values, const void* c_ptr, std::int64_t m,
                 std::int64_t n, void* c_idx, void* c_values, cudaStream_t stream);

/// out[i] = in[i] converted between I32 and I64 index arrays (sparse_index_cast.cu); the
/// caller guarantees that narrowed values fit.
void cast_indices(DType from, const void* in, DType to, void* out, std::int64_t n, cudaStream_t stream);

/// CUB's stable radix sort of (key, position) pairs by key, keys below `limit`: the scratch
/// size, then the sort.
std::size_t sort_pairs_bytes(std::int64_t n, std::uint64_t limit);
void sort_pairs(void* temp, std::size_t temp_bytes, const std::uint64_t* keys_in, std::uint64_t* keys_out,
                const std::int64_t* positions_in, std::int64_t* positions_out, std::int64_t n, std::uint64_t limit,
                cudaStream_t stream);
/// CUB's inclusive prefix sum: the scratch size, then the scan.
std::size_t inclusive_sum_bytes(std::int64_t n);
void inclusive_sum(void* temp, std::size_t temp_bytes, const std::int64_t* in, std::int64_t* out, std::int64_t n,
                   cudaStream_t stream);

}  // namespace ferrite::cuda::sparse
