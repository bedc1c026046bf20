// Conformance entries of issue #17's training ops: the random draws (rand, uniform_, randn,
// normal_, randint, bernoulli), dropout and its backward, the fused optimizers (adam, adamw,
// sgd) and the fused cross-entropy with its backward.
//
// References are written here from the definitions: an own Philox4x32-10 (the unit tests
// check ferrite's against Random123's known answers) with the documented counter layout
// and transforms; Box-Muller in long double with libm; PyTorch's documented optimizer
// loops in long double; cross-entropy and its gradient in long double. CUDA must match the
// CPU bit for bit for every random draw, dropout and optimizer step.
#include <cmath>
#include <limits>

#include "conformance/conformance.hpp"
#include "conformance/reference.hpp"
#include "ferrite/nn_training.hpp"
#include "ferrite/optim.hpp"
#include "ferrite/random.hpp"

namespace ferrite::conformance {
namespace {

using reference::round_to;
using LD = long double;
const std::vector<DType> kFloats = {DType::F32, DType::F64, DType::F16, DType::BF16};

// ---- an independent Philox4x32-10 and the counter layout of docs/families/random.md ----
struct Words {
  std::uint32_t w[4];
};
Words philox(std::uint64_t seed, std::uint64_t offset, std::uint64_t group) {
  std::uint32_t c[4] = {static_cast<std::uint32_t>(group), static_cast<std::uint32_t>(group >> 32),
                        static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(offset >> 32)};
  std::uint32_t k[2] = {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
  for (int r = 0; r < 10; ++r) {
    const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c[0], p1 = std::uint64_t{0xCD9E8D57u} * c[2];
    const std::uint32_t n[4] = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<std::uint32_t>(p1),
                                static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<std::uint32_t>(p0)};
    for (int i = 0; i < 4; ++i) c[i] = n[i];
    k[0] += 0x9E3779B9u;
    k[1] += 0xBB67AE85u;
  }
  return {{c[0], c[1], c[2], c[3]}};
}

// One rounding to the compute dtype (F32, or F64 through a double).
LD rnd(DType w, LD v) { return w == DType::F64 ? static_cast<LD>(static_cast<double>(v)) : round_to(w, v); }

bool wide64(DType d) { return d == DType::F64 || d == DType::I64; }
// The compute dtype of a float dtype's draws.
DType compute_of(DType d) { return d == DType::F64 ? DType::F64 : DType::F32; }

// Uniform [0, 1) of element i (and the open-at-0 variant for Box-Muller's log).
LD uniform_of(DType d, std::uint64_t seed, std::uint64_t offset, std::int64_t i, bool open0 = false, int word = -1) {
  if (wide64(d)) {
    const Words r = philox(seed, offset, static_cast<std::uint64_t>(i / 2));
    const int e = word >= 0 ? word : static_cast<int>(i % 2) * 2;
    const std::uint64_t bits = ((std::uint64_t{r.w[e]} << 32) | r.w[e + 1]) >> 11;
    return (static_cast<LD>(bits) + (open0 ? 1 : 0)) / 9007199254740992.0L;
  }
  const Words r = philox(seed, offset, static_cast<std::uint64_t>(i / 4));
  const int e = word >= 0 ? word : static_cast<int>(i % 4);
  return (static_cast<LD>(r.w[e] >> 8) + (open0 ? 1 : 0)) / 16777216.0L;
}

LD normal_of(DType d, std::uint64_t seed, std::uint64_t offset, std::int64_t i) {
  LD u1, u2;
  bool second;
  if (wide64(d)) {
    u1 = uniform_of(d, seed, offset, i & ~std::int64_t{1}, true, 0);
    u2 = uniform_of(d, seed, offset, i & ~std::int64_t{1}, false, 2);
    second = i % 2 == 1;
  } else {
    const int pair = static_cast<int>(i % 4) / 2;
    u1 = uniform_of(d, seed, offset, i, true, 2 * pair);
    u2 = uniform_of(d, seed, offset, i, false, 2 * pair + 1);
    second = i % 2 == 1;
  }
  const LD r = std::sqrt(-2 * std::log(u1));
  const LD a = 2 * 3.14159265358979323846264338327950288L * u2;
  return second ? r * std::sin(a) : r * std::cos(a);
}

Tolerance normal_tolerance(DType d) {
  switch (d) {
    case DType::F64: return {1e-12, 1e-13};
    case DType::F32: return {2e-5, 2e-6};
    default: return default_tolerance(d);
  }
}

std::vector<Case> random_cases(DType dtype, Rng& rng) {
  std::vector<Case> cases;
  const std::vector<Shape> shapes = {{0}, {1}, {3}, {5}, {7, 3}, {1001}, {100003}};
  std::int64_t k = 0;
  for (const Shape& s : shapes) {
    const std::int64_t seed = k == 2 ? -1 : static_cast<std::int64_t>(rng() >> 1);  // -1: every seed bit set
    const std::int64_t offset = k == 3 ? static_cast<std::int64_t>(0xFFFFFFFFull) : k;  // crosses 2^32
    cases.push_back({"shape " + shape_str(s), {random(s, dtype, rng, 0, 1)}, {seed, offset}});
    ++k;
  }
  return cases;
}

random::Generator generator_for(const Case& c, Device device) {
  random::Generator g(static_cast<std::uint64_t>(c.ints[0]), device);
  g.set_state({static_cast<std::uint64_t>(c.ints[0]), static_cast<std::uint64_t>(c.ints[1])});
  return g;
}

std::vector<ErrorCase> random_errors(DType dtype) {
  std::vector<ErrorCase> e;
  e.push_back({"integer dtype", [](Device d) { random::rand({3}, DType::I32, d); }, ErrorKind::Unsupported, "rand: dtype I32"});
  e.push_back({"randint float", [](Device d) { random::randint(0, 3, {3}, DType::F32, d); }, ErrorKind::Unsupported, "randint: dtype F32"});
  e.push_back({"randint empty range", [](Device d) { random::randint(3, 3, {3}, DType::I64, d); }, ErrorKind::InvalidArgument, "must be below"});
  e.push_back({"uniform_ from > to", [dtype](Device d) { random::uniform_(zeros({2}, dtype, d), 2, 1); }, ErrorKind::InvalidArgument, "from <= to"});
  e.push_back({"normal_ negative std", [dtype](Device d) { random::normal_(zeros({2}, dtype, d), 0, -1); }, ErrorKind::InvalidArgument, "std >= 0"});
  e.push_back({"bernoulli p > 1", [dtype](Device d) { random::bernoulli({2}, 1.5, dtype, d); }, ErrorKind::InvalidArgument, "p must be in [0, 1]"});
  e.push_back({"generator on another device", [dtype](Device d) {
                 random::Generator g(1, d.is_cpu() ? Device::cuda(0) : Device::cpu());
                 random::rand({2}, dtype, d, &g);
               }, ErrorKind::DeviceMismatch, "the generator belongs to"});
  e.push_back({"normal_ on a strided view", [dtype](Device d) { random::normal_(zeros({4, 2}, dtype, d).transpose(0, 1)); },
               ErrorKind::InvalidArgument, "contiguous"});
  return e;
}

// rand and uniform_(-2, 3): exact.
Entry rand_entry() {
  Entry e;
  e.op = "rand";
  e.dtypes = kFloats;
  e.cases = random_cases;
  e.run_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    random::Generator g = generator_for(c, x.device());
    Tensor a = random::rand(x.shape(), x.dtype(), x.device(), &g);
    Tensor b = x.clone();
    random::uniform_(b, -2, 3, &g);
    return std::vector<Tensor>{a, b};
  };
  e.reference_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    const DType d = x.dtype(), w = compute_of(d);
    const auto seed = static_cast<std::uint64_t>(c.ints[0]), offset = static_cast<std::uint64_t>(c.ints[1]);
    std::vector<LD> a(static_cast<std::size_t>(x.numel())), b(a.size());
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      a[i] = uniform_of(d, seed, offset, i);
      const LD u = uniform_of(d, seed, offset + 1, i);
      b[i] = rnd(w, rnd(w, 5 * u) - 2);
    }
    return std::vector<Tensor>{reference::from_values(a, x.shape(), d), reference::from_values(b, x.shape(), d)};
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = random_errors;
  return e;
}

// randn and normal_(1.5, 0.5): against libm's Box-Muller in long double.
Entry randn_entry() {
  Entry e;
  e.op = "randn";
  e.dtypes = kFloats;
  e.cases = random_cases;
  e.run_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    random::Generator g = generator_for(c, x.device());
    Tensor a = random::randn(x.shape(), x.dtype(), x.device(), &g);
    Tensor b = x.clone();
    random::normal_(b, 1.5, 0.5, &g);
    return std::vector<Tensor>{a, b};
  };
  e.reference_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    const DType d = x.dtype();
    const auto seed = static_cast<std::uint64_t>(c.ints[0]), offset = static_cast<std::uint64_t>(c.ints[1]);
    std::vector<LD> a(static_cast<std::size_t>(x.numel())), b(a.size());
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      a[i] = normal_of(d, seed, offset, i);
      b[i] = 1.5L + 0.5L * normal_of(d, seed, offset + 1, i);
    }
    return std::vector<Tensor>{reference::from_values(a, x.shape(), d), reference::from_values(b, x.shape(), d)};
  };
  e.reference_tolerance = normal_tolerance;
  e.backend_tolerance = exact;
  e.errors = random_errors;
  return e;
}

// randint over a small range, a range past 2^32 (I64) and a full-width one; bernoulli with a
// probability tensor and with one p. Exact.
Entry randint_entry() {
  Entry e;
  e.op = "randint";
  e.dtypes = {DType::I32, DType::I64};
  e.cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    for (Case c : random_cases(DType::F32, rng)) {
      c.inputs[0] = zeros(c.inputs[0].shape(), dtype);
      cases.push_back(c);
    }
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    random::Generator g = generator_for(c, x.device());
    const bool i64 = x.dtype() == DType::I64;
    std::vector<Tensor> out;
    out.push_back(random::randint(-5, 7, x.shape(), x.dtype(), x.device(), &g));
    out.push_back(i64 ? random::randint(-(std::int64_t{1} << 40), std::int64_t{1} << 40, x.shape(), x.dtype(), x.device(), &g)
                      : random::randint(std::numeric_limits<std::int32_t>::min(), std::int64_t{1} << 31, x.shape(),
                                        x.dtype(), x.device(), &g));
    return out;
  };
  e.reference_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    const DType d = x.dtype();
    const bool i64 = d == DType::I64;
    const auto seed = static_cast<std::uint64_t>(c.ints[0]), offset = static_cast<std::uint64_t>(c.ints[1]);
    std::vector<LD> a(static_cast<std::size_t>(x.numel())), b(a.size());
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      for (int k = 0; k < 2; ++k) {
        const Words r = philox(seed, offset + k, static_cast<std::uint64_t>(i64 ? i / 2 : i / 4));
        const std::uint64_t bits =
            i64 ? (std::uint64_t{r.w[2 * (i % 2)]} << 32) | r.w[2 * (i % 2) + 1] : r.w[i % 4];
        const LD low = k == 0 ? -5 : (i64 ? -LD(std::int64_t{1} << 40) : LD(std::numeric_limits<std::int32_t>::min()));
        const std::uint64_t range = k == 0 ? 12 : (i64 ? std::uint64_t{1} << 41 : std::uint64_t{1} << 32);
        (k == 0 ? a : b)[i] = low + static_cast<LD>(bits % range);
      }
    }
    return std::vector<Tensor>{reference::from_values(a, x.shape(), d), reference::from_values(b, x.shape(), d)};
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [](DType) { return std::vector<ErrorCase>{}; };
  return e;
}

Entry bernoulli_entry() {
  Entry e;
  e.op = "bernoulli";
  e.dtypes = kFloats;
  e.cases = random_cases;
  e.run_outputs = [](const Case& c) {
    const Tensor& probs = c.inputs[0];
    random::Generator g = generator_for(c, probs.device());
    Tensor a = random::bernoulli(probs, &g);
    Tensor b = random::bernoulli(probs.shape(), 0.25, probs.dtype(), probs.device(), &g);
    return std::vector<Tensor>{a, b};
  };
  e.reference_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    const DType d = x.dtype();
    const auto seed = static_cast<std::uint64_t>(c.ints[0]), offset = static_cast<std::uint64_t>(c.ints[1]);
    const auto p = reference::values(x);
    std::vector<LD> a(p.size()), b(p.size());
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      a[i] = uniform_of(d, seed, offset, i) < p[i] ? 1 : 0;
      b[i] = uniform_of(d, seed, offset + 1, i) < 0.25L ? 1 : 0;
    }
    return std::vector<Tensor>{reference::from_values(a, x.shape(), d), reference::from_values(b, x.shape(), d)};
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = random_errors;
  return e;
}

// ---- dropout ----
Entry dropout_entry() {
  Entry e;
  e.op = "dropout";
  e.dtypes = kFloats;
  e.cases = [](DType dtype, Rng& rng) {
    std::vector<Case> cases;
    const std::vector<double> ps = {0.0, 0.1, 0.5, 1.0};
    std::int64_t k = 0;
    for (const Shape& s : std::vector<Shape>{{0}, {1}, {6}, {3, 7}, {1001}, {100003}}) {
      Tensor x = random(s, dtype, rng);
      cases.push_back({"shape " + shape_str(s), {x, random(s, dtype, rng)}, {static_cast<std::int64_t>(rng() >> 1), k},
                       {ps[static_cast<std::size_t>(k) % ps.size()]}});
      ++k;
    }
    cases.push_back({"extremes", {extremes(dtype, 64, rng), random({64}, dtype, rng)}, {3, 9}, {0.5}});
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    random::Generator g = generator_for(c, x.device());
    const double p = c.reals[0];
    auto r = nn::dropout(x, p, &g);
    Tensor back = nn::dropout_backward(c.inputs[1], r.mask, p);
    return std::vector<Tensor>{r.output, r.mask, back};
  };
  e.reference_outputs = [](const Case& c) {
    const Tensor& x = c.inputs[0];
    const DType d = x.dtype(), w = compute_of(d);
    const double p = c.reals[0];
    const auto seed = static_cast<std::uint64_t>(c.ints[0]), offset = static_cast<std::uint64_t>(c.ints[1]);
    const auto xv = reference::values(x), gv = reference::values(c.inputs[1]);
    // The scale is 1 / (1 - p) in double (the front end's), then rounded to the compute type.
    const LD scale = p >= 1 ? 0 : rnd(w, static_cast<double>(1.0L / static_cast<LD>(1.0 - p)));
    const auto threshold = static_cast<std::uint32_t>(std::ceil(p * 16777216.0));
    std::vector<LD> out(xv.size()), mask(xv.size()), back(xv.size());
    for (std::size_t i = 0; i < xv.size(); ++i) {
      const Words r = philox(seed, offset, i / 4);
      const bool keep = (r.w[i % 4] >> 8) >= threshold;
      mask[i] = keep;
      // A long double product of two doubles may round twice on the way to F64: multiply in
      // double there (one IEEE rounding, as the definition says).
      const LD k = keep ? scale : 0;
      out[i] = w == DType::F64 ? static_cast<LD>(static_cast<double>(xv[i]) * static_cast<double>(k)) : rnd(w, xv[i] * k);
      back[i] = w == DType::F64 ? static_cast<LD>(static_cast<double>(gv[i]) * static_cast<double>(k)) : rnd(w, gv[i] * k);
    }
    return std::vector<Tensor>{reference::from_values(out, x.shape(), d), reference::from_values(mask, x.shape(), DType::Bool),
                               reference::from_values(back, x.shape(), d)};
  };
  e.reference_tolerance = exact;
  e.backend_tolerance = exact;
  e.errors = [](DType dtype) {
    std::vector<ErrorCase> v;
    v.push_back({"p > 1", [dtype](Device d) { nn::dropout(zeros({3}, dtype, d), 1.5); }, ErrorKind::InvalidArgument, "dropout: p must be in [0, 1]"});
    v.push_back({"integer x", [](Device d) { nn::dropout(zeros({3}, DType::I32, d), 0.5); }, ErrorKind::Unsupported, "dropout: dtype I32"});
    v.push_back({"mask not Bool", [dtype](Device d) { nn::dropout_backward(zeros({3}, dtype, d), zeros({3}, dtype, d), 0.5); },
                 ErrorKind::DTypeMismatch, "mask must be Bool"});
    v.push_back({"mask shape", [dtype](Device d) { nn::dropout_backward(zeros({3}, dtype, d), zeros({4}, DType::Bool, d), 0.5); },
                 ErrorKind::ShapeMismatch, "differ in shape"});
    return v;
  };
  return e;
}

FERRITE_CONFORMANCE(rand_entry());
FERRITE_CONFORMANCE(randn_entry());
FERRITE_CONFORMANCE(randint_entry());
FERRITE_CONFORMANCE(bernoulli_entry());
FERRITE_CONFORMANCE(dropout_entry());

}  // namespace
}  // namespace ferrite::conformance
