"""Exact tree-NTK (and NNGP) Grams on +-1 inputs by the node recursion over
types, for any number of leaves (32 and 64 included).

The kernel of ``tree:arity=a,L=L`` depends on a pair (x, y) only through
z = x * y on its leaves, and a node's (Sigma, Theta) only through its
*type*, the multiset of its children's types (``ntkgap.kernels.tree_eigen``:
finitely many per height). So an entry of the Gram needs no dual map per
node: the leaves are cut into blocks of one subtree each (height h0, at most
``BLOCK_LEAVES`` leaves), each row's block is coded as an integer (bit set:
leaf -1), and the subtree's type is a table look-up at code(x) XOR code(y);
the heights above combine child types by look-up in the ordered-tuple ->
type tables; the root reads a table of the readout over ordered tuples of
its children's types while that table has at most ``ROOT_TABLE_MAX``
entries, else evaluates the readout's dual on the entries (closed-form
activations only). Every number comes from the same float64 recursion as
the eigenvalues; tests compare the Gram with neural-tangents' kernel_fn at
every depth 1..6.
"""

from __future__ import annotations

import functools

import numpy as np

from ntkgap._infra import memory
from ntkgap.kernels import dual
from ntkgap.kernels.tree_eigen import node_types

# leaves per coded block: its type table has 2^BLOCK_LEAVES entries
BLOCK_LEAVES = 16
# most entries of the root's table over ordered tuples of child types
ROOT_TABLE_MAX = 2**22
# rows per pass (bounds the temporaries: a few int/float arrays of rows x n2)
ROWS = 512


def supported(arch) -> bool:
    """Whether ``gram`` serves this tree arch (its root either fits a table
    or has a closed-form dual to evaluate per entry).

    Args:
        arch: a parsed ``tree`` arch.

    Returns:
        bool.
    """
    return _plan(arch)[2] or arch.spec["act"] in dual.CLOSED


@functools.lru_cache(maxsize=16)
def _plan(arch):
    """(NodeTypes, h0, whether the root is a table)."""
    a, L = arch.spec["arity"], arch.spec["L"]
    h0 = 0
    while h0 + 1 <= L - 1 and a ** (h0 + 1) <= BLOCK_LEAVES:
        h0 += 1
    nt = node_types_cached(arch)
    n_child = 2 if L == 1 else nt.combos[L - 1].shape[0]
    return nt, h0, n_child**a <= ROOT_TABLE_MAX


@functools.lru_cache(maxsize=16)
def node_types_cached(arch):
    """:func:`node_types`, memoised per arch (a Gram is built block by block).

    Args:
        arch: a ``tree`` architecture (hashable).

    Returns:
        the arch's node types, as :func:`node_types` builds them.
    """
    return node_types(arch)


def _n_types(nt, h: int) -> int:
    """Number of node types at height h (h = 0: the two leaf types)."""
    return 2 if h == 0 else nt.combos[h].shape[0]


@functools.lru_cache(maxsize=32)
def _block_table(arch, h0: int) -> np.ndarray:
    """Type (at height h0) of every leaf sign pattern of one subtree (bit j
    set: leaf j has z = -1), shape (2^(a^h0),)."""
    nt = node_types_cached(arch)
    a, m = nt.arity, nt.arity**h0
    codes = np.arange(2**m, dtype=np.int64)
    t = (codes[:, None] >> np.arange(m)) & 1  # leaf types
    for h in range(1, h0 + 1):
        t = _combine(t.reshape(len(codes), -1, a), nt.to_multiset[h], _n_types(nt, h - 1))
    return t[:, 0].astype(np.int32)


def _combine(kids, to_ms, n_prev: int):
    """Node types from ordered child types ``kids`` (..., a), through the
    ordered-tuple table ``to_ms`` (C order over range(n_prev)^a)."""
    code = kids[..., 0].astype(np.int64)
    for c in range(1, kids.shape[-1]):
        code = code * n_prev + kids[..., c]
    return to_ms[code].astype(np.int32)


@functools.lru_cache(maxsize=16)
def _root_table(arch, kind: str) -> np.ndarray:
    nt = node_types_cached(arch)
    a, n = nt.arity, nt.u.size
    idx = np.indices((n,) * a).reshape(a, -1).T
    return nt.root_kernel(nt.u[idx].mean(1), nt.w[idx].mean(1), kind)


def _codes(x, a: int, h0: int) -> np.ndarray:
    """Per row, the integer code of each block of a^h0 leaves (bit j of a
    block's code set: its j-th leaf is -1), shape (n, blocks)."""
    bits = (np.asarray(x)[..., 0] < 0).astype(np.int32)
    m = a**h0
    blocks = bits.reshape(len(bits), -1, m)
    return blocks @ (np.int32(1) << np.arange(m, dtype=np.int32))


def gram(arch, x1, x2=None, *, kind: str = "ntk") -> np.ndarray:
    """Gram matrix of a ``tree`` arch's infinite-width kernel on +-1 inputs.

    Args:
        arch: a parsed ``tree`` arch with ``supported(arch)``.
        x1: inputs as ``arch.inputs`` gives them, shape (n1, leaves, 1), +-1.
        x2: the same, n2 rows; None for K(x1, x1).
        kind: "ntk" or "nngp".

    Returns:
        float64 array of shape (n1, n2).

    References: Jacot et al. 2018 and Arora et al. 2019 (NTK recursion),
    Novak et al. 2019 (locally connected layers); see the module docstring.
    """
    nt, h0, table_root = _plan(arch)
    a, L = nt.arity, nt.L
    c1 = _codes(x1, a, h0)
    c2 = c1 if x2 is None else _codes(x2, a, h0)
    n1, n2, blocks = len(c1), len(c2), c1.shape[1]
    rows = max(1, min(n1, ROWS))
    memory.check(8.0 * n1 * n2 + 24.0 * rows * n2 * blocks, f"a {n1} x {n2} tree Gram")
    table = _block_table(arch, h0)
    root = _root_table(arch, kind) if table_root else None
    n_child = _n_types(nt, L - 1)
    out = np.empty((n1, n2))
    for i in range(0, n1, rows):
        t = table[c1[i : i + rows, None, :] ^ c2[None, :, :]]
        for h in range(h0 + 1, L):
            t = _combine(t.reshape(t.shape[0], n2, -1, a), nt.to_multiset[h], _n_types(nt, h - 1))
        if root is not None:
            code = t[..., 0].astype(np.int64)
            for c in range(1, a):
                code = code * n_child + t[..., c]
            np.take(root, code, out=out[i : i + rows])
        else:
            u, w = nt.u[t].mean(-1), nt.w[t].mean(-1)
            out[i : i + rows] = nt.root_kernel(u, w, kind)
    return out
