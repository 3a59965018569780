"""Empirical NTKs of finite networks built from the architecture specs, and
how far their parameters moved in training.

The empirical NTK of a network f(theta, x) with one output is
Theta(x, x') = <grad_theta f(theta, x), grad_theta f(theta, x')> (Jacot,
Gabriel & Hongler 2018), here at any parameters: at initialisation, and at
a trained checkpoint, where it is the "after kernel" (Long 2021; Fort et
al. 2020). It is the kernel of the network that :mod:`ntkgap.nets.training`
trains (``arch.stax(width)``, ``fc`` and ``tree``), computed in blocks of
points (each padded to the block size: one compiled program per block
size), in float64 by default: the Gram is solved by Cholesky
(:mod:`ntkgap.kernels.krr`), and a float32 Jacobian would leave ~1e-7
relative error on a Gram whose condition number can reach 1e8.

Two routes, the same kernel (tests compare them to 1e-10):

* **Structured** (``tree`` nets without shared filters and with one output,
  the default for them): every parameter of a locally connected or Dense layer enters as
  z = s W^T u + b_std b, so its gradient is an outer product, and the layer's
  share of Theta(x, x') is (s^2 <u(x), u(x')> + b_std^2) <delta(x), delta(x')>,
  with u the layer's input patch and delta = df/dz (the structured-derivative
  rule of Novak, Sohl-Dickstein & Schoenholz, "Fast Finite Width Neural
  Tangent Kernel", ICML 2022, written out for these layers). One forward and
  one backward pass per block of points give every u and delta; a
  width-32 tree of depth 5 carries ~2,000 such numbers per point against
  its 32,769 parameters, so the Grams cost ~16x fewer flops than J J^T, and
  each point's features are computed once, not once per block pair.
  neural-tangents' own implementation 3 (structured derivatives; the shim
  makes it run, its peer tests pass) fails on these nets' training apply_fn
  (the position-major tree path: "Transpose rule ... for 'slice' not
  implemented", jax 0.10.2), and on stax's own ConvLocal apply it is several
  times slower than this route, compiling anew for every shape
  (benchmarks/RESULTS.md, "Empirical NTK routes").
* **Jacobian contraction** (``IMPLEMENTATION = 1`` of neural-tangents'
  ``empirical_ntk_fn``; fc nets, shared-filter trees, several outputs):
  J1 J2^T, one Jacobian row per
  point and one GEMM per block pair; implementation 2 (NTK-vector
  products) agrees with it (tests/test_compat.py) but runs a
  forward-backward pass per column of the other block.

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
from ntkgap.nets.arch import local_patches

# Jacobian contraction (see the module docstring for why not 2 or 3)
IMPLEMENTATION = 1
ROUTES = ("auto", "structured", "jacobian")
# points per block: every block is padded to it (one compiled program)
BLOCK = 128
# points per block of the structured route's features (~2,000 numbers a point
# for a width-32 tree of depth 5: ~8 MiB a block in float64)
FEATURE_BLOCK = 512


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


def structured(arch) -> bool:
    """Whether ``arch``'s empirical NTK can take the structured route (a
    ``tree`` without shared filters; its readout must also have one output;
    see the module docstring).

    Args:
        arch: a parsed architecture.

    Returns:
        bool.
    """
    return arch.name == "tree" and not arch.spec["share"]


def _outputs(params) -> int:
    """The readout's units (its Dense weight's last axis)."""
    return int(np.shape(params[-1][0])[-1])


def _route(arch, params, route: str) -> str:
    """``structured`` or ``jacobian``: ``route`` resolved for this network, or
    a one-line UsageError where it is not allowed or cannot be taken."""
    if route not in ROUTES:
        raise UsageError(
            f"empirical NTK: route={route!r} is not allowed (allowed: {', '.join(ROUTES)})"
        )
    can = structured(arch) and _outputs(params) == 1
    if route == "structured" and not can:
        raise UsageError(
            "empirical NTK: route='structured' needs a tree with share=0 and one output, "
            f"not {arch} with {_outputs(params)} outputs"
        )
    return "structured" if can and route != "jacobian" else "jacobian"


def empirical_ntk(
    arch,
    width: int,
    params,
    x1,
    x2=None,
    *,
    block: int | None = None,
    dtype=np.float64,
    route: str = "auto",
) -> np.ndarray:
    """Gram matrix of the empirical NTK of ``arch``'s network at ``params``.

    Args:
        arch: a parsed architecture (``fc`` or ``tree``).
        width: the network's hidden width (as trained).
        params: its parameter tree (one network, e.g. an entry of
            ``train(..., return_params=True)["params_final"]``).
        x1: network inputs (through ``arch.inputs``), n1 rows.
        x2: network inputs, n2 rows; None for the symmetric K(x1, x1).
        block: points per block (each padded to it; default ``BLOCK``, or
            ``FEATURE_BLOCK`` on the structured route).
        dtype: the dtype the Jacobians are computed in (float64 by default;
            see the module docstring).
        route: ``auto`` (structured where the network allows it: a tree
            with share=0 and one output), ``structured`` or ``jacobian``
            (see the module docstring).

    Returns:
        float64 array of shape (n1, n2) (n1 x n1 when x2 is None).

    References:
        Jacot, Gabriel & Hongler, "Neural Tangent Kernel", 2018; Novak,
        Sohl-Dickstein & Schoenholz, "Fast Finite Width Neural Tangent
        Kernel", ICML 2022.
    """
    if block is not None and block < 1:
        raise UsageError(f"empirical NTK: block={block} must be >= 1")
    if _route(arch, params, route) == "structured":
        f1 = _tree_features(arch, width, params, x1, block, dtype)
        f2 = f1 if x2 is None else _tree_features(arch, width, params, x2, block, dtype)
        return _structured_gram(f1, f2, arch.spec, symmetric=x2 is None)
    block = BLOCK if block is None else block
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


def empirical_grams(
    arch, width: int, params, x_train, x_test, *, dtype=np.float64, route: str = "auto"
) -> tuple[np.ndarray, np.ndarray]:
    """The training Gram and the test points' cross Gram of one network, each
    point's features (structured route) computed once.

    Args:
        arch, width, params, dtype, route: as :func:`empirical_ntk`.
        x_train: network inputs of the training points, n rows.
        x_test: network inputs of the test points, m rows.

    Returns:
        tuple: K(x_train, x_train) (n x n) and K(x_test, x_train) (m x n),
        float64.
    """
    if _route(arch, params, route) == "jacobian":
        kw = dict(dtype=dtype, route="jacobian")
        return (empirical_ntk(arch, width, params, x_train, **kw),
                empirical_ntk(arch, width, params, x_test, x_train, **kw))  # fmt: skip
    ftr = _tree_features(arch, width, params, x_train, None, dtype)
    fte = _tree_features(arch, width, params, x_test, None, dtype)
    return (_structured_gram(ftr, ftr, arch.spec, symmetric=True),
            _structured_gram(fte, ftr, arch.spec, symmetric=False))  # fmt: skip


@functools.lru_cache(maxsize=16)
def _tree_features_fn(arch, width: int):
    """jit fn(params, x) -> (per filter layer (u, delta), the readout's input)
    of a tree net: u (positions, n, a * channels) the layer's input patches,
    delta (positions, n, width) = d f / d z of its pre-activations z, and
    the readout's input (n, features). The forward pass is the network's in
    stax's layout (:func:`ntkgap.nets.arch.local_patches` for each filter
    layer, stax's apply for the rest; training runs the position-major path,
    the same function by ``tests/test_networks.py``), with a zero shift added
    to each z so that one backward pass of sum_x f(x) gives every point's
    delta (no layer mixes points)."""
    layers, filters = arch.layers(width)
    applies = [layer[1] for layer in layers]
    a, W_std, b_std = arch.spec["arity"], arch.spec["W_std"], arch.spec["b_std"]

    def forward(params, x, shifts):
        patches, h, k = [], x, 0
        for p, f, filt in zip(params, applies, filters):
            if filt is None:
                readin = h
                h = f(p, h)
                continue
            n, w, c = h.shape
            patches.append(h.reshape(n, w // a, a * c))
            h = local_patches(p, h, a, W_std, b_std) + shifts[k]
            k += 1
        return h[:, 0].sum(), (patches, readin)

    def features(params, x):
        n, w, _ = x.shape
        shapes = [(n, w // a ** (k + 1), width) for k in range(sum(f is not None for f in filters))]
        shifts = [jax.numpy.zeros(sh, x.dtype) for sh in shapes]
        deltas, (patches, readin) = jax.grad(forward, argnums=2, has_aux=True)(params, x, shifts)
        pm = [(u.swapaxes(0, 1), d.swapaxes(0, 1)) for u, d in zip(patches, deltas)]
        return pm, readin

    return jax.jit(features, compiler_options=compat.kernel_compiler_options())


def _tree_features(arch, width, params, x, block, dtype):
    """:func:`_tree_features_fn` over blocks of ``block`` points (each padded
    to it; fewer points than a block: padded to the next power of two, so a
    search's many small n share a few compiled programs), as float64 arrays."""
    block = FEATURE_BLOCK if block is None else block
    x = np.asarray(x, dtype)
    n = len(x)
    b = min(block, 1 << max(n - 1, 0).bit_length())
    fn, p = _tree_features_fn(arch, width), cast(params, dtype)
    parts = []
    for i in range(0, n, b):
        pm, readin = fn(p, _padded(x, i, b))
        m = min(b, n - i)
        parts.append(([(np.asarray(u)[:, :m], np.asarray(d)[:, :m]) for u, d in pm],
                      np.asarray(readin)[:m]))  # fmt: skip
    layers = [
        tuple(np.concatenate([q[0][k][j] for q in parts], axis=1).astype(np.float64, copy=False)
              for j in range(2))
        for k in range(len(parts[0][0]))
    ]  # fmt: skip
    return layers, np.concatenate([q[1] for q in parts]).astype(np.float64, copy=False)


def _structured_gram(f1, f2, spec, *, symmetric: bool) -> np.ndarray:
    """Theta(x1, x2) from two points sets' :func:`_tree_features`: the
    readout's (W_std^2 / F) <h, h'> + b_std^2, plus per filter layer and
    position (W_std^2 / fan_in <u, u'> + b_std^2) <delta, delta'>."""
    (layers1, r1), (layers2, r2) = f1, f2
    W2, b2 = spec["W_std"] ** 2, spec["b_std"] ** 2
    feats = sum(u.shape[0] * (u.shape[2] + d.shape[2]) for u, d in layers1) + r1.shape[1]
    memory.check(
        8.0 * (3 * len(r1) * len(r2) + feats * (len(r1) + len(r2))),
        f"a {len(r1)} x {len(r2)} empirical NTK",
    )
    K = (W2 / r1.shape[1]) * (r1 @ r2.T) + b2
    for (u1, d1), (u2, d2) in zip(layers1, layers2):
        scale = W2 / u1.shape[2]
        for p in range(u1.shape[0]):
            G = u1[p] @ u2[p].T
            G *= scale
            G += b2
            G *= d1[p] @ d2[p].T
            K += G
    if symmetric:
        K = 0.5 * (K + K.T)
    return K


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
