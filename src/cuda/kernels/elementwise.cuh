// Launchers of the elementwise family on the GPU (casts, fills, unary and binary ops).
// Plain functions taking Buffers and dtypes; the kernel templates stay inside the .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include "ferrite/backend.hpp"

namespace ferrite::cuda::kernels {

void fill(const Buffer& out, Scalar value, cudaStream_t stream);
void arange(const Buffer& out, double start, double step, cudaStream_t stream);
void cast(const Buffer& x, const Buffer& out, cudaStream_t stream);
void unary(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params, cudaStream_t stream);
void binary(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
            cudaStream_t stream);

// The parts, one per translation unit (each instantiates a slice of the dtype table).
void cast_from_single_precision(const Buffer& x, const Buffer& out, cudaStream_t stream);  // F32, F16, BF16
void cast_from_double_precision(const Buffer& x, const Buffer& out, cudaStream_t stream);  // F64
void cast_from_integer(const Buffer& x, const Buffer& out, cudaStream_t stream);           // I32, I64, Bool
void cast_from_complex(const Buffer& x, const Buffer& out, cudaStream_t stream);           // C64, C128
void binary_floating(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                     cudaStream_t stream);
void binary_integer(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                    cudaStream_t stream);

}  // namespace ferrite::cuda::kernels
