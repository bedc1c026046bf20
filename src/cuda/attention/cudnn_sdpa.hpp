// cuDNN's fused scaled dot-product attention (its graph API through the header-only cuDNN
// frontend) for F16/BF16: the route cuda_attention_ops.cpp takes for the problems cuDNN
// computes with exactly ferrite's semantics (AttentionDesc; masked forwards with a fix-up of the
// fully masked rows, masked backwards with their Stats made +inf, cudnn_sdpa_mask.cuh), the own
// kernels (attention_kernels.cu) for everything else. cudnn_sdpa.cpp is the only translation unit
// that includes cudnn_frontend.h (a ~50 s compile); built without the frontend
// (FERRITE_HAVE_CUDNN_FRONTEND=0) every function here says "not taken" and the own kernels
// run everything.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda/attention/attention_kernels.cuh"
#include "ferrite/backend_families/attention_ops.hpp"

namespace ferrite::cuda::cudnn_sdpa {

/// Whether this build has the cuDNN frontend compiled in.
bool compiled();

/// Whether `desc` is a problem cuDNN's SDPA computes with ferrite's semantics, judged from the
/// description alone: F16/BF16, no dropout (cuDNN's random stream is not ferrite's), no mask
/// (causal allowed: both top-left aligned, and a top-left causal row always sees key 0, so no
/// row is fully masked), every extent >= 1, head
/// dims multiples of 8 up to 256, tensors below 2^31 elements, and operand strides cuDNN
/// takes (head-dim stride 1, the others positive multiples of 8 elements where the extent
/// exceeds 1, each view spanning below 2^31 elements). Whether cuDNN has a plan on this
/// device is only known when the graph is built (forward/backward return false then).
bool eligible(const AttentionDesc& desc);

/// Whether the forward and the backward of the masked `desc` (Bool or additive mask) may run on
/// cuDNN (both graphs take the same bias): what eligible() asks of the problem without its
/// mask, dense operands (masked problems never get views: reads_views says no to them), and a
/// bias (the mask's own rows x Sk, rounded up to 8) below 2^31 elements. The mask becomes
/// cuDNN's additive bias (cudnn_sdpa.cpp: bias_layout). Rows whose every key is hidden are set
/// to out = 0, logsumexp = -inf after the forward graph (cudnn_sdpa_mask.cuh), ferrite's
/// semantics, which cuDNN's own result for them is not; in the backward (their logsumexp -inf,
/// as every forward route writes it) they get dq = 0 and add nothing to dk/dv, cuDNN being
/// handed their Stats as +inf (cudnn_sdpa.cpp: masked_backward).
bool masked_eligible(const AttentionDesc& desc);

/// Whether cuDNN has a plan for the forward (backward) of the eligible `desc` on `device`,
/// building and caching its graph on first use (a cache miss, as forward/backward count it;
/// finding it is not counted as a hit). forward/backward then run it.
bool plans(const AttentionDesc& desc, bool backward, int device, cudaStream_t stream);

/// out and logsumexp through cuDNN on `stream` (the caller has made `device` current), for an
/// eligible desc or, with p.mask set, a masked_eligible one (any alignment of p.mask:
/// a mask cuDNN cannot read in place is copied into pool scratch first).
/// Returns false, having queued nothing, when cuDNN has no plan for this problem on this
/// device (the outcome is cached, so the graph is tried once per shape). Throws
/// ferrite::Error (Library, with cuDNN's message) when a built graph fails to execute.
bool forward(const AttentionDesc& desc, const attention::Pointers& p, int device, cudaStream_t stream);
/// dq, dk, dv (cuDNN's deterministic backward unless desc.deterministic is false), as forward;
/// with p.mask set, for a masked_eligible desc (a mask cuDNN cannot read in place is
/// copied into pool scratch first, and so is logsumexp, its -inf rows made +inf).
bool backward(const AttentionDesc& desc, const attention::Pointers& p, int device, cudaStream_t stream);

/// The graph cache of a device: graphs held (supported or not), lookups that found one, and
/// lookups that built one. For tests: a second call with the same problem is a hit.
struct CacheInfo {
  std::size_t size = 0;
  std::int64_t hits = 0, misses = 0;
  /// Graphs cuDNN could not build (those problems run on the own kernels), and cuDNN's
  /// reason for the latest of them.
  std::int64_t unsupported = 0;
  std::string last_unsupported_reason;
};
CacheInfo cache_info(int device);
/// Drops the device's graphs and zeroes its counters (waits for the device first). For tests:
/// a graph another thread is enqueueing at that moment is freed when its enqueue returns.
void clear_cache(int device);

}  // namespace ferrite::cuda::cudnn_sdpa
