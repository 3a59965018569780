"""The infinite-width NTK (or NNGP) regression predictor of a target from n
random samples, and its test error relative to the target's variance."""

from __future__ import annotations

import numpy as np

from ntkgap import kernels, krr
from ntkgap._infra.seeds import derive
from ntkgap.split import split


def evaluate(
    arch,
    target,
    n: int,
    *,
    seed: int,
    n_test: int = 2000,
    n_val: int = 0,
    ridge: float = 0.0,
    noise: float = 0.0,
    kind: str = "ntk",
    variance: float | None = None,
    return_predictions: bool = False,
) -> dict:
    """Fit kernel regression on the training points of the shared split and
    score it on its test points.

    Args:
      arch, target: parsed architecture and target.
      n: pool size of :func:`ntkgap.split.split`; the fit uses its first
        n - n_val points (n_val = 0: all of them, the points a trained net
        uses for training and validation together).
      seed: the split's seed (the same seed gives a trained net the same pool
        and test points).
      n_test: test points wanted.
      n_val: pool points held out (not fitted).
      ridge: ridge (absolute); noise: label-noise variance added to the
        fitted labels.
      kind: ``ntk`` or ``nngp``.
      variance: the target's variance (default: :func:`target_variance`).
      return_predictions: also return the test predictions and points.

    Returns:
      ``test_mse`` and ``train_mse`` relative to the variance, the split's
      facts (``overlap``, ...) and the solver's (``jitter``, ``note``).
    """
    dom = target.domain
    sp = split(target, n, seed=seed, n_val=n_val, n_test=n_test)
    x, y = sp.x_train, sp.y_train
    if noise > 0:
        y = y + np.sqrt(noise) * np.random.default_rng(derive(seed, "noise", n)).standard_normal(
            y.shape[0]
        )
    xi, xti = arch.inputs(dom, x), arch.inputs(dom, sp.x_test)
    k_train = kernels.gram(arch, xi, kind=kind)
    sol = krr.fit(k_train, y, ridge=ridge)
    pred = sol.predict(kernels.gram(arch, xti, xi, kind=kind))
    if variance is None:
        from ntkgap.variance import target_variance

        variance = target_variance(target)
    out = {
        "test_mse": float(np.mean((pred - sp.y_test) ** 2)) / variance,
        "train_mse": float(np.mean((k_train @ sol.alpha - y) ** 2)) / variance,
        **sp.info(),
        **sol.info(),
    }
    if return_predictions:
        out["test_predictions"] = pred
        out["x_test"] = sp.x_test
    return out
