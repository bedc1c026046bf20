// The SVD of one small real matrix (n <= m <= 32) by one warp: the one-sided Jacobi method
// (Hestenes), the matrix and V in two tiles of shared memory. Written once for the device
// kernel (small_svd.cu) and host tests (tests/unit/small_svd_test.cpp), which run it with 32
// emulated lanes: every cross-lane step goes through the Warp policy (lane id, xor and
// indexed shuffles, any, ballot, sync), and every lane calls them in the same order.
//
// Each round pairs all columns at once (round-robin: position N - 1 fixed, pairs
// {(r + k) mod (N - 1), (r - k) mod (N - 1)}, k = 1 .. N/2 - 1, so N - 1 rounds meet every
// pair once per sweep). A column pair belongs to a group of 32/NP consecutive lanes, each
// holding a contiguous block of rows: the three dot products α = |a_p|², β = |a_q|²,
// γ = a_p·a_q are per-lane sums reduced by an xor butterfly (bitwise the same on every lane
// of the group, so all of them take the same decision), and the rotation that zeroes γ (the
// stable formulas: ζ = (β - α)/(2γ), t = sign(ζ)/(|ζ| + √(1 + ζ²)), c = 1/√(1 + t²),
// s = c·t) is applied to a_p, a_q and to V's columns. A sweep without any rotation ends the
// iteration. Fixed order, no atomics: the results are deterministic.
//
// Tolerance: a pair is rotated while |γ| > ε·√α·√β (ε of the dtype; the relative criterion
// keeps small singular values accurate too). Measured with the unit test's host emulation:
// random 32×32 matrices converge in 8-10 sweeps, 2×2 in 2-3; √m·ε (LAPACK's gesvj) would
// save about half a sweep. Row-graded 32×32 matrices (rows scaled by up to 1e-7) take 17.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define FERRITE_SVD_HD __host__ __device__
#else
#define FERRITE_SVD_HD
#endif
// The per-lane row arrays must stay in registers: fully unrolled loops (device code only;
// host compilers warn about the pragma).
#if defined(__CUDA_ARCH__)
#define FERRITE_SVD_UNROLL _Pragma("unroll")
#else
#define FERRITE_SVD_UNROLL
#endif

namespace ferrite::cuda::small_svd {

// On the host, <cmath> declares the float overloads of these in std only: unqualified, a
// float argument would resolve to the global double function, so the host tests would run
// F32 steps (the convergence test, the rotation) in double and not check what the device
// computes. Device code keeps CUDA's global float overloads.
#if !defined(__CUDA_ARCH__)
using std::copysign;
using std::fabs;
using std::fmax;
using std::sqrt;
#endif

constexpr int kLargest = 32;  // the largest m (and n) the kernel takes
// Beyond this many sweeps a matrix counts as not converged (info = n + 1; the front end then
// reruns the whole call with the accurate driver, one gesvd per matrix: far slower than a
// few more sweeps of the matrices that need them, which cost the others nothing).
constexpr int kMaxSweeps = 60;
// Tiles: 32 columns of kLd elements. F32 columns are 36 floats apart, so a warp's 16-byte
// accesses to 4 consecutive columns (the pairs of neighbouring lane groups) hit distinct
// banks; F64 inserts 2 doubles after row 15 so that the two row halves of one column (the
// two lanes of a group for n > 16) fall on different banks too.
constexpr int kLd = 36;
constexpr int kTileElements = 32 * kLd;

template <class T>
struct Limits;
template <>
struct Limits<float> {
  static constexpr float eps = FLT_EPSILON;
  // Columns with |a|² below this (the matrix scaled to max |a| in [1, 2)) count as zero:
  // their squares would be subnormal and their direction unreliable. They are never rotated
  // and their U column is completed to an orthonormal basis instead.
  static constexpr float tiny = FLT_MIN / FLT_EPSILON;
  static constexpr float big = 2896.3f;  // 1/√ε: beyond it √(1 + ζ²) = |ζ|, t = 1/(2ζ)
};
template <>
struct Limits<double> {
  static constexpr double eps = DBL_EPSILON;
  static constexpr double tiny = DBL_MIN / DBL_EPSILON;
  static constexpr double big = 67108864.0;
};

FERRITE_SVD_HD inline int ilog(float x) { return ilogbf(x); }
FERRITE_SVD_HD inline int ilog(double x) { return ilogb(x); }
FERRITE_SVD_HD inline float scale2(float x, int e) { return scalbnf(x, e); }
FERRITE_SVD_HD inline double scale2(double x, int e) { return scalbn(x, e); }

// x - x is 0 for finite x, NaN for ±Inf and NaN (no isfinite overload set needed).
template <class T>
FERRITE_SVD_HD inline bool finite(T x) {
  return x - x == 0;
}

// Offset of (column pos, row) in a tile.
template <class T>
FERRITE_SVD_HD inline int at(int pos, int row) {
  return pos * kLd + row + (sizeof(T) == 8 ? (row >> 4) * 2 : 0);
}

// R contiguous elements from/to a 16-byte aligned tile address: on the device in 16-byte
// accesses where possible, on the host one by one (no CUDA headers needed there).
#if defined(__CUDA_ARCH__)
template <int R>
__device__ inline void load(const float* p, float (&x)[R]) {
  if constexpr (R % 4 == 0) {
    FERRITE_SVD_UNROLL
    for (int i = 0; i < R / 4; ++i) {
      const float4 v = reinterpret_cast<const float4*>(p)[i];
      x[4 * i] = v.x, x[4 * i + 1] = v.y, x[4 * i + 2] = v.z, x[4 * i + 3] = v.w;
    }
  } else if constexpr (R == 2) {
    const float2 v = *reinterpret_cast<const float2*>(p);
    x[0] = v.x, x[1] = v.y;
  } else {
    x[0] = p[0];
  }
}
template <int R>
__device__ inline void store(float* p, const float (&x)[R]) {
  if constexpr (R % 4 == 0) {
    FERRITE_SVD_UNROLL
    for (int i = 0; i < R / 4; ++i)
      reinterpret_cast<float4*>(p)[i] = make_float4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
  } else if constexpr (R == 2) {
    *reinterpret_cast<float2*>(p) = make_float2(x[0], x[1]);
  } else {
    p[0] = x[0];
  }
}
template <int R>
__device__ inline void load(const double* p, double (&x)[R]) {
  if constexpr (R % 2 == 0) {
    FERRITE_SVD_UNROLL
    for (int i = 0; i < R / 2; ++i) {
      const double2 v = reinterpret_cast<const double2*>(p)[i];
      x[2 * i] = v.x, x[2 * i + 1] = v.y;
    }
  } else {
    x[0] = p[0];
  }
}
template <int R>
__device__ inline void store(double* p, const double (&x)[R]) {
  if constexpr (R % 2 == 0) {
    FERRITE_SVD_UNROLL
    for (int i = 0; i < R / 2; ++i) reinterpret_cast<double2*>(p)[i] = make_double2(x[2 * i], x[2 * i + 1]);
  } else {
    p[0] = x[0];
  }
}
#else
template <int R, class T>
inline void load(const T* p, T (&x)[R]) {
  for (int i = 0; i < R; ++i) x[i] = p[i];
}
template <int R, class T>
inline void store(T* p, const T (&x)[R]) {
  for (int i = 0; i < R; ++i) p[i] = x[i];
}
#endif

// (x, y) <- (c·x - s·y, s·x + c·y) for R rows.
template <class T, int R>
FERRITE_SVD_HD inline void rotate(T (&x)[R], T (&y)[R], T c, T s) {
  FERRITE_SVD_UNROLL
  for (int i = 0; i < R; ++i) {
    const T xi = x[i], yi = y[i];
    x[i] = c * xi - s * yi;
    y[i] = s * xi + c * yi;
  }
}

template <class T, class Warp>
FERRITE_SVD_HD inline T warp_sum(Warp& w, T x) {
  FERRITE_SVD_UNROLL
  for (int off = 16; off > 0; off >>= 1) x += w.shfl_xor(x, off);
  return x;
}

/// Called by all 32 lanes of a warp for one matrix. NP: column pairs per round (N = 2·NP >= n
/// tile columns; those beyond n are zero and never rotate); each pair has LPP = 32/NP lanes
/// holding R = 32/LPP rows of A and RV rows of V (N×N). a: m×n column-major (read only);
/// s[n] descending; with `vectors`, u m×ucols (ucols = m if `full` else n) and vh n×n (Vᴴ),
/// column-major; *info = 0, or n + 1 for input holding Inf/NaN (then solved as the zero
/// matrix, so no iteration runs on NaN) or when the sweeps did not converge (outputs then
/// unspecified). as, vs: tiles of kTileElements (16-byte aligned), perm: 32 ints, all shared
/// by the warp's lanes.
template <class T, int NP, class Warp>
FERRITE_SVD_HD void solve(Warp& w, const T* a, int m, int n, bool full, bool vectors, T* u, T* s, T* vh, int* info,
                          T* as, T* vs, int* perm) {
  constexpr int N = 2 * NP, M = N - 1, LPP = 32 / NP, R = 32 / LPP;
  constexpr int RV = NP * NP / 16 > 0 ? NP * NP / 16 : 1;  // N rows over LPP lanes (at least 1)
  const int lane = w.lane(), group = lane / LPP, sub = lane % LPP;
  const T tol = Limits<T>::eps;
  const T tiny = Limits<T>::tiny;
  const int ucols = full ? m : n;

  // ---- load (lane = row), V = I; scaled by a power of two (exact) to max |a| in [1, 2), so
  // that no square over- or underflows for ordinary magnitudes.
  T amax = 0;
  bool all_finite = true;
  for (int pos = 0; pos < N; ++pos) {
    const T x = pos < n && lane < m ? a[lane + pos * m] : T(0);
    as[at<T>(pos, lane)] = x;
    vs[at<T>(pos, lane)] = pos == lane ? T(1) : T(0);
    amax = fmax(amax, fabs(x));
    all_finite = all_finite && finite(x);
  }
  FERRITE_SVD_UNROLL
  for (int off = 16; off > 0; off >>= 1) amax = fmax(amax, w.shfl_xor(amax, off));
  const bool nonfinite = w.any(!all_finite);
  const int e = amax > 0 && !nonfinite ? ilog(amax) : 0;
  for (int pos = 0; pos < N; ++pos)
    as[at<T>(pos, lane)] = nonfinite ? T(0) : scale2(as[at<T>(pos, lane)], -e);
  w.sync();

  // ---- sweeps
  bool converged = false;
  for (int sweep = 0; sweep < kMaxSweeps && !converged; ++sweep) {
    bool rotated = false;
    for (int r = 0; r < M; ++r) {
      const int p = group == 0 ? M : (r + group) % M;
      const int q = group == 0 ? r : (r - group + M) % M;
      T ap[R], aq[R];
      load<R>(&as[at<T>(p, sub * R)], ap);
      load<R>(&as[at<T>(q, sub * R)], aq);
      // Two partial sums each: shorter dependency chains.
      T al0 = 0, al1 = 0, be0 = 0, be1 = 0, ga0 = 0, ga1 = 0;
      FERRITE_SVD_UNROLL
      for (int i = 0; i < R; i += 2) {
        al0 += ap[i] * ap[i], be0 += aq[i] * aq[i], ga0 += ap[i] * aq[i];
        if (i + 1 < R) al1 += ap[i + 1] * ap[i + 1], be1 += aq[i + 1] * aq[i + 1], ga1 += ap[i + 1] * aq[i + 1];
      }
      T al = al0 + al1, be = be0 + be1, ga = ga0 + ga1;
      FERRITE_SVD_UNROLL
      for (int off = LPP / 2; off > 0; off >>= 1) {
        al += w.shfl_xor(al, off);
        be += w.shfl_xor(be, off);
        ga += w.shfl_xor(ga, off);
      }
      if (al >= tiny && be >= tiny && fabs(ga) > tol * sqrt(al) * sqrt(be)) {
        const T diff = be - al;
        T t;
        if (fabs(diff) > 2 * Limits<T>::big * fabs(ga)) {
          t = ga / diff;  // |ζ| beyond 1/√ε: t = 1/(2ζ), without forming ζ (no overflow)
        } else {
          const T zeta = diff / (2 * ga);
          t = copysign(T(1), zeta) / (fabs(zeta) + sqrt(T(1) + zeta * zeta));
        }
        const T c = T(1) / sqrt(T(1) + t * t), sn = c * t;
        rotate<T, R>(ap, aq, c, sn);
        store<R>(&as[at<T>(p, sub * R)], ap);
        store<R>(&as[at<T>(q, sub * R)], aq);
        T vp[RV], vq[RV];
        load<RV>(&vs[at<T>(p, sub * RV)], vp);
        load<RV>(&vs[at<T>(q, sub * RV)], vq);
        rotate<T, RV>(vp, vq, c, sn);
        store<RV>(&vs[at<T>(p, sub * RV)], vp);
        store<RV>(&vs[at<T>(q, sub * RV)], vq);
        rotated = true;
      }
      w.sync();
    }
    converged = !w.any(rotated);
  }

  // ---- singular values: column norms (lane = column), ranked descending (ties by column
  // index, so the order is deterministic).
  T norm2 = 0;
  if (lane < n)
    for (int row = 0; row < m; ++row) {
      const T x = as[at<T>(lane, row)];
      norm2 += x * x;
    }
  const T sigma = sqrt(norm2);
  int rank = 0;
  for (int j = 0; j < n; ++j) {
    const T sj = w.shfl(sigma, j);
    rank += sj > sigma || (sj == sigma && j < lane);
  }
  if (lane < n) {
    perm[rank] = lane;
    s[rank] = scale2(sigma, e);
  }
  const unsigned good = w.ballot(lane < n && norm2 >= tiny);
  if (lane == 0) *info = converged && !nonfinite ? 0 : n + 1;
  w.sync();
  if (!vectors) return;
  // U's columns a_j / σ_j (lane = row; rows >= m stay zero); those of (near) zero columns
  // are left to the completion below.
  for (int c = 0; c < n; ++c) {
    const T sc = w.shfl(sigma, c);
    as[at<T>(c, lane)] = (good >> c & 1) ? as[at<T>(c, lane)] / sc : T(0);
  }
  // Output column i lives in tile column perm[i] (i < n), or in tile column i (the extra
  // columns of a full U, i >= n: beyond the data columns, so free).
  auto column = [&](int i) { return i < n ? perm[i] : i; };
  unsigned filled = 0;
  for (int i = 0; i < n; ++i)
    if (good >> perm[i] & 1) filled |= 1u << i;
  w.sync();
  // Complete U to an orthonormal basis (zero or tiny σ, and the m - n extra columns of a full
  // U): for each missing column take the unit vector e_r least covered by the columns so far
  // (r minimising Σ_k U(r, k)², ties to the lowest r; its residual has norm² >= 1/m),
  // orthogonalise it twice against them (classical, then modified Gram-Schmidt) and
  // normalise it.
  for (int i = 0; i < ucols; ++i) {
    if (filled >> i & 1) continue;
    T cover = 0;
    for (int k = 0; k < ucols; ++k)
      if (filled >> k & 1) {
        const T x = as[at<T>(column(k), lane)];
        cover += x * x;
      }
    T best = lane < m ? cover : T(INFINITY);
    int best_row = lane;
    FERRITE_SVD_UNROLL
    for (int off = 16; off > 0; off >>= 1) {
      const T other = w.shfl_xor(best, off);
      const int other_row = w.shfl_xor(best_row, off);
      if (other < best || (other == best && other_row < best_row)) best = other, best_row = other_row;
    }
    T v = lane == best_row ? T(1) : T(0);
    for (int k = 0; k < ucols; ++k)
      if (filled >> k & 1) v -= as[at<T>(column(k), lane)] * as[at<T>(column(k), best_row)];
    for (int k = 0; k < ucols; ++k)
      if (filled >> k & 1) {
        const T x = as[at<T>(column(k), lane)];
        v -= warp_sum(w, x * v) * x;
      }
    v /= sqrt(warp_sum(w, v * v));
    w.sync();  // every lane has read the tile before column i is written
    as[at<T>(column(i), lane)] = v;
    filled |= 1u << i;
    w.sync();
  }
  for (int idx = lane; idx < m * ucols; idx += 32) {
    const int i = idx / m;
    u[idx] = as[at<T>(column(i), idx - i * m)];
  }
  // vh[i + j·n] = Vh(i, j) = V(j, perm[i]).
  for (int idx = lane; idx < n * n; idx += 32) {
    const int j = idx / n;
    vh[idx] = vs[at<T>(perm[idx - j * n], j)];
  }
}

}  // namespace ferrite::cuda::small_svd
