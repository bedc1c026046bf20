"""ferrite::Error kinds become Python exceptions with ferrite's message."""
import pytest

import ferrite as ft


def test_error_classes():
    assert issubclass(ft.DTypeMismatchError, TypeError) and issubclass(ft.DTypeMismatchError, ft.Error)
    assert issubclass(ft.ShapeMismatchError, ValueError)
    assert issubclass(ft.IndexOutOfRangeError, IndexError)
    assert issubclass(ft.UnsupportedError, NotImplementedError)
    assert issubclass(ft.OutOfMemoryError, MemoryError)
    for e in (ft.InvalidArgumentError, ft.DeviceMismatchError, ft.CudaError, ft.LibraryError, ft.NumericalError):
        assert issubclass(e, RuntimeError) and issubclass(e, ft.Error)


def test_messages():
    with pytest.raises(ft.DTypeMismatchError, match=r"add: operand dtypes differ \(\[2\] F32 cpu, \[2\] F64 cpu\)"):
        ft.ones(2) + ft.ones(2, dtype=ft.float64)
    with pytest.raises(ValueError, match=r"do not broadcast"):
        ft.ones(2, 3) + ft.ones(4)
    with pytest.raises(IndexError, match="index_select"):
        ft.index_select(ft.ones(3), 0, ft.tensor([5]))
    with pytest.raises(NotImplementedError):
        ft.exp(ft.tensor([1, 2]))
    with pytest.raises(ValueError, match="reshape"):
        ft.ones(6).reshape(4, 2)
    with pytest.raises(ft.Error):
        ft.zeros(2, device="cuda:7")
    with pytest.raises(TypeError, match="device"):  # not a device string: no overload matches
        ft.zeros(2, device="tpu")


def test_python_argument_errors():
    with pytest.raises(TypeError):
        ft.zeros("a")
    with pytest.raises(TypeError):
        ft.ones(2)["x"]
