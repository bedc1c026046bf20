#include "conformance/conformance.hpp"

#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

namespace ferrite::conformance {

std::vector<Entry>& registry() {
  static std::vector<Entry> entries;
  return entries;
}

bool register_entry(Entry entry) {
  if (!entry.reference_tolerance) entry.reference_tolerance = default_tolerance;
  if (!entry.backend_tolerance) entry.backend_tolerance = default_tolerance;
  registry().push_back(std::move(entry));
  return true;
}

std::uint64_t base_seed() {
  static const std::uint64_t seed = [] {
    const char* env = std::getenv("FERRITE_TEST_SEED");
    if (env == nullptr || *env == '\0') return kDefaultSeed;
    const std::string value = env;
    if (value == "random") return (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
    std::uint64_t parsed = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (error != std::errc() || end != value.data() + value.size())
      FERRITE_THROW(InvalidArgument, "FERRITE_TEST_SEED is '", value, "': expected a decimal number or 'random'");
    return parsed;
  }();
  return seed;
}

std::uint64_t case_seed(std::uint64_t base, const std::string& op, DType dtype) {
  std::uint64_t h = 0xcbf29ce484222325u;  // FNV-1a of the op's name
  for (char c : op) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
  // splitmix64's finaliser: nearby bases and dtypes give unrelated streams.
  std::uint64_t z = base + h + 0x9e3779b97f4a7c15u * (static_cast<std::uint64_t>(dtype) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

std::int64_t case_element_limit() {
  static const std::int64_t limit = [] {
    const char* env = std::getenv("FERRITE_CONFORMANCE_MAX_ELEMENTS");
    if (env == nullptr || *env == '\0') return std::int64_t(-1);
    const std::string value = env;
    std::int64_t parsed = -1;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (error != std::errc() || end != value.data() + value.size() || parsed < 0)
      FERRITE_THROW(InvalidArgument, "FERRITE_CONFORMANCE_MAX_ELEMENTS is '", value,
                    "': expected a non-negative decimal number of elements");
    return parsed;
  }();
  return limit;
}

namespace {
std::atomic<std::int64_t> g_left_out{0};
}

std::vector<IndexedCase> cases_to_run(const Entry& entry, DType dtype, Rng& rng) {
  std::vector<Case> all = entry.cases(dtype, rng);
  std::vector<IndexedCase> kept;
  kept.reserve(all.size());
  const std::int64_t limit = case_element_limit();
  for (std::size_t i = 0; i < all.size(); ++i) {
    std::int64_t elements = 0;
    for (const Tensor& t : all[i].inputs) elements += t.numel();
    if (limit >= 0 && elements > limit) {
      g_left_out.fetch_add(1);
      continue;
    }
    kept.push_back({i, std::move(all[i])});
  }
  return kept;
}

std::int64_t cases_left_out() { return g_left_out.load(); }

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::F64:
    case DType::C128: return {1e-7, 1e-7};
    case DType::F32:
    case DType::C64: return {1.3e-6, 1e-5};
    case DType::F16: return {1e-3, 1e-5};
    case DType::BF16: return {1.6e-2, 1e-5};
    default: return {};
  }
}

Tensor random(Shape shape, DType dtype, Rng& rng, double lo, double hi) {
  const auto n = static_cast<std::size_t>(shape_numel(shape));
  if (dtype == DType::Bool) {
    std::vector<bool> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = (rng() & 1) != 0;
    return from_vector(v, shape);
  }
  if (is_integral(dtype)) {
    std::uniform_int_distribution<std::int64_t> dist(static_cast<std::int64_t>(lo * 25), static_cast<std::int64_t>(hi * 25));
    std::vector<std::int64_t> v(n);
    for (auto& x : v) x = dist(rng);
    return from_vector(v, shape).to(dtype);
  }
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(is_complex(dtype) ? 2 * n : n);
  for (auto& x : v) x = dist(rng);
  if (is_complex(dtype)) {
    Tensor t = Tensor::from_bytes(v.data(), v.size() * sizeof(double), DType::C128, shape);
    return t.to(dtype);
  }
  return from_vector(v, shape).to(dtype);
}

Tensor extremes(DType dtype, std::int64_t n, Rng& rng) {
  std::vector<double> special;
  if (is_floating(dtype) || is_complex(dtype)) {
    const double inf = std::numeric_limits<double>::infinity();
    special = {0.0, -0.0, inf, -inf, std::nan(""), 1e-40, -1e-40, 6e-8, 65504, -65504, 3.0e38, 1e300, -1e300};
  } else if (dtype == DType::I32) {
    special = {0, -1, 1, 2147483647.0, -2147483648.0};
  } else if (dtype == DType::I64) {
    special = {0, -1, 1, 9.2e18, -9.2e18};
  } else {
    special = {0, 1};
  }
  Tensor base = random({n}, DType::F64, rng, -100, 100);
  std::vector<double> v = base.to_vector<double>();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (rng() % 3 == 0) v[i] = special[rng() % special.size()];
  if (dtype == DType::I64) {  // keep the exact int64 limits, which doubles cannot hold
    std::vector<std::int64_t> iv(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] >= 9.2e18) iv[i] = std::numeric_limits<std::int64_t>::max();
      else if (v[i] <= -9.2e18) iv[i] = std::numeric_limits<std::int64_t>::min();
      else iv[i] = static_cast<std::int64_t>(v[i]);
    }
    return from_vector(iv, {n});
  }
  return from_vector(v, {n}).to(dtype);
}

std::vector<Shape> unary_shapes() { return {{}, {1}, {0}, {7}, {3, 0, 5}, {33, 17}, {1025}, {2, 3, 4, 5}, {100003}}; }

std::vector<std::pair<Shape, Shape>> binary_shape_pairs() {
  return {
      {{}, {}},                  // rank 0
      {{7}, {7}},                // odd, contiguous
      {{100003}, {100003}},      // large enough for the vector path and a ragged tail
      {{0}, {0}},                // empty
      {{4, 0}, {1}},             // empty after broadcasting
      {{33, 64}, {64}},          // a row broadcast along the rows
      {{33, 64}, {33, 1}},       // a column broadcast
      {{5, 1, 7}, {5, 3, 7}},    // a size-1 dim in the middle
      {{}, {2, 3, 5}},           // rank 0 against rank 3
      {{2, 1, 3, 1}, {1, 4, 1, 5}},
      {{1}, {257}},
  };
}

namespace {

bool is_nan(double x) { return x != x; }

}  // namespace

std::string compare(const Tensor& actual_in, const Tensor& expected_in, Tolerance tol) {
  std::ostringstream why;
  if (actual_in.shape() != expected_in.shape() || actual_in.dtype() != expected_in.dtype()) {
    why << "got " << actual_in.description() << ", expected " << expected_in.description();
    return why.str();
  }
  const Tensor actual = actual_in.to(Device::cpu()), expected = expected_in.to(Device::cpu());
  const DType dtype = actual.dtype();
  if (tol.exact() && !is_floating(dtype) && !is_complex(dtype)) {
    const auto a = actual.to_bytes(), e = expected.to_bytes();
    const std::size_t size = dtype_size(dtype);
    for (std::size_t i = 0; i < a.size(); i += size)
      if (std::memcmp(&a[i], &e[i], size) != 0) {
        why << "element " << i / size << " differs: got " << actual.to(DType::F64).to_vector<double>()[i / size]
            << ", expected " << expected.to(DType::F64).to_vector<double>()[i / size];
        return why.str();
      }
    return "";
  }
  // Floating and complex: compare as float64 pairs; NaN and Inf positions must agree.
  const DType wide = is_complex(dtype) ? DType::C128 : DType::F64;
  const auto a_bytes = actual.to(wide).to_bytes(), e_bytes = expected.to(wide).to_bytes();
  std::vector<double> a(a_bytes.size() / 8), e(e_bytes.size() / 8);
  if (!a.empty()) std::memcpy(a.data(), a_bytes.data(), a_bytes.size());  // empty: data() may be null
  if (!e.empty()) std::memcpy(e.data(), e_bytes.data(), e_bytes.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool ok = is_nan(e[i]) ? is_nan(a[i])
                    : std::isinf(e[i]) ? a[i] == e[i]
                    : tol.exact() ? (a[i] == e[i] && std::signbit(a[i]) == std::signbit(e[i]))
                                  : (std::isfinite(a[i]) && std::abs(a[i] - e[i]) <= tol.atol + tol.rtol * std::abs(e[i]));
    if (!ok) {
      why.precision(17);
      why << "element " << i << " of " << a.size() << ": got " << a[i] << ", expected " << e[i] << " (rtol "
          << tol.rtol << ", atol " << tol.atol << ")";
      return why.str();
    }
  }
  return "";
}

std::string expect_error(const std::function<void()>& call, ErrorKind kind, const std::string& fragment) {
  try {
    call();
  } catch (const Error& e) {
    std::string problems;
    if (e.kind() != kind)
      problems += "kind " + std::string(error_kind_name(e.kind())) + ", expected " + std::string(error_kind_name(kind)) + "; ";
    if (std::string(e.what()).find(fragment) == std::string::npos)
      problems += "message lacks '" + fragment + "'; ";
    return problems.empty() ? "" : problems + "message: " + e.what();
  } catch (const std::exception& e) {
    return std::string("threw a non-ferrite exception: ") + e.what();
  }
  return "did not throw";
}

}  // namespace ferrite::conformance
