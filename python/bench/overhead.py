"""Per-op overhead from Python, and the DLPack round trip's independence of size.

    python3 python/bench/overhead.py            # every library that is importable
    python3 python/bench/overhead.py --json out.json

Times `a + b` on two 1-element tensors (the cost of a call from Python: argument conversion,
validation, allocation, launch) for ferrite, NumPy and PyTorch on the CPU, and for ferrite and
PyTorch on CUDA when a GPU is there (the op is asynchronous there, as in PyTorch: the loop
measures the launch; both sides synchronize once at the end). Then ferrite -> torch -> ferrite
DLPack round trips of a 4 KiB and a 1 GiB CUDA tensor. Prints the best of `--repeat` runs of
`--number` calls each, in microseconds per call.
"""
import argparse
import json
import timeit

import ferrite as ft


def best_us(stmt, number, repeat, sync=None):
    def run():
        for _ in range(number):
            stmt()
        if sync:
            sync()

    run()  # warm-up (allocator caches, lazy initialisation)
    return min(timeit.repeat(run, number=1, repeat=repeat)) / number * 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--number", type=int, default=20000)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--json", help="write the results here too")
    args = p.parse_args()
    n, r = args.number, args.repeat
    rows = {}

    a, b = ft.ones(1), ft.ones(1)
    rows["ferrite cpu add"] = best_us(lambda: a + b, n, r)
    try:
        import numpy as np

        x, y = np.ones(1, np.float32), np.ones(1, np.float32)
        rows["numpy add"] = best_us(lambda: x + y, n, r)
    except ImportError:
        pass
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        tx, ty = torch.ones(1), torch.ones(1)
        rows["torch cpu add"] = best_us(lambda: tx + ty, n, r)
    if ft.cuda.is_available():
        ga, gb = ft.ones(1, device="cuda"), ft.ones(1, device="cuda")
        rows["ferrite cuda add"] = best_us(lambda: ga + gb, n, r, sync=lambda: ft.cuda.synchronize(0))
        if torch is not None and torch.cuda.is_available():
            ca, cb = torch.ones(1, device="cuda"), torch.ones(1, device="cuda")
            rows["torch cuda add"] = best_us(lambda: ca + cb, n, r, sync=torch.cuda.synchronize)
            for label, nbytes in (("4 KiB", 4 << 10), ("1 GiB", 1 << 30)):
                t = ft.empty(nbytes // 4, device="cuda")
                rows[f"dlpack round trip ferrite->torch->ferrite {label}"] = best_us(
                    lambda: ft.from_dlpack(torch.from_dlpack(t)), 2000, r)
                del t
            ft.cuda.empty_cache(0)

    width = max(len(k) for k in rows)
    for k, v in rows.items():
        print(f"{k:<{width}}  {v:8.3f} us")

    def ratio(num, den):
        if num in rows and den in rows:
            print(f"{num} / {den}: {rows[num] / rows[den]:.2f}")

    ratio("ferrite cpu add", "numpy add")
    ratio("ferrite cpu add", "torch cpu add")
    ratio("ferrite cuda add", "torch cuda add")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
