// ferrite.cuda: devices, streams, the memory pool (ferrite/cuda.hpp), and
// ferrite.synchronize / memory_stats for any device. Streams are exchanged as integers
// (cudaStream_t values), as the DLPack and CUDA array interfaces do.
#include "common.hpp"

#include <ferrite/cuda.hpp>

namespace ferrite::py {

void bind_cuda(nb::module_& m) {
  m.def("synchronize", [](std::optional<Device> d) { synchronize(d.value_or(Device::cpu())); },
        nb::arg("device") = nb::none(), "Waits until the device has finished the work enqueued so far.");
  m.def("memory_stats", [](Device d) {
        const MemoryStats s = memory_stats(d);
        nb::dict out;
        out["in_use_bytes"] = s.in_use_bytes;
        out["peak_bytes"] = s.peak_bytes;
        return out;
      }, nb::arg("device"));
  nb::module_ c = m.def_submodule("cuda", "CUDA devices, streams and the memory pool.");
  c.def("device_count", &cuda::device_count);
  c.def("is_available", [] { return cuda::device_count() > 0; });
  c.def("current_stream", [](int d) { return reinterpret_cast<std::uintptr_t>(cuda::current_stream(d)); },
        nb::arg("device") = 0, "ferrite's current stream of the device (a cudaStream_t as an int).");
  c.def("default_stream", [](int d) { return reinterpret_cast<std::uintptr_t>(cuda::default_stream(d)); },
        nb::arg("device") = 0);
  c.def("synchronize", [](int d) { synchronize(Device::cuda(d)); }, nb::arg("device") = 0);
  c.def("empty_cache", [](int d) { cuda::empty_cache(d); }, nb::arg("device") = 0);
  c.def("reset_peak_memory", [](int d) { cuda::reset_peak_memory(d); }, nb::arg("device") = 0);
  c.def("get_device_name", [](int d) {
        for (const auto& info : cuda::devices())
          if (info.index == d) return info.name;
        FERRITE_THROW(InvalidArgument, "get_device_name: no CUDA device ", d);
      }, nb::arg("device") = 0);
  // torch.cuda.get_device_properties' field names where it has them.
  const nb::object props_t = result_type(m, "cuda_device_properties",
                                         "name major minor multi_processor_count total_memory free_memory L2_cache_size");
  c.def("get_device_properties", [props_t](int d) {
        for (const auto& i : cuda::devices())
          if (i.index == d)
            return named(props_t, i.name, i.compute_capability_major, i.compute_capability_minor, i.multiprocessors,
                         i.total_memory, i.free_memory, i.l2_cache_bytes);
        FERRITE_THROW(InvalidArgument, "get_device_properties: no CUDA device ", d);
      }, nb::arg("device") = 0);
  const nb::object versions_t = result_type(m, "cuda_library_versions", "runtime driver cublas cudnn nccl");
  c.def("library_versions", [versions_t] {
        const cuda::LibraryVersions v = cuda::library_versions();
        return named(versions_t, v.runtime, v.driver, v.cublas, v.cudnn, v.nccl);
      }, "Versions as '13.0' strings; 'not found' for a library that cannot be loaded.");

  // `with ferrite.cuda.stream(s, device=0):` makes s ferrite's current stream of the device in
  // this thread (cuda::StreamGuard).
  struct StreamScope {
    int device;
    std::uintptr_t stream;
    std::unique_ptr<cuda::StreamGuard> guard;
  };
  nb::class_<StreamScope>(c, "stream", "Context manager: ferrite enqueues on this cudaStream_t inside the block.")
      .def("__init__", [](StreamScope* s, std::uintptr_t stream, int device) {
        new (s) StreamScope{device, stream, nullptr};
      }, nb::arg("stream"), nb::arg("device") = 0)
      .def("__enter__", [](StreamScope& s) {
        s.guard = std::make_unique<cuda::StreamGuard>(s.device, reinterpret_cast<cuda::StreamHandle>(s.stream));
      })
      .def("__exit__", [](StreamScope& s, nb::args) { s.guard.reset(); });
}

}  // namespace ferrite::py
