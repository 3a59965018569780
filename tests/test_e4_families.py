"""E4's depth-indexed target families: the random layered circuits' Walsh
spectrum (what the fc NTK theory reads) against brute-force characters on
the whole support cube, and REPORT.md's table of kurtosis and max |y|
listing every E4 family and depth of the config, with kurtosis, max |y|
and the stored spectrum's average degree checked against brute force and
the planted values."""

import itertools
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

from ntkgap.kernels import theory
from ntkgap.nets.arch import parse_arch
from ntkgap.runs import config as runs_config
from ntkgap.runs import store
from ntkgap.targets import parse_target

E4 = os.path.join(ROOT, "experiments", "e4_trees.toml")


def _cube_values(spec):
    """f on every configuration of the support (other coordinates +1), through
    ``target(x)`` on explicit points, and the configurations as a +-1 matrix."""
    t = parse_target(spec)
    s, d = len(t.support), t.spec["d"]
    conf = np.array(list(itertools.product([1.0, -1.0], repeat=s)))
    x = np.ones((conf.shape[0], d))
    x[:, list(t.support)] = conf
    return t(x), conf


def _brute_degree_profile(spec):
    y, conf = _cube_values(spec)
    s = conf.shape[1]
    prof = np.zeros(s + 1)
    for k in range(s + 1):
        for S in itertools.combinations(range(s), k):
            chi = np.prod(conf[:, list(S)], axis=1) if S else np.ones(len(y))
            prof[k] += np.mean(y * chi) ** 2
    return prof


@pytest.mark.parametrize("L", [2, 3])
def test_layered_fc_theory_power_is_the_brute_force_walsh_profile(L):
    spec = f"layered:d=12,L={L},fan_in=3,seed=1"
    sp, _ = theory.spectrum(parse_arch("fc:depth=2"), parse_target(spec))
    ref = _brute_degree_profile(spec)
    assert ref[1:].sum() > 0.5  # non-degenerate: most of the unit second moment varies
    np.testing.assert_allclose(sp.power[: ref.size], ref, atol=1e-12)
    assert np.all(sp.power[ref.size :] == 0)


def _family(spec):
    """name + parameters except L and d, read off the spec string itself."""
    name, _, rest = spec.partition(":")
    keep = [kv for kv in rest.split(",") if kv.split("=")[0] not in ("L", "d")]
    return name, sorted(keep)


def test_report_table_lists_every_e4_family_and_depth(tmp_path):
    cfg = runs_config.load_config(E4)
    cells = runs_config.expand(cfg, "quick", E4)
    spectra = [c for c in cells if c["method"] == "spectrum"]
    assert spectra, "E4 quick stores spectrum cells for the table's degree column"
    folder = tmp_path / "results" / "e4_trees"
    folder.mkdir(parents=True)
    (folder / ".config-quick.json").write_text(json.dumps(cfg))
    planted = {}
    for i, c in enumerate(spectra):
        planted[c["target"]] = 1.0 + 0.25 * i
        res = {"complexity": {"average_degree": planted[c["target"]]}}
        (folder / f"{store.cell_key(c)}.json").write_text(json.dumps({"cell": c, "result": res}))
    env = dict(
        os.environ,
        NTKGAP_RESULTS=str(tmp_path / "results"),
        NTKGAP_REPORT=str(tmp_path / "REPORT.md"),
        NTKGAP_PROGRESS="0",
    )
    p = subprocess.run(
        [sys.executable, os.path.join(ROOT, "experiments", "report.py"), "quick"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    text = (tmp_path / "REPORT.md").read_text()
    table = text.split("| family | L | kurtosis | max abs y | average Walsh degree |")[1]
    rows = {}
    for line in table.split("\n\n")[0].splitlines()[2:]:
        fam, L, kurt, mx, deg = (x.strip() for x in line.strip("|").split("|"))
        rows[(fam, int(L))] = (kurt, mx, deg)
    # every family and depth of the stored cells has exactly one row: its name and
    # every key=value the spec gives (defaults may add more), at its depth
    assert len(rows) == len(planted)
    for spec, deg_planted in planted.items():
        name, keep = _family(spec)
        L = int(next(kv for kv in spec.split(":")[1].split(",") if kv.startswith("L="))[2:])
        hits = [
            r
            for (f, l2), r in rows.items()
            if l2 == L
            and f.startswith(name + ": ")
            and set(keep) <= set(f.split(": ")[1].split(", "))
        ]
        assert len(hits) == 1, (spec, hits)
        kurt, mx, deg = hits[0]
        y, _ = _cube_values(spec)
        c = y - y.mean()
        ref_k = np.mean(c**4) / np.mean(c**2) ** 2
        # the report prints 3 significant digits
        assert float(kurt) == pytest.approx(ref_k, rel=6e-3), (spec, kurt)
        assert float(mx) == pytest.approx(np.abs(y).max(), rel=6e-3)
        assert float(deg) == pytest.approx(deg_planted, rel=6e-3)
    # quick's families: the headline's tanh trees and the linear control
    nodes = {n for f, _ in rows for n in ("tanh", "linear") if f"node={n}" in f}
    assert nodes == {"tanh", "linear"}
