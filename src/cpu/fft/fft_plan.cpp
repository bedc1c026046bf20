// Mixed-radix and Bluestein transforms of one length (fft_plan.hpp). Roots of unity come
// from one table e^{-2πi j/N} of the plan's length, each entry computed directly with cos/sin
// (no recurrences, whose errors would grow with n); Bluestein's chirp angles reduce j² mod
// 2n in exact integer arithmetic first, so large j lose no accuracy.
#include "cpu/fft/fft_plan.hpp"

#include <map>
#include <mutex>
#include <new>
#include <numbers>

#include "ferrite/error.hpp"

namespace ferrite::cpu::fft {
namespace {

constexpr std::int64_t kMaxRadix = 13;

std::vector<std::int64_t> factorise(std::int64_t n) {
  std::vector<std::int64_t> f;
  while (n % 4 == 0) {
    f.push_back(4);
    n /= 4;
  }
  for (std::int64_t p : {2, 3, 5, 7, 11, 13})
    while (n % p == 0) {
      f.push_back(p);
      n /= p;
    }
  if (n != 1) f.clear();  // a prime factor above kMaxRadix: Bluestein
  return f;
}

std::int64_t next_power_of_two(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

}  // namespace

Plan::Plan(std::int64_t n) : n_(n) {
  factors_ = factorise(n);
  if (!factors_.empty() || n == 1) {
    roots_.resize(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < n; ++j) {
      const double angle = 2 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
      roots_[static_cast<std::size_t>(j)] = cd(std::cos(angle), -std::sin(angle));
    }
    return;
  }
  const std::int64_t m = next_power_of_two(2 * n - 1);
  inner_ = plan_for(m);
  chirp_.resize(static_cast<std::size_t>(n));
  const auto two_n = static_cast<unsigned __int128>(2 * n);
  for (std::int64_t j = 0; j < n; ++j) {
    const auto sq = static_cast<std::int64_t>((static_cast<unsigned __int128>(j) * static_cast<unsigned __int128>(j)) % two_n);
    const double angle = std::numbers::pi * static_cast<double>(sq) / static_cast<double>(n);
    chirp_[static_cast<std::size_t>(j)] = cd(std::cos(angle), -std::sin(angle));
  }
  std::vector<cd> b(static_cast<std::size_t>(m), cd(0, 0));
  for (std::int64_t j = 0; j < n; ++j) {
    const cd v = std::conj(chirp_[static_cast<std::size_t>(j)]);
    b[static_cast<std::size_t>(j)] = v;
    if (j > 0) b[static_cast<std::size_t>(m - j)] = v;
  }
  filter_.resize(static_cast<std::size_t>(m));
  std::vector<cd> scratch(static_cast<std::size_t>(inner_->scratch_size()));
  inner_->execute(b.data(), filter_.data(), false, scratch.data());
}

std::int64_t Plan::scratch_size() const {
  if (!inner_) return 0;
  return 2 * inner_->size() + inner_->scratch_size();
}

cd Plan::twiddle(std::int64_t index, bool inverse) const {
  const cd w = roots_[static_cast<std::size_t>(index)];
  return inverse ? std::conj(w) : w;
}

void Plan::recurse(const cd* in, std::int64_t stride, cd* out, std::int64_t n, std::size_t level,
                   bool inverse) const {
  if (n == 1) {
    out[0] = in[0];
    return;
  }
  const std::int64_t p = factors_[level], m = n / p;
  for (std::int64_t r = 0; r < p; ++r) recurse(in + r * stride, stride * p, out + r * m, m, level + 1, inverse);
  const std::int64_t step = n_ / n;  // W_n^e = roots_[e * step]
  cd t[kMaxRadix];
  for (std::int64_t k = 0; k < m; ++k) {
    t[0] = out[k];
    for (std::int64_t r = 1; r < p; ++r) t[r] = out[r * m + k] * twiddle(r * k * step, inverse);
    if (p == 2) {
      out[k] = t[0] + t[1];
      out[m + k] = t[0] - t[1];
    } else if (p == 4) {
      // W_4 = -i forward, +i inverse.
      const cd a = t[0] + t[2], b = t[0] - t[2], c = t[1] + t[3];
      const cd d = (t[1] - t[3]) * (inverse ? cd(0, 1) : cd(0, -1));
      out[k] = a + c;
      out[m + k] = b + d;
      out[2 * m + k] = a - c;
      out[3 * m + k] = b - d;
    } else {
      const std::int64_t root = n_ / p;
      for (std::int64_t q = 0; q < p; ++q) {
        cd sum = t[0];
        for (std::int64_t r = 1; r < p; ++r) sum += t[r] * twiddle(((r * q) % p) * root, inverse);
        out[q * m + k] = sum;
      }
    }
  }
}

void Plan::execute(const cd* in, cd* out, bool inverse, cd* scratch) const {
  if (!inner_) {
    recurse(in, 1, out, n_, 0, inverse);
    return;
  }
  // Bluestein: X_k = w_k Σ_j (x_j w_j) conj(w_{k-j}), a circular convolution of length m;
  // the inverse is the conjugate of the forward transform of conj(x).
  const std::int64_t m = inner_->size();
  cd* a = scratch;
  cd* spectrum = scratch + m;
  cd* rest = scratch + 2 * m;
  for (std::int64_t j = 0; j < n_; ++j) {
    const cd x = inverse ? std::conj(in[j]) : in[j];
    a[j] = x * chirp_[static_cast<std::size_t>(j)];
  }
  for (std::int64_t j = n_; j < m; ++j) a[j] = cd(0, 0);
  inner_->execute(a, spectrum, false, rest);
  const double inv_m = 1.0 / static_cast<double>(m);
  for (std::int64_t j = 0; j < m; ++j) spectrum[j] *= filter_[static_cast<std::size_t>(j)] * inv_m;
  inner_->execute(spectrum, a, true, rest);
  for (std::int64_t k = 0; k < n_; ++k) {
    const cd y = a[k] * chirp_[static_cast<std::size_t>(k)];
    out[k] = inverse ? std::conj(y) : y;
  }
}

std::shared_ptr<const Plan> plan_for(std::int64_t n) {
  // A small cache: building the tables costs about as much as one transform of the length.
  static std::mutex mutex;
  static std::map<std::int64_t, std::shared_ptr<const Plan>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(n);
    if (it != cache.end()) return it->second;
  }
  std::shared_ptr<const Plan> plan;
  try {
    plan = std::make_shared<const Plan>(n);
  } catch (const std::bad_alloc&) {
    FERRITE_THROW(OutOfMemory, "fft: the CPU tables of a transform of length ", n, " do not fit in host memory");
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 32) cache.clear();
  cache.emplace(n, plan);
  return plan;
}

}  // namespace ferrite::cpu::fft
