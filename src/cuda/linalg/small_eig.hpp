// The eigen-decomposition of one small general matrix (n <= kLargest) in complex double
// arithmetic, written once for the device kernel (small_eig.cu, one thread per matrix) and
// host tests: Householder reduction to Hessenberg form, single-shift complex QR with
// Wilkinson shifts and LAPACK's exceptional shifts (as zlahqr, full Schur form with the
// Schur vectors), then the eigenvectors of the triangular factor by back substitution (as
// ztrevc) mapped back through the Schur vectors and normalised as zgeev: unit 2-norm, the
// component of largest modulus real and positive.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define FERRITE_HD __host__ __device__
#else
#define FERRITE_HD
#endif

namespace ferrite::cuda::small_eig {

struct Cx {
  double re = 0, im = 0;
};
FERRITE_HD inline Cx cx(double re, double im = 0) { return Cx{re, im}; }
FERRITE_HD inline Cx operator+(Cx a, Cx b) { return {a.re + b.re, a.im + b.im}; }
FERRITE_HD inline Cx operator-(Cx a, Cx b) { return {a.re - b.re, a.im - b.im}; }
FERRITE_HD inline Cx operator-(Cx a) { return {-a.re, -a.im}; }
FERRITE_HD inline Cx operator*(Cx a, Cx b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
FERRITE_HD inline Cx operator*(double s, Cx a) { return {s * a.re, s * a.im}; }
FERRITE_HD inline Cx conj(Cx a) { return {a.re, -a.im}; }
FERRITE_HD inline double abs2(Cx a) { return a.re * a.re + a.im * a.im; }
FERRITE_HD inline double cabs(Cx a) { return hypot(a.re, a.im); }
FERRITE_HD inline double cabs1(Cx a) { return fabs(a.re) + fabs(a.im); }
// Smith's division (no overflow for moderate operands).
FERRITE_HD inline Cx operator/(Cx a, Cx b) {
  if (fabs(b.re) >= fabs(b.im)) {
    const double r = b.im / b.re, d = b.re + b.im * r;
    return {(a.re + a.im * r) / d, (a.im - a.re * r) / d};
  }
  const double r = b.re / b.im, d = b.im + b.re * r;
  return {(a.re * r + a.im) / d, (a.im * r - a.re) / d};
}
// Principal square root.
FERRITE_HD inline Cx csqrt(Cx a) {
  const double m = cabs(a);
  if (m == 0) return {0, 0};
  const double re = sqrt(0.5 * (m + fabs(a.re)));
  const double other = a.im / (2 * re);
  return a.re >= 0 ? Cx{re, other} : Cx{fabs(other), a.im >= 0 ? re : -re};
}

constexpr double kEps = 1.1102230246251565e-16;  // unit roundoff of double
constexpr double kSafeMin = 2.2250738585072014e-308;

constexpr int kLargest = 32;  // the largest n the batched kernel takes

/// Element e of an array that lives at p[e·stride]: the kernel interleaves the matrices of a
/// batch (element e of every thread's matrix side by side, so a warp's accesses coalesce, as
/// local memory's would, without reserving a large per-thread stack); host tests use 1.
struct Strided {
  Cx* p;
  std::int64_t stride;
  FERRITE_HD Cx& operator[](std::int64_t e) const { return p[e * stride]; }
};

/// Eigenvalues w[n] and (vectors) column-major eigenvectors v[n×n] of the column-major
/// matrix h[n×n] (destroyed; its upper triangle holds the Schur form afterwards). z is
/// scratch of n² (the Schur vectors), u and xs scratch of n each; v may be z itself (vector
/// k is formed from Schur vectors 0..k only, row by row, so it can replace Schur vector k:
/// they are computed from k = n - 1 down). Returns 0, or i + 1 when the QR iteration did not
/// converge for eigenvalue i (LAPACK's convention; outputs are then unspecified).
FERRITE_HD inline int solve(int n, Strided h, Strided z, Strided u, Strided xs, bool vectors, Strided w, Strided v) {
#define H(i, j) h[(i) + (j) * n]
#define Z(i, j) z[(i) + (j) * n]
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) Z(i, j) = cx(i == j ? 1 : 0);
  // ---- Hessenberg: reflector P = I - 2uuᴴ/(uᴴu) on rows/columns k+1.., A <- P A P, Z <- Z P.
  for (int k = 0; k + 2 < n; ++k) {
    double tail2 = 0;
    for (int i = k + 2; i < n; ++i) tail2 += abs2(H(i, k));
    if (tail2 == 0) continue;  // already zero below the subdiagonal
    const double alpha = sqrt(tail2 + abs2(H(k + 1, k)));
    const Cx x0 = H(k + 1, k);
    const double m0 = cabs(x0);
    const Cx phase = m0 > 0 ? (1.0 / m0) * x0 : cx(1);
    for (int i = k + 1; i < n; ++i) u[i] = H(i, k);
    u[k + 1] = u[k + 1] + alpha * phase;
    double unorm2 = 0;
    for (int i = k + 1; i < n; ++i) unorm2 += abs2(u[i]);
    if (unorm2 == 0) continue;
    const double scale = 2 / unorm2;
    for (int j = k; j < n; ++j) {  // left: rows k+1.. (columns < k are zero there)
      Cx s{};
      for (int i = k + 1; i < n; ++i) s = s + conj(u[i]) * H(i, j);
      s = scale * s;
      for (int i = k + 1; i < n; ++i) H(i, j) = H(i, j) - s * u[i];
    }
    for (int i = 0; i < n; ++i) {  // right: columns k+1..
      Cx s{}, t{};
      for (int j = k + 1; j < n; ++j) {
        s = s + H(i, j) * u[j];
        t = t + Z(i, j) * u[j];
      }
      s = scale * s;
      t = scale * t;
      for (int j = k + 1; j < n; ++j) {
        H(i, j) = H(i, j) - s * conj(u[j]);
        Z(i, j) = Z(i, j) - t * conj(u[j]);
      }
    }
    H(k + 1, k) = -alpha * phase;
    for (int i = k + 2; i < n; ++i) H(i, k) = cx(0);
  }
  // ---- Schur form: single-shift QR on the active block [lo, hi], Givens rotations applied
  // to the whole matrix (full Schur form) and to Z.
  const int max_its = 30 * (n > 10 ? n : 10);
  int its = 0;
  for (int hi = n - 1; hi > 0;) {
    int lo = hi;
    for (; lo > 0; --lo) {  // the last negligible subdiagonal entry
      const double sub = cabs1(H(lo, lo - 1));
      double near = cabs1(H(lo - 1, lo - 1)) + cabs1(H(lo, lo));
      if (near == 0) near = (lo >= 2 ? cabs1(H(lo - 1, lo - 2)) : 0) + (lo + 1 <= hi ? cabs1(H(lo + 1, lo)) : 0);
      if (sub <= kSafeMin * n || sub <= kEps * near) break;
    }
    if (lo > 0) H(lo, lo - 1) = cx(0);
    if (lo == hi) {  // a 1×1 block has converged
      --hi;
      its = 0;
      continue;
    }
    if (++its > max_its) return hi + 1;
    Cx shift;
    if (its == 10) {
      shift = H(lo, lo) + cx(0.75 * fabs(H(lo + 1, lo).re));
    } else if (its == 20) {
      shift = H(hi, hi) + cx(0.75 * fabs(H(hi, hi - 1).re));
    } else {  // Wilkinson: the eigenvalue of the trailing 2×2 nearer to its last entry
      const Cx a = H(hi - 1, hi - 1), b = H(hi - 1, hi), c = H(hi, hi - 1), d = H(hi, hi);
      const Cx half = 0.5 * (a - d);
      const Cx root = csqrt(half * half + b * c);
      const Cx mid = 0.5 * (a + d);
      const Cx e1 = mid + root, e2 = mid - root;
      shift = cabs1(e1 - d) <= cabs1(e2 - d) ? e1 : e2;
    }
    Cx x = H(lo, lo) - shift, y = H(lo + 1, lo);
    for (int k = lo; k < hi; ++k) {
      if (k > lo) {
        x = H(k, k - 1);
        y = H(k + 1, k - 1);
      }
      // G = [c s; -s̄ c] with G·[x; y] = [r; 0], c real.
      const double mx = cabs(x), norm = hypot(mx, cabs(y));
      if (norm == 0) continue;
      const Cx px = mx > 0 ? (1.0 / mx) * x : cx(1);
      const double c = mx / norm;
      const Cx s = (1.0 / norm) * (px * conj(y));
      for (int j = (k > lo ? k - 1 : lo); j < n; ++j) {
        const Cx t1 = H(k, j), t2 = H(k + 1, j);
        H(k, j) = c * t1 + s * t2;
        H(k + 1, j) = c * t2 - conj(s) * t1;
      }
      const int last = k + 2 < hi ? k + 2 : hi;
      for (int i = 0; i <= last; ++i) {
        const Cx t1 = H(i, k), t2 = H(i, k + 1);
        H(i, k) = c * t1 + t2 * conj(s);
        H(i, k + 1) = c * t2 - t1 * s;
      }
      for (int i = 0; i < n; ++i) {
        const Cx t1 = Z(i, k), t2 = Z(i, k + 1);
        Z(i, k) = c * t1 + t2 * conj(s);
        Z(i, k + 1) = c * t2 - t1 * s;
      }
      if (k > lo) H(k + 1, k - 1) = cx(0);
    }
  }
  for (int i = 0; i < n; ++i) w[i] = H(i, i);
  if (!vectors) return 0;
  // ---- eigenvectors: T·x = λ_k·x with x[k] = 1, x[> k] = 0 by back substitution (a
  // perturbed pivot where eigenvalues coincide, rescaling against overflow), then v = Z·x.
  double tnorm = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= j; ++i) tnorm = fmax(tnorm, cabs1(H(i, j)));
  for (int k = n - 1; k >= 0; --k) {
    const Cx lambda = H(k, k);
    const double smin = fmax(kEps * fmax(cabs1(lambda), tnorm), kSafeMin * 1e10);
    for (int i = 0; i < n; ++i) xs[i] = cx(i == k ? 1 : 0);
    for (int i = k - 1; i >= 0; --i) {
      Cx sum{};
      for (int j = i + 1; j <= k; ++j) sum = sum + H(i, j) * xs[j];
      Cx pivot = H(i, i) - lambda;
      if (cabs1(pivot) < smin) pivot = cx(smin);
      xs[i] = -(sum / pivot);
      const double big = cabs1(xs[i]);
      if (big > 1e100) {
        const double shrink = 1 / big;
        for (int j = i; j <= k; ++j) xs[j] = shrink * xs[j];
      }
    }
    const Strided col{&v[std::int64_t(k) * n], v.stride};
    double norm2 = 0;
    for (int i = 0; i < n; ++i) {
      Cx sum{};
      for (int j = 0; j <= k; ++j) sum = sum + Z(i, j) * xs[j];
      col[i] = sum;
    }
    double largest = 0;
    for (int i = 0; i < n; ++i) largest = fmax(largest, cabs(col[i]));
    if (largest > 0)
      for (int i = 0; i < n; ++i) col[i] = (1 / largest) * col[i];  // scale first: no overflow in the norm
    int top = 0;
    double top2 = -1;
    for (int i = 0; i < n; ++i) {
      const double m2 = abs2(col[i]);
      norm2 += m2;
      if (m2 > top2) {
        top2 = m2;
        top = i;
      }
    }
    // Unit norm, and the largest component (the first of equals, as LAPACK's idamax) real.
    const double inv = norm2 > 0 ? 1 / sqrt(norm2) : 0;
    const Cx rot = top2 > 0 ? (1 / sqrt(top2)) * conj(col[top]) : cx(1);
    for (int i = 0; i < n; ++i) col[i] = inv * (col[i] * rot);
    col[top].im = 0;
  }
  return 0;
#undef H
#undef Z
}

}  // namespace ferrite::cuda::small_eig
