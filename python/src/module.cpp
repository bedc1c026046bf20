// The module ferrite._ferrite: errors, dtypes, devices, and each family's bindings. A new
// family adds its bind_<family>.cpp and one call below.
#include "common.hpp"

#include <array>
#include <cstring>

namespace ferrite::py {

namespace {

// One exception class per ErrorKind, created at import (PyErr_NewException with the bases
// the kind maps to).
std::array<PyObject*, 10> g_error_types{};

struct ErrorClass {
  ErrorKind kind;
  const char* name;
  const char* doc;
};

PyObject* make_exception(nb::module_& m, const char* name, const char* doc, nb::tuple bases) {
  const std::string qualified = std::string("ferrite.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  return type;
}

}  // namespace

void bind_errors(nb::module_& m) {
  nb::tuple base_bases = nb::make_tuple(nb::handle(PyExc_Exception));
  PyObject* base = make_exception(m, "Error", "Base class of every error ferrite raises (ferrite::Error).", base_bases);
  // The Python exception each kind also derives from, so that code catching the usual
  // exception (except TypeError: ...) works as it does with PyTorch and NumPy.
  auto bases = [&](PyObject* builtin) { return nb::make_tuple(nb::handle(base), nb::handle(builtin)); };
  struct Entry {
    ErrorKind kind;
    const char* name;
    PyObject* builtin;
    const char* doc;
  };
  const Entry entries[] = {
      {ErrorKind::InvalidArgument, "InvalidArgumentError", PyExc_RuntimeError, "An argument out of the op's domain."},
      {ErrorKind::DTypeMismatch, "DTypeMismatchError", PyExc_TypeError, "Operands of different or unsupported dtypes."},
      {ErrorKind::ShapeMismatch, "ShapeMismatchError", PyExc_ValueError, "Shapes that do not fit together."},
      {ErrorKind::DeviceMismatch, "DeviceMismatchError", PyExc_RuntimeError, "Operands on different devices."},
      {ErrorKind::IndexOutOfRange, "IndexOutOfRangeError", PyExc_IndexError, "An index outside its dim."},
      {ErrorKind::Unsupported, "UnsupportedError", PyExc_NotImplementedError,
       "An op, dtype or device ferrite does not implement."},
      {ErrorKind::OutOfMemory, "OutOfMemoryError", PyExc_MemoryError, "A failed allocation."},
      {ErrorKind::Numerical, "NumericalError", PyExc_RuntimeError, "A singular or indefinite matrix, ..."},
      {ErrorKind::Cuda, "CudaError", PyExc_RuntimeError, "An error reported by the CUDA runtime."},
      {ErrorKind::Library, "LibraryError", PyExc_RuntimeError, "An error reported by cuBLAS, cuFFT, ..."},
  };
  for (const Entry& e : entries)
    g_error_types[static_cast<std::size_t>(e.kind)] = make_exception(m, e.name, e.doc, bases(e.builtin));
  // OutOfMemory is also a RuntimeError, as torch.cuda.OutOfMemoryError is.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      const auto k = static_cast<std::size_t>(e.kind());
      PyErr_SetString(k < g_error_types.size() && g_error_types[k] ? g_error_types[k] : PyExc_RuntimeError, e.what());
    }
  });
}

const char* dtype_py_name(DType d) {
  switch (d) {
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::Bool: return "bool";
    case DType::C64: return "complex64";
    case DType::C128: return "complex128";
  }
  return "?";
}

namespace {
// Borrowed: the module's attributes (ferrite.float32, ...) own them, so that they are
// released with the module instead of outliving the interpreter.
std::array<PyObject*, kNumDTypes> g_dtype_objects{};

std::optional<DType> dtype_from_name(std::string name) {
  if (auto dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);  // torch.float32
  for (DType d : kAllDTypes)
    if (name == dtype_py_name(d) || name == dtype_name(d)) return d;
  if (name == "float" || name == "float_") return DType::F32;
  if (name == "double") return DType::F64;
  if (name == "half") return DType::F16;
  if (name == "int") return DType::I32;
  if (name == "long") return DType::I64;
  if (name == "bool_") return DType::Bool;
  if (name == "cfloat") return DType::C64;
  if (name == "cdouble") return DType::C128;
  return std::nullopt;
}
}  // namespace

nb::object dtype_object(DType d) { return nb::borrow(g_dtype_objects[static_cast<std::size_t>(d)]); }

Device parse_device(const std::string& text) {
  std::string kind = text;
  int index = 0;
  if (auto colon = text.find(':'); colon != std::string::npos) {
    kind = text.substr(0, colon);
    const std::string digits = text.substr(colon + 1);
    FERRITE_CHECK(!digits.empty() && digits.size() < 6 && digits.find_first_not_of("0123456789") == std::string::npos,
                  InvalidArgument, "device: cannot parse '", text, "' (expected 'cpu', 'cuda' or 'cuda:N')");
    index = std::stoi(digits);
  }
  if (kind == "cpu") return Device{DeviceKind::CPU, index};
  if (kind == "cuda") return Device::cuda(index);
  FERRITE_THROW(InvalidArgument, "device: cannot parse '", text, "' (expected 'cpu', 'cuda' or 'cuda:N')");
}

std::vector<std::int64_t> int_list(nb::handle obj, const char* what) {
  std::vector<std::int64_t> out;
  if (PyLong_Check(obj.ptr())) {
    out.push_back(nb::cast<std::int64_t>(obj));
    return out;
  }
  if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr()))
    throw nb::type_error((std::string(what) + ": expected an int or a sequence of ints").c_str());
  for (nb::handle item : obj) out.push_back(nb::cast<std::int64_t>(item));
  return out;
}

Shape shape_args(const nb::args& args, const char* what) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return int_list(args[0], what);
  Shape shape;
  for (nb::handle a : args) shape.push_back(nb::cast<std::int64_t>(a));
  return shape;
}

void bind_types(nb::module_& m) {
  nb::class_<PyDType>(m, "dtype", "A tensor element type: ferrite.float32, ferrite.bfloat16, ...")
      .def_prop_ro("itemsize", [](const PyDType& d) { return dtype_size(d.dtype); }, "Bytes per element.")
      .def_prop_ro("is_floating_point", [](const PyDType& d) { return is_floating(d.dtype); })
      .def_prop_ro("is_complex", [](const PyDType& d) { return is_complex(d.dtype); })
      .def_prop_ro("name", [](const PyDType& d) { return std::string(dtype_py_name(d.dtype)); })
      .def("__repr__", [](const PyDType& d) { return std::string("ferrite.") + dtype_py_name(d.dtype); })
      .def("__eq__", [](const PyDType& a, nb::handle b) {
        DType other;
        nb::detail::make_caster<DType> c;
        if (!c.from_python(b, 0, nullptr)) return false;
        other = c.value;
        return a.dtype == other;
      })
      .def("__hash__", [](const PyDType& d) { return static_cast<int>(d.dtype) + 1; })
      .def("__reduce__", [](const PyDType& d) { return std::string(dtype_py_name(d.dtype)); });
  // Bool is bound as bool_: the names that shadow Python builtins (ferrite.bool, ferrite.float,
  // ferrite.int, ...) are set by ferrite/__init__.py, so that the generated stub can still say
  // `-> bool`.
  for (DType d : kAllDTypes) {
    nb::object obj = nb::cast(PyDType{d});
    g_dtype_objects[static_cast<std::size_t>(d)] = obj.ptr();
    m.attr(d == DType::Bool ? "bool_" : dtype_py_name(d)) = obj;
  }
  nb::class_<PyDevice>(m, "device", "Where a tensor lives: ferrite.device('cpu'), ferrite.device('cuda:1').")
      .def("__init__", [](PyDevice* self, const std::string& s) { new (self) PyDevice{parse_device(s)}; })
      .def("__init__", [](PyDevice* self, const std::string& type, int index) {
        new (self) PyDevice{parse_device(type + ":" + std::to_string(index))};
      })
      .def_prop_ro("type", [](const PyDevice& d) { return std::string(d.device.is_cuda() ? "cuda" : "cpu"); })
      .def_prop_ro("index", [](const PyDevice& d) { return d.device.index; })
      .def("__str__", [](const PyDevice& d) { return d.device.str(); })
      .def("__repr__", [](const PyDevice& d) {
        return std::string("device(type='") + (d.device.is_cuda() ? "cuda" : "cpu") + "', index=" +
               std::to_string(d.device.index) + ")";
      })
      .def("__eq__", [](const PyDevice& a, nb::handle b) {
        nb::detail::make_caster<Device> c;
        if (!c.from_python(b, 0, nullptr)) return false;
        return a.device == c.value;
      })
      .def("__hash__", [](const PyDevice& d) { return (static_cast<int>(d.device.kind) << 16) + d.device.index; });
}

}  // namespace ferrite::py

namespace nanobind::detail {

bool type_caster<ferrite::DType>::from_python(handle src, uint8_t, cleanup_list*) noexcept {
  if (ferrite::py::PyDType* p = nullptr; nb::try_cast<ferrite::py::PyDType*>(src, p) && p) {
    value = p->dtype;
    return true;
  }
  std::string name;
  if (PyUnicode_Check(src.ptr())) {
    name = nb::cast<std::string>(src);
  } else if (PyType_Check(src.ptr())) {  // np.float32, float, bool
    name = reinterpret_cast<PyTypeObject*>(src.ptr())->tp_name;
    if (src.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) name = "float32";
    if (src.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) name = "int64";
    if (src.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) name = "bool";
    if (src.ptr() == reinterpret_cast<PyObject*>(&PyComplex_Type)) name = "complex64";
  } else {  // torch.float32, np.dtype('float32'): their str() is a dtype name
    PyObject* s = PyObject_Str(src.ptr());
    if (!s) {
      PyErr_Clear();
      return false;
    }
    Py_ssize_t n = 0;
    const char* c = PyUnicode_AsUTF8AndSize(s, &n);
    if (c) name.assign(c, static_cast<std::size_t>(n));
    Py_DECREF(s);
    if (!c) {
      PyErr_Clear();
      return false;
    }
  }
  if (auto d = ferrite::py::dtype_from_name(name)) {
    value = *d;
    return true;
  }
  return false;
}

bool type_caster<ferrite::Device>::from_python(handle src, uint8_t, cleanup_list*) noexcept {
  try {
    if (ferrite::py::PyDevice* p = nullptr; nb::try_cast<ferrite::py::PyDevice*>(src, p) && p) {
      value = p->device;
      return true;
    }
    if (PyUnicode_Check(src.ptr())) {
      value = ferrite::py::parse_device(nb::cast<std::string>(src));
      return true;
    }
    if (nb::hasattr(src, "type") && nb::hasattr(src, "index")) {  // torch.device
      const std::string type = nb::cast<std::string>(nb::str(src.attr("type")));
      nb::object index = src.attr("index");
      value = ferrite::py::parse_device(index.is_none() ? type : type + ":" + nb::cast<std::string>(nb::str(index)));
      return true;
    }
  } catch (...) {
    PyErr_Clear();
  }
  return false;
}

handle type_caster<ferrite::Device>::from_cpp(ferrite::Device d, rv_policy, cleanup_list*) noexcept {
  return nb::cast(ferrite::py::PyDevice{d}).release();
}

}  // namespace nanobind::detail

NB_MODULE(_ferrite, m) {
  using namespace ferrite::py;
  m.doc() = "ferrite: tensors on the CPU and CUDA GPUs (docs/python.md)";
  bind_errors(m);
  bind_types(m);
  nb::class_<ferrite::Tensor> tensor(m, "Tensor",
                                     "A tensor: shared storage plus shape, strides and a storage offset, on the CPU "
                                     "or a CUDA device. Views share the storage, as in PyTorch.");
  bind_tensor(m, tensor);
  bind_factories(m);
  bind_elementwise(m, tensor);
  bind_reduction(m, tensor);
  bind_shape(m, tensor);
  bind_matmul(m, tensor);
  bind_dlpack(m, tensor);
  bind_cuda(m);
  bind_linalg(m);
  bind_fft(m);
  bind_sparse(m, tensor);
  bind_nn(m);
  bind_nn_conv(m);
  bind_random(m, tensor);
  bind_optim(m);
}
