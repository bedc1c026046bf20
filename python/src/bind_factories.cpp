// Factories with PyTorch's signatures and dtype inference: tensor(data), zeros/ones/empty/full,
// arange, linspace, logspace, eye and the *_like family.
#include "common.hpp"

#include <complex>

namespace ferrite::py {

Tensor from_dlpack_object(nb::handle obj);  // bind_dlpack.cpp

namespace {

// ---- tensor(data): nested sequences of Python numbers ----

enum class Kind { Bool = 0, Int = 1, Float = 2, Complex = 3 };

struct Nested {
  Kind kind = Kind::Bool;
  std::vector<std::complex<double>> values;  // holds every kind; ints beyond 2^53 kept in ints
  std::vector<std::int64_t> ints;
};

bool is_sequence(nb::handle h) {
  return (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) ||
         (PySequence_Check(h.ptr()) && !PyUnicode_Check(h.ptr()) && !PyBytes_Check(h.ptr()) &&
          !nb::isinstance<Tensor>(h) && nb::hasattr(h, "__len__") && !nb::hasattr(h, "__dlpack__"));
}

void walk(nb::handle h, std::size_t depth, const Shape& shape, Nested& out) {
  if (is_sequence(h)) {
    const auto n = static_cast<std::int64_t>(nb::len(h));
    FERRITE_CHECK(depth < shape.size() && shape[depth] == n, ShapeMismatch,
                  "tensor: ragged nested sequence: a sequence of ", n, " at depth ", depth, " where the shape is ",
                  shape_str(shape));
    for (nb::handle item : h) walk(item, depth + 1, shape, out);
    return;
  }
  // A leaf: only at the innermost depth.
  FERRITE_CHECK(depth == shape.size(), ShapeMismatch, "tensor: ragged nested sequence: a number at depth ", depth,
                " where the shape ", shape_str(shape), " needs ", shape.size());
  PyObject* o = h.ptr();
  if (nb::isinstance<Tensor>(h)) {
    const Tensor t = nb::cast<Tensor>(h);
    FERRITE_CHECK(t.numel() == 1, ShapeMismatch, "tensor: a tensor element must have one element, got ", t.description());
    Kind k = t.dtype() == DType::Bool ? Kind::Bool
             : is_integral(t.dtype()) ? Kind::Int
             : is_complex(t.dtype())  ? Kind::Complex
                                      : Kind::Float;
    out.kind = std::max(out.kind, k);
    const auto c = t.to_vector<std::complex<double>>()[0];
    out.values.push_back(c);
    out.ints.push_back(k <= Kind::Int ? t.to_vector<std::int64_t>()[0] : 0);
    return;
  }
  if (PyBool_Check(o)) {
    out.values.push_back(o == Py_True ? 1.0 : 0.0);
    out.ints.push_back(o == Py_True);
  } else if (PyLong_Check(o) || (PyIndex_Check(o) && !PyFloat_Check(o))) {
    const auto v = nb::cast<std::int64_t>(nb::int_(h));
    out.kind = std::max(out.kind, Kind::Int);
    out.values.push_back(static_cast<double>(v));
    out.ints.push_back(v);
  } else if (PyComplex_Check(o)) {
    out.kind = Kind::Complex;
    out.values.emplace_back(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o));
    out.ints.push_back(0);
  } else if (PyFloat_Check(o) || PyNumber_Check(o)) {
    const double v = nb::cast<double>(h);
    out.kind = std::max(out.kind, Kind::Float);
    out.values.push_back(v);
    out.ints.push_back(0);
  } else {
    throw nb::type_error(("tensor: cannot make a tensor element from " + std::string(Py_TYPE(o)->tp_name)).c_str());
  }
}

Tensor tensor_from_data(nb::handle data, std::optional<DType> dtype, std::optional<Device> device) {
  const Device dev = device.value_or(Device::cpu());
  if (nb::isinstance<Tensor>(data)) {  // a copy, as torch.tensor(t)
    const Tensor t = nb::cast<Tensor>(data);
    return t.to(dev).to(dtype.value_or(t.dtype())).clone();
  }
  if (nb::hasattr(data, "__dlpack__")) {  // NumPy, PyTorch, CuPy, JAX arrays: copied
    const Tensor t = from_dlpack_object(data);
    Tensor out = t.to(dev).to(dtype.value_or(t.dtype()));
    return out.storage() == t.storage() ? out.clone() : out;
  }
  // The shape from the first element at each depth; walk() checks every other against it.
  Shape shape;
  for (nb::object h = nb::borrow(data); is_sequence(h);) {
    shape.push_back(static_cast<std::int64_t>(nb::len(h)));
    if (shape.back() == 0) break;
    h = h[0];
  }
  Nested n;
  walk(data, 0, shape, n);
  const Shape final_shape = shape;
  const auto count = static_cast<std::size_t>(shape_numel(final_shape));
  FERRITE_CHECK(n.values.size() == count, ShapeMismatch, "tensor: ragged nested sequence (", n.values.size(),
                " numbers for shape ", shape_str(final_shape), ")");
  static constexpr DType kDefault[] = {DType::Bool, DType::I64, DType::F32, DType::C64};
  const DType target = dtype.value_or(kDefault[static_cast<int>(n.kind)]);
  Tensor host;
  switch (n.kind) {
    case Kind::Bool: {
      std::vector<bool> v(count);
      for (std::size_t i = 0; i < count; ++i) v[i] = n.ints[i] != 0;
      host = from_vector(v, final_shape);
      break;
    }
    case Kind::Int: host = from_vector(n.ints, final_shape); break;
    case Kind::Float: {
      std::vector<double> v(count);
      for (std::size_t i = 0; i < count; ++i) v[i] = n.values[i].real();
      host = from_vector(v, final_shape);
      break;
    }
    case Kind::Complex: host = from_vector(n.values, final_shape); break;
  }
  return host.to(target).to(dev);
}

DType full_dtype(Scalar v) {
  switch (v.kind()) {
    case Scalar::Kind::Bool: return DType::Bool;
    case Scalar::Kind::Int: return DType::I64;
    default: return DType::F32;
  }
}

bool is_int_arg(nb::handle h) { return PyLong_Check(h.ptr()) || (PyIndex_Check(h.ptr()) && !PyFloat_Check(h.ptr())); }

}  // namespace

void bind_factories(nb::module_& m) {
  using OD = std::optional<DType>;
  using ODev = std::optional<Device>;
  const auto dt = nb::arg("dtype") = nb::none();
  const auto dv = nb::arg("device") = nb::none();
  m.def("tensor", &tensor_from_data, nb::arg("data"), dt, dv,
        "A new tensor holding a copy of `data` (nested sequences of numbers, or any array with __dlpack__). "
        "Inferred dtype as torch.tensor: bool, int64, float32 or complex64.");
  m.def("as_tensor", [](nb::handle data, OD dtype, ODev device) {
        if (nb::isinstance<Tensor>(data) || nb::hasattr(data, "__dlpack__")) {
          Tensor t = nb::isinstance<Tensor>(data) ? nb::cast<Tensor>(data) : from_dlpack_object(data);
          if (device) t = t.to(*device);
          return dtype ? t.to(*dtype) : t;
        }
        return tensor_from_data(data, dtype, device);
      }, nb::arg("data"), dt, dv, "Like tensor(), but shares memory with a tensor or DLPack array when it can.");
  m.def("empty", [](nb::args size, OD dtype, ODev device) {
        return empty(shape_args(size, "empty"), dtype.value_or(DType::F32), device.value_or(Device::cpu()));
      }, nb::arg("size"), dt, dv);
  m.def("zeros", [](nb::args size, OD dtype, ODev device) {
        return zeros(shape_args(size, "zeros"), dtype.value_or(DType::F32), device.value_or(Device::cpu()));
      }, nb::arg("size"), dt, dv);
  m.def("ones", [](nb::args size, OD dtype, ODev device) {
        return ones(shape_args(size, "ones"), dtype.value_or(DType::F32), device.value_or(Device::cpu()));
      }, nb::arg("size"), dt, dv);
  m.def("full", [](nb::handle size, Scalar value, OD dtype, ODev device) {
        return full(int_list(size, "full"), value, dtype.value_or(full_dtype(value)), device.value_or(Device::cpu()));
      }, nb::arg("size"), nb::arg("fill_value"), dt, dv,
      "Dtype from the value when not given, as torch.full: bool, int64 or float32.");
  m.def("arange", [](nb::handle start, nb::handle end, nb::handle step, OD dtype, ODev device) {
        nb::handle s = start, e = end;
        nb::object zero = nb::int_(0);
        if (end.is_none()) {
          s = zero;
          e = start;
        }
        const bool integral = is_int_arg(s) && is_int_arg(e) && is_int_arg(step);
        return arange(nb::cast<double>(nb::float_(s)), nb::cast<double>(nb::float_(e)),
                      nb::cast<double>(nb::float_(step)), dtype.value_or(integral ? DType::I64 : DType::F32),
                      device.value_or(Device::cpu()));
      }, nb::arg("start"), nb::arg("end") = nb::none(), nb::arg("step") = 1, dt, dv,
      "arange(end) or arange(start, end, step): int64 when every argument is an int, else float32 (torch.arange).");
  m.def("linspace", [](double start, double end, std::int64_t steps, OD dtype, ODev device) {
        return linspace(start, end, steps, dtype.value_or(DType::F32), device.value_or(Device::cpu()));
      }, nb::arg("start"), nb::arg("end"), nb::arg("steps"), dt, dv);
  m.def("logspace", [](double start, double end, std::int64_t steps, double base, OD dtype, ODev device) {
        return logspace(start, end, steps, base, dtype.value_or(DType::F32), device.value_or(Device::cpu()));
      }, nb::arg("start"), nb::arg("end"), nb::arg("steps"), nb::arg("base") = 10.0, dt, dv);
  m.def("eye", [](std::int64_t n, std::optional<std::int64_t> mcols, OD dtype, ODev device) {
        return eye(n, mcols.value_or(-1), dtype.value_or(DType::F32), device.value_or(Device::cpu()));
      }, nb::arg("n"), nb::arg("m") = nb::none(), dt, dv);
  // *_like: x's shape, dtype and device, or those given.
  auto like = [](const Tensor& x, OD dtype, ODev device, auto make) {
    return make(x.shape(), dtype.value_or(x.dtype()), device.value_or(x.device()));
  };
  m.def("empty_like", [like](const Tensor& x, OD d, ODev v) {
        return like(x, d, v, [](Shape s, DType t, Device dev) { return empty(s, t, dev); });
      }, nb::arg("input"), dt, dv);
  m.def("zeros_like", [like](const Tensor& x, OD d, ODev v) {
        return like(x, d, v, [](Shape s, DType t, Device dev) { return zeros(s, t, dev); });
      }, nb::arg("input"), dt, dv);
  m.def("ones_like", [like](const Tensor& x, OD d, ODev v) {
        return like(x, d, v, [](Shape s, DType t, Device dev) { return ones(s, t, dev); });
      }, nb::arg("input"), dt, dv);
  m.def("full_like", [like](const Tensor& x, Scalar value, OD d, ODev v) {
        return like(x, d, v, [value](Shape s, DType t, Device dev) { return full(s, value, t, dev); });
      }, nb::arg("input"), nb::arg("fill_value"), dt, dv);
}

}  // namespace ferrite::py
