"""Targets on the hypercube {-1,+1}^d: parity, staircase, trees, circuits.

Conventions: +1 is "true". AND is +1 iff all inputs are +1, OR is -1 iff
all inputs are -1, majority is the sign of the sum (odd arity), parity is
the product. ``linear-plus`` is g(u_1..u_a) = (sum u + prod u)/sqrt(a + 1):
for a = 2 it is (u + v + uv)/sqrt 3; mean 0 and unit variance
whenever its inputs are independent with mean 0 and unit variance, so every
level of a linear-plus tree has unit variance (but its tails grow without
bound: max |f| ~ 102 at arity 2, L = 4). ``linear`` is g(u) = sum u / sqrt(a):
the tree is then sum of its a^L leaves / a^(L/2), Walsh degree 1 at every
depth with unit variance (a negative control: its Fourier complexity does
not grow with L).

``tanh`` is the bounded real-valued node: g_l(u) = tanh(sum_i u_i / sqrt(a))
/ c_l at level l (leaves are level 0). It is odd, so with symmetric
independent children every node is symmetric and has mean 0 exactly; c_l is
the exact root mean square of tanh(sum u / sqrt a) under the exact law of
level l - 1 (a finite distribution propagated level by level, see
:func:`tanh_scales`), so every node has unit variance exactly, and
|f| <= 1 / c_L at every depth: light tails where linear-plus has heavy ones.

A target depends only on the coordinates in ``support``; evaluation goes
through ``eval_columns(col)``, where ``col(j)`` returns the values of the
j-th support coordinate, so the same code evaluates a sample matrix or all
2^s support points without materialising a (2^s, s) array.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ntkgap.specs import Field, Schema
from ntkgap.spectral.walsh import bit_column
from ntkgap.targets.domains import Hypercube

MOMENT_EXACT_BITS = 24
MOMENT_SEED = 12345
NODES = ("parity", "and", "or", "majority", "linear-plus", "linear", "random", "tanh")
# exact tanh normalisation: most atoms one level's law may have
TANH_MAX_ATOMS = 2_000_000
GATES = ("and", "or", "parity", "majority")


def moments_of(y, *, exact: bool, weights=None) -> dict:
    """Mean, variance, central fourth moment, kurtosis and max |y| of values.

    Args:
        y: the target's values.
        exact: whether the values cover the whole domain (recorded as is).
        weights: probabilities of the values, summing to 1 (None: equal).

    Returns:
        dict with ``mean``, ``variance``, ``fourth_moment``, ``kurtosis``
        (None for a constant), ``max_abs``, ``points`` and ``exact``.
    """
    y = np.asarray(y, dtype=np.float64)
    if weights is None:
        mean = float(np.mean(y))
        c2 = (y - mean) ** 2
        var = float(np.mean(c2))
        c2 **= 2
        m4 = float(np.mean(c2))
    else:
        w = np.asarray(weights, np.float64)
        mean = float(np.dot(w, y))
        c2 = (y - mean) ** 2
        var = float(np.dot(w, c2))
        m4 = float(np.dot(w, c2**2))
    tiny = 1e-24 * max(1.0, mean**2)
    return {
        "mean": mean,
        "variance": var,
        "fourth_moment": m4,
        "kurtosis": m4 / var**2 if var > tiny else None,
        "max_abs": float(np.max(np.abs(y))),
        "points": int(y.size),
        "exact": exact,
    }


def _check_parity(p):
    if p["k"] > p["d"]:
        return f"k={p['k']} exceeds d={p['d']}"


def _check_tree(p):
    a, L, d = p["arity"], p["L"], p["d"]
    if a**L > d:
        return f"arity^L = {a}^{L} = {a**L} exceeds d={d}"
    if p["node"] == "majority" and a % 2 == 0:
        return f"node=majority needs an odd arity, got arity={a}"
    if p["node"] == "tanh" and tanh_scales(a, L) is None:
        return (
            f"node=tanh: the exact normalisation at arity={a}, L={L} needs more than "
            f"{TANH_MAX_ATOMS} atoms (allowed: e.g. arity 2 to L=6, arity 3 to L=3)"
        )


def _check_circuit(p):
    if p["fan_in"] > p["d"]:
        return f"fan_in={p['fan_in']} exceeds d={p['d']}"


def _check_layered(p):
    if 2 ** p["L"] > p["d"]:
        return f"2^L = 2^{p['L']} = {2 ** p['L']} exceeds d={p['d']}"


_D = Field(int, min=1, max=100_000, doc="dimension")
SCHEMAS = {
    "parity": Schema(
        {
            "d": _D,
            "k": Field(int, min=1, max=64),
            "seed": Field(
                int,
                default=-1,
                min=-1,
                doc="-1: support = first k coordinates; else a random support",
            ),
        },
        _check_parity,
        doc="prod_{i in S} x_i, |S| = k",
    ),
    "staircase": Schema(
        {"d": _D, "k": Field(int, min=1, max=64)},
        _check_parity,
        doc="(x1 + x1x2 + ... + x1...xk)/sqrt(k)",
    ),
    "tree": Schema(
        {
            "d": _D,
            "L": Field(int, min=1, max=24),
            "arity": Field(int, min=2, max=24),
            "node": Field(str, choices=NODES),
            "seed": Field(int, default=0, min=0),
        },
        _check_tree,
        doc="balanced tree of depth L over the first arity^L coordinates",
    ),
    "circuit": Schema(
        {
            "d": _D,
            "gates": Field(int, min=1, max=10_000),
            "fan_in": Field(int, min=2, max=16),
            "seed": Field(int, default=0, min=0),
        },
        _check_circuit,
        doc="random DAG of Boolean gates (and/or/parity/majority, "
        "inputs negated at random); output = last gate",
    ),
    "layered": Schema(
        {
            "d": _D,
            "L": Field(int, min=1, max=20, doc="depth: number of gate layers"),
            "fan_in": Field(int, min=2, max=16),
            "seed": Field(int, default=0, min=0),
        },
        _check_layered,
        doc="random layered circuit of depth L over the first 2^L coordinates: "
        "layer widths halve upwards, each gate reads its own 2 gates below "
        "plus fan_in-2 random ones (and/or/parity/majority, wires negated at random)",
    ),
}


def _apply_node(kind, args, table=None):
    if kind == "parity":
        return np.prod(args, axis=0)
    if kind == "and":
        return np.where(np.all(np.asarray(args) > 0, axis=0), 1.0, -1.0)
    if kind == "or":
        return np.where(np.all(np.asarray(args) < 0, axis=0), -1.0, 1.0)
    if kind == "majority":
        return np.sign(np.sum(args, axis=0))
    if kind == "linear-plus":
        return (np.sum(args, axis=0) + np.prod(args, axis=0)) / math.sqrt(len(args) + 1)
    if kind == "linear":
        return np.sum(args, axis=0) / math.sqrt(len(args))
    if kind == "random":
        idx = np.zeros(np.shape(args[0]), dtype=np.int64)
        for j, a in enumerate(args):
            idx |= (np.asarray(a) < 0).astype(np.int64) << j
        return table[idx]
    raise AssertionError(kind)


def _law_of_sum(values, probs, a):
    """The exact law of the sum of ``a`` iid draws from a finite law (atoms
    merged to 12 decimals), or None when it would exceed the atom budget."""
    v, p = values, probs
    for _ in range(a - 1):
        if v.size * values.size > 4 * TANH_MAX_ATOMS:
            return None
        v = np.add.outer(v, values).ravel()
        p = np.multiply.outer(p, probs).ravel()
        v, inverse = np.unique(np.round(v, 12), return_inverse=True)
        p = np.bincount(inverse.ravel(), weights=p)
        if v.size > TANH_MAX_ATOMS:
            return None
    return v, p


def _mean_tanh_squared(values, probs, a):
    """E tanh^2(S / sqrt a), S the sum of ``a`` iid draws, without merging
    the last convolution (rows in chunks); None beyond the budget."""
    law = _law_of_sum(values, probs, a - 1) if a > 1 else (np.zeros(1), np.ones(1))
    if law is None or law[0].size * values.size > 50 * TANH_MAX_ATOMS:
        return None
    v, p = law
    total = 0.0
    step = max(1, TANH_MAX_ATOMS // values.size)
    for i in range(0, v.size, step):
        t = np.tanh(np.add.outer(v[i : i + step], values) / math.sqrt(a))
        total += float(p[i : i + step] @ (t**2) @ probs)
    return total


@functools.lru_cache(maxsize=64)
def tanh_scales(arity: int, L: int):
    """The constants c_1..c_L of the normalised tanh tree, exact.

    Level 0 is uniform on {-1, +1}; the law of a level-l node is that of
    tanh(S / sqrt(a)) / c_l with S the sum of ``arity`` independent
    level-(l-1) nodes, and c_l^2 = E tanh^2(S / sqrt(a)). The laws are finite
    and propagated exactly (merging equal atoms).

    Args:
        arity: the number of children of every node.
        L: the depth.

    Returns:
        A tuple of L floats, or None when a level's law exceeds
        ``TANH_MAX_ATOMS`` atoms.
    """
    values, probs = np.array([-1.0, 1.0]), np.array([0.5, 0.5])
    scales = []
    for level in range(1, L + 1):
        if level == L:
            second = _mean_tanh_squared(values, probs, arity)
            if second is None:
                return None
            scales.append(math.sqrt(second))
            break
        law = _law_of_sum(values, probs, arity)
        if law is None:
            return None
        t = np.tanh(law[0] / math.sqrt(arity))
        c = math.sqrt(float(np.dot(law[1], t**2)))
        scales.append(c)
        values, probs = t / c, law[1]
    return tuple(scales)


def _random_table(rng, arity):
    while True:  # a constant node would cut the tree: redraw
        t = rng.choice([-1.0, 1.0], size=2**arity)
        if np.any(t != t[0]):
            return t


class SpecPrinted:
    """A target that prints as its spec string (``str``, which the parser reads
    back) and as the call that builds it (``repr``, which ``eval`` reads back)."""

    def __str__(self):
        return str(self.spec)

    def __repr__(self):
        return f"ntkgap.target({str(self.spec)!r})"


class HypercubeTarget(SpecPrinted):
    """Shared behaviour: evaluation on samples, architecture bookkeeping."""

    spec = None
    support: tuple = ()

    @property
    def domain(self):
        return Hypercube(self.spec["d"])

    def __call__(self, x):
        x = np.asarray(x)
        if x.ndim != 2 or x.shape[1] != self.spec["d"]:
            raise ValueError(f"expected points of shape (n, {self.spec['d']}), got {x.shape}")
        sup = self.support
        return np.asarray(
            self.eval_columns(lambda j: x[:, sup[j]].astype(np.float64)), dtype=np.float64
        )

    def eval_columns(self, col):
        raise NotImplementedError

    def moments(self) -> dict:
        """Moments of f(x), x uniform on the cube.

        Exact by enumeration of the support cube (``eval_columns`` on
        :func:`ntkgap.spectral.walsh.bit_column`) when the support has at most
        ``MOMENT_EXACT_BITS`` bits; otherwise a fixed-seed Monte Carlo
        estimate over 2^20 points (``exact`` says which).

        Returns:
            dict with ``mean``, ``variance``, ``fourth_moment`` (central,
            E (f - mean)^4), ``kurtosis`` (fourth_moment / variance^2; 3 for a
            Gaussian, 1 for a balanced +-1 function; None when the variance is
            0), ``max_abs`` (max |f|), ``points`` and ``exact``.
        """
        s = len(self.support)
        if s <= MOMENT_EXACT_BITS:
            y = np.broadcast_to(
                np.asarray(self.eval_columns(lambda j: bit_column(s, j)), dtype=np.float64),
                (2**s,),
            )
            exact = True
        else:
            y = self(self.domain.sample(2**20, seed=MOMENT_SEED))
            exact = False
        return moments_of(y, exact=exact)

    def _arch(self, constituents, fan_in, depth, params=None, formula=None):
        return {
            "constituents": constituents,
            "max_fan_in": fan_in,
            "depth": depth,
            "support_size": len(self.support),
            "input": "x in {-1,+1}^d",
            "exact_relu_params": params,
            "exact_relu_params_formula": formula,
        }


class Parity(HypercubeTarget):
    """chi_S(x) = prod_{i in S} x_i: all Walsh weight at degree k."""

    def __init__(self, spec):
        self.spec = spec
        d, k, seed = spec["d"], spec["k"], spec["seed"]
        if seed < 0:
            self.support = tuple(range(k))
        else:
            self.support = tuple(
                sorted(np.random.default_rng(seed).choice(d, k, replace=False).tolist())
            )

    def eval_columns(self, col):
        out = col(0).copy()
        for j in range(1, len(self.support)):
            out *= col(j)
        return out

    def architecture(self):
        k = len(self.support)
        # as a binary tree of 2-input XORs
        return self._arch(max(k - 1, 1), min(k, 2), max(1, math.ceil(math.log2(k))) if k > 1 else 1)


class Staircase(HypercubeTarget):
    """(x1 + x1x2 + ... + x1...xk)/sqrt(k) (Abbe et al.'s staircase; unit variance)."""

    def __init__(self, spec):
        self.spec = spec
        self.support = tuple(range(spec["k"]))

    def eval_columns(self, col):
        prefix = col(0).copy()
        total = prefix.copy()
        for j in range(1, len(self.support)):
            prefix *= col(j)
            total += prefix
        return total / math.sqrt(len(self.support))

    def architecture(self):
        k = len(self.support)
        # a chain: k-1 products and k-1 additions
        return self._arch(max(2 * k - 2, 1), 2, k)


class Tree(HypercubeTarget):
    """A balanced tree of depth L and the given arity over x_0..x_{arity^L - 1};
    every internal node applies ``node`` to its children (``random``: an
    independent non-constant truth table per node, drawn from ``seed``)."""

    def __init__(self, spec):
        self.spec = spec
        self.a, self.L, self.node = spec["arity"], spec["L"], spec["node"]
        self.support = tuple(range(self.a**self.L))
        self._tables = None
        if self.node == "random":
            rng = np.random.default_rng(spec["seed"])
            n_nodes = (self.a**self.L - 1) // (self.a - 1)
            self._tables = [_random_table(rng, self.a) for _ in range(n_nodes)]
        self._scales = tanh_scales(self.a, self.L) if self.node == "tanh" else None

    def eval_columns(self, col):
        # depth first, so that at most L * arity arrays are alive at once
        counter = iter(range(10**9))

        def node(level, index):
            if level == self.L:
                return col(index)
            kids = [node(level + 1, index * self.a + c) for c in range(self.a)]
            if self._scales is not None:
                # a node at tree level `level` sits L - level levels above the leaves
                scale = self._scales[self.L - level - 1]
                return np.tanh(np.sum(kids, axis=0) / math.sqrt(self.a)) / scale
            table = self._tables[next(counter)] if self._tables is not None else None
            return _apply_node(self.node, kids, table)

        return node(0, 0)

    def architecture(self):
        return self._arch((self.a**self.L - 1) // (self.a - 1), self.a, self.L)


class Circuit(HypercubeTarget):
    """A random compositionally sparse Boolean circuit (arXiv 2507.02550).

    Gate i reads ``fan_in`` distinct earlier nodes (inputs or gates), at
    least one of them a gate when one exists, each negated with
    probability 1/2, and applies and/or/parity/majority (majority only for
    odd fan-in). The output is the last gate; gates and inputs it does not
    reach are dropped, so ``support`` lists the inputs it really reads.
    """

    def __init__(self, spec):
        self.spec = spec
        d, G, c = spec["d"], spec["gates"], spec["fan_in"]
        rng = np.random.default_rng(spec["seed"])
        kinds = [g for g in GATES if g != "majority" or c % 2 == 1]
        gates = []
        for i in range(G):
            pool = d + i
            if i == 0:
                src = rng.choice(d, c, replace=False)
            else:
                first = d + rng.integers(0, i)
                # index into the pool without ``first``: the same draws as choosing
                # from that array, without building it (O(c), not O(pool))
                rest = rng.choice(pool - 1, c - 1, replace=False)
                rest = rest + (rest >= first)
                src = np.concatenate([[first], rest])
            gates.append(
                (str(rng.choice(kinds)), [int(s) for s in src], rng.choice([-1.0, 1.0], size=c))
            )
        # keep what the output reaches
        live, stack = set(), [d + G - 1]
        while stack:
            v = stack.pop()
            if v in live:
                continue
            live.add(v)
            if v >= d:
                stack.extend(gates[v - d][1])
        self.support = tuple(sorted(v for v in live if v < d))
        self._pos = {v: j for j, v in enumerate(self.support)}
        self._gates = gates
        self._live_gates = sorted(v for v in live if v >= d)
        depth = {}
        for v in self._live_gates:
            depth[v] = 1 + max(depth.get(s, 0) for s in gates[v - d][1])
        self._depth = depth[d + G - 1]

    def eval_columns(self, col):
        d = self.spec["d"]
        values = {}
        for v in self._live_gates:
            kind, src, signs = self._gates[v - d]
            args = [(values[s] if s >= d else col(self._pos[s])) * sg for s, sg in zip(src, signs)]
            values[v] = _apply_node(kind, args)
        return values[self._live_gates[-1]]

    def architecture(self):
        return self._arch(len(self._live_gates), self.spec["fan_in"], self._depth)


class Layered(HypercubeTarget):
    """A random layered Boolean circuit indexed by its depth L.

    Layer 0 is the inputs x_0..x_{2^L - 1}; layer l has 2^(L-l) gates, so
    the output is the single gate of layer L. Gate i of layer l reads gates
    2i and 2i+1 of layer l-1 (so every gate is used and the support is all
    2^L inputs) and min(fan_in, 2^(L-l+1)) - 2 further distinct gates of
    layer l-1 drawn at random (shared with other parents: fan_in >= 3 gives
    a DAG, fan_in = 2 a tree of random gates). Each wire is negated with
    probability 1/2 and each gate is and/or/parity/majority (majority only
    at odd fan-in), all drawn from ``seed``; a draw whose output is constant
    (on the whole cube up to 16 inputs, else on 4096 fixed points) is
    redrawn from the same stream. Architectural complexity:
    2^L - 1 gates, depth L; the support doubles with each level.
    """

    def __init__(self, spec):
        self.spec = spec
        L, f = spec["L"], spec["fan_in"]
        rng = np.random.default_rng(spec["seed"])
        self.L = L
        self.support = tuple(range(2**L))
        s = len(self.support)
        probe = None
        if s > 16:
            probe = Hypercube(s).sample(4096, seed=MOMENT_SEED).astype(np.float64)
        while True:  # a constant circuit is no target: redraw from the same stream
            self._layers = self._draw(rng, L, f)
            if s <= 16:
                y = self.eval_columns(lambda j: bit_column(s, j))
            else:
                y = self.eval_columns(probe.T.__getitem__)
            if np.any(y != y[0]):
                break
        self._fan = max(len(g[1]) for layer in self._layers for g in layer)

    @staticmethod
    def _draw(rng, L, f):
        layers = []
        for level in range(1, L + 1):
            below = 2 ** (L - level + 1)
            gates = []
            for i in range(below // 2):
                fan = min(f, below)
                others = np.setdiff1d(np.arange(below), [2 * i, 2 * i + 1])
                extra = rng.choice(others, fan - 2, replace=False) if fan > 2 else []
                src = [2 * i, 2 * i + 1, *(int(e) for e in extra)]
                kinds = [g for g in GATES if g != "majority" or fan % 2 == 1]
                gates.append((str(rng.choice(kinds)), src, rng.choice([-1.0, 1.0], size=fan)))
            layers.append(gates)
        return layers

    def eval_columns(self, col):
        values = [col(j) for j in self.support]
        for gates in self._layers:
            values = [
                _apply_node(kind, [values[s] * sg for s, sg in zip(src, signs)])
                for kind, src, signs in gates
            ]
        return values[0]

    def architecture(self):
        return self._arch(2**self.L - 1, self._fan, self.L)


BUILDERS = {
    "parity": Parity,
    "staircase": Staircase,
    "tree": Tree,
    "circuit": Circuit,
    "layered": Layered,
}
