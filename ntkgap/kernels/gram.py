"""Infinite-width NTK and NNGP Gram matrices between point sets, in float64,
computed by neural-tangents in fixed-size blocks (one compilation) after a
memory check.

On the hypercube an ``fc`` kernel is a function of <x, y> alone (every
point has norm^2 = d, and a fully connected network's NTK and NNGP depend
only on <x, y>, |x|^2 and |y|^2; Jacot et al. 2018, Lee et al. 2019), and
<x, y> = d - 2 j takes just d + 1 values. So for +-1 inputs ``gram``
evaluates neural-tangents' kernel_fn once per value of j and fills the Gram
by table look-up at j = (d - X1 X2^T) / 2: the same numbers as the blocked
kernel_fn path (tests compare the two), at the cost of one integer-valued
matmul instead of n^2 closed-form kernel evaluations.

A ``tree`` kernel is not a dot-product kernel, but it depends on x and y
only through z = x * y on its s leaves (each locally connected unit sees
<x_p, y_p> and |x_p|^2 = arity; per-coordinate sign flips are symmetries).
So for +-1 inputs with s <= ``TREE_LOOKUP_MAX_LEAVES`` ``gram`` evaluates
kernel_fn once on the 2^s pairs (1, z) and reads entry (i, j) at the leaf
index of x_i XOR the index of x_j: exact, and memory-bound. Larger trees
(32, 64 leaves) take ``ntkgap.kernels.tree_gram``: the same idea per subtree
of 16 leaves, the node types combined up the tree by table look-up (about
25x faster than kernel_fn at 32 leaves; benchmarks/tree_gram.py).

One-hot inputs (the random hierarchy model's token strings: 0/1 entries,
shape (positions, v) for a tree, (positions * v,) for fc) take neither
table: ``gram`` runs kernel_fn in blocks of exactly ``ONE_HOT_BLOCK`` rows
and columns (the last block padded), so the adaptive n* searches, which
ask for Grams of many sizes, compile the kernel once per architecture.
"""

from __future__ import annotations

import functools

import jax
import numpy as np

from ntkgap._infra import (
    compat,  # noqa: F401  (x64 and no TensorFlow, before jax)
    memory,
)
from ntkgap.errors import UsageError
from ntkgap.kernels import tree_gram
from ntkgap.spectral import walsh

KINDS = ("ntk", "nngp")
# the look-up table of a tree kernel has 2^leaves entries
TREE_LOOKUP_MAX_LEAVES = 20
# block of one-hot Grams: one compiled shape for every n (see module docstring)
ONE_HOT_BLOCK = 128


@functools.lru_cache(maxsize=32)
def _block_fn(arch, kind):
    kfn = arch.kernel_fn
    return jax.jit(lambda a, b: kfn(a, b, kind), compiler_options=compat.kernel_compiler_options())


def _pm1(x) -> bool:
    return x.ndim == 2 and x.size > 0 and bool(np.all(np.abs(x) == 1.0))


def _one_hot(x) -> bool:
    return x.size > 0 and bool(np.all((x == 0.0) | (x == 1.0))) and not np.all(x == 1.0)


def hypercube_table(arch, d: int, kind: str = "ntk") -> np.ndarray:
    """Table of an ``fc`` arch's kernel on {-1,+1}^d by Hamming distance.

    h[j] = K(x, y) at any x, y in {-1,+1}^d that differ in j coordinates
    (kernel_fn on d + 1 representative pairs).

    Args:
        arch: a parsed ``fc`` arch.
        d: the hypercube dimension.
        kind: the kernel kind, one of KINDS (``"ntk"`` or ``"nngp"``).

    Returns:
        float64 array of shape (d + 1,): h[j] for j = 0..d.

    References:
        Jacot, Gabriel & Hongler, "Neural Tangent Kernel", 2018.
    """
    ref = np.ones((1, d))
    pts = np.where(np.arange(d)[None, :] < np.arange(d + 1)[:, None], -1.0, 1.0)
    return gram(arch, ref, pts, kind=kind, hypercube_lookup=False)[0]


def gram(
    arch, x1, x2=None, *, kind: str = "ntk", block: int = 2048, hypercube_lookup: bool = True
) -> np.ndarray:
    """Gram matrix K(x1, x2) of ``arch``'s infinite-width kernel.

    With ``hypercube_lookup`` (the default), +-1 inputs of an ``fc`` arch (and
    of small ``tree`` archs) take the exact table look-up path of the module
    docstring; otherwise kernel_fn runs in padded blocks (one-hot inputs:
    blocks of ``ONE_HOT_BLOCK``).

    Args:
        arch: a parsed architecture.
        x1: network inputs (already through ``arch.inputs``), n1 rows.
        x2: network inputs, n2 rows; None for the symmetric K(x1, x1).
        kind: the kernel kind, one of KINDS (``"ntk"`` or ``"nngp"``).
        block: rows and columns per kernel_fn call (at most; one-hot inputs
            use min(block, ONE_HOT_BLOCK) whatever n is).
        hypercube_lookup: whether +-1 inputs may use the table look-up.

    Returns:
        float64 array of shape (n1, n2) (n1 x n1 when x2 is None).

    References:
        Jacot, Gabriel & Hongler, "Neural Tangent Kernel", 2018.
    """
    if kind not in KINDS:
        raise UsageError(f"kernel kind '{kind}' is not allowed (allowed: {', '.join(KINDS)})")
    x1 = np.asarray(x1, dtype=np.float64)
    sym = x2 is None
    x2 = x1 if sym else np.asarray(x2, dtype=np.float64)
    if hypercube_lookup:
        table = _table_gram(arch, x1, x2, sym, kind)
        if table is not None:
            return table
    return _blocked_gram(arch, x1, x2, sym, kind, block)


def _table_gram(arch, x1, x2, sym, kind):
    """The Gram by table look-up (module docstring) when the inputs are +-1
    and the arch has a table: fc, a tree of at most TREE_LOOKUP_MAX_LEAVES
    leaves, or a larger tree ``tree_gram`` supports; else None.

    Args:
        arch: a parsed architecture.
        x1: float64 network inputs, n1 rows.
        x2: float64 network inputs, n2 rows (x1 itself when ``sym``).
        sym: whether the Gram is K(x1, x1).
        kind: the kernel kind, one of KINDS.

    Returns:
        float64 array of shape (n1, n2), or None.
    """
    if (
        arch.name == "fc"
        and x1.shape[1:] == x2.shape[1:]
        and x1.shape[-1] < 2**24
        and _pm1(x1)
        and (sym or _pm1(x2))
    ):
        return _lookup_gram(arch, x1, x2, kind)
    if (
        arch.name == "tree"
        and arch.leaves <= TREE_LOOKUP_MAX_LEAVES
        and x1.shape[1:] == x2.shape[1:] == (arch.leaves, 1)
        and _pm1(x1[..., 0])
        and (sym or _pm1(x2[..., 0]))
    ):
        return _tree_lookup_gram(arch, x1, x2, kind)
    if (
        arch.name == "tree"
        and x1.shape[1:] == x2.shape[1:] == (arch.leaves, 1)
        and tree_gram.supported(arch)
        and _pm1(x1[..., 0])
        and (sym or _pm1(x2[..., 0]))
    ):
        return tree_gram.gram(arch, x1, None if sym else x2, kind=kind)
    return None


def _blocked_gram(arch, x1, x2, sym, kind, block):
    """The Gram from kernel_fn in padded blocks (one compiled shape).

    Args:
        arch: a parsed architecture.
        x1: float64 network inputs, n1 rows.
        x2: float64 network inputs, n2 rows (x1 itself when ``sym``).
        sym: whether the Gram is K(x1, x1): blocks below the diagonal are
            mirrored, not computed.
        kind: the kernel kind, one of KINDS.
        block: rows and columns per kernel_fn call, as for ``gram``.

    Returns:
        float64 array of shape (n1, n2).
    """
    n1, n2 = len(x1), len(x2)
    per_entry = 8 * (1 + (2 if arch.name == "tree" else 0))
    memory.check(
        8.0 * n1 * n2 + 6.0 * per_entry * min(block, n1) * min(block, n2),
        f"a {n1} x {n2} {kind.upper()} Gram",
    )
    out = np.empty((n1, n2))
    fn = _block_fn(arch, kind)
    b1, b2 = min(block, n1), min(block, n2)
    if _one_hot(x1) and (sym or _one_hot(x2)):
        b1 = b2 = min(block, ONE_HOT_BLOCK)

    def padded(x, start, size):
        part = x[start : start + size]
        if len(part) < size:  # pad to the block shape: one compiled kernel
            part = np.concatenate([part, np.repeat(part[-1:], size - len(part), axis=0)])
        return part

    for i in range(0, n1, b1):
        xi = padded(x1, i, b1)
        for j in range(0, n2, b2):
            if sym and j < i:
                continue
            blk = np.asarray(fn(xi, padded(x2, j, b2)))
            ni, nj = min(b1, n1 - i), min(b2, n2 - j)
            out[i : i + ni, j : j + nj] = blk[:ni, :nj]
            if sym and j > i:
                out[j : j + nj, i : i + ni] = blk[:ni, :nj].T
    return out


def _lookup_gram(arch, x1, x2, kind):
    n1, n2, d = len(x1), len(x2), x1.shape[1]
    rows = max(1, min(n1, 1024))
    memory.check(8.0 * n1 * n2 + 16.0 * rows * n2, f"a {n1} x {n2} {kind.upper()} Gram")
    # by agreements a = (d + <x, y>) / 2 = d - j; float32 is exact here:
    # entries are +-1 and |<x, y>| <= d < 2^24, and +0.5 makes the floor safe
    by_agreements = np.ascontiguousarray(hypercube_table(arch, d, kind)[::-1])
    a, b = x1.astype(np.float32), x2.astype(np.float32)
    out = np.empty((n1, n2))
    for i in range(0, n1, rows):
        g = a[i : i + rows] @ b.T
        g += d + 0.5
        g *= 0.5
        np.take(by_agreements, g.astype(np.intp), out=out[i : i + rows])
    return out


@functools.lru_cache(maxsize=8)
def tree_table(arch, kind: str = "ntk") -> np.ndarray:
    """Table of a ``tree`` arch's kernel over all 2^s leaf sign patterns.

    t[i] = K(1, z_i), with z_i's leaf j equal to -1 exactly where bit j of i
    is set (``ntkgap.spectral.walsh``'s order).

    Args:
        arch: a parsed ``tree`` arch with s leaves.
        kind: the kernel kind, one of KINDS (``"ntk"`` or ``"nngp"``).

    Returns:
        float64 array of shape (2^s,).
    """
    s = arch.leaves
    memory.check(8.0 * 2**s * (4 + s), f"a tree-kernel table of 2^{s} entries")
    first, inverse = _tree_orbits(arch.spec["arity"], arch.spec["L"])
    z = walsh.bit_column_matrix(s)[first][:, :, None]
    vals = gram(arch, np.ones((1, s, 1)), z, kind=kind, block=4096, hypercube_lookup=False)[0]
    return vals[inverse]


def _tree_orbits(a: int, L: int):
    """Leaf sign patterns up to reordering the children of every node.

    A tree kernel's node covariance is a symmetric sum over its children
    (independent weights per position), so K(1, z) is the same for every z in
    one orbit: the kernel is evaluated once per orbit (231 of 65,536 patterns
    at arity 2, L = 4) and spread back. Returns (one pattern index per orbit,
    each pattern's orbit)."""
    idx = np.arange(2 ** (a**L), dtype=np.int64)
    code = ((idx[:, None] >> np.arange(a**L)) & 1).astype(np.int32)  # bit set: leaf -1
    for _ in range(L):
        kids = np.sort(code.reshape(len(idx), -1, a), axis=2).reshape(-1, a)
        code = np.unique(kids, axis=0, return_inverse=True)[1].reshape(len(idx), -1)
        code = code.astype(np.int32)
    _, first, inverse = np.unique(code[:, 0], return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _leaf_index(x) -> np.ndarray:
    bits = (np.asarray(x)[..., 0] < 0).astype(np.int64)
    return bits @ (np.int64(1) << np.arange(bits.shape[1], dtype=np.int64))


def _tree_lookup_gram(arch, x1, x2, kind):
    n1, n2 = len(x1), len(x2)
    memory.check(8.0 * n1 * n2 * 2, f"a {n1} x {n2} {kind.upper()} Gram")
    table = tree_table(arch, kind)
    i1, i2 = _leaf_index(x1), _leaf_index(x2)
    out = np.empty((n1, n2))
    rows = max(1, min(n1, 1024))
    for i in range(0, n1, rows):
        np.take(table, np.bitwise_xor(i1[i : i + rows, None], i2[None, :]), out=out[i : i + rows])
    return out
