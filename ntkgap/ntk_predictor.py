"""The infinite-width NTK (or NNGP) regression predictor of a target from n
random samples, and its test error relative to the target's variance."""

from __future__ import annotations

import numpy as np

from ntkgap import kernels, krr
from ntkgap._infra.seeds import derive


def sample(target, n: int, *, seed: int, role: str):
    x = target.domain.sample(n, seed=derive(seed, role, n))
    return x, target(x)


def evaluate(
    arch,
    target,
    n: int,
    *,
    seed: int,
    n_test: int = 2000,
    ridge: float = 0.0,
    noise: float = 0.0,
    kind: str = "ntk",
    variance: float | None = None,
) -> dict:
    """Fit on n samples (labels plus N(0, noise) noise), score on n_test fresh ones."""
    dom = target.domain
    x, y = sample(target, n, seed=seed, role="train")
    if noise > 0:
        y = y + np.sqrt(noise) * np.random.default_rng(derive(seed, "noise", n)).standard_normal(n)
    xt, yt = sample(target, n_test, seed=seed, role="test")
    xi, xti = arch.inputs(dom, x), arch.inputs(dom, xt)
    k_train = kernels.gram(arch, xi, kind=kind)
    sol = krr.fit(k_train, y, ridge=ridge)
    pred = sol.predict(kernels.gram(arch, xti, xi, kind=kind))
    if variance is None:
        from ntkgap.spectra import target_variance

        variance = target_variance(target)
    var = variance
    return {
        "test_mse": float(np.mean((pred - yt) ** 2)) / var,
        "train_mse": float(np.mean((k_train @ sol.alpha - y) ** 2)) / var,
        **sol.info(),
    }
