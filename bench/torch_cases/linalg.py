"""Linear algebra (issue #13): twins of bench/cases_linalg.cpp."""
import torch

from . import Case, hashed


def _at_least(ratio):
    return (f"≥ {ratio:.2f}× PyTorch", lambda f, t, x: f >= ratio * t)


TARGETS = {}
for _dtype in ("f32", "f64"):
    for _n in (1024, 4096):
        for _op in ("cholesky", "cholesky_upper", "solve", "qr", "eigh", "svd"):
            TARGETS[f"linalg_{_op}_{_dtype}_{_n}"] = _at_least(1.0)
TARGETS["linalg_eig_f32_1024"] = _at_least(1.0)
TARGETS["linalg_eigh_batched_f64_33"] = _at_least(10.0)
TARGETS["linalg_eigh_batched_f64_64"] = _at_least(10.0)
TARGETS["linalg_eig_batched_f32_3"] = _at_least(10.0)
TARGETS["linalg_eig_batched_f32_16"] = _at_least(10.0)
TARGETS["linalg_svd_batched_f32_32"] = _at_least(2.0)
TARGETS["linalg_svd_batched_f64_32"] = _at_least(2.0)


def _flops(batch, n, factor):
    # Nominal counts, the same as bench/cases_linalg.cpp's.
    return factor * batch * n ** 3


def cases(quick):
    dev = torch.device("cuda")

    # The values ferrite's cases hold (BenchContext::hashed, the same seeds): eig, eigh and svd
    # iterate a number of times that depends on the matrix, so both sides solve the same one.
    def rand(*shape, dtype=torch.float32, seed):
        return hashed(shape, dtype, seed, dev)

    out = []
    sizes = (64,) if quick else (1024, 4096)
    for dtype, suffix in ((torch.float32, "f32"), (torch.float64, "f64")):
        for n in sizes:
            tag = f"{suffix}_{n}"
            a = rand(n, n, dtype=dtype, seed=31)
            spd = a @ a.mT + n * torch.eye(n, device=dev, dtype=dtype)
            sym = a + a.mT
            b = rand(n, 1, dtype=dtype, seed=32)
            out += [
                Case(f"linalg_cholesky_{tag}", lambda spd=spd: torch.linalg.cholesky(spd), 0.0, _flops(1, n, 1 / 3), True),
                Case(f"linalg_cholesky_upper_{tag}", lambda spd=spd: torch.linalg.cholesky(spd, upper=True), 0.0,
                     _flops(1, n, 1 / 3), True),
                Case(f"linalg_solve_{tag}", lambda a=a, b=b: torch.linalg.solve(a, b), 0.0, _flops(1, n, 2 / 3), True),
                Case(f"linalg_qr_{tag}", lambda a=a: torch.linalg.qr(a), 0.0, _flops(1, n, 8 / 3), True),
                Case(f"linalg_eigh_{tag}", lambda sym=sym: torch.linalg.eigh(sym), 0.0, _flops(1, n, 9), True),
            ]
            out.append(Case(f"linalg_svd_{tag}", lambda a=a: torch.linalg.svd(a), 0.0, _flops(1, n, 22), True))
            if n <= 1024 and dtype == torch.float32:
                out.append(Case(f"linalg_eig_{tag}", lambda a=a: torch.linalg.eig(a), 0.0, _flops(1, n, 25), True))
    scale = 16 if quick else 1
    for n in (33, 64):
        a = rand(1024 // scale, n, n, dtype=torch.float64, seed=33)
        sym = a + a.mT
        out.append(Case(f"linalg_eigh_batched_f64_{n}", lambda sym=sym: torch.linalg.eigh(sym), 0.0,
                        _flops(1024 // scale, n, 9), True))
    for batch, n in ((512, 3), (1024, 16)):
        a = rand(batch // scale, n, n, seed=34)
        out.append(Case(f"linalg_eig_batched_f32_{n}", lambda a=a: torch.linalg.eig(a), 0.0,
                        _flops(batch // scale, n, 25), True))
    for dtype, suffix in ((torch.float32, "f32"), (torch.float64, "f64")):
        s = rand(1024 // scale, 32, 32, dtype=dtype, seed=35)
        out.append(Case(f"linalg_svd_batched_{suffix}_32", lambda s=s: torch.linalg.svd(s), 0.0,
                        _flops(1024 // scale, 32, 22), True))
    return out
