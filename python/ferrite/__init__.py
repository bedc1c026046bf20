"""ferrite: tensors on the CPU and CUDA GPUs, with PyTorch's names (docs/python.md).

Everything is defined by the extension ferrite._ferrite; this file re-exports it and adds
the few conveniences written in Python (Tensor.numpy, nn.functional).
"""
import builtins as _builtins
import sys as _sys

from . import _ferrite
from ._ferrite import *  # noqa: F401,F403
from ._ferrite import Tensor, cuda, fft, linalg, nn, optim, random, return_types, sparse  # noqa: F401

# Submodules of the extension, importable as `import ferrite.cuda`, `import ferrite.linalg`, ...
for _name in ("cuda", "nn", "linalg", "fft", "sparse", "random", "optim", "return_types"):
    _sys.modules[__name__ + "." + _name] = getattr(_ferrite, _name)
del _name

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

    for name in ("linear", "conv2d", "avg_pool2d", "adaptive_avg_pool2d"):
        setattr(F, name, getattr(_ferrite.nn, name))

    def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        r = _ferrite.nn.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)
        return (r.values, r.indices) if return_indices else r.values

    def dropout(input, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return input
        out = _ferrite.nn.dropout(input, p).output
        return input.copy_(out) if inplace else out

    def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                      reduction="mean", label_smoothing=0.0):
        if weight is not None or size_average is not None or reduce is not None:
            raise _ferrite.UnsupportedError(
                "cross_entropy: weight=, size_average= and reduce= are not implemented (use reduction=)"
            )
        return _ferrite.nn.cross_entropy(input, target, ignore_index=ignore_index, reduction=reduction,
                                         label_smoothing=label_smoothing)

    def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                     scale=None, enable_gqa=False):
        # ferrite always does grouped-query attention when the key heads divide the query heads.
        # dropout_p draws from the device's default generator, as PyTorch's does.
        return _ferrite.nn.scaled_dot_product_attention(query, key, value, attn_mask, is_causal, scale=scale,
                                                        dropout_p=dropout_p).out

    for f in (layer_norm, rms_norm, embedding, max_pool2d, dropout, cross_entropy,
              scaled_dot_product_attention):
        f.__module__ = F.__name__
        setattr(F, f.__name__, f)
    return F


nn.functional = _make_functional()
_sys.modules[__name__ + ".nn.functional"] = nn.functional
