// The CPU reduction group's parts, one file per topic. Plain loops over [outer, dim, inner]
// accumulating in double (floats) or int64 (integers): the reference the GPU is checked against.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/numeric.hpp"
#include "ferrite/backend_families/reduction_ops.hpp"

namespace ferrite::cpu::reduction {

/// Accumulator of each storage type: double for every float, int64 for integers and Bool.
template <class T>
using acc_t = std::conditional_t<std::is_floating_point_v<detail::wide_t<T>>, double, std::int64_t>;

template <class T>
acc_t<T> load(const T* p, std::int64_t i) {
  return static_cast<acc_t<T>>(detail::widen(p[i]));
}

/// Below this many elements a parallel region costs more than it saves.
inline constexpr std::int64_t kParallelWork = 1 << 15;

void reduce(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e);
void arg_reduce(Op op, const Buffer& x, const Buffer& indices, const ReduceExtents& e);
void masked_reduce(Op op, const Buffer& x, const Buffer& mask, const Buffer& out, const ReduceExtents& e);
void prod_backward(const Buffer& grad, const Buffer& x, const Buffer& out, const ReduceExtents& e);
void scan(Op op, const Buffer& x, const Buffer& out, const Buffer& indices, const ReduceExtents& e);
void softmax(Op op, const Buffer& x, const Buffer& out, const ReduceExtents& e);
void softmax_backward(Op op, const Buffer& grad, const Buffer& y, const Buffer& dx, const ReduceExtents& e);
void layer_norm(const Buffer& x, const Buffer& weight, const Buffer& bias, const Buffer& y, const Buffer& mean,
                const Buffer& rstd, std::int64_t rows, std::int64_t cols, double eps);
void layer_norm_backward(const Buffer& grad, const Buffer& x, const Buffer& mean, const Buffer& rstd,
                         const Buffer& weight, const Buffer& residual, const Buffer& dx, const Buffer& dx_cast,
                         const Buffer& dweight, const Buffer& dbias, std::int64_t rows, std::int64_t cols);
void rms_norm(const Buffer& x, const Buffer& weight, const Buffer& y, const Buffer& rstd, std::int64_t rows,
              std::int64_t cols, double eps);
void rms_norm_backward(const Buffer& grad, const Buffer& x, const Buffer& rstd, const Buffer& weight,
                       const Buffer& residual, const Buffer& dx, const Buffer& dx_cast, const Buffer& dweight,
                       std::int64_t rows, std::int64_t cols);

}  // namespace ferrite::cpu::reduction
