// Launchers of the random draws, dropout, the fused optimizers and cross-entropy on the GPU:
// plain functions taking Buffers; the kernel templates stay inside the .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "ferrite/backend_families/random_ops.hpp"
#include "ferrite/backend_families/training_ops.hpp"

namespace ferrite::cuda::training {

// random_fill.cu
void random_fill(const RandomDesc& desc, const Buffer& out, const Buffer& probs, cudaStream_t stream);
// dropout.cu
void dropout(const DropoutDesc& desc, const Buffer& x, const Buffer& out, const Buffer& mask, cudaStream_t stream);
void dropout_backward(const Buffer& grad, const Buffer& mask, double scale, const Buffer& out, cudaStream_t stream);
// optimizer.cu
void optimizer_step(const OptimizerDesc& desc, const std::vector<OptimizerTensor>& tensors, const Buffer& found_inf,
                    cudaStream_t stream);
// cross_entropy.cu
void cross_entropy_forward(const CrossEntropyDesc& d, const Buffer& logits, const Buffer& targets, const Buffer& loss,
                           const Buffer& lse, const Buffer& counted, cudaStream_t stream);
void cross_entropy_backward(const CrossEntropyDesc& d, const Buffer& grad, const Buffer& divisor, const Buffer& logits,
                            const Buffer& targets, const Buffer& lse, const Buffer& out, cudaStream_t stream);

}  // namespace ferrite::cuda::training
