"""The learning-rate sweep of a net search: a choice on an end of the grid
extends the grid one geometric step on that side, bounded, and says so.

Planted validation curves (a valley at a known rate) stand in for training,
so the rule is checked against the answer it must find."""

import math

import pytest

from ntkgap.runs import sample_complexity as sc

CELL = {
    "method": "net_search", "arch": "fc:depth=1", "target": "parity:d=6,k=2",
    "eps": 0.1, "seeds": [0, 1, 2], "n_min": 8, "n_max": 64, "width": 8,
    "lr": [0.001, 0.003, 0.01], "steps": 10,
}  # fmt: skip


def _drive(best_lr):
    """Runs the search with a planted validation valley at ``best_lr`` and a
    test error that reaches eps at n = 32; returns (result, rates trained)."""
    trained = []

    def run_cells(batch):
        out = []
        for sub in batch:
            trained.append(sub["lr"])
            val = 0.1 + abs(math.log(sub["lr"] / best_lr))
            out.append({"best_val_mse": [val], "test_mse": 1.0 if sub["n"] < 32 else 0.05})
        return out

    res = sc.drive(sc.steps(CELL, lambda sub: None), lambda sub, r: None, run_cells)
    return res, trained


UP1, UP2 = 0.01 * (0.01 / 0.003), 0.01 * (0.01 / 0.003) ** 2  # the grid's ratio at its top
LO1, LO2 = 0.001 / 3, 0.001 / 9  # and at its bottom


@pytest.mark.parametrize(
    "best_lr, chosen, extended, edge",
    [
        (0.003, 0.003, [], None),  # interior: nothing added
        (0.02, UP1, [UP1, UP2], None),  # on the top twice, then interior
        (1.0, UP2, [UP1, UP2], "upper"),  # bounded: still at the edge, and reported
        (0.0002, LO1, [LO1, LO2], None),
        (1e-6, LO2, [LO1, LO2], "lower"),
    ],
)  # fmt: skip
def test_edge_choice_extends_the_grid(best_lr, chosen, extended, edge):
    res, trained = _drive(best_lr)
    assert res["lr_chosen"] == pytest.approx(chosen, rel=1e-9)
    assert res["lr_sweep"]["extended"] == pytest.approx(extended, rel=1e-9)
    assert res["lr_sweep"]["edge"] == edge
    swept = len(CELL["lr"]) + len(extended)
    assert len(res["lr_sweep"]["median_best_val_mse"]) == swept
    assert sorted(set(trained[: swept * 3])) == pytest.approx(
        sorted(CELL["lr"] + extended), rel=1e-9
    )
