"""Targets on the hypercube {-1,+1}^d: parity, staircase, trees, circuits.

Conventions: +1 is "true". AND is +1 iff all inputs are +1, OR is -1 iff
all inputs are -1, majority is the sign of the sum (odd arity), parity is
the product. ``linear-plus`` is g(u_1..u_a) = (sum u + prod u)/sqrt(a + 1):
for a = 2 the (u + v + uv)/sqrt 3 of the issue; mean 0 and unit variance
whenever its inputs are independent with mean 0 and unit variance, so every
level of a linear-plus tree has unit variance.

A target depends only on the coordinates in ``support``; evaluation goes
through ``eval_columns(col)``, where ``col(j)`` returns the values of the
j-th support coordinate, so the same code evaluates a sample matrix or all
2^s support points without materialising a (2^s, s) array.
"""

from __future__ import annotations

import math

import numpy as np

from ntkgap.domains import Hypercube
from ntkgap.specs import Field, Schema

NODES = ("parity", "and", "or", "majority", "linear-plus", "random")
GATES = ("and", "or", "parity", "majority")


def _check_parity(p):
    if p["k"] > p["d"]:
        return f"k={p['k']} exceeds d={p['d']}"


def _check_tree(p):
    a, L, d = p["arity"], p["L"], p["d"]
    if a**L > d:
        return f"arity^L = {a}^{L} = {a**L} exceeds d={d}"
    if p["node"] == "majority" and a % 2 == 0:
        return f"node=majority needs an odd arity, got arity={a}"


def _check_circuit(p):
    if p["fan_in"] > p["d"]:
        return f"fan_in={p['fan_in']} exceeds d={p['d']}"


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
    if kind == "random":
        idx = np.zeros(np.shape(args[0]), dtype=np.int64)
        for j, a in enumerate(args):
            idx |= (np.asarray(a) < 0).astype(np.int64) << j
        return table[idx]
    raise AssertionError(kind)


def _random_table(rng, arity):
    while True:  # a constant node would cut the tree: redraw
        t = rng.choice([-1.0, 1.0], size=2**arity)
        if np.any(t != t[0]):
            return t


class HypercubeTarget:
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
    """A balanced tree of depth L and the given arity over x_1..x_{arity^L};
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

    def eval_columns(self, col):
        # depth first, so that at most L * arity arrays are alive at once
        counter = iter(range(10**9))

        def node(level, index):
            if level == self.L:
                return col(index)
            kids = [node(level + 1, index * self.a + c) for c in range(self.a)]
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


BUILDERS = {"parity": Parity, "staircase": Staircase, "tree": Tree, "circuit": Circuit}
