// Random numbers (issue #17): a counter-based Philox4x32-10 generator per device, and the
// draws that use it. The same (seed, offset) gives the same bits on the CPU and on every
// GPU, because each element's bits come from its index (docs/families/random.md).
//
//   random::manual_seed(42);                       // every device's default generator
//   Tensor x = random::randn({1024, 1024}, DType::BF16, Device::cuda(0));
//   random::Generator g(7, Device::cpu());         // an explicit stream of its own
//   Tensor u = random::rand({8}, DType::F32, Device::cpu(), &g);
//   auto saved = random::get_state(Device::cuda(0));  // ... later: set_state(dev, saved)
//
// Each call takes the generator's current offset and advances it by one (a host-side
// counter under a mutex; nothing waits for the device). A call covers up to 2^64 Philox
// groups, so calls never overlap.
#pragma once

#include <cstdint>
#include <memory>

#include "ferrite/tensor.hpp"

namespace ferrite::random {

/// A generator's whole state: the Philox key is the seed, the offset numbers the calls.
struct RngState {
  std::uint64_t seed = 0;
  std::uint64_t offset = 0;
  bool operator==(const RngState&) const = default;
};

/// A Philox stream for one device. Copies share the stream (like torch.Generator objects
/// handed around by reference). Thread-safe.
class Generator {
 public:
  /// A new stream with `seed` and offset 0, for tensors on `device`.
  explicit Generator(std::uint64_t seed = 0, Device device = Device::cpu());
  Device device() const;
  void manual_seed(std::uint64_t seed);  ///< seed = `seed`, offset = 0
  RngState state() const;
  void set_state(RngState state);
  /// Returns the current state and advances the offset by `calls` (what each draw does).
  RngState take(std::uint64_t calls = 1);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

/// The default generator of `device` (created with seed 0 on first use). InvalidArgument
/// for a device that does not exist.
Generator default_generator(Device device);
/// Seeds the default generators of the CPU and of every GPU (offset 0), as torch.manual_seed.
void manual_seed(std::uint64_t seed);
/// Seeds the default generator of one device.
void manual_seed(Device device, std::uint64_t seed);
/// The default generator's state of `device` (section 20's save_rng_state).
RngState get_state(Device device);
/// Installs a state saved by get_state (section 20's restore_rng_state).
void set_state(Device device, RngState state);

// Draws. `generator` null = the device's default generator; otherwise it must belong to
// the output's device (DeviceMismatch). Float dtypes: F32, F64, F16, BF16.

/// Uniform on [0, 1): 24 random bits per value (53 for F64).
Tensor rand(Shape shape, DType dtype = DType::F32, Device device = Device::cpu(), Generator* generator = nullptr);
/// Standard normal (Box-Muller).
Tensor randn(Shape shape, DType dtype = DType::F32, Device device = Device::cpu(), Generator* generator = nullptr);
/// Integers uniform on [low, high) for I32 and I64 (InvalidArgument if low >= high or the
/// range does not fit the dtype).
Tensor randint(std::int64_t low, std::int64_t high, Shape shape, DType dtype = DType::I64,
               Device device = Device::cpu(), Generator* generator = nullptr);
/// 1 where a uniform draw is below probs[i], else 0; probs' dtype and shape (a float dtype).
Tensor bernoulli(const Tensor& probs, Generator* generator = nullptr);
/// Same with one probability p in [0, 1] for every element.
Tensor bernoulli(Shape shape, double p, DType dtype = DType::F32, Device device = Device::cpu(),
                 Generator* generator = nullptr);
/// In place on a contiguous float tensor: mean + std * N(0, 1) (std >= 0). Returns x.
const Tensor& normal_(const Tensor& x, double mean = 0, double std = 1, Generator* generator = nullptr);
/// In place on a contiguous float tensor: from + (to - from) * U[0, 1) (from <= to). Returns x.
const Tensor& uniform_(const Tensor& x, double from = 0, double to = 1, Generator* generator = nullptr);

}  // namespace ferrite::random
