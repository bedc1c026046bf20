#!/usr/bin/env python3
"""Two `ferrite bench --json` runs side by side: each case's rate before and after, their
ratio, and the cases that got slower by more than a threshold (issue 12's "no op gets slower"
table). Cases present in one run only are listed apart. The run's own spread is what the
threshold absorbs: two runs of the same tree on an H200 differ by up to about 3% for
memory-bound cases, so the default flags losses beyond that.

    python3 bench/compare_runs.py before.json after.json [--threshold 0.03] [--out table.md]

Exit status 0 always (a report, not a test); the last line counts the flagged cases.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_torch  # noqa: E402  (the rate rule, shared)


def load(path):
    with open(path) as f:
        return {c["name"]: c for c in json.load(f)["cases"]}


def rate_and_unit(case):
    return compare_torch.rate(case, case["ms"]), "TFLOP/s" if case["flops"] else "GB/s"


def compare(before, after, threshold):
    lines = [
        "| case | shape | before | after | after / before | |",
        "|---|---|---|---|---|---|",
    ]
    slower = []
    for name in sorted(set(before) & set(after)):
        b, a = before[name], after[name]
        rb, unit = rate_and_unit(b)
        ra, _ = rate_and_unit(a)
        ratio = ra / rb if rb > 0 else float("nan")
        flag = ""
        if ratio < 1.0 - threshold:
            flag = "**slower**"
            slower.append((name, ratio))
        lines.append(f"| {name} | {a['shape']} | {rb:.1f} {unit} | {ra:.1f} {unit} | {ratio:.3f} | {flag} |")
    only_before = sorted(set(before) - set(after))
    only_after = sorted(set(after) - set(before))
    if only_before:
        lines.append("")
        lines.append("Only in the first run: " + ", ".join(only_before))
    if only_after:
        lines.append("")
        lines.append("Only in the second run: " + ", ".join(only_after))
    lines.append("")
    common = len(set(before) & set(after))
    lines.append(f"{common} cases in both runs; {len(slower)} slower by more than {100 * threshold:.0f}%"
                 + (": " + ", ".join(f"{n} ({r:.3f})" for n, r in slower) if slower else ""))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--threshold", type=float, default=0.03, help="flag cases slower by more than this fraction")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args()
    table = compare(load(args.before), load(args.after), args.threshold)
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
