// The Tensor class: attributes, conversions (to, item, tolist), printing, Python operators,
// indexing with ints, slices, None, Ellipsis and Bool/int tensors, views and in-place ops.
#include "common.hpp"

#include <complex>

namespace ferrite::py {

namespace {

// ---- host values ----

nb::object element_list(const Tensor& x) {
  // One flat list of Python values in row-major order, read as the widest host type of the
  // dtype's kind (F16/BF16/F32 widen to double exactly).
  const std::size_t n = static_cast<std::size_t>(x.numel());
  nb::list out;
  if (x.dtype() == DType::Bool) {
    const auto v = x.to_vector<bool>();
    for (std::size_t i = 0; i < n; ++i) out.append(nb::bool_(v[i]));
  } else if (is_integral(x.dtype())) {
    const auto v = x.to_vector<std::int64_t>();
    for (std::size_t i = 0; i < n; ++i) out.append(nb::int_(v[i]));
  } else if (is_complex(x.dtype())) {
    const auto v = x.to_vector<std::complex<double>>();
    for (std::size_t i = 0; i < n; ++i) out.append(nb::steal(PyComplex_FromDoubles(v[i].real(), v[i].imag())));
  } else {
    const auto v = x.to_vector<double>();
    for (std::size_t i = 0; i < n; ++i) out.append(nb::float_(v[i]));
  }
  return out;
}

nb::object nest(const nb::list& flat, const Shape& shape, std::size_t dim, std::size_t& pos) {
  if (dim == shape.size()) return flat[pos++];
  nb::list out;
  for (std::int64_t i = 0; i < shape[dim]; ++i) out.append(nest(flat, shape, dim + 1, pos));
  return out;
}

nb::object tolist(const Tensor& x) {
  nb::list flat = nb::cast<nb::list>(element_list(x));
  std::size_t pos = 0;
  return nest(flat, x.shape(), 0, pos);
}

nb::object item(const Tensor& x) {
  FERRITE_CHECK(x.numel() == 1, InvalidArgument, "item: tensor ", x.description(), " has ", x.numel(),
                " elements, expected exactly 1");
  return nb::cast<nb::list>(element_list(x))[0];
}

// ---- indexing ----

bool is_index_tensor(nb::handle h) { return nb::isinstance<Tensor>(h); }

Tensor as_index_tensor(nb::handle h, Device device) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  // A list of ints or bools, as PyTorch accepts x[[0, 2]].
  std::vector<std::int64_t> ints;
  std::vector<bool> bools;
  bool all_bool = true;
  for (nb::handle item : h) {
    if (PyBool_Check(item.ptr())) bools.push_back(item.ptr() == Py_True);
    else all_bool = false;
    ints.push_back(nb::cast<std::int64_t>(item));
  }
  const Shape shape{static_cast<std::int64_t>(ints.size())};
  if (all_bool && !ints.empty()) return from_vector(bools, shape, device);
  return from_vector(ints, shape, device);
}

// x[key] for key an int, slice, None, Ellipsis, Tensor, list, or a tuple of those.
Tensor index_view(const Tensor& x, nb::handle key) {
  std::vector<nb::handle> items;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle h : nb::borrow<nb::tuple>(key)) items.push_back(h);
  } else {
    items.push_back(key);
  }
  // A whole-tensor Bool mask: the selected elements (torch's x[mask]).
  if (items.size() == 1 && is_index_tensor(items[0])) {
    const Tensor idx = nb::cast<Tensor>(items[0]);
    if (idx.dtype() == DType::Bool && idx.dim() == x.dim() && idx.dim() > 0) return masked_select(x, idx);
  }
  std::int64_t consumed = 0;
  for (nb::handle h : items)
    if (!h.is_none() && h.ptr() != Py_Ellipsis) ++consumed;
  Tensor out = x;
  std::int64_t dim = 0;
  bool seen_ellipsis = false;
  for (nb::handle h : items) {
    PyObject* o = h.ptr();
    if (h.is_none()) {
      out = out.unsqueeze(dim++);
    } else if (o == Py_Ellipsis) {
      if (seen_ellipsis) throw nb::index_error("an index can only have a single ellipsis ('...')");
      seen_ellipsis = true;
      dim += x.dim() - consumed;
    } else if (PySlice_Check(o)) {
      Py_ssize_t start = 0, stop = 0, step = 0;
      if (PySlice_Unpack(o, &start, &stop, &step) < 0) throw nb::python_error();
      FERRITE_CHECK(step > 0, InvalidArgument, "slice: step must be greater than zero (got ", step, ")");
      FERRITE_CHECK(dim < out.dim(), IndexOutOfRange, "index: too many indices for tensor of dimension ", x.dim());
      out = out.slice(dim++, start, stop, step);
    } else if (PyBool_Check(o)) {
      throw nb::type_error("index: a bool index is not supported (use a Bool tensor)");
    } else if (PyLong_Check(o) || (!nb::isinstance<Tensor>(h) && PyIndex_Check(o))) {
      FERRITE_CHECK(dim < out.dim(), IndexOutOfRange, "index: too many indices for tensor of dimension ", x.dim());
      out = out.select(dim, nb::cast<std::int64_t>(nb::int_(h)));
    } else if (nb::isinstance<Tensor>(h) || PyList_Check(o)) {
      const Tensor idx = as_index_tensor(h, out.device());
      FERRITE_CHECK(dim < out.dim(), IndexOutOfRange, "index: too many indices for tensor of dimension ", x.dim());
      if (idx.dtype() == DType::Bool) {
        FERRITE_CHECK(idx.dim() == 1 && idx.size(0) == out.size(dim), ShapeMismatch,
                      "index: a Bool index inside a tuple must be 1-D with the dim's size (", out.size(dim), "), got ",
                      idx.description());
        // The positions where it is true, along this dim.
        out = index_select(out, dim, masked_select(arange(idx.numel(), DType::I64, idx.device()), idx));
        ++dim;
      } else {
        // index_select takes a 1-D index; an index of any shape selects its flattened
        // positions and then takes its shape.
        const Shape idx_shape = idx.shape();
        out = index_select(out, dim, idx.reshape({-1}));
        out = idx_shape.size() == 1 ? out : out.unflatten(dim, idx_shape.empty() ? Shape{} : idx_shape);
        dim += static_cast<std::int64_t>(idx_shape.size());
      }
    } else {
      throw nb::type_error(("index: unsupported index type " + std::string(Py_TYPE(o)->tp_name)).c_str());
    }
  }
  return out;
}

void set_item(const Tensor& x, nb::handle key, nb::handle value) {
  auto assign = [&](const Tensor& target) {
    if (nb::isinstance<Tensor>(value)) target.copy_(nb::cast<Tensor>(value));
    else target.fill_(nb::cast<Scalar>(value));
  };
  if (is_index_tensor(key)) {
    const Tensor idx = nb::cast<Tensor>(key);
    if (idx.dtype() == DType::Bool) {
      if (nb::isinstance<Tensor>(value)) {
        const Tensor v = nb::cast<Tensor>(value);
        if (v.numel() == 1) x.masked_fill_(idx, Scalar(v.to(Device::cpu()).to(DType::F64).item<double>()));
        else x.copy_(masked_scatter(x, idx.expand(x.shape()), v.to(x.dtype())));
      } else {
        x.masked_fill_(idx, nb::cast<Scalar>(value));
      }
      return;
    }
  }
  // Integer-tensor indices make copies in index_view; writing through them would be lost.
  auto has_tensor_index = [](nb::handle k) {
    if (nb::isinstance<Tensor>(k) || PyList_Check(k.ptr())) return true;
    if (PyTuple_Check(k.ptr()))
      for (nb::handle h : nb::borrow<nb::tuple>(k))
        if (nb::isinstance<Tensor>(h) || PyList_Check(h.ptr())) return true;
    return false;
  };
  if (has_tensor_index(key))
    throw nb::type_error("index assignment: integer-tensor indices are not supported (ferrite has no index_put)");
  assign(index_view(x, key));
}

// ---- operators ----

Tensor scalar_like(const char* op, Scalar s, const Tensor& like) { return scalar_tensor_like(op, s, like); }

template <class TT, class TS, class ST>
void binary_operator(nb::class_<Tensor>& t, const char* name, const char* rname, TT tt, TS ts, ST st) {
  t.def(name, tt, nb::is_operator());
  t.def(name, ts, nb::is_operator());
  if constexpr (!std::is_same_v<ST, std::nullptr_t>) t.def(rname, st, nb::is_operator());
}

// Python's /= divides exactly, which ferrite's div_ does for floating dtypes only (it
// truncates integers), so integer targets are refused as `/` refuses them.
void check_true_division(const Tensor& a) {
  FERRITE_CHECK(is_floating(a.dtype()) || is_complex(a.dtype()), DTypeMismatch, "operator/=: ", a.description(),
                " is not floating (/ divides exactly; use div_ to truncate or //= to floor)");
}

}  // namespace

void bind_tensor(nb::module_& m, nb::class_<Tensor>& t) {
  (void)m;
  t.def_prop_ro("shape", [](const Tensor& x) { return nb::tuple(nb::cast(x.shape())); }, "The dims (a tuple).")
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro("device", &Tensor::device)
      .def_prop_ro("ndim", &Tensor::dim)
      .def_prop_ro("strides", [](const Tensor& x) { return nb::tuple(nb::cast(x.strides())); },
                   "Element strides (PyTorch's stride(); NumPy's .strides are in bytes).")
      .def_prop_ro("is_cuda", [](const Tensor& x) { return x.device().is_cuda(); })
      .def_prop_ro("is_cpu", [](const Tensor& x) { return x.device().is_cpu(); })
      .def_prop_ro("itemsize", &Tensor::element_size)
      .def_prop_ro("nbytes", &Tensor::nbytes)
      .def_prop_ro("T", [](const Tensor& x) {
        std::vector<std::int64_t> dims(static_cast<std::size_t>(x.dim()));
        for (std::size_t i = 0; i < dims.size(); ++i) dims[i] = x.dim() - 1 - static_cast<std::int64_t>(i);
        return x.permute(dims);
      }, "The dims reversed (a view).")
      .def_prop_ro("mT", &Tensor::mT, "The last two dims swapped (a view).")
      .def("size", [](const Tensor& x) { return nb::tuple(nb::cast(x.shape())); })
      .def("size", [](const Tensor& x, std::int64_t d) { return x.size(d); }, nb::arg("dim"))
      .def("stride", [](const Tensor& x) { return nb::tuple(nb::cast(x.strides())); })
      .def("stride", [](const Tensor& x, std::int64_t d) { return x.stride(d); }, nb::arg("dim"))
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("element_size", &Tensor::element_size)
      .def("storage_offset", &Tensor::storage_offset)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("contiguous", &Tensor::contiguous, "self when contiguous, else a contiguous copy.")
      .def("clone", &Tensor::clone)
      .def("data_ptr", [](const Tensor& x) { return reinterpret_cast<std::uintptr_t>(x.data_ptr()); },
           "Address of the first element (storage offset applied).")
      .def("is_floating_point", [](const Tensor& x) { return is_floating(x.dtype()); })
      .def("is_complex", [](const Tensor& x) { return is_complex(x.dtype()); })
      // ---- conversions ----
      .def("to", [](const Tensor& x, DType d) { return x.to(d); }, nb::arg("dtype"))
      .def("to", [](const Tensor& x, Device d) { return x.to(d); }, nb::arg("device"))
      .def("to", [](const Tensor& x, Device dev, DType d) { return x.to(dev).to(d); }, nb::arg("device"),
           nb::arg("dtype"))
      .def("to", [](const Tensor& x, const Tensor& other) { return x.to(other.device()).to(other.dtype()); },
           nb::arg("other"), "The device and dtype of `other`.")
      .def("cpu", [](const Tensor& x) { return x.to(Device::cpu()); })
      .def("cuda", [](const Tensor& x, int index) { return x.to(Device::cuda(index)); }, nb::arg("device") = 0)
      .def("float", [](const Tensor& x) { return x.to(DType::F32); })
      .def("double", [](const Tensor& x) { return x.to(DType::F64); })
      .def("half", [](const Tensor& x) { return x.to(DType::F16); })
      .def("bfloat16", [](const Tensor& x) { return x.to(DType::BF16); })
      .def("int", [](const Tensor& x) { return x.to(DType::I32); })
      .def("long", [](const Tensor& x) { return x.to(DType::I64); })
      .def("bool", [](const Tensor& x) { return x.to(DType::Bool); })
      .def("item", &item, "The single element as a Python bool, int, float or complex.")
      .def("tolist", &tolist, "Nested Python lists of the elements (a scalar for rank 0).")
      .def("__repr__", [](const Tensor& x) { return to_string(x); })
      .def("__len__", [](const Tensor& x) {
        if (x.dim() == 0) throw nb::type_error("len() of a 0-d tensor");
        return x.size(0);
      })
      .def("__bool__", [](const Tensor& x) { return nb::bool_(nb::cast<bool>(nb::bool_(item(x)))); })
      .def("__float__", [](const Tensor& x) { return nb::float_(item(x)); })
      .def("__int__", [](const Tensor& x) { return nb::int_(item(x)); })
      .def("__index__", [](const Tensor& x) {
        FERRITE_CHECK(is_integral(x.dtype()) && x.numel() == 1, DTypeMismatch,
                      "__index__: only one-element integer tensors can be used as an index, got ", x.description());
        return nb::int_(item(x));
      })
      .def("__hash__", [](nb::handle self) { return reinterpret_cast<std::intptr_t>(self.ptr()); })
      .def("__getitem__", &index_view, nb::arg("key").none())
      .def("__setitem__", &set_item, nb::arg("key").none(), nb::arg("value"));

  // ---- Python operators (thin wrappers over ferrite's; no dtype promotion) ----
  binary_operator(t, "__add__", "__radd__", [](const Tensor& a, const Tensor& b) { return a + b; },
                  [](const Tensor& a, Scalar b) { return a + b; }, [](const Tensor& a, Scalar b) { return b + a; });
  binary_operator(t, "__sub__", "__rsub__", [](const Tensor& a, const Tensor& b) { return a - b; },
                  [](const Tensor& a, Scalar b) { return a - b; }, [](const Tensor& a, Scalar b) { return b - a; });
  binary_operator(t, "__mul__", "__rmul__", [](const Tensor& a, const Tensor& b) { return a * b; },
                  [](const Tensor& a, Scalar b) { return a * b; }, [](const Tensor& a, Scalar b) { return b * a; });
  binary_operator(t, "__truediv__", "__rtruediv__", [](const Tensor& a, const Tensor& b) { return a / b; },
                  [](const Tensor& a, Scalar b) { return a / b; }, [](const Tensor& a, Scalar b) { return b / a; });
  binary_operator(
      t, "__floordiv__", "__rfloordiv__", [](const Tensor& a, const Tensor& b) { return floor_divide(a, b); },
      [](const Tensor& a, Scalar b) { return floor_divide(a, scalar_like("floor_divide", b, a)); },
      [](const Tensor& a, Scalar b) { return floor_divide(scalar_like("floor_divide", b, a), a); });
  binary_operator(t, "__mod__", "__rmod__", [](const Tensor& a, const Tensor& b) { return a % b; },
                  [](const Tensor& a, Scalar b) { return a % b; }, [](const Tensor& a, Scalar b) { return b % a; });
  binary_operator(t, "__and__", "__rand__", [](const Tensor& a, const Tensor& b) { return a & b; },
                  [](const Tensor& a, Scalar b) { return a & b; }, [](const Tensor& a, Scalar b) { return b & a; });
  binary_operator(t, "__or__", "__ror__", [](const Tensor& a, const Tensor& b) { return a | b; },
                  [](const Tensor& a, Scalar b) { return a | b; }, [](const Tensor& a, Scalar b) { return b | a; });
  binary_operator(t, "__xor__", "__rxor__", [](const Tensor& a, const Tensor& b) { return a ^ b; },
                  [](const Tensor& a, Scalar b) { return a ^ b; }, [](const Tensor& a, Scalar b) { return b ^ a; });
  binary_operator(
      t, "__lshift__", "__rlshift__", [](const Tensor& a, const Tensor& b) { return shift_left(a, b); },
      [](const Tensor& a, Scalar b) { return shift_left(a, scalar_like("shift_left", b, a)); },
      [](const Tensor& a, Scalar b) { return shift_left(scalar_like("shift_left", b, a), a); });
  binary_operator(
      t, "__rshift__", "__rrshift__", [](const Tensor& a, const Tensor& b) { return shift_right(a, b); },
      [](const Tensor& a, Scalar b) { return shift_right(a, scalar_like("shift_right", b, a)); },
      [](const Tensor& a, Scalar b) { return shift_right(scalar_like("shift_right", b, a), a); });
  // Comparisons: the reflected forms are the swapped comparisons, as Python calls them.
  binary_operator(t, "__eq__", nullptr, [](const Tensor& a, const Tensor& b) { return a == b; },
                  [](const Tensor& a, Scalar b) { return a == b; }, nullptr);
  binary_operator(t, "__ne__", nullptr, [](const Tensor& a, const Tensor& b) { return a != b; },
                  [](const Tensor& a, Scalar b) { return a != b; }, nullptr);
  binary_operator(t, "__lt__", nullptr, [](const Tensor& a, const Tensor& b) { return a < b; },
                  [](const Tensor& a, Scalar b) { return a < b; }, nullptr);
  binary_operator(t, "__le__", nullptr, [](const Tensor& a, const Tensor& b) { return a <= b; },
                  [](const Tensor& a, Scalar b) { return a <= b; }, nullptr);
  binary_operator(t, "__gt__", nullptr, [](const Tensor& a, const Tensor& b) { return a > b; },
                  [](const Tensor& a, Scalar b) { return a > b; }, nullptr);
  binary_operator(t, "__ge__", nullptr, [](const Tensor& a, const Tensor& b) { return a >= b; },
                  [](const Tensor& a, Scalar b) { return a >= b; }, nullptr);
  t.def("__pow__", [](const Tensor& a, double e) { return pow(a, e); }, nb::is_operator());
  t.def("__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, nb::is_operator());
  t.def("__neg__", [](const Tensor& a) { return -a; });
  t.def("__pos__", [](const Tensor& a) { return a; });
  t.def("__abs__", [](const Tensor& a) { return abs(a); });
  t.def("__invert__", [](const Tensor& a) { return ~a; });

  // In place, writing into self's storage (through its strides). +=, -=, *=, /= are
  // ferrite's in-place ops; the others compute the result and copy it back, as the dtype
  // and shape cannot change.
  auto inplace = [&t](const char* name, auto op_tensor, auto op_scalar) {
    t.def(name, [op_tensor](Tensor& self, const Tensor& o) -> Tensor& { op_tensor(self, o); return self; },
          nb::is_operator(), nb::rv_policy::reference);
    t.def(name, [op_scalar](Tensor& self, Scalar o) -> Tensor& { op_scalar(self, o); return self; },
          nb::is_operator(), nb::rv_policy::reference);
  };
  inplace("__iadd__", [](Tensor& a, const Tensor& b) { a.add_(b); }, [](Tensor& a, Scalar b) { a.add_(b); });
  inplace("__isub__", [](Tensor& a, const Tensor& b) { a.sub_(b); }, [](Tensor& a, Scalar b) { a.sub_(b); });
  inplace("__imul__", [](Tensor& a, const Tensor& b) { a.mul_(b); }, [](Tensor& a, Scalar b) { a.mul_(b); });
  inplace("__itruediv__", [](Tensor& a, const Tensor& b) { check_true_division(a); a.div_(b); },
          [](Tensor& a, Scalar b) { check_true_division(a); a.div_(b); });
  inplace("__ifloordiv__", [](Tensor& a, const Tensor& b) { a.copy_(floor_divide(a, b)); },
          [](Tensor& a, Scalar b) { a.copy_(floor_divide(a, scalar_like("floor_divide", b, a))); });
  inplace("__imod__", [](Tensor& a, const Tensor& b) { a.copy_(a % b); }, [](Tensor& a, Scalar b) { a.copy_(a % b); });
  inplace("__iand__", [](Tensor& a, const Tensor& b) { a.copy_(a & b); }, [](Tensor& a, Scalar b) { a.copy_(a & b); });
  inplace("__ior__", [](Tensor& a, const Tensor& b) { a.copy_(a | b); }, [](Tensor& a, Scalar b) { a.copy_(a | b); });
  inplace("__ixor__", [](Tensor& a, const Tensor& b) { a.copy_(a ^ b); }, [](Tensor& a, Scalar b) { a.copy_(a ^ b); });
  t.def("__ipow__", [](Tensor& self, double e) -> Tensor& { self.copy_(pow(self, e)); return self; },
        nb::is_operator(), nb::rv_policy::reference);

  // ---- views (share the storage) ----
  t.def("view", [](const Tensor& x, nb::args shape) { return x.view(shape_args(shape, "view")); })
      .def("view", [](const Tensor& x, DType d) {
        FERRITE_CHECK(d == x.dtype(), Unsupported, "view: reinterpreting ", x.description(), " as ",
                      dtype_py_name(d), " is not supported");
        return x;
      })
      .def("reshape", [](const Tensor& x, nb::args shape) { return x.reshape(shape_args(shape, "reshape")); })
      .def("slice", &Tensor::slice, nb::arg("dim"), nb::arg("start"), nb::arg("end"), nb::arg("step") = 1)
      .def("narrow", &Tensor::narrow, nb::arg("dim"), nb::arg("start"), nb::arg("length"))
      .def("select", &Tensor::select, nb::arg("dim"), nb::arg("index"))
      .def("unsqueeze", &Tensor::unsqueeze, nb::arg("dim"))
      .def("squeeze", [](const Tensor& x, std::optional<std::int64_t> dim) { return dim ? x.squeeze(*dim) : x.squeeze(); },
           nb::arg("dim") = nb::none())
      .def("flatten", &Tensor::flatten, nb::arg("start_dim") = 0, nb::arg("end_dim") = -1)
      .def("unflatten", &Tensor::unflatten, nb::arg("dim"), nb::arg("sizes"))
      .def("expand", [](const Tensor& x, nb::args shape) { return x.expand(shape_args(shape, "expand")); })
      .def("expand_as", [](const Tensor& x, const Tensor& o) { return x.expand(o.shape()); })
      .def("view_as", [](const Tensor& x, const Tensor& o) { return x.view(o.shape()); })
      .def("reshape_as", [](const Tensor& x, const Tensor& o) { return x.reshape(o.shape()); })
      .def("t", &Tensor::t)
      .def("transpose", &Tensor::transpose, nb::arg("dim0"), nb::arg("dim1"))
      .def("permute", [](const Tensor& x, nb::args dims) { return x.permute(shape_args(dims, "permute")); })
      .def("diagonal", &Tensor::diagonal, nb::arg("offset") = 0, nb::arg("dim1") = 0, nb::arg("dim2") = 1)
      .def("unfold", &Tensor::unfold, nb::arg("dimension"), nb::arg("size"), nb::arg("step"))
      .def("as_strided",
           [](const Tensor& x, Shape size, Strides stride, std::optional<std::int64_t> offset) {
             return offset ? x.as_strided(size, stride, *offset) : x.as_strided(size, stride);
           },
           nb::arg("size"), nb::arg("stride"), nb::arg("storage_offset") = nb::none());

  // ---- in place, named (return self) ----
  auto self_ref = nb::rv_policy::reference;
  t.def("copy_", [](Tensor& x, const Tensor& src) -> Tensor& { x.copy_(src); return x; }, nb::arg("src"), self_ref)
      .def("fill_", [](Tensor& x, Scalar v) -> Tensor& { x.fill_(v); return x; }, nb::arg("value"), self_ref)
      .def("zero_", [](Tensor& x) -> Tensor& { x.zero_(); return x; }, self_ref)
      .def("add_", [](Tensor& x, const Tensor& o) -> Tensor& { x.add_(o); return x; }, nb::arg("other"), self_ref)
      .def("add_", [](Tensor& x, Scalar o) -> Tensor& { x.add_(o); return x; }, nb::arg("other"), self_ref)
      .def("sub_", [](Tensor& x, const Tensor& o) -> Tensor& { x.sub_(o); return x; }, nb::arg("other"), self_ref)
      .def("sub_", [](Tensor& x, Scalar o) -> Tensor& { x.sub_(o); return x; }, nb::arg("other"), self_ref)
      .def("mul_", [](Tensor& x, const Tensor& o) -> Tensor& { x.mul_(o); return x; }, nb::arg("other"), self_ref)
      .def("mul_", [](Tensor& x, Scalar o) -> Tensor& { x.mul_(o); return x; }, nb::arg("other"), self_ref)
      .def("div_", [](Tensor& x, const Tensor& o) -> Tensor& { x.div_(o); return x; }, nb::arg("other"), self_ref)
      .def("div_", [](Tensor& x, Scalar o) -> Tensor& { x.div_(o); return x; }, nb::arg("other"), self_ref)
      .def("clamp_",
           [](Tensor& x, std::optional<double> lo, std::optional<double> hi) -> Tensor& { x.clamp_(lo, hi); return x; },
           nb::arg("min") = nb::none(), nb::arg("max") = nb::none(), self_ref)
      .def("masked_fill_",
           [](Tensor& x, const Tensor& mask, Scalar v) -> Tensor& { x.masked_fill_(mask, v); return x; },
           nb::arg("mask"), nb::arg("value"), self_ref);
}

}  // namespace ferrite::py
