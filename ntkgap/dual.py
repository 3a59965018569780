"""Closed-form infinite-width kernels of fully connected networks on inputs
of equal norm, in any arithmetic (numpy float64 or mpmath at high precision).

The recursion of Jacot et al. 2018 / Arora et al. 2019 for
``Dense -> (act -> Dense) x depth`` in NTK parametrisation:
Sigma_1 = W^2 t + b^2, Theta_1 = Sigma_1, then per hidden layer
Sigma' = W^2 E[phi(u)phi(v)] + b^2, Theta' = Sigma' + W^2 Theta E[phi'(u)phi'(v)],
with (u, v) centred Gaussian of covariance [[q, c], [c, q]].
Dual activations: ReLU, the arc-cosine kernels of Cho & Saul 2009
(E phi phi = q (sin th + (pi - th) cos th) / 2pi, E phi' phi' = (pi - th)/2pi,
cos th = c/q); erf, Williams 1997
(E phi phi = (2/pi) asin(2c/(1+2q)), E phi' phi' = (4/pi)/sqrt((1+2q)^2 - 4c^2)).

This module is an independent reference for neural-tangents' kernel_fn
(tests compare them) and the high-precision source of hypercube eigenvalues.
"""

from __future__ import annotations

import mpmath
import numpy as np

from ntkgap.errors import UsageError


class _Numpy:
    pi = np.pi
    sqrt = staticmethod(np.sqrt)
    acos = staticmethod(lambda x: np.arccos(np.clip(x, -1.0, 1.0)))
    asin = staticmethod(lambda x: np.arcsin(np.clip(x, -1.0, 1.0)))
    sin = staticmethod(np.sin)
    clip = staticmethod(lambda x: np.clip(x, -1.0, 1.0))


class _Mp:
    pi = property(lambda self: mpmath.mp.pi)
    sqrt = staticmethod(mpmath.sqrt)
    acos = staticmethod(mpmath.acos)
    asin = staticmethod(mpmath.asin)
    sin = staticmethod(mpmath.sin)
    clip = staticmethod(lambda x: max(min(x, 1), -1))


def fc_kernel(
    t,
    *,
    depth: int,
    act: str,
    W_std: float,
    b_std: float,
    t0=1.0,
    kind: str = "ntk",
    arithmetic: str = "numpy",
):
    """NTK or NNGP of ``fc:depth,act,W_std,b_std`` at <x,x'>/n0 = t when
    every input has <x,x>/n0 = t0 (t0 = 1 on the hypercube, 1/2 on the
    circle embedding)."""
    if act not in ("relu", "erf"):
        raise UsageError(f"arch act={act}: no closed-form dual kernel (allowed: relu, erf)")
    m = _Mp() if arithmetic == "mpmath" else _Numpy()
    if arithmetic == "mpmath":
        W2, b2 = mpmath.mpf(W_std) ** 2, mpmath.mpf(b_std) ** 2
        t, t0 = mpmath.mpf(t), mpmath.mpf(t0)
    else:
        W2, b2 = W_std**2, b_std**2
        t = np.asarray(t, dtype=np.float64)
    c = W2 * t + b2
    q = W2 * t0 + b2
    theta = c
    for _ in range(depth):
        if act == "relu":
            rho = m.clip(c / q)
            th = m.acos(rho)
            e_pp = q * (m.sqrt(1 - rho * rho) + (m.pi - th) * rho) / (2 * m.pi)
            e_dd = (m.pi - th) / (2 * m.pi)
            e_qq = q / 2
        else:
            den = 1 + 2 * q
            e_pp = 2 / m.pi * m.asin(m.clip(2 * c / den))
            e_dd = 4 / m.pi / m.sqrt(den * den - 4 * c * c)
            e_qq = 2 / m.pi * m.asin(2 * q / den)
        c_new = W2 * e_pp + b2
        theta = c_new + W2 * theta * e_dd
        c, q = c_new, W2 * e_qq + b2
    return theta if kind == "ntk" else c
