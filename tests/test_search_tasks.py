"""Searches that share evaluation cells run as one task, one after another
(``executors.tasks``): which search trains a shared evaluation, and beside
which others in one program, never depends on timing."""

import json

import pytest
from test_runner import _run, _stored

from ntkgap.runs import executors

BASE = {"method": "net_search", "target": "parity:d=8,k=1", "arch": "fc:depth=1", "width": 8,
        "seeds": [0, 1], "n_min": 8, "n_max": 64, "steps": 40}  # fmt: skip

# (cells as (changes to BASE), the tasks expected as lists of indices into the cells)
CASES = [
    # one search at two eps: one task, the larger eps first whatever the input order
    ([{"eps": 0.05}, {"eps": 0.1}], [[1, 0]]),
    # other targets or training budgets share no evaluation: tasks of their own
    ([{"eps": 0.1}, {"eps": 0.05, "target": "parity:d=8,k=2"}], [[0], [1]]),
    ([{"eps": 0.1}, {"eps": 0.05, "steps": 80}], [[0], [1]]),
    # search keys (n_max, seeds) do not split a group
    ([{"eps": 0.1}, {"eps": 0.05, "n_max": 128, "seeds": [0, 1, 2]}], [[0, 1]]),
    # kernel searches and plain cells are never grouped; tasks keep first-appearance order
    ([{"method": "ntk_search", "eps": 0.1}, {"method": "ntk_search", "eps": 0.05}], [[0], [1]]),
    ([{"method": "net", "n": 8, "eps": None}, {"eps": 0.1}, {"eps": 0.3}], [[0], [2, 1]]),
    # a string eps (the RHM's "pstar") sorts after the numbers, without error
    ([{"eps": "pstar"}, {"eps": 0.1}], [[1, 0]]),
    # an after-kernel search's three kernels, and its net_search, share their trainings
    (
        [
            {"method": "after_kernel_search", "kernel": "init", "eps": 0.1},
            {"method": "after_kernel_search", "kernel": "after", "eps": 0.1},
            {"eps": 0.1},
            {"method": "after_kernel_search", "kernel": "after", "eps": 0.1, "steps": 80},
        ],
        [{0, 1, 2}, [3]],  # a set: equal eps, so the order is the cells' keys'
    ),
]


@pytest.mark.parametrize("changes, expected", CASES)
def test_tasks_group_searches_sharing_evaluations(changes, expected):
    cells = [dict(BASE, **c) for c in changes]
    got = [[cells.index(c) for c in t] for t in executors.tasks(cells)]
    assert [set(t) if isinstance(e, set) else t for t, e in zip(got, expected)] == expected
    # the order within a task does not depend on the order of the input
    again = [[cells.index(c) for c in t] for t in executors.tasks(cells[::-1])]
    assert sorted(again) == sorted(got)


TWO_EPS = """
name = "twoeps"
title = "twoeps"
[quick]
[[quick.grid]]
method = "net_search"
target = "parity:d=8,k=1"
arch = "fc:depth=1"
width = 8
eps = EPS
seeds = [0, 1, 2, 3]
n_min = 8
n_max = 64
n_test = 64
steps = 40
eval_every = 20
batch = 64
lr = 0.05
OTHER
[full]
[[full.grid]]
method = "spectrum"
target = "sawtooth:L=2"
"""
# the second search: a smaller eps and a larger n_max, so that its steps differ
# from the first one's from the start (side by side they would train shared
# evaluations in other programs)
OTHER = (
    TWO_EPS.split("[full]")[0]
    .split("[quick]")[1]
    .replace("EPS", "0.2")
    .replace("n_max = 64", "n_max = 128")
    .replace("OTHER", "")
)


def _programs(stored):
    """The evaluations' training programs: sets of (seed, n) that shared one call."""
    calls = {}
    for v in stored.values():
        r = json.loads(v)
        if r["cell"]["method"] == "net":
            key = (r["result"]["cell_seconds"], r["result"].get("batched_runs", 1))
            calls.setdefault(key, set()).add((r["cell"]["seeds"][0], r["cell"]["n"]))
    return sorted(sorted(s) for s in calls.values())


def test_two_eps_in_two_workers_train_as_the_larger_eps_alone_then_the_other(tmp_path, monkeypatch):
    cfg = tmp_path / "twoeps.toml"
    # reference, in this process (one executor, no worker): the eps = 0.5 search alone,
    # then both (the 0.2 one reuses its evaluations)
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path / "ref"))
    monkeypatch.setenv("NTKGAP_PROGRESS", "0")
    cfg.write_text(TWO_EPS.replace("EPS", "0.5").replace("OTHER", ""))
    executors.run(str(cfg), "quick", jobs=1)
    cfg.write_text(TWO_EPS.replace("EPS", "0.5").replace("OTHER", OTHER))
    assert executors.run(str(cfg), "quick", jobs=1)["computed"] == 1
    got = _run(cfg, tmp_path / "pool", "--jobs", "2")  # two worker processes
    assert got["computed"] == 2 and not got["failed"]
    ref, pool = _stored(tmp_path / "ref", "twoeps"), _stored(tmp_path / "pool", "twoeps")
    assert set(ref) == set(pool)
    # the same evaluations, trained in the same programs, with the same numbers
    assert _programs(ref) == _programs(pool) and len(_programs(ref)) > 1
    for k in ref:
        a, b = json.loads(ref[k])["result"], json.loads(pool[k])["result"]
        for key in ("test_mse_per_seed", "n_star", "per_seed", "median"):
            assert a.get(key) == b.get(key), (k, key)


def test_dask_starts_a_tasks_next_search_when_the_previous_one_is_stored(monkeypatch):
    # the Dask coordinator's own logic (no cluster: submitting a step is recorded, and a
    # step's results are sent back by hand)
    events = []

    def steps(cell, name):
        events.append(("start", cell["eps"]))
        yield [["an evaluation"]]
        events.append(("end", cell["eps"]))
        return {"eps": cell["eps"]}

    monkeypatch.setattr(executors, "search_steps", steps)
    run = object.__new__(executors._DaskRun)  # its constructor needs distributed
    run.name, submitted = "x", []
    run.submit_step = submitted.append
    run.finish = lambda cell, out: events.append(("stored", out["eps"]))
    run.submit_cell = lambda cell: events.append(("cell", cell["method"]))
    other = dict(BASE, method="net", n=8, seeds=[0])
    executors._start_tasks(run, executors.tasks([dict(BASE, eps=0.05), dict(BASE, eps=0.1), other]))
    assert [s.cell["eps"] for s in submitted] == [0.1]  # the second search waits
    assert events == [("start", 0.1), ("cell", "net")]
    run.advance(submitted[0], [["a result"]])
    assert [s.cell["eps"] for s in submitted] == [0.1, 0.05]
    run.advance(submitted[1], [["a result"]])
    assert events == [("start", 0.1), ("cell", "net"), ("end", 0.1), ("stored", 0.1),
                      ("start", 0.05), ("end", 0.05), ("stored", 0.05)]  # fmt: skip
