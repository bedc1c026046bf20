"""Sparse matrices: the twins of bench/cases_sparse.cpp (torch's CSR tensors on cuSPARSE)."""
import torch

from . import Case

TARGETS = {
    "spmm_csr_f32": ("≥ 1.0×", lambda f, t, r: f >= t),
    "spmv_csr_f32": ("≥ 1.0×", lambda f, t, r: f >= t),
    "from_dense_csr_f32": ("≥ 1.0×", lambda f, t, r: f >= t),
    "spgemm_csr_f32": ("≥ 1.0×", lambda f, t, r: f >= t),
}


def patterned(side, per_mille, dev):
    index = torch.arange(side * side, device=dev, dtype=torch.int64)
    keep = (index * 2654435761) % 1000 < per_mille
    values = torch.arange(side * side, device=dev, dtype=torch.float32)
    return torch.where(keep, values % 7 + 1, torch.zeros((), device=dev)).reshape(side, side)


def random_sparse(side, density, g, dev):
    # Uniform in [-2, 2] as ferrite's ctx.random; its own pattern of the same density.
    r = torch.rand(side, side, device=dev, generator=g) * 4 - 2
    return torch.where(r.abs() < 4 * density, r, torch.zeros((), device=dev)).to_sparse_csr()


def csr_bytes_of(a):
    return a.values().numel() * 12.0 + 8.0 * (a.shape[0] + 1)


def combine_cases(quick, dev):
    side = 512 if quick else 8192
    k = 16 if quick else 64
    g = torch.Generator(device=dev).manual_seed(1)
    a = random_sparse(side, 0.01, g, dev)
    b = random_sparse(side, 0.01, g, dev)
    m1 = torch.rand(side, k, device=dev, generator=g) * 4 - 2
    m2 = torch.rand(k, side, device=dev, generator=g) * 4 - 2
    n = float(side)
    return [
        Case("spgemm_csr_f32", lambda: a @ b, bytes=csr_bytes_of(a) + csr_bytes_of(b) + csr_bytes_of(a @ b)),
        Case("sddmm_csr_f32", lambda: torch.sparse.sampled_addmm(a, m1, m2), bytes=2 * csr_bytes_of(a) + 8 * n * k),
        Case("add_csr_f32", lambda: a + b, bytes=csr_bytes_of(a) + csr_bytes_of(b) + csr_bytes_of(a + b)),
    ]


def cases(quick):
    dev = torch.device("cuda")
    side = 512 if quick else 16384
    cols = 16 if quick else 256
    dense = patterned(side, 8, dev)
    a = dense.to_sparse_csr()
    # I64 indices as in ferrite's case.
    nnz = float(a.values().numel())
    g = torch.Generator(device=dev).manual_seed(0)
    b = torch.rand(side, cols, device=dev, generator=g)
    x = torch.rand(side, device=dev, generator=g)
    csr_bytes = nnz * 12 + 8.0 * (side + 1)
    n = float(side)
    return [
        Case("spmm_csr_f32", lambda: a @ b, bytes=csr_bytes + 8 * n * cols),
        Case("spmv_csr_f32", lambda: a @ x, bytes=csr_bytes + 8 * n),
        Case("from_dense_csr_f32", lambda: dense.to_sparse_csr(), bytes=4 * n * n + csr_bytes),
        Case("to_dense_csr_f32", lambda: a.to_dense(), bytes=csr_bytes + 4 * n * n),
        Case("csr_to_csc_f32", lambda: a.to_sparse_csc(), bytes=2 * csr_bytes),
    ] + combine_cases(quick, dev)
