"""Training ops (issue #17): fused AdamW, dropout, rand/randn, cross-entropy forward +
backward. Names match bench/cases_training.cpp."""
import torch
import torch.nn.functional as F

from . import Case

TARGETS = {
    "adamw_f32": ("≥ 4000 GB/s", lambda f, t, x: f >= 4000),
    "dropout_f32": ("≥ 4000 GB/s", lambda f, t, x: f >= 4000),
    "rand_f32": ("≥ 1.0× torch", lambda f, t, x: f >= t),
    "randn_f32": ("≥ 1.0× torch", lambda f, t, x: f >= t),
    "cross_entropy_bf16": ("≥ 1.0× torch and ≥ 3500 GB/s", lambda f, t, x: f >= t and f >= 3500),
}


def cases(quick):
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    total = (1 << 18) if quick else (1 << 26)
    sizes = [total // 100 + (total // 16384 if i % 2 == 0 else -(total // 16384)) for i in range(99)]
    sizes.append(total - sum(sizes))
    params = [torch.nn.Parameter(torch.rand(s, device=dev, generator=g) * 4 - 2) for s in sizes]
    for p in params:
        p.grad = torch.rand(p.shape, device=dev, generator=g) * 4 - 2
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=1e-2, fused=True)
    opt.step()  # creates the state outside the timing

    n = (1 << 20) if quick else (1 << 28)
    nf = float(n)
    x = torch.rand(n, device=dev, generator=g) * 4 - 2

    rows, classes = (64 if quick else 16384), 50304
    logits = (torch.rand(rows, classes, device=dev, generator=g) * 4 - 2).bfloat16().requires_grad_()
    targets = torch.randint(0, classes, (rows,), device=dev, generator=g)

    def ce():
        loss = F.cross_entropy(logits, targets)
        return torch.autograd.grad(loss, logits)

    rc = float(rows * classes)
    return [
        Case("adamw_f32", opt.step, bytes=28.0 * total),
        Case("dropout_f32", lambda: torch.native_dropout(x, 0.1, True), bytes=9 * nf),
        Case("rand_f32", lambda: torch.rand(n, device=dev), bytes=4 * nf),
        Case("randn_f32", lambda: torch.randn(n, device=dev), bytes=4 * nf),
        Case("randn_bf16", lambda: torch.randn(n, device=dev, dtype=torch.bfloat16), bytes=2 * nf),
        Case("cross_entropy_bf16", ce, bytes=6 * rc),
    ]
