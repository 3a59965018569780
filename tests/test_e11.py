"""E11: the after_kernel_search on planted error curves, its evaluation
cells against the net_search's, and the mechanism statistics on planted shares."""

import math

import numpy as np
import pytest

from ntkgap.runs import after_kernel_search, registry, sample_complexity
from ntkgap.verdicts import mechanism

SEARCH = dict(method="after_kernel_search", arch="tree:arity=2,L=3",
              target="tree:d=40,L=3,arity=2,node=tanh", eps=0.1, seeds=list(range(8)),
              n_min=4, n_max=192, width=32, lr=0.01, steps=100, n_test=64)  # fmt: skip

# planted n* per predictor: error(n) = (n0 / n) * eps, crossing eps at n0
PLANTED = {"after_kernel_test_mse": 40.0, "init_kernel_test_mse": 150.0, "test_mse": 25.0}


def _drive(cell):
    calls = []

    def run_cells(cells):
        calls.extend(cells)
        return [{k: 0.1 * n0 / c["n"] for k, n0 in PLANTED.items()} for c in cells]

    stored = {}
    gen = after_kernel_search.steps(cell, lambda c: stored.get(repr(sorted(c.items()))))
    res = sample_complexity.drive(
        gen, lambda c, r: stored.__setitem__(repr(sorted(c.items())), r), run_cells
    )
    return res, calls, stored


@pytest.mark.parametrize("kernel, key", list(after_kernel_search.ERROR_KEY.items()))
def test_search_finds_planted_nstar(kernel, key):
    res, calls, _ = _drive(dict(SEARCH, kernel=kernel))
    n0 = PLANTED[key]
    assert res["kernel"] == kernel
    for r in res["per_seed"]:
        assert r["status"] == "resolved" and r["lo"] < n0 <= r["hi"]
    assert all(c["method"] == "after_kernel" and len(c["seeds"]) == 1 for c in calls)


def test_evaluation_cell_is_the_net_searchs_but_for_method_and_ridge():
    cell = registry.fill(dict(SEARCH, kernel="init"))
    net = registry.fill({k: v for k, v in SEARCH.items() if k != "method"} | {
        "method": "net_search"})  # fmt: skip
    got = after_kernel_search.evaluation_cell(cell, 50, 3)
    want = sample_complexity.evaluation_cell(net, 50, 3)
    assert got.pop("method") == "after_kernel" and want.pop("method") == "net"
    assert got.pop("ridge") == 0.0
    assert got == want


def test_searches_share_evaluations():
    """A second kernel's search reuses the first's stored evaluation cells."""
    _, calls_a, stored = _drive(dict(SEARCH, kernel="after"))
    calls = []
    gen = after_kernel_search.steps(dict(SEARCH, kernel="net"),
                                    lambda c: stored.get(repr(sorted(c.items()))))  # fmt: skip

    def run_cells(cells):
        calls.extend(cells)
        return [{k: 0.1 * n0 / c["n"] for k, n0 in PLANTED.items()} for c in cells]

    sample_complexity.drive(gen, lambda c, r: None, run_cells)
    ns_a = {(c["seeds"][0], c["n"]) for c in calls_a}
    assert not ns_a & {(c["seeds"][0], c["n"]) for c in calls}


def test_rate_sweep_is_the_net_searchs_on_net_cells():
    """With a list of rates, the search's sweep is the net_search's (grown at
    the edge) on the net_search's own ``net`` cells: same rate, same sweep."""
    rates = [0.01, 0.03, 0.1]

    def run_cells(cells):  # validation best at lr = 1/3: the grid grows upward
        out = [{k: 0.1 * n0 / c["n"] for k, n0 in PLANTED.items()} for c in cells]
        for o, c in zip(out, cells):
            o.update(best_val_mse=[abs(math.log(3 * c["lr"])) + 0.1], diverged=False)
        return out

    def drive(cell):
        stored, calls = {}, []
        gen = sample_complexity.steps if cell["method"] == "net_search" else (
            after_kernel_search.steps)  # fmt: skip
        res = sample_complexity.drive(
            gen(cell, lambda c: stored.get(repr(sorted(c.items())))),
            lambda c, r: stored.__setitem__(repr(sorted(c.items())), r),
            lambda cells: calls.extend(cells) or run_cells(cells),
        )  # fmt: skip
        return res, calls

    got, calls = drive(dict(SEARCH, kernel="after", lr=rates))
    net = {k: v for k, v in SEARCH.items() if k != "method"} | {"method": "net_search"}
    want, net_calls = drive(dict(net, lr=rates))
    assert got["lr_chosen"] == want["lr_chosen"] == pytest.approx(1 / 3)
    assert got["lr_sweep"] == want["lr_sweep"] and got["lr_sweep"]["extended"]
    sweep = [c for c in calls if c["method"] == "net"]
    assert sweep == [c for c in net_calls if c["n"] == sweep[0]["n"]][: len(sweep)]
    assert {c["lr"] for c in sweep} == set(rates) | set(got["lr_sweep"]["extended"])
    assert all(c["lr"] == got["lr_chosen"] for c in calls if c["method"] == "after_kernel")


# (n*_NTK, n*_after, n*_net) per seed, and the planted share (log-linear)
SHARES = [
    (1000.0, 100.0, 10.0, 0.5),
    (1000.0, 10.0, 10.0, 1.0),
    (1000.0, 1000.0, 10.0, 0.0),
    (math.e**6, math.e**5, math.e**2, 0.25),
]


@pytest.mark.parametrize("ntk, after, net, share", SHARES)
def test_share_of_planted_values(ntk, after, net, share):
    lo, hi = mechanism.share_interval(ntk, after, net)
    assert lo == pytest.approx(share) and hi == pytest.approx(share)


def test_censored_sides_bound_the_share():
    # NTK right-censored above 1000: the share is at least the share at 1000, up to ~1
    lo, hi = mechanism.share_interval(
        {"status": "right", "bound": 1000}, 100.0, 10.0)  # fmt: skip
    assert lo == pytest.approx(0.5) and 0.999 < hi <= 1.0
    # the gap can vanish: the share is undefined
    assert mechanism.share_interval(50.0, 40.0, (10.0, 60.0)) == (-math.inf, math.inf)


@pytest.mark.parametrize("planted, threshold, verdict", [
    (0.8, 0.5, "supported"), (0.2, 0.5, "refuted"), (0.5, 0.5, "inconclusive")])  # fmt: skip
def test_after_kernel_share_at_deepest_gap(planted, threshold, verdict):
    seeds = 12
    net = [10.0 * (1 + 0.01 * s) for s in range(seeds)]
    ntk = [1000.0 * (1 + 0.02 * s) for s in range(seeds)]
    jitter = [0.1 * (s - 5.5) / 5.5 for s in range(seeds)]
    after = [math.exp(math.log(a) - (planted + j) * (math.log(a) - math.log(c)))
             for a, c, j in zip(ntk, net, jitter)]  # fmt: skip
    no_gap = (net, net, net)  # L = 3: gap 0 (its CI cannot exclude zero)
    deeper = (ntk, after, net)
    res = mechanism.after_kernel_share({3: no_gap, 4: deeper, 5: no_gap}, threshold=threshold)
    assert res["depth"] == 4
    assert res["share"]["median_lo"] == pytest.approx(planted, abs=0.01)
    assert res["verdict"] == verdict


def test_no_gap_no_share():
    xs = [10.0] * 12
    res = mechanism.after_kernel_share({3: (xs, xs, xs)}, threshold=0.5)
    assert res["depth"] is None and res["verdict"] == "inconclusive"


@pytest.mark.parametrize("change, ratio, verdict", [
    (0.01, 1.01, "supported"), (0.5, 1.01, "refuted"), (0.01, 1.5, "refuted")])  # fmt: skip
def test_lazy_control(change, ratio, verdict):
    runs = [{"kernel_change": change * (1 + 0.01 * s), "init_kernel_test_mse": 0.1,
             "after_kernel_test_mse": 0.1 * ratio} for s in range(12)]  # fmt: skip
    res = mechanism.lazy_control(runs, kernel_tol=0.05, mse_tol=0.05)
    assert res["verdict"] == verdict


def test_claim_statistics_read_stored_searches(monkeypatch):
    """The claim wrappers pair searches by target and seed, and pick L = 4 (gap)."""

    def per_seed(n):
        return {"per_seed": [{"seed": s, "status": "resolved", "n_star": n * (1 + 0.01 * s)}
                             for s in range(12)]}  # fmt: skip

    rows = {"ntk_search": [], "after_kernel_search": [], "after_kernel": []}
    for L, (ntk, after, net) in {3: (20.0, 20.0, 20.0), 4: (1000.0, 100.0, 10.0)}.items():
        base = {"target": f"tree:d=40,L={L},arity=2,node=tanh", "arch": "a", "eps": 0.1}
        rows["ntk_search"].append((dict(base, ridge=0.0), per_seed(ntk)))
        rows["ntk_search"].append((dict(base, ridge="tuned"), per_seed(1.0)))
        for kernel, n in (("after", after), ("net", net), ("init", ntk)):
            rows["after_kernel_search"].append((dict(base, kernel=kernel), per_seed(n)))
    lazy = [{"kernel_change": 0.01, "after_kernel_test_mse": 0.1, "init_kernel_test_mse": 0.1}]
    rich = {"kernels_per_seed": [dict(lazy[0], kernel_change=1.0)] * 12}
    # alpha None is how a rich net's cell is stored (the registry's default): not lazy
    rows["after_kernel"] = [({"alpha": 100.0}, {"kernels_per_seed": lazy * 12}),
                            ({"alpha": 1.0}, rich), ({"alpha": None}, rich)]  # fmt: skip
    monkeypatch.setattr(mechanism.store, "results", lambda exp, m: rows[m])
    m = mechanism.after_kernel_claim({"eps": 0.1, "rule": {"threshold": 0.5}}, "e11")
    assert m.data["depth"] == 4 and m.value == pytest.approx(0.5, abs=0.01)
    lazy_m = mechanism.lazy_control_claim(
        {"alpha_min": 10.0, "mse_tol": 0.05, "rule": {"threshold": 0.05}}, "e11")  # fmt: skip
    assert lazy_m.value == pytest.approx(0.01) and lazy_m.verdict == "supported"


# (24, 30): full-batch runs sharing a padded shape; (24, 60): full-batch in two shapes;
# (200, 400): minibatch in two shapes; (24, 200): one of each; five runs: two groups of 4
@pytest.mark.parametrize("ns", [(24, 24), (24, 30), (24, 60), (200, 400), (24, 200),
                                (24, 26, 28, 30, 24)])  # fmt: skip
def test_batched_after_kernel_cells_equal_each_cell_alone(ns):
    """One-seed after_kernel cells train together in run_cells (no per-n
    compile) with shapes of their own: each cell's result, kernels included,
    is the same bit for bit whatever cells share its batch (three searches
    share evaluations and batch them as timing allows), and run_cell gives
    it too. Its net is the ``net`` cell's of the same keys up to the order
    of sums over padded rows. n = 200, 400 train on minibatches of 64."""
    from ntkgap.runs import methods

    base = dict(method="after_kernel", arch="fc:depth=1,act=tanh",
                target="tree:d=6,L=2,arity=2,node=tanh", width=16, lr=0.05,
                steps=60, eval_every=20, n_test=20, batch=64)  # fmt: skip
    cells = [dict(base, seeds=[s], n=n) for s, n in enumerate(ns)]
    together = methods.run_cells(cells)
    keys = ("test_mse", "after_kernel_test_mse", "init_kernel_test_mse", "alignment_final",
            "weight_movement", "steps")  # fmt: skip
    for cell, got in zip(cells, together):
        (alone,) = methods.run_cells([cell])
        assert got["batched_runs"] == len(ns) and alone["batched_runs"] == 1
        assert [got[k] for k in keys] == [alone[k] for k in keys]
        assert [methods.run_cell(cell)[k] for k in keys] == [alone[k] for k in keys]
    net = methods.run_cell(dict(cells[0], method="net"))
    assert net["steps"] == together[0]["steps"]
    np.testing.assert_allclose(net["test_mse"], together[0]["test_mse"], rtol=1e-6)


def test_searches_with_a_rate_grid_share_the_sweep_and_evaluations():
    """With a list of rates, the later kernels' searches reuse the sweep (no
    net cell trains again) and every after_kernel cell the first one stored."""
    rates = [0.01, 0.03, 0.1]

    def run_cells(cells):
        out = [{k: 0.1 * n0 / c["n"] for k, n0 in PLANTED.items()} for c in cells]
        for o, c in zip(out, cells):
            o.update(best_val_mse=[abs(math.log(30 * c["lr"])) + 0.1], diverged=False)
        return out

    stored, calls = {}, []
    for kernel in ("after", "init", "net"):
        gen = after_kernel_search.steps(dict(SEARCH, kernel=kernel, lr=rates),
                                        lambda c: stored.get(repr(sorted(c.items()))))  # fmt: skip
        sample_complexity.drive(
            gen, lambda c, r: stored.__setitem__(repr(sorted(c.items())), r),
            lambda cells, k=kernel: calls.append((k, cells)) or run_cells(cells),
        )  # fmt: skip
    first = [c for k, cs in calls if k == "after" for c in cs]
    assert {c["method"] for c in first} == {"net", "after_kernel"}
    # the init and net searches ask for pools the first did not (other n*); none repeats
    again = [c for k, cs in calls if k != "after" for c in cs]
    assert all(c["method"] == "after_kernel" for c in again)
    assert not {repr(sorted(c.items())) for c in again} & {repr(sorted(c.items())) for c in first}


def test_a_string_ridge_is_refused_before_training(monkeypatch):
    """Both paths (one cell, a batch of one-seed cells) refuse ridge = "tuned"
    for empirical kernels before any network trains."""
    from ntkgap.errors import UsageError
    from ntkgap.nets import training
    from ntkgap.runs import methods

    def no_training(*args, **kwargs):
        raise AssertionError("trained before refusing the ridge")

    monkeypatch.setattr(training, "train", no_training)
    monkeypatch.setattr(training, "train_runs", no_training)
    base = dict(method="after_kernel", arch="fc:depth=1,act=tanh", ridge="tuned",
                target="tree:d=6,L=2,arity=2,node=tanh", width=16, n=24, n_test=20)  # fmt: skip
    with pytest.raises(UsageError, match="ridge='tuned'"):
        methods.run_cell(dict(base, seeds=[0, 1]))
    with pytest.raises(UsageError, match="ridge='tuned'"):
        methods.run_cells([dict(base, seeds=[0]), dict(base, seeds=[1])])
