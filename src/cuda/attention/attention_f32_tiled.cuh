// Device helpers shared by the tiled F32 attention kernels (attention_f32_tiled.cu: forward,
// attention_f32_tiled_bwd.cu: backward, and the 3xTF32 variants); included by .cu files only.
// Blocks of 256 threads stage row tiles of dense [rows, D] F32 matrices into shared memory with
// cp.async (row stride D + 4: 16-byte aligned for cp.async and float4 reads, consecutive rows 4
// banks apart), zero-filling rows past the end so no uninitialised shared memory is ever read.
// Also the launch steps of the directory's kernel files: launch_with_smem for every kernel
// with dynamic shared memory (attention_kernels.cu's too), launch_forward for both F32 forwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cuda/attention/attention_kernels.cuh"
#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda::attention {

// Launches `kernel` on `stream` with `smem` bytes of dynamic shared memory, after raising the
// kernel's limit to that (needed past 48 KiB; set on every call, before the launch, so no call
// depends on another's), then checks the launch. `args` convert to the kernel's parameters.
template <class Kernel, class... Args>
void launch_with_smem(Kernel kernel, dim3 grid, unsigned threads, std::size_t smem, cudaStream_t stream,
                      const Args&... args) {
  FERRITE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kernel<<<grid, threads, smem, stream>>>(args...);
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::attention

namespace ferrite::cuda::attention::tiled {

constexpr int kThreads = 256;

// Sequence positions fit in int (the fits predicates): 32-bit index arithmetic in the loops
// keeps register pressure down.
struct TiledShape {
  std::int64_t heads_q, heads_kv, group;
  int seq_q, seq_k;
  bool causal;
  float scale;
};

inline TiledShape tiled_shape_of(const AttentionDesc& d) {
  return {d.heads_q, d.heads_kv, d.group(), static_cast<int>(d.seq_q), static_cast<int>(d.seq_k), d.causal,
          static_cast<float>(d.scale)};
}

// The tiled kernels put (batch, head) pairs on grid x and row or key tiles on grid y (so the
// block order runs over the heads fastest: see the kernels), within CUDA's limits of each.
constexpr std::int64_t kMaxGridX = (std::int64_t{1} << 31) - 1;
constexpr std::int64_t kMaxGridY = 65535;
inline std::int64_t row_tiles(std::int64_t rows, int tile) { return (rows + tile - 1) / tile; }

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Both F32 forwards (SIMT and 3xTF32): `kernel`(q, k, v, out, logsumexp, shape) with a block per
// `rows` query rows of a (batch, query head), the heads along grid x.
template <class Kernel>
void launch_forward(Kernel kernel, int rows, std::size_t smem, const AttentionDesc& d, const Pointers& p,
                    cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(d.batch * d.heads_q), static_cast<unsigned>(row_tiles(d.seq_q, rows)));
  launch_with_smem(kernel, grid, kThreads, smem, stream, static_cast<const float*>(p.q), static_cast<const float*>(p.k),
                   static_cast<const float*>(p.v), static_cast<float*>(p.result), static_cast<float*>(p.logsumexp),
                   tiled_shape_of(d));
}

// Where a block of a kernel that owns query rows works: both F32 forwards (SIMT and 3xTF32),
// the F16/BF16 forward, and the dq kernels of the 3xTF32 and F16/BF16 backwards. Its (batch,
// query head) pair `bh` (batch b, query head h) runs along grid x, the fast index of the block
// order, and its tile of `rows` query rows along grid y in reverse: causal, the last row tiles
// see the most keys, so every head's heaviest tiles start first and the light ones fill the gaps
// (longest first: B=1, H=16, S=2048 causal needs 34 tile-times on 132 SMs instead of 54 with
// the heads outermost). q, k, v (elements T: F32, or F16/BF16 bits) point at the rows of the
// block's head and of its key/value head (GQA: h / group); keys [0, key_end) are those some row
// of the block can see.
template <class T>
struct ForwardBlock {
  std::int64_t bh, b, h;
  int m0, key_end;
  const T *q, *k, *v;
};
template <int D, class T>
__device__ __forceinline__ ForwardBlock<T> forward_block(const T* q, const T* k, const T* v, const TiledShape& s,
                                                         int rows) {
  const std::int64_t bh = blockIdx.x, b = bh / s.heads_q, h = bh % s.heads_q, hk = h / s.group;
  const int m0 = static_cast<int>(gridDim.y - 1 - blockIdx.y) * rows;
  // Top-left causal: row i sees keys j <= i, so the block's last row m0 + rows - 1 bounds its keys.
  const int key_end = s.causal ? min(s.seq_k, m0 + rows) : s.seq_k;
  const std::int64_t kv_rows = (b * s.heads_kv + hk) * s.seq_k;
  return {bh, b, h, m0, key_end, q + bh * s.seq_q * D, k + kv_rows * D, v + kv_rows * D};
}

// The end of the tensor-core forwards (3xTF32 F32 and F16/BF16), whose lanes hold the partial
// sums l and the running maxima m of rows row0 and row0 + 8 (hr = 0, 1), four lanes (lq) a row:
// the row's total over its lanes, then, for a row before Sq, store(hr, row, inv) writes its out
// times inv = 1 / total and lane 0 of the four its logsumexp m + log(total). A row with no
// visible key (total exactly 0) gets inv = 0 (out 0) and logsumexp -inf. A NaN score needs no
// NaN-aware max in the loop: fmaxf skips it, but its weight is NaN, so total and out are NaN (as
// PyTorch's softmax), and total == 0 is false for NaN.
template <class Store>
__device__ __forceinline__ void finish_rows(const float (&l)[2], const float (&m)[2], int row0, int lq,
                                            std::int64_t bh, const TiledShape& s, float* logsumexp,
                                            const Store& store) {
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    float total = l[hr];
    total += __shfl_xor_sync(0xffffffffu, total, 1);
    total += __shfl_xor_sync(0xffffffffu, total, 2);
    const int row = row0 + 8 * hr;
    if (row >= s.seq_q) continue;
    store(hr, row, total == 0.f ? 0.f : 1.f / total);
    if (lq == 0) logsumexp[bh * s.seq_q + row] = total == 0.f ? -INFINITY : m[hr] + logf(total);
  }
}

// One row's online-softmax step in the tensor-core forwards (3xTF32 F32 and F16/BF16), for the
// row whose scores of the key tile this lane holds in registers 2 hr and 2 hr + 1 of each n-tile
// of sc (-inf where hidden; four lanes a row, lq), mx their largest. The row's max over its four
// lanes updates the running max m (fmaxf: a NaN score is skipped here, but its weight below is
// NaN); every score becomes its weight, their sum joins l and the row's accumulators of acc
// (registers 2 hr, 2 hr + 1 of every n-tile) are scaled by alpha, as l is. The forwards differ in
// the exponential only, given by Exp: base(m_new), the running max as subtracted (never -inf: no
// -inf - -inf), alpha(m, base), the old terms' factor (0 while m = -inf, when acc and l are 0),
// and weight(x, base) (hidden keys: 0).
template <class Exp, int NT, int NO>
__device__ __forceinline__ void online_softmax_row(float (&sc)[NT][4], float (&acc)[NO][4], float& m, float& l, int hr,
                                                   float mx) {
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
  const float m_new = fmaxf(m, mx);
  const float base = Exp::base(m_new);
  const float alpha = Exp::alpha(m, base);
  m = m_new;
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float& x = sc[j][2 * hr + e];
      x = Exp::weight(x, base);
      sum += x;
    }
  l = l * alpha + sum;
#pragma unroll
  for (int nt = 0; nt < NO; ++nt) {
    acc[nt][2 * hr] *= alpha;
    acc[nt][2 * hr + 1] *= alpha;
  }
}

// The end of the tensor-core dq kernels (3xTF32/1xTF32 and F16/BF16), whose warps split a key
// tile in two halves (kh) over the same 16 query rows: key half 1 hands its partial dQ (NT
// n-tiles of four F32 accumulators, one float4 each) to key half 0 through shared memory at
// `part` (this warp's slots: n-tile nt at part[32 nt], lane-major), and key half 0 adds it to
// its own: the first half's dQ plus the second's, a fixed order (bit for bit repeatable). A
// barrier inside: every thread of the block calls it, after the last read of the memory at part.
template <int NT>
__device__ __forceinline__ void add_second_key_half(float (&acc)[NT][4], float4* part, int kh) {
  if (kh == 1) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) part[32 * nt] = make_float4(acc[nt][0], acc[nt][1], acc[nt][2], acc[nt][3]);
  }
  __syncthreads();
  if (kh == 0) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const float4 o = part[32 * nt];
      acc[nt][0] += o.x;
      acc[nt][1] += o.y;
      acc[nt][2] += o.z;
      acc[nt][3] += o.w;
    }
  }
}

// Where a block of the dk/dv kernels works (attention_f32_tiled_bwd.cu, attention_f32_tf32x3_bwd.cu,
// attention_half_mma_bwd.cu). Key/value heads (bhk = b Hkv + hk) along grid x, the fast index,
// tiles of kTile keys from n0 along grid y: causal, the first key tiles see the most queries, so
// every head's heaviest tiles start first. The block streams `tiles` tiles of kTile query rows,
// those of every query head of its group: tile t is query head hk group + t / per_head, rows
// query_begin + (t % per_head) kTile .. (the kernels' head_of and row0_of). Top-left causal:
// query i sees keys j <= i, so queries before n0 see none of the block's keys.
struct KeyBlock {
  std::int64_t bhk, b, hk;
  int n0, query_begin, per_head, tiles;
};
template <int kTile>
__device__ __forceinline__ KeyBlock key_block(const TiledShape& s) {
  const std::int64_t bhk = blockIdx.x, b = bhk / s.heads_kv, hk = bhk % s.heads_kv;
  const int n0 = static_cast<int>(blockIdx.y) * kTile;
  const int query_begin = s.causal ? n0 : 0;
  const int per_head = query_begin < s.seq_q ? (s.seq_q - query_begin + kTile - 1) / kTile : 0;
  return {bhk, b, hk, n0, query_begin, per_head, static_cast<int>(s.group) * per_head};
}

// The first four regions of the tensor-core backward kernels' shared memory (3xTF32 and
// F16/BF16, dq and dk/dv alike: the kernels run the same two products on swapped operands): the
// block's own kTile rows of the score products' two A operands (stride kOwnStride), then the
// double-buffered streamed tiles of their B operands (2 x kTile rows of stride kStreamStride).
// Offsets in elements; kEnd is where a kernel's further regions start. DqTiles and DkvTiles
// name them as the dq kernels (own Q and dO, streamed K and V) and the dk/dv kernels (own K and
// V, streamed Q and dO) use them.
template <int kTile, int kOwnStride, int kStreamStride>
struct OwnAndStreamedTiles {
  static constexpr int kOwnA = 0;
  static constexpr int kOwnB = kOwnA + kTile * kOwnStride;
  static constexpr int kStreamA = kOwnB + kTile * kOwnStride;
  static constexpr int kStreamB = kStreamA + 2 * kTile * kStreamStride;
  static constexpr int kEnd = kStreamB + 2 * kTile * kStreamStride;
};
template <int kTile, int kOwnStride, int kStreamStride>
struct DqTiles : OwnAndStreamedTiles<kTile, kOwnStride, kStreamStride> {
  using T = OwnAndStreamedTiles<kTile, kOwnStride, kStreamStride>;
  static constexpr int kQ = T::kOwnA, kG = T::kOwnB, kK = T::kStreamA, kV = T::kStreamB;
};
template <int kTile, int kOwnStride, int kStreamStride>
struct DkvTiles : OwnAndStreamedTiles<kTile, kOwnStride, kStreamStride> {
  using T = OwnAndStreamedTiles<kTile, kOwnStride, kStreamStride>;
  static constexpr int kK = T::kOwnA, kV = T::kOwnB, kQ = T::kStreamA, kG = T::kStreamB;
};

// Every element of a register array of F32 accumulators (any rank) to 0, fully unrolled.
template <class T, int N>
__device__ __forceinline__ void zero(T (&a)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if constexpr (std::is_array_v<T>)
      zero(a[i]);
    else
      a[i] = 0.f;
  }
}

__device__ __forceinline__ void copy16(float* dst, const float* src, bool valid) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(addr), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void commit_group() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void wait_groups() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// The top of a kernel's loop over streamed tiles t < tiles whose next tile's copies run while
// the block works on this one (cp.async): waits for this thread's copies of tile t (and, at t =
// 0, of what the kernel staged before the loop), then at a barrier for everyone's, after which
// no thread reads tile t - 1 any more; then stage_next() issues tile t + 1's copies into the
// buffers tile t - 1 left, if there is a tile t + 1, and commits them as one group (possibly
// empty: the wait above always waits for all). Used where the next tile's staging already was
// a lambda (the tensor-core dk/dv kernels' stage_rows, the F16/BF16 forward's stage_tile). The
// dq kernels keep these steps written out: with their stage calls moved into a lambda, nvcc 13.0
// computed the staging addresses in another order (the cubins' .text differ).
template <class StageNext>
__device__ __forceinline__ void await_tile_stage_next(int t, int tiles, const StageNext& stage_next) {
  wait_groups<0>();
  __syncthreads();
  if (t + 1 < tiles) stage_next();
  commit_group();
}

// Rows [row0, row0 + R) of a dense [rows, D] matrix into shared [R][D + 4]; rows past `rows`
// are zero-filled (their source address is `src` itself, never read: src-size 0).
template <int D, int R>
__device__ __forceinline__ void stage_async(float* dst, const float* src, int row0, int rows) {
  constexpr int kChunks = D / 4;  // 16-byte chunks per row
  static_assert((R * kChunks) % kThreads == 0);
#pragma unroll
  for (int n = 0; n < R * kChunks / kThreads; ++n) {
    const int e = static_cast<int>(threadIdx.x) + n * kThreads;
    const int r = e / kChunks, c = (e % kChunks) * 4;
    const bool valid = row0 + r < rows;
    copy16(dst + r * (D + 4) + c, valid ? src + static_cast<std::int64_t>(row0 + r) * D + c : src, valid);
  }
}

}  // namespace ferrite::cuda::attention::tiled
