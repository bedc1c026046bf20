// Front end of the random draws: the generators (host-side state, one mutex each), the
// per-device defaults, validation, and the calls into RandomOps.
#include "ferrite/random.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include "core/training_families.hpp"
#include "frontend/checks.hpp"
#include "frontend/strided.hpp"

namespace ferrite {

namespace random {

struct Generator::Impl {
  mutable std::mutex mutex;
  RngState state;
  Device device;
};

Generator::Generator(std::uint64_t seed, Device device) : impl_(std::make_shared<Impl>()) {
  impl_->state = {seed, 0};
  impl_->device = device;
}
Device Generator::device() const { return impl_->device; }
void Generator::manual_seed(std::uint64_t seed) { set_state({seed, 0}); }
RngState Generator::state() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->state;
}
void Generator::set_state(RngState state) {
  std::lock_guard lock(impl_->mutex);
  impl_->state = state;
}
RngState Generator::take(std::uint64_t calls) {
  std::lock_guard lock(impl_->mutex);
  const RngState now = impl_->state;
  impl_->state.offset += calls;
  return now;
}

namespace {

std::mutex g_defaults_mutex;
std::map<std::pair<int, int>, Generator>& defaults() {
  static auto* map = new std::map<std::pair<int, int>, Generator>();  // never destroyed: used at exit
  return *map;
}

bool is_float(DType d) { return d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16; }

void check_float(const char* op, DType dtype) {
  FERRITE_CHECK(is_float(dtype), Unsupported, op, ": dtype ", dtype_name(dtype),
                " is not supported (F32, F64, F16 or BF16)");
}

RngState take_state(const char* op, Device device, Generator* generator) {
  if (!generator) return default_generator(device).take();
  FERRITE_CHECK(generator->device() == device, DeviceMismatch, op, ": the generator belongs to ",
                generator->device().str(), ", the output to ", device.str());
  return generator->take();
}

void run_fill(const char* op, RandomDesc desc, const Tensor& out, Generator* generator, const Buffer& probs = {}) {
  // Validate everything before taking an offset, so a failed call leaves the stream alone.
  const RngState state = take_state(op, out.device(), generator);
  desc.seed = state.seed;
  desc.offset = state.offset;
  if (out.numel() == 0) return;
  // A contiguous view off the 16-byte grid is drawn into an aligned stand-in and copied in
  // (each element's number depends on its index only).
  const frontend::WriteWindow window(op, out, false);
  detail::random_ops(out.device()).fill(desc, window.tensor().buffer(), probs);
  window.finish();
}

Tensor draw(const char* op, RandomDesc desc, const Shape& shape, DType dtype, Device device, Generator* generator) {
  check_float(op, dtype);
  backend(device);  // InvalidArgument for a device that does not exist
  Tensor out = frontend::allocate(shape, dtype, device);
  run_fill(op, desc, out, generator);
  return out;
}

void check_inplace(const char* op, const Tensor& x) {
  frontend::check_defined(op, {&x});
  check_float(op, x.dtype());
  FERRITE_CHECK(x.is_contiguous(), InvalidArgument, op, ": writes a contiguous tensor, got a strided view ",
                x.description());
}

}  // namespace

Generator default_generator(Device device) {
  backend(device);  // validates the device
  std::lock_guard lock(g_defaults_mutex);
  auto& map = defaults();
  const auto key = std::make_pair(static_cast<int>(device.kind), device.kind == DeviceKind::CPU ? 0 : device.index);
  auto it = map.find(key);
  if (it == map.end()) it = map.emplace(key, Generator(0, device)).first;
  return it->second;
}

void manual_seed(std::uint64_t seed) {
  manual_seed(Device::cpu(), seed);
  for (int i = 0; i < cuda_device_count(); ++i) manual_seed(Device::cuda(i), seed);
}
void manual_seed(Device device, std::uint64_t seed) { default_generator(device).manual_seed(seed); }
RngState get_state(Device device) { return default_generator(device).state(); }
void set_state(Device device, RngState state) { default_generator(device).set_state(state); }

Tensor rand(Shape shape, DType dtype, Device device, Generator* generator) {
  return draw("rand", RandomDesc{RandomKind::Uniform, 0, 0, 0, 1}, shape, dtype, device, generator);
}

Tensor randn(Shape shape, DType dtype, Device device, Generator* generator) {
  return draw("randn", RandomDesc{RandomKind::Normal, 0, 0, 0, 1}, shape, dtype, device, generator);
}

Tensor randint(std::int64_t low, std::int64_t high, Shape shape, DType dtype, Device device, Generator* generator) {
  FERRITE_CHECK(dtype == DType::I32 || dtype == DType::I64, Unsupported, "randint: dtype ", dtype_name(dtype),
                " is not supported (I32 or I64)");
  FERRITE_CHECK(low < high, InvalidArgument, "randint: low (", low, ") must be below high (", high, ")");
  if (dtype == DType::I32)
    FERRITE_CHECK(low >= std::numeric_limits<std::int32_t>::min() && high - 1 <= std::numeric_limits<std::int32_t>::max(),
                  InvalidArgument, "randint: [", low, ", ", high, ") does not fit I32");
  backend(device);
  RandomDesc desc{RandomKind::Integer};
  desc.low = low;
  desc.range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  Tensor out = frontend::allocate(shape, dtype, device);
  run_fill("randint", desc, out, generator);
  return out;
}

Tensor bernoulli(const Tensor& probs, Generator* generator) {
  frontend::check_defined("bernoulli", {&probs});
  check_float("bernoulli", probs.dtype());
  Tensor out = frontend::allocate(probs.shape(), probs.dtype(), probs.device());
  RandomDesc desc{RandomKind::Bernoulli};
  run_fill("bernoulli", desc, out, generator, probs.numel() ? probs.buffer() : Buffer());
  return out;
}

Tensor bernoulli(Shape shape, double p, DType dtype, Device device, Generator* generator) {
  FERRITE_CHECK(p >= 0 && p <= 1, InvalidArgument, "bernoulli: p must be in [0, 1], got ", p);
  RandomDesc desc{RandomKind::Bernoulli};
  desc.a = p;
  return draw("bernoulli", desc, shape, dtype, device, generator);
}

const Tensor& normal_(const Tensor& x, double mean, double std, Generator* generator) {
  check_inplace("normal_", x);
  FERRITE_CHECK(std >= 0 && std::isfinite(std) && std::isfinite(mean), InvalidArgument,
                "normal_: needs a finite mean and a finite std >= 0, got mean ", mean, ", std ", std);
  run_fill("normal_", RandomDesc{RandomKind::Normal, 0, 0, mean, std}, x, generator);
  return x;
}

const Tensor& uniform_(const Tensor& x, double from, double to, Generator* generator) {
  check_inplace("uniform_", x);
  FERRITE_CHECK(from <= to && std::isfinite(to - from), InvalidArgument,
                "uniform_: needs finite from <= to, got from ", from, ", to ", to);
  run_fill("uniform_", RandomDesc{RandomKind::Uniform, 0, 0, from, to - from}, x, generator);
  return x;
}

}  // namespace random
}  // namespace ferrite
