// The two data-movement kernels behind copy_view (transpose, permute, strided copy and
// scatter, cat, split, repeat, roll, KV-cache slices), instantiated by element size only.
#include <algorithm>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/launch_grid.hpp"
#include "cuda/shape/shape_device.cuh"
#include "cuda/shape/shape_kernels.hpp"

namespace ferrite::cuda::shape {
namespace {

constexpr int kThreads = 256;

// ---- any strided copy ----

constexpr int kUnroll = 4;  // elements each thread has in flight

struct DevicePlan {
  int rank;
  bool fast;  // every linear index fits in 31 bits: FastDivmod
  std::int64_t numel, src_offset, dst_offset;
  FastDivmod div[kMaxViewDims];
  std::int64_t sizes[kMaxViewDims];
  std::int64_t src_strides[kMaxViewDims];
  std::int64_t dst_strides[kMaxViewDims];
};

__device__ __forceinline__ void offsets_of(const DevicePlan& p, std::int64_t linear, std::int64_t& s, std::int64_t& d) {
  s = p.src_offset;
  d = p.dst_offset;
  if (p.fast) {
    std::uint32_t n = static_cast<std::uint32_t>(linear);
    for (int k = p.rank - 1; k >= 0; --k) {
      const std::uint32_t q = p.div[k].div(n);
      const std::int64_t r = n - q * p.div[k].divisor;
      s += r * p.src_strides[k];
      d += r * p.dst_strides[k];
      n = q;
    }
  } else {
    std::int64_t n = linear;
    for (int k = p.rank - 1; k >= 0; --k) {
      const std::int64_t r = n % p.sizes[k];
      n /= p.sizes[k];
      s += r * p.src_strides[k];
      d += r * p.dst_strides[k];
    }
  }
}

template <int B>
__global__ void __launch_bounds__(kThreads) strided_copy_kernel(const element_t<B>* __restrict__ src,
                                                                element_t<B>* __restrict__ dst, const DevicePlan p) {
  const std::int64_t step = std::int64_t(gridDim.x) * kThreads * kUnroll;
  for (std::int64_t base = std::int64_t(blockIdx.x) * kThreads * kUnroll + threadIdx.x; base < p.numel; base += step) {
    std::int64_t s[kUnroll], d[kUnroll];
    element_t<B> v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (base + u * kThreads < p.numel) offsets_of(p, base + u * kThreads, s[u], d[u]);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (base + u * kThreads < p.numel) v[u] = src[s[u]];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (base + u * kThreads < p.numel) dst[d[u]] = v[u];
  }
}

// ---- tiled transpose ----

// Tiles of N x N elements: every tile row is 128 bytes or more (whole cache lines), and each
// thread moves one 16-byte vector (V elements) per row it handles. 4- and 8-byte elements
// take 64 x 64 tiles so that each thread has several vectors in flight (16-33 KB of shared
// memory per block).
template <int E> constexpr int kTile = E == 1 ? 128 : E == 2 ? 64 : E == 16 ? 32 : 64;
template <int E> constexpr int kVector = 16 / E;

struct TransposePlan {
  std::int64_t A, B;         // extent of the tile dims: a (src-contiguous) and b (dst-contiguous)
  std::int64_t src_b;        // src stride of b (src stride of a is 1)
  std::int64_t dst_a;        // dst stride of a (dst stride of b is 1)
  std::int64_t src_offset, dst_offset;
  std::int64_t tiles_a, tiles_b, batch;
  int batch_rank;
  bool vector_ok;            // strides and offsets are multiples of the vector width
  std::int64_t batch_sizes[kMaxViewDims];
  std::int64_t batch_src[kMaxViewDims];
  std::int64_t batch_dst[kMaxViewDims];
};

// A whole 64 x 64 tile of 4-byte elements with 16-byte accesses everywhere: each thread
// loads a 4 x 4 block (four 16-byte rows), transposes it in registers and stores it as four
// 16-byte rows into shared memory; then each thread copies four 16-byte rows of the
// transposed tile out. Shared memory holds 64 rows of 16 vectors; vector column c of row r
// lives at column c ^ (r / 4), so the eight threads of each 16-byte shared-memory phase hit
// eight different bank groups both when storing and when loading (no conflicts, no padding).
// (The scalar path below moves one element per shared-memory access and peaks near 2.8 TB/s.)
__device__ __forceinline__ void transpose_full_tile_4byte(const element_t<4>* __restrict__ src,
                                                          element_t<4>* __restrict__ dst, std::int64_t a0,
                                                          std::int64_t b0, std::int64_t src_b, std::int64_t dst_a,
                                                          uint4* tile) {
  static_assert(kThreads == 256, "one 4 x 4 block per thread covers a 64 x 64 tile");
  const int c = threadIdx.x % 16;  // 4-element block along a (the source's contiguous dim)
  const int r = threadIdx.x / 16;  // 4-element block along b (the destination's contiguous dim)
  uint4 in[4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
    in[i] = *reinterpret_cast<const uint4*>(src + (b0 + 4 * r + i) * src_b + a0 + 4 * c);
  // Destination row 4c + j (along a) holds source column 4c + j of the block's four rows.
  const unsigned(*w)[4] = reinterpret_cast<const unsigned(*)[4]>(in);
#pragma unroll
  for (int j = 0; j < 4; ++j) tile[(4 * c + j) * 16 + (r ^ c)] = make_uint4(w[0][j], w[1][j], w[2][j], w[3][j]);
  __syncthreads();
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int row = threadIdx.x / 16 + 16 * k, column = threadIdx.x % 16;
    *reinterpret_cast<uint4*>(dst + (a0 + row) * dst_a + b0 + 4 * column) = tile[row * 16 + (column ^ (row / 4))];
  }
  __syncthreads();
}

template <int E>
__global__ void __launch_bounds__(kThreads) tiled_transpose_kernel(const element_t<E>* __restrict__ src,
                                                                   element_t<E>* __restrict__ dst,
                                                                   const TransposePlan p) {
  using T = element_t<E>;
  constexpr int N = kTile<E>, V = kVector<E>, kPerRow = N / V, kRowsPerPass = kThreads / kPerRow,
                kPasses = N / kRowsPerPass;
  union Vec {
    uint4 bits;
    T e[V];
  };
  __shared__ __align__(16) T tile[N][N + 1];  // +1: a column walk crosses banks
  const int col = threadIdx.x % kPerRow, row0 = threadIdx.x / kPerRow;
  // Grid: x over tiles along b, y over tiles along a, z over the batch (each strided when the
  // extent passes the grid's limits). Only batch dims cost a division, once per tile.
  for (std::int64_t batch = blockIdx.z; batch < p.batch; batch += gridDim.z)
  for (std::int64_t ta = blockIdx.y; ta < p.tiles_a; ta += gridDim.y)
  for (std::int64_t tb = blockIdx.x; tb < p.tiles_b; tb += gridDim.x) {
    std::int64_t s_base = p.src_offset, d_base = p.dst_offset, rest = batch;
    for (int k = p.batch_rank - 1; k >= 0; --k) {
      const std::int64_t c = rest % p.batch_sizes[k];
      rest /= p.batch_sizes[k];
      s_base += c * p.batch_src[k];
      d_base += c * p.batch_dst[k];
    }
    const std::int64_t a0 = ta * N, b0 = tb * N;
    const bool full = p.vector_ok && a0 + N <= p.A && b0 + N <= p.B;
    if constexpr (E == 4) {
      if (full) {
        transpose_full_tile_4byte(src + s_base, dst + d_base, a0, b0, p.src_b, p.dst_a,
                                  reinterpret_cast<uint4*>(&tile[0][0]));
        continue;
      }
    }
    // Read: N rows along b, each N elements contiguous along a. Whole tiles issue all their
    // vector loads before the first shared-memory store (kPasses loads in flight per thread).
    if (full) {
      Vec v[kPasses];
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass)
        v[pass].bits = *reinterpret_cast<const uint4*>(src + s_base + (b0 + row0 + pass * kRowsPerPass) * p.src_b + a0 +
                                                       col * V);
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass)
#pragma unroll
        for (int e = 0; e < V; ++e) tile[row0 + pass * kRowsPerPass][col * V + e] = v[pass].e[e];
    } else {
      for (int r = row0; r < N; r += kRowsPerPass) {
        const T* line = src + s_base + (b0 + r) * p.src_b + a0 + col * V;
        for (int e = 0; e < V; ++e)
          if (b0 + r < p.B && a0 + col * V + e < p.A) tile[r][col * V + e] = line[e];
      }
    }
    __syncthreads();
    // Write: N rows along a, each N elements contiguous along b.
    if (full) {
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass) {
        const int r = row0 + pass * kRowsPerPass;
        Vec v;
#pragma unroll
        for (int e = 0; e < V; ++e) v.e[e] = tile[col * V + e][r];
        *reinterpret_cast<uint4*>(dst + d_base + (a0 + r) * p.dst_a + b0 + col * V) = v.bits;
      }
    } else {
      for (int r = row0; r < N; r += kRowsPerPass) {
        T* line = dst + d_base + (a0 + r) * p.dst_a + b0 + col * V;
        for (int e = 0; e < V; ++e)
          if (a0 + r < p.A && b0 + col * V + e < p.B) line[e] = tile[col * V + e][r];
      }
    }
    __syncthreads();
  }
}


template <int B>
void launch_strided(const void* src, void* dst, const DevicePlan& p, cudaStream_t stream) {
  strided_copy_kernel<B><<<grid_stride_blocks(p.numel, kThreads * kUnroll), kThreads, 0, stream>>>(
      static_cast<const element_t<B>*>(src), static_cast<element_t<B>*>(dst), p);
  FERRITE_CUDA_CHECK_LAUNCH();
}

template <int E>
void launch_tiled(const void* src, void* dst, const CopyPlan& plan, int a, cudaStream_t stream) {
  constexpr int V = kVector<E>, N = kTile<E>;
  const int last = plan.rank - 1;
  TransposePlan p{};
  p.A = plan.sizes[a];
  p.B = plan.sizes[last];
  p.src_b = plan.src_strides[last];
  p.dst_a = plan.dst_strides[a];
  p.src_offset = plan.src_offset;
  p.dst_offset = plan.dst_offset;
  p.tiles_a = (p.A + N - 1) / N;
  p.tiles_b = (p.B + N - 1) / N;
  bool aligned = reinterpret_cast<std::uintptr_t>(src) % 16 == 0 && reinterpret_cast<std::uintptr_t>(dst) % 16 == 0 &&
                 p.src_b % V == 0 && p.dst_a % V == 0 && p.src_offset % V == 0 && p.dst_offset % V == 0;
  std::int64_t batch = 1;
  for (int k = 0; k < plan.rank; ++k) {
    if (k == a || k == last) continue;
    p.batch_sizes[p.batch_rank] = plan.sizes[k];
    p.batch_src[p.batch_rank] = plan.src_strides[k];
    p.batch_dst[p.batch_rank] = plan.dst_strides[k];
    aligned = aligned && plan.src_strides[k] % V == 0 && plan.dst_strides[k] % V == 0;
    batch *= plan.sizes[k];
    ++p.batch_rank;
  }
  p.vector_ok = aligned;
  p.batch = batch;
  const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>(p.tiles_b, std::int64_t(1) << 30)),
                  static_cast<unsigned>(std::min<std::int64_t>(p.tiles_a, 65535)),
                  static_cast<unsigned>(std::min<std::int64_t>(batch, 65535)));
  tiled_transpose_kernel<E><<<grid, kThreads, 0, stream>>>(
      static_cast<const element_t<E>*>(src), static_cast<element_t<E>*>(dst), p);
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void strided_copy(const void* src, void* dst, const CopyPlan& plan, cudaStream_t stream) {
  DevicePlan p{};
  p.rank = plan.rank;
  p.numel = plan.numel;
  p.fast = plan.numel < (std::int64_t(1) << 31);
  p.src_offset = plan.src_offset;
  p.dst_offset = plan.dst_offset;
  for (int k = 0; k < plan.rank; ++k) {
    p.sizes[k] = plan.sizes[k];
    p.src_strides[k] = plan.src_strides[k];
    p.dst_strides[k] = plan.dst_strides[k];
    if (p.fast) p.div[k] = FastDivmod(static_cast<std::uint32_t>(plan.sizes[k]));
  }
  switch (plan.elem_bytes) {
    case 1: return launch_strided<1>(src, dst, p, stream);
    case 2: return launch_strided<2>(src, dst, p, stream);
    case 4: return launch_strided<4>(src, dst, p, stream);
    case 8: return launch_strided<8>(src, dst, p, stream);
    default: return launch_strided<16>(src, dst, p, stream);
  }
}

void tiled_transpose(const void* src, void* dst, const CopyPlan& plan, int a, cudaStream_t stream) {
  switch (plan.elem_bytes) {
    case 1: return launch_tiled<1>(src, dst, plan, a, stream);
    case 2: return launch_tiled<2>(src, dst, plan, a, stream);
    case 4: return launch_tiled<4>(src, dst, plan, a, stream);
    case 8: return launch_tiled<8>(src, dst, plan, a, stream);
    default: return launch_tiled<16>(src, dst, plan, a, stream);
  }
}

}  // namespace ferrite::cuda::shape
