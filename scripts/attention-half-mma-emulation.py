#!/usr/bin/env python3
"""Host emulation (numpy) of the F16/BF16 tensor-core attention backward
(src/cuda/attention/attention_half_mma_bwd.cu), which the F16/BF16 problems cuDNN does not take
run by default (FERRITE_ATTENTION_HALF_BWD unset or mma).

Its products multiply the F16/BF16 inputs exactly with F32 sums, and round the F32
intermediates P and dS to nearest in the dtype (BF16: 8 significant bits, F16: 11, with F16's
subnormals below 2^-14) before dV = P^T dO, dK = scale dS^T Q and dQ = scale dS K, as cuDNN and
FlashAttention do. This emulates that rounding, everything else exact (float64; the F32 sums are
covered by the tiled kernels' own tolerance), on the shapes of
scripts/attention-tf32x1-emulation.py (attention_emulation.py's case lists), and reports:

  conformance: the F16/BF16 cases of tests/conformance/attention_entries.cpp that cuDNN leaves
    to the route: the worst |a - e| / (atol + rtol |e|) at the suite's CUDA-vs-CPU tolerance;
  unit: the shapes of tests/cuda/attention_half_mma_test.cpp: the worst |a - e| over that test's
    bound 1.01 u (|e| + sum |t|) + 2e-4 |e| + 1e-4 (+ F16 2^-25 sum |b|), a rounded to the dtype.
  masked: the same two for explicit masks (the kernels' Bool and additive instantiations): the
    masked conformance case the route takes (additive_mask_inf_row: D = 64, the only masked
    F16/BF16 case with D = Dv in {64, 128}) and MaskedAgreesWithTheSimtBackward's problems and
    masks (three broadcast shapes, fully masked rows, -inf and -1000 entries).

Runs on the CPU in ~20 s: python3 scripts/attention-half-mma-emulation.py
"""
import numpy as np

from attention_emulation import (BACKWARD_UNIT_PROBLEMS, backward_conformance, backward_products, half_bound_constants,
                                 main, to_dtype, worst_of_tolerance)


def backward(q, k, v, go, causal, dt, round_out=None, bias=None):
    """The exact gradients, the half kernels' (P and dS rounded to dt), each element's sum |t|
    and sum |b| (the other factor of each term). bias: an additive mask broadcast to [B, Hq, Sq,
    Sk] (-inf hides; a Bool mask as 0 / -inf); a row with every score hidden has P = 0."""
    p32, ds32, live, grads = backward_products(q, k, v, go, causal, round_out, bias)
    exact = grads(p32, ds32)
    half = grads(to_dtype(p32, dt), to_dtype(ds32, dt))
    sums = grads(np.abs(p32), np.abs(ds32), absolute=True)
    bsums = grads(live, live, absolute=True)
    return exact, half, sums, bsums


def conformance(args, rng):
    backward_conformance(args.trials, rng,
                         lambda q, k, v, go, causal, dt: backward(q, k, v, go, causal, dt, lambda x: to_dtype(x, dt))[:2])


def unit(args, rng):
    for dt in ("BF16", "F16"):
        u_dt, sub = half_bound_constants(dt)
        worst = 0.0
        for B, Hq, Hkv, Sq, Sk, D, causal in BACKWARD_UNIT_PROBLEMS:
            for normal in (False, True):
                mk = lambda *shape: to_dtype(rng.standard_normal(shape) if normal else rng.uniform(-1, 1, shape), dt)
                q, go, k, v = mk(B, Hq, Sq, D), mk(B, Hq, Sq, D), mk(B, Hkv, Sk, D), mk(B, Hkv, Sk, D)
                exact, half, sums, bsums = backward(q, k, v, go, causal, dt, lambda x: to_dtype(x, dt))
                for ex, ha, su, bs in zip(exact, half, sums, bsums):
                    a = to_dtype(ha, dt)
                    bound = 1.01 * u_dt * (np.abs(ex) + su) + 2e-4 * np.abs(ex) + 1e-4 + sub * bs
                    worst = max(worst, (np.abs(a - ex) / bound).max())
        print(f"unit {dt:4s}: worst |a - e| / (the test's bound) {worst:.3f}")


def draw_mask(kind, shape, B, Hq, Sq, Sk, dt, rng):
    """As draw_mask in tests/cuda/attention_half_mma_test.cpp (its own generator): the additive
    term broadcast to [B, Hq, Sq, Sk] (Bool: 0 / -inf)."""
    sh = {"rows_keys": (Sq, Sk), "batch_keys": (B, 1, 1, Sk), "full": (B, Hq, Sq, Sk)}[shape]
    rows = np.arange(Sq).reshape(-1, 1) if shape != "batch_keys" else None
    if kind == "bool":
        m = rng.uniform(0, 1, sh) < 0.7
        if rows is not None:
            m = m & (np.broadcast_to(rows, sh) != 1)
        elif B > 1:
            m[1] = False
        term = np.where(m, 0.0, -np.inf)
    else:
        term = np.where(rng.uniform(0, 1, sh) < 0.2, -np.inf, 4 * rng.uniform(0, 1, sh) - 2)
        if rows is not None:
            r = np.broadcast_to(rows, sh)
            term = np.where(r == 2, -np.inf, term)
            term = np.where(r == 3, -1000 + 4 * rng.uniform(0, 1, sh) - 2, term)
        term = to_dtype(term, dt)
    return np.broadcast_to(term.reshape((1,) * (4 - len(sh)) + sh), (B, Hq, Sq, Sk))


def masked(args, rng):
    for dt in ("F16", "BF16"):
        worst = 0.0
        B, Hq, Hkv, Sq, Sk, D = 2, 2, 2, 8, 12, 64  # additive_mask_inf_row: attention_entries.cpp's random_mask
        for _ in range(args.trials):
            u = lambda *shape: to_dtype(rng.uniform(-1, 1, shape), dt)
            q, k, v, go = u(B, Hq, Sq, D), u(B, Hkv, Sk, D), u(B, Hkv, Sk, D), u(B, Hq, Sq, D)
            m = np.where(rng.uniform(0, 1, (B, Hq, Sq, Sk)) < 0.2, -np.inf, rng.uniform(0, 1, (B, Hq, Sq, Sk)) - 0.5)
            m[0, 0, 2, :] = -np.inf  # row 2 of head 0
            exact, half, _, _ = backward(q, k, v, go, False, dt, lambda x: to_dtype(x, dt), to_dtype(m, dt))
            for ex, ha in zip(exact, half):
                worst = worst_of_tolerance(worst, to_dtype(ha, dt), to_dtype(ex, dt), dt)
        print(f"masked conformance {dt:4s} additive_mask_inf_row worst {worst:.3f} of the CUDA-vs-CPU tolerance")
    probs = [(2, 4, 2, 130, 77, 64, False), (1, 3, 3, 130, 130, 128, True), (2, 4, 1, 77, 200, 128, False),
             (1, 2, 2, 300, 300, 64, True), (2, 6, 2, 200, 330, 128, True), (2, 2, 2, 8, 12, 64, False),
             (1, 4, 2, 517, 333, 128, False), (2, 2, 1, 40, 130, 64, True)]
    for dt in ("BF16", "F16"):
        u_dt, sub = half_bound_constants(dt)
        worst = 0.0
        for B, Hq, Hkv, Sq, Sk, D, causal in probs:
            for kind in ("bool", "additive"):
                for shape in ("rows_keys", "batch_keys", "full"):
                    mk = lambda *shape_: to_dtype(rng.standard_normal(shape_), dt)
                    q, go, k, v = mk(B, Hq, Sq, D), mk(B, Hq, Sq, D), mk(B, Hkv, Sk, D), mk(B, Hkv, Sk, D)
                    bias = draw_mask(kind, shape, B, Hq, Sq, Sk, dt, rng)
                    exact, half, sums, bsums = backward(q, k, v, go, causal, dt, lambda x: to_dtype(x, dt), bias)
                    for ex, ha, su, bs in zip(exact, half, sums, bsums):
                        a = to_dtype(ha, dt)
                        bound = 1.01 * u_dt * (np.abs(ex) + su) + 2e-4 * np.abs(ex) + 1e-4 + sub * bs
                        worst = max(worst, (np.abs(a - ex) / bound).max())
        print(f"masked unit {dt:4s}: worst |a - e| / (the test's bound) {worst:.3f}")


if __name__ == "__main__":
    main(__doc__, 20, conformance, unit, masked)
