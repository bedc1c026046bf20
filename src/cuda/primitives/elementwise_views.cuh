// The elementwise engine's kernels for views (strided operands): included by
// elementwise_engine.cuh, which picks them. Both index in 32 bits; the caller checked
// offsets_fit_32_bits (core/elementwise_layout.hpp), so no index or offset reaches 2^31
// (the strided kernel's partial sums may wrap modulo 2^32 and still end on the offset).
//
//  * strided_kernel: any layout of up to kMaxElementwiseDims dims (a narrowed view, rows
//    that start off the 16-byte grid, a stride-2 slice, broadcasting). Scalar accesses,
//    coalesced across a warp (thread t of a block takes elements base + t + u * kThreads),
//    kItems of them per thread with every load issued before the first store, and the
//    index decomposition by multiply-high and shift (core/fast_divmod.hpp) instead of
//    division, with no branch per item. One element per thread with a division per dim
//    (what this replaced) ran a narrowed [16384, 16383] add at 74% of the contiguous add's
//    rate on an H200.
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

/// Input k's offset of element i is i * steps[k][0] + sum over d >= 1 of q_d * steps[k][d],
/// where q_d = i / (sizes[0] * ... * sizes[d-1]) (q_1 = i / sizes[0], q_(d+1) = q_d / sizes[d])
/// and steps[k][d] = stride_d - sizes[d-1] * stride_(d-1), innermost first. That is the sum
/// of coord_d * stride_d with coord_d = q_d - sizes[d] * q_(d+1): the coordinates never need
/// computing, one multiply-high, shift and multiply-add per dim and input. All in uint32_t
/// arithmetic: terms wrap modulo 2^32 (steps are often "negative"), the sum is the offset.
template <int kInputs>
struct StridedArgs {
  static constexpr int kSlots = kInputs > 0 ? kInputs : 1;
  int rank;
  std::uint32_t numel;
  detail::FastDivmod sizes[kMaxElementwiseDims];        // innermost first
  std::uint32_t steps[kSlots][kMaxElementwiseDims];     // innermost first
  const void* inputs[kSlots];
};

/// Elements per thread: 32 bytes of the widest operand in flight, at least 4 and at most 16
/// elements (an H200 needs about 16 bytes per thread per operand in flight to reach its
/// bandwidth with vector loads; scalar loads are smaller requests, so twice that).
template <class... T>
inline constexpr int kStridedItems =
    std::max<int>(4, std::min<int>(16, static_cast<int>(32 / std::max({sizeof(T)...}))));

// Instructions per element matter here, not only loads in flight: with erf and exp per
// element (gelu_backward), a narrowed view ran at 79% of the contiguous rate on an H200, bound
// by instruction issue, with each item decomposed on its own (about 40 instructions of
// indexing, bounds tests and branch regions per element beside the functor's 55, sm_90 SASS),
// where add, with one FADD, hid that cost. Hence, about 18 now: the items' offsets are
// computed dim by dim (the dims loop outside, the items unrolled inside, so a rank-2 layout
// pays the middle-dims loop's test once per thread), by the steps of StridedArgs; no branch
// per item (the last block's items past the end read the last element and skip their
// stores); and stores without bounds tests in every block but the last.
template <int kThreads, int kItems, class Out, class F, int kInputs, class... In, std::size_t... K>
__device__ __forceinline__ void strided_body(F f, Out* __restrict__ out, const StridedArgs<kInputs>& args,
                                             std::index_sequence<K...>) {
  constexpr int kSlots = StridedArgs<kInputs>::kSlots;
  const std::uint32_t first = blockIdx.x * std::uint32_t(kThreads * kItems) + threadIdx.x;
  const std::uint32_t last = args.numel - 1;
  std::uint32_t quotient[kItems];  // q_d of each item, for the dim d being added
  std::uint32_t offsets[kItems][kSlots];
  {
    const detail::FastDivmod inner = args.sizes[0];  // for rank 1, q_1 = 0: the loops below add nothing
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
      const std::uint32_t i = ::min(first + u * kThreads, last);
      quotient[u] = inner.div(i);
#pragma unroll
      for (int k = 0; k < kInputs; ++k) offsets[u][k] = i * args.steps[k][0];
    }
  }
  // The middle dims of rank 3 and up, in a loop: unrolled over the kMaxElementwiseDims
  // positions it made the unary .cu files compile 60% longer. args is __grid_constant__, so
  // the dynamic index reads the parameter bank (uniform across the warp), with no local copy.
#pragma unroll 1
  for (int d = 1; d + 1 < args.rank; ++d) {
    const detail::FastDivmod size = args.sizes[d];
    std::uint32_t step[kSlots];
#pragma unroll
    for (int k = 0; k < kInputs; ++k) step[k] = args.steps[k][d];
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
#pragma unroll
      for (int k = 0; k < kInputs; ++k) offsets[u][k] += quotient[u] * step[k];
      quotient[u] = size.div(quotient[u]);
    }
  }
  std::uint32_t outer_step[kSlots];
#pragma unroll
  for (int k = 0; k < kInputs; ++k) outer_step[k] = args.steps[k][args.rank - 1];
  ::cuda::std::tuple<In...> loaded[kItems];
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
#pragma unroll
    for (int k = 0; k < kInputs; ++k) offsets[u][k] += quotient[u] * outer_step[k];
    loaded[u] = ::cuda::std::make_tuple(static_cast<const In*>(args.inputs[K])[offsets[u][K]]...);
  }
  // Every item computed, then stored: both store loops read every result, so the compiler
  // cannot sink an item's functor under its bounds test (a branch region per item).
  Out result[kItems];
#pragma unroll
  for (int u = 0; u < kItems; ++u) result[u] = detail::narrow<Out>(f(detail::widen(::cuda::std::get<K>(loaded[u]))...));
  Out* const at = out + first;
  if (blockIdx.x + 1 < gridDim.x) {
#pragma unroll
    for (int u = 0; u < kItems; ++u) at[u * kThreads] = result[u];
  } else {
#pragma unroll
    for (int u = 0; u < kItems; ++u)
      if (first + u * kThreads < args.numel) at[u * kThreads] = result[u];
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
    // Unsigned arithmetic: a step below zero wraps, as the kernel's sums do (StridedArgs).
    std::uint32_t previous_stride = 0, previous_size = 0;
    for (int d = 0; d < layout.rank; ++d) {
      const auto stride = static_cast<std::uint32_t>(layout.strides[k][last - d]);
      args.steps[k][d] = stride - previous_size * previous_stride;
      previous_stride = stride;
      previous_size = static_cast<std::uint32_t>(layout.sizes[last - d]);
    }
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
