"""Classification cells of the random hierarchy model (``target_error =
"classification"``): one-hot labels with n_c outputs, the argmax error, the
config's ``eps = "pstar"``, and unchanged keys for every other cell.
References: a direct kernel solve, argmax by hand, the published
thresholds written as numbers."""

from __future__ import annotations

import numpy as np
import pytest

from ntkgap.errors import UsageError
from ntkgap.kernels import ntk_predictor
from ntkgap.kernels.gram import gram
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import config, registry
from ntkgap.runs.sample_complexity import target_of
from ntkgap.targets import parse_target, rhm
from ntkgap.targets.split import split

ARCH = "tree:share=1,arity=2,L=3"
T4 = "rhm:v=8,n_c=4,m=2,s=2,L=3,seed=0"


def _cfg(**grid):
    base = {
        "method": "ntk_search",
        "arch": ARCH,
        "target": T4,
        "seeds": [0],
        "n_min": 4,
        "n_max": 64,
    }
    return {"name": "x", "title": "x", "paper": {"grid": [dict(base, **grid)]}}


@pytest.mark.parametrize("target,eps", [(T4, 0.075), (T4.replace("n_c=4", "n_c=2"), 0.05)])
def test_pstar_eps_is_the_published_threshold(target, eps):
    # eps_rand / 10: 0.1 x (1 - 1/n_c), Cagnetta et al., PRX 14, 031001 (2024)
    (cell,) = config.expand(_cfg(target=target, target_error="classification", eps="pstar"),
                            "paper")  # fmt: skip
    assert cell["eps"] == pytest.approx(eps) and cell["target_error"] == "classification"


@pytest.mark.parametrize(
    "grid",
    [
        {"eps": "pstar"},  # a regression search has no P* threshold
        {
            "eps": 0.1,
            "target_error": "classification",
            "target": "parity:d=6,k=2",
            "arch": "fc:depth=1",
        },  # not an rhm
        {"eps": 0.1, "target_error": "regression"},  # not a declared choice
    ],
)
def test_bad_classification_cells_refused(grid):
    with pytest.raises(UsageError):
        config.expand(_cfg(**grid), "paper")


def test_cells_without_the_key_keep_their_form():
    # an existing cell's filled form (hence its store key) has no target_error
    for method in ("ntk", "net", "ntk_search", "net_search", "after_kernel_search"):
        assert "target_error" not in registry.fill({"method": method})
    (cell,) = config.expand(_cfg(eps=0.3), "paper")
    assert "target_error" not in cell


def test_kernel_classification_against_a_direct_solve():
    arch, t = parse_arch(ARCH), parse_target(T4)
    r = ntk_predictor.evaluate(arch, rhm.OneHotLabels(t), 40, seed=1, n_test=200)
    sp = split(rhm.OneHotLabels(t), 40, seed=1, n_test=200)  # the same points; classes parsed
    ctr, cte = t.classes(sp.x_train), t.classes(sp.x_test)
    ftr, fte = arch.inputs(t.domain, sp.x_train), arch.inputs(t.domain, sp.x_test)
    y = np.eye(4)[ctr] - 0.25
    pred = gram(arch, fte, ftr) @ np.linalg.solve(gram(arch, ftr), y)
    assert r["test_classification_error"] == pytest.approx(np.mean(np.argmax(pred, 1) != cte))
    mse = np.mean(np.sum((pred - (np.eye(4)[cte] - 0.25)) ** 2, axis=1)) / 0.75
    assert r["test_mse"] == pytest.approx(mse, rel=1e-6)


def test_net_has_one_output_per_class_scored_by_argmax():
    from ntkgap.nets import train_config, training

    cell = {"target": T4, "target_error": "classification"}
    cfg = train_config.from_mapping({"steps": 20, "batch": 0, "eval_every": 10, "lr": 0.1})
    r = training.train(parse_arch(ARCH), 8, target_of(cell), 32, seeds=[0], cfg=cfg,
                       n_test=64, return_predictions=True)  # fmt: skip
    pred = np.asarray(r["test_predictions"][0])
    assert pred.shape == (64, 4)
    classes = parse_target(T4).classes(np.asarray(r["x_test"][0]))
    assert r["test_classification_error"] == pytest.approx(np.mean(np.argmax(pred, 1) != classes))
