// Elementwise ops under PyTorch's names: ferrite.add(x, y), x.add(y), ferrite.exp(x), x.exp(),
// ... Binary ops take a tensor or a Python number on either side (the number takes the
// tensor's dtype, as ferrite's operators do). ferrite/elementwise.hpp has the rules.
#include "common.hpp"

namespace ferrite::py {

namespace {

using OD = std::optional<DType>;

// name(a, b) for Tensor/Tensor, Tensor/number and number/Tensor; a method for the first two.
template <class F>
void binary(nb::module_& m, nb::class_<Tensor>& t, const char* name, F f, const char* doc = "") {
  auto tt = [f](const Tensor& a, const Tensor& b) { return f(a, b); };
  auto ts = [f, name](const Tensor& a, Scalar b) { return f(a, scalar_tensor_like(name, b, a)); };
  auto st = [f, name](Scalar a, const Tensor& b) { return f(scalar_tensor_like(name, a, b), b); };
  m.def(name, tt, nb::arg("input"), nb::arg("other"), doc);
  m.def(name, ts, nb::arg("input"), nb::arg("other"));
  m.def(name, st, nb::arg("input"), nb::arg("other"));
  t.def(name, tt, nb::arg("other"), doc);
  t.def(name, ts, nb::arg("other"));
}

// The four arithmetic ops also take dtype= for F16/BF16 inputs with an F32 result.
template <class F, class G>
void arithmetic(nb::module_& m, nb::class_<Tensor>& t, const char* name, F f, G mixed) {
  auto tt = [f, mixed](const Tensor& a, const Tensor& b, OD dtype) { return dtype ? mixed(a, b, *dtype) : f(a, b); };
  auto ts = [f, name](const Tensor& a, Scalar b) { return f(a, scalar_tensor_like(name, b, a)); };
  auto st = [f, name](Scalar a, const Tensor& b) { return f(scalar_tensor_like(name, a, b), b); };
  m.def(name, tt, nb::arg("input"), nb::arg("other"), nb::arg("dtype") = nb::none(),
        "dtype=ferrite.float32 with F16/BF16 operands gives an F32 result computed in float and rounded once.");
  m.def(name, ts, nb::arg("input"), nb::arg("other"));
  m.def(name, st, nb::arg("input"), nb::arg("other"));
  t.def(name, tt, nb::arg("other"), nb::arg("dtype") = nb::none());
  t.def(name, ts, nb::arg("other"));
}

template <class F>
void unary(nb::module_& m, nb::class_<Tensor>& t, const char* name, F f, const char* doc = "") {
  m.def(name, f, nb::arg("input"), doc);
  t.def(name, f, doc);
}

GeluApproximation gelu_mode(const std::string& approximate) {
  if (approximate == "none") return GeluApproximation::None;
  if (approximate == "tanh") return GeluApproximation::Tanh;
  FERRITE_THROW(InvalidArgument, "gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
}

}  // namespace

void bind_elementwise(nb::module_& m, nb::class_<Tensor>& t) {
  arithmetic(m, t, "add", [](const Tensor& a, const Tensor& b) { return add(a, b); },
             [](const Tensor& a, const Tensor& b, DType d) { return add(a, b, d); });
  arithmetic(m, t, "sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); },
             [](const Tensor& a, const Tensor& b, DType d) { return sub(a, b, d); });
  arithmetic(m, t, "mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); },
             [](const Tensor& a, const Tensor& b, DType d) { return mul(a, b, d); });
  arithmetic(m, t, "div", [](const Tensor& a, const Tensor& b) { return div(a, b); },
             [](const Tensor& a, const Tensor& b, DType d) { return div(a, b, d); });
  // Write variants: out already has the broadcast shape, the dtype and the device.
  m.def("add_out", [](const Tensor& a, const Tensor& b, const Tensor& out) { return add_out(a, b, out); },
        nb::arg("input"), nb::arg("other"), nb::arg("out"));
  m.def("sub_out", [](const Tensor& a, const Tensor& b, const Tensor& out) { return sub_out(a, b, out); },
        nb::arg("input"), nb::arg("other"), nb::arg("out"));
  m.def("mul_out", [](const Tensor& a, const Tensor& b, const Tensor& out) { return mul_out(a, b, out); },
        nb::arg("input"), nb::arg("other"), nb::arg("out"));
  m.def("div_out", [](const Tensor& a, const Tensor& b, const Tensor& out) { return div_out(a, b, out); },
        nb::arg("input"), nb::arg("other"), nb::arg("out"));
  alias(m, t, "subtract", "sub");
  alias(m, t, "multiply", "mul");
  alias(m, t, "divide", "div");
  binary(m, t, "maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }, "NaN wins.");
  binary(m, t, "minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }, "NaN wins.");
  binary(m, t, "floor_divide", [](const Tensor& a, const Tensor& b) { return floor_divide(a, b); },
         "Rounds toward -inf; x // 0 = 0 for integers.");
  binary(m, t, "remainder", [](const Tensor& a, const Tensor& b) { return remainder(a, b); },
         "Takes the sign of the divisor; x % 0 = 0.");
  binary(m, t, "bitwise_and", [](const Tensor& a, const Tensor& b) { return bitwise_and(a, b); });
  binary(m, t, "bitwise_or", [](const Tensor& a, const Tensor& b) { return bitwise_or(a, b); });
  binary(m, t, "bitwise_xor", [](const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); });
  binary(m, t, "shift_left", [](const Tensor& a, const Tensor& b) { return shift_left(a, b); },
         "Counts outside [0, bits) give 0.");
  binary(m, t, "shift_right", [](const Tensor& a, const Tensor& b) { return shift_right(a, b); },
         "Arithmetic shift.");
  alias(m, t, "bitwise_left_shift", "shift_left");
  alias(m, t, "bitwise_right_shift", "shift_right");
  binary(m, t, "logical_and", [](const Tensor& a, const Tensor& b) { return logical_and(a, b); });
  binary(m, t, "logical_or", [](const Tensor& a, const Tensor& b) { return logical_or(a, b); });
  binary(m, t, "logical_xor", [](const Tensor& a, const Tensor& b) { return logical_xor(a, b); });
  binary(m, t, "eq", [](const Tensor& a, const Tensor& b) { return eq(a, b); });
  binary(m, t, "ne", [](const Tensor& a, const Tensor& b) { return ne(a, b); });
  binary(m, t, "lt", [](const Tensor& a, const Tensor& b) { return lt(a, b); });
  binary(m, t, "le", [](const Tensor& a, const Tensor& b) { return le(a, b); });
  binary(m, t, "gt", [](const Tensor& a, const Tensor& b) { return gt(a, b); });
  binary(m, t, "ge", [](const Tensor& a, const Tensor& b) { return ge(a, b); });

  unary(m, t, "bitwise_not", [](const Tensor& x) { return bitwise_not(x); });
  unary(m, t, "logical_not", [](const Tensor& x) { return logical_not(x); });
  unary(m, t, "neg", [](const Tensor& x) { return neg(x); });
  alias(m, t, "negative", "neg");
  unary(m, t, "abs", [](const Tensor& x) { return abs(x); }, "|MIN| wraps to MIN for integers.");
  unary(m, t, "exp", [](const Tensor& x) { return exp(x); });
  unary(m, t, "log", [](const Tensor& x) { return log(x); });
  unary(m, t, "sqrt", [](const Tensor& x) { return sqrt(x); });
  unary(m, t, "sigmoid", [](const Tensor& x) { return sigmoid(x); });
  unary(m, t, "tanh", [](const Tensor& x) { return tanh(x); });
  unary(m, t, "silu", [](const Tensor& x) { return silu(x); });
  unary(m, t, "mish", [](const Tensor& x) { return mish(x); });
  auto relu_f = [](const Tensor& x, OD dtype) { return dtype ? relu(x, *dtype) : relu(x); };
  m.def("relu", relu_f, nb::arg("input"), nb::arg("dtype") = nb::none());
  t.def("relu", relu_f, nb::arg("dtype") = nb::none());
  auto sigmoid_f = [](const Tensor& x, OD dtype) { return dtype ? sigmoid(x, *dtype) : sigmoid(x); };
  m.def("sigmoid", sigmoid_f, nb::arg("input"), nb::arg("dtype"));
  auto pow_f = [](const Tensor& x, double e) { return pow(x, e); };
  m.def("pow", pow_f, nb::arg("input"), nb::arg("exponent"), "x ** exponent for a number exponent.");
  t.def("pow", pow_f, nb::arg("exponent"));
  auto scale_f = [](const Tensor& x, double f) { return scale(x, f); };
  m.def("scale", scale_f, nb::arg("input"), nb::arg("factor"));
  t.def("scale", scale_f, nb::arg("factor"));
  auto clamp_f = [](const Tensor& x, std::optional<double> lo, std::optional<double> hi) { return clamp(x, lo, hi); };
  m.def("clamp", clamp_f, nb::arg("input"), nb::arg("min") = nb::none(), nb::arg("max") = nb::none(),
        "min(max(x, min), max); an absent bound does not clamp.");
  t.def("clamp", clamp_f, nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  alias(m, t, "clip", "clamp");
  auto gelu_f = [](const Tensor& x, const std::string& approximate) { return gelu(x, gelu_mode(approximate)); };
  m.def("gelu", gelu_f, nb::arg("input"), nb::arg("approximate") = "none");
  t.def("gelu", gelu_f, nb::arg("approximate") = "none");
  auto elu_f = [](const Tensor& x, double alpha) { return elu(x, alpha); };
  m.def("elu", elu_f, nb::arg("input"), nb::arg("alpha") = 1.0);
  t.def("elu", elu_f, nb::arg("alpha") = 1.0);

  // Selection.
  m.def("where", [](const Tensor& c, const Tensor& x, const Tensor& y) { return where(c, x, y); },
        nb::arg("condition"), nb::arg("input"), nb::arg("other"));
  m.def("where", [](const Tensor& c, const Tensor& x, Scalar y) { return where(c, x, scalar_tensor_like("where", y, x)); },
        nb::arg("condition"), nb::arg("input"), nb::arg("other"));
  m.def("where", [](const Tensor& c, Scalar x, const Tensor& y) { return where(c, scalar_tensor_like("where", x, y), y); },
        nb::arg("condition"), nb::arg("input"), nb::arg("other"));
  t.def("where", [](const Tensor& x, const Tensor& c, const Tensor& y) { return where(c, x, y); },
        nb::arg("condition"), nb::arg("other"));
  auto masked_fill_f = [](const Tensor& x, const Tensor& mask, Scalar v) { return masked_fill(x, mask, v); };
  m.def("masked_fill", masked_fill_f, nb::arg("input"), nb::arg("mask"), nb::arg("value"));
  t.def("masked_fill", masked_fill_f, nb::arg("mask"), nb::arg("value"));
  m.def("has_inf_nan", &has_inf_nan, nb::arg("input"), "Whether a floating tensor holds any Inf or NaN.");
  m.def("broadcast_shapes", [](nb::args shapes) {
        Shape out;
        for (nb::handle s : shapes) out = broadcast_shapes(out, int_list(s, "broadcast_shapes"), "broadcast_shapes");
        return nb::tuple(nb::cast(out));
      }, nb::arg("shapes"));

  // Backward passes (ferrite's names): the gradient of the input from the output's.
  m.def("relu_backward", &relu_backward, nb::arg("grad"), nb::arg("input"));
  m.def("abs_backward", &abs_backward, nb::arg("grad"), nb::arg("input"));
  m.def("clamp_backward", &clamp_backward, nb::arg("grad"), nb::arg("input"), nb::arg("min") = nb::none(),
        nb::arg("max") = nb::none());
  m.def("sigmoid_backward", &sigmoid_backward, nb::arg("grad"), nb::arg("output"));
  m.def("tanh_backward", &tanh_backward, nb::arg("grad"), nb::arg("output"));
  m.def("gelu_backward", [](const Tensor& g, const Tensor& x, const std::string& a) {
        return gelu_backward(g, x, gelu_mode(a));
      }, nb::arg("grad"), nb::arg("input"), nb::arg("approximate") = "none");
  m.def("silu_backward", &silu_backward, nb::arg("grad"), nb::arg("input"));
  m.def("elu_backward", &elu_backward, nb::arg("grad"), nb::arg("input"), nb::arg("alpha") = 1.0);
  m.def("mish_backward", &mish_backward, nb::arg("grad"), nb::arg("input"));
}

}  // namespace ferrite::py
