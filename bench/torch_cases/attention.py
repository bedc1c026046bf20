"""Scaled dot-product attention (issue #16): twins of bench/cases_attention.cpp, through
torch.nn.functional.scaled_dot_product_attention (PyTorch picks its backend: cuDNN or flash for
BF16/F16, memory-efficient for F32). The backward is timed alone, from a saved forward graph."""
import torch
import torch.nn.functional as F

from . import Case


def _at_least(ratio):
    return (f"≥ {ratio:.2f}× PyTorch", lambda f, t, x: f >= ratio * t)


TARGETS = {}


def _flops(b, h, sq, sk, d, causal, products):
    return 2.0 * products * b * h * sq * sk * d / (2.0 if causal else 1.0)


def cases(quick):
    dev = torch.device("cuda")
    b, h, s, d = (1, 2, 64, 128) if quick else (1, 16, 2048, 128)
    g = torch.Generator(device=dev).manual_seed(0)

    def rand(*shape, dtype):
        return (torch.rand(*shape, device=dev, generator=g) * 4 - 2).to(dtype)

    out = []
    for dtype, suffix in ((torch.bfloat16, "bf16"), (torch.float16, "f16"), (torch.float32, "f32")):
        q, k, v, go = (rand(b, h, s, d, dtype=dtype) for _ in range(4))
        for causal in (False, True):
            name = f"sdpa_{suffix}" + ("_causal" if causal else "")
            out.append(Case(name + "_fwd", lambda q=q, k=k, v=v, c=causal: F.scaled_dot_product_attention(q, k, v, is_causal=c),
                            flops=_flops(b, h, s, s, d, causal, 2)))
            if dtype == torch.float32:
                continue
            qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
            o = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)

            def bwd(o=o, qg=qg, kg=kg, vg=vg, go=go):
                return torch.autograd.grad(o, (qg, kg, vg), go, retain_graph=True)

            out.append(Case(name + "_bwd", bwd, flops=_flops(b, h, s, s, d, causal, 5)))
    db, dk = (2, 128) if quick else (64, 8192)
    q = rand(db, 32, 1, d, dtype=torch.bfloat16)
    k, v = rand(db, 8, dk, d, dtype=torch.bfloat16), rand(db, 8, dk, d, dtype=torch.bfloat16)
    out.append(Case("sdpa_decode_bf16_gqa", lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                    flops=_flops(db, 32, 1, dk, d, False, 2)))
    return out
