// The CPU elementwise engine: walks an ElementwiseLayout and applies a functor to widened
// inputs, narrowing the result on store. Contiguous layouts are a flat loop; broadcast
// layouts step an N-d counter, each thread starting from its own chunk.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <utility>

#include "core/elementwise_layout.hpp"
#include "core/numeric.hpp"
#include "ferrite/backend.hpp"

namespace ferrite::cpu {

// Below this many elements a parallel region costs more than it saves.
inline constexpr std::int64_t kParallelThreshold = 1 << 16;
inline constexpr std::int64_t kChunk = 1 << 14;

template <class Out, class... In, class F>
void run_elementwise(const ElementwiseLayout& layout, Out* out, F f, const In*... in) {
  constexpr std::size_t kInputs = sizeof...(In);
  const std::int64_t n = layout.numel;
  const std::tuple<const In*...> inputs(in...);

  if (layout.contiguous) {
#pragma omp parallel for schedule(static) if (n >= kParallelThreshold)
    for (std::int64_t i = 0; i < n; ++i)
      out[i] = std::apply([&](const auto*... p) { return detail::narrow<Out>(f(detail::widen(p[i])...)); }, inputs);
    return;
  }

  const int rank = layout.rank;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (n >= kParallelThreshold)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t begin = c * kChunk, end = std::min(n, begin + kChunk);
    std::array<std::int64_t, kMaxElementwiseDims> coord{};
    std::array<std::int64_t, kInputs + 1> offset{};  // +1: never zero-sized
    for (std::int64_t rest = begin, d = rank - 1; d >= 0; --d) {
      coord[d] = rest % layout.sizes[d];
      rest /= layout.sizes[d];
      for (std::size_t k = 0; k < kInputs; ++k) offset[k] += coord[d] * layout.strides[k][d];
    }
    for (std::int64_t i = begin; i < end; ++i) {
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        out[i] = detail::narrow<Out>(f(detail::widen(std::get<K>(inputs)[offset[K]])...));
      }(std::make_index_sequence<kInputs>{});
      for (int d = rank - 1; d >= 0; --d) {  // step the counter, carrying outwards
        for (std::size_t k = 0; k < kInputs; ++k) offset[k] += layout.strides[k][d];
        if (++coord[d] < layout.sizes[d]) break;
        for (std::size_t k = 0; k < kInputs; ++k) offset[k] -= layout.strides[k][d] * layout.sizes[d];
        coord[d] = 0;
      }
    }
  }
}

}  // namespace ferrite::cpu
