"""Claims statistics on planted stored results: the n*-ratio statistic
(median over paired seeds, order-statistic CI, censoring as bounds, the
envelope over rows), the rule's handling of an open CI end, and the
learning rate of fixed-n network curves chosen on validation, not on test.
References are brute force (sorting, enumerating sign patterns) or the
planted answer."""

import itertools
import json
import math
import os

import numpy as np
import pytest

from ntkgap.runs import store as runs_store
from ntkgap.verdicts import claims, nstar_statistics, rules, selection

EXP = "planted"
T = "parity:d=20,k=2"
ARCH = "fc:depth=1"
SEEDS = list(range(8))


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path))
    monkeypatch.delenv("NTKGAP_PROFILE", raising=False)
    os.makedirs(tmp_path / EXP)

    def put(cell, result):
        with open(tmp_path / EXP / f"{runs_store.cell_key(cell)}.json", "w") as fh:
            json.dump({"cell": cell, "result": result}, fh)

    return put


def _seed(s, n_star=None, right=None, left=None):
    if right is not None:
        return {"seed": s, "status": "right", "n_star": None, "bound": right}
    if left is not None:
        return {"seed": s, "status": "left", "n_star": None, "bound": left}
    return {"seed": s, "status": "resolved", "n_star": float(n_star), "bound": None}


def _search(put, method, per_seed, *, ridge=None, evaluations=(), arch=ARCH, target=T):
    cell = {"method": method, "target": target, "arch": arch, "eps": 0.1, "seeds": SEEDS}
    if ridge is not None:
        cell["ridge"] = ridge
    put(cell, {"per_seed": per_seed, "median": {}, "evaluations": list(evaluations)})


def _claim(rule, a=None, **params):
    a = a or {"method": "ntk_search", "arch": ARCH}
    p = dict(a=a, b={"method": "net_search", "arch": ARCH}, eps=0.1, target=T, **params)
    c = rules.Claim("x", "planted", "", "nstar_ratio", (), p, rule)
    return claims.evaluate(c, EXP)


def _brute_median_ci(vals):
    """Median (geometric mean of the middle pair) and the widest symmetric
    order-statistic interval whose coverage, by enumerating every sign
    pattern of 8 draws around the median, is >= 95%."""
    v = np.sort(vals)
    m = len(v)
    med = math.sqrt(v[m // 2 - 1] * v[m // 2])
    best = None
    for j in range(1, m // 2 + 1):
        below = [sum(p) for p in itertools.product([0, 1], repeat=m)]
        cov = np.mean([j <= b <= m - j for b in below])
        if cov >= 0.95:
            best = j
    return med, v[best - 1], v[m - best]


def test_nstar_ratio_median_and_ci_match_brute_force(store):
    rng = np.random.default_rng(3)
    a = rng.uniform(2000, 9000, 8)
    b = rng.uniform(50, 300, 8)
    _search(store, "ntk_search", [_seed(s, x) for s, x in zip(SEEDS, a)])
    _search(store, "net_search", [_seed(s, x) for s, x in zip(SEEDS, b)])
    med, lo, hi = _brute_median_ci(a / b)
    out = _claim({"kind": "above", "threshold": 0.5})
    assert out["value"] == pytest.approx(math.log10(med), rel=1e-12)
    assert (out["lo"], out["hi"]) == pytest.approx((math.log10(lo), math.log10(hi)), rel=1e-12)
    assert out["seeds"] == 8
    assert out["verdict"] == (rules.SUPPORTED if lo > 10**0.5 else rules.INCONCLUSIVE)
    # a threshold above the whole CI: not supported
    assert _claim({"kind": "above", "threshold": math.log10(hi) + 0.01})["verdict"] == (
        rules.NOT_SUPPORTED
    )


def test_right_censored_kernel_gives_a_lower_bound_that_still_decides(store):
    b = np.array([100, 120, 90, 150, 110, 95, 130, 105], float)
    _search(store, "ntk_search", [_seed(s, right=4096) for s in SEEDS])
    _search(store, "net_search", [_seed(s, x) for s, x in zip(SEEDS, b)])
    bounds = 4096 / b
    med, lo, _ = _brute_median_ci(bounds)
    out = _claim({"kind": "above", "threshold": 1.0})
    assert out["value"] == pytest.approx(math.log10(med), rel=1e-12)  # a bound: ratio > it
    assert out["lo"] == pytest.approx(math.log10(lo), rel=1e-12)
    assert out["hi"] is None and out["hi_censored"]
    assert "bound" in out["detail"] and "open" in out["detail"]
    assert out["verdict"] == rules.SUPPORTED  # 4096 / 150 = 27 > 10 on every seed
    # the open upper end cannot make it "not supported", only inconclusive
    assert _claim({"kind": "above", "threshold": 3.0})["verdict"] == rules.INCONCLUSIVE


def test_both_sides_censored_is_inconclusive(store):
    _search(store, "ntk_search", [_seed(s, right=4096) for s in SEEDS])
    _search(store, "net_search", [_seed(s, right=4096) for s in SEEDS])
    out = _claim({"kind": "above", "threshold": 1.0})
    assert out["value"] is None and out["verdict"] == rules.INCONCLUSIVE


def test_no_ci_below_eight_seeds(store):
    cell = {"method": "ntk_search", "target": T, "arch": ARCH, "eps": 0.1, "seeds": SEEDS[:5]}
    store(cell, {"per_seed": [_seed(s, 1000) for s in SEEDS[:5]], "median": {}})
    cell = dict(cell, method="net_search")
    store(cell, {"per_seed": [_seed(s, 10) for s in SEEDS[:5]], "median": {}})
    out = _claim({"kind": "above", "threshold": 1.0})
    assert out["value"] == pytest.approx(2.0)
    assert out["lo"] is None and out["hi"] is None and out["seeds"] == 5
    assert "5 seeds, no CI" in out["detail"]
    assert out["verdict"] == rules.INCONCLUSIVE


def test_every_kernel_must_pass_and_the_gap_is_read_where_both_were_measured(store):
    ev_net = [
        {"seed": s, "n": n, "test_mse": e} for s in SEEDS for n, e in ((64, 0.9), (256, 1e-4))
    ]
    ev_ntk = [
        {"seed": s, "n": n, "test_mse": e} for s in SEEDS for n, e in ((64, 0.95), (256, 0.5))
    ]
    _search(store, "ntk_search", [_seed(s, 5000) for s in SEEDS], evaluations=ev_ntk)
    _search(store, "ntk_search", [_seed(s, 300) for s in SEEDS], ridge="tuned")
    _search(store, "net_search", [_seed(s, 200) for s in SEEDS], evaluations=ev_net)
    ridgeless = {"method": "ntk_search", "arch": ARCH}
    tuned = {"method": "ntk_search", "arch": ARCH, "ridge": "tuned"}
    one = _claim({"kind": "above", "threshold": 1.0}, a=[ridgeless])
    assert one["verdict"] == rules.SUPPORTED  # 5000 / 200 = 25
    # error gap at n = 256 (the largest n both evaluated): log10(0.5 / 1e-4)
    assert f"= {math.log10(0.5 / 1e-4):.2f} at n = 256..256" in one["detail"]
    both = _claim({"kind": "above", "threshold": 1.0}, a=[ridgeless, tuned])
    assert both["value"] == pytest.approx(math.log10(1.5))  # the tuned kernel: 300 / 200
    assert both["verdict"] == rules.NOT_SUPPORTED


def _net_cell(put, lr, n, val_by_seed, test_by_seed):
    cell = {"method": "net", "target": T, "arch": ARCH, "width": 8, "n": n, "lr": lr}
    cell["seeds"] = SEEDS
    curve = [
        {"step": 0, "val_mse": [1.0] * 8},
        {"step": 100, "val_mse": list(val_by_seed)},
        {"step": 200, "val_mse": [v * 2 for v in val_by_seed]},
    ]
    put(
        cell,
        {"seeds": SEEDS, "test_mse_per_seed": list(test_by_seed), "loss_curve": curve},
    )


def test_fixed_n_curves_use_the_lr_chosen_on_validation_not_on_test(store):
    # lr 0.01: better validation (median 0.1 vs 0.2), worse test (0.5 vs 0.05)
    _net_cell(store, 0.01, 64, [0.1] * 8, [0.5] * 8)
    _net_cell(store, 0.001, 64, [0.2] * 8, [0.05] * 8)
    # at n = 128 the other rate wins on validation
    _net_cell(store, 0.01, 128, [0.3] * 8, [0.4] * 8)
    _net_cell(store, 0.001, 128, [0.2] * 8, [0.3] * 8)
    ch = selection.lr_choices(EXP)
    assert ch[(T, ARCH, 64)]["lr"] == 0.01 and ch[(T, ARCH, 128)]["lr"] == 0.001
    c = selection.curves(EXP, "net")[(T, ARCH)]
    assert c[64] == dict.fromkeys(SEEDS, 0.5) and c[128] == dict.fromkeys(SEEDS, 0.3)


def test_lr_edges_counts_choices_at_each_end_of_the_grid(store):
    grid = [0.01, 0.001, 0.003]  # unsorted on purpose
    for i, chosen in enumerate([0.01, 0.01, 0.003, 0.001]):
        cell = {"method": "net_search", "target": f"parity:d=20,k={i + 1}", "arch": ARCH}
        store(dict(cell, eps=0.1, seeds=SEEDS, lr=grid), {"per_seed": [], "lr_chosen": chosen})
    # fixed-n curve: 0.01 wins on validation at n = 64, 0.001 at n = 128 (of two rates)
    _net_cell(store, 0.01, 64, [0.1] * 8, [0.5] * 8)
    _net_cell(store, 0.001, 64, [0.2] * 8, [0.05] * 8)
    _net_cell(store, 0.01, 128, [0.3] * 8, [0.4] * 8)
    _net_cell(store, 0.001, 128, [0.2] * 8, [0.3] * 8)
    rows = {r["method"]: r for r in selection.lr_edges(EXP)}
    assert rows["net_search"] == dict(
        method="net_search", arch=ARCH, grid=[0.001, 0.003, 0.01], choices=4, at_low=1, at_high=2
    )
    assert rows["net"] == dict(
        method="net", arch=ARCH, grid=[0.001, 0.01], choices=2, at_low=1, at_high=1
    )


def _side(n=None, censored=None):
    return {"n_star": n, "bound": n, "censored": censored} if censored else {"n_star": n}


GROWTH_CASES = [  # rows (L, A, B) -> the seed's factor (a number) or its bounds
    ([(3, _side(100), _side(50)), (4, _side(800), _side(100))], 4.0),
    ([(3, _side(100), _side(50)), (4, _side(1024, "right"), _side(100))], (5.12, math.inf)),
    ([(3, _side(200, "right"), _side(50)), (4, _side(800), _side(100))], (0.0, 2.0)),
    ([(3, _side(100), _side(50)), (4, _side(800), _side(400, "right"))], (0.0, 1.0)),
    ([(3, _side(100), _side(50)), (4, _side(1024, "right"), _side(256, "right"))],
     (0.0, math.inf)),
]  # fmt: skip


@pytest.mark.parametrize("rows, expected", GROWTH_CASES)
def test_seed_growth_turns_censoring_into_bounds(rows, expected):
    got = nstar_statistics._seed_growth(rows)
    if isinstance(expected, tuple):
        assert got[0] == pytest.approx(expected[0]) and got[1] == pytest.approx(expected[1])
    else:
        assert got == pytest.approx(expected)


DECIDE_CASES = [  # (rule, Measured kwargs) -> verdict
    ({"kind": "above", "threshold": 1.5, "min_depths": 3},
     dict(value=None, depths=2), rules.TOO_FEW_DEPTHS),
    ({"kind": "above", "threshold": 1.5, "min_depths": 3},
     dict(value=None, depths=0), rules.INCONCLUSIVE),
    ({"kind": "above", "threshold": 1.5},
     dict(value=None, lo=2.0, hi=None, hi_censored=True), rules.SUPPORTED),
    ({"kind": "equivalence", "margin": 0.5},
     dict(value=None, lo=0.8, hi=None, hi_censored=True), rules.NOT_SUPPORTED),
    ({"kind": "above", "threshold": 1.5},
     dict(value=None, lo=1.0, hi=None, hi_censored=True), rules.INCONCLUSIVE),
    ({"kind": "above", "threshold": 1.5, "deterministic": True},
     dict(value=None), rules.INCONCLUSIVE),
]  # fmt: skip


@pytest.mark.parametrize("rule, kw, verdict", DECIDE_CASES)
def test_decide_checks_depths_first_and_decides_censored_medians_by_the_ci(rule, kw, verdict):
    assert rules.decide(rule, rules.Measured(**kw)) == verdict
