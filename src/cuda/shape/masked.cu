// masked_select and masked_scatter: a two-pass compaction over warp tiles of 512 elements.
// Pass 1 counts the true mask bytes of each tile; a two-level scan (chunks of 1024 tiles,
// then the chunk totals) turns the counts into tile offsets and the total, which the host
// reads back (masked_select must size its output, masked_scatter must check that source is
// large enough). Pass 2 ranks each element inside its tile with warp ballots and moves it.
// A tile belongs to one warp in both passes, so neither has a block barrier or shared
// memory: warps never wait for each other, which is what keeps the memory busy (tiles of a
// whole block, ranked through shared memory between two barriers, ran pass 2 at 2.3 TB/s).
// Loads and stores are coalesced: a warp's selected elements land next to each other.
#include <algorithm>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/launch_grid.hpp"
#include "cuda/shape/shape_device.cuh"
#include "cuda/shape/shape_kernels.hpp"
#include "cuda/shape/shape_runtime.hpp"

namespace ferrite::cuda::shape {
namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kItems = 16, kTile = 32 * kItems;  // item j of lane l is element j * 32 + l of the tile

// Pass 1: each lane counts one 16-byte vector of mask bytes per tile (a tile is 512 bytes),
// kCountTiles tiles per warp so that as many vectors are in flight.
constexpr int kCountTiles = 8;

__global__ void __launch_bounds__(kThreads) count_kernel(const std::uint8_t* __restrict__ mask, std::int64_t n,
                                                         std::int64_t tiles, int* __restrict__ tile_counts) {
  static_assert(kTile == 32 * 16, "one 16-byte vector per lane and tile");
  const int lane = threadIdx.x % 32;
  const std::int64_t first = (std::int64_t(blockIdx.x) * kWarps + threadIdx.x / 32) * kCountTiles;
  if (first >= tiles) return;  // the whole warp: the reductions below see every lane
  int counts[kCountTiles];
  if ((first + kCountTiles) * kTile <= n && reinterpret_cast<std::uintptr_t>(mask) % 16 == 0) {
    uint4 v[kCountTiles];
#pragma unroll
    for (int k = 0; k < kCountTiles; ++k) v[k] = reinterpret_cast<const uint4*>(mask + (first + k) * kTile)[lane];
    // __vcmpne4 sets each byte that is not zero to 0xff: 8 set bits per true element.
#pragma unroll
    for (int k = 0; k < kCountTiles; ++k)
      counts[k] = (__popc(__vcmpne4(v[k].x, 0u)) + __popc(__vcmpne4(v[k].y, 0u)) + __popc(__vcmpne4(v[k].z, 0u)) +
                   __popc(__vcmpne4(v[k].w, 0u))) / 8;
  } else {  // the last tiles, or a mask that is not 16-byte aligned
#pragma unroll
    for (int k = 0; k < kCountTiles; ++k) {
      counts[k] = 0;
      const std::int64_t start = (first + k) * kTile, end = min(start + kTile, n);
      for (std::int64_t i = start + lane; i < end; i += 32) counts[k] += mask[i] != 0;
    }
  }
#pragma unroll
  for (int k = 0; k < kCountTiles; ++k) {
    const int total = static_cast<int>(__reduce_add_sync(0xffffffffu, static_cast<unsigned>(counts[k])));
    if (lane == k && first + k < tiles) tile_counts[first + k] = total;
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

// Pass 2. The warp loads its tile's elements and mask bytes together, all of them (with half
// the mask true nearly every 32-byte sector of x is needed anyway), then ranks: ballots[j]
// has bit l set when lane l's element of item j is true, and the true elements of items
// before j come first.
struct WarpTile {
  std::int64_t start;  // first element
  int lane;
  unsigned ballots[kItems];

  __device__ WarpTile(const std::uint8_t* __restrict__ mask, std::int64_t tile, std::int64_t n)
      : start(tile * kTile), lane(threadIdx.x % 32) {
    bool flags[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const std::int64_t i = start + j * 32 + lane;
      flags[j] = i < n && mask[i] != 0;
    }
#pragma unroll
    for (int j = 0; j < kItems; ++j) ballots[j] = __ballot_sync(0xffffffffu, flags[j]);
  }
  __device__ std::int64_t element(int j) const { return start + j * 32 + lane; }
  __device__ bool selected(int j) const { return (ballots[j] >> lane) & 1u; }
  /// This lane's rank among item j's true elements.
  __device__ int rank(int j) const { return __popc(ballots[j] & ((1u << lane) - 1u)); }
};

template <int E>
__device__ __forceinline__ void load_items(const element_t<E>* __restrict__ x, std::int64_t tile, std::int64_t n,
                                           element_t<E> (&values)[kItems]) {
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const std::int64_t i = tile * kTile + j * 32 + threadIdx.x % 32;
    values[j] = i < n ? x[i] : element_t<E>{};
  }
}

template <int E>
__global__ void __launch_bounds__(kThreads) select_kernel(const element_t<E>* __restrict__ x,
                                                          const std::uint8_t* __restrict__ mask, std::int64_t n,
                                                          std::int64_t tiles, const int* __restrict__ local,
                                                          const std::int64_t* __restrict__ chunk_offsets,
                                                          element_t<E>* __restrict__ out) {
  const std::int64_t tile = std::int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (tile >= tiles) return;
  std::int64_t at = chunk_offsets[tile / kChunk] + local[tile];
  element_t<E> values[kItems];
  load_items<E>(x, tile, n, values);
  const WarpTile t(mask, tile, n);
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    if (t.selected(j)) out[at + t.rank(j)] = values[j];
    at += __popc(t.ballots[j]);
  }
}

template <int E>
__global__ void __launch_bounds__(kThreads) scatter_kernel(const element_t<E>* __restrict__ x,
                                                           const std::uint8_t* __restrict__ mask, std::int64_t n,
                                                           std::int64_t tiles, const int* __restrict__ local,
                                                           const std::int64_t* __restrict__ chunk_offsets,
                                                           const element_t<E>* __restrict__ source,
                                                           std::int64_t source_n, element_t<E>* __restrict__ out) {
  const std::int64_t tile = std::int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (tile >= tiles) return;
  std::int64_t at = chunk_offsets[tile / kChunk] + local[tile];
  element_t<E> values[kItems];
  load_items<E>(x, tile, n, values);
  const WarpTile t(mask, tile, n);
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const std::int64_t k = at + t.rank(j);
    // k beyond source: never read it (the front end reports the shortfall).
    if (t.selected(j) && k < source_n) values[j] = source[k];
    if (t.element(j) < n) out[t.element(j)] = values[j];
    at += __popc(t.ballots[j]);
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
    count_kernel<<<blocks_for(tiles_, kWarps * kCountTiles), kThreads, 0, stream>>>(
        mask.data_as<std::uint8_t>(), mask.numel(), tiles_, counts_.as<int>());
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
  select_kernel<E><<<blocks_for(t.tiles(), kWarps), kThreads, 0, stream>>>(
      static_cast<const element_t<E>*>(x.data()), mask.data_as<std::uint8_t>(), x.numel(), t.tiles(), t.local(),
      t.chunk_offsets(), static_cast<element_t<E>*>(out));
  FERRITE_CUDA_CHECK_LAUNCH();
}

template <int E>
void launch_scatter(const Buffer& x, const Buffer& mask, const TileOffsets& t, const Buffer& source, const Buffer& out,
                    cudaStream_t stream) {
  scatter_kernel<E><<<blocks_for(t.tiles(), kWarps), kThreads, 0, stream>>>(
      static_cast<const element_t<E>*>(x.data()), mask.data_as<std::uint8_t>(), x.numel(), t.tiles(), t.local(),
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
