// Conformance entries for casts (every dtype to every dtype), fills, arange, clone and
// host <-> device round trips.
#include <cmath>
#include <cstring>

#include "conformance/conformance.hpp"
#include "conformance/reference.hpp"

namespace ferrite::conformance {
namespace {

const std::vector<DType> kEveryDType(std::begin(kAllDTypes), std::end(kAllDTypes));

std::vector<Case> cast_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  for (const Shape& s : unary_shapes()) cases.push_back({shape_str(s), {random(s, dtype, rng, -300, 300)}});
  cases.push_back({"extremes", {extremes(dtype, 2001, rng)}});
  return cases;
}

// Independent reference of x.to(target): complex sources are compared part by part.
Tensor cast_reference(const Tensor& x, DType target) {
  if (is_complex(x.dtype()) && is_complex(target)) {
    const std::size_t n = static_cast<std::size_t>(x.numel());
    const Tensor wide = x.to(DType::C128);  // exact for C64 sources
    std::vector<double> parts(2 * n);
    if (n) std::memcpy(parts.data(), wide.data_ptr(), 16 * n);
    std::vector<std::uint8_t> bytes(n * dtype_size(target));
    for (std::size_t i = 0; i < 2 * n; ++i) {
      if (target == DType::C64) {
        const float f = static_cast<float>(parts[i]);
        std::memcpy(bytes.data() + 4 * i, &f, 4);
      } else {
        std::memcpy(bytes.data() + 8 * i, &parts[i], 8);
      }
    }
    return Tensor::from_bytes(bytes.data(), bytes.size(), target, x.shape());
  }
  if (is_complex(x.dtype()) && target == DType::Bool) {
    const Tensor wide = x.to(DType::C128);
    std::vector<double> parts(2 * static_cast<std::size_t>(x.numel()));
    if (!parts.empty()) std::memcpy(parts.data(), wide.data_ptr(), parts.size() * 8);
    std::vector<bool> out(static_cast<std::size_t>(x.numel()));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = parts[2 * i] != 0 || parts[2 * i + 1] != 0;
    return from_vector(out, x.shape());
  }
  std::vector<long double> v = reference::values(x);
  if (x.dtype() == DType::I64 && target == DType::I32)  // integer narrowing keeps the low 32 bits
    for (auto& e : v) e = static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::int64_t>(e)));
  return reference::from_values(v, x.shape(), target);
}

Entry cast_entry(DType target) {
  Entry e;
  e.op = "to_" + std::string(dtype_name(target));
  e.dtypes = kEveryDType;
  e.cases = cast_cases;
  e.run = [target](const std::vector<Tensor>& in) { return in[0].to(target); };
  e.reference = [target](const std::vector<Tensor>& in) { return cast_reference(in[0], target); };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  return e;
}

FERRITE_CONFORMANCE(cast_entry(DType::F32));
FERRITE_CONFORMANCE(cast_entry(DType::F64));
FERRITE_CONFORMANCE(cast_entry(DType::F16));
FERRITE_CONFORMANCE(cast_entry(DType::BF16));
FERRITE_CONFORMANCE(cast_entry(DType::I32));
FERRITE_CONFORMANCE(cast_entry(DType::I64));
FERRITE_CONFORMANCE(cast_entry(DType::Bool));
FERRITE_CONFORMANCE(cast_entry(DType::C64));
FERRITE_CONFORMANCE(cast_entry(DType::C128));

// Runs the op on the device of its first input: `in[0]` only carries the device here.
Entry full_entry() {
  Entry e;
  e.op = "full";
  e.dtypes = kEveryDType;
  e.cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (const Shape& s : {Shape{}, Shape{0}, Shape{5}, Shape{1001, 3}}) cases.push_back({shape_str(s), {random(s, dtype, rng)}});
    return cases;
  };
  e.run = [](const std::vector<Tensor>& in) { return full(in[0].shape(), -2.5, in[0].dtype(), in[0].device()); };
  e.reference = [](const std::vector<Tensor>& in) {
    return reference::from_values(std::vector<long double>(static_cast<std::size_t>(in[0].numel()), -2.5L),
                                  in[0].shape(), in[0].dtype());
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [](DType dtype) {
    return std::vector<ErrorCase>{{"negative dim", [dtype](Device d) { full({2, -1}, 1, dtype, d); },
                                   ErrorKind::InvalidArgument, "shape [2, -1] has a negative dim"}};
  };
  return e;
}
FERRITE_CONFORMANCE(full_entry());

Entry arange_entry() {
  Entry e;
  e.op = "arange";
  e.dtypes = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64};
  e.cases = [](DType dtype, Rng&) {
    return std::vector<Case>{{"1001", {zeros({1001}, dtype)}}, {"0", {zeros({0}, dtype)}}};
  };
  e.run = [](const std::vector<Tensor>& in) {
    return arange(-3.0, -3.0 + 0.5 * static_cast<double>(in[0].numel()), 0.5, in[0].dtype(), in[0].device());
  };
  e.reference = [](const std::vector<Tensor>& in) {
    std::vector<long double> v(static_cast<std::size_t>(in[0].numel()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = -3.0L + 0.5L * static_cast<long double>(i);
    return reference::from_values(v, in[0].shape(), in[0].dtype());
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [](DType dtype) {
    return std::vector<ErrorCase>{{"zero step", [dtype](Device d) { arange(0.0, 1.0, 0.0, dtype, d); },
                                   ErrorKind::InvalidArgument, "arange: start 0, end 1 and step 0"}};
  };
  return e;
}
FERRITE_CONFORMANCE(arange_entry());

// clone on the backend and a host round trip: bit-exact for every dtype.
Entry clone_entry() {
  Entry e;
  e.op = "clone";
  e.dtypes = kEveryDType;
  e.cases = cast_cases;
  e.run = [](const std::vector<Tensor>& in) { return in[0].clone(); };
  e.reference = [](const std::vector<Tensor>& in) {
    const auto bytes = in[0].to_bytes();
    return Tensor::from_bytes(bytes.data(), bytes.size(), in[0].dtype(), in[0].shape());
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [](DType dtype) {
    return std::vector<ErrorCase>{
        // Another real host type converts (issue 12); a complex tensor read as a real type
        // would lose its imaginary part and is refused, on every device.
        {"complex read as real",
         [dtype](Device d) {
           const Tensor t = zeros({2}, is_complex(dtype) ? dtype : DType::C64, d);
           (void)t.to_vector<float>();
         },
         ErrorKind::DTypeMismatch, "to_vector: asked for"},
    };
  };
  return e;
}
FERRITE_CONFORMANCE(clone_entry());

}  // namespace
}  // namespace ferrite::conformance
