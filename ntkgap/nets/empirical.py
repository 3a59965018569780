"""Empirical NTKs of finite networks built from the architecture specs, and
how far their parameters moved in training.

The empirical NTK of a network f(theta, x) with one output is
Theta(x, x') = <grad_theta f(theta, x), grad_theta f(theta, x')> (Jacot,
Gabriel & Hongler 2018), here at any parameters: at initialisation, and at
a trained checkpoint, where it is the "after kernel" (Long 2021; Fort et
al. 2020). It is computed by neural-tangents' ``empirical_ntk_fn`` on the
same apply_fn that :mod:`ntkgap.nets.training` trains (``arch.stax(width)``,
both ``fc`` and ``tree``), in fixed-size blocks of points (every block
padded to ``BLOCK`` rows: one compiled program for every n), in float64 by
default: the Gram is solved by Cholesky (:mod:`ntkgap.kernels.krr`), and a
float32 Jacobian would leave ~1e-7 relative error on a Gram whose
condition number can reach 1e8.

Implementation: ``IMPLEMENTATION = 1``, the Jacobian contraction J1 J2^T
(Novak, Sohl-Dickstein & Schoenholz, "Fast Finite Width Neural Tangent
Kernel", ICML 2022). With one output it costs one Jacobian row per point
and one GEMM per block pair; implementation 2 (NTK-vector products) agrees
with it (tests/test_compat.py) but runs a forward-backward pass per column
of the other block, and implementation 3 (structured derivatives) fails on
both JAX stacks (``ad.linearize() got multiple values for argument
'has_aux'``, issue #28).

The trained model may be a scaled copy of the network (``alpha (f - f0)``,
muP's readout 1/sqrt(width); :mod:`ntkgap.nets.training`): its NTK is then
a constant multiple of this one, which changes no kernel regression
predictor, no alignment, rank or eigenspace share.
"""

from __future__ import annotations

import functools

import jax
import numpy as np

from ntkgap._infra import compat, memory
from ntkgap._infra.compat import nt
from ntkgap.errors import UsageError

# Jacobian contraction (see the module docstring for why not 2 or 3)
IMPLEMENTATION = 1
# points per block: every block is padded to it (one compiled program)
BLOCK = 128


@functools.lru_cache(maxsize=16)
def _block_fn(arch, width: int):
    apply_fn = arch.stax(width)[1]
    fn = nt.empirical_ntk_fn(apply_fn, trace_axes=(-1,), vmap_axes=0, implementation=IMPLEMENTATION)
    return jax.jit(fn, compiler_options=compat.kernel_compiler_options())


def cast(params, dtype=np.float64):
    """A parameter tree with every leaf as a numpy array of ``dtype``.

    Args:
        params: a stax parameter tree (JAX or numpy leaves).
        dtype: the leaves' dtype.

    Returns:
        The tree, same structure.
    """
    return jax.tree_util.tree_map(lambda p: np.asarray(p, dtype), params)


def n_params(params) -> int:
    """The number of parameters in a tree (one network, no seed axis).

    Args:
        params: a stax parameter tree.

    Returns:
        int: the total size of its leaves.
    """
    return int(sum(np.size(p) for p in jax.tree_util.tree_leaves(params)))


def empirical_ntk(
    arch, width: int, params, x1, x2=None, *, block: int = BLOCK, dtype=np.float64
) -> np.ndarray:
    """Gram matrix of the empirical NTK of ``arch``'s network at ``params``.

    Args:
        arch: a parsed architecture (``fc`` or ``tree``).
        width: the network's hidden width (as trained).
        params: its parameter tree (one network, e.g. an entry of
            ``train(..., return_params=True)["params_final"]``).
        x1: network inputs (through ``arch.inputs``), n1 rows.
        x2: network inputs, n2 rows; None for the symmetric K(x1, x1).
        block: points per block (each padded to it).
        dtype: the dtype the Jacobians are computed in (float64 by default;
            see the module docstring).

    Returns:
        float64 array of shape (n1, n2) (n1 x n1 when x2 is None).

    References:
        Jacot, Gabriel & Hongler, "Neural Tangent Kernel", 2018; Novak,
        Sohl-Dickstein & Schoenholz, "Fast Finite Width Neural Tangent
        Kernel", ICML 2022.
    """
    if block < 1:
        raise UsageError(f"empirical NTK: block={block} must be >= 1")
    sym = x2 is None
    x1 = np.asarray(x1, dtype)
    x2 = x1 if sym else np.asarray(x2, dtype)
    n1, n2 = len(x1), len(x2)
    p = cast(params, dtype)
    b1, b2 = min(block, n1), min(block, n2)
    item = np.dtype(dtype).itemsize
    memory.check(
        8.0 * n1 * n2 + item * n_params(p) * (b1 + b2) * 2,
        f"a {n1} x {n2} empirical NTK of {n_params(p)} parameters",
    )
    fn = _block_fn(arch, width)
    out = np.empty((n1, n2))
    for i in range(0, n1, b1):
        xi = _padded(x1, i, b1)
        for j in range(0, n2, b2):
            if sym and j < i:
                continue
            blk = np.asarray(fn(xi, _padded(x2, j, b2), p), np.float64)
            ni, nj = min(b1, n1 - i), min(b2, n2 - j)
            out[i : i + ni, j : j + nj] = blk[:ni, :nj]
            if sym and j > i:
                out[j : j + nj, i : i + ni] = blk[:ni, :nj].T
    return out


def _padded(x, start: int, size: int):
    """Rows start..start+size of x, the last repeated to fill the block."""
    part = x[start : start + size]
    if len(part) < size:
        part = np.concatenate([part, np.repeat(part[-1:], size - len(part), axis=0)])
    return part


def weight_movement(params0, params) -> float:
    """Relative weight movement ||theta - theta_0|| / ||theta_0||.

    Euclidean norms over every parameter of the network together (weights
    and biases), as trained (NTK parametrisation: the weights' standard
    normal entries, not the scaled matrices). Lazy training keeps it small
    (O(1/sqrt(width)), or O(1/alpha) for the alpha model; Chizat, Oyallon
    & Bach 2019).

    Args:
        params0: the initial parameter tree.
        params: the parameter tree after training (same structure).

    Returns:
        float: the relative movement (0 when nothing moved).

    References:
        Chizat, Oyallon & Bach, "On Lazy Training in Differentiable
        Programming", NeurIPS 2019.
    """
    a = jax.tree_util.tree_leaves(cast(params0))
    b = jax.tree_util.tree_leaves(cast(params))
    if len(a) != len(b) or any(u.shape != v.shape for u, v in zip(a, b)):
        raise UsageError("weight movement: the two parameter trees differ in shape")
    moved = sum(float(np.sum((v - u) ** 2)) for u, v in zip(a, b))
    norm0 = sum(float(np.sum(u**2)) for u in a)
    if norm0 == 0.0:
        raise UsageError("weight movement: the initial parameters are all zero")
    return float(np.sqrt(moved / norm0))
