// Launchers of the reduction group on the GPU: plain functions taking Buffers; the kernel
// templates stay inside the .cu files of this folder (design §5).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "ferrite/backend.hpp"
#include "ferrite/backend_families/reduction_ops.hpp"

namespace ferrite::cuda::reduction {

/// Stream-ordered scratch memory on `like`'s device (partial results of multi-pass
/// kernels); released, stream-ordered, when the last reference goes.
std::shared_ptr<Storage> scratch(const Buffer& like, std::size_t bytes);

// reduce_arithmetic.cu: Sum, Mean, Prod.
void reduce_arithmetic(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e, cudaStream_t stream);
// reduce_extreme.cu: Amin, Amax, MaskedAmin, MaskedAmax (mask defined), Any, All.
void reduce_extreme(Op op, const Buffer& x, const Buffer& mask, const Buffer& out, const ReduceExtents& e,
                    cudaStream_t stream);
// arg_reduce.cu
void arg_reduce(Op op, const Buffer& x, const Buffer& indices, const ReduceExtents& e, cudaStream_t stream);
// prod_backward.cu
void prod_backward(const Buffer& grad, const Buffer& x, const Buffer& out, const ReduceExtents& e,
                   cudaStream_t stream);
// scan_arithmetic.cu: Cumsum, Cumprod, Logcumsumexp. scan_extreme.cu: Cummax, Cummin.
void scan_arithmetic(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e, cudaStream_t stream);
void scan_extreme(Op op, const Buffer& x, const Buffer& out, const Buffer& indices, const ReduceExtents& e,
                  cudaStream_t stream);
// softmax_forward.cu / softmax_backward.cu
void softmax(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e, cudaStream_t stream);
void softmax_backward(Op op, const Buffer& grad, const Buffer& y, const Buffer& dx, const ReduceExtents& e,
                      cudaStream_t stream);
// norm_forward.cu / norm_backward.cu. RMS norm is the layer norm without centring or bias.
void norm_forward(bool centred, const Buffer& x, const Buffer& weight, const Buffer& bias, const Buffer& y,
                  const Buffer& mean, const Buffer& rstd, std::int64_t rows, std::int64_t cols, double eps,
                  cudaStream_t stream);
void norm_backward(bool centred, const Buffer& grad, const Buffer& x, const Buffer& mean, const Buffer& rstd,
                   const Buffer& weight, const Buffer& residual, const Buffer& dx, const Buffer& dx_cast,
                   const Buffer& dweight, const Buffer& dbias, std::int64_t rows, std::int64_t cols,
                   cudaStream_t stream);

}  // namespace ferrite::cuda::reduction
