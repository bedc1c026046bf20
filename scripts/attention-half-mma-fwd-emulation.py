#!/usr/bin/env python3
"""Host emulation (numpy) of the F16/BF16 tensor-core attention forward
(src/cuda/attention/attention_half_mma_fwd.cu), which the F16/BF16 forwards cuDNN does not take
(explicit masks above all) run by default (FERRITE_ATTENTION_HALF_FWD unset or mma).

The kernel multiplies the F16/BF16 inputs exactly with F32 sums and runs the online softmax in
F32 over 64-key tiles: per tile the running max m, weights P = exp(s - m) rounded to nearest in
the dtype (BF16: 8 significant bits, F16: 11, with F16's subnormals below 2^-14) as the A operand
of O += P V, the row sum l of the unrounded weights, out = O / l rounded once to the dtype. This
emulates exactly that tiling and rounding, everything else exact (float64: the F32 sums and
ex2.approx add ~1e-6 relative, covered by the tests' slack), and reports:

  conformance: the F16/BF16 forward cases of tests/conformance/attention_entries.cpp that reach
    the kernel (masked with D = Dv in {64, 128}: additive_mask_inf_row; Sk = 0: tiled_keys0_d128;
    and, should cuDNN decline a plan, the unmasked D = 64/128 ones): the worst |a - e| /
    (atol + rtol |e|) of out at the suite's CUDA-vs-CPU tolerance (e: the exact out rounded);
  unit: the shapes of tests/cuda/attention_half_mma_fwd_test.cpp (masks drawn as there): the
    worst |a - e| over that test's bound 2.02 u |e| + (1.01 u + 1e-5) T + 1e-6 (+ F16 2^-25 A),
    e the exact out rounded to the dtype (the SIMT kernel's, up to its F32 sums).

Runs on the CPU in about a minute: python3 scripts/attention-half-mma-fwd-emulation.py
"""
import numpy as np

from attention_emulation import half_bound_constants, main, to_dtype, worst_of_tolerance


def scores(q, k, causal, bias, scale):
    """Scaled scores with the mask (bias: additive values, -inf hidden; broadcastable), -inf hidden."""
    B, Hq, Sq, D = q.shape
    g = Hq // k.shape[1]
    K = np.repeat(k, g, axis=1)
    s = scale * q @ K.transpose(0, 1, 3, 2)
    Sk = K.shape[2]
    hidden = np.zeros((B, Hq, Sq, Sk), dtype=bool)
    if causal:
        hidden |= (np.arange(Sk)[None, :] > np.arange(Sq)[:, None])[None, None]
    if bias is not None:
        hidden |= np.broadcast_to(bias == -np.inf, hidden.shape)
        s = s + np.where(bias == -np.inf, 0.0, bias)
    return np.where(hidden, -np.inf, s)


def forward(q, k, v, causal, bias, dt, tile=64):
    """exact out (float64), the kernel's out (rounded), T = sum_j P_j |v_j| and A = sum_j |v_j|
    over the visible keys; rows with no visible key: exact 0, T = -1."""
    B, Hq, Sq, D = q.shape
    g = Hq // k.shape[1]
    V = np.repeat(v, g, axis=1)
    s = scores(q, k, causal, bias, 1 / np.sqrt(D))
    Sk = s.shape[-1]
    mx = s.max(-1, keepdims=True) if Sk else np.full(s.shape[:-1] + (1,), -np.inf)
    dead = mx == -np.inf
    with np.errstate(invalid="ignore"):
        p = np.exp(s - np.where(dead, 0, mx))
    l = p.sum(-1, keepdims=True)
    pn = np.where(dead, 0, p / np.where(dead, 1, l))
    exact = pn @ V
    T = np.where(dead, -1.0, pn @ np.abs(V))
    A = (~np.isneginf(s)).astype(np.float64) @ np.abs(V)
    # The kernel: online softmax over 64-key tiles, P rounded to dt for P V.
    m = np.full((B, Hq, Sq, 1), -np.inf)
    lsum = np.zeros((B, Hq, Sq, 1))
    acc = np.zeros((B, Hq, Sq, D))
    for j0 in range(0, Sk, tile):
        st = s[..., j0:j0 + tile]
        m_new = np.maximum(m, st.max(-1, keepdims=True))
        base = np.where(m_new == -np.inf, 0, m_new)
        alpha = np.exp(m - base)
        w = np.exp(st - base)
        lsum = lsum * alpha + w.sum(-1, keepdims=True)
        acc = acc * alpha + to_dtype(w, dt) @ V[..., j0:j0 + tile, :]
        m = m_new
    out = to_dtype(np.where(lsum == 0, 0, acc / np.where(lsum == 0, 1, lsum)), dt)
    return exact, out, T, A


def conformance(args, rng):
    # (name, B, Hq, Hkv, Sq, Sk, D, causal, mask): mask 2 = additive [B, Hq, Sq, Sk], 20% -inf,
    # else u - 0.5, row 2 of head 0 all -inf (random_mask).
    cases = [("additive_mask_inf_row", 2, 2, 2, 8, 12, 64, False, 2), ("tiled_keys0_d128", 1, 2, 2, 20, 0, 128, False, 0),
             ("tiled_d64_s77", 2, 2, 2, 77, 77, 64, False, 0),
             ("tiled_causal_d128_s130", 1, 3, 3, 130, 130, 128, True, 0),
             ("tiled_causal_sq_gt_sk_gqa_d64", 2, 4, 2, 130, 77, 64, True, 0),
             ("tiled_sq_lt_sk_gqa4_d128", 1, 4, 1, 77, 200, 128, False, 0),
             ("tiled_causal_s300_d128", 1, 2, 2, 300, 300, 128, True, 0),
             ("cudnn_s1000_causal_d128", 1, 2, 2, 1000, 1000, 128, True, 0),
             ("cudnn_s1000_gqa_d64", 1, 4, 2, 1000, 1000, 64, False, 0)]
    for dt in ("F16", "BF16"):
        for name, B, Hq, Hkv, Sq, Sk, D, causal, mask in cases:
            worst = 0.0
            for _ in range(args.trials if Sk else 1):
                u = lambda *shape: to_dtype(rng.uniform(-1, 1, shape), dt)
                q, k, v = u(B, Hq, Sq, D), u(B, Hkv, Sk, D), u(B, Hkv, Sk, D)
                bias = None
                if mask == 2:
                    bias = np.where(rng.uniform(0, 1, (B, Hq, Sq, Sk)) < 0.2, -np.inf,
                                    to_dtype(rng.uniform(0, 1, (B, Hq, Sq, Sk)) - 0.5, dt))
                    bias[0, 0, 2, :] = -np.inf
                exact, out, _, _ = forward(q, k, v, causal, bias, dt)
                e = to_dtype(exact, dt)
                if out.size:
                    worst = worst_of_tolerance(worst, out, e, dt)
            print(f"conformance {dt:4s} {name:30s} worst {worst:.3f} of the CUDA-vs-CPU tolerance")


def unit(args, rng):
    """The shapes and masks of HalfMmaForward.AgreesWithTheSimtForward (dead rows included)."""
    kb, kf, krk, khk, kro = (1, 0, 0, 1), (1, 1, 1, 1), (0, 0, 1, 1), (0, 1, 0, 1), (0, 0, 1, 0)
    N, Bo, Ad = None, "bool", "add"
    cases = [(2, 2, 2, 77, 77, 64, False, N, None), (1, 3, 3, 300, 300, 128, True, N, None),
             (2, 4, 2, 130, 77, 64, True, N, None), (1, 4, 1, 77, 200, 128, False, N, None),
             (1, 2, 2, 40, 130, 64, True, N, None), (1, 2, 1, 1000, 1000, 128, True, N, None),
             (1, 2, 2, 8, 1000, 128, False, Bo, kb), (2, 4, 2, 200, 256, 128, False, Bo, kb),
             (2, 4, 2, 200, 200, 64, True, Bo, kb), (2, 4, 2, 77, 130, 64, False, Bo, kb),
             (2, 2, 1, 129, 256, 128, False, Bo, kf), (1, 2, 2, 130, 77, 128, True, Bo, kf),
             (1, 2, 2, 300, 96, 64, False, Bo, krk), (2, 2, 2, 40, 130, 128, True, Bo, khk),
             (1, 2, 2, 70, 90, 64, False, Bo, kro), (2, 4, 2, 200, 256, 128, False, Ad, kb),
             (1, 2, 2, 64, 333, 64, False, Ad, kb), (2, 2, 2, 128, 128, 128, False, Ad, kf),
             (2, 4, 2, 300, 96, 128, True, Ad, krk), (1, 2, 2, 130, 77, 64, False, Ad, kf),
             (2, 2, 2, 40, 130, 64, False, Ad, khk), (1, 2, 2, 70, 90, 128, True, Ad, kro)]
    for dt in ("BF16", "F16"):
        u_dt, sub = half_bound_constants(dt)
        worst, worst_case = 0.0, None
        for B, Hq, Hkv, Sq, Sk, D, causal, kind, keep in cases:
            for dead in ((False, True) if kind else (False,)):
                mk = lambda *shape: to_dtype(1.5 * rng.standard_normal(shape), dt)
                q, k, v = mk(B, Hq, Sq, D), mk(B, Hkv, Sk, D), mk(B, Hkv, Sk, D)
                bias = None
                if kind:
                    shape = tuple(n if kp else 1 for n, kp in zip((B, Hq, Sq, Sk), keep))
                    r = rng.uniform(0, 1, shape)
                    if kind == "bool":
                        bias = np.where(r < 0.7, 0.0, -np.inf)
                    else:
                        bias = np.where(r < 0.3, -np.inf, to_dtype(2 * rng.standard_normal(shape), dt))
                    if dead:
                        if keep[2]:
                            bias[:, :, [1, 5] if shape[2] > 5 else [1], :] = -np.inf
                        elif keep[0]:
                            bias[0] = -np.inf
                exact, out, T, A = forward(q, k, v, causal, bias, dt)
                e = to_dtype(exact, dt)
                live = T >= 0
                bound = 2.02 * u_dt * np.abs(e) + (1.01 * u_dt + 1e-5) * T + 1e-6 + sub * A
                r = np.where(live, np.abs(out - e) / bound, 0)
                assert np.all(out[~np.broadcast_to(live, out.shape)] == 0), "dead rows give 0"
                if r.max() > worst:
                    worst, worst_case = r.max(), (B, Hq, Hkv, Sq, Sk, D, causal, kind, keep, dead)
        print(f"unit {dt:4s}: worst |a - e| / (the test's bound) {worst:.3f} at {worst_case}")


if __name__ == "__main__":
    main(__doc__, 10, conformance, unit)
