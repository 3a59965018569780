"""Infinite-width NTK and NNGP Gram matrices between point sets, in float64,
computed by neural-tangents in fixed-size blocks (one compilation) after a
memory check."""
from __future__ import annotations

import functools

from ntkgap import _compat  # noqa: F401  (x64 and no TensorFlow, before jax)
import jax
import numpy as np

from ntkgap import memory
from ntkgap.errors import UsageError

KINDS = ("ntk", "nngp")


@functools.lru_cache(maxsize=32)
def _block_fn(arch, kind):
    kfn = arch.kernel_fn
    return jax.jit(lambda a, b: kfn(a, b, kind))


def gram(arch, x1, x2=None, *, kind: str = "ntk", block: int = 2048) -> np.ndarray:
    """K(x1, x2) for network inputs (already through ``arch.inputs``)."""
    if kind not in KINDS:
        raise UsageError(f"kernel kind '{kind}' is not allowed (allowed: {', '.join(KINDS)})")
    x1 = np.asarray(x1, dtype=np.float64)
    sym = x2 is None
    x2 = x1 if sym else np.asarray(x2, dtype=np.float64)
    n1, n2 = len(x1), len(x2)
    per_entry = 8 * (1 + (2 if arch.name == "tree" else 0))
    memory.check(8.0 * n1 * n2 + 6.0 * per_entry * min(block, n1) * min(block, n2),
                 f"a {n1} x {n2} {kind.upper()} Gram")
    out = np.empty((n1, n2))
    fn = _block_fn(arch, kind)
    b1, b2 = min(block, n1), min(block, n2)

    def padded(x, start, size):
        part = x[start:start + size]
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
            out[i:i + ni, j:j + nj] = blk[:ni, :nj]
            if sym and j > i:
                out[j:j + nj, i:i + ni] = blk[:ni, :nj].T
    return out
