#!/usr/bin/env python3
"""Runs `ferrite bench` and the same cases in PyTorch on the same GPU, in one run, and
prints the table: achieved GB/s (TFLOP/s for matrix products) of each, the speed ratio (PyTorch time / ferrite time, so
above 1 means ferrite is faster) and ferrite's target from docs/performance.md.

The PyTorch side of each case lives in bench/torch_cases/<family>.py.

usage: compare_torch.py FERRITE_BINARY [--out DIR] [--quick] [--filter NAMES]
"""
import argparse
import fnmatch
import importlib
import json
import os
import pkgutil
import statistics
import subprocess
import sys
import time

CEILING_GBPS = 4300.0  # perf.md: practical HBM ceiling of the H200
BACK_TO_BACK = 5  # calls per timed sample, as in bench/bench_main.cpp

def run_ferrite(binary, json_path, quick, case_filter):
    cmd = [binary, "bench", "--json", json_path] + (["--quick"] if quick else [])
    if case_filter:
        cmd += ["--filter", case_filter]
    print("$", " ".join(cmd), flush=True)
    result = subprocess.run(cmd)
    if result.returncode != 0:
        sys.exit(f"compare_torch: ferrite bench failed (exit status {result.returncode})")
    with open(json_path) as f:
        return {c["name"]: c for c in json.load(f)["cases"]}


def filter_patterns(case_filter):
    """`--filter a,b*`: the same rule as `ferrite bench --filter` (bench/bench_main.cpp): each
    comma-separated pattern is an exact case name or a glob matched against the whole name."""
    return [p for p in case_filter.split(",") if p]


def wanted(name, patterns):
    return not patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def rate(case, ms):
    """A case's rate at `ms` per call: TFLOP/s for products, GB/s otherwise (ferrite bench's units)."""
    if case["flops"]:
        return case["flops"] / (ms * 1e-3) / 1e12
    return case["bytes"] / (ms * 1e-3) / 1e9


def time_torch(fn, host_timed, repeats=20):
    import torch

    for _ in range(1 if host_timed else 3):
        fn()
    torch.cuda.synchronize()
    times = []
    # Host-timed: as bench/bench_main.cpp, 15 samples, but no more than about a second's worth
    # beyond the first 5.
    for i in range(15 if host_timed else repeats):
        if host_timed and i >= 5 and sum(times) >= 1000:
            break
        if host_timed:
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
        else:
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(BACK_TO_BACK):
                fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) / BACK_TO_BACK)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ferrite")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--filter", default="",
                    help="comma-separated case names or globs (softmax*, *_bf16), as `ferrite bench --filter`")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    patterns = filter_patterns(args.filter)
    ferrite = run_ferrite(args.ferrite, os.path.join(args.out, "bench.json"), args.quick, args.filter)
    try:
        import torch

        assert torch.cuda.is_available()
    except Exception as e:  # noqa: BLE001
        print(f"PyTorch with CUDA is not available here ({e}); ferrite's numbers only")
        return 0

    # Each family's module builds its tensors, is timed, then released before the next one.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    families = sorted(
        m.name for m in pkgutil.iter_modules([os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_cases")])
    )
    # Only the modules of the families ferrite ran (a module named after a family, or
    # family_*, e.g. sparse_structured for "sparse"): the others' tensors, some gigabytes and
    # some built on the host, are not made. An unfiltered run makes them all.
    ran = {c.get("family") for c in ferrite.values()}
    targets, torch_ms = {}, {}
    for family in families:
        module = importlib.import_module(f"torch_cases.{family}")
        targets.update(module.TARGETS)
        if patterns and None not in ran and not any(family == f or family.startswith(f + "_") for f in ran):
            continue
        # ferrite ran the cases the filter picked; PyTorch times the same ones.
        picked = [c for c in module.cases(args.quick) if wanted(c.name, patterns) and c.name in ferrite]
        for case in picked:
            torch_ms[case.name] = time_torch(case.fn, case.host_timed)
            # One line per case as it is timed, so a run cut off early still shows the ratios
            # it reached (the table comes at the end).
            ours = ferrite[case.name]["ms"]
            print(f"torch {case.name:40s} {torch_ms[case.name]:9.4f} ms  ferrite {ours:9.4f} ms  "
                  f"ratio {torch_ms[case.name] / ours:6.3f}", flush=True)
        del picked
        torch.cuda.empty_cache()

    ferrite_rates = {name: rate(c, c["ms"]) for name, c in ferrite.items()}
    lines = [
        "| case | shape | ferrite | % of ceiling | PyTorch | ratio (× PyTorch) | target | met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    failures = 0
    for name, c in ferrite.items():
        f = ferrite_rates[name]
        unit = "TFLOP/s" if c["flops"] else "GB/s"
        ceiling = "" if c["flops"] else f"{100 * f / CEILING_GBPS:.0f}%"
        if name in torch_ms:
            t = rate(c, torch_ms[name])
            torch_text, ratio = f"{t:.1f} {unit}", f"{torch_ms[name] / c['ms']:.3f}"
        else:
            t, torch_text, ratio = float("nan"), "-", "-"
        target, check = targets.get(name, ("baseline", None))
        verdict = None if check is None else check(f, t, ferrite_rates)
        met = "" if check is None else ("not judged: its reference case did not run" if verdict is None
                                        else "yes" if verdict else "NO")
        failures += met == "NO"
        lines.append(f"| {name} | {c['shape']} | {f:.1f} {unit} | {ceiling} | {torch_text} | {ratio} | {target} | {met} |")
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(args.out, "compare_torch.md"), "w") as out:
        out.write(table + "\n")
    print(f"{failures} target(s) missed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
