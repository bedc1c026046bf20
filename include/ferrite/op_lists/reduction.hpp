// Ops of the reductions, scans, softmax and norms (issue #4), run by Backend::reductions().
// X(enum name, front-end name, family); see ferrite/op.hpp.
#pragma once

#define FERRITE_REDUCTION_OP_LIST(X)                        \
  X(Sum, "sum", Reduction)                                  \
  X(Mean, "mean", Reduction)                                \
  X(Prod, "prod", Reduction)                                \
  X(Amin, "amin", Reduction)                                \
  X(Amax, "amax", Reduction)                                \
  X(Any, "any", Reduction)                                  \
  X(All, "all", Reduction)                                  \
  X(Argmax, "argmax", Reduction)                            \
  X(Argmin, "argmin", Reduction)                            \
  X(MaskedAmin, "masked_amin", Reduction)                   \
  X(MaskedAmax, "masked_amax", Reduction)                   \
  X(ProdBackward, "prod_backward", Reduction)               \
  X(Cumsum, "cumsum", Scan)                                 \
  X(Cumprod, "cumprod", Scan)                               \
  X(Cummax, "cummax", Scan)                                 \
  X(Cummin, "cummin", Scan)                                 \
  X(Logcumsumexp, "logcumsumexp", Scan)                     \
  X(Softmax, "softmax", RowWise)                            \
  X(LogSoftmax, "log_softmax", RowWise)                     \
  X(SoftmaxBackward, "softmax_backward", RowWise)           \
  X(LogSoftmaxBackward, "log_softmax_backward", RowWise)    \
  X(LayerNorm, "layer_norm", RowWise)                       \
  X(LayerNormBackward, "layer_norm_backward", RowWise)      \
  X(RmsNorm, "rms_norm", RowWise)                           \
  X(RmsNormBackward, "rms_norm_backward", RowWise)
