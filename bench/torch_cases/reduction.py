"""Reductions, scans, softmax and norms (issue #4). Names match bench/cases_reduction.cpp.

Lambdas made in a loop bind the loop's tensors and sizes through default arguments (a
closure would see the last iteration's values)."""
import torch
import torch.nn.functional as F

from . import Case

TARGETS = {
    "sum_f32": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
    "amax_f32": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
    "argmax_f32": ("≥ 4000 GB/s", lambda f, t, x: f >= 4000),
    "softmax_f32": ("≥ 3900 GB/s", lambda f, t, x: f >= 3900),
    "log_softmax_f32": ("≥ 3900 GB/s", lambda f, t, x: f >= 3900),
    "layer_norm_f32": ("≥ 3900 GB/s", lambda f, t, x: f >= 3900),
    "rms_norm_f32": ("≥ 3900 GB/s", lambda f, t, x: f >= 3900),
    "layer_norm_backward_f32": ("≥ 3300 GB/s", lambda f, t, x: f >= 3300),
    "cumsum_f32": ("≥ 3500 GB/s", lambda f, t, x: f >= 3500),
}


def cases(quick):
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    n = (1 << 20) if quick else (1 << 28)
    v32 = torch.rand(n, device=dev, generator=g) * 4 - 2
    v16 = v32.bfloat16()
    nf = float(n)
    out = [
        Case("sum_f32", lambda: v32.sum(), bytes=4 * nf),
        Case("amax_f32", lambda: v32.amax(), bytes=4 * nf),
        Case("sum_bf16", lambda: v16.sum(), bytes=2 * nf),
        Case("amax_bf16", lambda: v16.amax(), bytes=2 * nf),
    ]
    # The odd shapes' names carry the shape they run, as in bench/cases_reduction.cpp.
    shapes = [(256, 4096), (4096, 128), (4, 262144)] if quick else [(65536, 4096), (1048576, 128), (256, 262144)]
    for i, (rows, cols) in enumerate(shapes):
        suffix = "" if i == 0 else f"_{rows}x{cols}"
        rc, r, c = float(rows * cols), float(rows), float(cols)
        x = torch.rand(rows, cols, device=dev, generator=g) * 4 - 2
        gr = torch.rand(rows, cols, device=dev, generator=g) * 4 - 2
        w = torch.rand(cols, device=dev, generator=g) * 4 - 2
        b = torch.rand(cols, device=dev, generator=g) * 4 - 2
        out += norm_and_softmax_cases("_f32" + suffix, x, gr, w, b, rc, r, c, 4)
        if suffix == "":
            x16, g16, w16, b16 = x.bfloat16(), gr.bfloat16(), w.bfloat16(), b.bfloat16()
            ln = torch.ops.aten.native_layer_norm(x16, [cols], w16, b16, 1e-5)
            out += [
                Case("argmax_bf16", lambda x16=x16: torch.argmax(x16, -1), bytes=2 * rc + 8 * r),
                Case("softmax_bf16", lambda x16=x16: torch.softmax(x16, -1), bytes=4 * rc),
                Case("log_softmax_bf16", lambda x16=x16: torch.log_softmax(x16, -1), bytes=4 * rc),
                Case("layer_norm_bf16", lambda x16=x16, w16=w16, b16=b16, cols=cols: F.layer_norm(x16, (cols,), w16, b16),
                     bytes=4 * rc + 4 * c + 8 * r),
                Case("rms_norm_bf16", lambda x16=x16, w16=w16, cols=cols: F.rms_norm(x16, (cols,), w16, 1e-6),
                     bytes=4 * rc + 2 * c + 4 * r),
                Case("layer_norm_backward_bf16",
                     lambda g16=g16, x16=x16, ln=ln, w16=w16, b16=b16, cols=cols: torch.ops.aten.native_layer_norm_backward(
                         g16, x16, [cols], ln[1], ln[2], w16, b16, [True, True, True]),
                     bytes=6 * rc + 8 * r + 6 * c),
                Case("cumsum_bf16", lambda x16=x16: torch.cumsum(x16, -1), bytes=4 * rc),
                Case("sum_rows_f32", lambda x=x: x.sum(-1), bytes=4 * rc + 4 * r),
                Case("sum_dim0_f32", lambda x=x: x.sum(0), bytes=4 * rc + 4 * c),
            ]
    return out


def norm_and_softmax_cases(tag, x, gr, w, b, rc, r, c, size):
    cols = x.shape[-1]
    y = torch.softmax(x, -1)
    ln = torch.ops.aten.native_layer_norm(x, [cols], w, b, 1e-5)
    # rms_norm backward through autograd: the graph is built once, only the backward is timed.
    xr = x.detach().requires_grad_(True)
    wr = w.detach().requires_grad_(True)
    yr = F.rms_norm(xr, (cols,), wr, 1e-6)
    return [
        Case("argmax" + tag, lambda: torch.argmax(x, -1), bytes=4 * rc + 8 * r),
        Case("softmax" + tag, lambda: torch.softmax(x, -1), bytes=8 * rc),
        Case("log_softmax" + tag, lambda: torch.log_softmax(x, -1), bytes=8 * rc),
        Case("softmax_backward" + tag, lambda: torch._softmax_backward_data(gr, y, -1, x.dtype), bytes=12 * rc),
        Case("layer_norm" + tag, lambda: F.layer_norm(x, (cols,), w, b), bytes=8 * rc + 8 * c + 8 * r),
        Case("rms_norm" + tag, lambda: F.rms_norm(x, (cols,), w, 1e-6), bytes=8 * rc + 4 * c + 4 * r),
        Case("layer_norm_backward" + tag,
             lambda: torch.ops.aten.native_layer_norm_backward(gr, x, [cols], ln[1], ln[2], w, b, [True, True, True]),
             bytes=12 * rc + 8 * r + 12 * c),
        Case("rms_norm_backward" + tag,
             lambda: torch.autograd.grad(yr, (xr, wr), gr, retain_graph=True), bytes=12 * rc + 4 * r + 8 * c),
        Case("cumsum" + tag, lambda: torch.cumsum(x, -1), bytes=8 * rc),
    ]
