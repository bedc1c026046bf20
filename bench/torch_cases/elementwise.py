"""Elementwise family."""
import torch

from . import Case

TARGETS = {
    "add_f32": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
    "add_bf16": ("≥ 4100 GB/s, ≥ 0.97×", lambda f, t, x: f >= 4100 and f >= 0.97 * t),
    "add_row_broadcast_f32": ("≥ 4000 GB/s", lambda f, t, x: f >= 4000),
    "cast_f32_to_bf16": ("≥ 4000 GB/s", lambda f, t, x: f >= 4000),
    "relu_f32": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
    "exp_f32": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
    "exp_bf16": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
    "maximum_f32": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
    "where_f32": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
    "gelu_f32": ("≥ 4000 GB/s", lambda f, t, x: f >= 4000),
    "gelu_backward_f32": ("≥ 4000 GB/s", lambda f, t, x: f >= 4000),
    "lt_f32_to_bool": ("≥ 4000 GB/s", lambda f, t, x: f >= 4000),
    "add_bf16_to_f32": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
}


def cases(quick):
    dev = torch.device("cuda")
    n = (1 << 22) if quick else (1 << 28)
    rows = 1024 if quick else 65536
    g = torch.Generator(device=dev).manual_seed(0)
    x32 = torch.rand(n, device=dev, generator=g) * 4 - 2
    y32 = torch.rand(n, device=dev, generator=g) * 4 - 2
    x16, y16 = x32.bfloat16(), y32.bfloat16()
    m = torch.rand(rows, 4096, device=dev, generator=g)
    row = torch.rand(4096, device=dev, generator=g)
    cond = x32 < y32
    out32 = torch.empty(n, device=dev)
    nf = float(n)
    return [
        Case("add_f32", lambda: x32 + y32, bytes=12 * nf),
        Case("add_bf16", lambda: x16 + y16, bytes=6 * nf),
        Case("add_row_broadcast_f32", lambda: m + row, bytes=8.0 * rows * 4096 + 4 * 4096),
        Case("cast_f32_to_bf16", lambda: x32.to(torch.bfloat16), bytes=6 * nf),
        Case("cast_f32_to_i32", lambda: x32.to(torch.int32), bytes=8 * nf),
        Case("relu_f32", lambda: torch.relu(x32), bytes=8 * nf),
        Case("exp_f32", lambda: torch.exp(x32), bytes=8 * nf),
        Case("exp_bf16", lambda: torch.exp(x16), bytes=4 * nf),
        Case("maximum_f32", lambda: torch.maximum(x32, y32), bytes=12 * nf),
        Case("where_f32", lambda: torch.where(cond, x32, y32), bytes=13 * nf),
        Case("gelu_f32", lambda: torch.nn.functional.gelu(x32), bytes=8 * nf),
        Case("gelu_backward_f32", lambda: torch.ops.aten.gelu_backward(y32, x32), bytes=12 * nf),
        Case("lt_f32_to_bool", lambda: torch.lt(x32, y32), bytes=9 * nf),
        # PyTorch has no output-dtype argument on add; an F32 out= tensor gives the same
        # single kernel (BF16 loads, float math, F32 stores).
        Case("add_bf16_to_f32", lambda: torch.add(x16, y16, out=out32), bytes=8 * nf),
    ]
