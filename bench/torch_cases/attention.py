"""Scaled dot-product attention (issue #16): twins of bench/cases_attention.cpp, through
torch.nn.functional.scaled_dot_product_attention (PyTorch picks its backend: cuDNN or flash for
BF16/F16, memory-efficient for F32). The backward is timed alone, from a saved forward graph."""
import torch
import torch.nn.functional as F

from . import Case


def _at_least(ratio):
    return (f"≥ {ratio:.2f}× PyTorch", lambda f, t, x: f >= ratio * t)


# The targets (issue #16): F16/BF16 at B=8, H=16, S=4096, D=128 forward and backward,
# causal and not, and decoding, each at least PyTorch's rate.
TARGETS = {
    f"sdpa_{dtype}{causal}_{step}": _at_least(1.0)
    for dtype in ("bf16", "f16")
    for causal in ("", "_causal")
    for step in ("fwd", "bwd")
}
TARGETS["sdpa_decode_bf16_gqa"] = _at_least(1.0)
# ferrite's default backward is deterministic: against PyTorch asked for a deterministic backward
# too (the `_det_bwd` twins) it is held to the same bar, at every shape that has the pair.
TARGETS.update({f"sdpa_{p}_det_bwd": _at_least(1.0)
                for p in ("bf16", "bf16_causal", "f16", "f16_causal", "bf16_d64", "bf16_d256")})


class _deterministic:
    """torch.use_deterministic_algorithms(True) inside the block, the previous setting after it."""

    def __enter__(self):
        self.before = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)

    def __exit__(self, *exc):
        torch.use_deterministic_algorithms(self.before)


def _flops(b, h, sq, sk, d, causal, products):
    return 2.0 * products * b * h * sq * sk * d / (2.0 if causal else 1.0)


def _problem(out, name, dtype, b, h, s, d, causal, forward_only, rand, nondeterministic_too=False, hkv=None):
    # Twin of add_problem: q [b, h, s, d], k and v [b, hkv, s, d] (hkv None: h; fewer: grouped-query
    # attention through enable_gqa).
    hkv = hkv or h
    q, k, v, go = (rand(b, heads, s, d, dtype=dtype) for heads in (h, hkv, hkv, h))

    def attend(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hkv != h)

    # ferrite's forward is the training forward: it returns the logsumexp the backward needs.
    # PyTorch computes that only when an input requires grad (its inference forward skips it),
    # so the twin times the forward on inputs that require grad: the same outputs.
    qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
    out.append(Case(name + "_fwd", lambda q=qg, k=kg, v=vg: attend(q, k, v), flops=_flops(b, h, s, s, d, causal, 2)))
    if forward_only:
        return
    o = attend(qg, kg, vg)

    def bwd(o=o, qg=qg, kg=kg, vg=vg, go=go):
        return torch.autograd.grad(o, (qg, kg, vg), go, retain_graph=True)

    out.append(Case(name + "_bwd", bwd, flops=_flops(b, h, s, s, d, causal, 5)))
    if nondeterministic_too:
        # Twin of ferrite's deterministic = false backward: PyTorch's default backward (the same call).
        out.append(Case(name + "_nondet_bwd", bwd, flops=_flops(b, h, s, s, d, causal, 5)))
        # Twin of ferrite's default (deterministic) backward with PyTorch asked for determinism
        # too: the forward and the backward both run under torch.use_deterministic_algorithms,
        # so PyTorch picks its backend and algorithm for a deterministic backward.
        with _deterministic():
            qd, kd, vd = (t.detach().requires_grad_() for t in (q, k, v))
            od = attend(qd, kd, vd)

        def det_bwd(o=od, qg=qd, kg=kd, vg=vd, go=go):
            with _deterministic():
                return torch.autograd.grad(o, (qg, kg, vg), go, retain_graph=True)

        out.append(Case(name + "_det_bwd", det_bwd, flops=_flops(b, h, s, s, d, causal, 5)))


def _projection_views(out, name, b, h, t, d, rand):
    # Twin of add_projection_views: q, k, v permuted views of one [B, T, 3, H, D] projection,
    # grad_out a view of [B, T, H, D] (_views), and the same values contiguous (_dense).
    heads = rand(b, t, 3, h, d, dtype=torch.bfloat16).permute(2, 0, 3, 1, 4)
    dy = rand(b, t, h, d, dtype=torch.bfloat16).permute(0, 2, 1, 3)
    for views in (True, False):
        q, k, v, go = (x if views else x.contiguous() for x in (heads[0], heads[1], heads[2], dy))
        case = name + ("_views" if views else "_dense")
        out.append(Case(case + "_fwd", lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                        flops=_flops(b, h, t, t, d, True, 2)))
        qg, kg, vg = (x.detach().requires_grad_() for x in (q, k, v))
        o = F.scaled_dot_product_attention(qg, kg, vg, is_causal=True)

        def bwd(o=o, qg=qg, kg=kg, vg=vg, go=go):
            return torch.autograd.grad(o, (qg, kg, vg), go, retain_graph=True)

        out.append(Case(case + "_bwd", bwd, flops=_flops(b, h, t, t, d, True, 5)))


def _masked_forwards(out, name, b, h, s, d, rand):
    # Twin of add_masked_forwards: a Bool key-padding mask [B, 1, 1, S] (batch i attends to its
    # first S - i S / 16 keys) and an additive BF16 mask [1, 1, S, S] (-0.01 |i - j|), passed as
    # attn_mask (True = attend, as ferrite's Bool masks); inputs that require grad, as _problem's.
    # _keypad_bwd: the key-padding problem's backward, timed alone from a saved forward graph (PyTorch's
    # default backward, as the _bwd rows of _problem).
    q, k, v = (rand(b, h, s, d, dtype=torch.bfloat16).requires_grad_() for _ in range(3))
    go = rand(b, h, s, d, dtype=torch.bfloat16)
    dev = q.device
    j = torch.arange(s, device=dev)
    pad = (j[None, :] < (s - torch.arange(b, device=dev) * s // 16)[:, None]).view(b, 1, 1, s)
    add = (-0.01 * (j[:, None] - j[None, :]).abs().float()).to(torch.bfloat16).view(1, 1, s, s)
    for suffix, mask in (("_keypad_fwd", pad), ("_addmask_fwd", add)):
        out.append(Case(name + suffix, lambda q=q, k=k, v=v, m=mask: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                        flops=_flops(b, h, s, s, d, False, 2)))
        if suffix == "_keypad_fwd":
            o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

            def bwd(o=o, q=q, k=k, v=v, go=go):
                return torch.autograd.grad(o, (q, k, v), go, retain_graph=True)

            out.append(Case(name + "_keypad_bwd", bwd, flops=_flops(b, h, s, s, d, False, 5)))


def _dropout(out, name, b, h, s, d, causal, rand):
    # Twin of add_dropout: dropout_p 0.1 on the weights (PyTorch's own stream; its backward replays
    # the forward's mask from the saved graph), inputs that require grad, as _problem's.
    q, k, v = (rand(b, h, s, d, dtype=torch.bfloat16).requires_grad_() for _ in range(3))
    go = rand(b, h, s, d, dtype=torch.bfloat16)

    def attend(q=q, k=k, v=v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, dropout_p=0.1)

    out.append(Case(name + "_fwd", attend, flops=_flops(b, h, s, s, d, causal, 2)))
    o = attend()

    def bwd(o=o, q=q, k=k, v=v, go=go):
        return torch.autograd.grad(o, (q, k, v), go, retain_graph=True)

    out.append(Case(name + "_bwd", bwd, flops=_flops(b, h, s, s, d, causal, 5)))


def cases(quick):
    dev = torch.device("cuda")
    full = not quick
    g = torch.Generator(device=dev).manual_seed(0)

    def rand(*shape, dtype):
        return (torch.rand(*shape, device=dev, generator=g) * 4 - 2).to(dtype)

    out = []
    # F16/BF16 at the B=8, H=16, S=4096, D=128; F32 at B=1, S=2048.
    for dtype, suffix in ((torch.bfloat16, "bf16"), (torch.float16, "f16"), (torch.float32, "f32")):
        half = dtype != torch.float32
        b, h = (8 if full and half else 1), (16 if full else 2)
        s = (4096 if half else 2048) if full else 64
        for causal in (False, True):
            _problem(out, f"sdpa_{suffix}" + ("_causal" if causal else ""), dtype, b, h, s, 128, causal, False, rand,
                     nondeterministic_too=half)
    b, h, s = (8, 16, 4096) if full else (1, 2, 64)
    _problem(out, "sdpa_bf16_d64", torch.bfloat16, b, h, s, 64, False, False, rand, nondeterministic_too=True)
    _problem(out, "sdpa_bf16_d256", torch.bfloat16, b, h, s, 256, False, False, rand, nondeterministic_too=True)
    _problem(out, "sdpa_bf16_s16k_causal", torch.bfloat16, 1, 32 if full else 2, 16384 if full else 64, 128, True,
             False, rand)
    b, h, hkv, s = (4, 32, 8, 4096) if full else (1, 4, 1, 64)
    _problem(out, "sdpa_bf16_gqa_causal", torch.bfloat16, b, h, s, 128, True, False, rand, hkv=hkv)
    _projection_views(out, "sdpa_bf16_gpt2_qkv", *((16, 12, 1024) if full else (1, 2, 64)), 64, rand)
    _masked_forwards(out, "sdpa_bf16", *((8, 16, 4096) if full else (1, 2, 64)), 128, rand)
    for causal in (False, True):
        _dropout(out, "sdpa_bf16" + ("_causal" if causal else "") + "_dropout", *((8, 16, 4096) if full else (1, 2, 64)),
                 128, causal, rand)
    d = 128
    db, dk = (64, 8192) if full else (2, 128)
    q = rand(db, 32, 1, d, dtype=torch.bfloat16)
    k, v = rand(db, 8, dk, d, dtype=torch.bfloat16), rand(db, 8, dk, d, dtype=torch.bfloat16)
    out.append(Case("sdpa_decode_bf16_gqa", lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                    flops=_flops(db, 32, 1, dk, d, False, 2)))
    return out
