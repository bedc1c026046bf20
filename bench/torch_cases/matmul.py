"""Matrix products (issue #6): twins of bench/cases_matmul.cpp."""
import torch

from . import Case


def _at_least(ratio):
    return (f"≥ {ratio:.2f}× PyTorch", lambda f, t, x: f >= ratio * t)


TARGETS = {
    "matmul_f32": _at_least(0.98),
    "matmul_tf32": _at_least(0.98),
    "matmul_f64": _at_least(0.98),
    "matmul_bf16": _at_least(0.98),
    "matmul_f16": _at_least(0.98),
    "bmm_bf16": _at_least(0.98),
    "bmm_f32": _at_least(0.98),
    "matmul_small_f32_64": _at_least(1.0),
    "matmul_small_f32_256": _at_least(1.0),
    "matmul_row_f32": _at_least(1.0),
    "matmul_small_bf16_64": _at_least(1.0),
    "matmul_small_bf16_256": _at_least(1.0),
    "matmul_row_bf16": _at_least(1.0),
    "linear_bf16_bias": _at_least(0.98),
    # One fused GEMM against PyTorch's GEMM, cast and add.
    "linear_bf16_residual_f32": _at_least(1.0),
    "linear_bf16_residual_f32_bf16_bias": _at_least(1.0),
}


def _flops(batch, m, n, k):
    return 2.0 * batch * m * n * k


def cases(quick):
    dev = torch.device("cuda")
    big, f64_size = (256, 128) if quick else (8192, 4096)
    batch, batch_size = (4, 64) if quick else (64, 1024)
    g = torch.Generator(device=dev).manual_seed(0)

    def rand(*shape, dtype=torch.float32):
        return (torch.rand(*shape, device=dev, generator=g) * 4 - 2).to(dtype)

    a32, b32 = rand(big, big), rand(big, big)
    a16, b16 = a32.bfloat16(), b32.bfloat16()
    ah, bh = a32.half(), b32.half()
    a64, b64 = rand(f64_size, f64_size, dtype=torch.float64), rand(f64_size, f64_size, dtype=torch.float64)
    ba32, bb32 = rand(batch, batch_size, batch_size), rand(batch, batch_size, batch_size)
    ba16, bb16 = ba32.bfloat16(), bb32.bfloat16()

    def tf32():
        # TF32 for this case only; the switch is restored after every call.
        previous = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return torch.matmul(a32, b32)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = previous

    big_flops = _flops(1, big, big, big)
    out = [
        Case("matmul_f32", lambda: torch.matmul(a32, b32), flops=big_flops),
        Case("matmul_tf32", tf32, flops=big_flops),
        Case("matmul_f64", lambda: torch.matmul(a64, b64), flops=_flops(1, f64_size, f64_size, f64_size)),
        Case("matmul_bf16", lambda: torch.matmul(a16, b16), flops=big_flops),
        Case("matmul_f16", lambda: torch.matmul(ah, bh), flops=big_flops),
        Case("bmm_bf16", lambda: torch.bmm(ba16, bb16), flops=_flops(batch, batch_size, batch_size, batch_size)),
        Case("bmm_f32", lambda: torch.bmm(ba32, bb32), flops=_flops(batch, batch_size, batch_size, batch_size)),
    ]
    width = 256 if quick else 4096
    for dtype, suffix in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        for n in (64, 256):
            a, b = rand(n, n, dtype=dtype), rand(n, n, dtype=dtype)
            out.append(Case(f"matmul_small_{suffix}_{n}", lambda a=a, b=b: torch.matmul(a, b), flops=_flops(1, n, n, n)))
        x, w = rand(1, width, dtype=dtype), rand(width, width, dtype=dtype)
        out.append(Case(f"matmul_row_{suffix}", lambda x=x, w=w: torch.matmul(x, w), flops=_flops(1, 1, width, width)))
    # gpt2-small's MLP up-projection with its bias; F.linear reaches addmm's bias epilogue.
    tokens, in_features, out_features = (256, 64, 96) if quick else (16384, 768, 3072)
    lx = rand(tokens, in_features, dtype=torch.bfloat16)
    lw, lb = rand(out_features, in_features, dtype=torch.bfloat16), rand(out_features, dtype=torch.bfloat16)
    out.append(Case("linear_bf16_bias", lambda: torch.nn.functional.linear(lx, lw, lb),
                    flops=_flops(1, tokens, out_features, in_features)))
    # The residual update of a transformer block with an F32 residual stream: the composition
    # ferrite's LinearOptions::residual fuses (gpt2-small's MLP down-projection).
    hidden, model = (96, 64) if quick else (3072, 768)
    rx, rw = rand(tokens, hidden, dtype=torch.bfloat16), rand(model, hidden, dtype=torch.bfloat16)
    rb32, rr = rand(model), rand(tokens, model)
    rb16 = rb32.bfloat16()
    for name, rb in (("linear_bf16_residual_f32", rb32), ("linear_bf16_residual_f32_bf16_bias", rb16)):
        if rb.dtype == torch.float32:
            call = lambda rb=rb: rr + torch.nn.functional.linear(rx, rw).float() + rb
        else:
            call = lambda rb=rb: rr + torch.nn.functional.linear(rx, rw, rb).float()
        out.append(Case(name, call, flops=_flops(1, tokens, model, hidden)))
    return out
