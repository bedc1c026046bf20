"""The op table of optable.py run by ferrite and by PyTorch on the same inputs, on each device
(skipped where PyTorch is not importable)."""
import numpy as np
import pytest

import ferrite as ft
from optable import OPS

torch = pytest.importorskip("torch")
# ferrite computes float32 convolutions and products in full float32 unless told otherwise;
# PyTorch's cuDNN default (TF32) would make the reference the less precise side.
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
# The math attention path (full float32), not flash / memory-efficient / cuDNN kernels.
for _backend in ("flash", "mem_efficient", "cudnn"):
    getattr(torch.backends.cuda, f"enable_{_backend}_sdp")(False)


def _out(x):
    return x[0] if isinstance(x, (tuple, list)) and not hasattr(x, "shape") else x


@pytest.mark.parametrize("entry", OPS, ids=[e[0] for e in OPS])
def test_op_matches_torch(entry, device):
    name, inputs, call, _ = entry
    tdev = "cuda" if device == "cuda" else "cpu"
    got = _out(call(ft, *[ft.tensor(a, device=device) for a in inputs]))
    want = _out(call(torch, *[torch.from_numpy(np.ascontiguousarray(a)).to(tdev) for a in inputs]))
    assert tuple(got.shape) == tuple(want.shape), name
    w = want.cpu()
    g = torch.from_dlpack(got.cpu())  # zero copy into torch for the comparison
    if w.dtype in (torch.int64, torch.int32, torch.bool):
        assert torch.equal(g.to(w.dtype), w), name
    else:
        torch.testing.assert_close(g.to(w.dtype), w, rtol=2e-5, atol=2e-5, msg=name)


def test_device_objects_interoperate():
    assert ft.zeros(2, device=torch.device("cpu")).device == "cpu"
    assert ft.zeros(2, dtype=torch.float64).dtype == ft.float64
