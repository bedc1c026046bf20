// The CUDA elementwise engine. Include only from .cu files that instantiate ops.
//
// One kernel template serves every elementwise op: it widens each input element, applies
// the op's functor and narrows the result on store (core/numeric.hpp), so the GPU computes
// exactly what the CPU backend computes.
//
// Speed comes from three choices:
//  * 16-byte vector accesses: each thread moves kVec = 16 / (largest element size)
//    elements per operand, the widest load the memory system serves in one instruction.
//  * a grid that covers the tensor once (no grid-stride loop in practice): many small
//    blocks keep every SM's load queue full; with kUnroll > 1, all loads of a thread are
//    issued before its first store.
//  * 32-bit index arithmetic whenever the element count allows (64-bit division costs
//    several times more on the GPU), and broadcast layouts vectorised along their
//    innermost dim, so [65536, 4096] + [4096] costs one index division per 4 elements.
// Views that no vector path fits (rows off the 16-byte grid, transposed operands) run the
// kernels of elementwise_views.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cuda/std/tuple>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/numeric.hpp"
#include "cuda/primitives/elementwise_views.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/backend.hpp"

namespace ferrite::cuda::kernels {

// Launch shape, chosen by bench/engine_tuning.cu on an H200 (2^28 elements, GB/s):
//   threads x unroll   add f32   add bf16   relu f32   cast f32->bf16   row broadcast
//   128 x 1            4379      4331       4231       4203             -
//   128 x 2            4374      4329       4193       4337             -
//   256 x 1            4376      4331       4223       4099             4202
//   256 x 4            4310      4305       4032       4294             4092
// One 16-byte vector per operand per thread is best, except for narrowing ops (cast to a
// smaller type, compare -> Bool), whose 8- or 4-byte stores want a second vector in
// flight. Widening ops (every input narrower than the output: BF16 + BF16 -> F32, casts
// up) are the mirror image, with 8-byte loads, and get the same second vector. A narrow
// operand beside full-width ones (where's Bool cond) does not count: the wide operands
// already keep 16 bytes per thread in flight.
inline constexpr int kBlockThreads = 128;
template <class Out, class... In>
inline constexpr int kDefaultUnroll =
    (((sizeof(Out) < sizeof(In)) || ...) || (sizeof...(In) > 0 && ((sizeof(In) < sizeof(Out)) && ...))) ? 2 : 1;

template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// Extents and strides are stored innermost dim first, so the index loop below runs over
// compile-time positions once unrolled: no dynamic indexing into the kernel's parameters,
// which would send them through local memory.
template <class IndexT, int kInputs>
struct ElementwiseArgs {
  static constexpr int kSlots = kInputs > 0 ? kInputs : 1;
  int rank;
  IndexT numel;
  IndexT sizes[kMaxElementwiseDims];                // innermost first
  IndexT strides[kSlots][kMaxElementwiseDims];      // innermost first
  const void* inputs[kSlots];
  // Vectorised broadcast layouts: whether an input's innermost stride is 1 (else it is 0).
  bool inner_contiguous[kSlots];
};

/// Loads the kVec elements of input `k` that belong to output elements [first, first+kVec).
template <bool kContiguous, int kVec, class T, class IndexT, int kInputs>
__device__ __forceinline__ Pack<T, kVec> load_input(const ElementwiseArgs<IndexT, kInputs>& args, int k,
                                                    IndexT first, const IndexT* offsets) {
  const T* base = static_cast<const T*>(args.inputs[k]);
  Pack<T, kVec> pack;
  if constexpr (kContiguous) {
    pack = *reinterpret_cast<const Pack<T, kVec>*>(base + first);
  } else if (kVec == 1 || args.inner_contiguous[k]) {
    pack = *reinterpret_cast<const Pack<T, kVec>*>(base + offsets[k]);
  } else {
    const T value = base[offsets[k]];  // broadcast along the innermost dim
#pragma unroll
    for (int j = 0; j < kVec; ++j) pack.v[j] = value;
  }
  return pack;
}

template <bool kContiguous, int kVec, int kThreads, int kUnroll, class Out, class F, class IndexT, int kInputs,
          class... In, std::size_t... K>
__device__ __forceinline__ void elementwise_body(F f, Out* __restrict__ out, const ElementwiseArgs<IndexT, kInputs>& args,
                                                 std::index_sequence<K...>) {
  const IndexT num_vec = args.numel / kVec;
  const IndexT stride = static_cast<IndexT>(gridDim.x) * (kThreads * kUnroll);
  for (IndexT base = static_cast<IndexT>(blockIdx.x) * (kThreads * kUnroll) + threadIdx.x; base < num_vec;
       base += stride) {
    // Issue every load of every unrolled vector before the first store.
    auto load_all = [&](IndexT v) {
      const IndexT first = v * kVec;
      IndexT offsets[ElementwiseArgs<IndexT, kInputs>::kSlots] = {};
      if constexpr (!kContiguous) {
        IndexT rest = first;
#pragma unroll
        for (int i = 0; i < kMaxElementwiseDims; ++i) {
          if (i == args.rank) break;
          IndexT coord = rest;  // the outermost dim needs no division
          if (i + 1 < args.rank) {
            const IndexT outer = rest / args.sizes[i];
            coord = rest - outer * args.sizes[i];
            rest = outer;
          }
#pragma unroll
          for (int k = 0; k < kInputs; ++k) offsets[k] += coord * args.strides[k][i];
        }
      }
      return ::cuda::std::make_tuple(load_input<kContiguous, kVec, In>(args, static_cast<int>(K), first, offsets)...);
    };
    decltype(load_all(IndexT(0))) loaded[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const IndexT v = base + u * kThreads;
      if (v < num_vec) loaded[u] = load_all(v);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const IndexT v = base + u * kThreads;
      if (v < num_vec) {
        Pack<Out, kVec> result;
#pragma unroll
        for (int j = 0; j < kVec; ++j)
          result.v[j] = detail::narrow<Out>(f(detail::widen(::cuda::std::get<K>(loaded[u]).v[j])...));
        *reinterpret_cast<Pack<Out, kVec>*>(out + v * kVec) = result;
      }
    }
  }
  if constexpr (kContiguous && kVec > 1) {
    // The last numel % kVec elements (only a contiguous layout can have a ragged end).
    const IndexT i = num_vec * kVec + static_cast<IndexT>(blockIdx.x) * kThreads + threadIdx.x;
    if (i < args.numel)
      out[i] = detail::narrow<Out>(f(detail::widen(static_cast<const In*>(args.inputs[K])[i])...));
  }
}

template <bool kContiguous, int kVec, int kThreads, int kUnroll, class Out, class F, class IndexT, class... In>
__global__ void __launch_bounds__(kThreads)
    elementwise_kernel(F f, Out* __restrict__ out, ElementwiseArgs<IndexT, sizeof...(In)> args) {
  elementwise_body<kContiguous, kVec, kThreads, kUnroll, Out, F, IndexT, static_cast<int>(sizeof...(In)), In...>(
      f, out, args, std::index_sequence_for<In...>{});
}

template <class... T>
constexpr std::size_t largest_size() {
  return std::max({sizeof(T)...});
}

/// One kernel configuration; launch_elementwise picks it. kThreads and kUnroll are
/// parameters so bench/engine_tuning.cu can time alternatives.
template <bool kContiguous, int kVec, class IndexT, int kThreads = kBlockThreads, int kUnrollN = -1, class Out, class F,
          class... In>
void launch_variant(F f, const ElementwiseLayout& layout, Out* out, cudaStream_t stream, const In*... in) {
  ElementwiseArgs<IndexT, sizeof...(In)> args{};
  args.rank = layout.rank;
  args.numel = static_cast<IndexT>(layout.numel);
  const void* pointers[] = {static_cast<const void*>(in)..., nullptr};
  const int last = layout.rank - 1;
  for (int i = 0; i < layout.rank; ++i) args.sizes[i] = static_cast<IndexT>(layout.sizes[last - i]);
  for (int k = 0; k < static_cast<int>(sizeof...(In)); ++k) {
    args.inputs[k] = pointers[k];
    args.inner_contiguous[k] = layout.strides[k][last] == 1;
    for (int i = 0; i < layout.rank; ++i) args.strides[k][i] = static_cast<IndexT>(layout.strides[k][last - i]);
  }
  constexpr int kUnrollUsed = kUnrollN > 0 ? kUnrollN : kDefaultUnroll<Out, In...>;
  const std::int64_t vectors = layout.numel / kVec;
  const std::int64_t per_block = std::int64_t(kThreads) * kUnrollUsed;
  // At least one block so a ragged tail shorter than kVec is still written.
  const std::int64_t blocks = std::clamp<std::int64_t>((vectors + per_block - 1) / per_block, 1, 1 << 20);
  elementwise_kernel<kContiguous, kVec, kThreads, kUnrollUsed, Out, F, IndexT, In...>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(f, out, args);
  FERRITE_CUDA_CHECK_LAUNCH();
}

template <class T>
bool aligned_to(const T* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

/// Which layouts a launch_elementwise call site instantiates kernels for (each kind costs nvcc
/// time in every op and dtype that includes it).
enum class Layouts {
  Contiguous,  // fills and the like: the front end hands over dense buffers
  Strided,     // unary ops, casts, backward passes: also views read through their strides, within 32-bit offsets
  Any,         // binary ops, where: also broadcasting, tiles, and 64-bit offsets
};

/// Runs `f` over `layout`: out[i] = narrow(f(widen(in_k[offset_k(i)])...)).
/// A Layouts::Strided site must not be given a layout that fails offsets_fit_32_bits (the
/// CUDA backend stages such inputs through a dense copy first).
template <Layouts kLayouts, int kStridedItemsN = 0, class Out, class F, class... In>
void launch_elementwise(F f, const ElementwiseLayout& layout, Out* out, cudaStream_t stream, const In*... in) {
  constexpr int kVec = static_cast<int>(16 / largest_size<Out, In...>()) > 0
                           ? static_cast<int>(16 / largest_size<Out, In...>())
                           : 1;
  if (layout.numel == 0) return;
  const bool small = layout.numel < (std::int64_t(1) << 31);
  bool aligned = aligned_to(out, sizeof(Out) * kVec);
  ((aligned = aligned && aligned_to(in, sizeof(In) * kVec)), ...);

  if (layout.contiguous && aligned) {
    if (small) return launch_variant<true, kVec, std::uint32_t>(f, layout, out, stream, in...);
    return launch_variant<true, kVec, std::int64_t>(f, layout, out, stream, in...);
  }
  if constexpr (kLayouts == Layouts::Contiguous) {
    FERRITE_THROW(InvalidArgument, "elementwise: contiguous op given a strided, broadcast or misaligned layout");
  } else {
    // 32-bit indexing needs every offset below 2^31, not only the element count.
    const bool fits = offsets_fit_32_bits(layout);
    if constexpr (kLayouts == Layouts::Any) {
      // Vector loads need every vector of an input that steps by 1 innermost to start on
      // the 16-byte grid: its first element (aligned) and each of its outer strides (a
      // narrowed view's rows may start anywhere). Broadcast inputs load one element.
      bool vectorisable = aligned && layout.sizes[layout.rank - 1] % kVec == 0;
      for (int k = 0; k < static_cast<int>(sizeof...(In)); ++k) {
        const std::int64_t inner = layout.strides[k][layout.rank - 1];
        vectorisable = vectorisable && (inner == 0 || inner == 1);
        for (int d = 0; inner == 1 && d + 1 < layout.rank; ++d)
          vectorisable = vectorisable && layout.strides[k][d] % kVec == 0;
      }
      if (vectorisable) {
        if (fits) return launch_variant<false, kVec, std::uint32_t>(f, layout, out, stream, in...);
        return launch_variant<false, kVec, std::int64_t>(f, layout, out, stream, in...);
      }
      const std::size_t element_bytes[] = {sizeof(In)..., 0};
      if (uses_transpose_tile(layout, element_bytes)) return launch_tiled(f, layout, out, stream, in...);
      if (fits) return launch_strided(f, layout, out, stream, in...);
      return launch_variant<false, 1, std::int64_t>(f, layout, out, stream, in...);
    } else {
      FERRITE_CHECK(fits, InvalidArgument, "elementwise: a strided layout of ", layout.numel,
                    " elements whose offsets need more than 32 bits reached a 32-bit launch");
      return launch_strided<kStridedItemsN>(f, layout, out, stream, in...);
    }
  }
}

}  // namespace ferrite::cuda::kernels
