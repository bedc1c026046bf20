// masked_select and masked_scatter: a two-pass block compaction. Pass 1 counts the true
// mask bytes of each tile of 4096 elements; a two-level scan (chunks of 1024 tiles, then the
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

constexpr int kThreads = 256, kWarps = kThreads / 32, kItems = 16, kTile = kThreads * kItems;

// Pass 1: one warp per tile, so no block barrier, and only the tile's total matters, so each
// lane counts whole 16-byte vectors of mask bytes (kTile / 512 of them) when the tile is whole
// and aligned. One byte per lane and item, as pass 2 reads them, made this pass a sixth of the
// whole operation for a fifth of its bytes.
constexpr int kCountVectors = kTile / 16 / 32;

__global__ void __launch_bounds__(kThreads) count_kernel(const std::uint8_t* __restrict__ mask, std::int64_t n,
                                                         std::int64_t tiles, int* __restrict__ tile_counts) {
  const int lane = threadIdx.x % 32;
  const std::int64_t tile = std::int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (tile >= tiles) return;  // the whole warp: the shuffles below see every lane
  const std::int64_t start = tile * kTile;
  int count = 0;
  if (start + kTile <= n && reinterpret_cast<std::uintptr_t>(mask) % 16 == 0) {
    const uint4* vectors = reinterpret_cast<const uint4*>(mask + start);
    uint4 v[kCountVectors];
#pragma unroll
    for (int k = 0; k < kCountVectors; ++k) v[k] = vectors[k * 32 + lane];
    // __vcmpne4 sets each byte that is not zero to 0xff: 8 set bits per true element.
    int bits = 0;
#pragma unroll
    for (int k = 0; k < kCountVectors; ++k)
      bits += __popc(__vcmpne4(v[k].x, 0u)) + __popc(__vcmpne4(v[k].y, 0u)) + __popc(__vcmpne4(v[k].z, 0u)) +
              __popc(__vcmpne4(v[k].w, 0u));
    count = bits / 8;
  } else {
    const std::int64_t end = min(start + kTile, n);
    for (std::int64_t i = start + lane; i < end; i += 32) count += mask[i] != 0;
  }
  for (int o = 16; o > 0; o /= 2) count += __shfl_xor_sync(0xffffffffu, count, o);
  if (lane == 0) tile_counts[tile] = count;
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

/// Pass 2's ranking. Item j of thread t is element j * kThreads + t of the tile; ballots[j]
/// has bit l set when lane l's element of item j is true. Returns, in shared memory, the
/// exclusive scan of the true counts in (item, warp) order, which is element order: element
/// (j, warp, lane) lands at offsets[j * kWarps + warp] + popc(ballots[j] below lane).
__device__ __forceinline__ const int* ballot_tile(const std::uint8_t* __restrict__ mask, std::int64_t start,
                                                  std::int64_t n, unsigned (&ballots)[kItems]) {
  constexpr int kCounts = kItems * kWarps, kPerLane = kCounts / 32;
  __shared__ int offsets[kCounts];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  bool flags[kItems];
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const std::int64_t i = start + j * kThreads + threadIdx.x;
    flags[j] = i < n && mask[i] != 0;
  }
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    ballots[j] = __ballot_sync(0xffffffffu, flags[j]);
    if (lane == 0) offsets[j * kWarps + warp] = __popc(ballots[j]);
  }
  __syncthreads();
  if (warp == 0) {  // lane l scans counts [kPerLane * l, kPerLane * (l + 1))
    int mine[kPerLane], sum = 0;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) sum += mine[k] = offsets[kPerLane * lane + k];
    int inclusive = sum;
    for (int o = 1; o < 32; o *= 2) {
      const int up = __shfl_up_sync(0xffffffffu, inclusive, o);
      if (lane >= o) inclusive += up;
    }
    int running = inclusive - sum;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) {
      offsets[kPerLane * lane + k] = running;
      running += mine[k];
    }
  }
  __syncthreads();
  return offsets;
}

// Pass 2 loads the tile's elements before it ranks the mask, all of them: their round trip
// overlaps the mask's and the barriers instead of following them (with half the mask true
// nearly every 32-byte sector of x is needed anyway).
template <int E>
__device__ __forceinline__ void load_tile(const element_t<E>* __restrict__ x, std::int64_t start, std::int64_t n,
                                          element_t<E> (&values)[kItems]) {
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const std::int64_t i = start + j * kThreads + threadIdx.x;
    values[j] = i < n ? x[i] : element_t<E>{};
  }
}

template <int E>
__global__ void __launch_bounds__(kThreads) select_kernel(const element_t<E>* __restrict__ x,
                                                          const std::uint8_t* __restrict__ mask, std::int64_t n,
                                                          const int* __restrict__ local,
                                                          const std::int64_t* __restrict__ chunk_offsets,
                                                          element_t<E>* __restrict__ out) {
  const std::int64_t start = std::int64_t(blockIdx.x) * kTile;
  element_t<E> values[kItems];
  load_tile<E>(x, start, n, values);
  unsigned ballots[kItems];
  const int* offsets = ballot_tile(mask, start, n, ballots);
  const std::int64_t base = chunk_offsets[blockIdx.x / kChunk] + local[blockIdx.x];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned below = (1u << lane) - 1u;
#pragma unroll
  for (int j = 0; j < kItems; ++j)
    if ((ballots[j] >> lane) & 1u) out[base + offsets[j * kWarps + warp] + __popc(ballots[j] & below)] = values[j];
}

template <int E>
__global__ void __launch_bounds__(kThreads) scatter_kernel(const element_t<E>* __restrict__ x,
                                                           const std::uint8_t* __restrict__ mask, std::int64_t n,
                                                           const int* __restrict__ local,
                                                           const std::int64_t* __restrict__ chunk_offsets,
                                                           const element_t<E>* __restrict__ source,
                                                           std::int64_t source_n, element_t<E>* __restrict__ out) {
  const std::int64_t start = std::int64_t(blockIdx.x) * kTile;
  element_t<E> values[kItems];
  load_tile<E>(x, start, n, values);
  unsigned ballots[kItems];
  const int* offsets = ballot_tile(mask, start, n, ballots);
  const std::int64_t base = chunk_offsets[blockIdx.x / kChunk] + local[blockIdx.x];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned below = (1u << lane) - 1u;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const std::int64_t i = start + j * kThreads + threadIdx.x;
    if (i >= n) continue;
    if ((ballots[j] >> lane) & 1u) {
      const std::int64_t k = base + offsets[j * kWarps + warp] + __popc(ballots[j] & below);
      // k beyond source: never read it (the front end reports the shortfall).
      if (k < source_n) values[j] = source[k];
    }
    out[i] = values[j];
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
    count_kernel<<<static_cast<unsigned>((tiles_ + kWarps - 1) / kWarps), kThreads, 0, stream>>>(
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
