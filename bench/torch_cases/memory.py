"""Memory family: device copy and host <-> device transfers."""
import torch

from . import Case

TARGETS = {
    "copy_f32": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
    "upload_staged": ("≥ 80% of pinned memcpy", lambda f, t, x: f >= 0.8 * x["upload_pinned_memcpy"]),
    "download_staged": ("≥ 80% of pinned memcpy", lambda f, t, x: f >= 0.8 * x["download_pinned_memcpy"]),
}


def cases(quick):
    dev = torch.device("cuda")
    n = (1 << 22) if quick else (1 << 28)
    g = torch.Generator(device=dev).manual_seed(0)
    x32 = torch.rand(n, device=dev, generator=g) * 4 - 2
    host = torch.full((n,), 1.5)
    pinned = torch.empty(n, pin_memory=True).fill_(1.0)
    on_gpu = torch.empty(n, device=dev)
    nf = float(n)
    return [
        Case("copy_f32", lambda: x32.clone(), bytes=8 * nf),
        Case("upload_staged", lambda: host.to(dev), bytes=4 * nf, host_timed=True),
        Case("upload_pinned_memcpy", lambda: on_gpu.copy_(pinned), bytes=4 * nf, host_timed=True),
        Case("download_staged", lambda: on_gpu.to("cpu"), bytes=4 * nf, host_timed=True),
        Case("download_pinned_memcpy", lambda: pinned.copy_(on_gpu), bytes=4 * nf, host_timed=True),
    ]
