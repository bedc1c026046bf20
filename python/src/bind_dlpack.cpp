// DLPack exchange, zero-copy both ways (Python array API standard):
//   Tensor.__dlpack__(stream=None, max_version=None, dl_device=None, copy=None) -> capsule
//   Tensor.__dlpack_device__() -> (device_type, device_id)
//   ferrite.from_dlpack(obj) -> Tensor sharing obj's memory
// Export: a versioned capsule ("dltensor_versioned", DLPack 1.x) when the consumer passes
// max_version >= (1, 0), else the legacy "dltensor". The capsule's manager context holds a
// Tensor (so the storage lives until the consumer's deleter runs) and the shape/strides
// arrays. For CUDA the consumer's stream waits on an event recorded on ferrite's stream, and
// when the consumer releases the memory ferrite's stream waits for the consumer's stream
// before the storage can go back to the pool (stream-ordered free).
// Import: ferrite passes its own current stream to the producer's __dlpack__, wraps the data
// with from_blob (strides carried) and a deleter that calls the producer's deleter.
#include "common.hpp"

#include <atomic>
#include <memory>

#include "cuda_sync.hpp"
#include "dlpack_abi.hpp"

namespace ferrite::py {

namespace {

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kUsedLegacyName = "used_dltensor";
constexpr const char* kUsedVersionedName = "used_dltensor_versioned";

dlpack::DataType to_dl(DType d) {
  switch (d) {
    case DType::F32: return {dlpack::kFloat, 32, 1};
    case DType::F64: return {dlpack::kFloat, 64, 1};
    case DType::F16: return {dlpack::kFloat, 16, 1};
    case DType::BF16: return {dlpack::kBfloat, 16, 1};
    case DType::I32: return {dlpack::kInt, 32, 1};
    case DType::I64: return {dlpack::kInt, 64, 1};
    case DType::Bool: return {dlpack::kBool, 8, 1};
    case DType::C64: return {dlpack::kComplex, 64, 1};
    case DType::C128: return {dlpack::kComplex, 128, 1};
  }
  FERRITE_THROW(Unsupported, "__dlpack__: dtype ", dtype_name(d), " has no DLPack code");
}

DType from_dl(dlpack::DataType t) {
  FERRITE_CHECK(t.lanes == 1, Unsupported, "from_dlpack: vector dtypes (lanes = ", t.lanes, ") are not supported");
  const int code = t.code, bits = t.bits;
  if (code == dlpack::kFloat && bits == 32) return DType::F32;
  if (code == dlpack::kFloat && bits == 64) return DType::F64;
  if (code == dlpack::kFloat && bits == 16) return DType::F16;
  if (code == dlpack::kBfloat && bits == 16) return DType::BF16;
  if (code == dlpack::kInt && bits == 32) return DType::I32;
  if (code == dlpack::kInt && bits == 64) return DType::I64;
  if (code == dlpack::kBool && bits == 8) return DType::Bool;
  if (code == dlpack::kComplex && bits == 64) return DType::C64;
  if (code == dlpack::kComplex && bits == 128) return DType::C128;
  static constexpr const char* kNames[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  FERRITE_THROW(DTypeMismatch, "from_dlpack: DLPack dtype ", code < 7 ? kNames[code] : "code", bits,
                " has no ferrite dtype (supported: float16/32/64, bfloat16, int32/64, bool, complex64/128)");
}

// ---- export ----

// Owns what the capsule points into. Either member `legacy` or `versioned` is handed out.
struct ExportContext {
  Tensor tensor;
  std::vector<std::int64_t> shape, strides;
  bool cuda_consumer = false;  // a CUDA export with a consumer stream to order the free after
  std::uintptr_t consumer_stream = 0;
  dlpack::ManagedTensor legacy{};
  dlpack::ManagedTensorVersioned versioned{};

  void release() noexcept {
    if (cuda_consumer) cuda_sync::ferrite_waits_for_consumer(tensor.device().index, consumer_stream);
    delete this;
  }
};

void legacy_deleter(dlpack::ManagedTensor* self) {
  if (self) static_cast<ExportContext*>(self->manager_ctx)->release();
}
void versioned_deleter(dlpack::ManagedTensorVersioned* self) {
  if (self) static_cast<ExportContext*>(self->manager_ctx)->release();
}

// Runs the deleter of a capsule nobody consumed (a consumer renames it to used_*).
void capsule_destructor(PyObject* capsule) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);  // a destructor must not clobber a pending exception
  if (PyCapsule_IsValid(capsule, kVersionedName)) {
    auto* mt = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersionedName));
    if (mt && mt->deleter) mt->deleter(mt);
  } else if (PyCapsule_IsValid(capsule, kLegacyName)) {
    auto* mt = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacyName));
    if (mt && mt->deleter) mt->deleter(mt);
  }
  PyErr_Restore(type, value, traceback);
}

nb::tuple dl_device_of(const Tensor& x) {
  return x.device().is_cuda() ? nb::make_tuple(static_cast<int>(dlpack::kCUDA), x.device().index)
                              : nb::make_tuple(static_cast<int>(dlpack::kCPU), 0);
}

nb::object export_dlpack(const Tensor& self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy) {
  Tensor x = self;
  bool copied = false;
  if (!dl_device.is_none()) {
    const auto want = nb::cast<std::pair<int, int>>(dl_device);
    const bool same = want.first == (x.device().is_cuda() ? dlpack::kCUDA : dlpack::kCPU) &&
                      (x.device().is_cpu() || want.second == x.device().index);
    if (!same) {
      if (want.first != dlpack::kCPU || (!copy.is_none() && !nb::cast<bool>(copy)))
        throw nb::buffer_error("__dlpack__: cannot export to the requested device without a copy");
      x = x.to(Device::cpu());
      copied = true;
    }
  }
  if (!copy.is_none() && nb::cast<bool>(copy) && !copied) {
    x = x.clone();
    copied = true;
  }
  auto ctx = std::make_unique<ExportContext>();
  ctx->tensor = x;
  ctx->shape = x.shape();
  ctx->strides = x.strides();
  dlpack::Tensor dl{};
  dl.data = x.numel() == 0 && x.data_ptr() == nullptr ? nullptr : const_cast<void*>(x.data_ptr());
  dl.device = x.device().is_cuda() ? dlpack::Device{dlpack::kCUDA, x.device().index} : dlpack::Device{dlpack::kCPU, 0};
  dl.ndim = static_cast<std::int32_t>(x.dim());
  dl.dtype = to_dl(x.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;

  if (x.device().is_cuda()) {
    // Array API: None means the legacy default stream, -1 no synchronisation; 0 is ambiguous.
    std::int64_t s = stream.is_none() ? 1 : nb::cast<std::int64_t>(stream);
    if (s == 0) throw nb::value_error("__dlpack__: stream=0 is ambiguous for CUDA (use 1 for the legacy default stream)");
    if (s != -1) {
      cuda_sync::consumer_waits_for_ferrite(x.device().index, static_cast<std::uintptr_t>(s));
      ctx->cuda_consumer = true;
      ctx->consumer_stream = static_cast<std::uintptr_t>(s);
    }
  } else if (!stream.is_none() && nb::cast<std::int64_t>(stream) != -1) {
    throw nb::value_error("__dlpack__: stream must be None for a CPU tensor");
  }

  const bool versioned = !max_version.is_none() && nb::cast<std::int64_t>(max_version[0]) >= 1;
  PyObject* capsule;
  ExportContext* raw = ctx.get();
  if (versioned) {
    raw->versioned.version = {dlpack::kMajorVersion, dlpack::kMinorVersion};
    raw->versioned.manager_ctx = raw;
    raw->versioned.deleter = versioned_deleter;
    raw->versioned.flags = copied ? dlpack::kFlagIsCopied : 0;
    raw->versioned.dl_tensor = dl;
    capsule = PyCapsule_New(&raw->versioned, kVersionedName, capsule_destructor);
  } else {
    raw->legacy.dl_tensor = dl;
    raw->legacy.manager_ctx = raw;
    raw->legacy.deleter = legacy_deleter;
    capsule = PyCapsule_New(&raw->legacy, kLegacyName, capsule_destructor);
  }
  if (!capsule) throw nb::python_error();
  ctx.release();  // owned by the capsule (or its consumer) from here
  return nb::steal(capsule);
}

// ---- import ----

// Calls a producer's deleter from whichever thread drops the last tensor on its memory: with
// the GIL (producers such as NumPy release Python objects), and for CUDA memory only after
// ferrite's stream has finished with it (the producer's allocator may reuse it at once).
struct ImportOwner {
  void* managed = nullptr;
  bool versioned = false;
  Device device;
  std::atomic<bool> released{false};

  ImportOwner(void* m, bool v, Device d) : managed(m), versioned(v), device(d) {}
  void release() noexcept {
    if (released.exchange(true)) return;
    if (device.is_cuda()) cuda_sync::host_waits_for_ferrite(device.index);
    if (!Py_IsInitialized()) return;  // interpreter gone: the producer's memory is leaked, not corrupted
    const PyGILState_STATE gil = PyGILState_Ensure();
    if (versioned) {
      auto* mt = static_cast<dlpack::ManagedTensorVersioned*>(managed);
      if (mt->deleter) mt->deleter(mt);
    } else {
      auto* mt = static_cast<dlpack::ManagedTensor*>(managed);
      if (mt->deleter) mt->deleter(mt);
    }
    PyGILState_Release(gil);
  }
};

Tensor tensor_from_capsule(nb::handle capsule) {
  PyObject* cap = capsule.ptr();
  const bool versioned = PyCapsule_IsValid(cap, kVersionedName);
  if (!versioned && !PyCapsule_IsValid(cap, kLegacyName))
    throw nb::type_error("from_dlpack: expected a DLPack capsule named 'dltensor' or 'dltensor_versioned' "
                         "(a capsule can be consumed once)");
  void* managed = PyCapsule_GetPointer(cap, versioned ? kVersionedName : kLegacyName);
  const dlpack::Tensor* dl;
  if (versioned) {
    auto* mt = static_cast<dlpack::ManagedTensorVersioned*>(managed);
    if (mt->version.major > dlpack::kMajorVersion)
      throw nb::buffer_error("from_dlpack: the producer's DLPack major version is newer than ferrite's (1)");
    dl = &mt->dl_tensor;
  } else {
    dl = &static_cast<dlpack::ManagedTensor*>(managed)->dl_tensor;
  }
  Device device;
  switch (dl->device.device_type) {
    case dlpack::kCPU:
    case dlpack::kCUDAHost: device = Device::cpu(); break;
    case dlpack::kCUDA:
    case dlpack::kCUDAManaged: device = Device::cuda(dl->device.device_id); break;
    default:
      FERRITE_THROW(Unsupported, "from_dlpack: DLPack device type ", dl->device.device_type,
                    " is neither CPU nor CUDA");
  }
  const DType dtype = from_dl(dl->dtype);
  Shape shape(dl->shape, dl->shape + dl->ndim);
  Strides strides;
  if (dl->strides) {
    strides.assign(dl->strides, dl->strides + dl->ndim);
  } else {  // row-major
    strides.assign(shape.size(), 1);
    for (std::size_t k = shape.size(); k-- > 1;) strides[k - 1] = strides[k] * std::max<std::int64_t>(shape[k], 1);
  }
  // Extent-1 dims may carry any stride (PyTorch exports them so); ferrite needs them >= 0.
  for (std::size_t k = 0; k < shape.size(); ++k)
    if (shape[k] <= 1) strides[k] = std::max<std::int64_t>(strides[k], 0);
  void* data = static_cast<char*>(dl->data) + dl->byte_offset;
  // From here the consumer (ferrite) owns the managed tensor: the producer's deleter runs when
  // the last ferrite tensor on this memory goes away, or at once if from_blob refuses it.
  if (PyCapsule_SetName(cap, versioned ? kUsedVersionedName : kUsedLegacyName) != 0) throw nb::python_error();
  auto owner = std::make_shared<ImportOwner>(managed, versioned, device);
  try {
    return from_blob(data, std::move(shape), std::move(strides), dtype, device,
                     [owner](void*) { owner->release(); });
  } catch (...) {
    // from_blob refused it: give the memory back (once; a Storage it made may have already).
    owner->release();
    throw;
  }
}

}  // namespace

Tensor from_dlpack_object(nb::handle obj) {
  if (nb::isinstance<Tensor>(obj)) return nb::cast<Tensor>(obj);
  if (PyCapsule_CheckExact(obj.ptr())) return tensor_from_capsule(obj);
  if (!nb::hasattr(obj, "__dlpack__"))
    throw nb::type_error(("from_dlpack: " + std::string(Py_TYPE(obj.ptr())->tp_name) +
                          " has no __dlpack__ method").c_str());
  nb::object stream = nb::none();
  if (nb::hasattr(obj, "__dlpack_device__")) {
    const auto dev = nb::cast<std::pair<int, int>>(obj.attr("__dlpack_device__")());
    if (dev.first == dlpack::kCUDA || dev.first == dlpack::kCUDAManaged) {
      FERRITE_CHECK(cuda::device_count() > dev.second, Unsupported, "from_dlpack: the array lives on cuda:", dev.second,
                    " but ferrite sees ", cuda::device_count(), " CUDA device(s)");
      stream = nb::int_(cuda_sync::stream_for_producer(dev.second));
    }
  }
  nb::object capsule;
  try {
    capsule = obj.attr("__dlpack__")(nb::arg("stream") = stream,
                                     nb::arg("max_version") = nb::make_tuple(dlpack::kMajorVersion, 1));
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_TypeError)) throw;  // a producer older than DLPack 1.0 has no max_version
    capsule = obj.attr("__dlpack__")(nb::arg("stream") = stream);
  }
  return tensor_from_capsule(capsule);
}

void bind_dlpack(nb::module_& m, nb::class_<Tensor>& t) {
  t.def("__dlpack__", &export_dlpack, nb::kw_only(), nb::arg("stream") = nb::none(),
        nb::arg("max_version") = nb::none(), nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none(),
        "A DLPack capsule sharing this tensor's memory (versioned when max_version >= (1, 0)). For a CUDA tensor "
        "the consumer's `stream` (1: legacy default, 2: per-thread, else a cudaStream_t; -1: no sync) waits for "
        "ferrite's stream.");
  t.def("__dlpack_device__", &dl_device_of, "(device_type, device_id): (1, 0) for the CPU, (2, i) for cuda:i.");
  m.def("from_dlpack", &from_dlpack_object, nb::arg("x"),
        "A tensor sharing the memory of any object with __dlpack__ (NumPy, PyTorch, CuPy, JAX arrays) or of a "
        "DLPack capsule, without a copy; strides are kept. ferrite passes its current stream to the producer.");
}

}  // namespace ferrite::py
