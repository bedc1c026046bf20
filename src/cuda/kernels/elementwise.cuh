// Launchers of the elementwise family on the GPU (casts, fills, unary, backward, binary,
// compare, where, has_inf_nan). Plain functions taking Buffers and dtypes; the kernel
// templates stay inside the .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include "ferrite/backend.hpp"

namespace ferrite::cuda::kernels {

void fill(const Buffer& out, Scalar value, cudaStream_t stream);
void arange(const Buffer& out, double start, double step, cudaStream_t stream);
/// x is read through `layout` (contiguous, or a view whose offsets fit 32 bits: the backend
/// stages larger views through a dense copy), for every pair of dtypes.
void cast(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout, cudaStream_t stream);
/// x is read through `layout` (contiguous, or a view whose offsets fit 32 bits: the backend
/// stages larger views through a dense copy).
void unary(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params, const ElementwiseLayout& layout,
           cudaStream_t stream);
void unary_backward(Op op, const Buffer& grad, const Buffer& x, const Buffer& out, const UnaryParams& params,
                    const ElementwiseLayout& layout, cudaStream_t stream);
void binary(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
            cudaStream_t stream);
void where(const Buffer& cond, const Buffer& x, const Buffer& y, const Buffer& out, const ElementwiseLayout& layout,
           cudaStream_t stream);
/// Sets *flag (a device int, zeroed by the caller) to 1 when x holds an Inf or NaN.
void find_inf_nan(const Buffer& x, int* flag, cudaStream_t stream);

// The parts, one per translation unit (each instantiates a slice of the dtype table).
// Casts, by source dtype: F32, F16, BF16 / F64 / I32, I64, Bool / C64, C128.
void cast_from_single_precision(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout,
                                cudaStream_t stream);
void cast_from_double_precision(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout,
                                cudaStream_t stream);
void cast_from_integer(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout, cudaStream_t stream);
void cast_from_complex(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout, cudaStream_t stream);

// neg, abs, relu (real dtypes), bitwise_not / logical_not (I32, I64, Bool).
void unary_basic(Op op, const Buffer& x, const Buffer& out, const ElementwiseLayout& layout, cudaStream_t stream);
// exp, log, sqrt, pow, scale, clamp.
void unary_math_single(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params,
                       const ElementwiseLayout& layout, cudaStream_t stream);
void unary_math_double(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params,
                       const ElementwiseLayout& layout, cudaStream_t stream);
// sigmoid, tanh, gelu, silu, elu, mish.
void activation_single(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params,
                       const ElementwiseLayout& layout, cudaStream_t stream);
void activation_double(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params,
                       const ElementwiseLayout& layout, cudaStream_t stream);
// relu and sigmoid of F16/BF16 into F32.
void unary_mixed(Op op, const Buffer& x, const Buffer& out, const ElementwiseLayout& layout, cudaStream_t stream);
void activation_backward_single(Op op, const Buffer& grad, const Buffer& x, const Buffer& out,
                                const UnaryParams& params, const ElementwiseLayout& layout, cudaStream_t stream);
void activation_backward_double(Op op, const Buffer& grad, const Buffer& x, const Buffer& out,
                                const UnaryParams& params, const ElementwiseLayout& layout, cudaStream_t stream);

void binary_floating(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                     cudaStream_t stream);
void binary_integer(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                    cudaStream_t stream);
// maximum, minimum (real dtypes).
void binary_minmax(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                   cudaStream_t stream);
// floor_divide, remainder, bitwise, shifts (I32, I64) and logical/bitwise ops on Bool.
void binary_integer_ops(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                        cudaStream_t stream);
// add/sub/mul/div of F16/BF16 into F32.
void binary_mixed(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                  cudaStream_t stream);
void compare_floating(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                      cudaStream_t stream);
void compare_integer(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                     cudaStream_t stream);  // I32, I64, Bool

}  // namespace ferrite::cuda::kernels
