"""Results stamped with their code: every stored record carries the code
version that computed it, ``ntkgap run`` recomputes cells of other code
(``--reuse-stale`` keeps them and the report marks the claims that read
them), a ``file:`` DAG target's cell is keyed by the file's contents, and a
Dask client refuses workers of other code."""

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

from ntkgap import cli
from ntkgap._infra import version
from ntkgap.errors import UsageError
from ntkgap.runs import config as runs_config
from ntkgap.runs import executors, methods, store, target_files
from ntkgap.targets import dag

#: two circle eigensystems (a claim reads them) and one kernel regression
STAMPED = """
name = "stamped"
title = "stamped"

[[claim]]
id = "S1"
claim = "ReLU-NTK circle eigenvalues decay like k^-2"
paper = "exponent -2"
statistic = "decay_exponent"
profile = "quick"
predictors = ["ntk:fc:depth=1", "ntk:fc:depth=2"]
params = { expected = -2.0, windows = [[8, 65]] }
rule = { kind = "below", threshold = 0.5, deterministic = true, reason = "a test's loose bound" }

[quick]
[[quick.grid]]
method = "eigen"
arch = ["fc:depth=1", "fc:depth=2"]
domain = "circle"
kmax = 64
[[quick.grid]]
method = "ntk"
target = "parity:d=6,k=2"
arch = "fc:depth=1"
n = 40
seed = 0
n_test = 200
"""

#: the numeric constant edited in the copy: the fc/tree kernels' default bias scale
B_STD = '"b_std": Field(float, default=0.1,'


def _env(results, pythonpath=None, report=None):
    env = dict(os.environ, NTKGAP_RESULTS=str(results), NTKGAP_PROGRESS="0")
    for key in ("NTKGAP_TRAIN_WORKERS", "NTKGAP_PROFILE", "PYTHONPATH"):
        env.pop(key, None)
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    if report:
        env["NTKGAP_REPORT"] = str(report)
    return env


def _run_copy(code, cfg, results, *extra, cwd):
    """``python -m ntkgap run CFG --json ...`` with the package copy at ``code``
    (run from ``cwd``, outside the checkout, so the copy is the one imported)."""
    r = subprocess.run(
        [sys.executable, "-m", "ntkgap", "run", str(cfg), "--jobs", "1", *extra],
        capture_output=True, text=True, env=_env(results, code), cwd=cwd, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout


def _records(results, name):
    out = {}
    for f in glob.glob(os.path.join(results, name, "*.json")):
        with open(f) as fh:
            out[os.path.basename(f)[:-5]] = json.load(fh)
    return out


def _copy_package(dest):
    shutil.copytree(
        os.path.join(ROOT, "ntkgap"), dest / "ntkgap",
        ignore=shutil.ignore_patterns("__pycache__"),
    )  # fmt: skip


def _version_of(code, cwd):
    r = subprocess.run(
        [sys.executable, "-c", "from ntkgap._infra.version import code_version as v; print(v())"],
        capture_output=True, text=True, env=_env(cwd, code), cwd=cwd, timeout=120, check=True,
    )  # fmt: skip
    return r.stdout.strip()


def _report(code, results, out):
    """experiments/report.py run from the copy (its CONFIGS: the copy's experiments/)."""
    subprocess.run(
        [sys.executable, str(code / "experiments" / "report.py"), "quick"],
        capture_output=True, text=True, env=_env(results, code, out), cwd=code, timeout=600,
        check=True,
    )  # fmt: skip
    with open(os.path.join(results, "summary.json")) as fh:
        (claim,) = json.load(fh)["claims"]
    with open(out) as fh:
        (row,) = [line for line in fh if line.startswith("| S1 |")]
    return claim, row


def test_edited_numerics_make_stored_cells_stale(tmp_path):
    """``ntkgap run CFG`` after an edit of a numeric constant in (a copy of) the
    package recomputes the stored cells and says ``N stale (other code)
    recomputed``; ``ntkgap run CFG --reuse-stale`` keeps them, and the report
    (REPORT.md's row, summary.json's ``stale_cells``) marks the claim that read them."""
    code, results = tmp_path / "code", tmp_path / "results"
    _copy_package(code)
    (code / "experiments").mkdir()
    shutil.copy(os.path.join(ROOT, "experiments", "report.py"), code / "experiments")
    cfg = code / "experiments" / "stamped.toml"
    cfg.write_text(STAMPED)
    # the copy's code version is this checkout's: contents, not the folder, are hashed
    v0 = _version_of(code, tmp_path)
    assert v0 == version.code_version()
    out = _run_copy(code, cfg, results, cwd=tmp_path)
    assert "3 computed, 0 reused" in out and "stale" not in out
    first = _records(results, "stamped")
    assert len(first) == 3 and {r["code_version"] for r in first.values()} == {v0}
    claim, row = _report(code, results, tmp_path / "REPORT.md")
    assert claim["stale_cells"] == 0 and "stale" not in row

    arch = code / "ntkgap" / "nets" / "arch.py"
    text = arch.read_text()
    assert text.count(B_STD) == 1
    arch.write_text(text.replace(B_STD, B_STD.replace("0.1", "0.4")))
    v1 = _version_of(code, tmp_path)
    assert v1 != v0

    out = _run_copy(code, cfg, results, "--reuse-stale", cwd=tmp_path)
    assert "0 computed, 3 reused" in out and "3 stale (other code) reused" in out
    assert _records(results, "stamped") == first  # nothing rewritten
    claim, row = _report(code, results, tmp_path / "REPORT.md")
    assert claim["stale_cells"] == 2  # the two eigen cells it read; not the ntk cell
    assert "read 2 stale cells" in row

    out = _run_copy(code, cfg, results, "--json", cwd=tmp_path)
    r = json.loads(out)
    assert (r["computed"], r["reused"], r["stale"]) == (3, 0, 3)
    again = _records(results, "stamped")
    assert set(again) == set(first) and {x["code_version"] for x in again.values()} == {v1}
    for key, rec in first.items():  # every cell's numbers moved with the bias scale
        assert again[key]["result"] != rec["result"], rec["cell"]["method"]
    out = _run_copy(code, cfg, results, cwd=tmp_path)
    assert "0 computed, 3 reused" in out and "stale" not in out
    claim, row = _report(code, results, tmp_path / "REPORT.md")
    assert claim["stale_cells"] == 0 and "stale" not in row


TINY = """
name = "unstamped"
title = "unstamped"
[quick]
[[quick.grid]]
method = "ntk"
target = "parity:d=6,k=2"
arch = "fc:depth=1"
n = [20, 30]
seed = 0
n_test = 200
"""


def test_a_record_without_code_version_is_stale(tmp_path, monkeypatch, capsys):
    """``ntkgap run CFG`` over records without ``code_version`` (a folder from
    before records carried it) recomputes them: ``2 stale (other code)
    recomputed``; ``ntkgap run CFG --dry-run --json`` counts them to compute."""
    cfg = tmp_path / "tiny.toml"
    cfg.write_text(TINY)
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path / "res"))
    monkeypatch.setenv("NTKGAP_PROGRESS", "0")
    assert cli.main(["run", str(cfg), "--jobs", "1", "--json"]) in (0, None)
    assert json.loads(capsys.readouterr().out)["stale"] == 0
    recs = _records(tmp_path / "res", "unstamped")
    assert len(recs) == 2
    for key, rec in recs.items():
        assert not store.is_stale(rec)
        del rec["code_version"]
        assert store.is_stale(rec)
        (tmp_path / "res" / "unstamped" / f"{key}.json").write_text(json.dumps(rec))
    assert cli.main(["run", str(cfg), "--dry-run", "--json"]) in (0, None)
    assert json.loads(capsys.readouterr().out)["stored"] == 0
    assert cli.main(["run", str(cfg), "--jobs", "1"]) in (0, None)
    assert "2 computed, 0 reused" in (out := capsys.readouterr().out)
    assert "2 stale (other code) recomputed" in out
    new = _records(tmp_path / "res", "unstamped")
    assert all(r["code_version"] == version.code_version() for r in new.values())
    # the same code, the same numbers (timings aside)
    for key, rec in recs.items():
        assert {**new[key]["result"], "cell_seconds": 0} == {**rec["result"], "cell_seconds": 0}


DAG = """
domain = "hypercube:d=6"
[[node]]
name = "a"
inputs = [0, 1]
fn = "parity"
[[node]]
name = "out"
inputs = ["a", 2]
fn = "{fn}"
"""

DAG_CFG = """
name = "dagged"
title = "dagged"
[quick]
[[quick.grid]]
method = "ntk"
target = "file:mydag.toml"
arch = "fc:depth=1"
n = 40
seed = 0
n_test = 200
"""


def test_an_edited_dag_file_is_recomputed(tmp_path, monkeypatch, capsys):
    """``ntkgap run CFG`` with a relative ``file:`` target: the cell carries
    the file's contents (key and SHA-256), so after the file is edited the
    rerun computes a new cell with a new value; computed where the file is
    absent, the shipped contents give the stored numbers."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path / "res"))
    monkeypatch.setenv("NTKGAP_PROGRESS", "0")
    (tmp_path / "cfg.toml").write_text(DAG_CFG)
    dag_file = tmp_path / "mydag.toml"
    dag_file.write_text(DAG.format(fn="parity"))
    assert cli.main(["run", "cfg.toml", "--jobs", "1"]) in (0, None)
    assert "1 computed, 0 reused" in capsys.readouterr().out
    (old,) = _records(tmp_path / "res", "dagged").values()
    shipped = old["cell"][target_files.FIELD]
    assert shipped["sha256"] == hashlib.sha256(dag_file.read_bytes()).hexdigest()
    assert shipped["text"] == dag_file.read_text()

    dag_file.write_text(DAG.format(fn="and"))  # out = a AND x2: another target
    assert cli.main(["run", "cfg.toml", "--jobs", "1", "--json"]) in (0, None)
    r = json.loads(capsys.readouterr().out)
    assert (r["computed"], r["reused"], r["stale"]) == (1, 0, 0)
    recs = _records(tmp_path / "res", "dagged")
    assert len(recs) == 2  # the old file's cell stays on disk, under its own key
    (new,) = [x for x in recs.values() if x["cell"] != old["cell"]]
    assert new["cell"]["target"] == old["cell"]["target"] == "file:mydag.toml"
    assert new["result"]["test_mse"] != old["result"]["test_mse"]
    # only the current file's cell belongs to the profile as last run
    assert [c for c, _ in store.results("dagged", profile="quick")] == [new["cell"]]

    # a worker without the file: the contents travel with the cell
    (cell,) = runs_config.expand(runs_config.load_config("cfg.toml"), "quick")
    elsewhere = tmp_path / "worker"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr(dag, "_SHIPPED", {})
    out = methods.run_cell(cell)
    assert {**out, "cell_seconds": 0} == {**new["result"], "cell_seconds": 0}


def test_cells_of_other_targets_keep_their_keys():
    """A cell without a ``file:`` target is not changed by shipping (its key
    is the one stored before code versions existed)."""
    cell = {"method": "ntk", "target": "parity:d=6,k=2", "arch": "fc:depth=1", "n": 40,
            "seed": 0}  # fmt: skip
    assert target_files.attach(dict(cell)) == cell
    # the key of this cell as computed by the code before shipping existed: the digest
    # of the filled cell's canonical JSON
    filled = dict(cell, n_test=2000, ridge=0.0)
    want = hashlib.sha256(json.dumps(filled, sort_keys=True).encode()).hexdigest()[:20]
    assert store.cell_key(cell) == want


class _FakeClient:
    """A Dask client's ``run``: each worker's answer to the function."""

    def __init__(self, versions):
        self.versions = versions

    def run(self, fn):
        return {w: (fn() if v is None else v) for w, v in self.versions.items()}


def test_workers_of_other_code_are_refused():
    """``ntkgap run CFG --executor dask``: workers of another code version are
    refused at connect with one line naming both versions."""
    mine = version.code_version()
    executors.check_worker_versions(_FakeClient({"tcp://a:1": None, "tcp://b:2": None}))
    with pytest.raises(UsageError) as err:
        executors.check_worker_versions(
            _FakeClient({"tcp://a:1": None, "tcp://b:2": "0.0.9+deadbeefdeadbeef"})
        )
    msg = str(err.value)
    assert "\n" not in msg
    assert "tcp://b:2" in msg and "0.0.9+deadbeefdeadbeef" in msg and mine in msg


def test_code_version_hashes_the_numerics_only(tmp_path):
    """The code version moves with a computing module and ``__version__``,
    not with the command line, the verdicts or a compiled cache."""
    _copy_package(tmp_path)
    pkg = tmp_path / "ntkgap"
    base = version.compute(pkg, "1.0")
    assert base == version.compute(pkg, "1.0")
    assert version.compute(pkg, "1.1") != base
    for rel in ("cli.py", "verdicts/claims.py", "__init__.py", "__main__.py"):
        (pkg / rel).write_text((pkg / rel).read_text() + "\n# edited\n")
    (pkg / "kernels" / "__pycache__").mkdir(exist_ok=True)
    (pkg / "kernels" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert version.compute(pkg, "1.0") == base
    (pkg / "kernels" / "krr.py").write_text((pkg / "kernels" / "krr.py").read_text() + "\n")
    assert version.compute(pkg, "1.0") != base
