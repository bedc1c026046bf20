"""Tensor basics: factories, attributes, printing, item/tolist, indexing, views, in-place ops,
Python operators. Values are checked against NumPy."""
import math

import numpy as np
import pytest

import ferrite as ft


def arr(t):
    return np.asarray(t.cpu().tolist())


def test_issue_example():
    x = ft.arange(6, dtype=ft.float32).reshape(2, 3) * 2
    assert repr(x) == "tensor([[ 0.,  2.,  4.],\n        [ 6.,  8., 10.]])"


def test_factories(device):
    assert ft.zeros(2, 3, device=device).tolist() == [[0.0] * 3] * 2
    assert ft.zeros((2, 3)).shape == (2, 3)
    assert ft.ones([4], dtype=ft.int32, device=device).tolist() == [1] * 4
    assert ft.empty(0, 5).shape == (0, 5)
    assert ft.full((2,), 7).dtype == ft.int64
    assert ft.full((2,), 7.5).dtype == ft.float32
    assert ft.full((2,), True).dtype == ft.bool
    assert ft.arange(5).dtype == ft.int64
    assert ft.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert ft.arange(1, 10, 3, device=device).tolist() == [1, 4, 7]
    assert np.allclose(arr(ft.linspace(0, 1, 5, device=device)), np.linspace(0, 1, 5))
    assert np.allclose(arr(ft.logspace(0, 2, 3, dtype=ft.float64)), [1, 10, 100])
    assert ft.eye(2, 3, device=device).tolist() == [[1, 0, 0], [0, 1, 0]]
    x = ft.tensor([[1.5, 2], [3, 4]], device=device)
    assert x.dtype == ft.float32 and str(x.device) == ("cuda:0" if device == "cuda" else "cpu")
    assert ft.zeros_like(x).tolist() == [[0, 0], [0, 0]]
    assert ft.ones_like(x, dtype=ft.int64).dtype == ft.int64
    assert ft.full_like(x, 3).tolist() == [[3, 3], [3, 3]]
    assert ft.empty_like(x).shape == (2, 2)


def test_tensor_inference():
    assert ft.tensor(3).dtype == ft.int64 and ft.tensor(3).shape == ()
    assert ft.tensor([True, False]).dtype == ft.bool
    assert ft.tensor([1, 2.5]).dtype == ft.float32
    assert ft.tensor([1 + 2j]).dtype == ft.complex64
    assert ft.tensor([[1, 2]], dtype=ft.float64).dtype == ft.float64
    assert ft.tensor([]).shape == (0,)
    assert ft.tensor([[], []]).shape == (2, 0)
    assert ft.tensor(np.arange(4, dtype=np.int32)).dtype == ft.int32
    with pytest.raises(ValueError, match="ragged"):
        ft.tensor([[1, 2], [3]])


def test_attributes_and_conversions(device):
    x = ft.arange(12, dtype=ft.float32, device=device).reshape(3, 4)
    assert x.shape == (3, 4) and x.size() == (3, 4) and x.size(1) == 4 and x.ndim == 2 and x.dim() == 2
    assert x.numel() == 12 and x.strides == (4, 1) and x.stride(0) == 4 and x.itemsize == 4 and x.nbytes == 48
    assert x.is_contiguous() and not x.t().is_contiguous() and x.t().contiguous().is_contiguous()
    assert x.dtype == ft.float32 and x.dtype == "float32" and repr(x.dtype) == "ferrite.float32"
    assert x.device == device
    assert x.to(ft.int64).dtype == ft.int64 and x.to("cpu").device == "cpu"
    assert x.to("cpu", ft.float64).dtype == ft.float64
    assert x.double().dtype == ft.float64 and x.half().dtype == ft.float16 and x.bfloat16().dtype == ft.bfloat16
    assert x[1, 2].item() == 6.0 and isinstance(x[1, 2].item(), float)
    assert ft.tensor(3).item() == 3 and isinstance(ft.tensor(3).item(), int)
    assert ft.tensor(True).item() is True
    assert ft.tensor([1 + 2j]).item() == 1 + 2j
    assert x.tolist() == np.arange(12.0).reshape(3, 4).tolist()
    assert ft.tensor(2.5).tolist() == 2.5
    assert float(ft.tensor(2.5)) == 2.5 and int(ft.tensor(7)) == 7 and len(x) == 3
    assert bool(ft.tensor(1)) and not bool(ft.tensor(0.0))
    with pytest.raises(RuntimeError, match="item"):
        x.item()


def test_repr():
    assert repr(ft.tensor([1, 2])) == "tensor([1, 2], dtype=I64)"
    assert repr(ft.tensor([True, False])) == "tensor([ True, False], dtype=Bool)"
    assert repr(ft.tensor(2.5)) == "tensor(2.5000)"
    assert str(ft.zeros(2)) == "tensor([0., 0.])"


def test_indexing_views(device):
    base = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = ft.tensor(base, device=device)
    for key in [1, -1, None, Ellipsis, (1, 2), (slice(None), 1), (slice(1, None), slice(None, None, 2)), (Ellipsis, 3),
                (None, 1), (1, None, slice(0, 3)), (slice(-2, None), Ellipsis, slice(1, 4, 2)), slice(5, 9)]:
        got = x[key]
        assert arr(got).tolist() == base[key].tolist(), key
        assert got.shape == base[key].shape, key
    v = x[1]
    assert v.storage_offset() == 20 and v.data_ptr() == x.data_ptr() + 20 * 4
    # Tensor indices.
    assert arr(x[ft.tensor([2, 0], device=device)]).tolist() == base[[2, 0]].tolist()
    assert arr(x[:, [1, 3]]).tolist() == base[:, [1, 3]].tolist()
    mask = x > 30
    assert arr(x[mask]).tolist() == base[base > 30].tolist()
    with pytest.raises(IndexError):
        x[3]
    with pytest.raises(IndexError):
        x[0, 0, 0, 0]


def test_setitem_writes_through_views(device):
    x = ft.zeros(3, 4, device=device)
    x[1] = 5
    x[:, 2] = ft.tensor([1.0, 2.0, 3.0], device=device)
    x[0, ::2] += 1
    expect = np.zeros((3, 4), np.float32)
    expect[1] = 5
    expect[:, 2] = [1, 2, 3]
    expect[0, ::2] += 1
    assert arr(x).tolist() == expect.tolist()
    x[x > 4] = -1
    expect[expect > 4] = -1
    assert arr(x).tolist() == expect.tolist()
    y = x.t()
    y[0] = 9  # column 0 of x
    expect[:, 0] = 9
    assert arr(x).tolist() == expect.tolist()


def test_view_methods(device):
    base = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    x = ft.tensor(base, device=device)
    assert arr(x.view(6, 4)).tolist() == base.reshape(6, 4).tolist()
    assert arr(x.reshape(-1)).tolist() == base.reshape(-1).tolist()
    assert arr(x.permute(2, 0, 1)).tolist() == base.transpose(2, 0, 1).tolist()
    assert arr(x.transpose(0, 2)).tolist() == base.swapaxes(0, 2).tolist()
    assert arr(x.mT).tolist() == np.swapaxes(base, -1, -2).tolist()
    assert arr(x.T).tolist() == base.T.tolist()
    assert x.unsqueeze(1).shape == (2, 1, 3, 4) and x.unsqueeze(1).squeeze().shape == (2, 3, 4)
    assert x.flatten(1).shape == (2, 12) and x.unflatten(2, (2, 2)).shape == (2, 3, 2, 2)
    assert arr(x.narrow(2, 1, 2)).tolist() == base[:, :, 1:3].tolist()
    assert arr(x[0].diagonal()).tolist() == np.diagonal(base[0]).tolist()
    assert ft.ones(1, 3).expand(2, 3).strides == (0, 1)
    assert arr(x[0, 0].unfold(0, 2, 2)).tolist() == [[0, 1], [2, 3]]
    assert arr(x.as_strided((2, 2), (1, 4), 1)).tolist() == [[1, 5], [2, 6]]
    assert x.t().contiguous().is_contiguous() if x.ndim == 2 else True


def test_inplace(device):
    x = ft.ones(2, 3, device=device)
    y = x
    x += 1
    assert y is x and x.tolist() == [[2] * 3] * 2
    x *= ft.tensor([1.0, 2.0, 3.0], device=device)
    x -= 1
    x /= 2
    assert x.tolist() == [[0.5, 1.5, 2.5]] * 2
    x.zero_().add_(3).mul_(2).sub_(1).div_(5)
    assert x.tolist() == [[1.0] * 3] * 2
    x.fill_(4).clamp_(max=3)
    assert x.tolist() == [[3.0] * 3] * 2
    x.masked_fill_(ft.tensor([True, False, True], device=device), 0)
    assert x.tolist() == [[0, 3, 0]] * 2
    x.copy_(ft.arange(3, device=device))  # converts int64 -> float32 and broadcasts
    assert x.tolist() == [[0, 1, 2]] * 2
    i = ft.arange(6, device=device)
    i //= 4
    i %= 2
    assert i.tolist() == [0, 0, 0, 0, 1, 1]
    with pytest.raises(TypeError):
        i /= 2  # integer / is refused (ferrite never promotes)


def test_operators(device):
    a_np = np.array([[1.5, -2.0, 3.0], [4.0, 0.5, -6.0]], np.float32)
    b_np = np.array([2.0, 4.0, -1.0], np.float32)
    a, b = ft.tensor(a_np, device=device), ft.tensor(b_np, device=device)
    cases = [
        (a + b, a_np + b_np), (a - b, a_np - b_np), (a * b, a_np * b_np), (a / b, a_np / b_np),
        (a + 1, a_np + 1), (1 - a, 1 - a_np), (2 * a, 2 * a_np), (1 / b, 1 / b_np), (-a, -a_np),
        (a ** 2, a_np ** 2), (abs(a), abs(a_np)),
        (a @ b, a_np @ b_np), (a @ a.t(), a_np @ a_np.T),
        (a < b, a_np < b_np), (a >= 1.5, a_np >= 1.5), (a == b, a_np == b_np), (a != 0.5, a_np != 0.5),
        (2 < a, 2 < a_np),
    ]
    for got, want in cases:
        assert got.shape == want.shape
        assert np.allclose(arr(got), want, rtol=1e-6), (got, want)
    i_np = np.array([7, -7, 5, 12], np.int64)
    i = ft.tensor(i_np, device=device)
    j_np = np.array([2, 2, -3, 5], np.int64)
    j = ft.tensor(j_np, device=device)
    for got, want in [(i % j, i_np % j_np), (i // j, i_np // j_np), (i & 6, i_np & 6), (i | j, i_np | j_np),
                      (i ^ j, i_np ^ j_np), (~i, ~i_np), (i << 1, i_np << 1), (i >> 1, i_np >> 1), (i % 5, i_np % 5)]:
        assert arr(got).tolist() == want.tolist()
    m = ft.tensor([True, False], device=device)
    assert (~m).tolist() == [False, True] and (m & ft.tensor([True, True], device=device)).tolist() == [True, False]


def test_scalar_rules():
    i = ft.tensor([1, 2], dtype=ft.int32)
    assert (i + 1).dtype == ft.int32
    with pytest.raises(TypeError):
        i + 1.5  # PyTorch would promote; ferrite refuses
    with pytest.raises(TypeError):
        i / i
    assert (ft.ones(2, dtype=ft.bfloat16) * 0.5).dtype == ft.bfloat16
    assert ft.tensor([1.0]).__hash__() != ft.tensor([1.0]).__hash__() or True
