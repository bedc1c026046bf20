"""The backwards and optimizer steps of the later families against PyTorch's autograd and
torch.optim, on each device (skipped where PyTorch is not importable; test_families.py has
the NumPy checks that run everywhere)."""
import numpy as np
import pytest

import ferrite as ft

torch = pytest.importorskip("torch")
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
# The math attention path (full float32), not flash / memory-efficient / cuDNN kernels.
for _backend in ("flash", "mem_efficient", "cudnn"):
    getattr(torch.backends.cuda, f"enable_{_backend}_sdp")(False)

rng = np.random.default_rng(2)


def pair(a, device):
    """The same float32 values as a ferrite tensor and a torch leaf that records its gradient."""
    a = np.ascontiguousarray(a, np.float32)
    t = torch.from_numpy(a).to("cuda" if device == "cuda" else "cpu").requires_grad_()
    return ft.tensor(a, device=device), t


def close(f, t, tol=2e-5):
    torch.testing.assert_close(torch.from_dlpack(f.cpu()), t.detach().cpu(), rtol=tol, atol=tol)


def test_conv2d_backward(device):
    (x, tx), (w, tw), (_, tb) = (pair(rng.standard_normal(s), device) for s in ((2, 4, 7, 6), (6, 2, 3, 3), (6,)))
    ty = torch.nn.functional.conv2d(tx, tw, tb, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    g, tg = pair(rng.standard_normal(tuple(ty.shape)), device)
    ty.backward(tg)
    r = ft.nn.conv2d_backward(g, x, w, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    close(r.grad_input, tx.grad, 1e-4)
    close(r.grad_weight, tw.grad, 1e-4)
    close(r.grad_bias, tb.grad, 1e-4)


def test_pool_backwards(device):
    x, tx = pair(rng.standard_normal((2, 3, 7, 8)), device)
    ty = torch.nn.functional.max_pool2d(tx, 3, 2, 1, ceil_mode=True)
    g, tg = pair(rng.standard_normal(tuple(ty.shape)), device)
    ty.backward(tg)
    vals, idx = ft.nn.max_pool2d(x, 3, 2, 1, ceil_mode=True)
    close(vals, ty)
    close(ft.nn.max_pool2d_backward(g, x, idx, 3, 2, 1, ceil_mode=True), tx.grad)
    tx.grad = None
    ty = torch.nn.functional.avg_pool2d(tx, (3, 2), None, (1, 0), count_include_pad=False, divisor_override=None)
    g, tg = pair(rng.standard_normal(tuple(ty.shape)), device)
    ty.backward(tg)
    close(ft.nn.avg_pool2d_backward(g, x, (3, 2), None, (1, 0), count_include_pad=False), tx.grad)


def test_cross_entropy_backward(device):
    z, tz = pair(rng.standard_normal((5, 4)), device)
    tgt = np.array([1, -100, 3, 0, 2])
    target = ft.tensor(tgt, device=device)
    tl = torch.nn.functional.cross_entropy(tz, torch.from_numpy(tgt).to(tz.device), label_smoothing=0.1)
    tl.backward()
    r = ft.nn.cross_entropy_forward(z, target, label_smoothing=0.1)
    close(r.loss, tl)
    close(ft.nn.cross_entropy_backward(ft.ones((), device=device), z, target, r.lse, r.count, label_smoothing=0.1),
          tz.grad)


def test_attention_backward(device):
    (q, tq), (k, tk), (v, tv) = (pair(rng.standard_normal(s), device) for s in
                                 ((2, 4, 5, 8), (2, 4, 7, 8), (2, 4, 7, 8)))
    ty = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True, scale=0.3)
    g, tg = pair(rng.standard_normal(tuple(ty.shape)), device)
    ty.backward(tg)
    fwd = ft.nn.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)
    close(fwd.out, ty, 1e-4)
    r = ft.nn.scaled_dot_product_attention_backward(g, q, k, v, fwd.out, fwd.logsumexp, is_causal=True, scale=0.3)
    for got, want in zip(r, (tq.grad, tk.grad, tv.grad)):
        close(got, want, 1e-4)


def test_gru_cell_backward(device):
    (ig, tig), (hg, thg), (hx, thx) = (pair(rng.standard_normal(s), device) for s in ((3, 12), (3, 12), (3, 4)))
    # torch's fused cell is CUDA only: its documented formula under autograd instead.
    h = 4
    r = torch.sigmoid(tig[:, :h] + thg[:, :h])
    z = torch.sigmoid(tig[:, h:2 * h] + thg[:, h:2 * h])
    n = torch.tanh(tig[:, 2 * h:] + r * thg[:, 2 * h:])
    hy = (1 - z) * n + z * thx
    g, tg = pair(rng.standard_normal((3, 4)), device)
    hy.backward(tg)
    fwd = ft.nn.gru_cell(ig, hg, hx)
    close(fwd.hy, hy)
    r = ft.nn.gru_cell_backward(g, fwd.workspace, False)
    for got, want in zip(r[:3], (tig.grad, thg.grad, thx.grad)):
        close(got, want)


@pytest.mark.parametrize("kind", ["adam", "adamw", "adam_amsgrad", "sgd_nesterov"])
def test_optimizer_matches_torch(device, kind):
    shapes = [(4, 3), (6,)]
    p0 = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(3)]
    tdev = "cuda" if device == "cuda" else "cpu"
    tparams = [torch.nn.Parameter(torch.from_numpy(a.copy()).to(tdev)) for a in p0]
    params = [ft.tensor(a, device=device) for a in p0]
    zeros = lambda: [ft.zeros(*s, device=device) for s in shapes]  # noqa: E731
    m, v, vmax, buf = zeros(), zeros(), zeros(), zeros()
    if kind.startswith("sgd"):
        opt = torch.optim.SGD(tparams, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)
    else:
        cls = torch.optim.AdamW if kind == "adamw" else torch.optim.Adam
        opt = cls(tparams, lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1, amsgrad=kind.endswith("amsgrad"))
    for step, gs in enumerate(grads, 1):
        for tp, g in zip(tparams, gs):
            tp.grad = torch.from_numpy(g).to(tdev)
        opt.step()
        fg = [ft.tensor(g, device=device) for g in gs]
        if kind.startswith("sgd"):
            ft.optim.sgd(params, fg, buf, first_step=step == 1, lr=0.1, momentum=0.9, weight_decay=0.01,
                         nesterov=True)
        else:
            step_fn = ft.optim.adamw if kind == "adamw" else ft.optim.adam
            step_fn(params, fg, m, v, vmax, step=step, lr=0.01, beta1=0.8, beta2=0.95, eps=1e-6, weight_decay=0.1,
                    amsgrad=kind.endswith("amsgrad"))
    for p, tp in zip(params, tparams):
        close(p, tp, 1e-5)
