"""The cost model (ntkgap.runs.cost): stored cells planted with seconds that
follow a known law exactly give back that law's constants and predict a
held-out cell; estimates grow with n, seeds and steps; with nothing stored
the estimate is finite and the reference rates are RESULTS.md's."""

import json
import math
import os
import re

import pytest

from ntkgap.runs import cost, store

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T40 = "tree:d=40,L=4,arity=2,node=tanh"  # a hypercube target with d = 40 inputs
# the planted laws: net seconds = A + seeds x steps x (P + Q x batch x weights);
# ntk seconds = A_K + R x (n^3 / 3 + 50 n n_test)
A, P, Q = 0.5, 2e-4, 3e-11
A_K, R = 0.2, 1.5e-11

# (arch, width, parameters of the stax network on d = 40 / 16 leaves, its biases):
# a forward pass multiplies each weight once per example
WEIGHT_CASES = [
    ("fc:depth=2", 64, 6849, 64 + 64 + 1),
    ("fc:depth=1", 32, 1345, 32 + 1),
    ("tree:arity=2,L=3", 32, 6657, (4 + 2 + 1) * 32 + 1),
    ("tree:arity=2,L=4", 16, 4097, (8 + 4 + 2 + 1) * 16 + 1),
]


def _net(arch="fc:depth=2", width=64, n=1000, batch=128, seeds=1, steps=100):
    return dict(method="net", arch=arch, target=T40, width=width, n=n, batch=batch,
                seeds=list(range(seeds)), steps=steps)  # fmt: skip


def _ntk(n, n_test=500):
    return dict(method="ntk", arch="fc:depth=1", target=T40, n=n, seed=0, n_test=n_test)


def _net_seconds(cell, weights):
    """The planted net law, with an independent batch and weight count."""
    batch = min(cell["batch"] or int(0.8 * cell["n"]), int(0.8 * cell["n"]))
    return A + len(cell["seeds"]) * cell["steps"] * (P + Q * batch * weights)


def _ntk_seconds(cell):
    return A_K + R * (cell["n"] ** 3 / 3 + 50 * cell["n"] * cell["n_test"])


WEIGHTS = {(a, w): p - b for a, w, p, b in WEIGHT_CASES}
NET_PLANT = [  # (arch, width, n, batch, seeds, steps)
    ("fc:depth=2", 64, 1000, 128, 1, 100), ("fc:depth=2", 64, 1000, 128, 4, 300),
    ("fc:depth=1", 32, 1000, 64, 2, 1000), ("fc:depth=1", 32, 100, 0, 3, 200),
    ("tree:arity=2,L=3", 32, 1000, 128, 2, 500), ("tree:arity=2,L=3", 32, 60, 0, 1, 800),
    ("tree:arity=2,L=4", 16, 2000, 256, 4, 100), ("tree:arity=2,L=4", 16, 1000, 32, 1, 1500),
    ("fc:depth=2", 64, 200, 0, 2, 700), ("tree:arity=2,L=3", 32, 1000, 16, 3, 50),
    ("fc:depth=1", 32, 1000, 128, 1, 2000),
]  # fmt: skip
NET_HELD_OUT = ("tree:arity=2,L=4", 16, 4000, 512, 8, 3000)


def _record(cell, seconds, **extra):
    return {"cell": cell, "result": dict(extra, cell_seconds=seconds)}


def _planted_nets():
    out = []
    for arch, w, n, b, s, st in NET_PLANT:
        c = _net(arch, w, n, b, s, st)
        out.append(_record(c, _net_seconds(c, WEIGHTS[(arch, w)]), steps_per_seed=[st] * s))
    return out


def _write(root, experiment, records):
    for rec in records:
        path = store.cell_path(experiment, rec["cell"], str(root))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            json.dump(rec, fh)


@pytest.mark.parametrize("arch,width,params,biases", WEIGHT_CASES)
def test_a_nets_work_is_its_weights_per_row(arch, width, params, biases):
    cell = _net(arch, width, n=1000, batch=1, seeds=1, steps=1)
    assert cost.work(cell) == params - biases
    assert cost.work(dict(cell, batch=7, seeds=[0, 1], steps=3)) == 42 * (params - biases)


def test_calibration_recovers_the_planted_laws_and_predicts_held_out_cells():
    ntks = [_record(_ntk(n), _ntk_seconds(_ntk(n))) for n in (500, 1000, 2000, 3000)]
    cal = cost.calibrate({"x": _planted_nets() + ntks})
    assert cal.step_overhead == pytest.approx(P / Q, rel=1e-6)
    assert cal.local[("x", "net")] == pytest.approx((A, Q), rel=1e-6)
    assert cal.local[("x", "ntk")] == pytest.approx((A_K, R), rel=1e-6)
    held = _net(*NET_HELD_OUT)
    want = _net_seconds(held, WEIGHTS[NET_HELD_OUT[:2]])
    assert cost.cell_seconds(cal, held, "x") == pytest.approx(want, rel=1e-6)
    assert cost.cell_seconds(cal, _ntk(8000), "x") == pytest.approx(_ntk_seconds(_ntk(8000)))


def test_an_experiment_without_cells_of_its_own_takes_the_methods_rate():
    """Planted without a fixed part: the rate over every experiment is Q."""
    recs = _planted_nets()
    for r in recs:
        r["result"]["cell_seconds"] -= A
    cal = cost.calibrate({"x": recs})
    held = _net(*NET_HELD_OUT)
    want = _net_seconds(held, WEIGHTS[NET_HELD_OUT[:2]]) - A
    assert cost.cell_seconds(cal, held, "new") == pytest.approx(want, rel=1e-6)


def _search(n_max=4096, seeds=8, ridge=0.0):
    return dict(method="ntk_search", arch="tree:arity=2,L=4", target=T40, eps=0.1, n_min=4,
                n_max=n_max, n_test=500, seeds=list(range(seeds)), ridge=ridge)  # fmt: skip


def _search_record(cell, seconds):
    """A stored search whose evaluations are at n_max / 64, n_max / 8, n_max."""
    ns = (cell["n_max"] // 64, cell["n_max"] // 8, cell["n_max"])
    return _record(
        cell, seconds, evaluations=[{"seed": s, "n": n} for s in cell["seeds"] for n in ns]
    )


SEARCH_CASES = [  # (the cell, the stored searches (experiment, cell, seconds), its estimate)
    (_search(), [("x", _search(), 100.0)], 100.0),  # stored: its own seconds
    (_search(seeds=16), [("x", _search(), 100.0)], 200.0),  # twice the seeds
    (_search(n_max=8192), [("x", _search(), 100.0)], 800.0),  # every n doubled, n^3
    # a tuned ridge from a ridgeless search: 3x, as a stored pair says
    (_search(ridge="tuned"), [("x", _search(), 100.0), ("z", _search(512), 10.0),
                              ("z", _search(512, ridge="tuned"), 30.0)], 300.0),
]  # fmt: skip


@pytest.mark.parametrize("cell,stored,want", SEARCH_CASES)
def test_a_search_is_scaled_from_the_stored_one(tmp_path, cell, stored, want):
    for experiment, c, seconds in stored:
        _write(tmp_path, experiment, [_search_record(c, seconds)])
    est = cost.estimate({"x": [cell]}, str(tmp_path))
    assert est["experiments"]["x"]["seconds"] == pytest.approx(want)


def test_a_search_of_another_experiment_scales_when_its_own_has_none(tmp_path):
    _write(tmp_path, "x", [_search_record(_search(), 100.0)])
    est = cost.estimate({"y": [_search(seeds=4)]}, str(tmp_path))
    assert est["experiments"]["y"]["cells"] == [
        {"seconds": pytest.approx(50.0), "how": "other experiment's search"}
    ]


GROWS = [  # (a cell, a costlier one)
    (_ntk(1000), _ntk(2000)),
    (_net(n=100, batch=0), _net(n=200, batch=0)),
    (_net(seeds=2), _net(seeds=3)),
    (_net(steps=100), _net(steps=101)),
    (_net("tree:arity=2,L=4", 16, seeds=1), _net("tree:arity=2,L=4", 16, seeds=2)),
    (_search(n_max=1024), _search(n_max=2048)),
    (_search(seeds=4), _search(seeds=5)),
]


@pytest.mark.parametrize("stored", [False, True], ids=["uncalibrated", "calibrated"])
@pytest.mark.parametrize("small,large", GROWS)
def test_the_estimate_grows_with_n_seeds_and_steps(tmp_path, stored, small, large):
    if stored:
        ntks = [_record(_ntk(n), _ntk_seconds(_ntk(n))) for n in (500, 1000, 2000)]
        _write(tmp_path, "x", _planted_nets() + ntks + [_search_record(_search(), 100.0)])
    est = cost.estimate({"y": [small, large]}, str(tmp_path))
    a, b = (c["seconds"] for c in est["experiments"]["y"]["cells"])
    assert 0 < a < b < math.inf


def test_with_nothing_stored_every_cell_gets_a_finite_estimate(tmp_path):
    net_search = dict(_search(), method="net_search", width=32, steps=100, batch=128)
    cells = [_ntk(4096), _net(), _search(), net_search, {"method": "spectrum", "target": T40}]
    est = cost.estimate({"x": cells}, str(tmp_path / "absent"))
    assert est["calibrated_on"] == 0
    secs = [c["seconds"] for c in est["experiments"]["x"]["cells"]]
    assert all(0 < s < math.inf for s in secs)
    assert est["seconds"] == pytest.approx(sum(secs))


def _results_md(pattern):
    with open(os.path.join(ROOT, "benchmarks", "RESULTS.md")) as fh:
        return float(re.search(pattern, fh.read()).group(1))


REFERENCE_ROWS = [  # (cell, RESULTS.md's seconds for it)
    (_ntk(7999, 2000), r"KRR n=7999 \(Gram \+ solve \+ predict[^|]*\| ([\d.]+) s"),
    (_net("fc:depth=2", 64, 2000, 128, 8, 1),
     r"training FLOP/s fc:depth=2 w=64, 8 seeds, batch 128 \(useful.*?([\d.]+) ms/step"),
    (_net("tree:arity=2,L=4", 32, 2000, 128, 8, 1),
     r"training FLOP/s tree:arity=2,L=4 w=32, 8 seeds, batch 128 \(useful.*?([\d.]+) ms/step"),
]  # fmt: skip


@pytest.mark.parametrize("cell,pattern", REFERENCE_ROWS)
def test_the_uncalibrated_rates_are_the_benchmarks(tmp_path, cell, pattern):
    """Within 2x of RESULTS.md's figure (a rerun of the benchmarks moves it)."""
    measured = _results_md(pattern) * (1e-3 if "ms/step" in pattern else 1)
    est = cost.estimate({"x": [cell]}, str(tmp_path))["experiments"]["x"]["cells"][0]
    assert est["how"] == "model"
    assert measured / 2 < est["seconds"] < measured * 2


def test_run_dry_run_estimates_and_computes_nothing(tmp_path, cli):
    # the model on the same cells, uncalibrated (nothing stored), is what the verb prints
    from ntkgap.runs import config as runs_config

    path = os.path.join(ROOT, "experiments", "e2_control.toml")
    out = tmp_path / "results"
    r = cli("run", path, "--profile", "paper", "--dry-run", "--json", "--results", str(out))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    cells = runs_config.expand(runs_config.load_config(path, "paper"), "paper", where=path)
    want = cost.estimate({"e2_control": cells}, str(out))["seconds"]
    assert got["cells"] == len(cells) and got["stored"] == 0 and got["calibrated_on"] == 0
    assert got["core_seconds"] == pytest.approx(want) and got["wall_minutes"] > 0
    assert not out.exists() or not any(out.rglob("*.json"))  # no cell computed
