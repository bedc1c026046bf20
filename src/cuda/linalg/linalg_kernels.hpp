// Small CUDA kernels around cuSOLVER's calls (linalg_kernels.cu): triangles, pivots, the
// P/L/U unpacking and the per-matrix info bookkeeping. All matrices are column-major and
// batch-dense; every launch goes on `stream` and nothing synchronises.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "ferrite/dtype.hpp"

namespace ferrite::cuda::linalg_kernels {

/// dst (column-major n×n) = the lower triangle of m, zero above it, where m is src read
/// column-major as it is (conjugated when `conjugate`), or with `transpose` src's transpose
/// (src row-major is m: a shared-memory tiled transpose). With info, info[b] = code when
/// that triangle holds Inf/NaN (info zero beforehand; every writer stores the same value).
/// The other triangle of src is never read.
void lower_triangle_copy(const void* src, void* dst, DType dtype, std::int64_t batch, std::int64_t n, bool transpose,
                         bool conjugate, int* info, int code, cudaStream_t stream);
/// Zeroes matrix b (rows×cols, column-major) wherever info[b] != 0, so that no solver ever
/// iterates on Inf/NaN.
void zero_flagged(void* a, DType dtype, std::int64_t batch, std::int64_t rows, std::int64_t cols, const int* info,
                  cudaStream_t stream);
/// A NaN at (k, k) of factor b: info[b] = min(info[b] if nonzero, k + 1), as LAPACK's potrf
/// (and the CPU backend) stops at a NaN pivot. One launch, no scratch.
void nan_pivot_info(const void* a, DType dtype, std::int64_t batch, std::int64_t n, int* info, cudaStream_t stream);
/// P [m×m], L [m×k], U [k×n] from packed LU [m×n] and 1-based pivots [k]; perm is scratch
/// of batch·m int64.
void lu_unpack(const void* lu, const std::int32_t* pivots, void* p, void* l, void* u, std::int64_t* perm, DType dtype,
               std::int64_t batch, std::int64_t m, std::int64_t n, cudaStream_t stream);
/// r [rrows×n] = the upper triangle of a [m×n] (zeros below the diagonal and below row m).
void copy_upper(const void* a, void* r, DType dtype, std::int64_t batch, std::int64_t m, std::int64_t n,
                std::int64_t rrows, cudaStream_t stream);
/// info[b] = code when matrix b (column-major rows×cols) holds Inf or NaN, else 0; such
/// matrices are zeroed (zero_flagged). One warp per column, all columns of the batch in
/// parallel: bandwidth-bound at any batch and size.
void nonfinite_info(void* a, DType dtype, std::int64_t batch, std::int64_t rows, std::int64_t cols, int* info, int code,
                    cudaStream_t stream);
/// info[b] = info[b] != 0 ? info[b] : solver[b].
void merge_info(int* info, const int* solver, std::int64_t batch, cudaStream_t stream);
/// Complex eigenvectors v [batch] n×n (column-major, C64/C128) from geev's real ones vr
/// (LAPACK's packing of conjugate pairs) and the eigenvalues w [batch, n] (complex).
void unpack_eigenvectors(const void* vr, const void* w, void* v, DType real, std::int64_t batch, std::int64_t n,
                         cudaStream_t stream);
/// eig of a batch of n×n column-major matrices, 1 <= n <= small_eig::kLargest (32), one
/// thread per matrix (small_eig.cu): w [batch, n] and, with vectors, v [batch] n×n
/// column-major, complex (C64 for F32/C64 input, C128 for F64/C128); info[b] = 0 or the
/// failing eigenvalue's index + 1. scratch: small_eig_scratch_bytes(batch, n) bytes.
std::size_t small_eig_scratch_bytes(std::int64_t batch, std::int64_t n);
void small_eig(const void* a, DType dtype, std::int64_t batch, std::int64_t n, bool vectors, void* w, void* v,
               int* info, void* scratch, cudaStream_t stream);
/// SVD of a batch of m×n column-major real matrices (F32/F64), 1 <= n <= m <= 32
/// (small_svd.cu: one warp per matrix, one-sided Jacobi in shared memory, small_svd.hpp; a
/// is read only): s [batch, n] descending; with `vectors`, u [batch] m×ucols (ucols = m when
/// `full`, else n) and vh [batch] n×n (Vᴴ), column-major. info[b] = 0, or n + 1 when the
/// matrix holds Inf/NaN or the sweeps did not converge (outputs then unspecified; no
/// iteration ever runs on NaN). Deterministic; no scratch.
constexpr std::int64_t kSmallSvdLargest = 32;  // = small_svd::kLargest
void small_svd(const void* a, DType dtype, std::int64_t batch, std::int64_t m, std::int64_t n, bool full, bool vectors,
               void* u, void* s, void* vh, int* info, cudaStream_t stream);
/// vh[b] = v[b]ᴴ for n×n matrices (gesvdj returns V, torch wants Vh).
void adjoint(const void* v, void* vh, DType dtype, std::int64_t batch, std::int64_t n, cudaStream_t stream);

}  // namespace ferrite::cuda::linalg_kernels
