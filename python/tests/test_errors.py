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


@pytest.mark.parametrize("first", ["numpy", "torch"])
def test_errors_after_another_cpp_library_loaded(first):
    # A fresh process that loads NumPy or PyTorch (and with them the system's libstdc++) before
    # ferrite, then raises and catches ferrite errors, and the other way round. With a
    # libferrite that exported a static copy of the C++ runtime, the dynamic linker mixed the two
    # copies: the first error message crashed the process (SIGSEGV), and PyTorch imported after
    # ferrite aborted in its own string conversion.
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec(first) is None:
        pytest.skip(f"{first} is not installed")
    raise_errors = (
        "import ferrite as ft\n"
        "for bad in (lambda: ft.zeros(2).reshape(5), lambda: ft.ones(2) + ft.ones(2, dtype=ft.float64)):\n"
        "    try:\n"
        "        bad()\n"
        "    except ft.Error as e:\n"
        "        assert str(e), 'empty message'\n"
        "    else:\n"
        "        raise SystemExit('no error raised')\n"
        "print(ft.arange(3, dtype=ft.float32) * 2)\n"
    )
    for code in (f"import {first}\n" + raise_errors, raise_errors + f"import {first}\nprint({first}.__name__)\n"):
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr[-2000:]}"
        assert "tensor([0., 2., 4.])" in run.stdout
