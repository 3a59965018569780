"""The adaptive n*(eps) search recovers planted crossings on synthetic
curves, censors explicitly, never repeats an evaluation and resumes from
its JSON state."""

import json
import math

import numpy as np
import pytest

from ntkgap.errors import UsageError
from ntkgap.runs import search


def _power(n0, b):
    """err(n) = (n0 / n)^b per seed: n*(eps) = n0 eps^(-1/b) (closed form)."""
    return lambda batch: [(n0[s] / n) ** b for s, n in batch]


def _check_bracket(r, state, truth):
    assert r["status"] == "resolved"
    lo, hi = r["lo"], r["hi"]
    assert lo < truth <= hi  # err(lo) > eps and err(hi) <= eps on a decreasing curve
    assert hi / lo <= state.factor or hi - lo <= 1
    assert lo <= r["n_star"] <= hi


@pytest.mark.parametrize("on_grid", [True, False])
@pytest.mark.parametrize("b", [0.5, 1.0, 2.0])
def test_recovers_planted_n_star_on_power_laws(b, on_grid):
    eps = 0.1
    n0 = {s: v for s, v in enumerate(np.geomspace(10, 30_000, 30) * eps ** (1 / b))}
    out = search.run_search(_power(n0, b), list(n0), eps, 8, 100_000, on_grid=on_grid)
    for r in out["seeds"]:
        truth = n0[r["seed"]] * eps ** (-1 / b)  # = geomspace value
        _check_bracket(r, out["state"], truth)
        # log-log interpolation is exact on a power law
        assert r["n_star"] == pytest.approx(truth, rel=1e-9)


@pytest.mark.parametrize("on_grid", [True, False])
@pytest.mark.parametrize("n0", [9, 10, 37, 64, 65, 500, 4097, 77_777])
def test_recovers_a_step_curve(n0, on_grid):
    # err = 1 below n0, 0.01 from n0 on: n* = n0 exactly
    out = search.run_search(
        lambda b: [1.0 if n < n0 else 0.01 for _, n in b], [0], 0.1, 8, 10**5, on_grid=on_grid
    )
    _check_bracket(out["seeds"][0], out["state"], n0)


@pytest.mark.parametrize("on_grid", [True, False])
def test_censoring_left_and_right_in_one_search(on_grid):
    n0 = {0: 2.0, 1: 300.0, 2: 1e6}  # n* = 20, 3000, 1e7 with eps = 0.1, b = 1
    out = search.run_search(_power(n0, 1.0), [0, 1, 2], 0.1, 20, 50_000, on_grid=on_grid)
    by = {r["seed"]: r for r in out["seeds"]}
    assert by[0]["status"] == "left" and by[0]["bound"] == 20 and by[0]["n_star"] is None
    assert by[0]["evaluations"] == 1  # n_min already passes: nothing else to learn
    assert by[2]["status"] == "right" and by[2]["bound"] == 50_000 and by[2]["n_star"] is None
    assert 50_000 in out["state"].evals[2]  # n_max itself was evaluated and failed
    _check_bracket(by[1], out["state"], 3000.0)


@pytest.mark.parametrize("on_grid", [True, False])
def test_never_repeats_an_evaluation_and_update_refuses_repeats(on_grid):
    seen = []
    rng = np.random.default_rng(0)
    noise = {}

    def noisy(batch):  # non-monotone: a decreasing curve times fixed random noise
        seen.extend(batch)
        out = []
        for s, n in batch:
            noise.setdefault((s, n), math.exp(0.7 * rng.standard_normal()))
            out.append(min(1.0, 500.0 * (s + 1) / n) * noise[(s, n)])
        return out

    out = search.run_search(noisy, range(8), 0.05, 4, 10**6, width=2, on_grid=on_grid)
    assert len(seen) == len(set(seen)) == out["evaluations"]
    assert all(float(n).is_integer() and 4 <= n <= 10**6 for _, n in seen)
    state = out["state"]
    for r in out["seeds"]:
        ev = state.evals[r["seed"]]
        if r["status"] == "resolved":  # the documented bracket: a first crossing found
            assert ev[r["lo"]] > 0.05 >= ev[r["hi"]]
            assert min(n for n, e in ev.items() if e <= 0.05) == r["hi"]
            assert not [n for n in ev if r["lo"] < n < r["hi"]]
    s, n = seen[0]
    with pytest.raises(UsageError, match="already evaluated"):
        search.update(state, {(s, n): 0.5})


@pytest.mark.parametrize("on_grid", [True, False])
def test_far_fewer_evaluations_than_a_fixed_grid_of_equal_resolution(on_grid):
    n0 = {s: v for s, v in enumerate(np.geomspace(2, 5000, 40))}
    out = search.run_search(_power(n0, 1.0), list(n0), 0.1, 8, 65_536, on_grid=on_grid)
    grid = search.geometric_grid(8, 65_536, 1.25)
    # the grid has the same resolution: consecutive ratios <= 1.25
    assert all(b / a <= 1.25 for a, b in zip(grid, grid[1:]))
    assert grid[0] == 8 and grid[-1] == 65_536
    per_seed = out["evaluations"] / len(n0)
    assert len(grid) / per_seed >= 3


def test_resumes_from_json_state_exactly():
    n0 = {s: 40.0 * (s + 1) ** 2 for s in range(5)}
    full = search.run_search(_power(n0, 1.5), list(n0), 0.1, 8, 10**5)
    state = search.new_search(list(n0), 0.1, 8, 10**5)
    for _ in range(3):  # a few steps, then "crash": only the JSON survives
        batch = search.propose(state)
        state = search.update(state, dict(zip(batch, _power(n0, 1.5)(batch))))
    revived = search.SearchState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert revived == state
    rest = search.run_search(_power(n0, 1.5), None, None, None, None, state=revived)
    assert rest["seeds"] == full["seeds"]
    assert rest["evaluations"] == full["evaluations"]
    assert rest["steps"] == full["steps"] - 3


def test_bracketing_steps_share_one_n_across_seeds():
    n0 = {s: 100.0 * (s + 1) for s in range(6)}
    state = search.new_search(list(n0), 0.1, 8, 10**5)
    for _ in range(3):  # all seeds still bracketing up from n_min = 8: 8, 32, 128
        batch = search.propose(state)
        assert len(search.group_by_n(batch)) == 1 and len(batch) == 6
        state = search.update(state, dict(zip(batch, _power(n0, 1.0)(batch))))
    assert search.finished(state) is False


@pytest.mark.parametrize("on_grid", [True, False])
def test_starts_from_a_guess_and_brackets_down(on_grid):
    n0 = {0: 30.0}  # n* = 300
    out = search.run_search(_power(n0, 1.0), [0], 0.1, 8, 10**5, n_start=20_000, on_grid=on_grid)
    _check_bracket(out["seeds"][0], out["state"], 300.0)
    assert min(out["state"].evals[0]) < 300


@pytest.mark.parametrize("on_grid", [True, False])
def test_wider_steps_take_fewer_steps_with_the_same_guarantee(on_grid):
    n0 = {s: v for s, v in enumerate(np.geomspace(2, 5000, 12))}
    one = search.run_search(_power(n0, 1.0), list(n0), 0.1, 8, 10**5, on_grid=on_grid)
    three = search.run_search(_power(n0, 1.0), list(n0), 0.1, 8, 10**5, width=3, on_grid=on_grid)
    assert three["steps"] < one["steps"]
    for r in three["seeds"]:
        _check_bracket(r, three["state"], n0[r["seed"]] * 10)


@pytest.mark.parametrize(
    "kw,field",
    [
        ({"eps": 0.0}, "eps"),
        ({"n_min": 0}, "n_min"),
        ({"n_max": 8}, "n_max"),
        ({"factor": 1.0}, "factor"),
        ({"growth": 0.5}, "growth"),
        ({"n_start": 10**7}, "n_start"),
        ({"width": 0}, "width"),
        ({"seeds": [1, 1]}, "seeds"),
    ],
)
def test_bad_settings_are_one_line_usage_errors(kw, field):
    args = {"seeds": [0], "eps": 0.1, "n_min": 8, "n_max": 1000} | kw
    with pytest.raises(UsageError, match=field):
        search.new_search(**args)


def test_on_grid_search_returns_the_fixed_grids_bracket():
    # on a monotone curve the grid search evaluates only grid points and ends
    # on the same bracket as evaluating the whole grid: equal resolution
    grid = search.geometric_grid(8, 65_536, 1.25)
    n0 = {s: v for s, v in enumerate(np.geomspace(1, 6000, 25))}
    out = search.run_search(_power(n0, 0.7), list(n0), 0.1, 8, 65_536)
    for r in out["seeds"]:
        assert set(out["state"].evals[r["seed"]]) <= set(grid)
        errs = [(n0[r["seed"]] / n) ** 0.7 for n in grid]
        first = next((i for i, e in enumerate(errs) if e <= 0.1), None)
        if first is None:
            assert r["status"] == "right"
        elif first == 0:
            assert r["status"] == "left"
        else:
            assert (r["lo"], r["hi"]) == (grid[first - 1], grid[first])
