// The convolution family's own CUDA kernels (pooling, recurrent cells, im2col/col2im); the
// GEMMs of conv2d run in cuBLASLt (cuda_conv_ops.cpp). Each launcher dispatches on the
// Buffers' float dtype and enqueues on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include "ferrite/backend_families/conv_ops.hpp"

namespace ferrite::cuda::kernels {

void max_pool2d(const Pool2dDesc& d, const Buffer& x, const Buffer& out, const Buffer& indices, cudaStream_t s);
void max_pool2d_backward(const Pool2dDesc& d, const Buffer& grad, const Buffer& indices, const Buffer& grad_x,
                         cudaStream_t s);
void avg_pool2d(const Pool2dDesc& d, const Buffer& x, const Buffer& out, cudaStream_t s);
void avg_pool2d_backward(const Pool2dDesc& d, const Buffer& grad, const Buffer& grad_x, cudaStream_t s);

void gru_cell(std::int64_t b, std::int64_t h, const Buffer& ig, const Buffer& hg, const Buffer& hx, const Buffer* ib,
              const Buffer* hb, const Buffer& hy, const Buffer& ws, cudaStream_t s);
void gru_cell_backward(std::int64_t b, std::int64_t h, const Buffer& grad_hy, const Buffer& ws, const Buffer& gig,
                       const Buffer& ghg, const Buffer& ghx, cudaStream_t s);
void lstm_cell(std::int64_t b, std::int64_t h, const Buffer& ig, const Buffer& hg, const Buffer& cx, const Buffer* ib,
               const Buffer* hb, const Buffer& hy, const Buffer& cy, const Buffer& ws, cudaStream_t s);
void lstm_cell_backward(std::int64_t b, std::int64_t h, const Buffer* grad_hy, const Buffer* grad_cy,
                        const Buffer& cx, const Buffer& cy, const Buffer& ws, const Buffer& grad_gates,
                        const Buffer& grad_cx, cudaStream_t s);

/// col [images, groups, c/g * r * s, oh * ow] of images [first, first + images) of x, in x's dtype.
void im2col(const Conv2dDesc& d, DType dtype, const void* x, std::int64_t images, void* col, cudaStream_t s);
/// grad_x of `images` images = the adjoint of im2col applied to col (a gather, float sums);
/// col is F32 for F16/BF16 grads, else the grad's dtype.
void col2im(const Conv2dDesc& d, DType dtype, const void* col, std::int64_t images, void* grad_x, cudaStream_t s);
/// out[n, k, :] = bias[k] for `images` images; with `accumulate`, out[n, k, :] += bias[k]
/// (rounded once from the wide sum).
void fill_bias(const Conv2dDesc& d, DType dtype, const void* bias, std::int64_t images, void* out, cudaStream_t s,
               bool accumulate = false);
/// out = narrow(in) for `count` F32 elements into `dtype`.
void narrow_from_f32(DType dtype, const float* in, std::int64_t count, void* out, cudaStream_t s);

}  // namespace ferrite::cuda::kernels
