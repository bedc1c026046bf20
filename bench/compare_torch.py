#!/usr/bin/env python3
"""Runs `ferrite bench` and the same cases in PyTorch on the same GPU, in one run, and
prints the table: achieved GB/s of each, the speed ratio (PyTorch time / ferrite time, so
above 1 means ferrite is faster) and ferrite's target from docs/performance.md.

usage: compare_torch.py FERRITE_BINARY [--out DIR] [--quick]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CEILING_GBPS = 4300.0  # perf.md: practical HBM ceiling of the H200
BACK_TO_BACK = 5  # calls per timed sample, as in bench/bench_main.cpp

# case -> (target description, check(ferrite_gbps, torch_gbps, extra) -> bool)
TARGETS = {
    "copy_f32": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
    "add_f32": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
    "add_bf16": ("≥ 4100 GB/s, ≥ 0.97×", lambda f, t, x: f >= 4100 and f >= 0.97 * t),
    "add_row_broadcast_f32": ("≥ 4000 GB/s", lambda f, t, x: f >= 4000),
    "cast_f32_to_bf16": ("≥ 4000 GB/s", lambda f, t, x: f >= 4000),
    "relu_f32": ("≥ 4100 GB/s", lambda f, t, x: f >= 4100),
    "upload_staged": ("≥ 80% of pinned memcpy", lambda f, t, x: f >= 0.8 * x["upload_pinned_memcpy"]),
    "download_staged": ("≥ 80% of pinned memcpy", lambda f, t, x: f >= 0.8 * x["download_pinned_memcpy"]),
}


def run_ferrite(binary, json_path, quick):
    cmd = [binary, "bench", "--json", json_path] + (["--quick"] if quick else [])
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    with open(json_path) as f:
        return {c["name"]: c for c in json.load(f)["cases"]}


def torch_cases(quick):
    import torch

    dev = torch.device("cuda")
    n = (1 << 22) if quick else (1 << 28)
    rows = 1024 if quick else 65536
    g = torch.Generator(device=dev).manual_seed(0)
    x32 = torch.rand(n, device=dev, generator=g) * 4 - 2
    y32 = torch.rand(n, device=dev, generator=g) * 4 - 2
    x16, y16 = x32.bfloat16(), y32.bfloat16()
    m = torch.rand(rows, 4096, device=dev, generator=g)
    row = torch.rand(4096, device=dev, generator=g)
    host = torch.full((n,), 1.5)
    pinned = torch.empty(n, pin_memory=True).fill_(1.0)
    on_gpu = torch.empty(n, device=dev)
    nf = float(n)
    return [
        ("copy_f32", 8 * nf, lambda: x32.clone(), False),
        ("add_f32", 12 * nf, lambda: x32 + y32, False),
        ("add_bf16", 6 * nf, lambda: x16 + y16, False),
        ("add_row_broadcast_f32", 8.0 * rows * 4096 + 4 * 4096, lambda: m + row, False),
        ("cast_f32_to_bf16", 6 * nf, lambda: x32.to(torch.bfloat16), False),
        ("relu_f32", 8 * nf, lambda: torch.relu(x32), False),
        ("upload_staged", 4 * nf, lambda: host.to(dev), True),
        ("upload_pinned_memcpy", 4 * nf, lambda: on_gpu.copy_(pinned), True),
        ("download_staged", 4 * nf, lambda: on_gpu.to("cpu"), True),
        ("download_pinned_memcpy", 4 * nf, lambda: pinned.copy_(on_gpu), True),
    ]


def time_torch(fn, host_timed, repeats=20):
    import torch

    for _ in range(1 if host_timed else 3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(min(repeats, 5) if host_timed else repeats):
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
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    ferrite = run_ferrite(args.ferrite, os.path.join(args.out, "bench.json"), args.quick)
    try:
        import torch

        assert torch.cuda.is_available()
    except Exception as e:  # noqa: BLE001
        print(f"PyTorch with CUDA is not available here ({e}); ferrite's numbers only")
        return 0

    torch_gbps, ferrite_gbps = {}, {}
    for name, nbytes, fn, host_timed in torch_cases(args.quick):
        ms = time_torch(fn, host_timed)
        torch_gbps[name] = nbytes / (ms * 1e-3) / 1e9
        if name in ferrite:
            ferrite_gbps[name] = ferrite[name]["gbps"]

    lines = [
        "| case | shape | ferrite GB/s | % of 4.3 TB/s | PyTorch GB/s | ratio (× PyTorch) | target | met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    failures = 0
    for name, f in ferrite_gbps.items():
        t = torch_gbps[name]
        target, check = TARGETS.get(name, ("baseline", None))
        met = "" if check is None else ("yes" if check(f, t, ferrite_gbps) else "NO")
        failures += met == "NO"
        lines.append(
            f"| {name} | {ferrite[name]['shape']} | {f:.1f} | {100 * f / CEILING_GBPS:.0f}% | {t:.1f} | {f / t:.3f} | {target} | {met} |"
        )
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(args.out, "compare_torch.md"), "w") as out:
        out.write(table + "\n")
    print(f"{failures} target(s) missed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
