"""The verbs wired to the round's library pieces: ``predict`` (the law fitted
on other families' stored n*, sealed for an unmeasured family), ``train
--kernels`` (after-kernel and initial-kernel regression beside the net) and
``learning-curve``'s eigenlearning internals."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import ntkgap
from ntkgap.runs import store

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
C_OF = {2: 3, 3: 7, 4: 15}


def _cli(*args, env=None):
    r = subprocess.run(
        [sys.executable, "-m", "ntkgap", *args], capture_output=True, text=True, cwd=ROOT, env=env
    )
    return r.returncode, r.stdout, r.stderr


def _plant(root, c=5.0, p=0.8):
    """Trained-net n* = c C^p, 8 seeds, for three node families and L = 2, 3, 4."""
    (root / "e4_trees").mkdir(exist_ok=True)
    for node in ("parity", "tanh", "random"):
        for L, C in C_OF.items():
            per = [{"seed": s, "status": "resolved", "n_star": c * C**p} for s in range(8)]
            cell = {
                "method": "net_search", "target": f"tree:d=40,L={L},arity=2,node={node}",
                "arch": f"tree:arity=2,L={L}", "eps": 0.1, "seeds": list(range(8)),
                "n_min": 8, "n_max": 4096, "width": 64,
            }  # fmt: skip
            store.save("e4_trees", cell, {"per_seed": per}, str(root))


def test_predict_refuses_in_one_line_with_nothing_to_fit(tmp_path):
    env = dict(__import__("os").environ, NTKGAP_RESULTS=str(tmp_path))
    rc, out, err = _cli(
        "predict", "--arch", "tree:arity=2,L=3", "--target", "tree:d=40,L=3,arity=2,node=and",
        "--json", env=env,
    )  # fmt: skip
    assert rc == 2 and json.loads(out)["error"].startswith("predict: nothing to fit on")
    assert not (tmp_path / "predictions").exists()


def test_predict_reads_the_planted_law_and_seals(tmp_path, monkeypatch):
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path))
    monkeypatch.delenv("NTKGAP_PROFILE", raising=False)
    _plant(tmp_path)
    out = ntkgap.predict("tree:d=40,L=3,arity=2,node=and", "tree:arity=2,L=3")
    for key in ("kernel_n_star", "kernel_theory_valid", "net_n_star", "net_interval", "winner",
                "ratio", "ratio_interval", "law"):  # fmt: skip
        assert key in out
    assert out["net_n_star"] == pytest.approx(5.0 * 7**0.8, rel=1e-6)
    assert out["law"]["p"] == pytest.approx(0.8, abs=1e-6)
    assert out["sealed"] and (tmp_path / "predictions").is_dir()
    with pytest.raises(ntkgap.UsageError, match="sealed already"):
        ntkgap.predict("tree:d=40,L=3,arity=2,node=and", "tree:arity=2,L=3")


def test_learning_curve_reports_kappa_and_learnability():
    r = ntkgap.learning_curve("fc:depth=1", "parity:d=6,k=2", [8, 16, 32])
    lam = np.repeat(r["modes"]["eigenvalue"], np.asarray(r["modes"]["multiplicity"], int))
    for n, kappa, learn in zip(r["n"], r["kappa"], r["learnability"]):
        # the eigenlearning equation, ridgeless: sum_i lambda_i / (lambda_i + kappa) = n
        assert np.sum(lam / (lam + kappa)) == pytest.approx(n, rel=1e-8)
        assert np.allclose(learn, np.asarray(r["modes"]["eigenvalue"]) / (
            np.asarray(r["modes"]["eigenvalue"]) + kappa))  # fmt: skip


def test_train_kernels_adds_the_after_kernel_fields():
    rc, out, err = _cli(
        "train", "--arch", "fc:depth=1", "--width", "16", "--target", "parity:d=8,k=2",
        "--n", "64", "--n-test", "64", "--steps", "60", "--kernels", "--json",
    )  # fmt: skip
    assert rc == 0, err
    r = json.loads(out)
    for key in ("alignment_init", "alignment_final", "weight_movement", "after_kernel_test_mse",
                "init_kernel_test_mse", "warnings"):  # fmt: skip
        assert key in r
    assert math.isfinite(r["after_kernel_test_mse"]) and r["weight_movement"] > 0
    assert "params_final" not in r
