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
/// Whether forward() runs `desc` on its split-keys kernel: few query rows against many keys
/// (decoding), each row's keys spread over a block's 8 warps; never with dropout (only the
/// general query-side kernel drops weights, AttentionDesc::has_dropout).
bool forward_splits_keys(const AttentionDesc& desc);
/// single_tf32: the caller vouches that q, k, v and grad_out are F32 values that TF32 holds
/// exactly (widened from F16/BF16 by cuda_attention_ops.cpp); where the tensor-core backward takes
/// the problem it then multiplies in 1xTF32 (Tf32Mode::single), whatever
/// FERRITE_ATTENTION_F32_TF32X3 says. Otherwise (the default) that variable chooses, as for F32.
void backward(const AttentionDesc& desc, const Pointers& p, cudaStream_t stream, bool single_tf32 = false);

/// The register-blocked F32 forward (attention_f32_tiled.cu): 128 query rows per block. It takes
/// F32 without an explicit mask (causal or not) or dropout, D = Dv in {64, 128}, dense inputs whose q, k,
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
/// What tiled_backward_f32_fits asks of the problem itself (all but the pointers' alignment):
/// for callers that allocate the operands afterwards on the 16-byte grid (the device pool's
/// blocks are).
bool tiled_backward_f32_takes(const AttentionDesc& desc);
void tiled_backward_dq_f32(const AttentionDesc& desc, const Pointers& p, cudaStream_t stream);
void tiled_backward_dkdv_f32(const AttentionDesc& desc, const Pointers& p, cudaStream_t stream);
/// How the tensor-core backward (attention_f32_tf32x3_bwd.cu) multiplies. rounded and fast:
/// 3xTF32 with the cvt-rounded or the cheap split (FERRITE_ATTENTION_F32_TF32X3=1 and 2), to
/// F32's accuracy for any F32 operands. single: 1xTF32, one MMA a product: q, k, v and grad_out
/// go to the tensor cores as they are (exact only for values TF32 holds, such as F16/BF16
/// widened to F32; the tensor cores truncate others to TF32), the F32 intermediates P and dS are
/// rounded to nearest TF32 (2^-11 relative). rounded and fast carry the variable's numbers.
enum class Tf32Mode : int { rounded = 1, fast = 2, single = 3 };
/// The same backward with its products on the tensor cores (attention_f32_tf32x3_bwd.cu): takes
/// what the tiled backward takes while the row and key tile counts fit grid y (<= 65535).
/// backward() picks it with Tf32Mode::single when its caller passes single_tf32, else with fast
/// (FERRITE_ATTENTION_F32_TF32X3 unset or 2) or rounded (1); 0 keeps F32 on the SIMT backward.
/// Same preconditions on Sq and Sk per side.
bool tiled_backward_f32_tf32x3_fits(const AttentionDesc& desc, const Pointers& p);
void tiled_backward_dq_f32_tf32x3(const AttentionDesc& desc, const Pointers& p, Tf32Mode mode, cudaStream_t stream);
void tiled_backward_dkdv_f32_tf32x3(const AttentionDesc& desc, const Pointers& p, Tf32Mode mode,
                                    cudaStream_t stream);

/// The F16/BF16 backward on the tensor cores in the inputs' own dtype (attention_half_mma_bwd.cu:
/// mma.sync m16n8k16, F32 accumulation, P and dS rounded to the dtype, q/k/v/grad_out read as
/// they are): F16 or BF16, dropout or not, D = Dv in {64, 128}, dense, q, k, v,
/// grad_out, dq, dk and dv on the 16-byte grid, row and key tile counts (64 a tile) within grid
/// y. The dq side after delta_kernel (needs B·Hq·Sq > 0), the dk/dv side needs B·Hkv·Sk > 0;
/// both read logsumexp and delta as F32. An explicit mask (Bool or additive in the dtype) is
/// taken with p.mask set and the front end's broadcast strides (key stride 0 or 1).
bool half_mma_backward_fits(const AttentionDesc& desc, const Pointers& p);
void half_mma_backward_dq(const AttentionDesc& desc, const Pointers& p, cudaStream_t stream);
void half_mma_backward_dkdv(const AttentionDesc& desc, const Pointers& p, cudaStream_t stream);
/// delta_kernel, then both sides of the half_mma backward; false, having queued nothing, when
/// half_mma_backward_fits says no. p.delta: delta_bytes(desc) of scratch.
bool backward_half_mma(const AttentionDesc& desc, const Pointers& p, cudaStream_t stream);

/// The F16/BF16 forward on the tensor cores in the inputs' own dtype (attention_half_mma_fwd.cu:
/// mma.sync m16n8k16, F32 accumulation and online softmax, P rounded to the dtype for P V, out
/// rounded once, logsumexp F32): F16 or BF16, dropout or not, no mask, causal and/or an explicit Bool or
/// additive mask with any broadcast strides, D = Dv in {64, 128}, dense, q, k, v and out on the 16-byte
/// grid, row tiles (128 a tile) within grid y. half_mma_forward writes nothing when B·Hq·Sq = 0.
bool half_mma_forward_fits(const AttentionDesc& desc, const Pointers& p);
void half_mma_forward(const AttentionDesc& desc, const Pointers& p, cudaStream_t stream);

}  // namespace ferrite::cuda::attention
