#!/usr/bin/env python3
"""Host emulation (numpy) of the attention backward's 1xTF32 mode (Tf32Mode::single,
src/cuda/attention/attention_f32_tf32x3_bwd.cu), which the F16/BF16 backward via F32 takes.

1xTF32 multiplies q, k, v and dO (F16/BF16 values, exact in TF32) exactly and rounds only the
F32 intermediates P and dS to nearest TF32 (ties to even) before dV = P^T dO, dK = scale dS^T Q
and dQ = scale dS K. This emulates that rounding, everything else exact (float64: the F32 sums
are the 3xTF32 kernels' and are covered by their tolerances), and reports:

  conformance: the F16/BF16 cases of tests/conformance/attention_entries.cpp that cuDNN leaves
    to the route (inputs uniform in [-1, 1] in the dtype, out rounded to the dtype as the
    backward reads it, gradients rounded to the dtype on both sides, as the suite compares the
    CUDA backend with the CPU's double): the worst |a - e| / (atol + rtol |e|) at the suite's
    CUDA-vs-CPU tolerance, over `--trials` draws per case;
  unit: the shapes of tests/cuda/attention_f32_tf32x3_test.cpp (Tf32x3Attention.Single*) on
    BF16/F16 values: the worst |err| / (2^-11 sum |t|) (the test's bound; <= 1 by
    construction) and |err| / (2^-8 (|e| + rms(e))) (a tolerance tried first and dropped).

Runs on the CPU in ~15 s: python3 scripts/attention-tf32x1-emulation.py
"""
import numpy as np

from attention_emulation import BACKWARD_UNIT_PROBLEMS, backward_conformance, backward_products, main, tf32, to_dtype


def backward(q, k, v, go, causal, round_out=None):
    """The three gradients, exact and 1xTF32 (P and dS rounded to TF32), plus each element's sum |t|."""
    p32, ds32, _, grads = backward_products(q, k, v, go, causal, round_out)
    return grads(p32, ds32), grads(tf32(p32), tf32(ds32)), grads(np.abs(p32), np.abs(ds32), absolute=True)


def conformance(args, rng):
    backward_conformance(args.trials, rng,
                         lambda q, k, v, go, causal, dt: backward(q, k, v, go, causal, lambda x: to_dtype(x, dt))[:2])


def unit(args, rng):
    worst_bound = worst_rms = 0.0
    for B, Hq, Hkv, Sq, Sk, D, causal in BACKWARD_UNIT_PROBLEMS:
        for normal in (False, True):
            for dt in ("BF16", "F16"):
                mk = lambda *shape: to_dtype(rng.standard_normal(shape) if normal else rng.uniform(-1, 1, shape), dt)
                q, go, k, v = mk(B, Hq, Sq, D), mk(B, Hq, Sq, D), mk(B, Hkv, Sk, D), mk(B, Hkv, Sk, D)
                exact, single, sums = backward(q, k, v, go, causal)
                for ex, si, su in zip(exact, single, sums):
                    err = np.abs(si - ex)
                    worst_bound = max(worst_bound, (err / np.maximum(2.0**-11 * su, 1e-300)).max())
                    rms = np.sqrt((ex**2).mean())
                    worst_rms = max(worst_rms, (err / (2.0**-8 * (np.abs(ex) + rms))).max())
    print(f"unit: worst |err| / (2^-11 sum|t|) {worst_bound:.3f}; worst |err| / (2^-8 (|e| + rms(e))) {worst_rms:.3f}")


if __name__ == "__main__":
    main(__doc__, 20, conformance, unit)
