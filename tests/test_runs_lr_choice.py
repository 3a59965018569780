"""The fixed-n learning-rate choice is made at run time: after a ``net``
grid's cells are trained the runner picks each group's rate on validation
and stores it; the reader returns it without deciding again."""

import os

import numpy as np
import pytest

from ntkgap.runs import executors, store

CONFIG = """
name = "lrpick"
[quick]
[[quick.grid]]
method = "net"
target = "parity:d=4,k=2"
arch = "fc:depth=1"
width = 8
n = [12, 16]
n_test = 16
seeds = [0, 1, 2]
steps = 40
eval_every = 10
lr = [0.0001, 0.03]
"""


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    root = tmp_path_factory.mktemp("lrpick")
    path = root / "lrpick.toml"
    path.write_text(CONFIG)
    mp = pytest.MonkeyPatch()
    mp.setenv("NTKGAP_RESULTS", str(root / "results"))
    mp.setenv("NTKGAP_PROGRESS", "0")
    mp.delenv("NTKGAP_PROFILE", raising=False)
    summary = executors.run(str(path), "quick", jobs=1)
    yield root, summary
    mp.undo()


def _by_hand(n):
    """The rule from the stored numbers alone: per rate, the median over
    seeds of each seed's best validation MSE; the lowest wins."""
    med = {}
    for cell, res in store.results("lrpick", "net", profile="quick"):
        if cell["n"] == n:
            med[cell["lr"]] = float(np.median(res["best_val_mse"]))
    return min(med, key=lambda lr: (med[lr], lr)), med


@pytest.mark.parametrize("n", [12, 16])
def test_runner_stores_the_choice_the_rule_gives(ran, n):
    root, summary = ran
    assert summary["computed"] == 4 and summary["failed"] == []
    choices = [f for f in os.listdir(root / "results" / "lrpick") if f.startswith(".lr-")]
    assert len(choices) == 2  # one per n: the cells alike but for lr
    best, med = _by_hand(n)
    got = store.lr_choices("lrpick", profile="quick")[("parity:d=4,k=2", "fc:depth=1", n)]
    assert got["lr"] == best
    assert got["median_best_val_mse"] == pytest.approx({repr(k): v for k, v in med.items()})


def test_rerun_reuses_cells_and_keeps_the_choice(ran):
    root, _ = ran
    before = store.lr_choices("lrpick", profile="quick")
    again = executors.run(str(root / "lrpick.toml"), "quick", jobs=1)
    assert again["computed"] == 0 and again["reused"] == 4
    assert store.lr_choices("lrpick", profile="quick") == before
