"""The infinite-width NTK (or NNGP) regression predictor of a target from n
random samples, and its test error relative to the target's variance:
ridgeless, with a given ridge, or with its ridge tuned on the validation
split the trained nets use for early stopping (``ridge="tuned"``)."""

from __future__ import annotations

import numpy as np

from ntkgap._infra import memory
from ntkgap._infra.seeds import derive
from ntkgap.errors import UsageError
from ntkgap.kernels import gram as kernels
from ntkgap.kernels import krr
from ntkgap.targets.split import split

#: the tuned ridge's candidates, relative to the mean diagonal of the Gram
#: being fitted (0: ridgeless); the smallest wins ties
RIDGE_GRID = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)
TUNED = "tuned"


def evaluate(
    arch,
    target,
    n: int,
    *,
    seed: int,
    n_test: int = 2000,
    n_val: int = 0,
    ridge: float | str = 0.0,
    noise: float = 0.0,
    kind: str = "ntk",
    variance: float | None = None,
    return_predictions: bool = False,
) -> dict:
    """Fit kernel regression on the training points of the shared split and
    score it on its test points.

    Args:
      arch, target: parsed architecture and target.
      n: pool size of :func:`ntkgap.targets.split.split`; the fit uses its first
        n - n_val points (n_val = 0: all of them, the points a trained net
        uses for training and validation together).
      seed: the split's seed (the same seed gives a trained net the same pool
        and test points).
      n_test: test points wanted.
      n_val: pool points held out (not fitted).
      ridge: ridge (absolute), or ``"tuned"``: each of ``RIDGE_GRID`` (times
        the Gram's mean diagonal) is fitted on the pool less its validation
        points (:func:`ntkgap.nets.train_config.validation_size`, the nets' own
        split), the one with the lowest validation MSE is refitted on the
        whole pool (n_val is then ignored); the test points are the same.
      noise: label-noise variance added to the fitted labels.
      kind: ``ntk`` or ``nngp``.
      variance: the target's variance (default: :func:`target_variance`).
      return_predictions: also return the test predictions and points.

    Returns:
      ``test_mse`` and ``train_mse`` relative to the variance (and
      ``test_mse_se``, the test mean's standard error), the split's
      facts (``overlap``, ...) and the solver's (``ridge``, ``jitter``,
      ``note``); tuned: also ``ridge_factor`` (the chosen grid value) and
      ``ridge_val_mse`` (validation MSE relative to the variance, per factor).
    """
    dom = target.domain
    tuned = isinstance(ridge, str)
    if tuned and ridge != TUNED:
        raise UsageError(f"ridge={ridge!r} is not allowed (allowed: a number >= 0, {TUNED!r})")
    if tuned:
        from ntkgap.nets.train_config import validation_size

        n_val = validation_size(n)
        if n - n_val < 1:
            raise UsageError(f"ridge=tuned: n={n} leaves no points after the validation split")
    sp = split(target, n, seed=seed, n_val=n_val, n_test=n_test)
    x, y = sp.x_train, sp.y_train
    if tuned:  # refit on the whole pool, as the nets' data (train + validation)
        x, y = np.concatenate([sp.x_train, sp.x_val]), np.concatenate([sp.y_train, sp.y_val])
    if noise > 0:
        y = y + np.sqrt(noise) * np.random.default_rng(derive(seed, "noise", n)).standard_normal(
            y.shape[0]
        )
    if variance is None:
        from ntkgap.targets.variance import target_variance

        variance = target_variance(target)
    xi, xti = arch.inputs(dom, x), arch.inputs(dom, sp.x_test)
    k_train = kernels.gram(arch, xi, kind=kind)
    extra = {}
    if tuned:
        n_tr = sp.x_train.shape[0]
        factor, table = _tune(k_train[:n_tr, :n_tr], y[:n_tr], k_train[n_tr:, :n_tr], y[n_tr:])
        ridge = factor * float(np.mean(np.diag(k_train)))
        extra = {
            "ridge_tuned": True,
            "ridge_factor": factor,
            "ridge_val_mse": {repr(f): v / variance for f, v in table.items()},
        }
    sol = krr.fit(k_train, y, ridge=ridge)
    # test rows in blocks: a whole leaf cube of test points against a large pool
    rows = memory.predict_block_rows(xi.shape[0])
    pred = np.concatenate(
        [
            sol.predict(kernels.gram(arch, xti[i : i + rows], xi, kind=kind))
            for i in range(0, xti.shape[0], rows)
        ]
    )
    out = {
        "test_mse": float(np.mean((pred - sp.y_test) ** 2)) / variance,
        # sampling error of the test points (0 in effect where they are the
        # whole leaf cube outside the pool and the predictor reads only leaves)
        "test_mse_se": float(np.std((pred - sp.y_test) ** 2) / np.sqrt(pred.size)) / variance,
        "train_mse": float(np.mean((k_train @ sol.alpha - y) ** 2)) / variance,
        **sp.info(),
        **sol.info(),
        **extra,
    }
    if return_predictions:
        out["test_predictions"] = pred
        out["x_test"] = sp.x_test
    return out


def _tune(k_fit, y_fit, k_val_fit, y_val) -> tuple[float, dict]:
    """The RIDGE_GRID factor with the lowest validation MSE, and the table."""
    scale = float(np.mean(np.diag(k_fit))) or 1.0
    table = {}
    for f in RIDGE_GRID:
        pred = krr.fit(k_fit, y_fit, ridge=f * scale).predict(k_val_fit)
        table[f] = float(np.mean((pred - y_val) ** 2))
    return min(RIDGE_GRID, key=lambda f: (table[f], f)), table
