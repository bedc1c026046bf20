"""ferrite: tensors on the CPU and CUDA GPUs, with PyTorch's names (docs/python.md).

Everything is defined by the extension ferrite._ferrite; this file re-exports it and adds
the few conveniences written in Python (Tensor.numpy, nn.functional).
"""
import builtins as _builtins
import sys as _sys

from . import _ferrite
from ._ferrite import *  # noqa: F401,F403
from ._ferrite import Tensor, cuda, nn  # noqa: F401

# Submodules of the extension, importable as `import ferrite.cuda`.
_sys.modules[__name__ + ".cuda"] = cuda
_sys.modules[__name__ + ".nn"] = nn

__version__ = "0.1.0"

# PyTorch's dtype names that shadow Python builtins (kept out of the extension so that its
# stub can use the builtins).
bool = bool_  # noqa: A001,F405
float = float32  # noqa: A001,F405
double = float64  # noqa: F405
half = float16  # noqa: F405
int = int32  # noqa: A001,F405
long = int64  # noqa: F405
cfloat = complex64  # noqa: F405
cdouble = complex128  # noqa: F405


def _numpy(self):
    """A NumPy array sharing this CPU tensor's memory (through DLPack, strides kept).

    Like torch.Tensor.numpy: a CUDA tensor must be copied first (.cpu()); bfloat16 has no
    NumPy dtype (convert with .float()).
    """
    import numpy as np

    if self.is_cuda:
        raise TypeError(
            "numpy(): can't convert a cuda tensor to numpy; use .cpu() to copy it to the host first"
        )
    return np.from_dlpack(self)


Tensor.numpy = _numpy
Tensor.__array__ = lambda self, dtype=None, copy=None: (
    _numpy(self) if dtype is None else _numpy(self).astype(dtype)
)


def _make_functional():
    """ferrite.nn.functional: torch.nn.functional's signatures over ferrite's ops."""
    import types

    F = types.ModuleType(__name__ + ".nn.functional", "torch.nn.functional's signatures over ferrite's ops.")
    for name in ("relu", "gelu", "silu", "elu", "mish", "sigmoid", "tanh", "softmax", "log_softmax"):
        setattr(F, name, getattr(_ferrite, name))

    def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
        shape = (normalized_shape,) if isinstance(normalized_shape, _builtins.int) else tuple(normalized_shape)
        if len(shape) != 1 or shape[0] != input.shape[-1]:
            raise ValueError(
                f"layer_norm: ferrite normalises over the last dim only; normalized_shape {shape} "
                f"does not match input.shape[-1:] ({input.shape[-1]},)"
            )
        return _ferrite.layer_norm(input, weight, bias, eps)[0]

    def rms_norm(input, normalized_shape, weight=None, eps=1e-6):
        return _ferrite.rms_norm(input, weight, 1e-6 if eps is None else eps)[0]

    def embedding(input, weight):
        return _ferrite.nn.embedding(weight, input)

    def linear(input, weight, bias=None):
        y = _ferrite.matmul(input, weight, transpose_b=True)
        return y if bias is None else y + bias

    for f in (layer_norm, rms_norm, embedding, linear):
        f.__module__ = F.__name__
        setattr(F, f.__name__, f)
    return F


nn.functional = _make_functional()
_sys.modules[__name__ + ".nn.functional"] = nn.functional
