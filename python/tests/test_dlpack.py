"""DLPack: zero copy both ways (pointer equality), strides kept, versioned and legacy capsules,
lifetimes (either side deleted first), and the CUDA stream handshake with PyTorch, CuPy and
JAX when they are importable."""
import ctypes
import gc
import sys

import numpy as np
import pytest

import ferrite as ft
from conftest import cuda_only

PyCapsule_IsValid = ctypes.pythonapi.PyCapsule_IsValid
PyCapsule_IsValid.restype = ctypes.c_int
PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def test_dlpack_device():
    assert ft.zeros(2).__dlpack_device__() == (1, 0)


def test_capsule_kinds():
    x = ft.arange(4)
    assert PyCapsule_IsValid(x.__dlpack__(), b"dltensor") == 1
    assert PyCapsule_IsValid(x.__dlpack__(max_version=(1, 0)), b"dltensor_versioned") == 1
    assert PyCapsule_IsValid(x.__dlpack__(max_version=(0, 8)), b"dltensor") == 1
    # An unconsumed capsule frees its context (no leak, no crash).
    for _ in range(100):
        x.__dlpack__(max_version=(1, 1))


def test_capsule_consumed_once():
    x = ft.arange(3)
    cap = x.__dlpack__()
    y = ft.from_dlpack(cap)
    assert y.data_ptr() == x.data_ptr()
    with pytest.raises(TypeError, match="capsule"):
        ft.from_dlpack(cap)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64", "bool", "complex64", "complex128"])
def test_numpy_zero_copy_both_ways(dtype):
    a = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    t = ft.from_dlpack(a)
    assert t.data_ptr() == a.ctypes.data
    assert t.shape == (3, 4) and t.dtype == dtype
    assert t.tolist() == a.tolist()
    b = np.from_dlpack(t)
    assert b.ctypes.data == t.data_ptr() and b.dtype == a.dtype
    c = t.numpy()
    assert c.ctypes.data == a.ctypes.data


def test_numpy_strides_carried():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    view = a.transpose(2, 0, 1)[1:, :, ::2]
    t = ft.from_dlpack(view)
    assert t.strides == tuple(s // 4 for s in view.strides)
    assert t.data_ptr() == view.ctypes.data
    assert t.tolist() == view.tolist()
    x = ft.arange(24, dtype=ft.float64).reshape(4, 6)[1:, ::3]
    n = x.numpy()
    assert n.strides == tuple(s * 8 for s in x.strides) and n.ctypes.data == x.data_ptr()
    assert n.tolist() == x.tolist()


def test_writes_are_shared():
    a = np.zeros(4, np.float32)
    t = ft.from_dlpack(a)
    t[1:3] = 7
    t += 1
    assert a.tolist() == [1, 8, 8, 1]
    x = ft.zeros(3)
    n = x.numpy()
    n[0] = 5
    assert x.tolist() == [5, 0, 0]


def test_lifetime_producer_deleted_first():
    a = np.arange(1000, dtype=np.float64)
    ref = sys.getrefcount(a)
    t = ft.from_dlpack(a)
    assert sys.getrefcount(a) > ref  # NumPy's capsule keeps the array alive
    del a
    gc.collect()
    assert t[999].item() == 999.0
    x = ft.arange(1000, dtype=ft.float32)
    n = np.from_dlpack(x)
    del x
    gc.collect()
    assert n[999] == 999 and n.sum() == sum(range(1000))


def test_lifetime_consumer_deleted_first():
    a = np.arange(10, dtype=np.int64)
    base = sys.getrefcount(a)
    t = ft.from_dlpack(a)
    v = t[2:]
    del t
    gc.collect()
    assert sys.getrefcount(a) > base  # the view still holds the producer's memory
    del v
    gc.collect()
    assert sys.getrefcount(a) == base  # the producer's deleter ran
    x = ft.arange(10)
    n = np.from_dlpack(x)
    del n
    gc.collect()
    assert x.tolist() == list(range(10))


def test_from_dlpack_refusals():
    with pytest.raises(TypeError):
        ft.from_dlpack(np.arange(3, dtype=np.uint8))
    with pytest.raises(TypeError, match="__dlpack__"):
        ft.from_dlpack([1, 2])
    with pytest.raises(BufferError):
        ft.zeros(2).__dlpack__(dl_device=(2, 0), copy=False)
    with pytest.raises(ValueError):
        ft.zeros(2).__dlpack__(stream=5)


def test_bfloat16_roundtrip_through_capsule():
    x = ft.tensor([1.5, -2.0], dtype=ft.bfloat16)
    y = ft.from_dlpack(x.__dlpack__(max_version=(1, 0)))
    assert y.dtype == ft.bfloat16 and y.data_ptr() == x.data_ptr() and y.tolist() == [1.5, -2.0]


# ---- other libraries (the GPU machine has them) ----

def test_torch_cpu_zero_copy():
    torch = pytest.importorskip("torch")
    a = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()
    t = ft.from_dlpack(a)
    assert t.data_ptr() == a.data_ptr() and t.strides == a.stride() and t.tolist() == a.tolist()
    x = ft.arange(6, dtype=ft.bfloat16).reshape(2, 3)
    b = torch.from_dlpack(x)
    assert b.data_ptr() == x.data_ptr() and b.dtype == torch.bfloat16 and b.tolist() == x.tolist()
    del x
    gc.collect()
    assert b.sum().item() == 15


@cuda_only()
def test_torch_cuda_zero_copy_and_lifetime():
    torch = pytest.importorskip("torch")
    a = torch.arange(1 << 20, dtype=torch.float32, device="cuda").reshape(1024, 1024)[:, 1::2]
    t = ft.from_dlpack(a)
    assert t.device == "cuda:0" and t.data_ptr() == a.data_ptr() and t.strides == a.stride()
    del a
    torch.cuda.empty_cache()
    assert t[3, 5].item() == 3 * 1024 + 11
    x = ft.arange(1 << 20, dtype=ft.float32, device="cuda")
    b = torch.from_dlpack(x)
    assert b.data_ptr() == x.data_ptr()
    del x
    gc.collect()
    assert b[-1].item() == (1 << 20) - 1
    del b
    gc.collect()


@cuda_only()
def test_torch_busy_producer_stream():
    """ferrite writes on its stream after a long kernel; torch reads on its own stream
    without a host sync: the event handshake must order them."""
    torch = pytest.importorskip("torch")
    n = 1 << 24
    x = ft.zeros(n, device="cuda")
    big = ft.ones(4096, 4096, device="cuda")
    for _ in range(4):
        big = big @ big * (1.0 / 4096)  # keeps ferrite's stream busy
    x += 1  # enqueued behind the products
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = torch.from_dlpack(x)  # torch passes s; ferrite makes s wait
        total = y.sum()
        # Read on s too: item() outside the block would run on torch's default stream, which
        # PyTorch does not order after s (its pool streams are non-blocking), and under
        # compute-sanitizer the sum was still running when that read happened.
        assert total.item() == n
    # The other way: torch's stream busy, ferrite imports (passing its stream) and reads.
    with torch.cuda.stream(s):
        m = torch.ones(4096, 4096, device="cuda")
        for _ in range(4):
            m = m @ m / 4096
        z = torch.full((n,), 2.0, device="cuda")
        z += m[0, 0] - 1  # still 2, written behind the products
        w = ft.from_dlpack(z)
    assert ft.sum(w).item() == 2.0 * n


@cuda_only()
def test_dlpack_roundtrip_is_o1():
    torch = pytest.importorskip("torch")
    import time

    def roundtrip_time(nbytes):
        x = ft.empty(nbytes // 4, device="cuda")
        t0 = time.perf_counter()
        for _ in range(100):
            ft.from_dlpack(torch.from_dlpack(x))
        return (time.perf_counter() - t0) / 100

    small, large = roundtrip_time(4 << 10), roundtrip_time(1 << 30)
    assert large < 10 * small + 50e-6, (small, large)


@cuda_only()
def test_cupy_zero_copy():
    cp = pytest.importorskip("cupy")
    a = cp.arange(10, dtype=cp.float64)
    t = ft.from_dlpack(a)
    assert t.data_ptr() == a.data.ptr and t.tolist() == a.tolist()
    x = ft.arange(10, dtype=ft.float32, device="cuda")
    b = cp.from_dlpack(x)
    assert b.data.ptr == x.data_ptr()
    del x
    assert float(b.sum()) == 45.0


def test_jax_zero_copy():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    dev = "cuda" if ft.cuda.is_available() and any(d.platform == "gpu" for d in jax.devices()) else "cpu"
    x = ft.arange(8, dtype=ft.float32, device=dev)
    j = jnp.from_dlpack(x)
    assert j.unsafe_buffer_pointer() == x.data_ptr()
    t = ft.from_dlpack(j)
    assert t.data_ptr() == j.unsafe_buffer_pointer() and t.tolist() == list(range(8))
