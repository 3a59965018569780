"""The variance of a target under its domain's uniform measure: the one
normaliser of every relative test MSE (training, the NTK predictor, theory
and the spectrum report)."""

from __future__ import annotations

import functools

import numpy as np

from ntkgap.spectral import walsh
from ntkgap.targets import parse_target

# support bits up to which the variance is exact (all 2^s support points)
EXACT_BITS = 24
MONTE_CARLO_POINTS = 2**20


def target_variance(target) -> float:
    """Var f under the uniform measure of ``target.domain``.

    Args:
      target: a parsed target (see :func:`ntkgap.targets.parse_target`).

    Returns:
      The closed form on the circle; on the hypercube the exact variance over
      all 2^s points of the support (s <= ``EXACT_BITS``), else a fixed-seed
      Monte Carlo estimate over ``MONTE_CARLO_POINTS`` points. Cached by spec.
    """
    if hasattr(target, "variance"):
        return float(target.variance)
    return _hypercube_variance(str(target.spec))


@functools.lru_cache(maxsize=128)
def _hypercube_variance(spec: str) -> float:
    target = parse_target(spec)
    s = len(target.support)
    if s <= EXACT_BITS:
        values = target.eval_columns(lambda j: walsh.bit_column(s, j))
        return float(np.var(np.broadcast_to(np.asarray(values, dtype=np.float64), (2**s,))))
    x = target.domain.sample(MONTE_CARLO_POINTS, seed=12345)
    return float(np.var(target(x)))
