"""FFT family (issue #14): the PyTorch twins of bench/cases_fft.cpp."""
import torch

from . import Case


def _at_least(ratio):
    return (f"≥ {ratio:.2f}× PyTorch", lambda f, t, x: f >= ratio * t)


TARGETS = {
    "fft_c2c_c64": _at_least(1.0),
    "rfft_f32": _at_least(1.0),
    "fft2_c64": _at_least(1.0),
    "fftn_c64": _at_least(1.0),
    "fft_prime_c64": _at_least(1.0),
    "fft_dim0_c64": _at_least(1.0),
}


def cases(quick):
    dev = torch.device("cuda")
    rows, length, square = (64, 256, 128) if quick else (16384, 4096, 4096)
    cube, prime = (16, 257) if quick else (256, 4099)
    g = torch.Generator(device=dev).manual_seed(0)

    def rand(*shape):
        return torch.rand(*shape, device=dev, generator=g) * 4 - 2

    c2c = rand(rows, length).to(torch.complex64)
    real = rand(rows, length)
    grid = rand(square, square).to(torch.complex64)
    vol = rand(cube, cube, cube).to(torch.complex64)
    primes = rand(square, prime).to(torch.complex64)
    return [
        Case("fft_c2c_c64", lambda: torch.fft.fft(c2c), bytes=2.0 * rows * length * 8),
        Case("rfft_f32", lambda: torch.fft.rfft(real), bytes=rows * length * 4.0 + rows * (length // 2 + 1) * 8.0),
        Case("fft2_c64", lambda: torch.fft.fft2(grid), bytes=2.0 * square * square * 8),
        Case("fftn_c64", lambda: torch.fft.fftn(vol), bytes=2.0 * cube ** 3 * 8),
        Case("fft_prime_c64", lambda: torch.fft.fft(primes), bytes=2.0 * square * prime * 8),
        Case("fft_dim0_c64", lambda: torch.fft.fft(grid, dim=0), bytes=2.0 * square * square * 8),
    ]
