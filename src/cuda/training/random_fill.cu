// rand, randn, randint, bernoulli, normal_, uniform_ on the GPU, with the CPU backend's
// per-group functions (src/core/random_elements.hpp), so the bits are the same.
//
// rand/uniform_/randn/normal_ of F32, F16 and BF16 (the benchmarked draws) take a fast
// kernel: one draw kind per instantiation (no runtime switch, no Box-Muller code in rand),
// Philox through PhiloxLanes (the first round's uniform product made once), several
// independent groups per thread (their Philox chains interleave), a 16-byte store per 16
// bytes of output, 32-bit indices, and a grid of resident blocks that strides over tiles.
// Everything else (F64, integers, Bernoulli, outputs not 16-byte aligned) takes the
// generic kernel: one group per thread through draw_group.
#include <algorithm>

#include "core/random_elements.hpp"
#include "cuda/training/training_common.cuh"
#include "cuda/training/training_kernels.cuh"

namespace ferrite::cuda::training {
namespace {

using namespace ferrite::detail::philox;

// A launch of the fast kernel covers at most 2^31 groups of one group-high word: its
// groups are base + i, base a multiple of 2^31, i < 2^31, so i and the low word fit in 32
// bits without carry.
constexpr std::int64_t kChunkGroups = std::int64_t(1) << 31;

template <class T>
inline constexpr int kAdjacent = 16 / (4 * static_cast<int>(sizeof(T)));  // groups per 16-byte store

// Groups each thread draws per tile: 4 for uniforms (short Philox chains, store-bound), 2
// for normals (Box-Muller is long enough to hide latency by itself).
template <class T, FastDraw K>
inline constexpr int kThreadGroups = (K == FastDraw::kUnitUniform || K == FastDraw::kUniform) ? 4 : 2;

/// The fast kernel over `groups` groups (all whole but possibly the last, which has
/// `last_count` elements), group i of this launch being group (group_hi, group_lo0 + i).
/// A tile is kThreads * G groups; thread t draws, for each of its G / P items, P adjacent
/// groups (one 16-byte store) at tile + (item * kThreads + t) * P, so each warp store
/// covers 512 contiguous bytes.
template <class T, FastDraw K>
__global__ void __launch_bounds__(kThreads)
    fast_fill_kernel(const DrawParams<T> p, T* __restrict__ out, std::uint32_t groups, int last_count,
                     std::uint32_t group_hi, std::uint32_t group_lo0) {
  constexpr int P = kAdjacent<T>;
  constexpr int G = kThreadGroups<T, K>;
  constexpr int kItems = G / P;
  static_assert(G % P == 0, "a thread's groups make whole 16-byte stores");
  constexpr std::uint32_t kTile = static_cast<std::uint32_t>(kThreads) * G;
  using Store = Pack<T, 4 * P>;
  const PhiloxLanes lanes(p.seed, p.offset, group_hi);
  const std::uint32_t whole_tiles = groups / kTile;
  for (std::uint32_t tile = blockIdx.x; tile < whole_tiles; tile += gridDim.x) {
    const std::uint32_t first = tile * kTile + threadIdx.x * P;
    Words r[kItems][P];
#pragma unroll
    for (int it = 0; it < kItems; ++it)
#pragma unroll
      for (int q = 0; q < P; ++q) r[it][q] = lanes(group_lo0 + first + it * kThreads * P + q);
#pragma unroll
    for (int it = 0; it < kItems; ++it) {
      Store v;
#pragma unroll
      for (int q = 0; q < P; ++q) fast_group<T, K>(p, r[it][q], v.v + 4 * q);
      const std::uint32_t g = first + it * kThreads * P;
      *reinterpret_cast<Store*>(out + static_cast<std::size_t>(g) * 4) = v;
    }
  }
  // The groups after the last whole tile, one per thread; the last may be partial.
  const std::uint32_t rest = whole_tiles * kTile;
  for (std::uint32_t i = blockIdx.x * kThreads + threadIdx.x; i < groups - rest; i += gridDim.x * kThreads) {
    const std::uint32_t g = rest + i;
    T* o = out + static_cast<std::size_t>(g) * 4;
    if (g + 1 < groups || last_count == 4) {
      Pack<T, 4> v;
      fast_group<T, K>(p, lanes(group_lo0 + g), v.v);
      *reinterpret_cast<Pack<T, 4>*>(o) = v;
    } else {
      T v[4];
      draw_group<T>(p, (static_cast<std::uint64_t>(group_hi) << 32) | (group_lo0 + g), last_count, nullptr, v);
      for (int e = 0; e < last_count; ++e) o[e] = v[e];
    }
  }
}

/// Blocks resident at once on the current device, `per_sm` per multiprocessor (at least
/// one block), at most `wanted`: a grid-stride kernel needs no more.
unsigned resident_grid(int per_sm, std::int64_t wanted) {
  int device = 0, sms = 0;
  FERRITE_CUDA_CHECK(cudaGetDevice(&device));
  FERRITE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::int64_t resident = static_cast<std::int64_t>(std::max(per_sm, 1)) * std::max(sms, 1);
  return static_cast<unsigned>(std::clamp<std::int64_t>(wanted, 1, resident));
}

template <class T, FastDraw K>
void launch_fast(const DrawParams<T>& p, T* o, std::int64_t n, cudaStream_t stream) {
  constexpr std::int64_t kTile = static_cast<std::int64_t>(kThreads) * kThreadGroups<T, K>;
  const std::int64_t groups = (n + 3) / 4;
  // Occupancy is a property of the kernel and the architecture (one per build), so it is
  // asked once per instantiation.
  static const int per_sm = [] {
    int blocks = 0;
    FERRITE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fast_fill_kernel<T, K>, kThreads, 0));
    return blocks;
  }();
  for (std::int64_t base = 0; base < groups; base += kChunkGroups) {
    const std::int64_t count = std::min(kChunkGroups, groups - base);
    const bool last_chunk = base + count == groups;
    const int last_count = last_chunk ? static_cast<int>(n - 4 * (groups - 1)) : 4;
    const unsigned blocks = resident_grid(per_sm, (count + kTile - 1) / kTile);
    fast_fill_kernel<T, K><<<blocks, kThreads, 0, stream>>>(
        p, o + 4 * base, static_cast<std::uint32_t>(count), last_count, static_cast<std::uint32_t>(base >> 32),
        static_cast<std::uint32_t>(base));
    FERRITE_CUDA_CHECK_LAUNCH();
  }
}

template <class T, bool kPacked>
__global__ void __launch_bounds__(kThreads)
    fill_kernel(const DrawParams<T> p, T* __restrict__ out, const T* __restrict__ probs, std::int64_t n,
                std::int64_t groups) {
  constexpr int E = kGroupElems<T>;
  for (std::int64_t g = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t first = g * E;
    const int count = n - first < E ? static_cast<int>(n - first) : E;
    Pack<T, E> v;
    if (kPacked && probs && count == E) {
      const Pack<T, E> pr = *reinterpret_cast<const Pack<T, E>*>(probs + first);
      draw_group<T>(p, static_cast<std::uint64_t>(g), E, pr.v, v.v);
    } else {
      draw_group<T>(p, static_cast<std::uint64_t>(g), count, probs ? probs + first : nullptr, v.v);
    }
    if (kPacked && count == E) {
      *reinterpret_cast<Pack<T, E>*>(out + first) = v;
    } else {
      for (int e = 0; e < count; ++e) out[first + e] = v.v[e];
    }
  }
}

template <class T>
void launch(const RandomDesc& desc, const Buffer& out, const Buffer& probs, cudaStream_t stream) {
  constexpr int E = kGroupElems<T>;
  const std::int64_t n = out.numel();
  const std::int64_t groups = (n + E - 1) / E;
  T* o = out.data_as<T>();
  const T* pr = probs.numel() ? probs.data_as<T>() : nullptr;
  const DrawParams<T> p = draw_params<T>(desc);
  if constexpr (!std::is_integral_v<T> && !std::is_same_v<T, double>) {
    FastDraw kind;
    if (!pr && fast_draw_of(p, kind) && pack_aligned<T, 4 * kAdjacent<T>>(o)) {
      switch (kind) {
        case FastDraw::kUnitUniform: return launch_fast<T, FastDraw::kUnitUniform>(p, o, n, stream);
        case FastDraw::kUniform: return launch_fast<T, FastDraw::kUniform>(p, o, n, stream);
        case FastDraw::kUnitNormal: return launch_fast<T, FastDraw::kUnitNormal>(p, o, n, stream);
        case FastDraw::kNormal: return launch_fast<T, FastDraw::kNormal>(p, o, n, stream);
      }
    }
  }
  const unsigned blocks = grid_stride_blocks(groups, kThreads, std::int64_t(1) << 20);
  if (pack_aligned<T, E>(o) && (!pr || pack_aligned<T, E>(pr)))
    fill_kernel<T, true><<<blocks, kThreads, 0, stream>>>(p, o, pr, n, groups);
  else
    fill_kernel<T, false><<<blocks, kThreads, 0, stream>>>(p, o, pr, n, groups);
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void random_fill(const RandomDesc& desc, const Buffer& out, const Buffer& probs, cudaStream_t stream) {
  if (out.numel() == 0) return;
  if (desc.kind == RandomKind::Integer) {
    if (out.dtype() == DType::I32) return launch<std::int32_t>(desc, out, probs, stream);
    if (out.dtype() == DType::I64) return launch<std::int64_t>(desc, out, probs, stream);
    FERRITE_THROW(Unsupported, "randint: dtype ", dtype_name(out.dtype()));
  }
  visit_float("random", out.dtype(), [&](auto tag) { launch<typename decltype(tag)::type>(desc, out, probs, stream); });
}

}  // namespace ferrite::cuda::training
