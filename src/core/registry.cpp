// The backend registry: one backend per device kind, created on first use.
#include <array>
#include <mutex>

#include "cpu/cpu_backend.hpp"
#include "ferrite/backend.hpp"
#include "ferrite/config.hpp"
#include "ferrite/error.hpp"

#if FERRITE_WITH_CUDA
#include "cuda/cuda_backend.hpp"
#endif

namespace ferrite {
namespace {

struct Registry {
  std::mutex mutex;
  std::array<std::shared_ptr<Backend>, kNumDeviceKinds> by_kind;  // indexed by DeviceKind
  // Replaced backends stay alive: callers may still hold the reference backend() gave them.
  std::vector<std::shared_ptr<Backend>> retired;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

// Device kinds index the registry's array: one made by static_cast must stop here.
void check_kind(DeviceKind kind, const char* what) {
  FERRITE_CHECK(static_cast<int>(kind) < kNumDeviceKinds, InvalidArgument, what,
                ": device kind ", static_cast<int>(kind), " is not a DeviceKind (CPU = 0, CUDA = 1)");
}

void install(std::shared_ptr<Backend> b) {
  check_kind(b->kind(), "register_backend");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto& slot = r.by_kind[static_cast<std::size_t>(b->kind())];
  if (slot) r.retired.push_back(std::move(slot));
  slot = std::move(b);
}

// Registers the default backends exactly once, however many threads race here.
void ensure_defaults() {
  static std::once_flag once;
  std::call_once(once, [] {
    install(std::make_shared<cpu::CpuBackend>());
#if FERRITE_WITH_CUDA
    if (auto cuda_backend = cuda::make_cuda_backend_if_available()) install(std::move(cuda_backend));
#endif
  });
}

std::shared_ptr<Backend> find(DeviceKind kind) {
  check_kind(kind, "backend");
  ensure_defaults();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.by_kind[static_cast<std::size_t>(kind)];
}

}  // namespace

void register_backend(std::shared_ptr<Backend> b) {
  FERRITE_CHECK(b != nullptr, InvalidArgument, "register_backend: null backend");
  ensure_defaults();
  install(std::move(b));
}

Backend& backend(Device device) {
  std::shared_ptr<Backend> b = find(device.kind);
  FERRITE_CHECK(b != nullptr, Unsupported, "no backend for ", device.str(),
                device.is_cuda() ? (FERRITE_WITH_CUDA ? ": no CUDA device was found on this machine"
                                                      : ": ferrite was built without CUDA")
                                 : "");
  FERRITE_CHECK(device.index >= 0 && device.index < b->device_count(), InvalidArgument, "device ", device.str(),
                " is not available: the ", b->name(), " backend has ", b->device_count(), " device(s)");
  // The registry keeps every backend it ever held alive, so the reference stays valid.
  return *b;
}

std::vector<std::string> registered_backends() {
  ensure_defaults();
  std::vector<std::string> names;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (auto& b : r.by_kind)
    if (b) names.push_back(b->name());
  return names;
}

bool supports(Op op, DType dtype, Device device) {
  if (static_cast<int>(device.kind) >= kNumDeviceKinds) return false;  // a query: no backend, no error
  std::shared_ptr<Backend> b = find(device.kind);
  return is_valid_dtype(dtype) && b && device.index >= 0 && device.index < b->device_count() && b->supports(op, dtype);
}

int cuda_device_count() {
  std::shared_ptr<Backend> b = find(DeviceKind::CUDA);
  return b ? b->device_count() : 0;
}

void synchronize(Device device) { backend(device).synchronize(device); }

MemoryStats memory_stats(Device device) { return backend(device).memory_stats(device); }

}  // namespace ferrite
