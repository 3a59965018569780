"""Predictions (E10): the planted law recovered (from points, from search
brackets, per error level), leave-one-out blind to the held-out group (a
spy on the fitter, and poisoned stored values that leave the held-out
predictions unchanged), refusal, sealed files, censored scoring and the
kernel side absent where no exact spectrum exists, the claims' recheck with
the larger stored budget, on planted stores written with the store's own
save."""

import math
import os

import numpy as np
import pytest
from conftest import ROOT
from scipy import stats

from ntkgap.errors import UsageError
from ntkgap.runs import config as runs_config
from ntkgap.runs import store
from ntkgap.verdicts import claims, comparison_predictions, proportions, rules, selection
from ntkgap.verdicts import e10_statistics as E10
from ntkgap.verdicts import predictions as P
from ntkgap.verdicts import sealing as S

NODES = ("parity", "tanh", "random")
DEPTHS = (2, 3, 4)
C_OF = {2: 3, 3: 7, 4: 15}  # internal nodes of binary trees, (2^L - 1)


#: E10's claims as the config declares them (their rules)
E10_CLAIMS = {
    c.id: c
    for c in claims.parse_claims(
        runs_config.load_config(os.path.join(ROOT, "experiments", "e10_predict.toml")), "e10"
    )
}


def _target(node, L):
    return f"tree:d=40,L={L},arity=2,node={node}"


def _per_seed(value, status="resolved"):
    """Eight seeds whose median is ``value`` (resolved), all censored, or
    (``bracket``) each resolved to the final bracket [value / 1.1, value * 1.1]."""
    if status == "resolved":
        vals = [value * f for f in (0.8, 0.9, 0.95, 1.0, 1.0, 1.05, 1.1, 1.2)]
        return [{"seed": s, "status": "resolved", "n_star": v} for s, v in enumerate(vals)]
    if status == "bracket":
        iv = {"lo": value / 1.1, "hi": value * 1.1}
        return [{"seed": s, "status": "resolved", "n_star": iv["hi"], **iv} for s in range(8)]
    return [{"seed": s, "status": status, "bound": value, "n_star": None} for s in range(8)]


def _cell(method, node, L, eps=0.1):
    return {
        "method": method,
        "target": _target(node, L),
        "arch": f"tree:arity=2,L={L}",
        "eps": eps,
        "seeds": list(range(8)),
        "n_min": 8,
        "n_max": 4096,
        **({"width": 64} if method == "net_search" else {}),
    }


def _plant(root, c=5.0, p=0.8, nodes=NODES, kernel=None, eps=0.1, status="resolved"):
    """Net n* = c C^p per (node, L) in experiment e4_trees; kernel n* planted."""
    (root / "e4_trees").mkdir(exist_ok=True)
    for node in nodes:
        for L in DEPTHS:
            net = {"per_seed": _per_seed(c * C_OF[L] ** p, status)}
            store.save("e4_trees", _cell("net_search", node, L, eps), net, str(root))
            if kernel:
                rec = {"per_seed": _per_seed(kernel(L))}
                store.save("e4_trees", _cell("ntk_search", node, L, eps), rec, str(root))


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path))
    monkeypatch.delenv("NTKGAP_PROFILE", raising=False)
    return tmp_path


def _fake_kernel(target, arch, eps):
    L = int(target.split("L=")[1].split(",")[0])
    return {"n_star": 10.0 * 4.0**L, "censored": False, "theory_valid": True}


def _pt(C, y, group="g"):
    return P.Point(group, group, "e", "t", "a", C, y, None, ("k",), 0.1)


@pytest.mark.parametrize("c,p", [(5.0, 0.8), (0.3, 2.0), (40.0, 1.3)])
def test_fit_recovers_planted_law(c, p):
    Cs = [3, 7, 15, 31]
    law = P.fit_law([_pt(C, (math.log(c * C**p),) * 2) for C in Cs])
    assert law["p"] == pytest.approx(p, abs=1e-8)
    assert law["c"] == pytest.approx(c, rel=1e-8)
    assert law["s"] == pytest.approx(0.0, abs=1e-6)


def test_prediction_interval_matches_textbook():
    rng = np.random.default_rng(0)
    Cs = np.array([3, 5, 7, 15, 31, 63])
    y = np.log(2.0) + 1.1 * np.log(Cs) + rng.normal(0, 0.3, Cs.size)
    law = P.fit_law([_pt(int(C), (v, v)) for C, v in zip(Cs, y)])
    x = np.log(Cs)
    A = np.vstack([np.ones_like(x), x]).T
    beta, rss, *_ = np.linalg.lstsq(A, y, rcond=None)
    s2 = rss[0] / (len(x) - 2)
    x0 = math.log(20)
    cov = s2 * (1 + np.array([1, x0]) @ np.linalg.inv(A.T @ A) @ np.array([1, x0]))
    from scipy import stats

    half = stats.t.ppf(0.975, len(x) - 2) * math.sqrt(cov)
    yhat = beta[0] + beta[1] * x0
    out = P.law_predict(law, 20)
    assert math.log(out["n_star"]) == pytest.approx(yhat, abs=1e-7)
    assert [math.log(v) for v in out["interval"]] == pytest.approx([yhat - half, yhat + half])


@pytest.mark.parametrize("bound,moves", [(math.log(5.0), False), (math.log(5000.0), True)])
def test_lower_bound_inert_on_its_side_and_pulls_otherwise(bound, moves):
    pts = [_pt(C, (math.log(2 * C),) * 2) for C in (3, 7, 15)]
    law0 = P.fit_law(pts)
    law = P.fit_law(pts + [_pt(63, (bound, math.inf))])
    assert law["bounds"] == 1
    assert (law["p"] > law0["p"] + 1e-3) is moves
    if not moves:
        assert law["p"] == pytest.approx(law0["p"], abs=1e-9)


def test_refuses_with_nothing_to_fit(root):
    with pytest.raises(UsageError, match="nothing to fit on"):
        P.predict(_target("parity", 3), "tree:arity=2,L=3", kernel_fn=_fake_kernel)
    _plant(root, nodes=("parity",))  # only the target's own family is stored
    with pytest.raises(UsageError, match="nothing to fit on"):
        P.predict(_target("parity", 3), "tree:arity=2,L=3", kernel_fn=_fake_kernel)


def _watched_leave_one_out(points, attr):
    """Leave-one-out with a spy on the fitter: (rows, each fit's set of
    ``attr`` values (group or family) in fit order)."""
    seen = []

    def spy(pts):
        seen.append({getattr(pt, attr) for pt in pts})
        return P.fit_law(pts)

    return E10.leave_one_out(points, _fake_kernel, fit=spy), seen


def test_leave_one_out_never_sees_held_out_group(root):
    _plant(root, kernel=lambda L: 10.0 * 4.0**L)
    points = P.collect(("e4_trees",), 0.1)
    assert len(points) == len(NODES) * len(DEPTHS)
    rows, seen = _watched_leave_one_out(points, "group")
    groups = sorted({pt.group for pt in points})
    assert len(seen) == len(groups)
    for held, fitted in zip(groups, seen):
        assert held not in fitted and fitted == set(groups) - {held}
    assert {r["group"] for r in rows} == set(groups)
    # an exact planted law predicts every held-out point exactly
    for r in rows:
        assert S.distance(r["net_pred"], r["net"])[0] == pytest.approx(0.0, abs=1e-9)
        assert r["winner_pred"] == r["winner_measured"] == "net"


def test_predict_seals_unmeasured_family_and_refuses_overwrite(root):
    _plant(root)
    new = _target("and", 3)
    out = P.predict(new, "tree:arity=2,L=3", kernel_fn=_fake_kernel)
    assert out["measured"] is False and out["sealed"]
    assert out["net_n_star"] == pytest.approx(5.0 * 7**0.8, rel=1e-6)
    assert out["ratio"] == pytest.approx(640.0 / out["net_n_star"])
    labels = {selection.family_label(selection.family_of(_target(n, 2))) for n in NODES}
    assert out["winner"] == "net" and set(out["law"]["families"]) == labels
    sealed = store.load_result(out["sealed"])
    keys = {store.cell_key(_cell("net_search", n, L)) for n in NODES for L in DEPTHS}
    assert set(sealed["fitted_on"]) == keys
    with pytest.raises(UsageError, match="sealed already"):
        P.predict(new, "tree:arity=2,L=3", kernel_fn=_fake_kernel)
    measured = P.predict(_target("tanh", 3), "tree:arity=2,L=3", kernel_fn=_fake_kernel)
    assert measured["measured"] is True and measured["sealed"] is None
    tanh = selection.family_label(selection.family_of(_target("tanh", 2)))
    assert tanh not in measured["law"]["families"] and len(measured["law"]["families"]) == 2


@pytest.mark.parametrize(
    "status,value,near,consistent,coverage",
    [
        ("resolved", 100.0, 0.0, True, "covered"),
        ("resolved", 1000.0, 1.0, False, "missed"),
        ("right", 50.0, 0.0, True, "undetermined"),  # n* > 50: 100 consistent; above 150?
        ("right", 200.0, math.log10(2), False, "missed"),
        ("left", 50.0, math.log10(2), False, "missed"),  # n* <= 50
        ("left", 400.0, 0.0, True, "undetermined"),
    ],
)
def test_score_censored_as_interval(root, status, value, near, consistent, coverage):
    pred = {"target": "t", "arch": "a", "eps": 0.1, "net_n_star": 100.0}
    pred["net_interval"] = [60.0, 150.0]
    path = S.seal_prediction(pred, ["k"])
    s = S.score(path, {"per_seed": _per_seed(value, status)})
    assert s["error_log10"][0] == pytest.approx(near, abs=1e-9)
    assert s["consistent"] is consistent and s["coverage"] == coverage
    assert s["covered"] is (coverage != "missed")  # the interval meets the measurement
    item = {"L": 3, "prediction": {**pred, "kernel_n_star": None, "winner": None}, "score": s}
    words = {"covered": "(covered by", "missed": "(outside", "undetermined": "(undetermined"}
    assert words[coverage] in comparison_predictions.prediction_text(item)


def test_fit_reads_search_brackets_at_their_midpoint(root):
    # every seed resolved to a final bracket [v / 1.1, v * 1.1] around the
    # planted v = c C^p: the law is recovered exactly, no bracket is a bound
    _plant(root, c=3.0, p=1.2, status="bracket")
    law = P.fit_law(P.collect(("e4_trees",), 0.1))
    assert law["p"] == pytest.approx(1.2, abs=1e-9)
    assert law["c"] == pytest.approx(3.0, rel=1e-9)
    assert law["bounds"] == 0 and law["m"] == len(NODES) * len(DEPTHS)


def _rows_by_target(rows):
    return {(r["target"], r["eps"]): r for r in rows}


def test_leave_one_out_poisoned_held_out_values_leave_its_predictions_unchanged(root):
    # noisy planted law (per-node factors), so every group's fit is its own
    factors = {"parity": 1.0, "tanh": 1.6, "random": 0.7}
    for node, f in factors.items():
        _plant(root, c=5.0 * f, p=0.8, nodes=(node,), kernel=lambda L: 10.0 * 4.0**L)
    before = _rows_by_target(E10.leave_one_out(P.collect(("e4_trees",), 0.1), _fake_kernel))
    for L in DEPTHS:  # poison the tanh group's stored net n*: 1000 x, one censored
        status = "right" if L == 4 else "resolved"
        rec = {"per_seed": _per_seed(5000.0 * C_OF[L] ** 2.5, status)}
        store.save("e4_trees", _cell("net_search", "tanh", L), rec, str(root))
    after = _rows_by_target(E10.leave_one_out(P.collect(("e4_trees",), 0.1), _fake_kernel))
    assert before.keys() == after.keys() and len(after) == len(NODES) * len(DEPTHS)
    for key, r in after.items():
        held_tanh = "node=tanh" in key[0]
        assert (r["net"] != before[key]["net"]) is held_tanh  # the poison is stored
        same = r["net_pred"] == before[key]["net_pred"]
        assert same is held_tanh  # unchanged where held out, moved where fitted on
        if held_tanh:
            assert r["net_interval"] == before[key]["net_interval"]


def test_predict_never_fits_on_the_targets_own_family(root):
    _plant(root, c=5.0, p=0.8, kernel=lambda L: 10.0 * 4.0**L)
    target, arch = _target("tanh", 3), "tree:arity=2,L=3"
    first = P.predict(target, arch, kernel_fn=_fake_kernel)
    for L in DEPTHS:
        rec = {"per_seed": _per_seed(1e4 * C_OF[L] ** 3)}
        store.save("e4_trees", _cell("net_search", "tanh", L), rec, str(root))
    again = P.predict(target, arch, kernel_fn=_fake_kernel)
    assert again["net_n_star"] == first["net_n_star"]
    assert again["net_interval"] == first["net_interval"]
    other = P.predict(_target("parity", 3), arch, kernel_fn=_fake_kernel)
    assert other["net_n_star"] != pytest.approx(5.0 * 7**0.8, rel=1e-3)  # tanh's poison fitted


def test_leave_one_out_fits_each_error_level_on_its_own(root):
    # eps 0.1 follows 5 C^0.8, eps 0.3 follows 2 C^1.5: each row is its own law's value
    _plant(root, c=5.0, p=0.8, eps=0.1)
    _plant(root, c=2.0, p=1.5, eps=0.3)
    points = P.collect(("e4_trees",), [0.1, 0.3])
    assert sorted({pt.eps for pt in points}) == [0.1, 0.3]
    rows = E10.leave_one_out(points, _fake_kernel)
    assert len(rows) == 2 * len(NODES) * len(DEPTHS)
    law = {0.1: (5.0, 0.8), 0.3: (2.0, 1.5)}
    for r in rows:
        c, p = law[r["eps"]]
        assert r["net_pred"] == pytest.approx(c * r["C"] ** p, rel=1e-8)
    at3 = P.predict(_target("and", 3), "tree:arity=2,L=3", 0.3, seal=False, kernel_fn=_fake_kernel)
    assert at3["net_n_star"] == pytest.approx(2.0 * 7**1.5, rel=1e-8)


@pytest.mark.parametrize(
    "target,arch",
    [
        ("rhm:v=3,n_c=2,m=3,s=2,L=3,seed=0", "tree:share=1,arity=2,L=3"),  # too many strings
        ("tree:d=64,L=6,arity=2,node=tanh", "fc:depth=2"),  # beyond the composition's table
    ],
)
def test_kernel_side_absent_without_an_exact_spectrum(root, target, arch):
    _plant(root)
    out = P.predict(target, arch, seal=False)
    assert out["kernel_n_star"] is None and out["kernel_theory_valid"] is False
    assert out["kernel_reason"] and out["winner"] is None and out["ratio"] is None
    assert out["net_n_star"] > 0  # the net side stands on its own


def test_winner_claim_scores_units_with_a_kernel_prediction(monkeypatch):
    def row(fam, C, measured, pred):
        return {"family": fam, "C": C, "eps": 0.1, "winner_measured": measured, "winner_pred": pred}

    rows = [
        row("a", 7, "net", "net"),
        row("a", 15, "net", "kernel"),
        row("b", 7, "kernel", None),  # no exact kernel spectrum
        row("b", 15, None, "net"),  # measured medians undecided
        row("c", 7, "net", "net"),  # two architecture variants of one (family, depth):
        row("c", 7, "net", "kernel"),  # one unit, half right
    ]
    monkeypatch.setattr(E10, "_rows", lambda params: rows)
    m = E10.e10_winner({"rule": {"kind": "above", "threshold": 0.8}}, "e10_predict")
    assert m.seeds == 3 and m.value == pytest.approx(1.5 / 3)
    assert "1 decided point(s) without kernel theory" in m.detail


def test_coverage_counts_families_and_median_claims_count_family_depth_units(monkeypatch):
    def row(fam, arch, C, net, pred):
        iv = [pred / 2, pred * 2]  # a prediction interval of a factor 2 each way
        return {
            "family": fam, "group": f"{fam}|{arch}", "C": C, "eps": 0.1,
            "net": (math.log(net), math.log(net)), "net_pred": pred, "net_interval": iv,
        }  # fmt: skip

    # family a: two variants at C = 7 (one covered, one 4x off), one at C = 15 (covered);
    # family b: one point, covered. Per family: a 2/3, b 1 -> (2/3 + 1) of 2.
    rows = [
        row("a", "relu", 7, 100.0, 100.0),
        row("a", "tanh", 7, 100.0, 400.0),
        row("a", "relu", 15, 50.0, 50.0),
        row("b", "relu", 7, 10.0, 10.0),
    ]
    monkeypatch.setattr(E10, "_rows", lambda params: rows)
    monkeypatch.setattr(E10, "_kin_rows", lambda params: [])  # the sensitivity: nothing here
    cov = E10.e10_coverage({"rule": {"kind": "equivalence", "margin": 0.15}}, "e10_predict")
    assert cov.seeds == 2 and cov.value == pytest.approx((2 / 3 + 1) / 2 - 0.95)
    assert "approximation" in cov.ci_method  # 2/3 + 1 is no whole count
    assert "0 of 4 points undetermined" in cov.detail
    assert "median width 0.60 decades" in cov.detail  # log10 4 = 0.602
    net = E10.e10_net({"rule": {"kind": "below", "threshold": 0.47712}}, "e10_predict")
    # two family units: a the median of (0, log10 4, 0) = 0, b 0
    assert net.seeds == 2 and net.data["sets"] == [(0.0, 0.0), (0.0, 0.0)]
    assert "over 2 families (4 points" in net.detail and "2 families, no CI" in net.detail
    assert net.detail.endswith("held out with all its arities: no scored point")


@pytest.mark.parametrize(
    "measured, state",
    [
        ((50.0, 50.0), True),  # resolved inside [10, 1000]
        ((5.0, 5.0), False),  # resolved below
        ((2000.0, math.inf), False),  # censored above the interval's upper end: a miss
        ((500.0, math.inf), None),  # censored inside: the truth may lie above 1000
        ((8.0, 12.0), None),  # a bracket across the lower end
    ],
)
def test_coverage_state_reads_censored_bounds_as_bounds(measured, state):
    iv = tuple(math.log(x) for x in measured)
    assert S.coverage_state([10.0, 1000.0], iv) is state
    assert S.covers([10.0, 1000.0], iv) is (state is not False)  # the sealed score's reading


def _coverage_rows(covered: int, missed: int, censored: int = 0) -> list[dict]:
    """One point per family, prediction interval [10, 1000]: inside, far
    below, or censored at 500 (undetermined)."""
    kinds = [(50.0, 50.0)] * covered + [(1.0, 1.0)] * missed + [(500.0, math.inf)] * censored
    return [
        {"family": f"f{i}", "group": f"f{i}|a", "C": 7, "eps": 0.1, "net_pred": 100.0,
         "net": tuple(math.log(x) for x in m), "net_interval": [10.0, 1000.0]}
        for i, m in enumerate(kinds)
    ]  # fmt: skip


@pytest.mark.parametrize(
    "covered, missed, censored, verdict, k",
    [
        (20, 0, 0, rules.SUPPORTED, (20, 20)),  # CP lower 0.83 >= 0.80
        (10, 10, 0, rules.NOT_SUPPORTED, (10, 10)),  # CP upper 0.73 < 0.80
        (14, 0, 6, rules.INCONCLUSIVE, (14, 20)),  # six bounds: 14 to 20 of 20
    ],
)
def test_coverage_reads_what_the_planted_counts_give(
    monkeypatch, covered, missed, censored, verdict, k
):
    # against the config's rule (+-0.15 around 0.95); the CI from the bounded count's ends
    monkeypatch.setattr(E10, "_rows", lambda params: _coverage_rows(covered, missed, censored))
    cov = E10.e10_coverage({"rule": E10_CLAIMS["E10-coverage"].rule}, "e10_predict")
    assert cov.verdict.startswith(verdict) and cov.seeds == 20
    assert cov.lo == pytest.approx(stats.beta.ppf(0.025, k[0], 21 - k[0]) - 0.95)
    hi = 1.0 if k[1] == 20 else stats.beta.ppf(0.975, k[1] + 1, 20 - k[1])
    assert cov.hi == pytest.approx(hi - 0.95)
    assert (cov.value is None) == (censored > 0)
    assert f"{censored} of 20 points undetermined" in cov.detail


def test_a_family_of_a_covered_and_an_undetermined_point_is_half_to_wholly_covered(monkeypatch):
    # family f0: one point inside, one censored bound inside; f1: one point inside
    rows = _coverage_rows(2, 0, 1)
    rows[2]["family"] = "f0"
    monkeypatch.setattr(E10, "_rows", lambda params: rows)
    cov = E10.e10_coverage({"rule": E10_CLAIMS["E10-coverage"].rule}, "e10_predict")
    assert cov.seeds == 2 and "1.5 to 2 of 2" in cov.detail and "in 1 families" in cov.detail
    assert cov.lo == pytest.approx(stats.beta.ppf(0.025, 1.5, 1.5) - 0.95)


def test_the_net_claims_detail_counts_the_families_open_above(monkeypatch):
    # three families, one of them a censored net whose distance is open above
    def row(fam, measured):
        lo, hi = measured
        return {"family": fam, "C": 7, "eps": 0.1, "net": (math.log(lo), hi), "net_pred": 50.0}

    rows = [row("a", (50.0, math.log(50.0))), row("b", (50.0, math.log(50.0))),
            row("c", (500.0, math.inf))]  # fmt: skip
    monkeypatch.setattr(E10, "_rows", lambda params: rows)
    monkeypatch.setattr(E10, "_kin_rows", lambda params: [])
    net = E10.e10_net({"rule": E10_CLAIMS["E10-net"].rule}, "e10_predict")
    assert "1 of the 3 open above: censored" in net.detail


@pytest.mark.parametrize("off", [1.0, 100.0])
def test_the_node_function_sensitivity_is_reported_and_decides_nothing(monkeypatch, off):
    # eight families predicted exactly by the family hold-out; the node-function hold-out's
    # rows are `off` times off (log10 100 = 2 decades would flip the verdict)
    def row(fam, pred):
        return {"family": fam, "C": 7, "eps": 0.1, "net": (math.log(50.0),) * 2, "net_pred": pred}

    fams = [f"f{i}" for i in range(8)]
    monkeypatch.setattr(E10, "_rows", lambda params: [row(f, 50.0) for f in fams])
    monkeypatch.setattr(E10, "_kin_rows", lambda params: [row(f, 50.0 * off) for f in fams])
    net = E10.e10_net({"rule": {"kind": "below", "threshold": 0.47712}}, "e10_predict")
    assert net.verdict == rules.SUPPORTED and net.hi == pytest.approx(0.0, abs=1e-12)
    d = math.log10(off)
    assert net.detail.endswith(
        f"held out with all its arities: median in [{d:.3g}, {d:.3g}] over 8 families (8 points:"
        f" depths and architecture variants; 0 of the 8 open above: censored),"
        f" CI [{d:.3g}, {d:.3g}]"
    )


def test_kernel_claim_units_a_censored_variant_and_the_n_max_scope(monkeypatch):
    def row(fam, C, pred, lo, hi, n_max=4096.0, valid=True):
        return {
            "family": fam, "C": C, "eps": 0.1, "kernel_pred": pred, "kernel_valid": valid,
            "kernel": (math.log(lo), math.log(hi)), "kernel_n_max": n_max,
        }  # fmt: skip

    rows = [
        row("a", 7, 100.0, 100.0, 100.0),  # unit a@7: two variants, one exact,
        row("a", 7, 100.0, 400.0, math.inf),  # one a bound 4x above: upper end open
        row("a", 15, 50.0, 100.0, 100.0),  # unit a@15: a factor 2
        row("b", 7, 10.0, 10.0, 10.0),  # unit b@7
        row("b", 15, 9000.0, 4096.0, math.inf),  # theory beyond n_max: out of scope
        row("c", 7, 10.0, 40.0, 40.0, valid=False),  # theory not valid: out of scope
    ]
    monkeypatch.setattr(E10, "_rows", lambda params, which=0: rows if which == 1 else [])
    m = E10.e10_kernel({"rule": {"kind": "below", "threshold": 0.30103}}, "e10_predict")
    assert m.seeds == 3 and m.data["units"] == [["a", "7", "0.1"], ["a", "15", "0.1"],
                                                ["b", "7", "0.1"]]  # fmt: skip
    # a@7: lower ends (0, log10 4) -> their median log10 2; upper ends (0, inf) -> inf
    assert m.data["sets"][0] == (pytest.approx(math.log10(4) / 2), math.inf)
    assert m.data["sets"][1] == pytest.approx((math.log10(2), math.log10(2)))
    assert m.data["sets"][2] == (0.0, 0.0)


# (rule, shift, the fewest m at which m of m reads supported, from the closed form of
# the all-successes Clopper-Pearson lower end 0.025^(1/m); None: never)
def _closed_form_fewest(floor):
    return next(m for m in range(1, 1000) if 0.025 ** (1 / m) > floor)


FEWEST = [
    ({"kind": "above", "threshold": 0.8}, 0.0, _closed_form_fewest(0.8)),  # E10-winner: 17
    ({"kind": "equivalence", "margin": 0.15}, 0.95, _closed_form_fewest(0.8)),  # E10-coverage
    ({"kind": "above", "threshold": 0.5}, 0.0, _closed_form_fewest(0.5)),  # 6
    ({"kind": "above", "threshold": 1.0}, 0.0, None),  # a proportion never exceeds 1
    # 0 of m has the upper end 1 - 0.025^(1/m): below 0.2 from the same m as above 0.8
    ({"kind": "below", "threshold": 0.2}, 0.0, _closed_form_fewest(0.8)),
]


@pytest.mark.parametrize("rule, shift, fewest", FEWEST)
def test_fewest_units_a_proportion_needs_to_read_supported(rule, shift, fewest):
    assert proportions.fewest_to_support(rule, shift) == fewest
    if fewest is None:
        return
    # the detail says so below it, and not from it on
    best = 0 if rule["kind"] == "below" else 1  # the most favourable share
    few = proportions.binomial("x", best * (fewest - 1), fewest - 1, rule, shift=shift)
    assert few.verdict != "supported" and f"needs >= {fewest}" in few.detail
    enough = proportions.binomial("x", best * fewest, fewest, rule, shift=shift)
    assert enough.verdict == "supported" and "needs >=" not in enough.detail


def test_an_equivalence_centred_inside_can_be_supported_with_enough_units():
    # 50 of 100 around 0.5: Clopper-Pearson [0.398, 0.602] (scipy's beta, by hand below),
    # inside 0.5 +- 0.15; so some m <= 100 suffices, and the m found reads supported
    rule = {"kind": "equivalence", "margin": 0.15}
    lo, hi = stats.beta.ppf(0.025, 50, 51), stats.beta.ppf(0.975, 51, 50)
    assert -0.15 < lo - 0.5 and hi - 0.5 < 0.15
    m = proportions.fewest_to_support(rule, 0.5)
    assert m is not None and m <= 100
    assert proportions.binomial("x", m // 2, m, rule, shift=0.5).verdict == "supported" or (
        proportions.binomial("x", (m + 1) // 2, m, rule, shift=0.5).verdict == "supported"
    )


def _plant_kernel_only(root, node, kernel_of_L, exp="e10_predict"):
    """Kernel searches with no net search beside them (E10's own cells)."""
    (root / exp).mkdir(exist_ok=True)
    for L in DEPTHS:
        rec = {"per_seed": _per_seed(kernel_of_L(L))}
        store.save(exp, _cell("ntk_search", node, L), rec, str(root))


def test_kernel_only_searches_enter_the_kernel_rows_never_the_law(root):
    _plant(root)  # net searches of NODES, no kernel search
    _plant_kernel_only(root, "linear", lambda L: 10.0 * 4.0**L)
    points = P.collect(("e4_trees", "e10_predict"), 0.1)
    only = [pt for pt in points if pt.net is None]
    assert len(only) == len(DEPTHS) and all(pt.kernel is not None for pt in only)
    rows = E10.leave_one_out(points, _fake_kernel)
    assert rows == E10.leave_one_out([pt for pt in points if pt.net is not None], _fake_kernel)
    assert not any("node=linear" in r["target"] for r in rows)
    krows = E10.kernel_rows(points, _fake_kernel)
    assert sorted(r["target"] for r in krows) == sorted(pt.target for pt in only)
    for r in krows:  # planted at the theory's value: no distance
        assert S.distance(r["kernel_pred"], r["kernel"]) == pytest.approx((0.0, 0.0), abs=1e-9)
    # a family whose only stored search is a kernel's has no measured net: still sealed
    out, _ = P.prediction(
        _target("linear", 3), "tree:arity=2,L=3", points=points, kernel_fn=_fake_kernel
    )
    assert out["measured"] is False


@pytest.mark.parametrize(
    "factor, verdict",
    [(1.0, rules.SUPPORTED), (1.5, rules.SUPPORTED), (3.0, rules.NOT_SUPPORTED)],
)
def test_kernel_claim_reads_what_the_planted_kernels_give(root, monkeypatch, factor, verdict):
    # 9 kernel-only points measured at factor x the theory: |log10| = log10(factor) each,
    # against the threshold log10 2
    for node in NODES:
        _plant_kernel_only(root, node, lambda L: factor * 10.0 * 4.0**L)
    monkeypatch.setattr(E10, "kernel_theory", _fake_kernel)
    E10.e10_rows.cache_clear()
    params = {"eps": [0.1], "sources": ["e10_predict"]}
    try:
        m = E10.e10_kernel({**params, "rule": {"kind": "below", "threshold": 0.30103}}, "e10")
    finally:
        E10.e10_rows.cache_clear()
    assert m.verdict == verdict and m.seeds == len(NODES) * len(DEPTHS)
    assert m.lo == pytest.approx(math.log10(factor), abs=1e-9)


def test_leave_one_out_holds_out_every_variant_of_a_family(root):
    # two architecture variants of each family: holding one family out removes both,
    # as predict does for a new family
    _plant(root)
    for node in NODES:
        for L in DEPTHS:
            cell = dict(_cell("net_search", node, L), arch=f"tree:act=erf,arity=2,L={L}")
            store.save("e4_trees", cell, {"per_seed": _per_seed(5.0 * C_OF[L] ** 0.8)}, str(root))
    points = P.collect(("e4_trees",), 0.1)
    assert len({pt.group for pt in points}) == 2 * len({pt.family for pt in points})
    rows, seen = _watched_leave_one_out(points, "family")
    families = sorted({pt.family for pt in points})
    assert seen == [set(families) - {f} for f in families]
    assert len(rows) == len(points)


@pytest.mark.parametrize("rerun_last", [True, False])
def test_a_pair_reads_its_design_budget_not_the_larger_budget_rerun(root, monkeypatch, rerun_last):
    # E4 stores the tanh L = 5 net twice (1,500 and 3,000 steps, same seeds): the law reads
    # the design's 1,500-step search in either storage order
    (root / "e4_trees").mkdir(exist_ok=True)
    for steps, value in ((1500, 100.0), (3000, 300.0)):
        cell = {**_cell("net_search", "tanh", 3), "steps": steps}
        store.save("e4_trees", cell, {"per_seed": _per_seed(value)}, str(root))
    stored = store.results

    def ordered(*args, **kwargs):  # the rerun listed last, or first
        found = list(stored(*args, **kwargs))
        return sorted(found, key=lambda x: (x[0].get("steps", 0) == 3000) == rerun_last)

    monkeypatch.setattr(P.store, "results", ordered)
    (pt,) = P.collect(("e4_trees",), 0.1)
    assert math.exp(pt.net[0]) == pytest.approx(100.0)
    # the claims' budget recheck reads the rerun, and names the pair it reads differently
    (pt,) = P.collect(("e4_trees",), 0.1, budget="max")
    assert math.exp(pt.net[0]) == pytest.approx(300.0)
    params = {"eps": [0.1], "sources": ["e4_trees"]}
    assert E10.larger_budgets(params) == [f"e4_trees: {_target('tanh', 3)} | tree:arity=2,L=3"]
    # the recheck's larger budget only among searches with the CI's 8 seeds: a 4-seed
    # rerun at four times the steps is not read
    few = {**_cell("net_search", "tanh", 3), "steps": 6000, "seeds": list(range(4))}
    store.save("e4_trees", few, {"per_seed": _per_seed(900.0)[:4]}, str(root))
    (pt,) = P.collect(("e4_trees",), 0.1, budget="max")
    assert math.exp(pt.net[0]) == pytest.approx(300.0)
    # more seeds still come first: a 4-seed search at the design budget loses
    cell = {**_cell("net_search", "tanh", 3), "steps": 1000, "seeds": list(range(4))}
    store.save("e4_trees", cell, {"per_seed": _per_seed(50.0)[:4]}, str(root))
    (pt,) = P.collect(("e4_trees",), 0.1)
    assert math.exp(pt.net[0]) == pytest.approx(100.0)


def test_no_pair_with_a_second_budget_leaves_the_budget_recheck_empty(root):
    _plant(root)  # one budget per pair
    assert E10.larger_budgets({"eps": [0.1], "sources": ["e4_trees"]}) == []


@pytest.mark.parametrize(
    "larger, at_max, verdict_budget, flips",
    [
        ([], 0.1, "not run", False),  # no rerun stored: nothing to recheck
        (["e4_trees: t | a"], 0.1, rules.SUPPORTED, False),  # the rerun agrees
        (["e4_trees: t | a"], 1.0, rules.NOT_SUPPORTED, True),  # the rerun flips it
    ],
)
def test_e10_claims_are_rechecked_with_the_larger_budget(
    monkeypatch, larger, at_max, verdict_budget, flips
):
    # a stand-in statistic: median distance 0.1 decades at the design budget, `at_max` at
    # the larger one, CI +-0.05, against E10-net's threshold log10 3 = 0.477
    def stat(params, experiment):
        v = at_max if params.get("budget") == "max" else 0.1
        return rules.Measured(v, v - 0.05, v + 0.05, seeds=9)

    monkeypatch.setenv("NTKGAP_PROFILE", "paper")  # E10-net's deciding profile
    monkeypatch.setitem(claims.STATISTICS, "e10_net", stat)
    monkeypatch.setattr(E10, "larger_budgets", lambda params: larger)
    out = claims.evaluate(E10_CLAIMS["E10-net"], "e10_predict")
    r = out["robustness"]
    assert out["verdict"] == rules.SUPPORTED and r["verdict_eps"] == "not run"
    assert r["verdict_budget"] == verdict_budget and r["flips"] is flips
    assert ("e4_trees: t | a" in r["budget"]) == bool(larger)


def test_e10_kernel_has_no_budget_recheck(monkeypatch):
    # kernel rows read no net search: the recheck is not applicable, never a copy of the verdict
    monkeypatch.setenv("NTKGAP_PROFILE", "paper")
    monkeypatch.setitem(claims.STATISTICS, "e10_kernel", lambda p, e: rules.Measured(0.1, 0, 0.2))
    monkeypatch.setattr(E10, "larger_budgets", lambda params: ["e4_trees: t | a"])
    r = claims.evaluate(E10_CLAIMS["E10-kernel"], "e10_predict")["robustness"]
    assert r["verdict_budget"] == "not applicable" and r["flips"] is False


def test_the_budget_recheck_reaches_the_rows_through_the_claims_params(root):
    # planted law; the tanh family's L = 3 net also stored at twice the steps, 10x slower to
    # learn: the claims' rows read it only under the recheck's budget="max"
    _plant(root)
    (design,) = [
        c for c, _ in store.results("e4_trees", "net_search") if c["target"] == _target("tanh", 3)
    ]
    rerun = {**_cell("net_search", "tanh", 3), "steps": 2 * design["steps"]}  # the filled default
    store.save("e4_trees", rerun, {"per_seed": _per_seed(50.0 * C_OF[3] ** 0.8)}, str(root))
    params = {"eps": [0.1], "sources": ["e4_trees"]}
    E10.e10_rows.cache_clear()
    try:
        rows = {b: E10._rows(dict(params, budget=b)) for b in ("base", "max")}
    finally:
        E10.e10_rows.cache_clear()
    tanh3 = {
        b: [r for r in rs if r["C"] == C_OF[3] and "tanh" in r["family"]] for b, rs in rows.items()
    }
    n = {b: math.exp(sum(r[0]["net"]) / 2) for b, r in tanh3.items()}
    assert n["max"] / n["base"] == pytest.approx(10.0, rel=0.05)
    assert len(rows["base"]) == len(rows["max"]) == len(NODES) * len(DEPTHS)


def test_the_node_function_hold_out_drops_every_arity_of_the_held_node(root):
    # binary trees of three node functions plus ternary parity trees: the family hold-out
    # keeps the binary parity family in the ternary one's fit; holding out by node function
    # (kin_of) never fits on any parity tree
    _plant(root)
    for L in DEPTHS:
        cell = {
            **_cell("net_search", "tanh", L),
            "target": f"tree:d=81,L={L},arity=3,node=parity",
            "arch": f"tree:arity=3,L={L}",
        }
        C = (3**L - 1) // 2
        store.save("e4_trees", cell, {"per_seed": _per_seed(5.0 * C**0.8)}, str(root))
    points = P.collect(("e4_trees",), 0.1)
    kin = {pt.target: P.kin_of(pt.target) for pt in points}
    assert len(set(kin.values())) == len(NODES) and len({pt.family for pt in points}) == 4
    seen = []

    def spy(pts):
        seen.append({kin[pt.target] for pt in pts})
        return P.fit_law(pts)

    rows = E10.leave_one_out(points, _fake_kernel, fit=spy, held=lambda pt: kin[pt.target])
    kins = sorted(set(kin.values()))
    assert seen == [set(kins) - {k} for k in kins] and len(rows) == len(points)
    seen.clear()
    E10.leave_one_out(points, _fake_kernel, fit=spy)  # by family: the sibling stays in
    assert len(seen) == 4 and all(P.kin_of(_target("parity", 2)) in fitted for fitted in seen)


@pytest.mark.parametrize(
    "off, verdict", [(1.0, rules.SUPPORTED), (2.0, rules.SUPPORTED), (5.0, rules.NOT_SUPPORTED)]
)
def test_net_claim_reads_what_the_planted_law_errors_give(monkeypatch, off, verdict):
    # eight families each predicted `off` times their measured net n*, against log10 3
    def row(fam):
        return {
            "family": fam,
            "C": 7,
            "eps": 0.1,
            "net": (math.log(40.0),) * 2,
            "net_pred": 40 * off,
        }

    rows = [row(f"f{i}") for i in range(8)]
    monkeypatch.setattr(E10, "_rows", lambda params: rows)
    monkeypatch.setattr(E10, "_kin_rows", lambda params: rows)
    net = E10.e10_net({"rule": {"kind": "below", "threshold": 0.47712}}, "e10_predict")
    assert net.verdict == verdict and net.lo == pytest.approx(math.log10(off), abs=1e-9)


@pytest.mark.parametrize("right, verdict", [(20, rules.SUPPORTED), (10, rules.NOT_SUPPORTED)])
def test_winner_claim_reads_what_the_planted_winners_give(monkeypatch, right, verdict):
    # 20 decided units, `right` of them predicted right: 20/20 has a Clopper-Pearson lower end
    # 0.84 > 0.8; 10/20 an upper end 0.73 < 0.8
    rows = [
        {"family": f"f{i}", "C": 7, "eps": 0.1, "winner_measured": "net",
         "winner_pred": "net" if i < right else "kernel"}
        for i in range(20)
    ]  # fmt: skip
    monkeypatch.setattr(E10, "_rows", lambda params: rows)
    m = E10.e10_winner({"rule": {"kind": "above", "threshold": 0.8}}, "e10_predict")
    assert m.verdict == verdict and m.value == pytest.approx(right / 20)


def test_score_refuses_a_prediction_sealed_after_its_first_measured_cell(root):
    """``predict`` seals (hash, time); a net search stored after it is
    scored; the same prediction resealed later than that cell is refused,
    and so is one edited after sealing."""
    import json
    import time

    from ntkgap.verdicts import seal_order

    _plant(root)
    new = _target("and", 3)
    path = P.predict(new, "tree:arity=2,L=3", kernel_fn=_fake_kernel)["sealed"]
    time.sleep(0.05)
    cell = _cell("net_search", "and", 3)
    store.save("e4_trees", cell, {"per_seed": _per_seed(40.0)}, str(root))
    rec = store.load_result(store.cell_path("e4_trees", cell, str(root)))["result"]
    folder = str(root / "e4_trees")
    assert S.score(path, rec, folder=folder)["measured"]  # sealed before: scored
    sealed = json.loads(open(path).read())
    plain = {k: v for k, v in sealed.items() if k not in ("sealed_at", "sha256")}
    with open(path, "w") as fh:  # sealed again, now: after the measured cell
        json.dump(seal_order.stamp(plain), fh)
    with pytest.raises(UsageError, match="after the first measured cell"):
        S.score(path, rec, folder=folder)
    edited = dict(sealed, prediction=dict(sealed["prediction"], net_n_star=1.0))
    with open(path, "w") as fh:
        json.dump(edited, fh)
    with pytest.raises(UsageError, match="does not match its sha256"):
        S.score(path, rec, folder=folder)
