"""The validation-tuned ridge of the kernel predictor against a brute-force
reference: the closed-form dual kernel, np.linalg.solve for every candidate
ridge, the selection and the refit done by hand on the same split."""

import numpy as np
import pytest

from ntkgap.errors import UsageError
from ntkgap.kernels import dual, ntk_predictor
from ntkgap.nets.arch import parse_arch
from ntkgap.nets.train_config import validation_size
from ntkgap.runs import config as runs_config
from ntkgap.targets import parse_target
from ntkgap.targets.split import CHUNK, split
from ntkgap.targets.variance import target_variance

D, N, N_TEST, SEED = 8, 40, 60, 3


def _gram(a, b):
    s = parse_arch("fc:depth=1").spec
    kw = dict(depth=s["depth"], act=s["act"], W_std=s["W_std"], b_std=s["b_std"], kind="ntk")
    return dual.fc_kernel(a @ b.T / D, **kw)


def _by_hand(target, noise=0.0):
    n_val = validation_size(N)
    sp = split(target, N, seed=SEED, n_val=n_val, n_test=N_TEST)
    x = np.concatenate([sp.x_train, sp.x_val]).astype(float)
    y = np.concatenate([sp.y_train, sp.y_val])
    if noise:
        from ntkgap._infra.seeds import derive

        rng = np.random.default_rng(derive(SEED, "noise", 0))  # chunk 0 of the pool's noise
        y = y + np.sqrt(noise) * rng.standard_normal(CHUNK)[: y.shape[0]]
    m = N - n_val
    kf = _gram(x[:m], x[:m])
    val = {}
    for f in ntk_predictor.RIDGE_GRID:
        lam = f * np.mean(np.diag(kf))
        alpha = np.linalg.solve(kf + lam * np.eye(m), y[:m])
        val[f] = np.mean((_gram(x[m:], x[:m]) @ alpha - y[m:]) ** 2)
    best = min(val, key=lambda f: (val[f], f))
    k = _gram(x, x)
    alpha = np.linalg.solve(k + best * np.mean(np.diag(k)) * np.eye(N), y)
    pred = _gram(sp.x_test.astype(float), x) @ alpha
    return best, np.mean((pred - sp.y_test) ** 2) / target_variance(target)


@pytest.mark.parametrize("noise", [0.0, 0.5])
def test_tuned_ridge_equals_brute_force(noise):
    t = parse_target(f"parity:d={D},k=2")
    best, mse = _by_hand(t, noise)
    r = ntk_predictor.evaluate(
        parse_arch("fc:depth=1"), t, N, seed=SEED, n_test=N_TEST, ridge="tuned", noise=noise
    )
    assert r["ridge_factor"] == best
    np.testing.assert_allclose(r["test_mse"], mse, rtol=1e-7)
    assert set(r["ridge_val_mse"]) == {repr(f) for f in ntk_predictor.RIDGE_GRID}


def test_tuned_ridge_helps_under_label_noise_and_shares_the_test_points():
    t, a = parse_target(f"parity:d={D},k=2"), parse_arch("fc:depth=1")
    kw = dict(seed=SEED, n_test=N_TEST, noise=1.0, return_predictions=True)
    free = ntk_predictor.evaluate(a, t, N, **kw)
    tuned = ntk_predictor.evaluate(a, t, N, ridge="tuned", **kw)
    np.testing.assert_array_equal(free["x_test"], tuned["x_test"])
    # noise as large as the signal: interpolating it cannot beat a chosen ridge
    assert tuned["ridge_factor"] > 0
    assert tuned["test_mse"] < free["test_mse"]


def test_bad_ridge_is_one_line():
    with pytest.raises(UsageError, match="allowed: a number >= 0"):
        ntk_predictor.evaluate(
            parse_arch("fc:depth=1"), parse_target("parity:d=8,k=2"), 20, seed=0, ridge="best"
        )
    cfg = {"name": "x", "quick": {"grid": [{"method": "ntk", "target": "parity:d=8,k=2",
           "arch": "fc:depth=1", "n": 8, "seed": 0, "ridge": "best"}]}}  # fmt: skip
    with pytest.raises(UsageError, match="ridge='best' is not allowed"):
        runs_config.expand(cfg, "quick")
