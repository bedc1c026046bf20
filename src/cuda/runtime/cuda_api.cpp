// ferrite/cuda.hpp: devices, versions, current streams and the pool controls.
#include <cublas_v2.h>
#include <dlfcn.h>

#include <unordered_map>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/device_context.hpp"
#include "ferrite/cuda.hpp"

namespace ferrite::cuda {
namespace {

// Per thread: the stream a StreamGuard made current for a device (absent: the default).
thread_local std::unordered_map<int, cudaStream_t> stream_overrides;

std::string version_string(int encoded, int major_divisor, int minor_divisor) {
  return std::to_string(encoded / major_divisor) + "." + std::to_string(encoded % major_divisor / minor_divisor);
}

// cuDNN and NCCL are not linked (no op uses them yet); report the versions the loader finds.
std::string probe_version(const char* library, const char* symbol, bool returns_version) {
  void* handle = dlopen(library, RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return "not found";
  std::string text = "not found";
  if (void* fn = dlsym(handle, symbol)) {
    int version = 0;
    if (returns_version) {
      version = static_cast<int>(reinterpret_cast<std::size_t (*)()>(fn)());  // cudnnGetVersion
      text = std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
             std::to_string(version % 100);
    } else if (reinterpret_cast<int (*)(int*)>(fn)(&version) == 0) {  // ncclGetVersion
      text = std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
             std::to_string(version % 100);
    }
  }
  dlclose(handle);
  return text;
}

}  // namespace

cudaStream_t DeviceContext::current_stream() const {
  auto it = stream_overrides.find(device_);
  return it == stream_overrides.end() ? stream_ : it->second;
}

int device_count() { return DeviceContext::count(); }

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  for (int i = 0; i < device_count(); ++i) {
    const cudaDeviceProp& p = DeviceContext::get(i).properties();
    DeviceInfo info;
    info.index = i;
    info.name = p.name;
    info.compute_capability_major = p.major;
    info.compute_capability_minor = p.minor;
    info.multiprocessors = p.multiProcessorCount;
    info.total_memory = p.totalGlobalMem;
    info.l2_cache_bytes = static_cast<std::size_t>(p.l2CacheSize);
    DeviceGuard guard(i);
    std::size_t free_bytes = 0, total_bytes = 0;
    FERRITE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    info.free_memory = free_bytes;
    out.push_back(info);
  }
  return out;
}

LibraryVersions library_versions() {
  LibraryVersions v;
  int runtime = 0, driver = 0;
  v.runtime = cudaRuntimeGetVersion(&runtime) == cudaSuccess ? version_string(runtime, 1000, 10) : "not found";
  v.driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver ? version_string(driver, 1000, 10) : "not found";
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    v.cublas = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  else
    v.cublas = "not found";
  v.cudnn = probe_version("libcudnn.so.9", "cudnnGetVersion", true);
  v.nccl = probe_version("libnccl.so.2", "ncclGetVersion", false);
  cudaGetLastError();
  return v;
}

StreamHandle current_stream(int device) { return DeviceContext::get(device).current_stream(); }
StreamHandle default_stream(int device) { return DeviceContext::get(device).default_stream(); }

StreamGuard::StreamGuard(int device, StreamHandle stream) : device_(device) {
  previous_ = DeviceContext::get(device).current_stream();
  stream_overrides[device] = static_cast<cudaStream_t>(stream);
}

StreamGuard::~StreamGuard() { stream_overrides[device_] = static_cast<cudaStream_t>(previous_); }

void empty_cache(int device) { DeviceContext::get(device).empty_cache(); }
void reset_peak_memory(int device) { DeviceContext::get(device).reset_peak(); }

}  // namespace ferrite::cuda
