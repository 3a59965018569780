"""Architecture specs -> the neural-tangents triple (init_fn, apply_fn,
kernel_fn), so a finite network and its infinite-width kernel are one object.

* ``fc:depth=D,act=...,W_std=1.0,b_std=0.1,input=embed|angle,residual=0|1,
  branch=1.0,norm=none|layer``: D hidden Dense layers then a Dense readout,
  NTK parametrisation (stax's default; Jacot, Gabriel & Hongler 2018).
  ``input=angle`` (circle only) feeds u = theta/2pi instead of
  (cos theta, sin theta). ``norm=layer`` puts stax.LayerNorm after each
  hidden Dense (before the activation). ``residual=1``: a Dense stem, D
  blocks z + branch * Dense(act(z)) (stax.FanOut / FanInSum; pre-norm
  z + branch * Dense(act(LayerNorm z)) with norm=layer), then act and the
  readout; ``branch`` scales the block's Dense (W_std and b_std), so
  branch=0 is ``fc:depth=1``.
* ``tree:arity=a,L=L,act=...,W_std,b_std,share=0|1``: the depth-aware
  network of a tree target: L locally connected layers (``stax.ConvLocal``,
  filter = stride = a, no weight sharing) over the first a^L coordinates,
  each followed by the activation, then a Dense readout. ``share=1`` makes
  each layer a convolution (``stax.Conv``, the same filter at every
  position): the CNN of the random hierarchy model (Cagnetta et al., PRX
  2024), whose production rules are the same at every position of a level.
  Sharing changes the trained network, not the infinite-width kernel: with
  a Flatten readout (no pooling) the cross-position covariances that
  sharing adds never reach the output, so the NTK and NNGP of ``share=1``
  equal those of ``share=0`` (Novak et al., ICLR 2019, for the NNGP; the
  tests compare the two kernel_fns).

Inputs: on the hypercube each coordinate is one channel (a tree reads
shape (a^L, 1)); on the random hierarchy model's token strings each
position carries its one-hot token (v channels): a tree reads shape
(a^L, v), fc the flattened (s^L v) one-hot vector.

Activations (``act``, every arch): relu, leaky_relu (``slope``), abs, gelu,
erf, sin (stax closed-form kernels) and tanh, silu, softplus
(stax.ElementwiseNumerical: Gauss-Hermite quadrature of the dual kernel with
``QUAD_DEG`` points; ``ntkgap.kernels.dual`` has a high-precision route for exact
eigenvalues). Defaults: W_std = 1, b_std = 0.1. The overall kernel scale does not change
ridgeless regression; b_std > 0 makes every circle eigenvalue positive
(without bias the two-layer ReLU NTK has zero eigenvalues at odd
frequencies >= 3; Bietti & Mairal 2019).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ntkgap.errors import SpecError, UsageError
from ntkgap.specs import Field, Schema, describe, parse
from ntkgap.targets.domains import Circle, Hypercube

ACTS = ("relu", "leaky_relu", "abs", "gelu", "erf", "tanh", "silu", "softplus", "sin")
NUMERICAL = ("tanh", "silu", "softplus")
# Gauss-Hermite points of stax.ElementwiseNumerical; its kernel costs O(deg^2)
# per entry. At 25 (neural-tangents' advice) tanh's NTK is off by 4e-4
# relative (its poles at +-i pi/2 slow the quadrature, the more so the larger
# the pre-activation variance q); at these degrees and q ~ 1 the error is
# ~1e-9 (silu, tanh) to ~1e-12 (softplus), ~1e-5 at q ~ 3 (W_std = 1.5,
# b_std = 1), against ntkgap.kernels.dual's Hermite series (tests/test_activations.py)
QUAD_DEG = {"tanh": 96, "silu": 40, "softplus": 40}
# 0: a tree's locally connected layers run position-major (see Arch.stax),
# the fastest path measured (benchmarks/flops_bench.py); > 0: in stax's
# (n, positions, channels) layout, each layer one GEMM with the block-diagonal
# matrix of its position blocks while that matrix has at most this many
# entries, else a per-position einsum (kept to compare the paths)
BLOCK_DIAGONAL_MAX = 0
_common = {
    "act": Field(str, default="relu", choices=ACTS),
    "W_std": Field(float, default=1.0, min=1e-6, max=100.0),
    "b_std": Field(float, default=0.1, min=0.0, max=100.0),
    "slope": Field(float, default=0.01, min=-10.0, max=10.0, doc="leaky_relu negative slope"),
}

SCHEMAS = {
    "fc": Schema(
        {
            "depth": Field(int, default=1, min=1, max=32),
            **_common,
            "input": Field(str, default="embed", choices=("embed", "angle")),
            "residual": Field(int, default=0, choices=(0, 1)),
            "branch": Field(float, default=1.0, min=0.0, max=100.0),
            "norm": Field(str, default="none", choices=("none", "layer")),
        },
        doc="fully connected, NTK parametrisation",
    ),
    "tree": Schema(
        {
            "arity": Field(int, min=2, max=64),
            "L": Field(int, min=1, max=24),
            **_common,
            "share": Field(
                int, default=0, choices=(0, 1), doc="1: shared filters (a CNN, stax.Conv)"
            ),
        },
        doc="locally connected tree (share=1: CNN) over the first arity^L inputs or tokens",
    ),
}


def _stax():
    # import-cost: JAX and neural-tangents load on first use, not on import:
    # parsing and validating specs (the runner, the CLI's checks) stays cheap
    from ntkgap._infra.compat import stax

    return stax


def _jax():
    # import-cost: as _stax; compat switches on float64 before anything runs
    from ntkgap._infra.compat import jax

    return jax


def _act(name, slope=0.01):
    stax = _stax()
    if name in NUMERICAL:
        jax = _jax()
        fn = {"tanh": jax.numpy.tanh, "silu": jax.nn.silu, "softplus": jax.nn.softplus}[name]
        with warnings.catch_warnings():
            # neural-tangents warns on every construction that accuracy depends
            # on deg; QUAD_DEG's accuracy is measured in the tests
            warnings.simplefilter("ignore")
            return stax.ElementwiseNumerical(fn, QUAD_DEG[name])
    if name == "leaky_relu":
        return stax.LeakyRelu(slope)
    return {
        "relu": stax.Relu,
        "abs": stax.Abs,
        "erf": stax.Erf,
        "gelu": stax.Gelu,
        "sin": stax.Sin,
    }[name]()


@dataclass(frozen=True)
class Arch:
    spec: object

    @property
    def name(self):
        return self.spec.name

    def __str__(self):
        return str(self.spec)

    def __repr__(self):
        return f"ntkgap.arch({str(self.spec)!r})"

    @property
    def leaves(self) -> int:
        return self.spec["arity"] ** self.spec["L"]

    def check_domain(self, domain) -> None:
        if self.name == "tree" and _tokens(domain):
            if self.leaves > domain.length:
                raise UsageError(
                    f"arch '{self.spec}': arity^L = {self.leaves} exceeds the "
                    f"{domain.length} token positions of {domain}"
                )
        elif self.name == "tree":
            if not isinstance(domain, Hypercube):
                raise UsageError(f"arch '{self.spec}' needs a hypercube domain, got {domain}")
            if self.leaves > domain.d:
                raise UsageError(
                    f"arch '{self.spec}': arity^L = {self.leaves} exceeds d={domain.d}"
                )
        if self.name == "fc" and self.spec["input"] == "angle" and not isinstance(domain, Circle):
            raise UsageError(f"arch '{self.spec}': input=angle needs the circle domain")

    def reads(self, domain) -> str:
        if isinstance(domain, Circle):
            return (
                "angle u = theta/2pi" if self.spec["input"] == "angle" else "(cos theta, sin theta)"
            )
        if _tokens(domain):
            which = f"tokens 0..{self.leaves - 1}" if self.name == "tree" else "all tokens"
            return f"{which}, one-hot over v={domain.target.v}"
        if self.name == "tree":
            return f"x_0..x_{self.leaves - 1} in {{-1,+1}}"  # 0-based, as DAG files
        return "x in {-1,+1}^d"

    def inputs(self, domain, points) -> np.ndarray:
        """The array this network reads for the given domain points."""
        self.check_domain(domain)
        if isinstance(domain, Circle):
            if self.spec["input"] == "angle":
                return Circle.angle(points)[:, None]
            return domain.features(points)
        if _tokens(domain):
            # one-hot, position-major: (n, positions * v) -> (n, positions, v)
            x = domain.features(points)
            if self.name == "tree":
                return x.reshape(x.shape[0], domain.length, -1)[:, : self.leaves]
            return x
        x = np.asarray(points, dtype=np.float64)
        if self.name == "tree":
            return x[:, : self.leaves, None]
        return x

    def layers(self, width, outputs=1):
        """The network's stax layers and, for each, its filter size.

        Args:
            width: channels of every hidden layer.
            outputs: units of the Dense readout (the last layer).

        Returns:
            tuple: (layers, filters): stax (init_fn, apply_fn, kernel_fn)
            triples in order, and per layer the filter size of a tree's
            ConvLocal/Conv layer (None for any other layer).
        """
        s = self.spec
        W, b = s["W_std"], s["b_std"]
        layers, filters = [], []
        stax = _stax()

        def local(channels, f):
            layers.append(
                (stax.Conv if s.params.get("share") else stax.ConvLocal)(
                    channels,
                    (f,),
                    strides=(f,),
                    padding="VALID",
                    W_std=W,
                    b_std=b,
                    dimension_numbers=("NWC", "WIO", "NWC"),
                )
            )
            filters.append(f)

        def other(layer):
            layers.append(layer)
            filters.append(None)

        def act():
            return _act(s["act"], s["slope"])

        def norm():
            return [stax.LayerNorm()] if s.params.get("norm") == "layer" else []

        if self.name == "fc" and s["residual"]:
            B = s["branch"]
            other(stax.Dense(width, W_std=W, b_std=b))
            for _ in range(s["depth"]):
                # FanInSum warns that it assumes independent inputs: the
                # block's Dense weights are independent of its input z
                block = stax.serial(*norm(), act(), stax.Dense(width, W_std=B * W, b_std=B * b))
                other(
                    stax.serial(
                        stax.FanOut(2), stax.parallel(block, stax.Identity()), stax.FanInSum()
                    )
                )
            for layer in norm():
                other(layer)
            other(act())
        elif self.name == "fc":
            for _ in range(s["depth"]):
                other(stax.Dense(width, W_std=W, b_std=b))
                for layer in norm():
                    other(layer)
                other(act())
        else:
            for _ in range(s["L"]):
                local(width, s["arity"])
                other(act())
            other(stax.Flatten())
        other(stax.Dense(outputs, W_std=W, b_std=b))
        return layers, filters

    def stax(self, width: int = 512, *, fast: bool = True, outputs: int = 1):
        """(init_fn, apply_fn, kernel_fn) of this architecture at ``width``.

        For ``tree`` archs with ``fast=True`` the apply_fn is stax's own
        except that each ConvLocal layer is evaluated as matmuls over its
        non-overlapping patches (``share=1``: one matmul with the shared
        filter) instead of ``lax.conv_general_dilated_local`` (training ~5x
        slower on CPU than with the block-diagonal GEMM, ~12x than by
        default). ``BLOCK_DIAGONAL_MAX > 0`` keeps stax's layout and
        multiplies each layer by the block-diagonal matrix of its position
        blocks (a per-position einsum beyond that size). By default
        (``BLOCK_DIAGONAL_MAX = 0``) the activations are kept position-major,
        (positions, n, channels), with the positions in digit-reversed order
        (base a = arity): the a children
        of every node are then the a leading blocks of the position axis, so
        a layer is a sum over the a filter offsets of one batched matmul each
        (batch = positions, and the vmapped seeds in front), with no
        transposes of the activations between layers and no zero blocks
        (about 2.7x faster training than the block-diagonal GEMM for
        width-32 nets on CPU, see benchmarks/RESULTS.md). Same parameters,
        same function (tests compare every path with ``fast=False``).

        Args:
            width: channels of every hidden layer.
            fast: False: stax's own apply_fn for every arch.
            outputs: units of the Dense readout (one per class for one-hot
                labels; the NTK is the same kernel on each output).

        Returns:
            tuple: (init_fn, apply_fn, kernel_fn).
        """
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*FanIn. layers assume independent")
            layers, filters = self.layers(width, outputs)
            init_fn, apply_fn, kernel_fn = _stax().serial(*layers)
        if self.name != "tree" or not fast:
            return init_fn, apply_fn, kernel_fn
        W_std, b_std = self.spec["W_std"], self.spec["b_std"]
        applies = [layer[1] for layer in layers]
        if self.spec["share"] or BLOCK_DIAGONAL_MAX > 0:
            conv = _shared_patches if self.spec["share"] else local_patches
            return init_fn, _patch_apply(applies, filters, conv, W_std, b_std), kernel_fn
        a = self.spec["arity"]
        return init_fn, _position_major_apply(applies, filters, a, W_std, b_std), kernel_fn

    @property
    def kernel_fn(self):
        return self.stax(1)[2]


def local_patches(params, x, a, W_std, b_std):
    """A ConvLocal layer (filter = stride = a) as matmuls over its patches.

    Args:
        params: (W (positions, C*a, out), b (1, positions, out)); the patch
            features are channel-major, as in conv_general_dilated_patches.
        x: the activations, (n, positions * a, C) in stax's layout.
        a: the filter size (the arity).
        W_std, b_std: the layer's weight and bias scales (NTK parametrisation).

    Returns:
        The layer's output, (n, positions, out).
    """
    jnp = _jax().numpy
    Wt, bias = params
    n, w_in, c = x.shape
    P, n_in, n_out = Wt.shape
    patches = x.reshape(n, P, a, c).swapaxes(2, 3)
    if P * P * n_in * n_out <= BLOCK_DIAGONAL_MAX:
        # one dense matmul with the block-diagonal matrix of the P
        # position blocks: P x the flops of the per-position products,
        # but one well-shaped GEMM instead of P tiny ones
        D = jnp.einsum("pio,pq->piqo", Wt, jnp.eye(P, dtype=Wt.dtype)).reshape(P * n_in, P * n_out)
        out = (patches.reshape(n, P * n_in) @ D).reshape(n, P, n_out)
    else:
        out = jnp.einsum("npi,pio->npo", patches.reshape(n, P, n_in), Wt)
    # a Python float (weakly typed): a numpy scalar would promote a
    # float32 network to float64 under x64
    return out * float(W_std / np.sqrt(c * a)) + b_std * bias


def _shared_patches(params, x, a, W_std, b_std):
    """A shared-filter Conv layer (filter = stride = a) as one matmul.

    Args:
        params: (W (a, C, out), b (1, 1, out)); a patch's features are
            position-major, as W's (filter position, channel) rows.
        x: the activations, (n, positions * a, C).
        a: the filter size (the arity).
        W_std, b_std: the layer's weight and bias scales.

    Returns:
        The layer's output, (n, positions, out).
    """
    Wt, bias = params
    n, w_in, c = x.shape
    out = x.reshape(n, w_in // a, a * c) @ Wt.reshape(a * c, Wt.shape[-1])
    return out * float(W_std / np.sqrt(c * a)) + b_std * bias


def _patch_apply(applies, filters, conv, W_std, b_std):
    """The apply_fn of a tree net in stax's layout with its filter layers
    evaluated by ``conv`` (:func:`local_patches` or :func:`_shared_patches`).

    Args:
        applies: stax's apply_fn of each layer.
        filters: each layer's filter size, None for a layer that is not local.
        conv: the patch evaluation of the filter layers.
        W_std, b_std: the filter layers' weight and bias scales.

    Returns:
        apply_fn(params, x, **kwargs).
    """

    def fast_apply(params, x, **kwargs):
        for p, f, a in zip(params, applies, filters):
            x = f(p, x) if a is None else conv(p, x, a, W_std, b_std)
        return x

    return fast_apply


def _position_major_apply(applies, filters, a, W_std, b_std):
    """The apply_fn of a tree net whose filter layers run position-major,
    (positions in base-a digit-reversed order, n, channels), back in stax's
    layout from the first layer that is not local (see :meth:`Arch.stax`).

    Args:
        applies: stax's apply_fn of each layer.
        filters: each layer's filter size, None for a layer that is not local.
        a: the arity.
        W_std, b_std: the filter layers' weight and bias scales.

    Returns:
        apply_fn(params, x, **kwargs).
    """
    jnp = _jax().numpy

    def position_major(params, x, **kwargs):
        n, w, c = x.shape
        m = _digits(w, a)
        # (n, positions, c) -> (positions in digit-reversed order, n, c)
        h = x.reshape((n,) + (a,) * m + (c,))
        h = jnp.transpose(h, list(range(m, 0, -1)) + [0, m + 1]).reshape(w, n, c)
        first_other = max(i for i, f in enumerate(filters) if f is not None) + 1
        for i, (p, f) in enumerate(zip(params, applies)):
            if i == first_other:  # back to stax's layout for the readout
                P = h.shape[0]
                h = _digit_reversed(h, _digits(P, a), a).swapaxes(0, 1)
            if filters[i] is None:
                h = f(p, h)
                continue
            h = _position_major_local(p, h, n, a, W_std, b_std)
        return h

    return position_major


def _position_major_local(p, h, n, a, W_std, b_std):
    """One ConvLocal layer on position-major activations: a sum over the a
    filter offsets of one batched matmul each (batch = positions).

    Args:
        p: (W (P, C*a, out), b (1, P, out)); patch rows channel-major.
        h: the activations, (P * a, n, C), positions digit-reversed.
        n: the number of points.
        a: the arity.
        W_std, b_std: the layer's weight and bias scales.

    Returns:
        The layer's output, (P, n, out), positions digit-reversed.
    """
    jnp = _jax().numpy
    Wt, bias = p
    P, n_in, n_out = Wt.shape
    c = n_in // a
    k = _digits(P, a)
    # W as (filter offset j, output position in digit-reversed order, C, out)
    Wr = Wt.reshape((a,) * k + (c, a, n_out))
    Wr = jnp.transpose(Wr, [k + 1] + list(range(k - 1, -1, -1)) + [k, k + 2])
    # the NTK scale multiplies the small weights, not the activations
    # (nor, in the backward pass, their gradients)
    Wr = Wr.reshape(a, P, c, n_out) * float(W_std / np.sqrt(c * a))
    # digit-reversed order: input block j holds the j-th child of
    # every output position, in the output's digit-reversed order
    hx = h.reshape(a, P, n, c)
    out = hx[0] @ Wr[0]
    for j in range(1, a):
        out = out + hx[j] @ Wr[j]
    return out + b_std * _digit_reversed(bias[0], k, a)[:, None, :]


def _digits(P: int, a: int) -> int:
    """k with a^k = P (the positions of a tree level)."""
    k = int(round(np.log(P) / np.log(a))) if P > 1 else 0
    if a**k != P:
        raise UsageError(f"tree net: {P} positions are not a power of the arity {a}")
    return k


def _digit_reversed(h, k: int, a: int):
    """``h`` with its leading axis (a^k positions) in base-a digit-reversed
    order (an involution)."""
    jnp = _jax().numpy
    rest = h.shape[1:]
    h = h.reshape((a,) * k + rest)
    h = jnp.transpose(h, list(range(k - 1, -1, -1)) + list(range(k, k + len(rest))))
    return h.reshape((a**k,) + rest)


def _tokens(domain) -> bool:
    """Whether the domain's points are token strings (the RHM's)."""
    return getattr(domain, "name", None) == "rhm"


def parse_arch(text: str) -> Arch:
    """Parses an architecture spec string such as ``fc:depth=3,act=relu``.

    Args:
        text: the arch spec string.

    Returns:
        Arch wrapping the validated spec.
    """
    return Arch(parse("arch", text, SCHEMAS))


def help_text() -> str:
    """Human-readable list of the arch specs, for ``--help`` texts.

    Returns:
        str: one line per arch with its keys, allowed values and defaults.
    """
    return describe("arch", SCHEMAS)


__all__ = ["Arch", "parse_arch", "SpecError"]
