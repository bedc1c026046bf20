#include "conformance/reference.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace ferrite::reference {
namespace {

// Round to a binary float with `mantissa_bits` after the point, minimum normal exponent
// `min_exp`, largest finite `max_finite`; beyond it, Inf.
long double round_binary(long double x, int mantissa_bits, int min_exp, long double max_finite) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  const int e = std::max(static_cast<int>(std::floor(std::log2(std::fabs(x)))), min_exp);
  const long double ulp = std::ldexp(1.0L, e - mantissa_bits);
  long double r = std::nearbyint(x / ulp) * ulp;
  if (std::fabs(r) > max_finite) r = std::copysign(std::numeric_limits<long double>::infinity(), x);
  if (r == 0) r = std::copysign(0.0L, x);
  return r;
}

template <class I>
long double to_integer(long double x) {
  if (std::isnan(x)) return 0;
  if (x >= static_cast<long double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (x <= static_cast<long double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return std::trunc(x);
}

}  // namespace

long double round_to(DType dtype, long double x) {
  switch (dtype) {
    case DType::F64:
    case DType::C128: return static_cast<double>(x);
    case DType::F32:
    case DType::C64: return static_cast<float>(x);
    case DType::F16: return round_binary(x, 10, -14, 65504.0L);
    case DType::BF16: return round_binary(x, 7, -126, 3.38953138925153547590470800371487866880e38L);
    case DType::I32: return to_integer<std::int32_t>(x);
    case DType::I64: return to_integer<std::int64_t>(x);
    case DType::Bool: return x != 0 ? 1 : 0;  // NaN != 0 is true
  }
  return x;
}

std::vector<long double> values(const Tensor& t_in) {
  const Tensor t = t_in.to(Device::cpu());
  std::vector<long double> out(static_cast<std::size_t>(t.numel()));
  const auto bytes = t.to_bytes();
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::uint8_t* p = bytes.data() + i * t.element_size();
    switch (t.dtype()) {
      case DType::F32: { float v; std::memcpy(&v, p, 4); out[i] = v; break; }
      case DType::C64: { float v; std::memcpy(&v, p, 4); out[i] = v; break; }
      case DType::F64:
      case DType::C128: { double v; std::memcpy(&v, p, 8); out[i] = v; break; }
      case DType::F16: { std::uint16_t b; std::memcpy(&b, p, 2); out[i] = static_cast<float>(Half::from_bits(b)); break; }
      case DType::BF16: { std::uint16_t b; std::memcpy(&b, p, 2); out[i] = static_cast<float>(BFloat16::from_bits(b)); break; }
      case DType::I32: { std::int32_t v; std::memcpy(&v, p, 4); out[i] = v; break; }
      case DType::I64: { std::int64_t v; std::memcpy(&v, p, 8); out[i] = v; break; }
      case DType::Bool: out[i] = *p ? 1 : 0; break;
    }
  }
  return out;
}

Tensor from_values(const std::vector<long double>& v, const Shape& shape, DType dtype) {
  const std::size_t n = v.size();
  std::vector<std::uint8_t> bytes(n * dtype_size(dtype));
  for (std::size_t i = 0; i < n; ++i) {
    const long double r = round_to(dtype, v[i]);
    std::uint8_t* p = bytes.data() + i * dtype_size(dtype);
    switch (dtype) {
      case DType::F32: { float f = static_cast<float>(r); std::memcpy(p, &f, 4); break; }
      case DType::F64: { double d = static_cast<double>(r); std::memcpy(p, &d, 8); break; }
      // r is exactly representable, so converting through float is exact here.
      case DType::F16: { Half h(static_cast<float>(r)); std::memcpy(p, &h.bits, 2); break; }
      case DType::BF16: { BFloat16 h(static_cast<float>(r)); std::memcpy(p, &h.bits, 2); break; }
      case DType::I32: { auto x = static_cast<std::int32_t>(r); std::memcpy(p, &x, 4); break; }
      case DType::I64: { auto x = static_cast<std::int64_t>(r); std::memcpy(p, &x, 8); break; }
      case DType::Bool: *p = r != 0; break;
      case DType::C64: { float c[2] = {static_cast<float>(r), 0}; std::memcpy(p, c, 8); break; }
      case DType::C128: { double c[2] = {static_cast<double>(r), 0}; std::memcpy(p, c, 16); break; }
    }
  }
  return Tensor::from_bytes(bytes.data(), bytes.size(), dtype, shape);
}

std::int64_t broadcast_source(std::int64_t flat, const Shape& out, const Shape& in) {
  std::int64_t index = 0, stride = 1;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::size_t d = out.size() - 1 - k;
    const std::int64_t coord = flat % out[d];
    flat /= out[d];
    if (k < in.size()) {
      const std::int64_t extent = in[in.size() - 1 - k];
      if (extent != 1) index += coord * stride;
      stride *= extent;
    }
  }
  return index;
}

}  // namespace ferrite::reference
