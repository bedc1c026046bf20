"""Shared fixtures: the devices to run on (the CPU, and cuda:0 when ferrite sees a GPU)."""
import os

import pytest

# JAX takes 75% of GPU memory at its first GPU use unless told otherwise; the tests share the
# GPU with ferrite and PyTorch in one process.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import ferrite

DEVICES = ["cpu"] + (["cuda"] if ferrite.cuda.is_available() else [])


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def cuda_only():
    return pytest.mark.skipif(not ferrite.cuda.is_available(), reason="no CUDA device visible to ferrite")
