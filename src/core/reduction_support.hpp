// Which (op, dtype) pairs the reduction group implements, and the dtypes of its results.
// Both backends implement the same set, so they share the answer.
#pragma once

#include "ferrite/dtype.hpp"
#include "ferrite/op.hpp"

namespace ferrite::detail {

constexpr bool is_real_numeric(DType d) { return is_floating(d) || is_integral(d); }

constexpr bool reduction_supported(Op op, DType d) {
  switch (op) {
    case Op::Sum:
      return is_real_numeric(d) || d == DType::Bool;
    case Op::Prod:
    case Op::Amin:
    case Op::Amax:
    case Op::Argmax:
    case Op::Argmin:
    case Op::MaskedAmin:
    case Op::MaskedAmax:
    case Op::Cumsum:
    case Op::Cumprod:
    case Op::Cummax:
    case Op::Cummin:
      return is_real_numeric(d);
    case Op::Any:
    case Op::All:
      return d == DType::Bool;
    case Op::Mean:
    case Op::ProdBackward:
    case Op::Logcumsumexp:
    case Op::Softmax:
    case Op::LogSoftmax:
    case Op::SoftmaxBackward:
    case Op::LogSoftmaxBackward:
    case Op::LayerNorm:
    case Op::LayerNormBackward:
    case Op::RmsNorm:
    case Op::RmsNormBackward:
      return is_floating(d);
    default:
      return false;
  }
}

/// Result dtype of a reduction or scan of `d`: integer and Bool sums and products widen to
/// I64 (as PyTorch); everything else keeps the input dtype.
constexpr DType reduction_result_dtype(Op op, DType d) {
  const bool widening = op == Op::Sum || op == Op::Prod || op == Op::Cumsum || op == Op::Cumprod;
  if (widening && (is_integral(d) || d == DType::Bool)) return DType::I64;
  return d;
}

/// Dtype of the saved mean / rstd of the norms: the accumulation type.
constexpr DType norm_stat_dtype(DType d) { return d == DType::F64 ? DType::F64 : DType::F32; }

}  // namespace ferrite::detail
