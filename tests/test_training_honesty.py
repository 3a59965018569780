"""Training reports what it did: exactly the requested steps, divergence
flagged (and the runner refuses such a cell as a result), each seed stopped
at its own plateau."""

import json
import os

import numpy as np
from conftest import ROOT
from test_networks import chunk_compilations

from ntkgap.nets import training
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import executors, store
from ntkgap.targets import parse_target

ARCH, TARGET = "fc:depth=1", "tree:d=12,L=2,arity=2,node=linear-plus"


def test_steps_are_exact_with_at_most_two_programs():
    cfg = training.TrainConfig(steps=150, eval_every=100, lr=1e-2, dtype="float64")
    with chunk_compilations() as compiled:
        r = training.train(parse_arch(ARCH), 8, parse_target(TARGET), 40, seeds=[0], cfg=cfg)
    assert r["steps"] == 150 and r["steps_per_seed"] == [150]
    assert [c["step"] for c in r["loss_curve"]] == [0, 100, 150]
    assert len(compiled) == 2  # a full chunk and the shorter last one
    assert not r["diverged"]


def test_divergence_is_reported_and_warned(cli, tmp_path):
    r = cli(
        "train", "--arch", ARCH, "--target", TARGET, "--width", "8", "--n", "40",
        "--steps", "150", "--eval-every", "100", "--lr", "1e10", "--json",
        cwd=tmp_path, env={"PYTHONPATH": ROOT},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["diverged"] is True and out["diverged_per_seed"] == [True]
    assert out["best_step"] == [0]  # no checkpoint beat the start
    assert out["steps"] <= 150
    assert "ntkgap: warning: training diverged for seed(s) 0" in r.stderr


def test_runner_marks_a_diverged_cell_failed(tmp_path, monkeypatch):
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path / "res"))
    monkeypatch.setenv("NTKGAP_PROGRESS", "0")
    monkeypatch.delenv("NTKGAP_PROFILE", raising=False)
    cfg = tmp_path / "div.toml"
    cfg.write_text(
        "name = 'div'\n[quick]\n[[quick.grid]]\nmethod = 'net'\n"
        f"target = '{TARGET}'\narch = '{ARCH}'\nwidth = 8\nn = 40\nseeds = [0]\n"
        "steps = 100\neval_every = 50\nlr = [1e10, 1e-2]\n[full]\ngrid = []\n"
    )
    r = executors.run(str(cfg), "quick", jobs=1)
    assert r["cells"] == 2 and len(r["failed"]) == 1
    assert r["failed"][0]["cell"]["lr"] == 1e10 and "diverged" in r["failed"][0]["reason"]
    kept = store.results("div", "net")
    assert [c["lr"] for c, _ in kept] == [1e-2]  # the failed cell never reaches a figure
    again = executors.run(str(cfg), "quick", jobs=1)  # stored marked failed: not recomputed
    assert again["computed"] == 0 and len(again["failed"]) == 1
    assert len(os.listdir(tmp_path / "res" / "div")) == 3  # two cells and the saved config


def test_each_seed_stops_at_its_own_plateau():
    arch, t = parse_arch(ARCH), parse_target(TARGET)
    cfg = training.TrainConfig(steps=3000, lr=2e-2, eval_every=20, patience=3, dtype="float64")
    together = training.train(arch, 16, t, 60, seeds=[0, 1, 2], cfg=cfg)
    assert min(together["steps_per_seed"]) < 3000  # early stopping acted
    for i, s in enumerate((0, 1, 2)):
        alone = training.train(arch, 16, t, 60, seeds=[s], cfg=cfg)
        # a seed's numbers never depend on the other seeds of the call
        assert alone["steps_per_seed"][0] == together["steps_per_seed"][i]
        assert alone["best_step"][0] == together["best_step"][i]
        assert alone["test_mse_per_seed"][0] == together["test_mse_per_seed"][i]
    assert together["steps"] == max(together["steps_per_seed"])
    assert np.all(np.array(together["best_step"]) <= np.array(together["steps_per_seed"]))
