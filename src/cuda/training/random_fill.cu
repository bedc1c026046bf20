// rand, randn, randint, bernoulli, normal_, uniform_ on the GPU: one thread per Philox group
// (src/core/random_elements.hpp, the CPU backend's function), grid-stride, one vector store
// per group when the output is aligned.
#include "core/random_elements.hpp"
#include "cuda/training/training_common.cuh"
#include "cuda/training/training_kernels.cuh"

namespace ferrite::cuda::training {
namespace {

using namespace ferrite::detail::philox;

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
