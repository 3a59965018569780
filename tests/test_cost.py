"""The cost model (ntkgap.runs.cost): stored cells planted with seconds that
follow a known law exactly give back that law's constants and predict a
held-out cell; estimates grow with n, seeds and steps; with nothing stored
the estimate is finite and the reference rates are RESULTS.md's."""

import json
import math
import os
import re

import pytest

from ntkgap.runs import cost, cost_plan, store

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


def _stamp(rec):
    """The record as this code stores it (its code version, where records carry one)."""
    try:
        from ntkgap._infra.version import code_version
    except ImportError:  # records without a code version
        return rec
    return {**rec, "code_version": code_version()}


def _write(root, experiment, records, stamp=True):
    for rec in records:
        rec = _stamp(rec) if stamp else rec
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


def _search_record(cell, seconds, n_star=None):
    """A stored search whose seeds' errors cross eps at ``n_star`` (default
    n_max / 8): evaluations at n_max / 64, n_max / 8, n_max."""
    n_star = n_star or cell["n_max"] // 8
    ns = (cell["n_max"] // 64, cell["n_max"] // 8, cell["n_max"])
    evs = [{"seed": s, "n": n, "test_mse": cell["eps"] * n_star / n}
           for s in cell["seeds"] for n in ns]  # fmt: skip
    return _record(cell, seconds, evaluations=evs)


def test_a_stored_cell_costs_nothing_and_reports_its_seconds(tmp_path):
    _write(tmp_path, "x", [_search_record(_search(), 100.0)])
    (c,) = cost.estimate({"x": [_search()]}, str(tmp_path))["experiments"]["x"]["cells"]
    assert c == {"seconds": 0.0, "how": "stored", "stored_seconds": 100.0}


def test_a_stale_record_is_priced_as_a_run_recomputes_it(tmp_path):
    """A record of other code (none stamped) is computed again: it costs its
    model estimate, and nothing with ``reuse_stale``."""
    if not hasattr(store, "is_stale"):
        pytest.skip("records carry no code version")
    _write(tmp_path, "x", [_search_record(_search(), 100.0)], stamp=False)
    (c,) = cost.estimate({"x": [_search()]}, str(tmp_path))["experiments"]["x"]["cells"]
    assert c["how"] != "stored" and c["seconds"] > 0
    est = cost.estimate({"x": [_search()]}, str(tmp_path), reuse_stale=True)
    assert est["experiments"]["x"]["cells"][0]["how"] == "stored"


def test_a_sibling_gives_the_n_a_search_reaches(tmp_path):
    """The sibling's planted curve, errors 0.1 x 512 / n evaluated at 64,
    512 and 4096, reaches eps = 0.1 at 512, eps = 0.05 at 1024 (between
    evaluations: a power law, interpolated exactly) and eps = 0.005 never
    (the cap: expected to censor)."""
    _write(tmp_path, "x", [_search_record(_search(), 100.0)])
    cells = [dict(_search(seeds=4), eps=e) for e in (0.1, 0.05, 0.005)]
    got = cost.estimate({"y": cells}, str(tmp_path))["experiments"]["y"]["cells"]
    assert [c["n_reach"] for c in got] == pytest.approx([512, 1024, 4096])
    assert {c["reach_from"] for c in got} == {"sibling"}
    assert got[0]["how"] == "other experiment's search"
    assert got[0]["seconds"] < got[1]["seconds"] < got[2]["seconds"]


def _theory(monkeypatch, by_target):
    monkeypatch.setattr(cost.reach, "theory_nstar", lambda arch, target, eps: by_target[target])


def test_a_search_resolving_far_below_its_cap_costs_far_less_than_one_censoring(
    tmp_path, monkeypatch
):
    """Planted: three stored searches of one kind whose seconds follow
    0.5 + 2e-9 x seeds x n_f^3 (n_f the largest n each evaluated), no
    sibling for the new cells, the theory planting n* = 100 for one target
    and 'never' for the other under one cap of 16,384: the first costs
    (0.5 + 2e-9 x 8 x ~128^3) s, the second (0.5 + 2e-9 x 8 x 16384^3) s."""
    stored = [_search(n_max=m) for m in (512, 1024, 2048)]
    recs = [_search_record(c, 0.5 + 2e-9 * 8 * c["n_max"] ** 3, n_star=c["n_max"])
            for c in stored]  # fmt: skip
    _write(tmp_path, "x", recs)
    easy = dict(_search(n_max=16384), target="tree:d=40,L=4,arity=2,node=linear")
    hard = dict(_search(n_max=16384), target="tree:d=40,L=4,arity=2,node=parity")
    _theory(monkeypatch, {easy["target"]: 100.0, hard["target"]: float("inf")})
    got = cost.estimate({"x": [easy, hard]}, str(tmp_path))["experiments"]["x"]["cells"]
    assert [(c["n_reach"], c["reach_from"]) for c in got] == [
        (100.0, "theory"),
        (16384.0, "theory (censors)"),
    ]
    assert got[0]["seconds"] < 0.5 + 2e-9 * 8 * 256**3  # the bracket stops by 2 x n*
    assert got[1]["seconds"] == pytest.approx(0.5 + 2e-9 * 8 * 16384**3, rel=0.05)
    assert got[1]["seconds"] > 1000 * got[0]["seconds"]


def test_without_sibling_or_theory_a_search_is_priced_at_its_cap(tmp_path, monkeypatch):
    _write(tmp_path, "x", [_search_record(_search(), 100.0)])
    other = dict(_search(), target="tree:d=40,L=4,arity=2,node=linear")
    _theory(monkeypatch, {other["target"]: None})
    (c,) = cost.estimate({"x": [other]}, str(tmp_path))["experiments"]["x"]["cells"]
    assert (c["n_reach"], c["reach_from"]) == (4096, "n_max")


def test_a_search_cost_hook_prices_a_search(tmp_path, monkeypatch):
    """A solver's hook sees the expected n and its answer is the estimate."""
    _write(tmp_path, "x", [_search_record(_search(), 100.0)])
    seen = []
    monkeypatch.setattr(cost, "SEARCH_COST_HOOKS", [])
    cost.register_search_cost(lambda cell, n: seen.append(n) or 7.0)
    (c,) = cost.estimate({"y": [_search(seeds=3)]}, str(tmp_path))["experiments"]["y"]["cells"]
    assert c["seconds"] == 7.0 and seen == [512]


def test_the_makespan_is_the_list_schedule_bounded_by_the_optimum():
    """Against brute force over every assignment of 7 tasks to 3 workers:
    optimum <= makespan <= 4/3 optimum, and both >= the longest task and
    the total / workers."""
    import itertools
    import random

    rng = random.Random(0)
    for _ in range(20):
        d = [rng.uniform(0.1, 10) for _ in range(7)]
        best = min(
            max(sum(x for x, w in zip(d, a) if w == k) for k in range(3))
            for a in itertools.product(range(3), repeat=7)
        )
        got = cost_plan.makespan(d, 3)
        assert best - 1e-9 <= got <= 4 / 3 * best + 1e-9
        assert got >= max(d) and got >= sum(d) / 3 - 1e-9
    assert cost_plan.makespan([], 4) == 0.0 and cost_plan.makespan([5.0, 1.0], 1) == 6.0


def test_the_held_out_check_never_calibrates_on_its_cells(tmp_path):
    """benchmarks/cost_check.py: a held-out cell stored in the calibration
    folder with absurd seconds changes none of the held-out estimates."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "cost_check", os.path.join(ROOT, "benchmarks", "cost_check.py")
    )
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    assert len(check.HELD_OUT) == 10 and len(check.held_out_keys()) == 10
    _write(tmp_path / "a", "x", _planted_nets())
    before = [e["seconds"] for e in check.estimates(str(tmp_path / "a"))]
    name, cell = check._cell(*check.HELD_OUT[-1])  # a fixed-n net cell
    _write(tmp_path / "a", name, [_record(cell, 1e9, steps_per_seed=[cell["steps"]] * 3)])
    after = check.estimates(str(tmp_path / "a"))
    assert [e["seconds"] for e in after] == before and after[-1]["how"] == "model"


GROWS = [  # (a cell, a costlier one)
    (_ntk(1000), _ntk(2000)),
    (_net(n=100, batch=0), _net(n=200, batch=0)),
    (_net(seeds=2), _net(seeds=3)),
    (_net(steps=100), _net(steps=101)),
    (_net("tree:arity=2,L=4", 16, seeds=1), _net("tree:arity=2,L=4", 16, seeds=2)),
    (dict(_search(), eps=0.3), _search()),  # a larger eps is reached sooner
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
    assert [c["key"] for c in got["per_cell"]] == [store.cell_key(c) for c in cells]
    assert all(c["estimate_s"] > 0 and c["method"] for c in got["per_cell"])
    total = sum(c["estimate_s"] for c in got["per_cell"])
    assert total == pytest.approx(got["core_seconds"])
    assert got["makespan_s"] >= total / 2 - 1e-6  # --jobs 2 (the default)
    assert (
        got["makespan_s"] >= got["longest_task_s"] >= max(c["estimate_s"] for c in got["per_cell"])
    )
    assert got["makespan_s"] <= total + 1e-6


def test_run_dry_run_with_everything_stored_costs_nothing(tmp_path, cli):
    """``ntkgap run CFG --dry-run --json`` over a folder holding every cell:
    zero cost, no cell listed, makespan 0; a cell more gets listed alone."""
    cfg = tmp_path / "mine.toml"
    grid = "[[full.grid]]\nmethod = 'ntk'\ntarget = 'parity:d=6,k=1'\narch = 'fc'\nseed = 0\n"
    cfg.write_text(f"name = 'mine'\n[full]\n{grid}n = [20, 40]\nn_test = 50\n")
    out = tmp_path / "res"
    r = cli("run", str(cfg), "--profile", "full", "--results", str(out), "--jobs", "1")
    assert r.returncode == 0, r.stderr
    r = cli("run", str(cfg), "--profile", "full", "--dry-run", "--json", "--results", str(out))
    got = json.loads(r.stdout)
    assert (got["cells"], got["stored"], got["core_seconds"]) == (2, 2, 0.0)
    assert got["per_cell"] == [] and got["makespan_s"] == 0.0
    assert "0.00 core-hours" in cli("run", str(cfg), "--profile", "full", "--dry-run",
                                    "--results", str(out)).stdout  # fmt: skip
    cfg.write_text(f"name = 'mine'\n[full]\n{grid}n = [20, 40, 60]\nn_test = 50\n")
    r = cli("run", str(cfg), "--profile", "full", "--dry-run", "--json", "--results", str(out))
    got = json.loads(r.stdout)
    assert [c["method"] for c in got["per_cell"]] == ["ntk"] and got["core_seconds"] > 0


def test_compare_dry_run_lists_each_cells_estimate_and_the_makespan(tmp_path, cli):
    """``ntkgap compare --family F --L 2..4 --dry-run --json --jobs 3``: every
    cell to compute with its estimate, their sum the cost, the makespan on 3
    workers between the total / 3 and the total; the text names the makespan."""
    args = ("compare", "--family", "tree:d=16,arity=2,node=tanh", "--L", "2..4", "--dry-run",
            "--jobs", "3")  # fmt: skip
    env = {"NTKGAP_RESULTS": str(tmp_path / "none")}
    r = cli(*args, "--json", env=env)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    total = sum(c["estimate_s"] for c in got["per_cell"])
    assert got["per_cell"] and total == pytest.approx(got["cost"])
    assert {"key", "method", "estimate_s"} <= set(got["per_cell"][0])
    assert total / 3 - 1e-6 <= got["makespan_s"] <= total + 1e-6
    assert "min on 3 workers" in cli(*args, env=env).stdout


def test_a_tuned_search_takes_the_tuned_factor_of_the_nearest_stored_cap(tmp_path):
    """Stored tuned/ridgeless pairs at caps 512 (2x) and 8192 (5x), and a
    ridgeless twin of the cell (100 s): the tuned cell at cap 1024 with the
    twin's evaluations is 100 s x 2 (the pair at 512 is the nearer)."""
    pairs = [("z", _search(512, ridge=r), s) for r, s in ((0.0, 10.0), ("tuned", 20.0))]
    pairs += [("z", _search(8192, ridge=r), s) for r, s in ((0.0, 10.0), ("tuned", 50.0))]
    other = "tree:d=40,L=4,arity=2,node=linear"
    for exp, c, secs in pairs:
        _write(tmp_path, exp, [_search_record(dict(c, target=other), secs)])
    _write(tmp_path, "x", [_search_record(_search(1024), 100.0)])
    (c,) = cost.estimate({"x": [_search(1024, ridge="tuned")]}, str(tmp_path))["experiments"]["x"][
        "cells"
    ]
    assert c["seconds"] == pytest.approx(200.0) and c["reach_from"] == "sibling"
