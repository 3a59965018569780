"""Fourier-complexity measures of a target, from its power per frequency
(circle) or per Walsh degree (hypercube).

These are the quantities that govern kernel methods (arXiv 2607.06382;
for dot-product kernels on the hypercube, Misiakiewicz & Mei 2021 and
O'Donnell 2014 ch. 3 for degree/L1 notions):

* dominant frequency/degree: argmax of power over k >= 1;
* eps-bandwidth: the smallest K with sum_{k > K} power_k <= eps Var f;
* average degree: sum_k k power_k / Var f (the "total influence" on the cube);
* spectral L1 norm: sum over all coefficients of |f_hat|;
* sparsity: the number of non-zero coefficients (|f_hat| > 1e-12 max);
* RKHS norm: sum_k power_k / lambda_k under a kernel's eigenvalues.
"""

from __future__ import annotations

import numpy as np


def dominant(power) -> int:
    """Dominant frequency or degree: argmax of the power over k >= 1.

    Args:
        power: the target's power per frequency/degree k = 0, 1, ...

    Returns:
        int k >= 1 of the largest power; 0 when there is no power at k >= 1.
    """
    p = np.asarray(power, dtype=np.float64)
    if p.size < 2 or not np.any(p[1:] > 0):
        return 0
    return int(1 + np.argmax(p[1:]))


def bandwidth(power, eps: float) -> int:
    """eps-bandwidth: the smallest K with sum_{k > K} power_k <= eps Var f.

    Args:
        power: the target's power per frequency/degree k = 0, 1, ...
        eps: the fraction of the variance allowed beyond K.

    Returns:
        int K; 0 when the target is constant.
    """
    p = np.asarray(power, dtype=np.float64)
    var = p[1:].sum()
    if var <= 0:
        return 0
    tail = var - np.cumsum(p) + p[0]  # tail[K] = sum_{k > K}, k >= 1
    ok = np.nonzero(tail <= eps * var * (1 + 1e-12))[0]
    return int(ok[0])


def average_degree(power) -> float:
    """Average degree sum_k k power_k / Var f (the total influence on the cube).

    Args:
        power: the target's power per frequency/degree k = 0, 1, ...

    Returns:
        float; 0.0 when the target is constant.

    References:
        O'Donnell, "Analysis of Boolean Functions", 2014, ch. 2.
    """
    p = np.asarray(power, dtype=np.float64)
    var = p[1:].sum()
    return float(np.dot(np.arange(p.size), p) / var) if var > 0 else 0.0


def rkhs_norm(power, eigenvalues) -> float:
    """Squared RKHS norm sum_k power_k / lambda_k of a target under a kernel.

    The multiplicity is already inside the block power:
    ||f||_H^2 = sum_S f_hat(S)^2 / lambda_|S|.

    Args:
        power: the target's power per eigenspace (block).
        eigenvalues: the kernel's eigenvalue on each block (at least as many).

    Returns:
        float; inf when power sits where lambda_k = 0.
    """
    p = np.asarray(power, dtype=np.float64)
    lam = np.asarray(eigenvalues, dtype=np.float64)[: p.size]
    if lam.size < p.size:
        raise ValueError("fewer eigenvalues than spectral blocks")
    on = p > 0
    if np.any(on & (lam <= 0)):
        return float("inf")
    return float(np.sum(p[on] / lam[on]))


def measures(power, coefficients_abs=None, *, eps=(0.1, 0.01)) -> dict:
    """The Fourier-complexity summary reported by ``ntkgap spectrum``.

    Args:
        power: the target's power per frequency/degree k = 0, 1, ...
        coefficients_abs: absolute values of all individual coefficients
            (every f_hat(S), or |c_k| for all k in Z); None omits L1 and
            sparsity.
        eps: the eps of each bandwidth reported.

    Returns:
        dict with ``dominant``, ``average_degree``, ``bandwidth_eps<e>`` per
        eps and, with coefficients, ``l1_norm`` and ``sparsity``.

    References:
        O'Donnell, "Analysis of Boolean Functions", 2014, ch. 3.
    """
    out = {"dominant": dominant(power), "average_degree": average_degree(power)}
    for e in eps:
        out[f"bandwidth_eps{e:g}"] = bandwidth(power, e)
    if coefficients_abs is not None:
        c = np.asarray(coefficients_abs, dtype=np.float64)
        top = c.max() if c.size else 0.0
        out["l1_norm"] = float(c.sum())
        out["sparsity"] = int(np.count_nonzero(c > 1e-12 * top)) if top > 0 else 0
    return out
