"""The one (train, validation, test) split every predictor of a comparison
uses, nested in n: for each seed one seeded ordering of the candidate
points, the pool for n is its first n points (train, then validation), and
the test set is fixed per seed and disjoint from every pool. The NTK
predictor and the trained networks with the same (target, n, seed, n_test)
see the same pool and test points, and a seed's pools at n < m are the first
n points of its pool at m, so seeds stay paired at every n and a kernel
learning curve needs one factorization (``ntkgap.kernels.krr``).

On the hypercube a target reads only its support coordinates, so points
are told apart by their *key configuration*: the values of the support
coordinates when the support cube has at least 2 n_test configurations
(a tree target on d = 40 with 8 leaves has 256), else of every coordinate
(a sparse parity's 2^k support configurations are all seen early: its
points are then distinct in the whole input, the test points new in it,
and ``support_overlap`` reaches 1). The test set reserves
min(n_test, C // 2) of the C key configurations (at most half the cube, so
pools always have as many as the test set); pools order the other
configurations, distinct until n exceeds them, then again in a fresh
order each round (``duplicates`` counts the repeats, ``overlap`` stays 0).
Where the cube has at most 2^``EXACT_BITS`` configurations the order is an
exact permutation; larger cubes are drawn by rejection in fixed chunks of
``CHUNK`` (an n-independent stream). Coordinates outside the key are filled
at random per chunk of points. On the circle points are continuous (chunks
of ``CHUNK`` angles, overlap 0). The random hierarchy model's valid strings
(``RHMDomain``) are ordered by their indices the same way: distinct strings,
test strings outside every pool, overlap 0.

A changed rule: before the nested split, each n drew its own pool and its
test set from the configurations outside it (every stored n* predates it).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ntkgap._infra.seeds import derive
from ntkgap.errors import UsageError
from ntkgap.targets.domains import Circle

# key cubes of up to 2^EXACT_BITS configurations are permuted exactly
EXACT_BITS = 20
#: points per chunk of a rejection stream, a fill draw or a circle draw
CHUNK = 1024
_MAX_CHUNKS = 1 << 16  # a rejection stream gives up after this many chunks


class Split(NamedTuple):
    """Points (domain format) and labels of one split, and what it shares.

    ``overlap``: fraction of test points equal to a pool (train or
    validation) point; ``support_overlap``: fraction whose support
    configuration (the inputs the label depends on) is a pool one;
    ``duplicates``: pool points repeating an earlier one in the key
    coordinates (the support, or every coordinate, see the module doc);
    ``support_bits``: how many key coordinates (None on the circle and for
    token strings); ``exhaustive``: the pool's distinct key configurations
    and the test set together are the whole key cube.
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
    """The pool of n points (the first n - n_val train, the rest validation)
    and the test points of ``target``, nested in n (see the module doc).

    Args:
      target: a parsed target.
      n: pool size (train + validation), >= 1.
      seed: the seed; the pool for n is the first n points of the seed's
        ordering, the test points depend on (target, seed, n_test) only,
        and neither depends on n_val.
      n_val: validation points taken from the end of the pool.
      n_test: test points wanted (at most half the key cube is used).

    Returns:
      A :class:`Split`.
    """
    n, n_val, n_test = int(n), int(n_val), int(n_test)
    if n < 1 or not 0 <= n_val < n or n_test < 1:
        raise UsageError(f"split: n={n}, n_val={n_val}, n_test={n_test} (allowed: 0 <= n_val < n)")
    dom = target.domain
    if isinstance(dom, Circle):
        chunks = [dom.sample(CHUNK, seed=derive(seed, "split-pool", k)) for k in range(_ceil(n))]
        pool = np.concatenate(chunks)[:n]
        test = dom.sample(n_test, seed=derive(seed, "split-test", n_test))
        overlap = float(np.mean(np.isin(test, pool)))
        return _finish(target, pool, test, n_val, overlap, 0, None, False)
    if hasattr(dom, "draw_split"):  # token strings (the RHM): ordered by string index
        t = dom.target
        pool_idx, test_idx, dup = _index_order(t.n_valid, n, n_test, seed)
        pool, test = t._decode(pool_idx)[0], t._decode(test_idx)[0]
        exhaustive = n - dup + test_idx.size == t.n_valid
        return _finish(target, pool, test, n_val, 0.0, dup, None, exhaustive)
    return _hypercube(target, n, n_val, n_test, seed)


def pool_capacity(target, n_test: int = 2000) -> dict | None:
    """How many distinct points a pool of ``target`` can hold beside its
    test set (the split orders the rest; a larger pool repeats them).

    Args:
      target: a parsed target.
      n_test: test points wanted (at most half the key cube is reserved).

    Returns:
      ``{"configurations", "test", "pool", "what"}``: the key configurations
      (or valid strings), how many the test set reserves, how many remain
      for a pool, and what they are in words; None on the circle (points are
      continuous).
    """
    dom = target.domain
    if isinstance(dom, Circle):
        return None
    if hasattr(dom, "draw_split"):
        size, what = int(dom.target.n_valid), "valid strings"
    else:
        sup = np.asarray(target.support, dtype=np.int64)
        keyed = sup.size < dom.d and int(n_test) <= 2 ** int(sup.size) // 2
        s = int(sup.size) if keyed else int(dom.d)
        if s > 62:
            return None
        size = 2**s
        what = f"configurations of its {s} {'support' if keyed else 'input'} coordinates"
    test = min(int(n_test), size // 2)
    return {"configurations": size, "test": test, "pool": size - test, "what": what}


def _hypercube(target, n, n_val, n_test, seed) -> Split:
    dom = target.domain
    sup = np.asarray(target.support, dtype=np.int64)
    keyed = sup.size < dom.d and n_test <= 2 ** int(sup.size) // 2
    coords = sup if keyed or sup.size >= dom.d else np.arange(dom.d, dtype=np.int64)
    s = int(coords.size)
    if s <= EXACT_BITS:
        pool_idx, test_idx, _ = _index_order(2**s, n, n_test, seed)
        pool_bits, test_bits = _index_bits(pool_idx, s), _index_bits(test_idx, s)
    else:
        pool_bits, test_bits = _row_stream(s, n, min(n_test, 1 << EXACT_BITS), seed)
    fills = [_fill_rows(derive(seed, "split-fill", k), CHUNK, dom.d) for k in range(_ceil(n))]
    pool = _put(np.concatenate(fills)[:n], pool_bits, coords)
    test = _put(_fill_rows(derive(seed, "split-test-fill", n_test), len(test_bits), dom.d),
                test_bits, coords)  # fmt: skip
    distinct = len(_keys(pool[:, coords] < 0))
    if _share(test, pool, coords) != 0.0:  # the construction promises it: check it on the points
        raise AssertionError("split: test points repeat pool points")
    return _finish(
        target, pool, test, n_val, _share(test, pool, np.arange(dom.d)), n - distinct, s,
        distinct + len(test_bits) == 2**s,
        support_overlap=_share(test, pool, sup),
        support_duplicates=n - len(_keys(pool[:, sup] < 0)),
    )  # fmt: skip


def _ceil(n: int) -> int:
    return -(-int(n) // CHUNK)


def _index_order(size: int, n: int, n_test: int, seed: int):
    """The seed's ordering of ``size`` configurations (or strings) as indices:
    (first n pool indices, the test indices, pool repeats).

    The test set is min(n_test, size // 2) indices; the pool orders the
    rest, in a fresh permutation per round once n exceeds them. Exact
    permutations up to 2^EXACT_BITS, rejection streams above."""
    m = min(int(n_test), size // 2)
    if m < 1:
        raise UsageError(f"split: {size} configurations leave none to test on")
    if size > 1 << EXACT_BITS:
        if size >= 2**62:
            raise UsageError(f"split: {size} configurations are too many to index")
        return (*_int_stream(size, n, m, seed), 0)
    perm = np.random.default_rng(derive(seed, "split-order")).permutation(size)
    test, rest = perm[size - m :], perm[: size - m]
    rounds = [rest]
    for r in range(1, -(-n // rest.size)):
        rounds.append(np.random.default_rng(derive(seed, "split-round", r)).permutation(rest))
    return np.concatenate(rounds)[:n], np.sort(test), max(0, n - rest.size)


def _int_stream(size, n, m, seed):
    """n distinct pool indices (in stream order) and m test indices, none
    shared, from [0, size) by rejection; the stream does not depend on n."""
    trng = np.random.default_rng(derive(seed, "split-test", m))
    test: dict = {}
    while len(test) < m:
        for i in trng.integers(0, size, 2 * m).tolist():
            if len(test) < m:
                test.setdefault(i, None)
    seen, pool = set(test), []
    for k in range(_MAX_CHUNKS):
        if len(pool) >= n:
            break
        for i in np.random.default_rng(derive(seed, "split-pool", k)).integers(0, size, CHUNK):
            if int(i) not in seen:
                seen.add(int(i))
                pool.append(int(i))
    return np.asarray(pool[:n], np.int64), np.asarray(list(test), np.int64)


def _row_stream(s, n, m, seed):
    """As ``_int_stream`` for cubes of s > EXACT_BITS bits, as bit rows."""
    trng = np.random.default_rng(derive(seed, "split-test", m))
    test_rows, seen = [], set()
    while len(test_rows) < m:
        cand = trng.integers(0, 2, size=(2 * m, s), dtype=np.uint8).astype(bool)
        for row, key in zip(cand, np.packbits(cand, axis=1)):
            if len(test_rows) < m and bytes(key) not in seen:
                seen.add(bytes(key))
                test_rows.append(row)
    rows = []
    for k in range(_MAX_CHUNKS):
        if len(rows) >= n:
            break
        rng = np.random.default_rng(derive(seed, "split-pool", k))
        cand = rng.integers(0, 2, size=(CHUNK, s), dtype=np.uint8).astype(bool)
        for row, key in zip(cand, np.packbits(cand, axis=1)):
            if bytes(key) not in seen:
                seen.add(bytes(key))
                rows.append(row)
    if len(rows) < n:
        raise UsageError(f"split: could not draw {n} distinct configurations of {s} bits")
    return np.asarray(rows[:n], bool).reshape(n, s), np.asarray(test_rows, bool).reshape(m, s)


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
        pool[:n_tr], y[:n_tr], pool[n_tr:], y[n_tr:], test, yt, overlap, int(duplicates), s,
        bool(exhaustive), overlap if support_overlap is None else support_overlap,
        int(support_duplicates),
    )  # fmt: skip


def _index_bits(index, s):
    """Configuration bits (True where x_j = -1) of configuration indices."""
    return ((np.asarray(index, np.int64)[:, None] >> np.arange(s)) & 1).astype(bool)


def _keys(bits) -> set:
    return {bytes(k) for k in np.packbits(bits, axis=1)}


def _fill_rows(seed, m, d):
    """m random points of the d-cube (int8 +-1) from ``seed``."""
    rng = np.random.default_rng(seed)
    return (1 - 2 * rng.integers(0, 2, size=(m, d), dtype=np.int8)).astype(np.int8)


def _put(x, bits, coords):
    """``x`` with the key coordinates set to the configurations ``bits``."""
    x = x.copy()
    x[:, coords] = np.where(bits, -1, 1).astype(np.int8)
    return x
