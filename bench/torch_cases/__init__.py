"""PyTorch twins of ferrite's benchmark cases, one module per op family.

Each module defines
  TARGETS: {case name: (target text, check(f, t, rates) -> bool)}, where f and t are
           ferrite's and PyTorch's rate in the case's unit (GB/s, or TFLOP/s for cases
           with flops) and rates maps every ferrite case name to its rate;
  cases(quick): a list of Case, named exactly as in bench/cases_<family>.cpp.
"""
from collections import namedtuple

# bytes or flops: the amount the rate divides (flops > 0 means TFLOP/s, else GB/s).
Case = namedtuple("Case", "name fn bytes flops host_timed", defaults=(0.0, 0.0, False))


def hashed(shape, dtype, seed, device):
    """bench/bench_main.cpp's BenchContext::hashed: values in [-1, 1) from an integer hash of
    each element's (row-major) index and `seed`, so that both libraries time the same problem
    where the time depends on the values (iterative solvers). Exact int64 steps, then one cast."""
    import math
    import torch
    mask, mul = 0xFFFFFFFF, 0x045D9F3B
    x = (torch.arange(math.prod(shape), device=device, dtype=torch.int64) + seed * 0x9E3779B9) & mask
    x = (x * mul) & mask
    x ^= x >> 16
    x = (x * mul) & mask
    x ^= x >> 16
    return (x.to(torch.float64) * 2.0 ** -31 - 1.0).to(dtype).reshape(shape)
