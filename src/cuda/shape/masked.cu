// masked_select and masked_scatter: a two-pass block compaction. Pass 1 counts the true
// mask bytes of each tile of 2048 elements; a two-level scan (chunks of 1024 tiles, then the
// chunk totals) turns the counts into tile offsets and the total, which the host reads back
// (masked_select must size its output, masked_scatter must check that source is large
// enough). Pass 2 ranks each element inside its tile with warp ballots and moves it. Loads
// and stores are coalesced: a warp's selected elements land next to each other.
#include <algorithm>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/shape/shape_device.cuh"
#include "cuda/shape/shape_kernels.hpp"
#include "cuda/shape/shape_runtime.hpp"

namespace ferrite::cuda::shape {
namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32, kItems = 8, kTile = kThreads * kItems;

// Only the tile's total matters here, so each thread counts kItems (8) consecutive bytes with
// one 8-byte load when the tile is whole and aligned, instead of eight 1-byte loads (an
// eighth of the load instructions and memory requests for the same bytes).
__global__ void __launch_bounds__(kThreads) count_kernel(const std::uint8_t* __restrict__ mask, std::int64_t n,
                                                         int* __restrict__ tile_counts) {
  static_assert(kItems == 8, "one 8-byte load per thread");
  const std::int64_t start = std::int64_t(blockIdx.x) * kTile;
  int count = 0;
  if (start + kTile <= n && reinterpret_cast<std::uintptr_t>(mask) % 8 == 0) {
    const uint2 bytes = reinterpret_cast<const uint2*>(mask + start)[threadIdx.x];
    // __vcmpne4 sets each byte that is not zero to 0xff: 8 set bits per true element.
    count = (__popc(__vcmpne4(bytes.x, 0u)) + __popc(__vcmpne4(bytes.y, 0u))) / 8;
  } else {
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const std::int64_t i = start + j * kThreads + threadIdx.x;
      count += i < n && mask[i] != 0;
    }
  }
  for (int o = 16; o > 0; o /= 2) count += __shfl_xor_sync(0xffffffffu, count, o);
  __shared__ int warp_counts[kWarps];
  if (threadIdx.x % 32 == 0) warp_counts[threadIdx.x / 32] = count;
  __syncthreads();
  if (threadIdx.x == 0) {
    int total = 0;
    for (int w = 0; w < kWarps; ++w) total += warp_counts[w];
    tile_counts[blockIdx.x] = total;
  }
}

// The tile counts are scanned in two levels, both coalesced: chunks of 1024 tiles in parallel
// (local offsets and chunk totals), then one block over the chunk totals.
constexpr int kChunk = 1024;

__global__ void __launch_bounds__(kChunk) chunk_scan_kernel(const int* __restrict__ counts, std::int64_t tiles,
                                                            int* __restrict__ local, int* __restrict__ chunk_totals) {
  const std::int64_t t = std::int64_t(blockIdx.x) * kChunk + threadIdx.x;
  const int v = t < tiles ? counts[t] : 0;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int inclusive = v;
  for (int o = 1; o < 32; o *= 2) {
    const int up = __shfl_up_sync(0xffffffffu, inclusive, o);
    if (lane >= o) inclusive += up;
  }
  __shared__ int warp_sums[32];
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    int w = warp_sums[lane];
    for (int o = 1; o < 32; o *= 2) {
      const int up = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += up;
    }
    warp_sums[lane] = w;
  }
  __syncthreads();
  if (t < tiles) local[t] = inclusive - v + (warp > 0 ? warp_sums[warp - 1] : 0);
  if (threadIdx.x == kChunk - 1) chunk_totals[blockIdx.x] = warp_sums[31];
}

// One block: offsets[t] = sum of counts[0..t), offsets[tiles] = the total.
__global__ void __launch_bounds__(1024) offsets_kernel(const int* __restrict__ counts, std::int64_t tiles,
                                                       std::int64_t* __restrict__ offsets) {
  const std::int64_t per = (tiles + 1023) / 1024;
  const std::int64_t begin = threadIdx.x * per, end = min(begin + per, tiles);
  std::int64_t sum = 0;
  for (std::int64_t t = begin; t < end; ++t) sum += counts[t];
  // Exclusive scan of the per-thread sums: within warps by shuffles, then across warps.
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  std::int64_t inclusive = sum;
  for (int o = 1; o < 32; o *= 2) {
    const std::int64_t up = __shfl_up_sync(0xffffffffu, inclusive, o);
    if (lane >= o) inclusive += up;
  }
  __shared__ std::int64_t warp_sums[32];
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    std::int64_t v = warp_sums[lane];
    for (int o = 1; o < 32; o *= 2) {
      const std::int64_t up = __shfl_up_sync(0xffffffffu, v, o);
      if (lane >= o) v += up;
    }
    warp_sums[lane] = v;  // inclusive over warps
  }
  __syncthreads();
  std::int64_t running = inclusive - sum + (warp > 0 ? warp_sums[warp - 1] : 0);
  for (std::int64_t t = begin; t < end; ++t) {
    offsets[t] = running;
    running += counts[t];
  }
  if (threadIdx.x == 1023) offsets[tiles] = warp_sums[31];
}

/// The rank of each of this thread's elements among the tile's true elements (row-major
/// order: item j of thread t is element j * kThreads + t). flags[j] says whether it is true.
__device__ __forceinline__ void rank_in_tile(const std::uint8_t* __restrict__ mask, std::int64_t start, std::int64_t n,
                                             bool (&flags)[kItems], int (&ranks)[kItems]) {
  __shared__ int counts[kItems * kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned ballots[kItems];
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const std::int64_t i = start + j * kThreads + threadIdx.x;
    flags[j] = i < n && mask[i] != 0;
    ballots[j] = __ballot_sync(0xffffffffu, flags[j]);
    if (lane == 0) counts[j * kWarps + warp] = __popc(ballots[j]);
  }
  __syncthreads();
  // Exclusive scan of the kItems * kWarps (= 64) counts in (item, warp) order, by warp 0.
  if (warp == 0) {
    const int a = counts[2 * lane], b = counts[2 * lane + 1];
    int inclusive = a + b;
    for (int o = 1; o < 32; o *= 2) {
      const int up = __shfl_up_sync(0xffffffffu, inclusive, o);
      if (lane >= o) inclusive += up;
    }
    const int exclusive = inclusive - a - b;
    counts[2 * lane] = exclusive;
    counts[2 * lane + 1] = exclusive + a;
  }
  __syncthreads();
  const unsigned below = (1u << lane) - 1u;
#pragma unroll
  for (int j = 0; j < kItems; ++j) ranks[j] = counts[j * kWarps + warp] + __popc(ballots[j] & below);
}

template <int E>
__global__ void __launch_bounds__(kThreads) select_kernel(const element_t<E>* __restrict__ x,
                                                          const std::uint8_t* __restrict__ mask, std::int64_t n,
                                                          const int* __restrict__ local,
                                                          const std::int64_t* __restrict__ chunk_offsets,
                                                          element_t<E>* __restrict__ out) {
  const std::int64_t start = std::int64_t(blockIdx.x) * kTile;
  bool flags[kItems];
  int ranks[kItems];
  rank_in_tile(mask, start, n, flags, ranks);
  const std::int64_t base = chunk_offsets[blockIdx.x / kChunk] + local[blockIdx.x];
#pragma unroll
  for (int j = 0; j < kItems; ++j)
    if (flags[j]) out[base + ranks[j]] = x[start + j * kThreads + threadIdx.x];
}

template <int E>
__global__ void __launch_bounds__(kThreads) scatter_kernel(const element_t<E>* __restrict__ x,
                                                           const std::uint8_t* __restrict__ mask, std::int64_t n,
                                                           const int* __restrict__ local,
                                                           const std::int64_t* __restrict__ chunk_offsets,
                                                           const element_t<E>* __restrict__ source,
                                                           std::int64_t source_n, element_t<E>* __restrict__ out) {
  const std::int64_t start = std::int64_t(blockIdx.x) * kTile;
  bool flags[kItems];
  int ranks[kItems];
  rank_in_tile(mask, start, n, flags, ranks);
  const std::int64_t base = chunk_offsets[blockIdx.x / kChunk] + local[blockIdx.x];
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const std::int64_t i = start + j * kThreads + threadIdx.x;
    if (i >= n) continue;
    const std::int64_t k = base + ranks[j];
    // k beyond source: never read it (the front end reports the shortfall).
    out[i] = flags[j] && k < source_n ? source[k] : x[i];
  }
}


/// Pass 1 and the scans, with their scratch; total() is where the number of true elements lands.
class TileOffsets {
 public:
  TileOffsets(const Buffer& mask, int device, cudaStream_t stream)
      : tiles_((mask.numel() + kTile - 1) / kTile),
        chunks_((tiles_ + kChunk - 1) / kChunk),
        counts_(device, static_cast<std::size_t>(tiles_) * sizeof(int), stream),
        local_(device, static_cast<std::size_t>(tiles_) * sizeof(int), stream),
        chunk_totals_(device, static_cast<std::size_t>(chunks_) * sizeof(int), stream),
        chunk_offsets_(device, static_cast<std::size_t>(chunks_ + 1) * sizeof(std::int64_t), stream) {
    count_kernel<<<static_cast<unsigned>(tiles_), kThreads, 0, stream>>>(mask.data_as<std::uint8_t>(), mask.numel(),
                                                                         counts_.as<int>());
    FERRITE_CUDA_CHECK_LAUNCH();
    chunk_scan_kernel<<<static_cast<unsigned>(chunks_), kChunk, 0, stream>>>(counts_.as<int>(), tiles_, local_.as<int>(),
                                                                            chunk_totals_.as<int>());
    FERRITE_CUDA_CHECK_LAUNCH();
    offsets_kernel<<<1, 1024, 0, stream>>>(chunk_totals_.as<int>(), chunks_, chunk_offsets_.as<std::int64_t>());
    FERRITE_CUDA_CHECK_LAUNCH();
  }
  std::int64_t tiles() const { return tiles_; }
  const int* local() const { return local_.as<int>(); }
  const std::int64_t* chunk_offsets() const { return chunk_offsets_.as<std::int64_t>(); }
  const std::int64_t* total() const { return chunk_offsets_.as<std::int64_t>() + chunks_; }

 private:
  std::int64_t tiles_, chunks_;
  Scratch counts_, local_, chunk_totals_, chunk_offsets_;
};

template <int E>
void launch_select(const Buffer& x, const Buffer& mask, const TileOffsets& t, void* out, cudaStream_t stream) {
  select_kernel<E><<<static_cast<unsigned>(t.tiles()), kThreads, 0, stream>>>(
      static_cast<const element_t<E>*>(x.data()), mask.data_as<std::uint8_t>(), x.numel(), t.local(),
      t.chunk_offsets(), static_cast<element_t<E>*>(out));
  FERRITE_CUDA_CHECK_LAUNCH();
}

template <int E>
void launch_scatter(const Buffer& x, const Buffer& mask, const TileOffsets& t, const Buffer& source, const Buffer& out,
                    cudaStream_t stream) {
  scatter_kernel<E><<<static_cast<unsigned>(t.tiles()), kThreads, 0, stream>>>(
      static_cast<const element_t<E>*>(x.data()), mask.data_as<std::uint8_t>(), x.numel(), t.local(),
      t.chunk_offsets(), static_cast<const element_t<E>*>(source.data()), source.numel(),
      static_cast<element_t<E>*>(out.data()));
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace

Buffer masked_select(const Buffer& x, const Buffer& mask, const std::function<Buffer(std::int64_t)>& allocate_out,
                     int device, cudaStream_t stream) {
  const TileOffsets offsets(mask, device, stream);
  Readback total;
  total.start(offsets.total(), 1, device, stream);
  const std::int64_t count = total.wait()[0];
  Buffer out = allocate_out(count);
  if (count == 0) return out;
  switch (dtype_size(x.dtype())) {
    case 1: launch_select<1>(x, mask, offsets, out.data(), stream); break;
    case 2: launch_select<2>(x, mask, offsets, out.data(), stream); break;
    case 4: launch_select<4>(x, mask, offsets, out.data(), stream); break;
    case 8: launch_select<8>(x, mask, offsets, out.data(), stream); break;
    default: launch_select<16>(x, mask, offsets, out.data(), stream); break;
  }
  return out;
}

std::int64_t masked_scatter(const Buffer& x, const Buffer& mask, const Buffer& source, const Buffer& out, int device,
                            cudaStream_t stream) {
  const TileOffsets offsets(mask, device, stream);
  Readback total;
  total.start(offsets.total(), 1, device, stream);
  switch (dtype_size(x.dtype())) {
    case 1: launch_scatter<1>(x, mask, offsets, source, out, stream); break;
    case 2: launch_scatter<2>(x, mask, offsets, source, out, stream); break;
    case 4: launch_scatter<4>(x, mask, offsets, source, out, stream); break;
    case 8: launch_scatter<8>(x, mask, offsets, source, out, stream); break;
    default: launch_scatter<16>(x, mask, offsets, source, out, stream); break;
  }
  return total.wait()[0];
}

}  // namespace ferrite::cuda::shape
