"""Sparse matrices: the twins of bench/cases_sparse.cpp (torch's CSR tensors on cuSPARSE)."""
import torch

from . import Case

TARGETS = {
    "spmm_csr_f32": ("≥ 1.0×", lambda f, t, r: f >= t),
    "spmv_csr_f32": ("≥ 1.0×", lambda f, t, r: f >= t),
    "from_dense_csr_f32": ("≥ 1.0×", lambda f, t, r: f >= t),
}


def patterned(side, per_mille, dev):
    index = torch.arange(side * side, device=dev, dtype=torch.int64)
    keep = (index * 2654435761) % 1000 < per_mille
    values = torch.arange(side * side, device=dev, dtype=torch.float32)
    return torch.where(keep, values % 7 + 1, torch.zeros((), device=dev)).reshape(side, side)


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
    ]
