// The elementwise engine's kernels for views (strided operands): included by
// elementwise_engine.cuh, which picks them. Both index in 32 bits; the caller checked
// offsets_fit_32_bits (core/elementwise_layout.hpp), so no index, offset or partial sum of
// one reaches 2^31.
//
//  * strided_kernel: any layout of up to kMaxElementwiseDims dims (a narrowed view, rows
//    that start off the 16-byte grid, a stride-2 slice, broadcasting). Scalar accesses,
//    coalesced across a warp (thread t of a block takes elements base + t + u * kThreads),
//    kItems of them per thread with every load issued before the first store, and the
//    index decomposition by multiply-high and shift (core/fast_divmod.hpp) instead of
//    division. One element per thread with a division per dim (what this replaced) ran a
//    narrowed [16384, 16383] add at 74% of the contiguous add's rate on an H200.
//  * tiled_kernel: rank-2 layouts in which some input is scattered along the output's
//    rows (x.t() + y): a 32 x 32 tile of each such input is read along its columns (its
//    memory order) into shared memory, then every input is read and the output written
//    along the rows. Without it, x.t() went through a dense copy first: 5 passes over the
//    data for 3, 58% of the contiguous add's rate.
#pragma once

#include <cuda_runtime.h>

#include <cuda/std/tuple>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/elementwise_layout.hpp"
#include "core/fast_divmod.hpp"
#include "core/numeric.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/backend.hpp"

namespace ferrite::cuda::kernels {

// ---- strided_kernel ----

template <int kInputs>
struct StridedArgs {
  static constexpr int kSlots = kInputs > 0 ? kInputs : 1;
  int rank;
  std::uint32_t numel;
  detail::FastDivmod sizes[kMaxElementwiseDims];        // innermost first
  std::uint32_t strides[kSlots][kMaxElementwiseDims];   // innermost first
  const void* inputs[kSlots];
};

/// Elements per thread: 32 bytes of the widest operand in flight, at least 4 and at most 16
/// elements (an H200 needs about 16 bytes per thread per operand in flight to reach its
/// bandwidth with vector loads; scalar loads are smaller requests, so twice that).
template <class... T>
inline constexpr int kStridedItems =
    std::max<int>(4, std::min<int>(16, static_cast<int>(32 / std::max({sizeof(T)...}))));

template <int kThreads, int kItems, class Out, class F, int kInputs, class... In, std::size_t... K>
__device__ __forceinline__ void strided_body(F f, Out* __restrict__ out, const StridedArgs<kInputs>& args,
                                             std::index_sequence<K...>) {
  const std::uint32_t first = blockIdx.x * std::uint32_t(kThreads * kItems) + threadIdx.x;
  // The innermost and outermost dims in registers: a rank-2 layout (a narrowed matrix, and
  // any view whose dims merge to two) needs nothing else. For rank 1 the outermost dim is
  // the innermost one and the division gives 0.
  const detail::FastDivmod inner = args.sizes[0];
  std::uint32_t inner_stride[StridedArgs<kInputs>::kSlots], outer_stride[StridedArgs<kInputs>::kSlots];
#pragma unroll
  for (int k = 0; k < kInputs; ++k) {
    inner_stride[k] = args.strides[k][0];
    outer_stride[k] = args.strides[k][args.rank - 1];
  }
  auto load = [&](std::uint32_t i) {
    std::uint32_t rest = inner.div(i);
    const std::uint32_t coord = i - rest * inner.divisor;
    std::uint32_t offsets[StridedArgs<kInputs>::kSlots];
#pragma unroll
    for (int k = 0; k < kInputs; ++k) offsets[k] = coord * inner_stride[k];
    // The middle dims of rank 3 and up, in a loop: unrolled over the kMaxElementwiseDims
    // positions for each item it made the unary .cu files compile 60% longer. args is
    // __grid_constant__, so the dynamic index reads the parameter bank (uniform across the
    // warp), with no local copy.
#pragma unroll 1
    for (int d = 1; d + 1 < args.rank; ++d) {
      const std::uint32_t outer = args.sizes[d].div(rest);
      const std::uint32_t middle = rest - outer * args.sizes[d].divisor;
      rest = outer;
#pragma unroll
      for (int k = 0; k < kInputs; ++k) offsets[k] += middle * args.strides[k][d];
    }
#pragma unroll
    for (int k = 0; k < kInputs; ++k) offsets[k] += rest * outer_stride[k];
    return ::cuda::std::make_tuple(static_cast<const In*>(args.inputs[K])[offsets[K]]...);
  };
  ::cuda::std::tuple<In...> loaded[kItems];
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const std::uint32_t i = first + u * kThreads;
    if (i < args.numel) loaded[u] = load(i);
  }
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const std::uint32_t i = first + u * kThreads;
    if (i < args.numel) out[i] = detail::narrow<Out>(f(detail::widen(::cuda::std::get<K>(loaded[u]))...));
  }
}

template <int kThreads, int kItems, class Out, class F, class... In>
__global__ void __launch_bounds__(kThreads)
    strided_kernel(F f, Out* __restrict__ out, const __grid_constant__ StridedArgs<static_cast<int>(sizeof...(In))> args) {
  strided_body<kThreads, kItems, Out, F, static_cast<int>(sizeof...(In)), In...>(f, out, args,
                                                                                 std::index_sequence_for<In...>{});
}

/// kItemsN > 0 overrides kStridedItems (fewer copies of the op's code per kernel: nvcc time).
template <int kItemsN = 0, class Out, class F, class... In>
void launch_strided(F f, const ElementwiseLayout& layout, Out* out, cudaStream_t stream, const In*... in) {
  constexpr int kThreads = 128;
  constexpr int kItems = kItemsN > 0 ? kItemsN : kStridedItems<Out, In...>;
  StridedArgs<static_cast<int>(sizeof...(In))> args{};
  args.rank = layout.rank;
  args.numel = static_cast<std::uint32_t>(layout.numel);
  const void* pointers[] = {static_cast<const void*>(in)..., nullptr};
  const int last = layout.rank - 1;
  for (int d = 0; d < layout.rank; ++d)
    args.sizes[d] = detail::FastDivmod(static_cast<std::uint32_t>(layout.sizes[last - d]));
  for (int k = 0; k < static_cast<int>(sizeof...(In)); ++k) {
    args.inputs[k] = pointers[k];
    for (int d = 0; d < layout.rank; ++d) args.strides[k][d] = static_cast<std::uint32_t>(layout.strides[k][last - d]);
  }
  // numel < 2^31, so at most 2^24 blocks: within the grid's 2^31 - 1.
  const std::int64_t per_block = std::int64_t(kThreads) * kItems;
  const auto blocks = static_cast<unsigned>((layout.numel + per_block - 1) / per_block);
  strided_kernel<kThreads, kItems, Out, F, In...><<<blocks, kThreads, 0, stream>>>(f, out, args);
  FERRITE_CUDA_CHECK_LAUNCH();
}

// ---- tiled_kernel ----

inline constexpr int kTile = 32;                       // a tile is kTile x kTile elements
inline constexpr int kTileThreadRows = 8;              // a block is kTile x kTileThreadRows threads
inline constexpr int kTileItems = kTile / kTileThreadRows;
inline constexpr int kTilePitch = kTile + 1;           // padding: column reads hit 32 banks
inline constexpr int kTileGridRows = 65535;            // gridDim.y's limit

template <int kInputs>
struct TiledArgs {
  static constexpr int kSlots = kInputs > 0 ? kInputs : 1;
  std::uint32_t rows, cols;  // the output, [rows, cols], contiguous
  std::uint32_t row_stride[kSlots], col_stride[kSlots];
  const void* inputs[kSlots];
  bool staged[kSlots];       // read through the shared-memory tile
};

template <class T>
struct TileColumn {
  T v[kTileItems];
};

/// Byte offset of input k's tile in the block's shared memory. Tiles are kTile * kTilePitch
/// = 1056 elements, a multiple of 16, so every tile starts 16-byte aligned.
template <class... In>
constexpr std::size_t tile_offset(std::size_t k) {
  constexpr std::size_t sizes[] = {sizeof(In)...};
  std::size_t bytes = 0;
  for (std::size_t j = 0; j < k; ++j) bytes += sizes[j] * kTile * kTilePitch;
  return bytes;
}

/// Step 1 for input K: a staged input's tile element (r0 + tx, c0 + ty + 8j) goes to shared
/// memory (consecutive threads read consecutive rows, its memory order); a direct input's
/// element (r0 + ty + 8j, c0 + tx) goes to registers. All loads of a thread are in flight
/// together.
template <std::size_t K, class T, int kInputs>
__device__ __forceinline__ void tile_load(const TiledArgs<kInputs>& args, unsigned char* tile_bytes, std::uint32_t r0,
                                          std::uint32_t c0, int tx, int ty, TileColumn<T>& direct) {
  const T* in = static_cast<const T*>(args.inputs[K]);
  const std::uint32_t rs = args.row_stride[K], cs = args.col_stride[K];
  if (args.staged[K]) {
    T* tile = reinterpret_cast<T*>(tile_bytes);
    const std::uint32_t r = r0 + tx;
#pragma unroll
    for (int j = 0; j < kTileItems; ++j) {
      const std::uint32_t c = c0 + ty + kTileThreadRows * j;
      if (r < args.rows && c < args.cols) tile[(ty + kTileThreadRows * j) * kTilePitch + tx] = in[r * rs + c * cs];
    }
  } else {
    const std::uint32_t c = c0 + tx;
#pragma unroll
    for (int j = 0; j < kTileItems; ++j) {
      const std::uint32_t r = r0 + ty + kTileThreadRows * j;
      if (r < args.rows && c < args.cols) direct.v[j] = in[r * rs + c * cs];
    }
  }
}

/// Step 2 for input K: the value at (r0 + ty + 8j, c0 + tx).
template <std::size_t K, class T, int kInputs>
__device__ __forceinline__ T tile_value(const TiledArgs<kInputs>& args, const unsigned char* tile_bytes, int tx,
                                        int ty, int j, const TileColumn<T>& direct) {
  if (!args.staged[K]) return direct.v[j];
  const T* tile = reinterpret_cast<const T*>(tile_bytes);
  return tile[tx * kTilePitch + ty + kTileThreadRows * j];
}

template <class Out, class F, int kInputs, class... In, std::size_t... K>
__device__ __forceinline__ void tiled_body(F f, Out* __restrict__ out, const TiledArgs<kInputs>& args,
                                           std::index_sequence<K...>) {
  __shared__ alignas(16) unsigned char smem[tile_offset<In...>(sizeof...(In))];
  const int tx = static_cast<int>(threadIdx.x) % kTile, ty = static_cast<int>(threadIdx.x) / kTile;
  const std::uint32_t c0 = blockIdx.x * kTile;
  for (std::uint32_t r0 = blockIdx.y * kTile; r0 < args.rows; r0 += gridDim.y * kTile) {
    ::cuda::std::tuple<TileColumn<In>...> direct;
    (tile_load<K, In, kInputs>(args, smem + tile_offset<In...>(K), r0, c0, tx, ty, ::cuda::std::get<K>(direct)), ...);
    __syncthreads();
    const std::uint32_t c = c0 + tx;
#pragma unroll
    for (int j = 0; j < kTileItems; ++j) {
      const std::uint32_t r = r0 + ty + kTileThreadRows * j;
      if (r < args.rows && c < args.cols)
        out[r * args.cols + c] = detail::narrow<Out>(
            f(detail::widen(tile_value<K, In, kInputs>(args, smem + tile_offset<In...>(K), tx, ty, j,
                                                        ::cuda::std::get<K>(direct)))...));
    }
    __syncthreads();  // the next tile overwrites shared memory
  }
}

template <class Out, class F, class... In>
__global__ void __launch_bounds__(kTile * kTileThreadRows)
    tiled_kernel(F f, Out* __restrict__ out, TiledArgs<static_cast<int>(sizeof...(In))> args) {
  tiled_body<Out, F, static_cast<int>(sizeof...(In)), In...>(f, out, args, std::index_sequence_for<In...>{});
}

/// `layout` passed uses_transpose_tile (core/elementwise_layout.hpp).
template <class Out, class F, class... In>
void launch_tiled(F f, const ElementwiseLayout& layout, Out* out, cudaStream_t stream, const In*... in) {
  constexpr int kInputs = static_cast<int>(sizeof...(In));
  TiledArgs<kInputs> args{};
  args.rows = static_cast<std::uint32_t>(layout.sizes[0]);
  args.cols = static_cast<std::uint32_t>(layout.sizes[1]);
  const void* pointers[] = {static_cast<const void*>(in)..., nullptr};
  constexpr std::size_t bytes[] = {sizeof(In)..., 0};
  for (int k = 0; k < kInputs; ++k) {
    args.inputs[k] = pointers[k];
    args.row_stride[k] = static_cast<std::uint32_t>(layout.strides[k][0]);
    args.col_stride[k] = static_cast<std::uint32_t>(layout.strides[k][1]);
    args.staged[k] = layout.strides[k][1] * static_cast<std::int64_t>(bytes[k]) >= kScatteredStrideBytes;
  }
  // rows and cols < 2^31: the column tiles fit gridDim.x; row tiles past 65535 loop.
  const dim3 grid(static_cast<unsigned>((layout.sizes[1] + kTile - 1) / kTile),
                  static_cast<unsigned>(std::min<std::int64_t>((layout.sizes[0] + kTile - 1) / kTile, kTileGridRows)));
  tiled_kernel<Out, F, In...><<<grid, kTile * kTileThreadRows, 0, stream>>>(f, out, args);
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::kernels
