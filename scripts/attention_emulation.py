"""What the attention host emulations share (attention-tf32x1-emulation.py,
attention-half-mma-emulation.py, attention-half-mma-fwd-emulation.py): the roundings, the
suite's CUDA-vs-CPU tolerance, the backward up to the intermediates the kernels round, its
conformance cases and unit-test shapes, the half-precision bound's constants, and the command
line. Imported by those scripts (their own
folder is on sys.path when run as python3 scripts/<name>.py); not run by itself.
"""
import argparse

import numpy as np

# tests/conformance/attention_entries.cpp, backend_tol: (rtol, atol) of the CUDA-vs-CPU comparison.
CONFORMANCE_TOL = {"F16": (5e-3, 2e-3), "BF16": (3e-2, 1e-2)}

# The F16/BF16 backward cases of attention_entries.cpp that cuDNN leaves to the route:
# (name, B, Hq, Hkv, Sq, Sk, D, causal).
BACKWARD_CONFORMANCE_CASES = [
    ("offset_grads_d64", 1, 2, 2, 33, 33, 64, True), ("tiled_keys0_d128", 1, 2, 2, 20, 0, 128, False),
    ("causal_sq_lt_sk_gqa", 1, 4, 2, 5, 70, 128, True),
    ("tiled_causal_sq_gt_sk_gqa_d64", 2, 4, 2, 130, 77, 64, True),
    ("cudnn_causal_gqa_d128", 2, 4, 1, 64, 64, 128, True)]

# The backward shapes of the GPU unit tests with data (attention_test_problems.hpp's
# backward_problems, less its Sk = 0 and Sq = 0 ones): (B, Hq, Hkv, Sq, Sk, D, causal).
BACKWARD_UNIT_PROBLEMS = [
    (2, 2, 2, 77, 77, 64, False), (1, 3, 3, 130, 130, 128, True), (2, 4, 2, 130, 77, 64, True),
    (1, 4, 1, 77, 200, 128, False), (1, 2, 2, 40, 130, 64, True), (1, 2, 2, 300, 300, 128, True),
    (1, 4, 2, 517, 333, 128, False), (1, 2, 2, 1000, 1000, 128, True), (1, 6, 2, 200, 330, 64, True),
    (1, 8, 2, 256, 256, 128, True)]


def tf32(x):
    """Round to nearest TF32, ties to even (cvt.rn.tf32.f32), via F32."""
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return (((b + 0xFFF + ((b >> 13) & 1)) & 0xFFFFE000).astype(np.uint32)).view(np.float32).astype(np.float64)


def to_dtype(x, dt):
    """Round to nearest even in F16 (numpy's, subnormals included) or BF16 (from F32 bits)."""
    if dt == "F16":
        return x.astype(np.float16).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        return (((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)).view(np.float32).astype(np.float64)


def backward_products(q, k, v, go, causal, round_out=None, bias=None):
    """The attention backward (float64) up to its F32 intermediates, for the emulations to round:
    (p32, ds32, live, grads). p32, ds32: P and dS rounded to F32 as the kernels hold them; live:
    1.0 where P is a visible key of a row with any; grads(P, dS, absolute=False): dQ = scale dS K,
    dK = scale dS^T Q, dV = P^T dO (summed over each key/value head's query heads) of any stand-ins
    for P and dS (the emulated roundings; |.| for term sums, with absolute=True taking |q|, |dO|,
    |k| too). round_out: the forward's out as the backward reads it (delta = dO . out); bias: an
    additive mask broadcast to [B, Hq, Sq, Sk] (-inf hides; a Bool mask as 0 / -inf); a row with
    every score hidden has P = 0."""
    B, Hq, Sq, D = q.shape
    Hkv, Sk = k.shape[1], k.shape[2]
    g = Hq // Hkv
    K, V = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    sc = 1 / np.sqrt(D)
    s = sc * q @ K.transpose(0, 1, 3, 2)
    visible = np.ones((Sq, Sk), dtype=bool)
    if causal:  # top-left: key j hidden from query i when j > i
        visible = np.arange(Sk)[None, :] <= np.arange(Sq)[:, None]
        s = np.where(visible, s, -np.inf)
    if bias is not None:
        # The score rounded to F32 as the kernels (and the forward) form it: s scale + m, one FFMA.
        visible = visible & (bias != -np.inf)
        s = np.where(visible, (s + np.where(visible, bias, 0)).astype(np.float32).astype(np.float64), -np.inf)
    mx = s.max(-1, keepdims=True)
    dead = mx == -np.inf
    with np.errstate(invalid="ignore"):
        p = np.where(visible, np.exp(s - np.where(dead, 0, mx)), 0.0)
    p /= np.where(dead, 1.0, p.sum(-1, keepdims=True))
    out = p @ V
    if round_out:
        out = round_out(out)
    delta = (go * out).sum(-1, keepdims=True)
    ds = p * (go @ V.transpose(0, 1, 3, 2) - delta)
    p32, ds32 = p.astype(np.float32).astype(np.float64), ds.astype(np.float32).astype(np.float64)
    live = (np.broadcast_to(visible, p.shape) & ~dead).astype(np.float64)

    def grads(P, dS, absolute=False):
        Q, G, Kr = (np.abs(q), np.abs(go), np.abs(K)) if absolute else (q, go, K)
        return (sc * dS @ Kr, (sc * dS.transpose(0, 1, 3, 2) @ Q).reshape(B, Hkv, g, Sk, D).sum(2),
                (P.transpose(0, 1, 3, 2) @ G).reshape(B, Hkv, g, Sk, D).sum(2))

    return p32, ds32, live, grads


def half_bound_constants(dt):
    """(u, sub) of the F16/BF16 tests' bounds: the unit roundoff (BF16 2^-8, F16 2^-11) and the
    absolute error of one F16 subnormal rounding (2^-25; BF16 has none in range)."""
    return (2.0**-8 if dt == "BF16" else 2.0**-11), (2.0**-25 if dt == "F16" else 0.0)


def worst_of_tolerance(worst, got, want, dt):
    """max(worst, the largest |got - want| / (atol + rtol |want|)) at CONFORMANCE_TOL[dt]."""
    rt, at = CONFORMANCE_TOL[dt]
    return max(worst, (np.abs(got - want) / (at + rt * np.abs(want))).max())


def backward_conformance(trials, rng, gradients):
    """The worst of each BACKWARD_CONFORMANCE_CASES case over `trials` draws, inputs uniform in
    [-1, 1] in the dtype: gradients(q, k, v, go, causal, dt) gives (exact, emulated) triples, both
    rounded to the dtype here as the suite compares them."""
    for dt in ("F16", "BF16"):
        for name, B, Hq, Hkv, Sq, Sk, D, causal in BACKWARD_CONFORMANCE_CASES:
            worst = 0.0
            for _ in range(trials):
                if Sk == 0:
                    break  # no key: every gradient 0 on both sides
                u = lambda *shape: to_dtype(rng.uniform(-1, 1, shape), dt)
                q, k, v, go = u(B, Hq, Sq, D), u(B, Hkv, Sk, D), u(B, Hkv, Sk, D), u(B, Hq, Sq, D)
                exact, emulated = gradients(q, k, v, go, causal, dt)
                for ex, em in zip(exact, emulated):
                    worst = worst_of_tolerance(worst, to_dtype(em, dt), to_dtype(ex, dt), dt)
            print(f"conformance {dt:4s} {name:30s} worst {worst:.3f} of the CUDA-vs-CPU tolerance")


def main(doc, default_trials, *steps):
    """The scripts' command line (--trials, --seed); then each step(args, rng) in order, on one generator."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--trials", type=int, default=default_trials)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    for step in steps:
        step(args, rng)
