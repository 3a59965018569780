"""Fourier spectra on the circle: exact series of the targets, and an FFT
with a reported truncation bound for functions given only by values.

Power convention: power[0] = c_0^2, power[k] = |c_k|^2 + |c_-k|^2
= (a_k^2 + b_k^2)/2 for f = a_0 + sum a_k cos k theta + b_k sin k theta, so
sum_k power[k] = E f^2 (Parseval).
"""

from __future__ import annotations

import numpy as np


def power_from_series(a, b) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    p = 0.5 * (a**2 + b**2)
    p[0] = a[0] ** 2
    return p


def target_power(target, kmax: int) -> np.ndarray:
    """Exact power per frequency 0..kmax of a circle target (closed form)."""
    return power_from_series(*target.series(kmax))


def fft_series(f, kmax: int, *, n: int | None = None):
    """Cosine/sine coefficients of f on the circle from n equispaced samples.

    Returns (a, b, err) where err bounds the aliasing error of each
    coefficient empirically: the largest change between n and 2n samples
    (aliasing folds frequency k + m n onto k, so doubling n exposes it).
    """

    def coeffs(m):
        theta = 2 * np.pi * np.arange(m) / m
        c = np.fft.rfft(f(theta)) / m
        a = 2 * c.real[: kmax + 1]
        b = -2 * c.imag[: kmax + 1]
        a[0] = c.real[0]
        return a, b

    n = n or max(8 * (kmax + 1), 4096)
    n = int(2 ** np.ceil(np.log2(n)))
    a1, b1 = coeffs(n)
    a2, b2 = coeffs(2 * n)
    err = np.maximum(np.abs(a2 - a1), np.abs(b2 - b1))
    return a2, b2, err
