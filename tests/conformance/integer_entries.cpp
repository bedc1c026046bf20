// Conformance entries of the integer and Bool ops: floor_divide, remainder, bitwise
// and/or/xor/not, shift_left/right (I32, I64; bitwise also Bool) and logical
// and/or/xor/not (Bool), bit-exact against __int128 references of the documented rules.
#include <limits>

#include "conformance/elementwise_testing.hpp"

namespace ferrite::conformance {
namespace {

using I128 = __int128;

const std::vector<DType> kIntegerDTypes = {DType::I32, DType::I64};
const std::vector<DType> kIntegerAndBool = {DType::I32, DType::I64, DType::Bool};

int bits_of(DType d) { return d == DType::I32 ? 32 : 64; }

// Two's-complement wrap to the dtype's width.
long double wrap(DType d, I128 v) {
  if (d == DType::I32) return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(v));
}

// Python's floor division and modulo (with the documented x // 0 = 0, x % 0 = 0).
I128 python_floor_div(I128 a, I128 b) {
  I128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
long double ref_floor_divide(DType d, long double a, long double b) {
  if (b == 0) return 0;
  return wrap(d, python_floor_div(static_cast<I128>(a), static_cast<I128>(b)));
}
long double ref_remainder(DType d, long double a, long double b) {
  if (b == 0) return 0;
  const I128 ia = static_cast<I128>(a), ib = static_cast<I128>(b);
  return wrap(d, ia - python_floor_div(ia, ib) * ib);
}
long double ref_shift_left(DType d, long double a, long double b) {
  if (b < 0 || b >= bits_of(d)) return 0;
  const auto u = static_cast<unsigned __int128>(static_cast<I128>(a)) << static_cast<int>(b);
  return wrap(d, static_cast<I128>(u));
}
long double ref_shift_right(DType d, long double a, long double b) {
  if (b < 0 || b >= bits_of(d)) return a < 0 ? -1 : 0;
  // Floor of a / 2^b is the arithmetic shift.
  return static_cast<long double>(python_floor_div(static_cast<I128>(a), static_cast<I128>(1) << static_cast<int>(b)));
}
long double ref_and(DType d, long double a, long double b) {
  if (d == DType::Bool) return (a != 0) && (b != 0);
  return static_cast<long double>(static_cast<std::int64_t>(a) & static_cast<std::int64_t>(b));
}
long double ref_or(DType d, long double a, long double b) {
  if (d == DType::Bool) return (a != 0) || (b != 0);
  return static_cast<long double>(static_cast<std::int64_t>(a) | static_cast<std::int64_t>(b));
}
long double ref_xor(DType d, long double a, long double b) {
  if (d == DType::Bool) return (a != 0) != (b != 0);
  return static_cast<long double>(static_cast<std::int64_t>(a) ^ static_cast<std::int64_t>(b));
}

/// Divisors and shift counts that hit the special rules: 0, -1, 1, the limits, counts
/// outside [0, bits).
std::vector<Case> integer_cases(DType dtype, Rng& rng, bool shift) {
  std::vector<Case> cases = elementwise::binary_cases(dtype, rng);
  if (dtype == DType::Bool) return cases;
  const std::int64_t lo = dtype == DType::I32 ? std::numeric_limits<std::int32_t>::min() : std::numeric_limits<std::int64_t>::min();
  const std::int64_t hi = dtype == DType::I32 ? std::numeric_limits<std::int32_t>::max() : std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> a, b;
  const std::vector<std::int64_t> specials_a = {lo, hi, -1, 0, 1, -7, 7, 13, -13};
  const std::vector<std::int64_t> specials_b =
      shift ? std::vector<std::int64_t>{-1, 0, 1, 5, 31, 32, 33, 63, 64, 100, -64}
            : std::vector<std::int64_t>{0, -1, 1, lo, hi, 3, -3, 7, -7};
  for (auto x : specials_a)
    for (auto y : specials_b) {
      a.push_back(x);
      b.push_back(y);
    }
  cases.push_back({"specials", {from_vector(a, {static_cast<std::int64_t>(a.size())}).to(dtype),
                                from_vector(b, {static_cast<std::int64_t>(b.size())}).to(dtype)}});
  if (shift) {  // random values with random counts in [-4, 70)
    std::uniform_int_distribution<std::int64_t> count(-4, 69);
    std::vector<std::int64_t> counts(1001);
    for (auto& c : counts) c = count(rng);
    cases.push_back({"random counts", {random({1001}, dtype, rng, -1e6, 1e6), from_vector(counts, {1001}).to(dtype)}});
  }
  return cases;
}

using Exact = long double (*)(DType, long double, long double);

Entry integer_entry(const std::string& name, Tensor (*fn)(const Tensor&, const Tensor&), Exact ref,
                    std::vector<DType> dtypes, bool shift = false) {
  Entry e;
  e.op = name;
  e.dtypes = std::move(dtypes);
  e.cases = [shift](DType d, Rng& rng) { return integer_cases(d, rng, shift); };
  e.run = [fn](const std::vector<Tensor>& in) { return fn(in[0], in[1]); };
  e.reference = [ref](const std::vector<Tensor>& in) {
    const DType d = in[0].dtype();
    return elementwise::binary_reference(in[0], in[1], [ref, d](long double a, long double b) { return ref(d, a, b); }, d);
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [name, fn](DType d) { return elementwise::binary_errors(name, fn, d, DType::F32); };
  return e;
}

FERRITE_CONFORMANCE(integer_entry("floor_divide", floor_divide, ref_floor_divide, kIntegerDTypes));
FERRITE_CONFORMANCE(integer_entry("remainder", remainder, ref_remainder, kIntegerDTypes));
FERRITE_CONFORMANCE(integer_entry("shift_left", shift_left, ref_shift_left, kIntegerDTypes, true));
FERRITE_CONFORMANCE(integer_entry("shift_right", shift_right, ref_shift_right, kIntegerDTypes, true));
FERRITE_CONFORMANCE(integer_entry("bitwise_and", bitwise_and, ref_and, kIntegerAndBool));
FERRITE_CONFORMANCE(integer_entry("bitwise_or", bitwise_or, ref_or, kIntegerAndBool));
FERRITE_CONFORMANCE(integer_entry("bitwise_xor", bitwise_xor, ref_xor, kIntegerAndBool));
FERRITE_CONFORMANCE(integer_entry("logical_and", logical_and, ref_and, {DType::Bool}));
FERRITE_CONFORMANCE(integer_entry("logical_or", logical_or, ref_or, {DType::Bool}));
FERRITE_CONFORMANCE(integer_entry("logical_xor", logical_xor, ref_xor, {DType::Bool}));

Entry not_entry(const std::string& name, Tensor (*fn)(const Tensor&), std::vector<DType> dtypes) {
  Entry e;
  e.op = name;
  e.dtypes = std::move(dtypes);
  e.cases = [](DType d, Rng& rng) { return elementwise::unary_cases(d, rng); };
  e.run = [fn](const std::vector<Tensor>& in) { return fn(in[0]); };
  e.reference = [](const std::vector<Tensor>& in) {
    const DType d = in[0].dtype();
    return elementwise::unary_reference(in[0], [d](long double x) -> long double {
      if (d == DType::Bool) return x == 0;
      return static_cast<long double>(~static_cast<std::int64_t>(x));  // -x - 1, in range
    });
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [name, fn](DType) {
    return std::vector<ErrorCase>{{"F32 input", [fn](Device d) { fn(zeros({4}, DType::F32, d)); },
                                   ErrorKind::Unsupported, name + ": dtype F32 is not supported on"}};
  };
  return e;
}

FERRITE_CONFORMANCE(not_entry("bitwise_not", bitwise_not, kIntegerAndBool));
FERRITE_CONFORMANCE(not_entry("logical_not", logical_not, {DType::Bool}));

}  // namespace
}  // namespace ferrite::conformance
