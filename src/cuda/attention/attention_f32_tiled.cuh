// Device helpers shared by the tiled F32 attention kernels (attention_f32_tiled.cu: forward,
// attention_f32_tiled_bwd.cu: backward); included by those .cu files only. Blocks of 256
// threads stage row tiles of dense [rows, D] F32 matrices into shared memory with cp.async
// (row stride D + 4: 16-byte aligned for cp.async and float4 reads, consecutive rows 4 banks
// apart), zero-filling rows past the end so no uninitialised shared memory is ever read.
#pragma once

#include <cstdint>

#include "cuda/attention/attention_kernels.cuh"

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
