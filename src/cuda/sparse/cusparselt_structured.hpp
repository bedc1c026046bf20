// cuSPARSELt behind the CUDA backend's 2:4 structured products (cusparselt_structured.cpp):
// the library loaded at run time, one handle per device, plans cached per shape.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "ferrite/dtype.hpp"

namespace ferrite::cuda::structured {

/// Empty when cuSPARSELt is loaded and usable, else why not and how to install it. Never throws.
std::string unavailable();
/// Bytes of cuSPARSELt's compressed form of a structured [rows, cols] row-major matrix.
std::size_t compressed_bytes(int device, DType dtype, std::int64_t rows, std::int64_t cols);
/// Compresses `pruned` [rows, cols] (row-major, 16-byte aligned) into `compressed`, on `stream`.
void compress(int device, cudaStream_t stream, DType dtype, const void* pruned, void* compressed, std::int64_t rows,
              std::int64_t cols);
/// C [m, n] = A B on `stream` (SparseOps::structured_matmul's layouts): A the compressed
/// structured [m, k], B [k, n] row-major (or its transpose row-major), C row-major (or its
/// transpose row-major).
void matmul(int device, cudaStream_t stream, DType dtype, const void* compressed, const void* b, bool b_transposed,
            void* c, bool c_transposed, std::int64_t m, std::int64_t k, std::int64_t n);

}  // namespace ferrite::cuda::structured
