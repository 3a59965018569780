"""``ntkgap train``'s warning for a seed that learned nothing: its relative
test MSE (test MSE over the target's variance) is at least 1, no better than
predicting the mean, said per seed in the JSON ``warnings`` and the text;
a run that learns carries none."""

import json

from ntkgap import cli

BASE = ["train", "--arch", "fc:depth=2,act=relu", "--width", "64", "--n", "48", "--seeds", "2"]


def _train(capsys, *argv):
    rc = cli.main([*BASE, *argv])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


def test_a_degree_four_parity_at_n_48_warns_per_seed(capsys):
    """``ntkgap train --target parity:d=8,k=4 --arch fc:depth=2 --n 48
    --steps 300 --json``: both seeds end at relative test MSE >= 1 and each
    gets its own 'learned nothing' warning, in the JSON and the text."""
    argv = ["--target", "parity:d=8,k=4", "--steps", "300"]
    r = json.loads(_train(capsys, *argv, "--json"))
    bad = [s for s, t in zip(r["seeds"], r["test_mse_per_seed"]) if t >= 1]
    assert bad == [0, 1], r["test_mse_per_seed"]  # nothing to learn from 48 points
    said = [w for w in r["warnings"] if "learned nothing" in w]
    assert [int(w.split()[1].rstrip(":")) for w in said] == bad
    for s, t in zip(r["seeds"], r["test_mse_per_seed"]):
        assert f"seed {s}: learned nothing: relative test MSE {t:.3g} >= 1" in said[s]
    assert _train(capsys, *argv).count("learned nothing") == 2


def test_a_run_that_learns_has_no_such_warning(capsys):
    """``ntkgap train --target parity:d=8,k=1 --n 48 --steps 200 --lr 0.01
    --json``: a one-coordinate target is learned (relative test MSE well
    below 1), and no seed is said to have learned nothing."""
    r = json.loads(_train(capsys, "--target", "parity:d=8,k=1", "--steps", "200", "--lr",
                          "0.01", "--json"))  # fmt: skip
    assert max(r["test_mse_per_seed"]) < 0.5, r["test_mse_per_seed"]
    assert not [w for w in r["warnings"] if "learned nothing" in w]
