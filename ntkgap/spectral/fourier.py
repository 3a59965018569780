"""Fourier spectra on the circle: exact series of the targets, and an FFT
with a reported truncation bound for functions given only by values.

Power convention: power[0] = c_0^2, power[k] = |c_k|^2 + |c_-k|^2
= (a_k^2 + b_k^2)/2 for f = a_0 + sum a_k cos k theta + b_k sin k theta, so
sum_k power[k] = E f^2 (Parseval).
"""

from __future__ import annotations

import numpy as np


def power_from_series(a, b) -> np.ndarray:
    """Power per frequency from cosine/sine coefficients.

    power[0] = a_0^2 and power[k] = (a_k^2 + b_k^2)/2, so the powers sum to
    E f^2 (Parseval).

    Args:
        a: cosine coefficients a_0..a_K.
        b: sine coefficients b_0..b_K (same length).

    Returns:
        float64 array of shape (K + 1,).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    p = 0.5 * (a**2 + b**2)
    p[0] = a[0] ** 2
    return p


def target_power(target, kmax: int) -> np.ndarray:
    """Exact power per frequency of a circle target (closed form).

    Args:
        target: a circle target with a ``series`` method.
        kmax: the highest frequency.

    Returns:
        float64 array of shape (kmax + 1,) (frequencies 0..kmax).
    """
    return power_from_series(*target.series(kmax))


def fft_series(f, kmax: int, *, n: int | None = None):
    """Cosine/sine coefficients of f on the circle from n equispaced samples.

    The error bound is empirical: the largest change between n and 2n
    samples (aliasing folds frequency k + m n onto k, so doubling n exposes
    it).

    Args:
        f: a function of angles theta (array) returning values.
        kmax: the highest frequency.
        n: the number of samples (rounded up to a power of two; default
            max(8 (kmax + 1), 4096)).

    Returns:
        (a, b, err): float64 arrays of shape (kmax + 1,), the cosine and sine
        coefficients and the bound of each coefficient's aliasing error.
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
