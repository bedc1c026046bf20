// Conformance entries of the comparisons (eq/ne/lt/le/gt/ge -> Bool), where, masked_fill
// and has_inf_nan, with references on the host values and bytes.
#include <cmath>
#include <cstring>
#include <limits>

#include "conformance/elementwise_testing.hpp"

namespace ferrite::conformance {
namespace {

const std::vector<DType> kCompareDTypes = {DType::F32, DType::F64, DType::F16, DType::BF16,
                                           DType::I32, DType::I64, DType::Bool};
const std::vector<DType> kEveryDType(std::begin(kAllDTypes), std::end(kAllDTypes));

// ---- compare ----

using Compare = bool (*)(long double, long double);

Entry compare_entry(const std::string& name, Tensor (*fn)(const Tensor&, const Tensor&), Compare cmp) {
  Entry e;
  e.op = name;
  e.dtypes = kCompareDTypes;
  e.cases = [](DType dtype, Rng& rng) {
    auto cases = elementwise::binary_cases(dtype, rng);
    // Equal values are what separates lt from le: compare a tensor with a copy of itself
    // whose every other element is replaced.
    const Tensor a = random({1001}, dtype, rng);
    Tensor b = random({1001}, dtype, rng);
    auto mix = reference::values(a), other = reference::values(b);
    for (std::size_t i = 0; i < mix.size(); i += 2) mix[i] = other[i];
    cases.push_back({"half equal", {a, reference::from_values(mix, {1001}, dtype)}});
    return cases;
  };
  e.run = [fn](const std::vector<Tensor>& in) { return fn(in[0], in[1]); };
  e.reference = [cmp](const std::vector<Tensor>& in) {
    // long double compares as IEEE: every comparison with NaN is false except !=.
    return elementwise::binary_reference(in[0], in[1], [cmp](long double a, long double b) -> long double {
      return cmp(a, b) ? 1 : 0;
    }, DType::Bool);
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [name, fn](DType d) {
    auto errors = elementwise::binary_errors(name, fn, d, DType::C64);
    return errors;
  };
  return e;
}

FERRITE_CONFORMANCE(compare_entry("eq", eq, [](long double a, long double b) { return a == b; }));
FERRITE_CONFORMANCE(compare_entry("ne", ne, [](long double a, long double b) { return a != b; }));
FERRITE_CONFORMANCE(compare_entry("lt", lt, [](long double a, long double b) { return a < b; }));
FERRITE_CONFORMANCE(compare_entry("le", le, [](long double a, long double b) { return a <= b; }));
FERRITE_CONFORMANCE(compare_entry("gt", gt, [](long double a, long double b) { return a > b; }));
FERRITE_CONFORMANCE(compare_entry("ge", ge, [](long double a, long double b) { return a >= b; }));

// ---- where / masked_fill: byte references ----

/// out = cond ? x : y over the broadcast of the three, element bytes copied.
Tensor where_reference(const Tensor& cond, const Tensor& x, const Tensor& y) {
  const Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), x.shape()), y.shape());
  const auto c = cond.to_bytes(), xb = x.to_bytes(), yb = y.to_bytes();
  const std::size_t size = x.element_size();
  std::vector<std::uint8_t> out(static_cast<std::size_t>(shape_numel(shape)) * size);
  for (std::int64_t i = 0; i < shape_numel(shape); ++i) {
    const bool take_x = c[static_cast<std::size_t>(reference::broadcast_source(i, shape, cond.shape()))] != 0;
    const auto& src = take_x ? xb : yb;
    const std::int64_t j = reference::broadcast_source(i, shape, take_x ? x.shape() : y.shape());
    std::memcpy(out.data() + static_cast<std::size_t>(i) * size, src.data() + static_cast<std::size_t>(j) * size, size);
  }
  return Tensor::from_bytes(out.data(), out.size(), x.dtype(), shape);
}

Entry where_entry() {
  Entry e;
  e.op = "where";
  e.dtypes = kEveryDType;
  e.cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    const std::vector<std::array<Shape, 3>> shapes = {
        {Shape{}, Shape{}, Shape{}},
        {Shape{100003}, Shape{100003}, Shape{100003}},
        {Shape{0}, Shape{0}, Shape{0}},
        {Shape{33, 64}, Shape{64}, Shape{33, 64}},       // x a row
        {Shape{5, 1, 7}, Shape{5, 3, 7}, Shape{}},       // a size-1 dim in the middle, y rank 0
        {Shape{2, 1, 3}, Shape{1, 4, 1}, Shape{3}},      // all three broadcast
        {Shape{7}, Shape{}, Shape{7}},                   // masked_fill's shape
    };
    for (const auto& s : shapes)
      cases.push_back({shape_str(s[0]) + ", " + shape_str(s[1]) + ", " + shape_str(s[2]),
                       {random(s[0], DType::Bool, rng), random(s[1], dtype, rng), random(s[2], dtype, rng)}});
    if (is_floating(dtype) || is_complex(dtype) || is_integral(dtype))
      cases.push_back({"extremes", {random({513}, DType::Bool, rng), extremes(dtype, 513, rng), extremes(dtype, 513, rng)}});
    return cases;
  };
  e.run = [](const std::vector<Tensor>& in) { return where(in[0], in[1], in[2]); };
  e.reference = [](const std::vector<Tensor>& in) { return where_reference(in[0], in[1], in[2]); };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [](DType d) {
    const DType other = d == DType::F32 ? DType::F64 : DType::F32;
    return std::vector<ErrorCase>{
        {"cond not Bool", [=](Device dev) { where(zeros({3}, DType::I32, dev), zeros({3}, d, dev), zeros({3}, d, dev)); },
         ErrorKind::DTypeMismatch, "where: cond is [3] I32"},
        {"x and y dtypes differ",
         [=](Device dev) { where(zeros({3}, DType::Bool, dev), zeros({3}, d, dev), zeros({3}, other, dev)); },
         ErrorKind::DTypeMismatch, "where: operand dtypes differ"},
        {"no broadcast",
         [=](Device dev) { where(zeros({3}, DType::Bool, dev), zeros({4}, d, dev), zeros({4}, d, dev)); },
         ErrorKind::ShapeMismatch, "where: shapes [3] and [4] do not broadcast"},
    };
  };
  return e;
}
FERRITE_CONFORMANCE(where_entry());

/// The fill value of a case: Case::ints[0] for integer dtypes (exact int64), else reals[0].
Scalar fill_value(const Case& c) {
  if (is_integral(c.inputs[0].dtype())) return Scalar(c.ints[0]);
  return Scalar(c.reals[0]);
}

Entry masked_fill_entry() {
  Entry e;
  e.op = "masked_fill";
  e.dtypes = kEveryDType;
  e.cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    const std::vector<std::pair<Shape, Shape>> shapes = {
        {{}, {}}, {{100003}, {100003}}, {{0}, {0}}, {{33, 64}, {64}}, {{33, 64}, {33, 1}},
        {{5, 3, 7}, {5, 1, 7}}, {{2, 3, 5}, {}}, {{4, 0}, {1}}};
    // The largest integers the dtype holds, exactly (a value outside it is an error, below).
    const std::int64_t big = dtype == DType::I32 ? std::numeric_limits<std::int32_t>::max() - 5
                                                 : std::numeric_limits<std::int64_t>::max() - 5;
    for (const auto& [xs, ms] : shapes)
      cases.push_back({shape_str(xs) + " mask " + shape_str(ms), {random(xs, dtype, rng), random(ms, DType::Bool, rng)},
                       {big}, {-2.5}});
    cases.push_back({"NaN value", {random({9}, dtype, rng), random({9}, DType::Bool, rng)}, {-7},
                     {std::numeric_limits<double>::quiet_NaN()}});
    return cases;
  };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{masked_fill(c.inputs[0], c.inputs[1], fill_value(c))}; };
  e.reference_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    // The value stored in x's dtype, by the documented Scalar rule: integers exact, other
    // dtypes rounded from the double (NaN -> true for Bool).
    Tensor value;
    if (x.dtype() == DType::I64) value = from_vector(std::vector<std::int64_t>{c.ints[0]}, {});
    else if (x.dtype() == DType::I32)
      value = from_vector(std::vector<std::int32_t>{static_cast<std::int32_t>(static_cast<std::uint32_t>(c.ints[0]))}, {});
    else value = reference::from_values({static_cast<long double>(c.reals[0])}, {}, x.dtype());
    return std::vector<Tensor>{where_reference(c.inputs[1], value, x)};
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [](DType d) {
    std::vector<ErrorCase> errors{
        {"mask not Bool", [=](Device dev) { masked_fill(zeros({3}, d, dev), zeros({3}, DType::F32, dev), 1.0); },
         ErrorKind::DTypeMismatch, "masked_fill: mask is [3] F32"},
        {"mask larger than x", [=](Device dev) { masked_fill(zeros({3}, d, dev), zeros({2, 3}, DType::Bool, dev), 1.0); },
         ErrorKind::ShapeMismatch, "masked_fill: mask [2, 3] Bool"},
        {"no broadcast", [=](Device dev) { masked_fill(zeros({3}, d, dev), zeros({4}, DType::Bool, dev), 1.0); },
         ErrorKind::ShapeMismatch, "masked_fill: shapes [3] and [4] do not broadcast"},
    };
    // PyTorch's overflow check: an integer value outside the dtype is an error, not a wrap.
    if (is_integral(d))
      errors.push_back({"value out of range",
                        [=](Device dev) {
                          masked_fill(zeros({3}, d, dev), zeros({3}, DType::Bool, dev),
                                      d == DType::I32 ? Scalar(std::int64_t(1) << 31) : Scalar(1e19));
                        },
                        ErrorKind::InvalidArgument, std::string("masked_fill: value ") +
                            (d == DType::I32 ? "2147483648" : "1e+19") + " cannot be converted to type " +
                            std::string(dtype_name(d)) + " without overflow"});
    return errors;
  };
  return e;
}
FERRITE_CONFORMANCE(masked_fill_entry());

// ---- has_inf_nan ----

Entry has_inf_nan_entry() {
  Entry e;
  e.op = "has_inf_nan";
  e.dtypes = elementwise::kFloatDTypes;
  e.cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (const Shape& s : unary_shapes()) cases.push_back({shape_str(s) + " finite", {random(s, dtype, rng)}});
    cases.push_back({"extremes", {extremes(dtype, 1000, rng)}});
    // One special value at the first element, in the vector body, and in the ragged tail.
    const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
    for (std::int64_t at : {std::int64_t(0), std::int64_t(50000), std::int64_t(100002)})
      for (double special : {inf, -inf, nan}) {
        auto v = random({100003}, DType::F64, rng).to_vector<double>();
        v[static_cast<std::size_t>(at)] = special;
        cases.push_back({"special at " + std::to_string(at), {from_vector(v, {100003}).to(dtype)}});
      }
    return cases;
  };
  // The host bool as a rank-0 Bool tensor on the input's device, so the registry can
  // compare it like any other output.
  e.run = [](const std::vector<Tensor>& in) {
    return from_vector(std::vector<bool>{has_inf_nan(in[0])}, {}).to(in[0].device());
  };
  e.reference = [](const std::vector<Tensor>& in) {
    bool found = false;
    for (long double v : reference::values(in[0])) found = found || std::isnan(v) || std::isinf(v);
    return from_vector(std::vector<bool>{found}, {});
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [](DType) {
    return std::vector<ErrorCase>{{"I32 input", [](Device d) { has_inf_nan(zeros({3}, DType::I32, d)); },
                                   ErrorKind::Unsupported, "has_inf_nan: dtype I32 is not supported"}};
  };
  return e;
}
FERRITE_CONFORMANCE(has_inf_nan_entry());

}  // namespace
}  // namespace ferrite::conformance
