// conv2d through cuDNN's graph API (the header-only cuDNN frontend), behind plain functions so
// that cudnn_conv.cpp is the only translation unit that compiles cudnn_frontend.h. Built
// without the frontend (FERRITE_HAVE_CUDNN_FRONTEND=0), run() always answers false and the
// caller keeps its im2col + cuBLASLt path.
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

#include "ferrite/backend_families/conv_ops.hpp"

namespace ferrite::cuda {
class DeviceContext;
}

namespace ferrite::cuda::cudnn_conv {

enum class Pass { Forward, BackwardInput, BackwardWeight };

/// Whether this build has the cuDNN frontend compiled in.
bool compiled_in();

/// Runs one pass on dense NCHW buffers of `dtype` on ctx's device and `stream`:
///   Forward:        y = conv(x, w)            (x, w read; y written)
///   BackwardInput:  x = dgrad(y = grad, w)    (y, w read; x written)
///   BackwardWeight: w = wgrad(y = grad, x)    (y, x read; w written)
/// Returns false, having enqueued nothing, when no cuDNN engine supports the case (or cuDNN is
/// not compiled in, or the environment sets FERRITE_CONV_CUDNN=0); the answer is cached with the graph. Throws ferrite::Error (Library) with
/// cuDNN's message when an execution fails. Only deterministic engines are used; F32 uses
/// tensor cores (TF32) only with d.allow_tf32.
bool run(Pass pass, const Conv2dDesc& d, DType dtype, DeviceContext& ctx, cudaStream_t stream, void* x, void* w,
         void* y);

/// The graph cache of all devices: a miss builds a graph (or records that none builds:
/// `unsupported` counts those misses, whose calls took the im2col path).
struct CacheStats {
  std::int64_t hits = 0, misses = 0, unsupported = 0, size = 0;
  std::string last_unsupported;  // the case and cuDNN's reason of the latest such miss
};
CacheStats cache_stats();
void clear_cache();

}  // namespace ferrite::cuda::cudnn_conv
