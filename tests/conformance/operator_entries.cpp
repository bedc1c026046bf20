// Conformance entries of the C++ operators with a Scalar operand (ferrite/operators.hpp):
// the scalar becomes a rank-0 tensor of the tensor's dtype on the tensor's device, so the
// result must equal the named op against that value, on every backend.
#include "conformance/elementwise_testing.hpp"
#include "ferrite/operators.hpp"

namespace ferrite::conformance {
namespace {

using elementwise::binary_reference;
using elementwise::kRealDTypes;

const std::vector<DType> kIntegerDTypes = {DType::I32, DType::I64};
const std::vector<DType> kBitwiseDTypes = {DType::I32, DType::I64, DType::Bool};

long double wrap(DType d, __int128 v) {
  if (d == DType::I32) return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(v));
}
__int128 i128(long double v) { return static_cast<__int128>(v); }

/// The scalar each entry uses for a dtype: exact in every dtype it meets.
using ScalarFor = Scalar (*)(DType);
/// How the operator is applied: x op s, or s op x.
using Apply = Tensor (*)(const Tensor&, Scalar);
/// The exact value of one element (x, s) for the dtype.
using Exact = long double (*)(DType, long double, long double);

Tensor scalar_value(DType dtype, Scalar s) {
  return reference::from_values({s.is_integral() ? static_cast<long double>(s.to_int64()) : s.to_double()}, {}, dtype);
}

Entry scalar_entry(const std::string& name, std::vector<DType> dtypes, ScalarFor scalar, Apply apply, Exact value_of,
                   bool compare) {
  Entry e;
  e.op = name;
  e.dtypes = std::move(dtypes);
  e.cases = [](DType dtype, Rng& rng) { return elementwise::unary_cases(dtype, rng); };
  e.run = [scalar, apply](const std::vector<Tensor>& in) { return apply(in[0], scalar(in[0].dtype())); };
  e.reference = [scalar, value_of, compare](const std::vector<Tensor>& in) {
    const DType d = in[0].dtype();
    return binary_reference(in[0], scalar_value(d, scalar(d)), [=](long double a, long double b) { return value_of(d, a, b); },
                            compare ? DType::Bool : d);
  };
  // One correctly rounded operation, as the add entry: bit-exact except F64 (long double has
  // only 64 bits of mantissa).
  e.reference_tolerance = [](DType d) { return d == DType::F64 ? Tolerance{1e-15, 1e-300} : Tolerance{}; };
  e.backend_tolerance = exact;
  e.errors = [name, apply](DType d) {
    std::vector<ErrorCase> errors;
    if (is_integral(d))
      errors.push_back({"floating scalar with an integer tensor", [=](Device dev) { apply(zeros({3}, d, dev), 1.5); },
                        ErrorKind::DTypeMismatch, name + ": floating-point scalar 1.5 with the integer tensor [3]"});
    return errors;
  };
  return e;
}

Scalar half_or_three(DType d) { return is_floating(d) ? Scalar(0.5) : Scalar(3); }
Scalar minus_three(DType) { return Scalar(-3); }
Scalar six_or_true(DType d) { return d == DType::Bool ? Scalar(true) : Scalar(6); }

FERRITE_CONFORMANCE(scalar_entry(
    "operator+", kRealDTypes, half_or_three, [](const Tensor& x, Scalar s) { return x + s; },
    [](DType d, long double a, long double b) { return is_integral(d) ? wrap(d, i128(a) + i128(b)) : a + b; }, false));
FERRITE_CONFORMANCE(scalar_entry(
    "operator-", kRealDTypes, half_or_three, [](const Tensor& x, Scalar s) { return s - x; },
    // b is the scalar (the reference's second operand); the operator puts it on the left.
    [](DType d, long double a, long double b) { return is_integral(d) ? wrap(d, i128(b) - i128(a)) : b - a; }, false));
FERRITE_CONFORMANCE(scalar_entry(
    "operator*", kRealDTypes, half_or_three, [](const Tensor& x, Scalar s) { return s * x; },
    [](DType d, long double a, long double b) { return is_integral(d) ? wrap(d, i128(a) * i128(b)) : a * b; }, false));
FERRITE_CONFORMANCE(scalar_entry(
    "operator/", elementwise::kFloatDTypes, half_or_three, [](const Tensor& x, Scalar s) { return x / s; },
    [](DType, long double a, long double b) { return a / b; }, false));
FERRITE_CONFORMANCE(scalar_entry(
    "operator<", kRealDTypes, half_or_three, [](const Tensor& x, Scalar s) { return x < s; },
    [](DType, long double a, long double b) -> long double { return a < b; }, true));
FERRITE_CONFORMANCE(scalar_entry(
    "operator%", kIntegerDTypes, minus_three, [](const Tensor& x, Scalar s) { return x % s; },
    // Python's modulo: the sign of the divisor.
    [](DType d, long double a, long double b) {
      __int128 r = i128(a) % i128(b);
      if (r != 0 && ((r < 0) != (b < 0))) r += i128(b);
      return wrap(d, r);
    },
    false));
FERRITE_CONFORMANCE(scalar_entry(
    "operator&", kBitwiseDTypes, six_or_true, [](const Tensor& x, Scalar s) { return x & s; },
    [](DType d, long double a, long double b) -> long double {
      if (d == DType::Bool) return a != 0 && b != 0;
      return static_cast<long double>(static_cast<std::int64_t>(a) & static_cast<std::int64_t>(b));
    },
    false));

}  // namespace
}  // namespace ferrite::conformance
