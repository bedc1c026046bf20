// Shared by the CPU backend's unary translation units, which are split by op group so that
// a build compiles their instantiations in parallel: cpu_elementwise_unary.cpp (the basic
// ops and the dispatch), cpu_elementwise_math.cpp (exp, log, ...), cpu_elementwise_activation.cpp
// (activations) and cpu_elementwise_activation_backward.cpp (the activation backward passes).
#pragma once

#include "cpu/cpu_elementwise_engine.hpp"
#include "ferrite/backend.hpp"

namespace ferrite::cpu {

// out has x's dtype, or F32 for an F16/BF16 x (mixed precision); x is read through `layout`.
template <class T, class Fn>
void run_unary_to(Fn fn, const Buffer& x, const Buffer& out, const ElementwiseLayout& layout) {
  if (out.dtype() == x.dtype())
    run_elementwise(layout, out.data_as<T>(), fn, x.data_as<const T>());
  else
    run_elementwise(layout, out.data_as<float>(), fn, x.data_as<const T>());
}

/// The floating math ops of CpuBackend::unary (detail::with_math_functor), for floating x.
void unary_math(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params, const ElementwiseLayout& layout);

/// The activations (detail::is_activation(op)) of CpuBackend::unary, for floating x.
void unary_activation(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params,
                      const ElementwiseLayout& layout);

}  // namespace ferrite::cpu
