// ones, *_like, eye, linspace, logspace (ferrite/factories.hpp).
#include "ferrite/factories.hpp"

#include "core/extent.hpp"

#include <cmath>
#include <limits>

#include "core/host_scratch.hpp"
#include "core/scalar_convert.hpp"
#include "ferrite/elementwise.hpp"
#include "frontend/checks.hpp"

namespace ferrite {
namespace {

const Tensor& defined(const char* op, const Tensor& x) {
  frontend::check_defined(op, {&x});
  return x;
}

void check_steps(const char* op, std::int64_t steps, DType dtype) {
  FERRITE_CHECK(steps >= 0, InvalidArgument, op, ": number of steps must be non-negative, got ", steps);
  FERRITE_CHECK(is_floating(dtype) || is_integral(dtype), Unsupported, op, ": dtype ", dtype_name(dtype),
                " is not supported (real dtypes: F32, F64, F16, BF16, I32, I64)");
}

/// x rounded to the dtype's precision (identity for F64 and for the float arithmetic of F32).
/// F16/BF16 round after every operation, as c10::Half/BFloat16 arithmetic does.
double round_to(DType dtype, double x) {
  switch (dtype) {
    case DType::F32: return static_cast<float>(x);
    case DType::F16: return static_cast<float>(Half(x));
    case DType::BF16: return static_cast<float>(BFloat16(x));
    default: return x;
  }
}

/// torch's CPU linspace kernel, element by element, in the arithmetic of its step type:
/// the dtype itself for floating dtypes (every operation rounded to it), double for integer
/// dtypes (whose start and end are first truncated, as Scalar::to<int64_t>).
std::vector<double> linspace_values(const char* op, double start, double end, std::int64_t steps, DType dtype) {
  if (steps == 0) return {};
  if (is_integral(dtype)) {
    start = static_cast<double>(Scalar(start).to_int64());
    end = static_cast<double>(Scalar(end).to_int64());
  } else {
    start = round_to(dtype, start);
    end = round_to(dtype, end);
  }
  if (steps == 1) return {start};  // torch fills with start (the formula would give end)
  const DType step_type = is_integral(dtype) ? DType::F64 : dtype;
  const auto r = [&](double x) { return round_to(step_type, x); };
  // c10::Half / int64_t converts the divisor to Half first.
  const double step = r(r(end - start) / r(static_cast<double>(steps - 1)));
  const std::int64_t halfway = steps / 2;
  std::vector<double> out = detail::host_scratch<double>(steps, op);
  for (std::int64_t i = 0; i < steps; ++i) {
    out[static_cast<std::size_t>(i)] = i < halfway ? r(start + r(step * r(static_cast<double>(i))))
                                                   : r(end - r(step * r(static_cast<double>(steps - i - 1))));
  }
  return out;
}

/// The values (already exact in `dtype`'s precision, or to be truncated for integers) as a
/// tensor of `dtype` on `device`: built on the host and copied, so every backend holds the
/// same bits (torch computes the same formula on the device).
Tensor host_values(const char* op, const std::vector<double>& values, DType dtype, Device device) {
  const Shape shape{static_cast<std::int64_t>(values.size())};
  if (is_integral(dtype)) {
    std::vector<std::int64_t> ints = detail::host_scratch<std::int64_t>(static_cast<std::int64_t>(values.size()), op);
    for (std::size_t i = 0; i < values.size(); ++i) {
      detail::check_fill_value(op, Scalar(values[i]), dtype);  // truncation must fit: no UB cast
      ints[i] = static_cast<std::int64_t>(values[i]);
    }
    return from_vector(ints, shape, device).to(dtype);  // I64 -> I32 exact: the values fit
  }
  // Exact in F64; the cast to a narrower dtype rounds once, and the values already are
  // representable there (they were rounded to it), so it changes nothing.
  return from_vector(values, shape, device).to(dtype);
}

}  // namespace

Tensor ones(Shape shape, DType dtype, Device device) { return full(std::move(shape), 1, dtype, device); }

Tensor empty_like(const Tensor& x) { return empty_like(x, defined("empty_like", x).dtype()); }
Tensor empty_like(const Tensor& x, DType dtype) { return empty(defined("empty_like", x).shape(), dtype, x.device()); }
Tensor zeros_like(const Tensor& x) { return zeros_like(x, defined("zeros_like", x).dtype()); }
Tensor zeros_like(const Tensor& x, DType dtype) { return zeros(defined("zeros_like", x).shape(), dtype, x.device()); }
Tensor ones_like(const Tensor& x) { return ones_like(x, defined("ones_like", x).dtype()); }
Tensor ones_like(const Tensor& x, DType dtype) { return ones(defined("ones_like", x).shape(), dtype, x.device()); }
Tensor full_like(const Tensor& x, Scalar value) { return full_like(x, value, defined("full_like", x).dtype()); }
Tensor full_like(const Tensor& x, Scalar value, DType dtype) {
  return full(defined("full_like", x).shape(), value, dtype, x.device());
}

Tensor eye(std::int64_t n, std::int64_t m, DType dtype, Device device) {
  FERRITE_CHECK(n >= 0, InvalidArgument, "eye: n must be greater or equal to 0, got ", n);
  if (m < 0) m = n;  // torch's m=None; an explicit negative m is not expressible apart from it
  // Built on the device from existing ops: row index == column index, broadcast to [n, m],
  // then the Bool mask cast to the dtype (true -> 1).
  const Tensor rows = arange(n, DType::I64, device).reshape({n, 1});
  const Tensor cols = arange(m, DType::I64, device).reshape({1, m});
  return eq(rows, cols).to(dtype);
}

Tensor linspace(double start, double end, std::int64_t steps, DType dtype, Device device) {
  check_steps("linspace", steps, dtype);
  FERRITE_CHECK(std::isfinite(start) && std::isfinite(end), InvalidArgument, "linspace: start ", start, " and end ",
                end, " must be finite");
  return host_values("linspace", linspace_values("linspace", start, end, steps, dtype), dtype, device);
}

Tensor logspace(double start, double end, std::int64_t steps, double base, DType dtype, Device device) {
  check_steps("logspace", steps, dtype);
  FERRITE_CHECK(std::isfinite(start) && std::isfinite(end), InvalidArgument, "logspace: start ", start, " and end ",
                end, " must be finite");
  // The exponents in the dtype's arithmetic (linspace's formula), each power in double.
  std::vector<double> values = linspace_values("logspace", start, end, steps, dtype);
  for (double& v : values) v = round_to(dtype, std::pow(base, v));
  if (steps == 1) values = {round_to(dtype, std::pow(base, start))};  // torch: pow(base, start), start unrounded
  return host_values("logspace", values, dtype, device);
}

Tensor from_blob(void* data, Shape shape, DType dtype, Device device, std::function<void(void*)> deleter) {
  Strides strides = detail::checked_contiguous_strides(shape, "from_blob");
  return from_blob(data, std::move(shape), std::move(strides), dtype, device, std::move(deleter));
}

Tensor from_blob(void* data, Shape shape, Strides strides, DType dtype, Device device,
                 std::function<void(void*)> deleter) {
  const char* op = "from_blob";
  FERRITE_CHECK(is_valid_dtype(dtype), InvalidArgument, op, ": dtype value ", static_cast<int>(dtype), " is not a DType");
  FERRITE_CHECK(shape.size() == strides.size(), InvalidArgument, op, ": shape ", shape_str(shape), " has ",
                shape.size(), " dims but strides ", shape_str(strides), " has ", strides.size());
  backend(device);  // the device must exist (Unsupported / InvalidArgument otherwise)
  const std::int64_t numel = shape_numel(shape);
  // The elements the strides reach: [0, span).
  __int128 span = numel == 0 ? 0 : 1;
  for (std::size_t k = 0; k < shape.size() && numel > 0; ++k) {
    FERRITE_CHECK(strides[k] >= 0, InvalidArgument, op, ": negative stride in ", shape_str(strides));
    span += static_cast<__int128>(shape[k] - 1) * strides[k];
  }
  FERRITE_CHECK(span * static_cast<__int128>(dtype_size(dtype)) < (static_cast<__int128>(1) << 62), InvalidArgument, op,
                ": shape ", shape_str(shape), " with strides ", shape_str(strides), " reaches more bytes than an int64 can count");
  FERRITE_CHECK(span == 0 || data != nullptr, InvalidArgument, op, ": null data pointer for ", shape_str(shape));
  const auto elements = static_cast<std::int64_t>(span);
  auto storage = std::make_shared<Storage>(data, static_cast<std::size_t>(elements) * dtype_size(dtype), device,
                                           [deleter = std::move(deleter)](void* p, std::size_t) {
                                             if (deleter) deleter(p);
                                           });
  const Tensor whole(Buffer(std::move(storage), dtype, elements), {elements});
  return whole.as_strided(std::move(shape), std::move(strides), 0);
}

}  // namespace ferrite
