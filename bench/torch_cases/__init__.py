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
