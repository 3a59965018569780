"""Exact Walsh-Fourier spectra on the hypercube by the fast Walsh-Hadamard
transform (O(s 2^s) for s support bits; O'Donnell, "Analysis of Boolean
Functions", 2014, ch. 1).

Index convention: index i in [0, 2^s) is the point with x_j = -1 exactly
where bit j of i is set, and the subset S containing j exactly where bit j
of S is set, so chi_S(x_i) = (-1)^popcount(S & i) and f_hat = H f / 2^s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ntkgap.errors import UsageError

MAX_BITS = 26


def fwht(values) -> np.ndarray:
    """Unnormalised fast Walsh-Hadamard transform H v, in O(n log n).

    Args:
        values: array whose first axis has length n = 2^s (further axes are
            transformed column by column).

    Returns:
        a new float64 array of the shape of ``values``.

    References:
        O'Donnell, "Analysis of Boolean Functions", 2014, ch. 1.
    """
    a = np.array(values, dtype=np.float64, copy=True)
    n, rest = a.shape[0], a.shape[1:]
    if n & (n - 1) or n == 0:
        raise UsageError(f"Walsh transform: length {n} is not a power of two (allowed: 2^s)")
    tmp = np.empty((n // 2,) + rest)
    h = 1
    while h < n:
        v = a.reshape((-1, 2, h) + rest)
        t = tmp.reshape((-1, h) + rest)
        np.subtract(v[:, 0, :], v[:, 1, :], out=t)
        v[:, 0, :] += v[:, 1, :]
        v[:, 1, :] = t
        h *= 2
    return a


def popcount(index) -> np.ndarray:
    """Number of set bits of each index (the size |S| of subset S).

    Args:
        index: an integer or array of non-negative integers.

    Returns:
        int64 array of the shape of ``index``.
    """
    return np.bitwise_count(np.asarray(index, dtype=np.uint64)).astype(np.int64)


def bit_column(s: int, j: int) -> np.ndarray:
    """Values of x_j at all 2^s points in index order.

    Blocks of 2^j (+1)s then 2^j (-1)s, written in one pass (no index
    arithmetic).

    Args:
        s: the number of bits.
        j: the coordinate, 0 <= j < s.

    Returns:
        float64 array of shape (2^s,) with entries +-1.
    """
    out = np.empty((2 ** (s - j - 1), 2, 2**j))
    out[:, 0, :] = 1.0
    out[:, 1, :] = -1.0
    return out.reshape(-1)


@dataclass
class WalshSpectrum:
    """Walsh coefficients f_hat(S) over a target's support (subset index S)."""

    support: tuple
    coefficients: np.ndarray

    @property
    def s(self):
        return len(self.support)

    def degree_profile(self) -> np.ndarray:
        """W^k = sum_{|S| = k} f_hat(S)^2 for k = 0..s (sums to E f^2)."""
        deg = popcount(np.arange(self.coefficients.size))
        return np.bincount(deg, weights=self.coefficients**2, minlength=self.s + 1)


def walsh_spectrum(target) -> WalshSpectrum:
    """Exact Walsh coefficients f_hat(S) of a hypercube target over its support.

    Args:
        target: a hypercube target with at most MAX_BITS support bits.

    Returns:
        WalshSpectrum with the target's ``support`` and ``coefficients``, a
        float64 array of shape (2^s,) indexed by subset S.

    References:
        O'Donnell, "Analysis of Boolean Functions", 2014, ch. 1.
    """
    s = len(target.support)
    if s > MAX_BITS:
        raise UsageError(
            f"target '{target.spec}': support of {s} bits exceeds {MAX_BITS} "
            f"for the exact Walsh transform (2^{s} float64 values, {2 ** (s - 27):g} GiB; "
            "only tree targets, whose nodes read disjoint leaves, go by composition "
            "beyond it)"
        )
    values = target.eval_columns(lambda j: bit_column(s, j))
    values = np.broadcast_to(np.asarray(values, dtype=np.float64), (2**s,))
    coef = fwht(values)
    coef /= 2**s
    return WalshSpectrum(tuple(target.support), coef)


def bit_column_matrix(s: int, index=None, dtype=np.float64) -> np.ndarray:
    """Points of {-1,+1}^s in index order: row r is the point of index
    ``index[r]`` (all 2^s indices when None), x_j = 1 - 2 bit_j(index).

    Args:
      s: the number of coordinates.
      index: point indices (integers in [0, 2^s)), or None for all.
      dtype: the dtype of the result (int8 for hypercube points).

    Returns:
      An array of shape (len(index), s).
    """
    idx = np.arange(2**s, dtype=np.int64) if index is None else np.asarray(index, np.int64)
    return (1 - 2 * ((idx[:, None] >> np.arange(s)) & 1)).astype(dtype)
