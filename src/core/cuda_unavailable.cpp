// ferrite/cuda.hpp for builds without the CUDA backend: no devices, and every control that
// needs one says so instead of pretending.
#include "ferrite/config.hpp"

#if !FERRITE_WITH_CUDA
#include "ferrite/cuda.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda {
namespace {
[[noreturn]] void unavailable(const char* what) {
  FERRITE_THROW(Unsupported, what, ": ferrite was built without the CUDA backend");
}
}  // namespace

int device_count() { return 0; }
std::vector<DeviceInfo> devices() { return {}; }
LibraryVersions library_versions() {
  return {"not built", "not built", "not built", "not built", "not built"};
}
StreamHandle current_stream(int) { unavailable("cuda::current_stream"); }
StreamHandle default_stream(int) { unavailable("cuda::default_stream"); }
StreamGuard::StreamGuard(int, StreamHandle) : device_(0), previous_(nullptr) { unavailable("cuda::StreamGuard"); }
StreamGuard::~StreamGuard() = default;
void empty_cache(int) { unavailable("cuda::empty_cache"); }
void reset_peak_memory(int) { unavailable("cuda::reset_peak_memory"); }

}  // namespace ferrite::cuda
#endif
