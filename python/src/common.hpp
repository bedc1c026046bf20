// Shared by every binding file: nanobind, the conversions of ferrite's value types to and from
// Python (Scalar from bool/int/float; DType from ferrite.float32 or a name; Device from
// "cpu", "cuda", "cuda:1" or any object with .type and .index, such as torch.device), and one
// bind_<family>() declaration per family file.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include <ferrite/ferrite.hpp>

namespace nb = nanobind;

namespace ferrite::py {

/// The Python object behind ferrite.float32 etc.: a DType with PyTorch-like attributes.
struct PyDType {
  DType dtype;
};
/// The Python object ferrite.device("cuda:1"): a Device.
struct PyDevice {
  Device device;
};

/// "float32", "bfloat16", ... (PyTorch's spelling; ferrite's printing uses F32, BF16).
const char* dtype_py_name(DType d);
/// The interned ferrite.<dtype> object.
nb::object dtype_object(DType d);
/// A device from "cpu", "cuda", "cuda:1", "cpu:0".
Device parse_device(const std::string& text);
/// PyTorch-style dims argument: None, an int or a sequence of ints.
std::vector<std::int64_t> int_list(nb::handle obj, const char* what);
/// Shape given as f(2, 3) or f((2, 3)) / f([2, 3]).
Shape shape_args(const nb::args& args, const char* what);

/// `name` as another spelling of the already bound `existing`, on the module and on Tensor.
inline void alias(nb::module_& m, nb::class_<Tensor>& t, const char* name, const char* existing) {
  if (nb::hasattr(m, existing)) m.attr(name) = m.attr(existing);
  if (nb::hasattr(t, existing)) nb::setattr(t, name, nb::getattr(t, existing));
}
/// The dims of a dim= argument: None (every dim), an int, or a sequence of ints.
inline std::optional<std::vector<std::int64_t>> dims_arg(nb::handle dim) {
  if (dim.is_none()) return std::nullopt;
  return int_list(dim, "dim");
}

/// The submodule `name` of m (ferrite.nn, ...), created by whichever family file binds into it first.
inline nb::module_ submodule(nb::module_& m, const char* name, const char* doc) {
  if (nb::hasattr(m, name)) return nb::borrow<nb::module_>(m.attr(name));
  return m.def_submodule(name, doc);
}
/// A tuple annotated with its element types in the stub.
template <class... Ts>
using Tuple = nb::typed<nb::tuple, Ts...>;
/// A named tuple type ferrite.return_types.<name> with `fields` (space separated), as
/// torch.return_types: results unpack as tuples and also have named fields.
inline nb::object result_type(nb::module_& m, const char* name, const char* fields) {
  nb::module_ rt = submodule(m, "return_types", "Named tuples that ops return (torch.return_types).");
  nb::object type = nb::module_::import_("collections").attr("namedtuple")(name, fields);
  type.attr("__module__") = "ferrite.return_types";
  rt.attr(name) = type;
  return type;
}
/// An instance of a result_type, typed for the stub as a tuple of the values' types.
template <class... Ts>
Tuple<Ts...> named(const nb::object& type, Ts... values) {
  nb::object r = type(nb::cast(std::move(values))...);
  return nb::steal<Tuple<Ts...>>(r.release());
}
/// A tensor argument that may be None, as the C++ API's undefined Tensor.
inline Tensor undefined_if_none(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }
/// None for an undefined tensor (a gradient the call did not compute).
inline std::optional<Tensor> none_if_undefined(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

void bind_errors(nb::module_& m);
void bind_types(nb::module_& m);
void bind_tensor(nb::module_& m, nb::class_<Tensor>& t);
/// A generator state from Python: a (seed, offset) pair, as Generator.get_state() returns;
/// InvalidArgument naming `what` otherwise.
inline random::RngState state_from(nb::handle state, const char* what = "set_state") {
  FERRITE_CHECK(PySequence_Check(state.ptr()) && nb::len(state) == 2, InvalidArgument, what,
                ": a state is a (seed, offset) pair as get_state returns");
  return random::RngState{nb::cast<std::uint64_t>(state[0]), nb::cast<std::uint64_t>(state[1])};
}

void bind_factories(nb::module_& m);
void bind_elementwise(nb::module_& m, nb::class_<Tensor>& t);
void bind_reduction(nb::module_& m, nb::class_<Tensor>& t);
void bind_shape(nb::module_& m, nb::class_<Tensor>& t);
void bind_matmul(nb::module_& m, nb::class_<Tensor>& t);
void bind_dlpack(nb::module_& m, nb::class_<Tensor>& t);
void bind_cuda(nb::module_& m);
void bind_linalg(nb::module_& m);
void bind_fft(nb::module_& m);
void bind_sparse(nb::module_& m, nb::class_<Tensor>& t);
void bind_nn(nb::module_& m);
void bind_nn_conv(nb::module_& m);
void bind_random(nb::module_& m, nb::class_<Tensor>& t);
void bind_optim(nb::module_& m);

}  // namespace ferrite::py

namespace nanobind::detail {

/// Python bool -> Bool scalar, int -> Int (exact), float -> Float; with implicit conversion
/// also NumPy scalars and anything with __index__ or __float__.
template <>
struct type_caster<ferrite::Scalar> {
  using Value = ferrite::Scalar;
  static constexpr auto Name = const_name("bool | int | float");
  template <typename T_>
  using Cast = movable_cast_t<T_>;
  template <typename T_>
  static constexpr bool can_cast() { return true; }
  explicit operator Value*() { return &value; }
  explicit operator Value&() { return value; }
  explicit operator Value&&() { return (Value&&)value; }
  Value value{0.0};

  bool from_python(handle src, uint8_t flags, cleanup_list*) noexcept {
    PyObject* o = src.ptr();
    if (PyBool_Check(o)) {
      value = ferrite::Scalar(o == Py_True);
      return true;
    }
    if (PyLong_Check(o)) {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow != 0) {  // beyond int64: kept as a float, which integer dtypes refuse
        const double d = PyLong_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred()) {
          PyErr_Clear();
          return false;
        }
        value = ferrite::Scalar(d);
      } else {
        value = ferrite::Scalar(static_cast<std::int64_t>(v));
      }
      return true;
    }
    if (PyFloat_Check(o)) {
      value = ferrite::Scalar(PyFloat_AS_DOUBLE(o));
      return true;
    }
    if (!(flags & (uint8_t)cast_flags::convert)) return false;
    if (PyComplex_Check(o)) return false;
    PyTypeObject* tp = Py_TYPE(o);
    if (tp->tp_as_number && tp->tp_as_number->nb_index) {
      PyObject* idx = PyNumber_Index(o);
      if (!idx) {
        PyErr_Clear();
        return false;
      }
      const long long v = PyLong_AsLongLong(idx);
      Py_DECREF(idx);
      if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      // NumPy's bool_ has __index__ too; keep it a Bool.
      value = std::string_view(tp->tp_name) == "numpy.bool" || std::string_view(tp->tp_name) == "numpy.bool_"
                  ? ferrite::Scalar(v != 0)
                  : ferrite::Scalar(static_cast<std::int64_t>(v));
      return true;
    }
    if (tp->tp_as_number && tp->tp_as_number->nb_float) {
      const double d = PyFloat_AsDouble(o);
      if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      value = ferrite::Scalar(d);
      return true;
    }
    return false;
  }
  static handle from_cpp(const ferrite::Scalar& s, rv_policy, cleanup_list*) noexcept {
    switch (s.kind()) {
      case ferrite::Scalar::Kind::Bool: return PyBool_FromLong(s.to_int64() != 0);
      case ferrite::Scalar::Kind::Int: return PyLong_FromLongLong(s.to_int64());
      default: return PyFloat_FromDouble(s.to_double());
    }
  }
};

/// ferrite.float32 (or any ferrite.dtype), or a name: "float32", "bfloat16", "int64", ... and
/// ferrite's own "F32", "BF16", ...; also NumPy and PyTorch dtypes through their names.
template <>
struct type_caster<ferrite::DType> {
  NB_TYPE_CASTER(ferrite::DType, const_name("dtype"))
  bool from_python(handle src, uint8_t flags, cleanup_list*) noexcept;
  static handle from_cpp(ferrite::DType d, rv_policy, cleanup_list*) noexcept {
    return ferrite::py::dtype_object(d).release();
  }
};

/// "cpu", "cuda", "cuda:1", a ferrite.device, or an object with .type and .index
/// (torch.device).
template <>
struct type_caster<ferrite::Device> {
  NB_TYPE_CASTER(ferrite::Device, const_name("device | str"))
  bool from_python(handle src, uint8_t flags, cleanup_list*) noexcept;
  static handle from_cpp(ferrite::Device d, rv_policy, cleanup_list*) noexcept;
};

}  // namespace nanobind::detail
