// cuDNN handles for the CUDA families that run cuDNN graphs (conv2d, attention): one per
// (device, host thread), bound to the caller's stream on every use, and status checking.
//
// Why per thread: cuDNN is thread-safe only as long as no two threads use one handle at the
// same time, and a handle's stream is state of the handle; with a handle of its own, a thread
// can bind its stream and enqueue a graph without a lock shared with other threads (NVIDIA's
// recommended model: one handle per thread for the thread's lifetime).
//
// Light on purpose: cudnnHandle_t is declared here as cudnn.h declares it, so a translation
// unit may include this header without cuDNN's include directory; only cudnn_handle.cpp and
// the TUs that call cuDNN themselves include cudnn.h. Those TUs are the ones built with
// FERRITE_HAVE_CUDNN_FRONTEND (cmake/cudnn_frontend.cmake); without cuDNN nothing here is
// defined or called.
#pragma once

#include <cuda_runtime_api.h>

struct cudnnContext;
typedef struct cudnnContext* cudnnHandle_t;  // as in cudnn_graph.h (an identical typedef)

namespace ferrite::cuda {

/// Throws ErrorKind::Library naming the expression, file:line, device and cuDNN's status text.
/// `status` is a cudnnStatus_t.
[[noreturn]] void throw_cudnn_error(int status, const char* expression, const char* file, int line);

/// This thread's cuDNN handle on `device`, bound to `stream` (cudnnSetStream on each call:
/// callers pass ferrite's current stream, which changes under StreamGuard). Created on first
/// use; when the thread exits its handles go back to a per-device pool for the next thread,
/// so a program that starts many threads holds no more handles than it ran threads at once.
/// Never destroyed (process teardown may already have unloaded the driver). Only valid on the
/// calling thread and until the caller's next call on this thread.
cudnnHandle_t cudnn_handle(int device, cudaStream_t stream);

}  // namespace ferrite::cuda

// For expressions of type cudnnStatus_t (the caller includes cudnn.h).
#define FERRITE_CUDNN_CHECK(expr)                                                                   \
  do {                                                                                              \
    const auto ferrite_cudnn_status_ = (expr);                                                      \
    if (ferrite_cudnn_status_ != CUDNN_STATUS_SUCCESS) [[unlikely]]                                 \
      ::ferrite::cuda::throw_cudnn_error(static_cast<int>(ferrite_cudnn_status_), #expr, __FILE__, __LINE__); \
  } while (0)
