"""A real cluster on 127.0.0.1: ``dask scheduler`` and ``dask worker``
processes started and stopped here; kernel searches run on the workers; a
failed cell is stored failed and the run goes on; a killed kernel search
resumes from its stored evaluations."""

import glob
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from ntkgap import cli
from ntkgap.kernels import ntk_predictor
from ntkgap.runs import methods

pytest.importorskip("distributed")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASK = os.path.join(os.path.dirname(sys.executable), "dask")

CLUSTER = """
name = "clu"
title = "clu"
[quick]
[[quick.grid]]
method = "ntk_search"
arch = "tree:arity=2,L=3"
target = "tree:d=40,L=3,arity=2,node=tanh"
eps = 0.1
seeds = [0, 1, 2, 3]
n_min = 4
resolution = 1.1
n_max = 192
n_test = 64
[[quick.grid]]
method = "net"
arch = "tree:arity=2,L=3"
target = "tree:d=40,L=3,arity=2,node=tanh"
width = 8
n = [16, 32]
seeds = [0, 1]
steps = 60
eval_every = 20
n_test = 64
[[quick.grid]]
method = "theory"
arch = "tree:arity=2,L=3"
target = "tree:d=40,L=3,arity=2,node=tanh"
n = [4, 16, 64]
eps = [0.1]
[full]
[[full.grid]]
method = "spectrum"
target = "sawtooth:L=2"
"""
#: how a cell ran, not what it computed
RUN_FACTS = ("cell_seconds", "seconds", "seed_seconds", "ran_on")


def _env(results, **extra):
    env = dict(os.environ, NTKGAP_RESULTS=str(results), NTKGAP_PROGRESS="0", **extra)
    env.pop("NTKGAP_TRAIN_WORKERS", None)
    return env


def _records(results, name="clu"):
    """Stored cell records (dot files aside), keyed by file, without RUN_FACTS."""
    out = {}
    for f in glob.glob(os.path.join(results, name, "*.json")):
        with open(f) as fh:
            rec = json.load(fh)
        rec["result"] = {k: v for k, v in rec["result"].items() if k not in RUN_FACTS}
        out[os.path.basename(f)] = rec
    return out


def _methods(results):
    return sorted(r["cell"]["method"] for r in _records(results).values())


def _progress(results, name="clu"):
    out = []
    for f in glob.glob(os.path.join(results, name, ".nested-*.json")):
        try:
            with open(f) as fh:
                out.append(json.load(fh)["result"])
        except (OSError, ValueError):
            pass
    return out


def _wait(pred, timeout, step=0.05):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if pred():
            return True
        time.sleep(step)
    return False


def _cli_run(cfg, results, *extra):
    """``python -m ntkgap run CFG --json ...`` as a process."""
    return subprocess.Popen(
        [sys.executable, "-m", "ntkgap", "run", str(cfg), "--json", *extra],
        env=_env(results), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.fixture
def cluster_cfg(tmp_path):
    p = tmp_path / "clu.toml"
    p.write_text(CLUSTER)
    return p


def _start_worker(sched_file, where):
    where.mkdir()
    return subprocess.Popen(
        [DASK, "worker", "--scheduler-file", str(sched_file), "--nthreads", "1", "--no-nanny",
         "--no-dashboard", "--host", "127.0.0.1"],
        cwd=where, env=_env(where / "res"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def test_kernel_search_runs_on_workers_and_survives_a_killed_worker(cluster_cfg, tmp_path):
    """``ntkgap run CFG --executor dask --scheduler-file F`` against a real
    ``dask scheduler`` on 127.0.0.1: with no worker the kernel search does not
    complete (nothing runs in the client); with two ``dask worker`` processes
    (each in its own folder, ``--nthreads 1``) it runs on them, one of them is
    killed with SIGKILL while it holds a seed, and the stored folder equals a
    local run's (``ntkgap run CFG --jobs 1``), timings and host/pid aside."""
    sched_file = tmp_path / "scheduler.json"
    sched = subprocess.Popen(
        [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(sched_file)],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    workers, client = [], None
    res = tmp_path / "dask"
    try:
        assert _wait(sched_file.exists, 30)
        client = _cli_run(cluster_cfg, res, "--executor", "dask", "--scheduler-file", sched_file)
        time.sleep(6)  # zero workers: nothing may complete, least of all the kernel search
        assert client.poll() is None, client.communicate()
        assert _methods(res) == [] and _progress(res) == []
        workers = [_start_worker(sched_file, tmp_path / f"w{i}") for i in range(2)]
        pids = {w.pid for w in workers}
        # a seed in progress on a worker (its progress names the worker's pid)
        assert _wait(lambda: [p for p in _progress(res) if not p["done"]], 60, 0.02)
        held = next(p["pid"] for p in _progress(res) if not p["done"])
        victim = next(w for w in workers if w.pid == held)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        out, err = client.communicate(timeout=120)
        assert client.returncode == 0, err
    finally:
        for p in [client, *workers, sched]:
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(timeout=30)
    assert json.loads(out)["computed"] == 4
    (key,) = _search_keys(res)
    with open(os.path.join(res, "clu", f"{key}.json")) as fh:
        ran_on = json.load(fh)["result"]["ran_on"]
    assert client.pid not in {r["pid"] for r in ran_on} and {r["pid"] for r in ran_on} <= pids
    assert [r["seed"] for r in ran_on] == [0, 1, 2, 3]
    # the killed worker's seed was rerun from the start on the other worker
    assert held not in {r["pid"] for r in ran_on}
    assert not any((tmp_path / f"w{i}" / "res").exists() for i in range(2))  # workers wrote nothing
    ref = tmp_path / "ref"
    r = subprocess.run([sys.executable, "-m", "ntkgap", "run", str(cluster_cfg), "--jobs", "1"],
                       env=_env(ref), cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    got, want = _records(res), _records(ref)
    assert got.keys() == want.keys() and len(want) == 4
    for k in want:
        if want[k]["cell"]["method"] != "ntk_search":
            assert got[k] == want[k], k
            continue
        # the nested factor's BLAS calls ran in other processes: equal to rounding
        g, w = got[k]["result"], want[k]["result"]
        assert [(e["seed"], e["n"]) for e in g["evaluations"]] == [
            (e["seed"], e["n"]) for e in w["evaluations"]
        ]
        ge, we = ([e["test_mse"] for e in x["evaluations"]] for x in (g, w))
        np.testing.assert_allclose(ge, we, rtol=1e-10)
        assert g["per_seed"] == w["per_seed"] and g["median"] == w["median"]


def _search_keys(results):
    return [k[:-5] for k, r in _records(results).items() if r["cell"]["method"] == "ntk_search"]


def test_a_failing_cell_is_stored_failed_and_the_run_goes_on(cluster_cfg, tmp_path, monkeypatch):
    """``ntkgap run CFG --jobs 1``: one cell's computation raises; it is
    stored failed with its one-line reason, every other cell is computed, the
    failure is listed and the exit status is 1; a rerun recomputes it."""
    real = methods.COMPUTE["net"]

    def net(cell):
        if cell["n"] == 16:
            raise RuntimeError("planted failure\nsecond line")
        return real(cell)

    monkeypatch.setitem(methods.COMPUTE, "net", net)
    res = tmp_path / "res"
    argv = ["run", str(cluster_cfg), "--jobs", "1", "--json", "--results", str(res)]
    monkeypatch.setenv("NTKGAP_PROGRESS", "0")
    rc = cli.main(argv)
    assert rc == 1
    recs = _records(res)
    failed = [r for r in recs.values() if "failed" in r]
    assert [r["cell"]["n"] for r in failed] == [16]
    assert failed[0]["failed"] == "error: RuntimeError: planted failure"
    assert len(recs) == 4 and all("failed" not in r for r in recs.values() if r not in failed)
    monkeypatch.setitem(methods.COMPUTE, "net", real)
    assert cli.main(argv) == 0
    assert not [r for r in _records(res).values() if "failed" in r]


def test_a_killed_kernel_search_resumes_from_its_stored_evaluations(cluster_cfg, tmp_path,
                                                                    monkeypatch):  # fmt: skip
    """``ntkgap run CFG --jobs 1`` killed (SIGKILL) while a kernel search's
    seed is half done; the rerun computes fewer evaluations than the search
    holds, and the stored ones are read, not recomputed."""
    res = tmp_path / "res"
    proc = _cli_run(cluster_cfg, res, "--jobs", "1")
    ok = _wait(lambda: [p for p in _progress(res)
                        if not p["done"] and len(p["evaluations"]) >= 2], 120, 0.01)  # fmt: skip
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert ok
    before = {(p["seed"], n): r for p in _progress(res) for n, r in p["evaluations"].items()}
    assert "ntk_search" not in _methods(res)
    calls = []
    real_at = ntk_predictor.NestedCurve.at

    def at(self, n, **kw):
        calls.append((self.seed, n))
        return real_at(self, n, **kw)

    monkeypatch.setattr(ntk_predictor.NestedCurve, "at", at)
    monkeypatch.setenv("NTKGAP_PROGRESS", "0")
    assert cli.main(["run", str(cluster_cfg), "--jobs", "1", "--results", str(res)]) == 0
    (search,) = [r for r in _records(res).values() if r["cell"]["method"] == "ntk_search"]
    evals = search["result"]["evaluations"]
    assert len(calls) < len(evals) and before
    assert not {(s, int(n)) for s, n in before} & set(calls)  # stored: read, not recomputed
    got = {(e["seed"], e["n"]): e["test_mse"] for e in evals}
    assert all(got[(s, int(n))] == r["test_mse"] for (s, n), r in before.items())
