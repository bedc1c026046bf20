"""One table of op calls written once for ferrite and PyTorch (same names and keywords), with a
NumPy reference for the machines without PyTorch. Each entry: (id, inputs, call, numpy_ref).
`inputs` are NumPy arrays; `call(lib, *xs)` runs with lib = ferrite or torch on tensors made
from them; `numpy_ref(*arrays)` gives the expected values (None: checked against torch only)."""
import numpy as np

rng = np.random.default_rng(0)
A = rng.standard_normal((5, 7)).astype(np.float32)
B = rng.standard_normal((5, 7)).astype(np.float32)
V = rng.standard_normal(7).astype(np.float32)
P = (np.abs(A) + 0.1).astype(np.float32)
I = rng.integers(-20, 20, (5, 7)).astype(np.int64)
J = rng.integers(1, 6, (5, 7)).astype(np.int64)
M = rng.standard_normal((3, 5, 4)).astype(np.float32)
N = rng.standard_normal((3, 4, 6)).astype(np.float32)
IDX = np.array([4, 0, 2, 2], np.int64)
GIDX = rng.integers(0, 7, (5, 3)).astype(np.int64)
MASK = A > 0


def _softmax(x, d):
    e = np.exp(x - x.max(axis=d, keepdims=True))
    return e / e.sum(axis=d, keepdims=True)


def _gelu(x):
    from math import erf

    return np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))(x).astype(x.dtype)


OPS = [
    # elementwise
    ("add", (A, B), lambda m, a, b: m.add(a, b), np.add),
    ("sub_bcast", (A, V), lambda m, a, b: m.sub(a, b), np.subtract),
    ("mul_scalar", (A,), lambda m, a: m.mul(a, 3.0), lambda a: a * 3),
    ("div", (A, P), lambda m, a, b: m.div(a, b), np.divide),
    ("maximum", (A, B), lambda m, a, b: m.maximum(a, b), np.maximum),
    ("minimum", (A, B), lambda m, a, b: m.minimum(a, b), np.minimum),
    ("floor_divide_int", (I, J), lambda m, a, b: m.floor_divide(a, b), np.floor_divide),
    ("remainder_int", (I, J), lambda m, a, b: m.remainder(a, b), np.remainder),
    ("bitwise_and", (I, J), lambda m, a, b: m.bitwise_and(a, b), np.bitwise_and),
    ("bitwise_xor", (I, J), lambda m, a, b: m.bitwise_xor(a, b), np.bitwise_xor),
    ("bitwise_not", (I,), lambda m, a: m.bitwise_not(a), np.invert),
    ("logical_and", (MASK, ~MASK), lambda m, a, b: m.logical_and(a, b), np.logical_and),
    ("logical_not", (MASK,), lambda m, a: m.logical_not(a), np.logical_not),
    ("eq", (A, A), lambda m, a, b: m.eq(a, b), np.equal),
    ("lt", (A, B), lambda m, a, b: m.lt(a, b), np.less),
    ("ge_scalar", (A,), lambda m, a: m.ge(a, 0.25), lambda a: a >= 0.25),
    ("neg", (A,), lambda m, a: m.neg(a), np.negative),
    ("abs", (A,), lambda m, a: m.abs(a), np.abs),
    ("exp", (A,), lambda m, a: m.exp(a), np.exp),
    ("log", (P,), lambda m, a: m.log(a), np.log),
    ("sqrt", (P,), lambda m, a: m.sqrt(a), np.sqrt),
    ("pow", (P,), lambda m, a: m.pow(a, 1.5), lambda a: a ** 1.5),
    ("clamp", (A,), lambda m, a: m.clamp(a, min=-0.5, max=0.5), lambda a: np.clip(a, -0.5, 0.5)),
    ("clamp_min", (A,), lambda m, a: m.clamp(a, min=0.0), lambda a: np.maximum(a, 0)),
    ("relu", (A,), lambda m, a: m.relu(a), lambda a: np.maximum(a, 0)),
    ("sigmoid", (A,), lambda m, a: m.sigmoid(a), lambda a: 1 / (1 + np.exp(-a))),
    ("tanh", (A,), lambda m, a: m.tanh(a), np.tanh),
    ("gelu", (A,), lambda m, a: m.nn.functional.gelu(a), _gelu),
    ("gelu_tanh", (A,), lambda m, a: m.nn.functional.gelu(a, approximate="tanh"), None),
    ("silu", (A,), lambda m, a: m.nn.functional.silu(a), lambda a: a / (1 + np.exp(-a))),
    ("elu", (A,), lambda m, a: m.nn.functional.elu(a, alpha=0.7), lambda a: np.where(a > 0, a, 0.7 * np.expm1(a))),
    ("mish", (A,), lambda m, a: m.nn.functional.mish(a), lambda a: a * np.tanh(np.log1p(np.exp(a)))),
    ("where", (MASK, A, B), lambda m, c, a, b: m.where(c, a, b), np.where),
    ("masked_fill", (A, MASK), lambda m, a, k: a.masked_fill(k, 2.0), lambda a, k: np.where(k, 2.0, a)),
    # reductions
    ("sum", (A,), lambda m, a: m.sum(a), lambda a: a.sum()),
    ("sum_dim", (A,), lambda m, a: m.sum(a, 1), lambda a: a.sum(1)),
    ("sum_dims_keep", (M,), lambda m, a: m.sum(a, dim=(0, 2), keepdim=True), lambda a: a.sum((0, 2), keepdims=True)),
    ("sum_int", (I,), lambda m, a: m.sum(a, 0), lambda a: a.sum(0)),
    ("mean", (A,), lambda m, a: m.mean(a, dim=0), lambda a: a.mean(0)),
    ("prod", (P,), lambda m, a: m.prod(a, 1), lambda a: a.prod(1)),
    ("amax", (M,), lambda m, a: m.amax(a, dim=(1, 2)), lambda a: a.max((1, 2))),
    ("amin", (A,), lambda m, a: m.amin(a), lambda a: a.min()),
    ("argmax", (A,), lambda m, a: m.argmax(a, dim=1), lambda a: a.argmax(1)),
    ("argmin", (A,), lambda m, a: m.argmin(a), lambda a: a.argmin()),
    ("max_dim_values", (A,), lambda m, a: m.max(a, 1)[0], lambda a: a.max(1)),
    ("min_dim_indices", (A,), lambda m, a: m.min(a, 0)[1], lambda a: a.argmin(0)),
    ("any", (MASK,), lambda m, a: m.any(a, 1), lambda a: a.any(1)),
    ("all", (MASK,), lambda m, a: m.all(a), lambda a: a.all()),
    ("cumsum", (A,), lambda m, a: m.cumsum(a, 1), lambda a: a.cumsum(1)),
    ("cumprod", (P,), lambda m, a: m.cumprod(a, 0), lambda a: a.cumprod(0)),
    ("logcumsumexp", (A,), lambda m, a: m.logcumsumexp(a, 1), lambda a: np.logaddexp.accumulate(a, 1)),
    ("cummax_values", (A,), lambda m, a: m.cummax(a, 1)[0], lambda a: np.maximum.accumulate(a, 1)),
    ("softmax", (A,), lambda m, a: m.softmax(a, dim=1), lambda a: _softmax(a, 1)),
    ("log_softmax", (A,), lambda m, a: m.log_softmax(a, dim=0), lambda a: np.log(_softmax(a, 0))),
    ("layer_norm", (A, V, V), lambda m, a, w, b: m.nn.functional.layer_norm(a, (7,), w, b),
     lambda a, w, b: (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5) * w + b),
    # shape and indexing
    ("transpose", (M,), lambda m, a: m.transpose(a, 0, 2), lambda a: a.swapaxes(0, 2)),
    ("permute", (M,), lambda m, a: m.permute(a, (1, 2, 0)), lambda a: a.transpose(1, 2, 0)),
    ("cat", (A, B), lambda m, a, b: m.cat([a, b], 1), lambda a, b: np.concatenate([a, b], 1)),
    ("stack", (A, B), lambda m, a, b: m.stack([a, b], 0), lambda a, b: np.stack([a, b])),
    ("split", (A,), lambda m, a: m.split(a, 3, 1)[2], lambda a: a[:, 6:]),
    ("split_sections", (A,), lambda m, a: m.split(a, [2, 3], 0)[1], lambda a: a[2:]),
    ("chunk", (A,), lambda m, a: m.chunk(a, 3, 1)[1], lambda a: a[:, 3:6]),
    ("repeat", (V,), lambda m, a: a.repeat(2, 3), lambda a: np.tile(a, (2, 3))),
    ("roll", (A,), lambda m, a: m.roll(a, 2, 1), lambda a: np.roll(a, 2, 1)),
    ("roll_flat", (A,), lambda m, a: m.roll(a, 3), lambda a: np.roll(a, 3)),
    ("index_select", (A, IDX), lambda m, a, i: m.index_select(a, 0, i), lambda a, i: a[i]),
    ("gather", (A, GIDX), lambda m, a, i: m.gather(a, 1, i), lambda a, i: np.take_along_axis(a, i, 1)),
    ("masked_select", (A, MASK), lambda m, a, k: m.masked_select(a, k), lambda a, k: a[k]),
    ("reshape", (M,), lambda m, a: m.reshape(a, (5, -1)), lambda a: a.reshape(5, -1)),
    ("flatten", (M,), lambda m, a: m.flatten(a, 1), lambda a: a.reshape(3, -1)),
    ("squeeze_unsqueeze", (V,), lambda m, a: m.squeeze(m.unsqueeze(a, 0)), lambda a: a),
    ("narrow", (A,), lambda m, a: m.narrow(a, 1, 2, 3), lambda a: a[:, 2:5]),
    ("diagonal", (A,), lambda m, a: m.diagonal(a, 1), lambda a: np.diagonal(a, 1)),
    ("embedding", (IDX, A), lambda m, i, w: m.nn.functional.embedding(i, w), lambda i, w: w[i]),
    # matrix products
    ("matmul", (M, N), lambda m, a, b: m.matmul(a, b), np.matmul),
    ("matmul_vec", (A, V), lambda m, a, v: m.matmul(a, v), np.matmul),
    ("mm", (A, B), lambda m, a, b: m.mm(a, b.t()), lambda a, b: a @ b.T),
    ("bmm", (M, N), lambda m, a, b: m.bmm(a, b), np.matmul),
    ("dot", (V, V), lambda m, a, b: m.dot(a, b), np.dot),
    ("mv", (A, V), lambda m, a, b: m.mv(a, b), np.dot),
    ("linear", (A, B, V[:5]), lambda m, x, w, b: m.nn.functional.linear(x, w, b), lambda x, w, b: x @ w.T + b),
    ("linear_3d_no_bias", (M, M[0]), lambda m, x, w: m.nn.functional.linear(x, w), lambda x, w: x @ w.T),
]

# ---- the families bound later (linalg, fft, sparse, nn): the same table form ----
S64 = rng.standard_normal((4, 4))
SPD = S64 @ S64.T + 4 * np.eye(4)  # symmetric positive-definite, float64
G64 = rng.standard_normal((5, 3))
R64 = rng.standard_normal((4, 2))
R53 = rng.standard_normal((5, 2))
SIG = rng.standard_normal((3, 8)).astype(np.float32)
SIG2 = rng.standard_normal((4, 6)).astype(np.float32)
SPEC = (rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(np.complex64)
D = np.where(A > 0.5, A, 0).astype(np.float32)  # a sparse-ish 5 x 7
DB = rng.standard_normal((7, 3)).astype(np.float32)
CROW = np.array([0, 2, 2, 3], np.int64)
CCOL = np.array([0, 3, 1], np.int64)
CVAL = np.array([1.0, 2.0, 3.0], np.float32)
COOI = np.array([[0, 2, 0], [1, 0, 1]], np.int64)  # (0, 1) twice: the values add up
X4 = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
W4 = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
B4 = rng.standard_normal(4).astype(np.float32)
LOGITS = rng.standard_normal((6, 5)).astype(np.float32)
TARGET = np.array([0, 4, 2, -100, 1, 3], np.int64)
Q = rng.standard_normal((2, 2, 5, 4)).astype(np.float32)
K = rng.standard_normal((2, 2, 6, 4)).astype(np.float32)
VV = rng.standard_normal((2, 2, 6, 3)).astype(np.float32)
AMASK = rng.random((5, 6)) > 0.3
IG3 = rng.standard_normal((3, 12)).astype(np.float32)
HX = rng.standard_normal((3, 4)).astype(np.float32)
IG4 = rng.standard_normal((3, 16)).astype(np.float32)
BI3 = rng.standard_normal(12).astype(np.float32)
BH3 = rng.standard_normal(12).astype(np.float32)
WHH3 = rng.standard_normal((12, 4)).astype(np.float32)
WHH4 = rng.standard_normal((16, 4)).astype(np.float32)
H4 = rng.standard_normal((3, 4)).astype(np.float32)


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _conv2d(x, w, b, stride, pad, dil=1):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dil * (r - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dil * (s - 1) - 1) // stride + 1
    out = np.zeros((n, k, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + dil * (r - 1) + 1:dil, j * stride:j * stride + dil * (s - 1) + 1:dil]
            out[:, :, i, j] = np.einsum("ncrs,kcrs->nk", patch, w)
    return out + (0 if b is None else b[None, :, None, None])


def _pool(x, k, stride, pad, reduce, fill):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=fill)
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = reduce(xp[:, :, i * stride:i * stride + k, j * stride:j * stride + k], axis=(2, 3))
    return out


def _avg_pool_no_pad(x, k, stride, pad):
    ones = np.ones_like(x)
    return _pool(x, k, stride, pad, np.sum, 0) / _pool(ones, k, stride, pad, np.sum, 0)


def _adaptive(x, oh, ow):
    h, w = x.shape[-2:]
    out = np.zeros(x.shape[:-2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, r1 = (i * h) // oh, -((-(i + 1) * h) // oh)
            c0, c1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            out[..., i, j] = x[..., r0:r1, c0:c1].mean((-2, -1))
    return out


def _cross_entropy(z, t, reduction="mean", smoothing=0.0, ignore=-100):
    logp = z - np.log(np.exp(z - z.max(1, keepdims=True)).sum(1, keepdims=True)) - z.max(1, keepdims=True)
    keep = t != ignore
    nll = -logp[np.arange(len(t)), np.where(keep, t, 0)]
    loss = np.where(keep, (1 - smoothing) * nll - smoothing * logp.mean(1), 0)
    return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / keep.sum()}[reduction]


def _attention(q, k, v, mask=None, causal=False):
    s = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    return _softmax(s, -1) @ v


def _gru(ig, hg, hx, bi, bh):
    ig, hg = ig + bi, hg + bh
    h = hx.shape[1]
    r = _sig(ig[:, :h] + hg[:, :h])
    z = _sig(ig[:, h:2 * h] + hg[:, h:2 * h])
    n = np.tanh(ig[:, 2 * h:] + r * hg[:, 2 * h:])
    return (1 - z) * n + z * hx


def _lstm(ig, hg, cx):
    g = ig + hg
    h = cx.shape[1]
    i, f, c, o = _sig(g[:, :h]), _sig(g[:, h:2 * h]), np.tanh(g[:, 2 * h:3 * h]), _sig(g[:, 3 * h:])
    cy = f * cx + i * c
    return o * np.tanh(cy), cy


def _gru_call(m, ig, hx, whh, bi, bh):
    """ferrite's fused cell takes both gate products (torch._thnn_fused_gru_cell, CUDA only in
    torch); torch.gru_cell makes them from weights: an identity w_ih and w_hh give the same."""
    if hasattr(m.nn, "gru_cell"):
        return m.nn.gru_cell(ig, m.matmul(hx, whh, transpose_b=True), hx, bi, bh)[0]
    return m.gru_cell(ig, hx, m.eye(ig.shape[1], dtype=ig.dtype, device=ig.device), whh, bi, bh)


def _lstm_call(m, ig, h, cx, whh):
    if hasattr(m.nn, "lstm_cell"):
        return m.nn.lstm_cell(ig, m.matmul(h, whh, transpose_b=True), cx)[:2]
    return m.lstm_cell(ig, (h, cx), m.eye(ig.shape[1], dtype=ig.dtype, device=ig.device), whh)


def _recon_eigh(m, a):
    w, v = m.linalg.eigh(a)
    return m.matmul(v * w.unsqueeze(-2), v.mT)


def _recon_svd(m, a):
    u, s, vh = m.linalg.svd(a, full_matrices=False)
    return m.matmul(u * s.unsqueeze(-2), vh)


OPS += [
    # linalg (float64)
    ("linalg_cholesky", (SPD,), lambda m, a: m.linalg.cholesky(a), np.linalg.cholesky),
    ("linalg_cholesky_upper", (SPD,), lambda m, a: m.linalg.cholesky(a, upper=True), lambda a: np.linalg.cholesky(a).T),
    ("linalg_cholesky_ex", (SPD,), lambda m, a: m.linalg.cholesky_ex(a).L, np.linalg.cholesky),
    ("linalg_solve", (SPD, R64), lambda m, a, b: m.linalg.solve(a, b), np.linalg.solve),
    ("linalg_solve_vector", (SPD, R64[:, 0].copy()), lambda m, a, b: m.linalg.solve(a, b), np.linalg.solve),
    ("linalg_solve_ex", (SPD, R64), lambda m, a, b: m.linalg.solve_ex(a, b).result, np.linalg.solve),
    ("linalg_inv", (SPD,), lambda m, a: m.linalg.inv(a), np.linalg.inv),
    ("linalg_eigh_values", (SPD,), lambda m, a: m.linalg.eigh(a).eigenvalues, np.linalg.eigvalsh),
    ("linalg_eigh_reconstructs", (SPD,), _recon_eigh, lambda a: a),
    ("linalg_eigvalsh_upper", (SPD,), lambda m, a: m.linalg.eigvalsh(a, UPLO="U"), np.linalg.eigvalsh),
    ("linalg_svdvals", (G64,), lambda m, a: m.linalg.svdvals(a), lambda a: np.linalg.svd(a, compute_uv=False)),
    ("linalg_svd_values", (G64,), lambda m, a: m.linalg.svd(a).S, lambda a: np.linalg.svd(a, compute_uv=False)),
    ("linalg_svd_reconstructs", (G64,), _recon_svd, lambda a: a),
    ("linalg_qr_reconstructs", (G64,), lambda m, a: m.matmul(*m.linalg.qr(a)), lambda a: a),
    ("linalg_qr_complete_q", (G64,), lambda m, a: m.linalg.qr(a, mode="complete").Q.abs(),
     lambda a: np.abs(np.linalg.qr(a, mode="complete")[0])),
    ("linalg_qr_r", (G64,), lambda m, a: m.linalg.qr(a, mode="r")[1].abs(), lambda a: np.abs(np.linalg.qr(a, mode="r"))),
    ("linalg_lu_reconstructs", (S64,), lambda m, a: m.matmul(m.matmul(*m.linalg.lu(a)[:2]), m.linalg.lu(a).U),
     lambda a: a),
    ("linalg_lu_factor_solve", (S64, R64), lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b),
     np.linalg.solve),
    ("linalg_lu_factor_pivots", (S64,), lambda m, a: m.linalg.lu_factor(a).pivots.long(), None),
    ("linalg_lstsq", (G64, R53), lambda m, a, b: m.linalg.lstsq(a, b).solution,
     lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0]),
    # fft (float32 / complex64)
    ("fft", (SIG,), lambda m, x: m.fft.fft(x), lambda x: np.fft.fft(x)),
    ("fft_n_dim_ortho", (SIG,), lambda m, x: m.fft.fft(x, n=5, dim=0, norm="ortho"),
     lambda x: np.fft.fft(x, n=5, axis=0, norm="ortho")),
    ("ifft", (SPEC,), lambda m, x: m.fft.ifft(x), np.fft.ifft),
    ("rfft", (SIG,), lambda m, x: m.fft.rfft(x, n=10), lambda x: np.fft.rfft(x, n=10)),
    ("irfft", (SPEC,), lambda m, x: m.fft.irfft(x, n=8, norm="forward"), lambda x: np.fft.irfft(x, n=8, norm="forward")),
    ("hfft", (SPEC,), lambda m, x: m.fft.hfft(x), np.fft.hfft),
    ("ihfft", (SIG,), lambda m, x: m.fft.ihfft(x), np.fft.ihfft),
    ("fft2", (SIG2,), lambda m, x: m.fft.fft2(x), np.fft.fft2),
    ("ifft2_s", (SPEC,), lambda m, x: m.fft.ifft2(x, s=(4, 4)), lambda x: np.fft.ifft2(x, s=(4, 4))),
    ("rfft2", (SIG2,), lambda m, x: m.fft.rfft2(x, norm="ortho"), lambda x: np.fft.rfft2(x, norm="ortho")),
    ("irfft2", (SPEC,), lambda m, x: m.fft.irfft2(x), np.fft.irfft2),
    ("fftn_dim", (SIG2,), lambda m, x: m.fft.fftn(x, dim=(0,)), lambda x: np.fft.fftn(x, axes=(0,))),
    ("ifftn", (SPEC,), lambda m, x: m.fft.ifftn(x), np.fft.ifftn),
    ("rfftn_s", (SIG2,), lambda m, x: m.fft.rfftn(x, s=(3, 4)), lambda x: np.fft.rfftn(x, s=(3, 4), axes=(0, 1))),
    ("irfftn", (SPEC,), lambda m, x: m.fft.irfftn(x, s=(3, 6)), lambda x: np.fft.irfftn(x, s=(3, 6), axes=(0, 1))),
    ("fftshift", (SIG2,), lambda m, x: m.fft.fftshift(x), np.fft.fftshift),
    ("ifftshift_dim", (SIG,), lambda m, x: m.fft.ifftshift(x, dim=1), lambda x: np.fft.ifftshift(x, axes=1)),
    # sparse
    ("sparse_csr_mv", (D, DB[:, 0].copy()), lambda m, d, v: d.to_sparse_csr() @ v, lambda d, v: d @ v),
    ("sparse_csr_mm", (D, DB), lambda m, d, b: d.to_sparse_csr() @ b, lambda d, b: d @ b),
    ("sparse_coo_mm", (D, DB), lambda m, d, b: m.sparse.mm(d.to_sparse(), b), lambda d, b: d @ b),
    ("sparse_csc_to_dense", (D,), lambda m, d: d.to_sparse_csc().to_dense(), lambda d: d),
    ("sparse_crow_indices", (D,), lambda m, d: d.to_sparse_csr().crow_indices(),
     lambda d: np.concatenate([[0], np.cumsum((d != 0).sum(1))])),
    ("sparse_csr_values", (D,), lambda m, d: d.to_sparse_csr().values(), lambda d: d[d != 0]),
    ("sparse_csr_tensor", (CROW, CCOL, CVAL), lambda m, r, c, v: m.sparse_csr_tensor(r, c, v, (3, 4)).to_dense(),
     lambda r, c, v: np.array([[1, 0, 0, 2], [0, 0, 0, 0], [0, 3, 0, 0]], np.float32)),
    ("sparse_coo_tensor", (COOI, CVAL), lambda m, i, v: m.sparse_coo_tensor(i, v, (3, 2)).to_dense(),
     lambda i, v: np.array([[0, 4], [0, 0], [2, 0]], np.float32)),
    # nn
    ("conv2d", (X4, W4, B4), lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, stride=2, padding=1),
     lambda x, w, b: _conv2d(x, w, b, 2, 1)),
    ("conv2d_dilated", (X4, W4), lambda m, x, w: m.nn.functional.conv2d(x, w, padding=2, dilation=2),
     lambda x, w: _conv2d(x, w, None, 1, 2, 2)),
    ("conv2d_same", (X4, W4), lambda m, x, w: m.nn.functional.conv2d(x, w, padding="same"),
     lambda x, w: _conv2d(x, w, None, 1, 1)),
    ("conv2d_valid", (X4, W4), lambda m, x, w: m.nn.functional.conv2d(x, w, padding="valid", dilation=2),
     lambda x, w: _conv2d(x, w, None, 1, 0, 2)),
    ("max_pool2d", (X4,), lambda m, x: m.nn.functional.max_pool2d(x, 3, stride=2, padding=1),
     lambda x: _pool(x, 3, 2, 1, np.max, -np.inf)),
    ("max_pool2d_indices", (X4,), lambda m, x: m.nn.functional.max_pool2d(x, (2, 2), return_indices=True)[1], None),
    ("avg_pool2d", (X4,), lambda m, x: m.nn.functional.avg_pool2d(x, 3, 2, 1), lambda x: _pool(x, 3, 2, 1, np.sum, 0) / 9),
    ("avg_pool2d_no_pad_count", (X4,), lambda m, x: m.nn.functional.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
     lambda x: _avg_pool_no_pad(x, 3, 2, 1)),
    ("adaptive_avg_pool2d", (X4,), lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (4, 5)),
     lambda x: _adaptive(x, 4, 5)),
    ("cross_entropy", (LOGITS, TARGET), lambda m, z, t: m.nn.functional.cross_entropy(z, t), _cross_entropy),
    ("cross_entropy_none_smooth", (LOGITS, TARGET),
     lambda m, z, t: m.nn.functional.cross_entropy(z, t, reduction="none", label_smoothing=0.2),
     lambda z, t: _cross_entropy(z, t, "none", 0.2)),
    ("cross_entropy_sum", (LOGITS, TARGET), lambda m, z, t: m.nn.functional.cross_entropy(z, t, reduction="sum"),
     lambda z, t: _cross_entropy(z, t, "sum")),
    ("attention", (Q, K, VV), lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v), _attention),
    ("attention_causal", (Q, K, VV), lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(
        q, k, v, is_causal=True), lambda q, k, v: _attention(q, k, v, causal=True)),
    ("attention_bool_mask", (Q, K, VV, AMASK), lambda m, q, k, v, mask: m.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=mask), lambda q, k, v, mask: _attention(q, k, v, mask)),
    ("gru_cell", (IG3, HX, WHH3, BI3, BH3), _gru_call,
     lambda ig, hx, whh, bi, bh: _gru(ig, hx @ whh.T, hx, bi, bh)),
    ("lstm_cell_hy", (IG4, H4, HX, WHH4), lambda m, *xs: _lstm_call(m, *xs)[0],
     lambda ig, h, cx, whh: _lstm(ig, h @ whh.T, cx)[0]),
    ("lstm_cell_cy", (IG4, H4, HX, WHH4), lambda m, *xs: _lstm_call(m, *xs)[1],
     lambda ig, h, cx, whh: _lstm(ig, h @ whh.T, cx)[1]),
]
