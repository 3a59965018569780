"""The one (train, validation, test) split every predictor of a comparison
uses: the NTK predictor and the trained networks with the same (target, n,
seed) see the same sample pool and the same test points.

On the hypercube a target reads only its support coordinates, so points
are told apart by their *support configuration* (the values of those
coordinates; a tree target on d = 24 with 8 leaves has 256). The n pool
points (train, then validation) carry distinct configurations, drawn
without replacement; the test points carry configurations outside the
pool, and the function asserts it. Where the support cube has at most
2^``EXACT_BITS`` configurations the draw is exact (a permutation); where
fewer configurations remain than ``n_test`` the test set is all of them,
each equally often. Where n exceeds the support cube, configurations must
repeat: the pool then covers the cube as evenly as possible, the test set
is drawn from the whole cube, and ``overlap`` (the fraction of test points
whose configuration is in the pool) says so. Coordinates outside the
support are filled at random from the seed. On the circle points are
continuous: the overlap is 0. The random hierarchy model's domain (valid
token strings) draws its own split (``RHMDomain.draw_split``): distinct
strings in the pool, test strings outside it, overlap 0.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ntkgap._infra.seeds import derive
from ntkgap.errors import UsageError
from ntkgap.targets.domains import Circle

# support cubes of up to 2^EXACT_BITS configurations are permuted exactly
EXACT_BITS = 20
_MAX_ROUNDS = 64  # rejection rounds for larger cubes (each draws the missing rows twice)


class Split(NamedTuple):
    """Points (domain format) and labels of one split, and what it shares.

    ``overlap``: fraction of test points equal to a pool (train or
    validation) point; ``support_overlap``: fraction whose support
    configuration (the inputs the label depends on) is a pool one;
    ``duplicates``: pool points repeating an earlier one in the coordinates
    sampled without replacement (the support, or every coordinate once n
    covers the support's cube); ``support_bits``: how many coordinates that
    was (None on the circle); ``exhaustive``: the test set is every
    configuration outside the pool.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    overlap: float
    duplicates: int
    support_bits: int | None
    exhaustive: bool
    support_overlap: float = 0.0
    support_duplicates: int = 0

    def info(self) -> dict:
        """The JSON-ready facts of the split (for results)."""
        return {
            "overlap": self.overlap,
            "support_overlap": self.support_overlap,
            "train_duplicates": self.duplicates,
            "support_duplicates": self.support_duplicates,
            "n_test_points": int(self.x_test.shape[0]),
            "test_exhaustive": self.exhaustive,
        }


def split(target, n: int, *, seed: int, n_val: int = 0, n_test: int = 2000) -> Split:
    """Draw the pool of n points (the first n - n_val train, the rest
    validation) and n_test test points for ``target``.

    Args:
      target: a parsed target.
      n: pool size (train + validation), >= 1.
      seed: the seed; the pool and the test points depend only on
        (target, n, seed, n_test), never on n_val.
      n_val: validation points taken from the end of the pool.
      n_test: test points wanted (fewer when fewer configurations remain).

    Returns:
      A :class:`Split`.
    """
    n, n_val, n_test = int(n), int(n_val), int(n_test)
    if n < 1 or not 0 <= n_val < n or n_test < 1:
        raise UsageError(f"split: n={n}, n_val={n_val}, n_test={n_test} (allowed: 0 <= n_val < n)")
    dom = target.domain
    if isinstance(dom, Circle):
        pool = dom.sample(n, seed=derive(seed, "train", n))
        test = dom.sample(n_test, seed=derive(seed, "test", n))
        overlap = float(np.mean(np.isin(test, pool)))
        return _finish(target, pool, test, n_val, overlap, 0, None, False)
    if hasattr(dom, "draw_split"):  # token strings (the RHM): distinct valid strings
        pool, test, exhaustive = dom.draw_split(
            n, n_test, pool_seed=derive(seed, "split-pool", n),
            test_seed=derive(seed, "split-test", n, n_test),
        )  # fmt: skip
        return _finish(target, pool, test, n_val, 0.0, 0, None, exhaustive)
    sup = np.asarray(target.support, dtype=np.int64)
    # distinct in the inputs the label depends on (the support) while the
    # support's cube is larger than the pool; once n covers it (a sparse
    # parity's 2^k configurations), distinct in the whole input instead
    coords = sup if n < 2**sup.size or sup.size >= dom.d else np.arange(dom.d, dtype=np.int64)
    s = coords.size
    rng = np.random.default_rng(derive(seed, "split-pool", n))
    trng = np.random.default_rng(derive(seed, "split-test", n, n_test))
    exhaustive = False
    if s <= EXACT_BITS:
        size = 2**s
        rounds = -(-n // size)
        pool_idx = np.concatenate([rng.permutation(size) for _ in range(rounds)])[:n]
        rest = np.setdiff1d(np.arange(size), pool_idx)
        if rest.size == 0:  # n covers the cube: test configurations repeat pool ones
            test_idx = trng.integers(0, size, n_test)
        elif rest.size <= n_test:  # all remaining, each equally often
            reps = max(1, n_test // rest.size) if s < dom.d else 1
            test_idx = np.tile(rest, reps)
            exhaustive = True
        else:
            test_idx = trng.choice(rest, n_test, replace=False)
        pool_bits = _index_bits(pool_idx, s)
        test_bits = _index_bits(test_idx, s)
    else:
        pool_bits = _distinct_rows(rng, n, s, exclude=None)
        test_bits = _distinct_rows(trng, n_test, s, exclude=_keys(pool_bits), unique=False)
    pool = _fill(rng, pool_bits, coords, dom.d)
    test = _fill(trng, test_bits, coords, dom.d)
    pool_keys = _keys(pool[:, coords] < 0)
    duplicates = n - len(pool_keys)
    overlap = _share(test, pool, np.arange(dom.d))
    if duplicates == 0 and n < 2**s:
        # the construction promises disjointness here: check it on the points
        if _share(test, pool, coords) != 0.0:
            raise AssertionError("split: test points repeat pool points")
    return _finish(
        target, pool, test, n_val, overlap, duplicates, s, exhaustive,
        support_overlap=_share(test, pool, sup),
        support_duplicates=n - len(_keys(pool[:, sup] < 0)),
    )  # fmt: skip


def _share(test, pool, coords) -> float:
    """Fraction of test points whose ``coords`` equal some pool point's."""
    keys = _keys(pool[:, coords] < 0)
    return float(np.mean([bytes(k) in keys for k in np.packbits(test[:, coords] < 0, axis=1)]))


def _finish(
    target, pool, test, n_val, overlap, duplicates, s, exhaustive, support_overlap=None,
    support_duplicates=0,
):  # fmt: skip
    n_tr = pool.shape[0] - n_val
    y, yt = target(pool), target(test)
    return Split(
        pool[:n_tr], y[:n_tr], pool[n_tr:], y[n_tr:], test, yt, overlap, duplicates, s, exhaustive,
        overlap if support_overlap is None else support_overlap, support_duplicates,
    )  # fmt: skip


def _index_bits(index, s):
    """Configuration bits (True where x_j = -1) of configuration indices."""
    return ((np.asarray(index, np.int64)[:, None] >> np.arange(s)) & 1).astype(bool)


def _keys(bits) -> set:
    return {bytes(k) for k in np.packbits(bits, axis=1)}


def _distinct_rows(rng, m, s, *, exclude, unique=True):
    """m random configurations of s bits, none in ``exclude``, pairwise
    distinct when ``unique`` (rejection sampling; the cube has > 2^20)."""
    rows, seen = [], set(exclude or ())
    for _ in range(_MAX_ROUNDS):
        need = m - len(rows)
        if need == 0:
            break
        cand = rng.integers(0, 2, size=(2 * need, s), dtype=np.uint8).astype(bool)
        for row, key in zip(cand, np.packbits(cand, axis=1)):
            k = bytes(key)
            if k in seen:
                continue
            if unique:
                seen.add(k)
            rows.append(row)
            if len(rows) == m:
                break
    if len(rows) < m:
        raise UsageError(f"split: could not draw {m} distinct configurations of {s} bits")
    return np.asarray(rows, dtype=bool).reshape(m, s)


def _fill(rng, bits, sup, d):
    """Points with the given support configurations, the rest at random."""
    x = (1 - 2 * rng.integers(0, 2, size=(bits.shape[0], d), dtype=np.int8)).astype(np.int8)
    x[:, sup] = np.where(bits, -1, 1).astype(np.int8)
    return x
