// Batched SVD of small real matrices (n <= m <= 32, F32/F64): one warp per matrix running
// the one-sided Jacobi method (Hestenes), the matrix and V in shared memory. cuSOLVER's
// gesvdjBatched (PyTorch's driver for these sizes) took 1.1 ms for 1024 × [32, 32] F32.
//
// Each round pairs all columns at once (round-robin: position N - 1 fixed, pairs
// {(r + k) mod (N - 1), (r - k) mod (N - 1)}, so N - 1 rounds meet every pair once per sweep).
// A column pair belongs to a group of 32 / NP consecutive lanes, each holding a contiguous
// block of rows: the three dot products α = |a_p|², β = |a_q|², γ = a_p·a_q are per-lane
// sums reduced by an xor butterfly (bitwise the same on every lane of the group, so all of
// them take the same decision), and the rotation that zeroes γ (the stable formulas:
// ζ = (β - α)/(2γ), t = sign(ζ)/(|ζ| + √(1 + ζ²)), c = 1/√(1 + t²), s = c·t) is applied to
// a_p, a_q and to V's columns. A sweep without any rotation ends the iteration. Everything
// runs in a fixed order without atomics: the results are deterministic.
//
// Tolerance: a pair is rotated while |γ| > tol·√(αβ) with tol = √m·ε (LAPACK's gesvj uses
// the same √m·ε). With tol = ε alone, the rounding of the dot product itself (about ε·√(αβ)
// for m = 32) keeps pairs above the threshold and the sweep loop would rarely end. The
// singular values are insensitive to it (their error is second order in γ); U's columns are
// orthogonal to √m·ε relative accuracy.
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cstdint>

#include "cuda/linalg/linalg_kernels.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::linalg_kernels {
namespace {

constexpr unsigned kFull = 0xffffffffu;
// Beyond this many sweeps a matrix counts as not converged (info = n + 1, and the front end
// reruns the call with the accurate driver). Random 32×32 matrices need about 6-8.
constexpr int kMaxSweeps = 30;
// Shared tiles: 32 columns of kLd elements. F32 columns are 36 floats apart: a warp's
// 16-byte accesses to 4 consecutive columns (the pairs of neighbouring lane groups) hit
// distinct banks. F64 inserts 2 doubles of padding after row 15 so that the two row halves
// of one column (the two lanes of a group for n > 16) fall on different banks too.
constexpr int kLd = 36;

template <class T>
struct Limits;
template <>
struct Limits<float> {
  static constexpr float eps = FLT_EPSILON;
  // Columns with |a|² below this (relative to the matrix scaled to max |a| in [1, 2)) are
  // treated as zero: their squares would be subnormal and their direction unreliable; they
  // are never rotated and their U column is completed to an orthonormal basis.
  static constexpr float tiny = FLT_MIN / FLT_EPSILON;
  static constexpr float big = 2896.3f;  // 1/√ε: beyond it √(1 + ζ²) = |ζ| and t = 1/(2ζ)
};
template <>
struct Limits<double> {
  static constexpr double eps = DBL_EPSILON;
  static constexpr double tiny = DBL_MIN / DBL_EPSILON;
  static constexpr double big = 67108864.0;
};

__device__ __forceinline__ int ilog(float x) { return ilogbf(x); }
__device__ __forceinline__ int ilog(double x) { return ilogb(x); }
__device__ __forceinline__ float scale2(float x, int e) { return scalbnf(x, e); }
__device__ __forceinline__ double scale2(double x, int e) { return scalbn(x, e); }

// Offset of (column pos, row) in a tile.
template <class T>
__device__ __forceinline__ int at(int pos, int row) {
  return pos * kLd + row + (sizeof(T) == 8 ? (row >> 4) * 2 : 0);
}

// R contiguous elements from/to an aligned shared address, in 16-byte accesses where possible.
template <int R>
__device__ __forceinline__ void load(const float* p, float (&x)[R]) {
  if constexpr (R % 4 == 0) {
#pragma unroll
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
__device__ __forceinline__ void store(float* p, const float (&x)[R]) {
  if constexpr (R % 4 == 0) {
#pragma unroll
    for (int i = 0; i < R / 4; ++i) reinterpret_cast<float4*>(p)[i] = make_float4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
  } else if constexpr (R == 2) {
    *reinterpret_cast<float2*>(p) = make_float2(x[0], x[1]);
  } else {
    p[0] = x[0];
  }
}
template <int R>
__device__ __forceinline__ void load(const double* p, double (&x)[R]) {
  if constexpr (R % 2 == 0) {
#pragma unroll
    for (int i = 0; i < R / 2; ++i) {
      const double2 v = reinterpret_cast<const double2*>(p)[i];
      x[2 * i] = v.x, x[2 * i + 1] = v.y;
    }
  } else {
    x[0] = p[0];
  }
}
template <int R>
__device__ __forceinline__ void store(double* p, const double (&x)[R]) {
  if constexpr (R % 2 == 0) {
#pragma unroll
    for (int i = 0; i < R / 2; ++i) reinterpret_cast<double2*>(p)[i] = make_double2(x[2 * i], x[2 * i + 1]);
  } else {
    p[0] = x[0];
  }
}

template <class T>
__device__ __forceinline__ T warp_sum(T x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(kFull, x, off);
  return x;
}

// (x, y) <- (c·x - s·y, s·x + c·y) for R rows.
template <class T, int R>
__device__ __forceinline__ void rotate(T (&x)[R], T (&y)[R], T c, T s) {
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const T xi = x[i], yi = y[i];
    x[i] = c * xi - s * yi;
    y[i] = s * xi + c * yi;
  }
}

// One warp (one block) per matrix, grid-stride over the batch. NP: column pairs per round
// (N = 2·NP >= n columns, the ones beyond n are zero and never rotate); each pair has
// LPP = 32/NP lanes holding R = 32/LPP rows of A and RV rows of V (V is N×N).
// a: [batch] m×n column-major (read only); s: [batch, n] descending; with `vectors`,
// u: [batch] m×ucols (ucols = m if `full` else n) and vh: [batch] n×n, both column-major;
// info[b] = 0, or n + 1 when the sweeps did not converge.
template <class T, int NP>
__global__ void __launch_bounds__(32) small_svd_kernel(const T* a, std::int64_t batch, int m, int n, bool full,
                                                       bool vectors, T* u, T* s, T* vh, int* info) {
  constexpr int N = 2 * NP, M = N - 1, LPP = 32 / NP, R = 32 / LPP;
  constexpr int RV = NP * NP / 16 > 0 ? NP * NP / 16 : 1;  // N rows over LPP lanes (at least 1)
  __shared__ __align__(16) T as[32 * kLd];
  __shared__ __align__(16) T vs[32 * kLd];
  __shared__ int perm[32];  // perm[i]: the column holding the i-th largest singular value
  const int lane = static_cast<int>(threadIdx.x), group = lane / LPP, sub = lane % LPP;
#ifdef FERRITE_SMALL_SVD_TOL_EPS
  const T tol = Limits<T>::eps;
#else
  const T tol = Limits<T>::eps * sqrt(static_cast<T>(m));
#endif
  const T tiny = Limits<T>::tiny;
  const int ucols = full ? m : n;

  for (std::int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    // ---- load (lane = row), V = I; scale by a power of two (exact) to max |a| in [1, 2)
    // so that no square over- or underflows for ordinary magnitudes.
    const T* src = a + b * m * n;
    T amax = 0;
    for (int pos = 0; pos < N; ++pos) {
      const T x = pos < n && lane < m ? src[lane + pos * m] : T(0);
      as[at<T>(pos, lane)] = x;
      vs[at<T>(pos, lane)] = pos == lane ? T(1) : T(0);
      amax = fmax(amax, fabs(x));
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) amax = fmax(amax, __shfl_xor_sync(kFull, amax, off));
    const int e = amax > 0 ? ilog(amax) : 0;
    for (int pos = 0; pos < N; ++pos) as[at<T>(pos, lane)] = scale2(as[at<T>(pos, lane)], -e);
    __syncwarp();

    // ---- sweeps
    bool converged = false;
    int sweeps = 0;
    for (; sweeps < kMaxSweeps && !converged; ++sweeps) {
      bool rotated = false;
      for (int r = 0; r < M; ++r) {
        const int p = group == 0 ? M : (r + group) % M;
        const int q = group == 0 ? r : (r - group + M) % M;
        T ap[R], aq[R];
        load<R>(&as[at<T>(p, sub * R)], ap);
        load<R>(&as[at<T>(q, sub * R)], aq);
        // Two partial sums each: shorter dependency chains.
        T al0 = 0, al1 = 0, be0 = 0, be1 = 0, ga0 = 0, ga1 = 0;
#pragma unroll
        for (int i = 0; i < R; i += 2) {
          al0 += ap[i] * ap[i], be0 += aq[i] * aq[i], ga0 += ap[i] * aq[i];
          if (i + 1 < R) al1 += ap[i + 1] * ap[i + 1], be1 += aq[i + 1] * aq[i + 1], ga1 += ap[i + 1] * aq[i + 1];
        }
        T al = al0 + al1, be = be0 + be1, ga = ga0 + ga1;
#pragma unroll
        for (int off = LPP / 2; off > 0; off >>= 1) {
          al += __shfl_xor_sync(kFull, al, off);
          be += __shfl_xor_sync(kFull, be, off);
          ga += __shfl_xor_sync(kFull, ga, off);
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
        __syncwarp();
      }
      converged = !__any_sync(kFull, rotated);
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
      const T sj = __shfl_sync(kFull, sigma, j);
      rank += sj > sigma || (sj == sigma && j < lane);
    }
    if (lane < n) {
      perm[rank] = lane;
      s[b * n + rank] = scale2(sigma, e);
    }
    const unsigned good = __ballot_sync(kFull, lane < n && norm2 >= tiny);
#ifdef FERRITE_SMALL_SVD_SWEEPS  // standalone measurement only: -(sweeps) when converged
    if (lane == 0) info[b] = converged ? -sweeps : n + 1;
#else
    if (lane == 0) info[b] = converged ? 0 : n + 1;
#endif
    __syncwarp();
    if (vectors) {
      // U's columns a_j / σ_j (lane = row; rows >= m stay zero); those of (near) zero
      // columns are left for the completion below.
      for (int c = 0; c < n; ++c) {
        const T sc = __shfl_sync(kFull, sigma, c);
        as[at<T>(c, lane)] = (good >> c & 1) ? as[at<T>(c, lane)] / sc : T(0);
      }
      // Output column i lives at tile column perm[i] (i < n), or at column i (full U, i >= n:
      // beyond the n data columns, so free).
      auto column = [&](int i) { return i < n ? perm[i] : i; };
      unsigned filled = 0;
      for (int i = 0; i < n; ++i)
        if (good >> perm[i] & 1) filled |= 1u << i;
      __syncwarp();
      // Complete U to an orthonormal basis (zero or tiny σ; the m - n extra columns of a full
      // U): for each missing column take the unit vector e_r least covered by the columns so
      // far (r minimising Σ_k U(r, k)², ties to the lowest r: its residual has norm² >= 1/m),
      // orthogonalise it twice against them (classical then modified Gram-Schmidt) and
      // normalise it.
      for (int i = 0; i < ucols; ++i) {
        if (filled >> i & 1) continue;
        T w = 0;
        for (int k = 0; k < ucols; ++k)
          if (filled >> k & 1) {
            const T x = as[at<T>(column(k), lane)];
            w += x * x;
          }
        T best_w = lane < m ? w : T(INFINITY);
        int best_r = lane;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
          const T ow = __shfl_xor_sync(kFull, best_w, off);
          const int orow = __shfl_xor_sync(kFull, best_r, off);
          if (ow < best_w || (ow == best_w && orow < best_r)) best_w = ow, best_r = orow;
        }
        T v = lane == best_r ? T(1) : T(0);
        for (int k = 0; k < ucols; ++k)
          if (filled >> k & 1) v -= as[at<T>(column(k), lane)] * as[at<T>(column(k), best_r)];
        for (int k = 0; k < ucols; ++k)
          if (filled >> k & 1) {
            const T x = as[at<T>(column(k), lane)];
            v -= warp_sum(x * v) * x;
          }
        v /= sqrt(warp_sum(v * v));
        as[at<T>(column(i), lane)] = v;
        filled |= 1u << i;
        __syncwarp();
      }
      T* ub = u + b * m * ucols;
      for (int idx = lane; idx < m * ucols; idx += 32) {
        const int i = idx / m;
        ub[idx] = as[at<T>(column(i), idx - i * m)];
      }
      // vh[i + j·n] = Vh(i, j) = V(j, perm[i]).
      T* vb = vh + b * n * n;
      for (int idx = lane; idx < n * n; idx += 32) {
        const int j = idx / n;
        vb[idx] = vs[at<T>(perm[idx - j * n], j)];
      }
    }
    __syncwarp();  // the tiles are reused by the next matrix
  }
}

template <class T, int NP>
void launch(const void* a, std::int64_t batch, int m, int n, bool full, bool vectors, void* u, void* s, void* vh,
            int* info, cudaStream_t stream) {
  // One warp per block (up to 32 resident per SM); a grid-stride loop beyond 2^20 matrices.
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(batch, std::int64_t(1) << 20));
  small_svd_kernel<T, NP><<<blocks, 32, 0, stream>>>(static_cast<const T*>(a), batch, m, n, full, vectors,
                                                    static_cast<T*>(u), static_cast<T*>(s), static_cast<T*>(vh), info);
  FERRITE_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_pairs(const void* a, std::int64_t batch, int m, int n, bool full, bool vectors, void* u, void* s, void* vh,
                  int* info, cudaStream_t stream) {
  if (n <= 2) return launch<T, 1>(a, batch, m, n, full, vectors, u, s, vh, info, stream);
  if (n <= 4) return launch<T, 2>(a, batch, m, n, full, vectors, u, s, vh, info, stream);
  if (n <= 8) return launch<T, 4>(a, batch, m, n, full, vectors, u, s, vh, info, stream);
  if (n <= 16) return launch<T, 8>(a, batch, m, n, full, vectors, u, s, vh, info, stream);
  return launch<T, 16>(a, batch, m, n, full, vectors, u, s, vh, info, stream);
}

}  // namespace

void small_svd(const void* a, DType dtype, std::int64_t batch, std::int64_t m, std::int64_t n, bool full, bool vectors,
               void* u, void* s, void* vh, int* info, cudaStream_t stream) {
  FERRITE_CHECK(n >= 1 && n <= m && m <= kSmallSvdLargest, Unsupported,
                "svd: the batched small-matrix kernel takes 1 <= n <= m <= ", kSmallSvdLargest, ", got ", m, "x", n);
  if (batch == 0) return;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n);
  switch (dtype) {
    case DType::F32: launch_pairs<float>(a, batch, mi, ni, full, vectors, u, s, vh, info, stream); break;
    case DType::F64: launch_pairs<double>(a, batch, mi, ni, full, vectors, u, s, vh, info, stream); break;
    default: FERRITE_THROW(Unsupported, "svd: the batched small-matrix kernel takes F32 and F64, got ", dtype_name(dtype));
  }
}

}  // namespace ferrite::cuda::linalg_kernels
