"""Ops on strided views: the twins of bench/cases_views.cpp."""
import torch

from . import Case

# Issue 12: >= 90% of the contiguous op's rate where the access pattern allows (narrowed rows),
# >= 60% for 2-D transposed views; rates of the contiguous cases come from the same run. A run
# whose filter left the contiguous case out cannot meet the target (it counted as met before:
# the missing rate read as 0), so add_f32/exp_f32 (and cast_f32_to_bf16/gelu_backward_f32 for
# the cast and backward cases; cast_f32_to_i32 for the integer casts; sum_f32 and amax_f32 for
# the reductions of a transposed view) must be in the filter.


def share_of(contiguous, fraction):
    # None (not judged) when the contiguous case did not run in this call (a filtered run):
    # the share is only meaningful within one call.
    return lambda f, t, r: None if contiguous not in r else f >= fraction * r[contiguous]


TARGETS = {
    "add_f32_transposed_view": ("≥ 60% of add_f32", share_of("add_f32", 0.6)),
    "add_f32_narrow_view": ("≥ 90% of add_f32", share_of("add_f32", 0.9)),
    "exp_f32_transposed_view": ("≥ 60% of exp_f32", share_of("exp_f32", 0.6)),
    "exp_f32_narrow_view": ("≥ 90% of exp_f32", share_of("exp_f32", 0.9)),
    "cast_f32_to_bf16_narrow_view": ("≥ 90% of cast_f32_to_bf16", share_of("cast_f32_to_bf16", 0.9)),
    "gelu_backward_f32_narrow_view": ("≥ 90% of gelu_backward_f32", share_of("gelu_backward_f32", 0.9)),
    "cast_f32_to_i32_narrow_view": ("≥ 90% of cast_f32_to_i32", share_of("cast_f32_to_i32", 0.9)),
    "cast_f32_to_i32_transposed_view": ("≥ 60% of cast_f32_to_i32", share_of("cast_f32_to_i32", 0.6)),
    "sum_f32_transposed_view": ("≥ 60% of sum_f32", share_of("sum_f32", 0.6)),
    "amax_f32_transposed_view": ("≥ 60% of amax_f32", share_of("amax_f32", 0.6)),
    "gelu_backward_f32_transposed_view": ("≥ 60% of gelu_backward_f32", share_of("gelu_backward_f32", 0.6)),
}


def cases(quick):
    dev = torch.device("cuda")
    side = 1024 if quick else 16384
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.rand(side, side, device=dev, generator=g) * 4 - 2
    y = torch.rand(side, side, device=dev, generator=g) * 4 - 2
    nf = float(side) * side
    narrowed = float(side) * (side - 1)
    return [
        Case("add_f32_transposed_view", lambda: x.t() + y, bytes=12 * nf),
        Case("add_f32_narrow_view", lambda: x.narrow(1, 1, side - 1) + y.narrow(1, 1, side - 1), bytes=12 * narrowed),
        Case("exp_f32_transposed_view", lambda: torch.exp(x.t()), bytes=8 * nf),
        Case("exp_f32_narrow_view", lambda: torch.exp(x.narrow(1, 1, side - 1)), bytes=8 * narrowed),
        Case("contiguous_f32_transposed_view", lambda: x.t().contiguous(), bytes=8 * nf),
        Case("sum_f32_transposed_view", lambda: x.t().sum(1), bytes=4 * nf),
        Case("amax_f32_transposed_view", lambda: x.t().amax(0), bytes=4 * nf),
        Case("mul_inplace_f32_transposed_view", lambda: x.t().mul_(1.0), bytes=8 * nf),
        Case("cast_f32_to_bf16_narrow_view", lambda: x.narrow(1, 1, side - 1).to(torch.bfloat16), bytes=6 * narrowed),
        Case("cast_f32_to_i32_narrow_view", lambda: x.narrow(1, 1, side - 1).to(torch.int32), bytes=8 * narrowed),
        Case("cast_f32_to_i32_transposed_view", lambda: x.t().to(torch.int32), bytes=8 * nf),
        Case("gelu_backward_f32_narrow_view",
             lambda: torch.ops.aten.gelu_backward(y.narrow(1, 1, side - 1), x.narrow(1, 1, side - 1)),
             bytes=12 * narrowed),
        Case("gelu_backward_f32_transposed_view", lambda: torch.ops.aten.gelu_backward(y.t(), x.t()), bytes=12 * nf),
    ]
