// argmax / argmin on the GPU, every real numeric dtype, I64 indices.
//
// Contiguous rows (the reduced dim innermost, 16-byte aligned rows, enough rows that none
// is split over blocks) take a dedicated kernel: the generic engine's step carries a 64-bit
// index and an empty-accumulator test per element, which made argmax compute-bound at about
// half of HBM bandwidth. Here each thread keeps its best value and a 32-bit position in the
// row, and the per-element step is a compare, a predicate and two selects; the merge across
// threads is the engine's (ArgReducer). Everything else goes through the generic engine
// (reduce_engine.cuh).
//
// Both paths give the same answer as the CPU backend: the first occurrence of the extreme
// value, or the first NaN when the row holds one. The merge orders candidates by (NaN,
// value, lower index), a total order, so the tree's shape cannot change the result.
#include <climits>

#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reduce_engine.cuh"
#include "cuda/reduction/reducers.cuh"

namespace ferrite::cuda::reduction {
namespace {

// The group's merge is ArgReducer's: a thread with no element holds its identity, which
// loses every merge to a real element (ties go to the lower index). kMax is reducer.max, as a
// constant for the per-element step.
template <class T, bool kMax>
__global__ void __launch_bounds__(kReduceThreads)
    arg_reduce_rows_kernel(const T* __restrict__ x, std::int64_t* __restrict__ out, std::int64_t rows, int dim,
                           int group, const ArgReducer<T> reducer) {
  using A = acc_t<T>;
  using V = Vec16<T>;
  using Best = typename ArgReducer<T>::acc_t;
  constexpr int kV = V::kSize;
  __shared__ Best smem[kReduceThreads / 32];
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kReduceThreads / group) + threadIdx.x / group;
  const int t = threadIdx.x % group;
  Best mine = reducer.identity();
  const int vectors = dim / kV;
  if (row < rows && t < vectors) {
    const V* vp = reinterpret_cast<const V*>(x + row * dim);
    // Start from the thread's first element; after that its elements come in increasing
    // position order, so a later one replaces the best only when strictly better, or when it
    // is the first NaN: !(v <= best) holds for v > best and for a NaN v, and a NaN best is
    // never replaced. A compare, a predicate and two selects per element, on a 32-bit
    // position (ArgReducer::step also tests for an empty accumulator and moves 64-bit indices).
    A best = static_cast<A>(detail::widen(vp[t].v[0]));
    int index = t * kV;
    for (int i = t; i < vectors; i += group * kReduceUnroll) {
      V pack[kReduceUnroll];
#pragma unroll
      for (int u = 0; u < kReduceUnroll; ++u)
        if (i + u * group < vectors) pack[u] = vp[i + u * group];
#pragma unroll
      for (int u = 0; u < kReduceUnroll; ++u)
        if (i + u * group < vectors) {
#pragma unroll
          for (int k = 0; k < kV; ++k) {
            const A v = static_cast<A>(detail::widen(pack[u].v[k]));
            const bool take = !(kMax ? v <= best : v >= best) && best == best;
            best = take ? v : best;
            index = take ? (i + u * group) * kV + k : index;
          }
        }
    }
    mine = Best{best, index};
  }
  const Best winner = group_reduce(mine, group, smem, [&](Best a, Best b) { return reducer.merge(a, b); });
  if (row < rows && t == 0) out[row] = winner.index;
}

/// Whether the dedicated row kernel serves these extents (else the generic engine does).
template <class T>
bool rows_kernel_fits(const T* x, const ReduceExtents& e) {
  constexpr std::int64_t kV = Vec16<T>::kSize;
  // The engine splits rows over blocks below 512 rows of more than 16384 elements; leave
  // those (and unaligned or very long rows) to it.
  return e.inner == 1 && e.dim >= 1 && e.dim < INT_MAX / 2 && e.dim % kV == 0 &&
         reinterpret_cast<std::uintptr_t>(x) % 16 == 0 && (e.outer >= 512 || e.dim <= 16384);
}

template <class T>
void launch_arg_reduce_rows(bool max, const T* x, std::int64_t* out, const ReduceExtents& e, cudaStream_t stream) {
  // About 16 vectors per thread: the merge across a group costs as much as stepping through
  // a few dozen elements, so short groups with long walks beat the engine's wide groups here.
  const std::int64_t vectors = e.dim / Vec16<T>::kSize;
  int group = 32;
  while (group < kReduceThreads && group * 16 < vectors) group *= 2;
  const int blocks = blocks_for(e.outer, kReduceThreads / group);
  const int dim = static_cast<int>(e.dim);
  const ArgReducer<T> reducer{max, extreme_identity<T>(max)};
  if (max)
    arg_reduce_rows_kernel<T, true><<<blocks, kReduceThreads, 0, stream>>>(x, out, e.outer, dim, group, reducer);
  else
    arg_reduce_rows_kernel<T, false><<<blocks, kReduceThreads, 0, stream>>>(x, out, e.outer, dim, group, reducer);
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void arg_reduce(Op op, const Buffer& x, const Buffer& indices, const ReduceExtents& e, cudaStream_t stream) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T> || std::is_same_v<T, bool>) {
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cuda");
    } else {
      const bool max = op == Op::Argmax;
      if (e.outer * e.dim > 0 && rows_kernel_fits(x.data_as<const T>(), e)) {
        launch_arg_reduce_rows(max, x.data_as<const T>(), indices.data_as<std::int64_t>(), e, stream);
        return;
      }
      launch_reduce(PlainSource<T>{x.data_as<const T>()}, indices.data_as<std::int64_t>(),
                    ArgReducer<T>{max, extreme_identity<T>(max)}, e, x, stream);
    }
  });
}

}  // namespace ferrite::cuda::reduction
