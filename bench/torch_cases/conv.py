"""Convolution family (issue #17): twins of bench/cases_conv.cpp."""
import torch
import torch.nn.functional as F

from . import Case


def _at_least(ratio):
    return (f"≥ {ratio:.2f}× PyTorch", lambda f, t, x: f >= ratio * t)


TARGETS = {name: _at_least(1.0) for name in (
    "conv2d_fwd_f32", "conv2d_bwd_input_f32", "conv2d_bwd_weight_f32",
    "conv2d_fwd_bf16", "conv2d_bwd_input_bf16", "conv2d_bwd_weight_bf16",
    "max_pool2d_f32", "avg_pool2d_f32", "gru_cell_f32", "gru_cell_backward_f32")}


def _cudnn_tf32(allowed):
    # cuDNN's TF32 switch set around a call: off for the F32 convolutions (ferrite's switch is
    # off by default), on for the *_tf32 cases that switch ferrite's on
    def wrap(fn):
        def run():
            previous = torch.backends.cudnn.allow_tf32
            torch.backends.cudnn.allow_tf32 = allowed
            try:
                return fn()
            finally:
                torch.backends.cudnn.allow_tf32 = previous
        return run
    return wrap


_no_tf32, _tf32 = _cudnn_tf32(False), _cudnn_tf32(True)


def cases(quick):
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)

    def rand(*shape, dtype=torch.float32):
        return (torch.rand(*shape, device=dev, generator=g) * 4 - 2).to(dtype)

    n, c, hw = (2, 16, 14) if quick else (64, 256, 56)
    flops = 2.0 * n * c * hw * hw * c * 9
    out = []
    for dtype, sfx in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        x, w, gr = rand(n, c, hw, hw, dtype=dtype), rand(c, c, 3, 3, dtype=dtype), rand(n, c, hw, hw, dtype=dtype)

        def bwd(mask, x=x, w=w, gr=gr):
            return torch.ops.aten.convolution_backward(gr, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, mask)

        wrap = _no_tf32 if dtype == torch.float32 else (lambda f: f)
        out += [
            Case(f"conv2d_fwd_{sfx}", wrap(lambda x=x, w=w: F.conv2d(x, w, padding=1)), flops=flops),
            Case(f"conv2d_bwd_input_{sfx}", wrap(lambda bwd=bwd: bwd([True, False, False])), flops=flops),
            Case(f"conv2d_bwd_weight_{sfx}", wrap(lambda bwd=bwd: bwd([False, True, False])), flops=flops),
        ]
        if dtype == torch.float32:
            out += [
                Case("conv2d_fwd_f32_tf32", _tf32(lambda x=x, w=w: F.conv2d(x, w, padding=1)), flops=flops),
                Case("conv2d_bwd_input_f32_tf32", _tf32(lambda bwd=bwd: bwd([True, False, False])), flops=flops),
                Case("conv2d_bwd_weight_f32_tf32", _tf32(lambda bwd=bwd: bwd([False, True, False])), flops=flops),
            ]

    pn, pc, phw = (2, 8, 32) if quick else (64, 256, 112)
    po = (phw - 1) // 2 + 1
    px = rand(pn, pc, phw, phw)
    in_bytes, out_elems = pn * pc * phw * phw * 4.0, pn * pc * po * po
    out += [
        Case("max_pool2d_f32", lambda: F.max_pool2d(px, 3, 2, 1, return_indices=True), bytes=in_bytes + out_elems * 12),
        Case("avg_pool2d_f32", lambda: F.avg_pool2d(px, 3, 2, 1), bytes=in_bytes + out_elems * 4),
    ]

    b, h = (16, 64) if quick else (256, 1024)
    ig, hg, hx = rand(b, 3 * h), rand(b, 3 * h), rand(b, h)
    ib, hb = rand(3 * h), rand(3 * h)
    _, ws = torch.ops.aten._thnn_fused_gru_cell(ig, hg, hx, ib, hb)
    out += [
        Case("gru_cell_f32", lambda: torch.ops.aten._thnn_fused_gru_cell(ig, hg, hx, ib, hb),
             bytes=b * h * 4.0 * 13 + 6 * h * 4.0),
        Case("gru_cell_backward_f32", lambda: torch.ops.aten._thnn_fused_gru_cell_backward(hx, ws, True),
             bytes=b * h * 4.0 * 13 + 6 * h * 4.0),
    ]
    return out
