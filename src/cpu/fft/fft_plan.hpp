// The CPU backend's own complex FFT of one length, in double precision for every dtype:
// mixed radix (4, 2, 3, 5, 7, 11, 13) by recursive decimation in time, and Bluestein's
// chirp-z convolution (through a power-of-two transform) for lengths with a prime factor
// above 13, so every length, primes included, costs O(n log n) and errors grow like log n.
// Plans are immutable once built and shared between threads.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

namespace ferrite::cpu::fft {

using cd = std::complex<double>;

class Plan {
 public:
  explicit Plan(std::int64_t n);
  std::int64_t size() const { return n_; }
  /// Scratch elements execute() needs.
  std::int64_t scratch_size() const;
  /// out[k] = Σ_j in[j] e^{∓2πi jk/n} (minus: forward, plus: inverse), unnormalised.
  /// `in` and `out` are distinct arrays of n elements; `scratch` holds scratch_size().
  void execute(const cd* in, cd* out, bool inverse, cd* scratch) const;

 private:
  void recurse(const cd* in, std::int64_t stride, cd* out, std::int64_t n, std::size_t level, bool inverse) const;
  cd twiddle(std::int64_t index, bool inverse) const;  // e^{∓2πi index/n}, index in [0, n)

  std::int64_t n_;
  std::vector<std::int64_t> factors_;  // mixed radix; empty when Bluestein runs
  std::vector<cd> roots_;              // e^{-2πi j/n}, j in [0, n)
  // Bluestein: chirp w_j = e^{-iπ j²/n}, the transform of the conjugate chirp filter, and the
  // power-of-two plan of the convolution.
  std::vector<cd> chirp_, filter_;
  std::shared_ptr<const Plan> inner_;
};

/// A shared plan for length n, cached (thread-safe); OutOfMemory when the tables do not fit.
std::shared_ptr<const Plan> plan_for(std::int64_t n);

}  // namespace ferrite::cpu::fft
