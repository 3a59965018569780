"""Where compiled programs and threads go: JAX's persistent compilation cache
(``NTKGAP_JAX_CACHE``: a folder, ``off``, or the user cache by default) fills
with the programs ``ntkgap train`` compiles and changes none of its numbers;
a local worker of ``--jobs`` runs BLAS on one thread, whatever its share of the cores
(``--jobs 1`` against ``--jobs 2``'s equal numbers: ``test_runner.py``)."""

import json
import os
import subprocess
import sys

from conftest import run_cli

from ntkgap._infra import config

TRAIN = ["train", "--arch", "tree:arity=2,L=2", "--target", "tree:d=8,L=2,arity=2,node=tanh",
         "--width", "8", "--n", "64", "--seeds", "2", "--steps", "20", "--lr", "0.03",
         "--n-test", "32", "--json"]  # fmt: skip


def _train(cache):
    p = run_cli(*TRAIN, env={"NTKGAP_JAX_CACHE": cache})
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_the_default_folder_off_and_a_path(monkeypatch, tmp_path):
    monkeypatch.delenv("NTKGAP_JAX_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert config.jax_cache_dir() == os.path.join(str(tmp_path), "ntkgap", "jax")
    for off in ("off", "OFF", "0", "none"):
        monkeypatch.setenv("NTKGAP_JAX_CACHE", off)
        assert config.jax_cache_dir() is None
    monkeypatch.setenv("NTKGAP_JAX_CACHE", str(tmp_path / "c"))
    assert config.jax_cache_dir() == str(tmp_path / "c")


def test_train_fills_the_cache_and_its_numbers_do_not_change(tmp_path):
    """``ntkgap train ... --json`` three times: without a cache, filling one,
    reading it back; the three results are equal to the last bit."""
    folder = tmp_path / "jax"
    cold = _train("off")
    assert not folder.exists()
    first = _train(str(folder))
    entries = sorted(os.listdir(folder))
    assert entries, "no compiled program was cached"
    again = _train(str(folder))
    for r in (first, again):
        assert r["test_mse_per_seed"] == cold["test_mse_per_seed"]
        assert r["train_mse"] == cold["train_mse"]


def test_a_local_worker_runs_blas_on_one_thread():
    """The initializer of ``ntkgap run --jobs N``'s worker processes, in a fresh
    process given a share of two cores: BLAS runs on one thread after it."""
    code = (
        "from threadpoolctl import threadpool_info\n"
        "from ntkgap.runs import executors\n"
        "executors._share_cores(2)\n"
        "print(sorted({i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'}))"
    )
    env = {k: v for k, v in os.environ.items() if k != "NTKGAP_TRAIN_WORKERS"}
    env["OPENBLAS_NUM_THREADS"] = "2"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[1]"
