// The CUDA side of DLPack's stream handshake, with the runtime calls kept in cuda_sync.cpp (the
// only file that includes CUDA headers; without CUDA they throw Unsupported or do nothing).
// Streams are passed as the Python array API encodes them: 1 is the legacy default stream,
// 2 the per-thread default stream, any other value a cudaStream_t.
#pragma once

#include <cstdint>

namespace ferrite::py::cuda_sync {

/// Makes `consumer_stream` wait (on the device, not the host) for the work enqueued so far on
/// ferrite's current stream of `device`: an event recorded there, waited on there.
void consumer_waits_for_ferrite(int device, std::uintptr_t consumer_stream);
/// Before exported memory goes back to ferrite's pool: ferrite's stream waits for the work the
/// consumer has enqueued so far on its stream, so the memory is freed in stream order.
/// Never throws (called from deleters); errors are cleared.
void ferrite_waits_for_consumer(int device, std::uintptr_t consumer_stream) noexcept;
/// The value to pass as a producer's __dlpack__(stream=...): ferrite's current stream of `device`.
std::uintptr_t stream_for_producer(int device);
/// Blocks the host until ferrite's current stream of `device` has finished the work enqueued
/// so far (before imported memory is handed back to its producer, whose allocator does not
/// know ferrite's stream). Never throws.
void host_waits_for_ferrite(int device) noexcept;

}  // namespace ferrite::py::cuda_sync
