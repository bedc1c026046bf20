"""Every op family called from Python, checked against NumPy on each device (test_torch.py
runs the same table against PyTorch when it is importable)."""
import numpy as np
import pytest

import ferrite as ft
from optable import OPS


@pytest.mark.parametrize("entry", OPS, ids=[e[0] for e in OPS])
def test_op_matches_numpy(entry, device):
    name, inputs, call, ref = entry
    if ref is None:
        pytest.skip("checked against PyTorch only")
    xs = [ft.tensor(a, device=device) for a in inputs]
    got = call(ft, *xs)
    want = np.asarray(ref(*inputs))
    assert got.device == device
    assert tuple(got.shape) == want.shape, name
    g = np.asarray(got.cpu().tolist())
    if want.dtype.kind in "biu":
        assert g.tolist() == want.tolist(), name
    else:
        np.testing.assert_allclose(g, want, rtol=2e-5, atol=2e-5, err_msg=name)


def test_mixed_precision_and_options(device):
    a = ft.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, dtype=ft.bfloat16)
    assert ft.add(a, a, dtype=ft.float32).dtype == ft.float32
    assert ft.sum(a, dtype=ft.float32).dtype == ft.float32
    assert ft.softmax(a, 1, dtype=ft.float32).dtype == ft.float32
    assert ft.matmul(a, a, out_dtype=ft.float32).dtype == ft.float32
    w = ft.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], device=device)
    x = ft.tensor([[1.0, 2.0]], device=device)
    assert ft.matmul(x, w, transpose_b=True).tolist() == [[1.0, 4.0, 3.0]]
    y, mean, rstd = ft.layer_norm(x)
    assert y.shape == (1, 2) and mean.shape == (1,) and rstd.shape == (1,)
    dx, dw, db = ft.layer_norm_backward(ft.ones_like(x), x, mean, rstd)
    assert dw is None and dx.shape == (1, 2)
    v, i = ft.max(ft.tensor([[1, 5, 2]], device=device), 1)
    assert v.tolist() == [5] and i.tolist() == [1]
    vals, idx = ft.cummax(ft.tensor([1.0, 3.0, 2.0], device=device), 0)
    assert vals.tolist() == [1, 3, 3] and idx.tolist() == [0, 1, 1]
    assert ft.scatter_add(ft.zeros(3, device=device), 0, ft.tensor([0, 0, 2], device=device),
                          ft.ones(3, device=device)).tolist() == [2, 0, 1]
    out = ft.ones(2, 2, device=device)
    ft.matmul_out(out, x.t(), x, alpha=2.0, beta=1.0)
    assert out.tolist() == [[3.0, 5.0], [5.0, 9.0]]
    assert ft.relu_backward(ft.ones(2, device=device), ft.tensor([-1.0, 1.0], device=device)).tolist() == [0, 1]


def test_ops_take_strided_views(device):
    base = np.arange(20, dtype=np.float32).reshape(4, 5)
    x = ft.tensor(base, device=device)
    v = x.t()[1:, ::2]  # non-contiguous
    assert not v.is_contiguous()
    np.testing.assert_allclose(np.asarray((v.exp() + 1).cpu().tolist()), np.exp(base.T[1:, ::2]) + 1, rtol=1e-6)
    assert ft.sum(v).item() == base.T[1:, ::2].sum()


def test_out_variants(device):
    a = ft.tensor([1.0, 2.0], device=device)
    out = ft.empty(2, device=device)
    assert ft.add_out(a, a, out) is not None and out.tolist() == [2.0, 4.0]
    ft.mul_out(a, a, out)
    assert out.tolist() == [1.0, 4.0]
