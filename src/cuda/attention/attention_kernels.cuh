// Launchers of the CUDA attention kernels (attention_kernels.cu): tiled flash attention with an
// online softmax, forward and a deterministic backward (recomputing the scores from q, k and the
// saved logsumexp). The score matrix only ever exists one 32-key (or 32-query) tile at a time,
// in registers.
#pragma once

#include <cuda_runtime_api.h>

#include "ferrite/backend_families/attention_ops.hpp"

namespace ferrite::cuda::attention {

struct Pointers {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* mask = nullptr;
  const void* out = nullptr;
  const void* grad_out = nullptr;
  void* result = nullptr;     // forward: out
  void* logsumexp = nullptr;  // forward: written; backward: read
  void* delta = nullptr;      // backward scratch: one accumulator per query row
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
};

/// Bytes of the backward's per-row scratch (`delta`).
std::size_t delta_bytes(const AttentionDesc& desc);
void forward(const AttentionDesc& desc, const Pointers& p, cudaStream_t stream);
void backward(const AttentionDesc& desc, const Pointers& p, cudaStream_t stream);

/// The register-blocked F32 forward (attention_f32_tiled.cu): 128 query rows per block. It takes
/// F32 without an explicit mask (causal or not), D = Dv in {64, 128}, dense inputs whose q, k,
/// v and out start on the 16-byte grid, and at least one query row.
bool tiled_forward_f32_fits(const AttentionDesc& desc, const Pointers& p);
void tiled_forward_f32(const AttentionDesc& desc, const Pointers& p, cudaStream_t stream);
/// The same forward with both products on the tensor cores in 3xTF32 (attention_f32_tf32x3.cu):
/// takes what tiled_forward_f32 takes; forward() picks it unless FERRITE_ATTENTION_F32_TF32X3 is
/// 0: fast_split (the default, FERRITE_ATTENTION_F32_TF32X3 unset or 2) or rounded splits (1).
void tiled_forward_f32_tf32x3(const AttentionDesc& desc, const Pointers& p, bool fast_split, cudaStream_t stream);

/// The register-blocked F32 backward (attention_f32_tiled_bwd.cu), after delta_kernel: dq with
/// 64 query rows per block (needs B·Hq·Sq > 0), dk/dv with 64 keys per block (needs
/// B·Hkv·Sk > 0). It takes what the tiled forward takes, with grad_out, dq, dk and dv on the
/// 16-byte grid too (and Sq = 0 or Sk = 0: the caller launches only the side that has rows).
bool tiled_backward_f32_fits(const AttentionDesc& desc, const Pointers& p);
void tiled_backward_dq_f32(const AttentionDesc& desc, const Pointers& p, cudaStream_t stream);
void tiled_backward_dkdv_f32(const AttentionDesc& desc, const Pointers& p, cudaStream_t stream);
/// The same backward with its products on the tensor cores in 3xTF32 (attention_f32_tf32x3_bwd.cu):
/// takes what the tiled backward takes while the row and key tile counts fit grid y (<= 65535);
/// backward() picks it unless FERRITE_ATTENTION_F32_TF32X3 is 0: fast_split (the default) or
/// rounded splits (1). Same preconditions on Sq and Sk per side.
bool tiled_backward_f32_tf32x3_fits(const AttentionDesc& desc, const Pointers& p);
void tiled_backward_dq_f32_tf32x3(const AttentionDesc& desc, const Pointers& p, bool fast_split, cudaStream_t stream);
void tiled_backward_dkdv_f32_tf32x3(const AttentionDesc& desc, const Pointers& p, bool fast_split,
                                    cudaStream_t stream);

}  // namespace ferrite::cuda::attention
