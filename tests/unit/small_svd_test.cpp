// The batched small-matrix SVD of the CUDA backend (src/cuda/linalg/small_svd.hpp) is one
// warp's code written against a Warp policy, so its algorithm is checked here on the host
// with 32 lanes emulated by threads (shuffles, votes and syncs through a barrier): the
// residual U·diag(S)·Vh = A, orthonormal U (thin and full) and Vh, descending singular values
// against a long-double Jacobi reference, zero and repeated singular values, 1×1, scaling of
// tiny and huge entries, row-graded input, Inf/NaN input, the values-only path and bitwise
// determinism. The conformance entry linalg.svd runs the kernel itself on a GPU against the
// CPU backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <barrier>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "cuda/linalg/small_svd.hpp"

namespace ferrite::cuda::small_svd {
namespace {

using LD = long double;

// 32 lanes as threads; every cross-lane step is a barrier-separated exchange of 8-byte slots.
struct Lanes {
  std::barrier<> bar{32};
  std::array<std::uint64_t, 32> slot{};
};

struct HostWarp {
  Lanes* l;
  int id;
  int lane() const { return id; }
  template <class V>
  V exchange(V v, int src) {
    static_assert(sizeof(V) <= 8);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(V));
    l->slot[id] = bits;
    l->bar.arrive_and_wait();
    V out;
    std::memcpy(&out, &l->slot[src], sizeof(V));
    l->bar.arrive_and_wait();
    return out;
  }
  template <class V>
  V shfl_xor(V v, int offset) { return exchange(v, id ^ offset); }
  template <class V>
  V shfl(V v, int src) { return exchange(v, src); }
  unsigned ballot(bool p) {
    l->slot[id] = p;
    l->bar.arrive_and_wait();
    unsigned mask = 0;
    for (int i = 0; i < 32; ++i) mask |= static_cast<unsigned>(l->slot[i] != 0) << i;
    l->bar.arrive_and_wait();
    return mask;
  }
  bool any(bool p) { return ballot(p) != 0; }
  void sync() { l->bar.arrive_and_wait(); }
};

template <class T>
struct Result {
  std::vector<T> u, s, vh, s_only;
  int info = -1, info_only = -1;
};

template <class T, int NP>
void solve_np(HostWarp& w, const T* a, int m, int n, bool full, bool vectors, T* u, T* s, T* vh, int* info, T* as,
              T* vs, int* perm) {
  solve<T, NP>(w, a, m, n, full, vectors, u, s, vh, info, as, vs, perm);
}

// Runs solve() as the kernel does (NP from n), once with vectors and once without.
template <class T>
Result<T> run(const std::vector<T>& a, int m, int n, bool full) {
  const int ucols = full ? m : n;
  Result<T> r;
  r.u.assign(static_cast<std::size_t>(m) * ucols, T(-7));
  r.s.assign(n, T(-7));
  r.s_only.assign(n, T(-7));
  r.vh.assign(static_cast<std::size_t>(n) * n, T(-7));
  auto* fn = n <= 2 ? &solve_np<T, 1> : n <= 4 ? &solve_np<T, 2> : n <= 8 ? &solve_np<T, 4>
           : n <= 16 ? &solve_np<T, 8> : &solve_np<T, 16>;
  for (int pass = 0; pass < 2; ++pass) {
    const bool vectors = pass == 0;
    // Garbage in the tiles: solve() must initialise what it reads.
    std::vector<T> as_tile(kTileElements, T(99)), vs_tile(kTileElements, T(99));
    T* at = as_tile.data();
    T* vt = vs_tile.data();
    std::array<int, 32> perm{};
    Lanes lanes;
    std::vector<std::thread> threads;
    for (int id = 0; id < 32; ++id)
      threads.emplace_back([&, id] {
        HostWarp w{&lanes, id};
        fn(w, a.data(), m, n, full, vectors, vectors ? r.u.data() : nullptr, vectors ? r.s.data() : r.s_only.data(),
           vectors ? r.vh.data() : nullptr, vectors ? &r.info : &r.info_only, at, vt, perm.data());
      });
    for (auto& t : threads) t.join();
  }
  return r;
}

// Singular values by cyclic one-sided Jacobi in long double (descending).
std::vector<LD> reference_values(const std::vector<double>& a, int m, int n) {
  std::vector<LD> x(a.begin(), a.end());
  for (int sweep = 0; sweep < 80; ++sweep) {
    bool rotated = false;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        LD al = 0, be = 0, ga = 0;
        for (int i = 0; i < m; ++i) {
          const LD xp = x[i + p * m], xq = x[i + q * m];
          al += xp * xp, be += xq * xq, ga += xp * xq;
        }
        if (ga == 0 || std::fabs(ga) <= 1e-18L * std::sqrt(al) * std::sqrt(be)) continue;
        rotated = true;
        const LD z = (be - al) / (2 * ga), t = (z >= 0 ? 1 : -1) / (std::fabs(z) + std::sqrt(1 + z * z));
        const LD c = 1 / std::sqrt(1 + t * t), s = c * t;
        for (int i = 0; i < m; ++i) {
          const LD xp = x[i + p * m], xq = x[i + q * m];
          x[i + p * m] = c * xp - s * xq, x[i + q * m] = s * xp + c * xq;
        }
      }
    if (!rotated) break;
  }
  std::vector<LD> s(n);
  for (int j = 0; j < n; ++j) {
    LD t = 0;
    for (int i = 0; i < m; ++i) t += x[i + j * m] * x[i + j * m];
    s[j] = std::sqrt(t);
  }
  std::sort(s.begin(), s.end(), std::greater<LD>());
  return s;
}

// Checks one matrix (column-major, values exactly representable in T) in units of ε·max(m, n).
template <class T>
void check(const std::vector<double>& a64, int m, int n, bool full, const std::string& what) {
  SCOPED_TRACE(what + " " + std::to_string(m) + "x" + std::to_string(n) + (full ? " full" : " thin") +
               (sizeof(T) == 4 ? " F32" : " F64"));
  const std::vector<T> a(a64.begin(), a64.end());
  const Result<T> r = run<T>(a, m, n, full);
  const int ucols = full ? m : n;
  const LD eps = std::numeric_limits<T>::epsilon(), unit = eps * std::max(m, n);
  ASSERT_EQ(r.info, 0);
  ASSERT_EQ(r.info_only, 0);
  LD amax = 0;
  for (double x : a64) amax = std::max<LD>(amax, std::fabs(x));
  // U·diag(S)·Vh = A
  LD rec = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      LD x = 0;
      for (int k = 0; k < n; ++k) x += static_cast<LD>(r.u[i + k * m]) * r.s[k] * r.vh[k + j * n];
      rec = std::max(rec, std::fabs(x - static_cast<LD>(a[i + j * m])));
    }
  EXPECT_LE(rec, 10 * unit * std::max<LD>(amax, std::numeric_limits<LD>::min())) << "reconstruction";
  LD orth_u = 0, orth_v = 0;
  for (int i = 0; i < ucols; ++i)
    for (int j = 0; j < ucols; ++j) {
      LD x = 0;
      for (int k = 0; k < m; ++k) x += static_cast<LD>(r.u[k + i * m]) * r.u[k + j * m];
      orth_u = std::max(orth_u, std::fabs(x - (i == j ? 1 : 0)));
    }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      LD x = 0;
      for (int k = 0; k < n; ++k) x += static_cast<LD>(r.vh[i + k * n]) * r.vh[j + k * n];
      orth_v = std::max(orth_v, std::fabs(x - (i == j ? 1 : 0)));
    }
  EXPECT_LE(orth_u, 10 * unit) << "U orthonormal";
  EXPECT_LE(orth_v, 10 * unit) << "Vh orthonormal";
  const std::vector<LD> ref = reference_values(std::vector<double>(a.begin(), a.end()), m, n);
  for (int j = 0; j < n; ++j) {
    if (j > 0) {
      EXPECT_LE(r.s[j], r.s[j - 1]) << "descending at " << j;
    }
    EXPECT_NEAR(static_cast<double>(r.s[j]), static_cast<double>(ref[j]), static_cast<double>(4 * unit * ref[0]))
        << "singular value " << j;
    // The values-only path runs the same sweeps: the same bits.
    EXPECT_EQ(r.s[j], r.s_only[j]) << "values-only singular value " << j;
  }
}

std::vector<double> random_matrix(int m, int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> a(static_cast<std::size_t>(m) * n);
  for (double& x : a) x = static_cast<float>(d(rng));  // exact in F32 and F64
  return a;
}

TEST(SmallSvd, RandomShapes) {
  std::mt19937_64 rng(1);
  const std::vector<std::array<int, 2>> shapes = {{1, 1}, {2, 1}, {2, 2}, {3, 3}, {5, 3}, {7, 5}, {8, 8},
                                                  {12, 12}, {20, 9}, {16, 16}, {32, 17}, {32, 32}, {32, 1}};
  for (const auto& [m, n] : shapes)
    for (int full = 0; full < 2; ++full) {
      const std::vector<double> a = random_matrix(m, n, rng);
      check<float>(a, m, n, full != 0, "random");
      check<double>(a, m, n, full != 0, "random");
    }
}

TEST(SmallSvd, RankDeficientAndRepeated) {
  std::mt19937_64 rng(2);
  for (const auto& [m, n] : std::vector<std::array<int, 2>>{{6, 4}, {32, 7}, {12, 12}, {32, 32}}) {
    std::vector<double> a = random_matrix(m, n, rng);
    // Zero first column, last column a copy of the second.
    for (int i = 0; i < m; ++i) a[i] = 0, a[i + (n - 1) * m] = a[i + m];
    for (int full = 0; full < 2; ++full) {
      check<float>(a, m, n, full != 0, "zero and duplicate columns");
      check<double>(a, m, n, full != 0, "zero and duplicate columns");
    }
    // diag(B, B): every singular value twice.
    const std::vector<double> b = random_matrix(m / 2, n / 2, rng);
    std::vector<double> d(static_cast<std::size_t>(m) * n, 0.0);
    for (int i = 0; i < m / 2; ++i)
      for (int j = 0; j < n / 2; ++j) d[i + j * m] = d[(m / 2 + i) + (n / 2 + j) * m] = b[i + j * (m / 2)];
    check<float>(d, m, n, true, "repeated");
    check<double>(d, m, n, false, "repeated");
    // Rank one, and the zero matrix.
    std::vector<double> r1(static_cast<std::size_t>(m) * n);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) r1[i + j * m] = (i % 3 - 1) * 0.5 * (j % 4 + 1);
    check<float>(r1, m, n, true, "rank one");
    check<double>(r1, m, n, true, "rank one");
    check<float>(std::vector<double>(static_cast<std::size_t>(m) * n, 0.0), m, n, true, "zero");
  }
  check<double>({0.0}, 1, 1, true, "zero 1x1");
  check<float>({-3.0}, 1, 1, false, "negative 1x1");
}

TEST(SmallSvd, ScaledEntries) {
  // Scaling by a power of two keeps squares in range: F32 entries near 1e±30 still work.
  std::mt19937_64 rng(3);
  std::vector<double> a = random_matrix(9, 6, rng);
  for (double scale : {0x1p-100, 0x1p100}) {
    std::vector<double> b = a;
    for (double& x : b) x *= scale;
    check<float>(b, 9, 6, true, "scaled");
    check<double>(b, 9, 6, false, "scaled");
  }
}

TEST(SmallSvd, GradedRows) {
  // Rows scaled by 1 .. 1e-7: one-sided Jacobi's slowest kind of input (17 sweeps at 32×32).
  std::mt19937_64 rng(5);
  std::vector<double> a = random_matrix(32, 32, rng);
  for (int j = 0; j < 32; ++j)
    for (int i = 0; i < 32; ++i) a[i + j * 32] = static_cast<float>(a[i + j * 32] * std::pow(10.0, -(i % 8)));
  check<float>(a, 32, 32, true, "graded rows");
  check<double>(a, 32, 32, true, "graded rows");
}

TEST(SmallSvd, NonFiniteInput) {
  // Inf/NaN anywhere: info = n + 1 and finite outputs (solved as the zero matrix), both paths.
  for (double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    std::mt19937_64 rng(6);
    std::vector<double> a = random_matrix(7, 5, rng);
    a[3 + 2 * 7] = bad;
    const std::vector<float> af(a.begin(), a.end());
    const Result<float> r = run<float>(af, 7, 5, true);
    EXPECT_EQ(r.info, 6);
    EXPECT_EQ(r.info_only, 6);
    for (float x : r.s) EXPECT_EQ(x, 0.0f);
    for (float x : r.u) EXPECT_TRUE(std::isfinite(x));
    const std::vector<double> ad(a.begin(), a.end());
    EXPECT_EQ(run<double>(ad, 7, 5, false).info, 6);
  }
}

TEST(SmallSvd, Deterministic) {
  std::mt19937_64 rng(4);
  const std::vector<double> a64 = random_matrix(32, 32, rng);
  const std::vector<float> a(a64.begin(), a64.end());
  const Result<float> r1 = run<float>(a, 32, 32, true), r2 = run<float>(a, 32, 32, true);
  EXPECT_EQ(r1.u, r2.u);
  EXPECT_EQ(r1.s, r2.s);
  EXPECT_EQ(r1.vh, r2.vh);
}

}  // namespace
}  // namespace ferrite::cuda::small_svd
