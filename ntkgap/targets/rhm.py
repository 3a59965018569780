"""The random hierarchy model (RHM) as a regression target.

Cagnetta, Petrini, Tomasini, Favero & Wyart, "How deep neural networks learn
compositional data: the random hierarchy model", Phys. Rev. X 14, 031001
(2024). A class (level L) generates a string of s^L tokens through L levels
of production rules: every symbol of level l (a class at the top, else one of
v symbols) has m synonymous rules, each an s-tuple of level-(l-1) symbols;
the m v rules of a level (n_c m at the top) are distinct s-tuples drawn
uniformly without replacement from the v^s possible ones (so m <= v^(s-1)
and n_c m <= v^s), as in the paper. Because rules are distinct, every valid
string parses uniquely bottom-up and has exactly one class.

Distribution: uniform over the n_c m^N valid strings, N = (s^L - 1)/(s - 1)
rule applications; equivalently a uniform class, then a uniform rule at
every node, top down (each choice gives a different string).

Labels: for n_c = 2 the scalar y = +1 for class 0 and -1 for class 1
(mean 0, variance 1 exactly, as the classes have equally many strings), the
label of the toolkit's scalar regression pipeline. For any n_c,
``RHM.one_hot`` gives the reference implementation's vector target: one
output per class, centred (1 - 1/n_c for the class, -1/n_c elsewhere), whose
squared norm averages 1 - 1/n_c (``one_hot_variance``); for n_c = 2 the
difference of its two outputs is y. ``classification_error`` scores either
form by argmax (sign for the scalar). The scalar pipeline refuses n_c > 2
with one line (calling the target needs a scalar label).

Points are token arrays of shape (n, s^L) (integers in [0, v)); networks and
kernels read the one-hot encoding flattened position-major
(``RHMDomain.features``: feature p v + t is 1 when token p is t): fc archs
that vector, ``tree`` archs (the CNN of ``tree_arch``) its (s^L, v)
reshape, positions by v channels. Splits (``RHMDomain.draw_split``): the
pool is distinct valid strings, the test strings are outside it.

Fourier complexity: how the label's variance spreads over sets of token
positions under the uniform law of valid strings. Token positions are NOT
independent under this law, so the Efron-Stein (Hoeffding) components
f_S = sum_{T subset S} (-1)^{|S - T|} E[y | x_T] (inclusion-exclusion over
conditional expectations) are not orthogonal: sum_S E f_S^2 need not equal
Var y, and the covariance shares E[f_S (y - E y)], which do sum to Var y,
can be negative. Both are reported (``weight_es_squared``,
``weight_es_covariance``). The degree profile ``weight`` used for the
complexity measures is the orthogonal one: W_k = Var(P_k y) - Var(P_{k-1} y),
with P_k the L2 projection (under the law of valid strings) onto functions
of at most k positions. It is non-negative, sums to Var y, and equals the
Efron-Stein weight sum_{|S| = k} E f_S^2 whenever the positions are
independent (then P_k y = sum_{|S| <= k} f_S).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from math import comb

import numpy as np

from ntkgap.errors import UsageError
from ntkgap.specs import Field, Schema
from ntkgap.spectral import complexity
from ntkgap.targets.boolean import SpecPrinted

MAX_ENUMERATE = 1 << 22
# entries of the (2^P, n_valid) array of the exact Efron-Stein decomposition
MAX_EFRON_STEIN = 1 << 24
# strings in the exact projection profile (n x n eigendecompositions)
MAX_PROJECTION = 4096


def _check(p):
    v, n_c, m, s, L = p["v"], p["n_c"], p["m"], p["s"], p["L"]
    if m * v > v**s:
        return f"m*v = {m * v} distinct rules per level exceed v^s = {v**s} s-tuples"
    if n_c * m > v**s:
        return f"n_c*m = {n_c * m} distinct class rules exceed v^s = {v**s} s-tuples"
    if s**L > 4096:
        return f"s^L = {s**L} tokens exceed 4096"
    if v**s > 2**62:
        return f"v^s = {v}^{s} s-tuples exceed 2^62"


SCHEMAS = {
    "rhm": Schema(
        {
            "v": Field(int, min=2, max=256, doc="vocabulary size per level"),
            "n_c": Field(int, min=2, max=256, doc="number of classes (n_c > 2: one-hot labels)"),
            "m": Field(int, min=1, max=10_000, doc="synonymous rules per symbol"),
            "s": Field(int, min=2, max=16, doc="tuple (patch) size"),
            "L": Field(int, min=1, max=12, doc="levels"),
            "seed": Field(int, default=0, min=0),
        },
        _check,
        doc="random hierarchy model (Cagnetta et al., PRX 2024): s^L one-hot tokens, "
        "label +-1 (n_c = 2) or one-hot over n_c classes",
    )
}


@dataclass(frozen=True)
class RHMDomain:
    """The valid strings of one RHM under their uniform law.

    Points are integer token arrays of shape (n, s^L); ``features`` is the
    one-hot encoding, flattened position-major, of shape (n, s^L v).
    """

    target: object

    name = "rhm"

    def __str__(self):
        t = self.target
        return f"rhm-strings:tokens={t.P},v={t.v}"

    @property
    def length(self) -> int:
        return self.target.P

    @property
    def input_dim(self) -> int:
        return self.target.P * self.target.v

    @property
    def size(self) -> int:
        """The number of valid strings, n_c m^N."""
        return self.target.n_valid

    def sample(self, n: int, *, seed: int, replace: bool = True) -> np.ndarray:
        return self.target.sample(n, seed=seed, replace=replace)[0]

    def enumerate(self) -> np.ndarray:
        return self.target.enumerate()[0]

    def draw_split(self, n: int, n_test: int, *, pool_seed: int, test_seed: int):
        """n distinct valid strings (the pool) and n_test test strings
        outside the pool: the RHM's part of :func:`ntkgap.targets.split.split`.

        Distinct strings are distinct indices in [0, n_valid) (the class,
        then the rule choices; :meth:`RHM._decode`). When at most n_test
        strings remain outside the pool, the test set is all of them.

        Args:
            n: pool size (at most n_valid - 1, so that a test string exists).
            n_test: test strings wanted.
            pool_seed: seed of the pool.
            test_seed: seed of the test strings.

        Returns:
            (pool tokens (n, s^L), test tokens, exhaustive: whether the test
            set is every string outside the pool).
        """
        t = self.target
        if t.n_valid >= 2**62 or n >= t.n_valid:
            raise UsageError(
                f"split: target '{t.spec}' has {t.n_valid} valid strings; n={n} leaves "
                f"none to test on (allowed: n < {min(t.n_valid, 2**62)})"
            )
        pool_idx = np.random.default_rng(pool_seed).choice(t.n_valid, size=n, replace=False)
        trng = np.random.default_rng(test_seed)
        exhaustive = t.n_valid - n <= n_test
        if t.n_valid <= 1 << 22:
            rest = np.setdiff1d(np.arange(t.n_valid, dtype=np.int64), pool_idx)
            test_idx = rest if exhaustive else trng.choice(rest, size=n_test, replace=False)
        else:
            # rejection: the pool is a vanishing share of the strings
            taken, test_idx = set(pool_idx.tolist()), []
            while len(test_idx) < n_test:
                for i in trng.choice(t.n_valid, size=2 * n_test, replace=False).tolist():
                    if i not in taken and len(test_idx) < n_test:
                        taken.add(i)
                        test_idx.append(i)
        return t._decode(pool_idx)[0], t._decode(np.asarray(test_idx))[0], bool(exhaustive)

    def features(self, x) -> np.ndarray:
        x = np.asarray(x)
        out = np.zeros((x.shape[0], x.shape[1], self.target.v))
        np.put_along_axis(out, x[:, :, None].astype(np.int64), 1.0, axis=2)
        return out.reshape(x.shape[0], -1)


class RHM(SpecPrinted):
    """The random hierarchy model of ``rhm:v=..,n_c=..,m=..,s=..,L=..,seed=..``.

    Attributes:
        rules: list of L arrays, top level first; ``rules[k]`` has shape
            (symbols, m, s): the rules of the symbols k levels below the top
            (the classes for k = 0), as s-tuples of the next level's symbols.
    """

    def __init__(self, spec):
        self.spec = spec
        self.v, self.n_c, self.m = spec["v"], spec["n_c"], spec["m"]
        self.s, self.L = spec["s"], spec["L"]
        self.P = self.s**self.L
        self.N = (self.P - 1) // (self.s - 1)
        self.n_valid = self.n_c * self.m**self.N
        rng = np.random.default_rng(spec["seed"])
        self.rules = []
        self._parse = []
        powers = self.v ** np.arange(self.s - 1, -1, -1, dtype=np.int64)
        for k in range(self.L):
            n_sym = self.n_c if k == 0 else self.v
            codes = rng.choice(self.v**self.s, size=n_sym * self.m, replace=False)
            codes = np.asarray(codes, dtype=np.int64)
            tuples = (codes[:, None] // powers) % self.v
            self.rules.append(tuples.reshape(n_sym, self.m, self.s))
            order = np.argsort(codes)
            self._parse.append((codes[order], (order // self.m).astype(np.int64)))

    # exact: the classes have equally many valid strings
    mean = 0.0

    @property
    def variance(self) -> float:
        """Var y = 1 for the +-1 label (n_c = 2); E||y||^2 = 1 - 1/n_c one-hot."""
        return 1.0 if self.n_c == 2 else self.one_hot_variance

    @property
    def domain(self):
        return RHMDomain(self)

    @property
    def support(self):
        # hypercube-only code paths (the FWHT) stop here with one line
        raise UsageError(
            f"target '{self.spec}' is a string of {self.P} tokens over v={self.v} "
            "symbols, not a point of a hypercube: no Walsh transform applies "
            "(its degree profile is over token positions)"
        )

    # ------------------------------------------------------------ sampling
    def _expand(self, classes, choices):
        """Strings from classes (n,) and rule choices (n, N) in breadth-first
        order (level by level from the top, left to right)."""
        sym = np.asarray(classes, dtype=np.int64)[:, None]
        offset = 0
        for k in range(self.L):
            width = self.s**k
            pick = choices[:, offset : offset + width]
            sym = self.rules[k][sym, pick].reshape(sym.shape[0], width * self.s)
            offset += width
        return sym.astype(np.int16)

    def _decode(self, index):
        """Strings of the given indices in [0, n_valid): class first, then
        the rule choices as base-m digits, breadth-first."""
        index = np.asarray(index, dtype=np.int64)
        choices = np.zeros((index.size, self.N), dtype=np.int64)
        rest = index.copy()
        for j in range(self.N - 1, -1, -1):
            choices[:, j] = (rest % self.m).astype(np.int64)
            rest = rest // self.m
        classes = rest.astype(np.int64)
        return self._expand(classes, choices), classes

    def sample(self, n: int, *, seed: int, replace: bool = True):
        """n valid strings, uniform, and their labels.

        Args:
            n: number of strings.
            seed: the random seed (same seed, same strings).
            replace: False draws n distinct strings (needs n <= n_valid < 2^62).

        Returns:
            (tokens of shape (n, s^L), labels +-1 of shape (n,)).
        """
        rng = np.random.default_rng(seed)
        if replace:
            classes = rng.integers(0, self.n_c, size=n)
            choices = rng.integers(0, self.m, size=(n, self.N))
            x = self._expand(classes, choices)
        else:
            if self.n_valid >= 2**62 or n > self.n_valid:
                raise UsageError(
                    f"target '{self.spec}': cannot draw {n} distinct strings "
                    f"of {self.n_valid} (allowed: n <= n_valid < 2^62)"
                )
            x, classes = self._decode(rng.choice(self.n_valid, size=n, replace=False))
        return x, self.label(classes)

    def enumerate(self):
        """All valid strings (index order) and their labels; at most 2^22."""
        if self.n_valid > MAX_ENUMERATE:
            raise UsageError(
                f"target '{self.spec}': {self.n_valid} valid strings are too many to "
                f"enumerate (allowed: <= {MAX_ENUMERATE})"
            )
        x, classes = self._decode(np.arange(self.n_valid))
        return x, self.label(classes)

    def label(self, classes) -> np.ndarray:
        """The natural label of each class: +-1 (n_c = 2) or centred one-hot.

        Args:
            classes: integer classes in [0, n_c), shape (n,).

        Returns:
            float64 array, shape (n,) for n_c = 2, else (n, n_c).
        """
        c = np.asarray(classes, dtype=np.int64)
        return 1.0 - 2.0 * c if self.n_c == 2 else self.one_hot(c)

    def one_hot(self, classes) -> np.ndarray:
        """The reference implementation's vector target, centred: entry c of
        row i is 1 - 1/n_c when string i has class c, else -1/n_c.

        Args:
            classes: integer classes in [0, n_c), shape (n,).

        Returns:
            float64 array of shape (n, n_c); rows sum to 0.

        References:
            Cagnetta, Petrini, Tomasini, Favero & Wyart, Phys. Rev. X 14,
            031001 (2024) (one output per class, argmax read-out).
        """
        c = np.asarray(classes, dtype=np.int64)
        return np.eye(self.n_c)[c] - 1.0 / self.n_c

    @property
    def one_hot_variance(self) -> float:
        """E ||one_hot - E one_hot||^2 = 1 - 1/n_c (uniform classes, exact)."""
        return 1.0 - 1.0 / self.n_c

    def classify(self, x) -> np.ndarray:
        """The class of each string by bottom-up parsing; -1 where invalid."""
        sym = np.asarray(x, dtype=np.int64)
        if sym.ndim != 2 or sym.shape[1] != self.P:
            raise ValueError(f"expected token arrays of shape (n, {self.P}), got {sym.shape}")
        bad = np.any((sym < 0) | (sym >= self.v), axis=1)
        sym = np.clip(sym, 0, self.v - 1)
        powers = self.v ** np.arange(self.s - 1, -1, -1, dtype=np.int64)
        for k in range(self.L - 1, -1, -1):
            codes = sym.reshape(sym.shape[0], -1, self.s) @ powers
            sorted_codes, owner = self._parse[k]
            pos = np.clip(np.searchsorted(sorted_codes, codes), 0, sorted_codes.size - 1)
            ok = sorted_codes[pos] == codes
            bad |= ~np.all(ok, axis=1)
            sym = np.where(ok, owner[pos], 0)
        return np.where(bad, -1, sym[:, 0])

    def __call__(self, x) -> np.ndarray:
        if self.n_c != 2:
            raise UsageError(
                f"target '{self.spec}': n_c={self.n_c} classes have one-hot labels "
                "(one output per class); scalar regression and training take n_c = 2"
            )
        return self.label(self.classes(x))

    def classes(self, x) -> np.ndarray:
        """The class of each valid string (a ValueError when one is invalid)."""
        c = self.classify(x)
        if np.any(c < 0):
            raise ValueError(f"{int(np.sum(c < 0))} of {c.size} strings are not valid")
        return c

    # ---------------------------------------------------------- complexity
    def architecture(self) -> dict:
        """Architectural complexity: one constituent per rule application."""
        return {
            "constituents": self.N,
            "max_fan_in": self.s,
            "depth": self.L,
            "support_size": self.P,
            "input": f"{self.P} tokens, one-hot over v={self.v}",
            "exact_relu_params": None,
            "exact_relu_params_formula": None,
        }

    def tree_arch(self) -> str:
        """The depth-aware architecture: the CNN of Cagnetta et al. (PRX 2024),
        L layers with filters = strides = s over the one-hot tokens and
        weights shared across positions (``share=1``: the grammar's rules are
        the same at every position of a level). ``share=0`` (locally
        connected) has the same infinite-width NTK (see ``ntkgap.nets.arch``)."""
        return f"tree:arity={self.s},L={self.L},share=1"

    def moments(self) -> dict:
        """Exact: every class has n_valid / n_c strings; y = +-1 (n_c = 2),
        else the centred one-hot, whose squared norm is 1 - 1/n_c on every
        string (so its second moment over its fourth is 1)."""
        var = 1.0 if self.n_c == 2 else self.one_hot_variance
        return {
            "mean": 0.0,
            "variance": var,
            "fourth_moment": var**2,
            "kurtosis": 1.0,
            "max_abs": 1.0,
            "points": self.n_valid,
            "exact": True,
        }

    def efron_stein(self) -> dict:
        """The degree profile of y over token positions, exact by enumeration.

        Returns:
            dict with ``degree`` (0..s^L), ``weight`` (the orthogonal profile
            W_k = Var P_k y - Var P_{k-1} y; sums to Var y),
            ``weight_es_squared`` (sum over |S| = k of E f_S^2),
            ``weight_es_covariance`` (sum over |S| = k of E[f_S (y - E y)];
            sums to Var y), ``variance`` and ``mean``; see the module docstring.

        References:
            Efron & Stein, Ann. Statist. 9 (1981); Hoeffding, Ann. Math.
            Statist. 19 (1948); for dependent inputs, Chastaing, Gamboa &
            Prieur, Electron. J. Statist. 6 (2012) (the covariance share).
        """
        return _efron_stein_cached(str(self.spec), self)

    def spectrum_report(self) -> dict:
        """The fields ``ntkgap spectrum`` reports for a hypercube target,
        with degrees counted in token positions."""
        es = self.efron_stein()
        power = np.asarray(es["weight"])
        return {
            "variance": es["variance"],
            "mean": es["mean"],
            "positions": self.P,
            "degree": es["degree"],
            "weight": es["weight"],
            "weight_es_squared": es["weight_es_squared"],
            "weight_es_covariance": es["weight_es_covariance"],
            "dominant_degree": complexity.dominant(power),
            "complexity": complexity.measures(power),
            "architecture": self.architecture(),
            "moments": self.moments(),
        }


@functools.lru_cache(maxsize=16)
def _efron_stein_cached(key, target):
    if target.n_valid > MAX_PROJECTION:
        raise UsageError(
            f"target '{key}': the exact degree profile needs at most {MAX_PROJECTION} "
            f"valid strings, this grammar has {target.n_valid}"
        )
    x, y = target.enumerate()
    return efron_stein(x, y, target.v)


def efron_stein(x, y, v: int) -> dict:
    """Efron-Stein weights per degree of y over the columns of x, under the
    uniform law of the rows (see :meth:`RHM.efron_stein`).

    Args:
        x: (n, P) integer symbols in [0, v), the support of the law.
        y: (n,) values.
        v: alphabet size.

    Returns:
        dict with ``degree``, ``weight``, ``weight_squared``, ``variance``, ``mean``.
    """
    x = np.asarray(x, dtype=np.int64)
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 2:  # vector labels: each output's profile, summed (orthogonal outputs)
        parts = [efron_stein(x, y[:, c], v) for c in range(y.shape[1])]
        out = {k: np.sum([p[k] for p in parts], axis=0).tolist() for k in parts[0]}
        out["degree"] = parts[0]["degree"]
        out["mean"] = float(np.linalg.norm(y.mean(axis=0)))
        return out
    n, P = x.shape
    weight = projection_profile(x, y)  # refuses early when too large
    if (1 << P) * n > MAX_EFRON_STEIN:
        raise UsageError(
            f"exact Efron-Stein decomposition over {P} positions and {n} strings needs "
            f"2^{P} x {n} values (allowed: <= {MAX_EFRON_STEIN})"
        )
    # g[T] = E[y | x_T] at every row, for every subset T (bit j <-> position j)
    g = np.empty((1 << P, n))
    for T in range(1 << P):
        cols = [j for j in range(P) if T >> j & 1]
        key = x[:, cols] @ (v ** np.arange(len(cols), dtype=np.int64)) if cols else np.zeros(n)
        _, inverse = np.unique(key, return_inverse=True)
        inverse = inverse.ravel()
        g[T] = (np.bincount(inverse, weights=y) / np.bincount(inverse))[inverse]
    # Moebius inversion over the subset lattice: f_S = sum_{T <= S} (-1)^{|S-T|} g_T
    for j in range(P):
        step = 1 << j
        view = g.reshape(-1, 2, step, n)
        view[:, 1] -= view[:, 0]
    mean = float(y.mean())
    centred = y - mean
    cov = g @ centred / n
    sq = np.mean(g**2, axis=1)
    deg = np.array([bin(S).count("1") for S in range(1 << P)])
    return {
        "degree": list(range(P + 1)),
        "weight": weight.tolist(),
        "weight_es_squared": np.bincount(deg, weights=sq, minlength=P + 1).tolist(),
        "weight_es_covariance": np.bincount(deg, weights=cov, minlength=P + 1).tolist(),
        "variance": float(np.mean(centred**2)),
        "mean": mean,
    }


def projection_profile(x, y) -> np.ndarray:
    """Variance explained per number of token positions, under the law of x's rows.

    W_k = Var(P_k y) - Var(P_{k-1} y), k = 0..P (W_0 = (E y)^2), where P_k
    projects onto functions of <= k columns. The functions of x_S over all
    |S| = k span that space; their Gram matrix over the rows is
    K_k[i, j] = C(agree(i, j), k), agree = the number of columns where rows
    i and j are equal, so P_k is the projection onto the range of K_k (an
    n x n eigendecomposition).

    Args:
        x: the valid strings, shape (n, P) (n <= MAX_PROJECTION).
        y: their labels, shape (n,), or (n, k) vector labels (the squared
            norm of the projection: the columns' profiles summed).

    Returns:
        float64 array of shape (P + 1,): W_0..W_P (|W_k| below 1e-12 x the
        total set to 0).
    """
    x = np.asarray(x)
    y = np.asarray(y, dtype=np.float64)
    n, P = x.shape
    if n > MAX_PROJECTION:
        raise UsageError(
            f"exact degree profile over {n} valid strings needs {n} x {n} "
            f"eigendecompositions (allowed: <= {MAX_PROJECTION} strings)"
        )
    agree = np.zeros((n, n), dtype=np.int16)
    for j in range(P):
        agree += x[:, j, None] == x[None, :, j]
    binom = np.array([[comb(a, k) for k in range(P + 1)] for a in range(P + 1)], float)
    explained = [float(np.sum(np.mean(y, axis=0) ** 2))]
    for k in range(1, P + 1):
        K = binom[agree, k]
        lam, vec = np.linalg.eigh(K)
        keep = lam > 1e-9 * lam[-1]
        proj = vec[:, keep] @ (vec[:, keep].T @ y)
        explained.append(float(np.sum(proj**2) / n))
    w = np.diff(explained, prepend=0.0)
    return np.where(np.abs(w) < 1e-12 * max(explained[-1], 1e-300), 0.0, w)


BUILDERS = {"rhm": RHM}


def predicted_classes(outputs) -> np.ndarray:
    """Classes read from network or kernel outputs: argmax over the n_c
    outputs, or for a scalar output (n_c = 2, label +-1) class 0 when it is
    positive, else class 1.

    Args:
        outputs: shape (n,) (scalar) or (n, n_c).

    Returns:
        int64 array of shape (n,).
    """
    out = np.asarray(outputs, dtype=np.float64)
    if out.ndim == 1:
        return np.where(out > 0, 0, 1).astype(np.int64)
    return np.argmax(out, axis=1).astype(np.int64)


def classification_error(outputs, classes) -> float:
    """The share of strings whose predicted class (``predicted_classes``)
    differs from the true one.

    Args:
        outputs: shape (n,) (scalar, n_c = 2) or (n, n_c).
        classes: the true classes, shape (n,).

    Returns:
        float in [0, 1].
    """
    c = np.asarray(classes, dtype=np.int64)
    return float(np.mean(predicted_classes(outputs) != c))


def regression_error(outputs, labels, variance: float) -> float:
    """Mean squared error summed over outputs, relative to the label variance
    (the toolkit's test MSE, for vector labels as for scalar ones).

    Args:
        outputs: predictions, shape (n,) or (n, n_c).
        labels: the labels, same shape.
        variance: E||y - E y||^2 (``RHM.variance``).

    Returns:
        float.
    """
    diff = np.asarray(outputs, dtype=np.float64) - np.asarray(labels, dtype=np.float64)
    return float(np.sum(diff**2) / diff.shape[0] / variance)


#: the result field of a predictor's test classification error (argmax), set
#: by the kernel predictor and the trained nets on ``OneHotLabels``
CLASSIFICATION_RESULT = "test_classification_error"


class OneHotLabels:
    """An RHM read as a classification target: every call returns the
    centred one-hot labels (``RHM.one_hot``, one output per class, n_c = 2
    included), the variance is ``one_hot_variance`` and ``outputs`` = n_c;
    everything else is the RHM's. The predictors fit the n_c outputs and are
    scored by argmax (``classification_error``) as in the reference
    implementation (Cagnetta et al., Phys. Rev. X 14, 031001 (2024)).

    Args:
        target: an ``RHM``.
    """

    def __init__(self, target):
        if not isinstance(target, RHM):
            raise UsageError(f"target_error = 'classification' needs an rhm target, not '{target}'")
        self.rhm = target
        self.outputs = target.n_c

    def __getattr__(self, name):
        return getattr(self.rhm, name)

    def __str__(self):
        return str(self.rhm)

    @property
    def variance(self) -> float:
        return self.rhm.one_hot_variance

    def __call__(self, x) -> np.ndarray:
        return self.rhm.one_hot(self.rhm.classes(x))
