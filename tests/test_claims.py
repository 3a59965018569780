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

from ntkgap.runs import lr_choice
from ntkgap.runs import store as runs_store
from ntkgap.verdicts import claims, rules, selection

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
    c = rules.Claim("x", "planted", "", "nstar_ratio", (), p, rule, "quick")
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
    assert out["value"] is None  # the median is a bound, not a point: ratio > it
    row = out["data"]["sides"][0]["rows"][0]
    assert row["bound_lo"] == pytest.approx(math.log10(med), rel=1e-12)
    assert row["kind"] == "bounded" and row["bound_hi"] is None
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


def _runner_chooses():
    """What the runner does after a fixed-n grid: choose each group's rate on
    validation and store it beside the cells (verdicts only read it)."""
    lr_choice.decide(EXP, [cell for cell, _ in runs_store.results(EXP, "net")])


def test_fixed_n_curves_use_the_lr_chosen_on_validation_not_on_test(store):
    # lr 0.01: better validation (median 0.1 vs 0.2), worse test (0.5 vs 0.05)
    _net_cell(store, 0.01, 64, [0.1] * 8, [0.5] * 8)
    _net_cell(store, 0.001, 64, [0.2] * 8, [0.05] * 8)
    # at n = 128 the other rate wins on validation
    _net_cell(store, 0.01, 128, [0.3] * 8, [0.4] * 8)
    _net_cell(store, 0.001, 128, [0.2] * 8, [0.3] * 8)
    _runner_chooses()
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
    _runner_chooses()
    rows = {r["method"]: r for r in selection.lr_edges(EXP)}
    assert rows["net_search"] == dict(
        method="net_search", arch=ARCH, grid=[0.001, 0.003, 0.01], choices=4, at_low=1, at_high=2
    )
    assert rows["net"] == dict(
        method="net", arch=ARCH, grid=[0.001, 0.01], choices=2, at_low=1, at_high=1
    )


DECIDE_CASES = [  # (rule, Measured kwargs) -> verdict
    ({"kind": "above", "threshold": 1.5, "min_depths": 3},
     dict(value=None, depths=2), rules.TOO_FEW_DEPTHS),
    ({"kind": "above", "threshold": 1.5, "min_depths": 3},
     dict(value=None, depths=0), rules.TOO_FEW_DEPTHS),  # 0 depths never pass
    ({"kind": "above", "threshold": 1.5, "min_depths": 3},
     dict(value=None, depths=None), rules.TOO_FEW_DEPTHS),
    ({"kind": "above", "threshold": 1.5, "min_depths": 3},
     dict(value=2.0, lo=1.9, hi=2.1, depths=0, verdict=rules.NOT_SUPPORTED),
     rules.NOT_SUPPORTED),  # a statistic's own verdict (per depth / per n) is the verdict
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


# ------------------------------------------------------------------------------
# Planted claim-level tables: stored search records of depth-indexed
# tree families, per-seed log n* = a planted law + small noise, censored by
# bounds the planted truth respects; each row's verdict follows from the law and
# the bound by the hand arithmetic in its comment (log n*, natural logs; the
# weights of a 3-depth slope are (-1/2, 0, 1/2), of the second difference (1, -2, 1)).
TSEEDS = list(range(12))
LN15 = math.log(1.5)


def _tree(L, node="tanh"):
    return f"tree:d=40,L={L},arity=2,node={node}"


def _plant(put, method, law, *, node="tanh", cens=(), noise=0.01, seed=0, eps=0.1, **extra):
    """Stores one search record per depth of ``law`` ({L: log n*}); ``cens``:
    (L, "above" | "below", log bound) makes every seed at L censored."""
    rng = np.random.default_rng(seed)
    how = {L: (h, b) for L, h, b in cens}
    for L, y in law.items():
        per = []
        for s in TSEEDS:
            v = y + noise * rng.standard_normal()
            if L in how:
                h, b = how[L]
                assert (v > b) if h == "above" else (v <= b), "bound contradicts the truth"
                per.append(_seed(s, **{"right" if h == "above" else "left": math.exp(b)}))
            else:
                per.append(_seed(s, math.exp(v)))
        cell = {"method": method, "target": _tree(L, node), "arch": f"tree:arity=2,L={L}"}
        put(dict(cell, eps=eps, seeds=TSEEDS, **extra), {"per_seed": per, "median": {}})


def _eval(statistic, rule, node="tanh", **params):
    p = dict(eps=0.1, family={"name": "tree", "arity": 2, "node": node}, **params)
    rule = dict(rule, min_depths=claims.MIN_DEPTHS[statistic])
    return claims.evaluate(rules.Claim("x", "planted", "", statistic, (), p, rule, "quick"), EXP)


def _law(f, depths=(2, 3, 4)):
    return {L: float(f(L)) for L in depths}


S_, N_, U_, T_ = rules.SUPPORTED, rules.NOT_SUPPORTED, rules.INCONCLUSIVE, rules.TOO_FEW_DEPTHS
KER, NET = ["ntk_search", "tree"], ["net_search", "tree"]
GAP_K, GAP_N = _law(lambda L: 2 * L + 2), _law(lambda L: L + 1)  # ratio slope 1: e per level
ALIKE = _law(lambda L: L * math.log(2) + 2)  # both n* ~ 2^L: ratio flat

RATIO_GROWTH = [  # (kernel law, kernel censoring, net law, net censoring) -> verdict
    (GAP_K, (), GAP_N, (), S_),  # factor e = 2.72 > 1.5
    (ALIKE, (), ALIKE, (), N_),  # factor 1 <= 1.5 (the negative control's shape)
    # kernel above its n_max at L = 4: ratio >= 9.5 - 5 = 4.5 -> slope >= 0.75 -> >= 2.1
    (GAP_K, [(4, "above", 9.5)], GAP_N, (), S_),
    # kernel above n_max at L = 4, bound too low: ratio >= 8.2 - 5 -> slope >= 0.1: open
    (GAP_K, [(4, "above", 8.2)], GAP_N, (), U_),
    # kernel reached already at n_min at L = 2: ratio <= 6.5 - 3 at the shallow end ->
    # slope >= (5 - 3.5) / 2 = 0.75 -> factor >= 2.1
    (GAP_K, [(2, "below", 6.5)], GAP_N, (), S_),
    # net above its n_max at L = 4 (truth 4.77): ratio <= 4.77 - 4.6 -> slope <= 0.09
    # -> factor <= 1.09: the censored net refutes (E3a-net's case)
    (ALIKE, (), ALIKE, [(4, "above", 4.6)], N_),
    # net reached at n_min at L = 2 (truth 3.39): ratio >= 3.39 - 3.5 at the shallow end
    # -> slope <= 0.05 -> factor <= 1.06
    (ALIKE, (), ALIKE, [(2, "below", 3.5)], N_),
    # both above n_max at L = 4: that depth says nothing, 2 usable < 3
    (GAP_K, [(4, "above", 9.5)], GAP_N, [(4, "above", 4.9)], T_),
    (_law(lambda L: 2 * L, (3, 4)), (), _law(lambda L: L, (3, 4)), (), T_),  # 2 depths
]


@pytest.mark.parametrize("kl, kc, nl, nc, verdict", RATIO_GROWTH)
def test_ratio_growth_claim_censoring_table(store, kl, kc, nl, nc, verdict):
    _plant(store, "ntk_search", kl, cens=kc)
    _plant(store, "net_search", nl, cens=nc, seed=1)
    out = _eval("nstar_ratio_growth", {"kind": "above", "threshold": 1.5}, a=KER, b=NET)
    assert out["verdict"] == verdict
    assert out["depths_resolved"] + out["depths_bounded"] == (2 if verdict == T_ else 3)
    for key in ("id", "claim", "predictors", "statistic", "value", "lo", "hi", "seeds", "rule"):
        assert key in out
    assert out["profile"] == "quick"


ROBUSTNESS = [  # (eps 0.05 net law or None, 2x-budget net law at L = 4 or None) -> rechecks
    (None, None, ("not run", "not run", False)),
    (GAP_N, None, (S_, "not run", False)),  # the same gap at eps 0.05: no flip
    (_law(lambda L: 2 * L + 2), None, (N_, "not run", True)),  # no gap at eps 0.05: a flip
    (None, {4: 9.0}, ("not run", N_, True)),  # twice the budget closes the deepest gap
    (None, {4: 5.0}, ("not run", S_, False)),
]


@pytest.mark.parametrize("net_eps, net_budget, want", ROBUSTNESS)
def test_ratio_claims_carry_their_robustness_rechecks(store, net_eps, net_budget, want):
    _plant(store, "ntk_search", GAP_K)
    _plant(store, "net_search", GAP_N, seed=1, steps=1500)
    if net_eps is not None:
        _plant(store, "ntk_search", GAP_K, eps=0.05, seed=2)
        _plant(store, "net_search", net_eps, eps=0.05, seed=3, steps=1500)
    if net_budget is not None:
        _plant(store, "net_search", net_budget, seed=4, steps=3000)
    out = _eval("nstar_ratio_growth", {"kind": "above", "threshold": 1.5}, a=KER, b=NET)
    assert out["verdict"] == S_  # the base budget is read, whatever else is stored
    rob = out["robustness"]
    assert (rob["verdict_eps"], rob["verdict_budget"], rob["flips"]) == want
    assert rob["eps"] == 0.05


CONVEX = _law(lambda L: 2.0 ** (L - 1))  # 2, 4, 8: second difference 2 -> 7.4 per level
POLY = _law(lambda L: 2.0 * math.log(2**L - 1))  # n* = C^2: second difference -0.171

KERNEL_CONVEXITY = [  # (law, censoring) -> verdict, rule above 1.5
    (CONVEX, (), S_),
    (POLY, (), N_),  # exp(-0.171) = 0.84
    (ALIKE, (), N_),  # the control: log n* linear in L, factor of factors 1
    (CONVEX, [(4, "above", 7.5)], S_),  # >= 2 - 8 + 7.5 = 1.5 > log 1.5 = 0.41
    (POLY, [(4, "above", 5.3)], U_),  # >= -0.29, open above
    (POLY, [(3, "above", 3.8)], N_),  # middle weight -2: <= 2.197 - 7.6 + 5.416 = 0.013
    (POLY, [(4, "below", 5.5)], N_),  # <= 2.197 - 7.784 + 5.5 = -0.09
    (CONVEX, [(3, "below", 4.2)], S_),  # middle: >= 2 - 8.4 + 8 = 1.6
    (CONVEX, [(2, "below", 2.1)], U_),  # shallow weight +1: open below, <= 2.1
    (_law(lambda L: 2.0 ** (L - 1), (3, 4)), (), T_),  # 2 depths: no factor of factors
]


@pytest.mark.parametrize("law, cens, verdict", KERNEL_CONVEXITY)
def test_kernel_convexity_claim_censoring_table(store, law, cens, verdict):
    _plant(store, "ntk_search", law, cens=cens)
    out = _eval("nstar_kernel_convexity", {"kind": "above", "threshold": 1.5}, a=KER)
    assert out["verdict"] == verdict
    assert {"depths_resolved", "depths_bounded"} <= set(out)


NET_POWER = [  # (law in log C, C = 3, 7, 15, censoring) -> verdict, rule below 2
    (_law(lambda L: math.log(2**L - 1) + 1), (), S_),  # p = 1
    (_law(lambda L: 3 * math.log(2**L - 1)), (), N_),  # p = 3
    # p = 3 net above its n_max at L = 4 (truth 8.12): p >= (8.0 - 3.30) / 1.61 = 2.9
    (_law(lambda L: 3 * math.log(2**L - 1)), [(4, "above", 8.0)], N_),
    # p = 1 net above n_max at L = 4: open above, p >= ~0.9: undecided
    (_law(lambda L: math.log(2**L - 1) + 1), [(4, "above", 3.5)], U_),
    # p = 3 net reached at n_min at L = 2 (truth 3.30): shallow end <= 3.4 -> p >= 2.9
    (_law(lambda L: 3 * math.log(2**L - 1)), [(2, "below", 3.4)], N_),
    (_law(lambda L: math.log(2**L - 1), (4,)), (), T_),  # one depth
]


@pytest.mark.parametrize("law, cens, verdict", NET_POWER)
def test_net_power_claim_censoring_table(store, law, cens, verdict):
    _plant(store, "net_search", law, cens=cens)
    out = _eval("nstar_net_power", {"kind": "below", "threshold": 2.0}, a=NET)
    assert out["verdict"] == verdict
    assert out["data"]["constituents"] == {L: 2**L - 1 for L in law}  # (a^L - 1)/(a - 1)


def test_kernel_claim_reports_the_fourier_fit_beside(store):
    # planted: kernel n* = 5 F^3 with F the spectrum cells' average degree
    F = {2: 1.5, 3: 2.5, 4: 4.0}
    _plant(store, "ntk_search", {L: math.log(5) + 3 * math.log(f) for L, f in F.items()})
    for L, f in F.items():
        store({"method": "spectrum", "target": _tree(L)}, {"complexity": {"average_degree": f}})
    out = _eval("nstar_kernel_convexity", {"kind": "above", "threshold": 1.5}, a=KER)
    fit = out["data"]["fourier_fit"]
    assert fit["fit_of_medians"]["k"] == pytest.approx(3.0, abs=0.05)
    assert fit["fit_of_medians"]["c"] == pytest.approx(5.0, rel=0.1)
    assert "Fourier complexity" in out["detail"]


def test_e3a_net_case_reads_not_supported_at_the_claim_level(store):
    # a quick E3a-net reading: NTK / net log10 n* ratio -0.39 at L = 3 (both
    # resolved), net censored at 512 at L = 4 with the NTK at ~80: <= -0.8
    rng = np.random.default_rng(5)
    arch = "fc:depth=2,input=angle"
    for L, ntk, net in ((3, 40.0, 98.0), (4, 80.0, None)):
        per_a = [_seed(s, ntk * math.exp(0.05 * rng.standard_normal())) for s in SEEDS]
        per_b = [
            _seed(s, net * math.exp(0.05 * rng.standard_normal())) if net else _seed(s, right=512)
            for s in SEEDS
        ]
        for method, per in (("ntk_search", per_a), ("net_search", per_b)):
            cell = {"method": method, "target": f"sawtooth:L={L}", "arch": arch}
            store(dict(cell, eps=0.1, seeds=SEEDS), {"per_seed": per, "median": {}})
    side = {"method": "ntk_search", "arch": arch}
    p = dict(family={"name": "sawtooth"}, eps=0.1, a=[side], b=dict(side, method="net_search"))
    rule = {"kind": "above", "threshold": 0.0, "min_depths": claims.MIN_DEPTHS["nstar_ratio"]}
    out = claims.evaluate(rules.Claim("E3a-net", "", "", "nstar_ratio", (), p, rule, "quick"), EXP)
    assert out["verdict"] == rules.NOT_SUPPORTED  # 2 depths < 3, yet every depth says no
    assert out["depths_resolved"] == 1 and out["depths_bounded"] == 1
    # the envelope's upper end is the deepest depth's: the bound log10(80 / 512)
    assert out["hi"] == pytest.approx(math.log10(80 / 512), abs=0.1)


def test_the_configs_negative_control_reads_not_supported_on_planted_data(store):
    # the E4 control claims as configured, on linear trees whose kernel and net
    # n* both grow like 2^L (planted: the no-gap law the control expects)
    import tomllib

    from conftest import ROOT

    with open(os.path.join(ROOT, "experiments", "e4_trees.toml"), "rb") as fh:
        cfg = tomllib.load(fh)
    control = [c for c in claims.parse_claims(cfg, "e4") if c.id.startswith("E4-control")]
    assert {c.statistic for c in control} == {"nstar_ratio_growth", "nstar_kernel_convexity"}
    _plant(store, "ntk_search", _law(lambda L: L * math.log(2) + 3), node="linear")
    _plant(store, "net_search", _law(lambda L: L * math.log(2) + 2), node="linear", seed=1)
    for c in control:
        out = claims.evaluate(c, EXP)
        assert out["verdict"] == rules.NOT_SUPPORTED, (c.id, out["detail"])
        assert out["profile"] == c.profile and out["depths_resolved"] == 3
        assert c.expect == rules.NOT_SUPPORTED and out["control"]["held"] is True


ABOVE = {"kind": "above", "threshold": 1.5}
BELOW = {"kind": "below", "threshold": 2.0}
EQUIV = {"kind": "equivalence", "margin": 0.5}
CONTROL_CASES = [  # (rule, value, median interval, CI, verdict) -> held, words in the text
    (ABOVE, 1.0, (0.9, 1.1), (0.8, 1.3), N_, True, "as a control should"),
    # the quick run's kernel-half control: median [0.879, 1.13], CI [0.69, 1.51]
    (ABOVE, 1.0, (0.879, 1.13), (0.69, 1.51), U_, False, "underpowered, not failed"),
    (ABOVE, 1.8, (1.7, 1.9), (1.2, 2.4), U_, False, "leaning wrong"),
    (ABOVE, 2.0, (1.9, 2.1), (1.6, 2.4), S_, False, "FAILS its control"),
    (ABOVE, 1.5, (1.2, 1.8), (0.9, 2.4), U_, False, "undetermined"),  # the median straddles
    (ABOVE, None, (1.6, None), (1.1, None), U_, False, "leaning wrong"),  # an open median end
    (ABOVE, None, (None, 1.2), (None, 1.4), U_, False, "underpowered"),
    (ABOVE, None, (None, None), (None, None), T_, False, "nothing measured"),
    (ABOVE, 1.2, (1.2, 1.2), (None, None), T_, False, "undetermined (too few depths)"),
    (BELOW, 3.0, (3.0, 3.0), (1.5, 4.5), U_, False, "underpowered"),
    (BELOW, 1.0, (1.0, 1.0), (0.5, 2.5), U_, False, "leaning wrong"),
    (EQUIV, 0.2, (0.2, 0.2), (-0.3, 0.7), U_, False, "leaning wrong"),
    (EQUIV, 0.7, (0.7, 0.7), (0.1, 1.2), U_, False, "underpowered"),
]


@pytest.mark.parametrize("rule, value, med, ci, verdict, held, says", CONTROL_CASES)
def test_a_negative_control_that_misses_says_whether_it_failed_or_lacked_power(
    rule, value, med, ci, verdict, held, says
):
    m = rules.Measured(value, ci[0], ci[1], median_lo=med[0], median_hi=med[1])
    out = rules.control_check(rule, m, verdict, rules.NOT_SUPPORTED)
    assert out["held"] is held and says in out["text"], out


# ------------------------------------------------------------ E2: every n
def _curve_cells(put, gaps_by_n, spread=0.05, seed=0):
    """ntk and net cells at each n whose paired log10 error ratio is the planted
    gap + spread * N(0, 1) per seed."""
    rng = np.random.default_rng(seed)
    t, arch = "bandlimited:K=4", "fc:depth=2"
    for n, g in gaps_by_n.items():
        lr = g + spread * rng.standard_normal(len(SEEDS))
        for s in SEEDS:
            put({"method": "ntk", "target": t, "arch": arch, "n": n, "seed": s},
                {"test_mse": 0.01 * 10 ** lr[s]})  # fmt: skip
        put({"method": "net", "target": t, "arch": arch, "n": n, "seeds": SEEDS},
            {"seeds": SEEDS, "test_mse_per_seed": [0.01] * len(SEEDS)})  # fmt: skip


E2_CASES = [  # (gap per n, spread over seeds) -> verdict (8 seeds: CI +- 0.67 spread)
    ({16: 0.2, 64: -0.05, 256: 0.0}, 0.05, S_),  # every n inside +-0.5
    # a gap that changes sign with n: the mean over n (0.05) is inside, n = 16 is not
    ({16: 1.0, 64: -0.9, 256: 0.05}, 0.05, N_),
    ({16: 0.5, 64: 0.0, 256: 0.0}, 0.3, U_),  # n = 16 straddles 0.5
]


@pytest.mark.parametrize("gaps, spread, verdict", E2_CASES)
def test_e2_decides_per_n(store, gaps, spread, verdict):
    _curve_cells(store, gaps, spread=spread)
    rule = {"kind": "equivalence", "margin": 0.5}
    c = rules.Claim("E2", "", "", "log_ratio_every_n", (), {}, rule, "quick")
    out = claims.evaluate(c, EXP)
    assert out["verdict"] == verdict
    rows = out["data"]["per_target"]["bandlimited:K=4"]
    assert [r["n"] for r in rows] == sorted(gaps)
    worst = max(gaps, key=lambda n: abs(gaps[n]))
    assert out["value"] == pytest.approx(gaps[worst], abs=3 * spread / math.sqrt(len(SEEDS)))


# ------------------------------------------------------------ many claims
def _decided(i, verdict, p=None, cov=0.9614, deterministic=False):
    method = f"order-statistic interval, coverage >= {cov:.4f} (exact)"
    rule = {"kind": "above", "threshold": 1.0, "deterministic": deterministic}
    return {"id": f"c{i}", "verdict": verdict, "p_value": p, "ci_method": method, "rule": rule}


def test_family_wise_holm_against_brute_force_and_bonferroni_sum():
    ps = [0.001, 0.02, 0.013, 0.3, None]
    verdicts = [S_, S_, S_, N_, S_]
    ev = [_decided(i, v, p) for i, (v, p) in enumerate(zip(verdicts, ps))]
    ev.append(_decided(9, S_, deterministic=True))
    out = claims.family_wise(ev, alpha=0.05)
    # Holm by hand over the 4 p-values: 0.001 <= 0.05/4, 0.013 <= 0.05/3,
    # 0.02 <= 0.05/2 stay; 0.3 > 0.05/1 (a not-supported claim) stops
    assert out["holm"] == {"c0": True, "c2": True, "c1": True}
    ev[1]["p_value"] = 0.03  # now 0.03 > 0.025: c1 and everything after it fall
    assert claims.family_wise(ev, alpha=0.05)["holm"] == {"c0": True, "c2": True, "c1": False}
    assert out["decided"] == 6 and out["no_p"] == ["c4", "c9"]
    assert out["bonferroni_bound"] == pytest.approx(5 * (1 - 0.9614) / 2)  # theory: 0
    assert "Holm" in out["text"] and "Bonferroni" in out["text"]


# ------------------------------------------------------------ the schema
BASE = {
    "id": "x",
    "claim": "c",
    "statistic": "nstar_ratio",
    "profile": "quick",
    "params": {"family": {"name": "tree"}},
    "rule": {"kind": "above", "threshold": 1.0, "reason": "r"},
}
SCHEMA_ERRORS = [
    ({"profile": None}, "'profile' must be a non-empty string"),
    ({"profile": "huge"}, "profile 'huge' is unknown (allowed: quick, paper, full)"),
    ({"statistic": "magic"}, "statistic 'magic' is unknown (allowed: "),
    ({"rule": {"kind": "around"}}, "rule.kind must be one of above, below, equivalence"),
    ({"colour": "red"}, "unknown key 'colour' (allowed: "),
    ({"rule": {"kind": "above", "threshold": 1.0, "min_depths": 2, "reason": "r"}},
     "rule.min_depths is declared once per statistic"),
    ({"expect": "supported"}, "expect 'supported' is not allowed (allowed: not supported)"),
]  # fmt: skip


@pytest.mark.parametrize("change, message", SCHEMA_ERRORS)
def test_parse_claims_names_the_field_and_the_allowed_values(change, message):
    from ntkgap.errors import UsageError

    c = {k: v for k, v in dict(BASE, **change).items() if v is not None}
    with pytest.raises(UsageError) as e:
        claims.parse_claims({"claim": [c]}, "cfg.toml")
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_depth_rule_is_the_statistics_and_only_for_families():
    fam = claims.parse_claims({"claim": [BASE]}, "cfg")[0]
    assert fam.rule["min_depths"] == claims.MIN_DEPTHS["nstar_ratio"] and fam.profile == "quick"
    one = claims.parse_claims({"claim": [dict(BASE, params={"target": T})]}, "cfg")[0]
    assert "min_depths" not in one.rule
