// The batched small-matrix eig of the CUDA backend (src/cuda/linalg/small_eig.hpp) is plain
// C++ shared with the device kernel, so its algorithm is checked here on the host, with the
// kernel's interleaved (strided) layout: residual A·v = λ·v, unit-norm vectors whose largest
// component is real and positive, exact eigenvalues of triangular matrices, defective and
// degenerate matrices, the values-only path, and eigenvectors written over the Schur vectors.
// The conformance entry linalg.eig runs the kernel itself on a GPU against the CPU backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "cuda/linalg/small_eig.hpp"

namespace ferrite::cuda::small_eig {
namespace {

using Z = std::complex<double>;

struct Result {
  int info = 0;
  std::vector<Z> w, v;  // v column-major
};

// Runs solve() on a column-major matrix with every array at stride 3 (garbage in between).
Result run(const std::vector<Z>& a, int n, bool vectors, bool v_over_z) {
  constexpr int kStride = 3;
  const std::size_t nn = static_cast<std::size_t>(n) * n;
  std::vector<Cx> h(nn * kStride, cx(7, 7)), z(nn * kStride, cx(5, 5)), u(n * kStride, cx(9)), x(n * kStride, cx(9)),
      w(n * kStride), v(nn * kStride);
  for (std::size_t e = 0; e < nn; ++e) h[e * kStride] = cx(a[e].real(), a[e].imag());
  const Strided vs{v_over_z ? z.data() : v.data(), kStride};
  Result r;
  r.info = solve(n, {h.data(), kStride}, {z.data(), kStride}, {u.data(), kStride}, {x.data(), kStride}, vectors,
                 {w.data(), kStride}, vs);
  for (int i = 0; i < n; ++i) r.w.emplace_back(w[i * kStride].re, w[i * kStride].im);
  if (vectors)
    for (std::size_t e = 0; e < nn; ++e) r.v.emplace_back(vs[e].re, vs[e].im);
  return r;
}

// Checks one matrix; returns the residual max|A·v - λ·v| in units of n·ε·max|A|.
double check(const std::vector<Z>& a, int n) {
  const Result r = run(a, n, true, false);
  EXPECT_EQ(r.info, 0);
  double scale = 1e-300;
  for (const Z& x : a) scale = std::max(scale, std::abs(x));
  double residual = 0;
  for (int k = 0; k < n; ++k) {
    double norm2 = 0, largest = 0;
    for (int i = 0; i < n; ++i) {
      Z av = 0;
      for (int j = 0; j < n; ++j) av += a[i + j * n] * r.v[j + k * n];
      residual = std::max(residual, std::abs(av - r.w[k] * r.v[i + k * n]));
      norm2 += std::norm(r.v[i + k * n]);
      largest = std::max(largest, std::abs(r.v[i + k * n]));
    }
    EXPECT_NEAR(std::sqrt(norm2), 1.0, 1e-13);
    bool real_top = false;  // some component of the largest modulus is real and positive
    for (int i = 0; i < n; ++i) {
      const Z c = r.v[i + k * n];
      real_top = real_top || (std::abs(c) >= largest * (1 - 1e-12) && c.imag() == 0 && c.real() > 0);
    }
    EXPECT_TRUE(real_top) << "vector " << k;
  }
  // Values only: the same eigenvalues, bit for bit; eigenvectors over the Schur vectors: the same bits.
  const Result values = run(a, n, false, false), aliased = run(a, n, true, true);
  EXPECT_EQ(values.w, r.w);
  EXPECT_EQ(aliased.v, r.v);
  return residual / (scale * n * kEps * 2);
}

TEST(SmallEig, RandomRealAndComplexMatrices) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> d(-1, 1);
  for (int n : {1, 2, 3, 4, 5, 8, 16, 17, 32}) {
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<Z> a(static_cast<std::size_t>(n) * n);
      for (Z& x : a) x = Z(d(rng), trial % 2 ? d(rng) : 0.0);
      EXPECT_LT(check(a, n), 100) << "n=" << n << " trial " << trial;
    }
  }
}

TEST(SmallEig, TriangularMatricesGiveTheirDiagonal) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<double> d(-1, 1);
  for (int n : {3, 8, 16}) {
    std::vector<Z> a(static_cast<std::size_t>(n) * n), diag;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i <= j; ++i) a[i + j * n] = Z(d(rng), d(rng));
    for (int i = 0; i < n; ++i) diag.push_back(a[i + i * n]);
    EXPECT_LT(check(a, n), 100);
    std::vector<Z> w = run(a, n, false, false).w;
    auto order = [](const Z& p, const Z& q) { return p.real() != q.real() ? p.real() < q.real() : p.imag() < q.imag(); };
    std::sort(w.begin(), w.end(), order);
    std::sort(diag.begin(), diag.end(), order);
    for (int i = 0; i < n; ++i) EXPECT_LT(std::abs(w[i] - diag[i]), 1e-14) << "n=" << n;
  }
}

TEST(SmallEig, DegenerateAndDefectiveMatrices) {
  for (int n : {1, 2, 5, 16, 32}) {
    const std::size_t nn = static_cast<std::size_t>(n) * n;
    std::vector<Z> zero(nn), identity(nn), jordan(nn), cycle(nn), rotations(nn), huge(nn);
    for (int i = 0; i < n; ++i) {
      identity[i + i * n] = 1;
      jordan[i + i * n] = 2;
      if (i + 1 < n) jordan[i + (i + 1) * n] = 1;
      cycle[(i + 1) % n + i * n] = 1;  // a cyclic permutation: the n-th roots of unity
      huge[i + i * n] = 1e150 * (i + 1);
      if (i + 1 < n) huge[i + 1 + i * n] = -3e150;
    }
    for (int i = 0; i + 1 < n; i += 2) {
      rotations[i + (i + 1) * n] = 1;
      rotations[i + 1 + i * n] = -1;
    }
    EXPECT_LT(check(zero, n), 100) << "zero n=" << n;
    EXPECT_LT(check(identity, n), 100) << "identity n=" << n;
    EXPECT_LT(check(jordan, n), 100) << "Jordan block n=" << n;
    EXPECT_LT(check(cycle, n), 100) << "cyclic permutation n=" << n;
    EXPECT_LT(check(rotations, n), 100) << "plane rotations n=" << n;
    EXPECT_LT(check(huge, n), 100) << "entries near 1e150 n=" << n;
    for (const Z& w : run(cycle, n, false, false).w) EXPECT_NEAR(std::abs(w), 1.0, 1e-13) << "n=" << n;
  }
}

}  // namespace
}  // namespace ferrite::cuda::small_eig
