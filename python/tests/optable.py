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
]
