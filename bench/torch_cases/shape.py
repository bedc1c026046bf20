"""Shape and indexing family: the PyTorch twins of bench/cases_shape.cpp."""
import torch

from . import Case

TARGETS = {
    "transpose_f32": ("≥ 3800 GB/s", lambda f, t, x: f >= 3800),
    "permute_0213_bf16": ("≥ 3500 GB/s", lambda f, t, x: f >= 3500),
    "cat_f32": ("≥ 3800 GB/s", lambda f, t, x: f >= 3800),
    "split_f32": ("≥ 3800 GB/s", lambda f, t, x: f >= 3800),
    "embedding_f32": ("≥ 3800 GB/s", lambda f, t, x: f >= 3800),
    "index_select_f32": ("≥ 3500 GB/s", lambda f, t, x: f >= 3500),
    "gather_f32": ("≥ 3500 GB/s", lambda f, t, x: f >= 3500),
    "masked_select_f32": ("≥ 3000 GB/s", lambda f, t, x: f >= 3000),
    "embedding_backward_f32": ("reported against PyTorch", lambda f, t, x: True),
    "embedding_backward_skewed_f32": ("reported against PyTorch", lambda f, t, x: True),
}


def ramp(shape, dtype, dev):
    n = 1
    for s in shape:
        n *= s
    return torch.arange(1, n + 1, device=dev, dtype=torch.float32).to(dtype).reshape(shape)


def cases(quick):
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    out = []

    n = 1024 if quick else 16384
    x = ramp((n, n), torch.float32, dev)
    out.append(Case("transpose_f32", lambda: x.t().contiguous(), bytes=2.0 * 4 * n * n))

    s = (4, 256, 16, 128) if quick else (32, 2048, 16, 128)
    p = ramp(s, torch.bfloat16, dev)
    out.append(Case("permute_0213_bf16", lambda: p.permute(0, 2, 1, 3).contiguous(), bytes=2.0 * 2 * p.numel()))

    rows = 1024 if quick else 16384
    a, b = ramp((rows, 4096), torch.float32, dev), ramp((rows, 4096), torch.float32, dev)
    joined = ramp((rows, 8192), torch.float32, dev)
    cat_bytes = 2.0 * 4 * rows * 8192
    out.append(Case("cat_f32", lambda: torch.cat([a, b], 1), bytes=cat_bytes))
    # torch.split returns views; the twin materialises the pieces as ferrite does.
    out.append(Case("split_f32", lambda: [t.contiguous() for t in torch.split(joined, [4096, 4096], 1)], bytes=cat_bytes))

    table, picks, d = (4096, 1024, 4096) if quick else (128000, 16384, 4096)
    weight = ramp((table, d), torch.float32, dev)
    idx = torch.randint(0, table, (picks,), device=dev, generator=g)
    out.append(Case("embedding_f32", lambda: torch.nn.functional.embedding(idx, weight),
                    bytes=2.0 * 4 * picks * d + 8.0 * picks))

    s = (16, 4096, 32) if quick else (256, 32768, 32)
    xs = ramp(s, torch.float32, dev)
    sel = torch.randint(0, s[1], (s[1] // 2,), device=dev, generator=g)
    out.append(Case("index_select_f32", lambda: torch.index_select(xs, 1, sel),
                    bytes=2 * 4.0 * s[0] * (s[1] // 2) * s[2] + 8.0 * (s[1] // 2)))

    gr, gc = (1024 if quick else 16384), 4096
    xg = ramp((gr, gc), torch.float32, dev)
    gi = torch.randint(0, gc, (gr, gc), device=dev, generator=g)
    out.append(Case("gather_f32", lambda: torch.gather(xg, 1, gi), bytes=16.0 * gr * gc))

    n = (1 << 22) if quick else (1 << 28)
    xm = ramp((n,), torch.float32, dev)
    mask = torch.rand(n, device=dev, generator=g) < 0.5
    out.append(Case("masked_select_f32", lambda: torch.masked_select(xm, mask),
                    bytes=4.0 * n + 1.0 * n + 4.0 * (n // 2)))

    picks, d, rows = (1024, 4096, 2048) if quick else (16384, 4096, 32000)
    grad = ramp((picks, d), torch.float32, dev)
    eidx = torch.randint(0, picks // 16, (picks,), device=dev, generator=g)
    out.append(Case("embedding_backward_f32",
                    lambda: torch.ops.aten.embedding_dense_backward(grad, eidx, rows, -1, False),
                    bytes=4.0 * picks * d + 8.0 * picks + 4.0 * rows * d))

    # The GPT example's byte tokens, skewed: every other token row 32 (the same size in both modes).
    picks, d, rows = 16384, 768, 256
    sgrad = ramp((picks, d), torch.float32, dev)
    sidx = torch.randint(0, rows, (picks,), device=dev, generator=g)
    sidx[0::2] = 32
    out.append(Case("embedding_backward_skewed_f32",
                    lambda: torch.ops.aten.embedding_dense_backward(sgrad, sidx, rows, -1, False),
                    bytes=4.0 * picks * d + 8.0 * picks + 4.0 * rows * d))
    return out
