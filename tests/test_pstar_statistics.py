"""Planted tests of the RHM P* statistics (``pstar_scaling``, ``pstar_ratio``):
a planted law recovered, censoring on either side read as bounds, and every
verdict reachable. Expected values are the planted numbers, not the code's."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from ntkgap.runs import config
from ntkgap.runs import store as runs_store
from ntkgap.verdicts import claims, interval_statistics, intervals, nstar_statistics, rules
from ntkgap.verdicts.rules import INCONCLUSIVE, NOT_SUPPORTED, SUPPORTED, TOO_FEW_DEPTHS

SEEDS = range(9)
# (m, L) cells of the E9 paper grid and their abscissa x = m^L (written out here)
X = {"m=2,L=3": 8, "m=2,L=4": 16, "m=2,L=5": 32, "m=3,L=3": 27, "m=4,L=3": 64}
RULE_SLOPE = {"kind": "equivalence", "margin": 0.33, "min_depths": 3}
RULE_RATIO = {"kind": "equivalence", "margin": 0.5, "min_depths": 3}
RIGHT = lambda n_max: (n_max, math.inf)  # noqa: E731  censored above n_max
LEFT = lambda n_min: (0.0, n_min)  # noqa: E731  reached at n_min already


def _planted(power: float, c: float = 3.0, spread: float = 0.02) -> dict:
    """{cell: {seed: P*}} with P* = c x^power times a small per-seed factor."""
    rng = np.random.default_rng(0)
    jitter = {s: math.exp(spread * rng.standard_normal()) for s in SEEDS}
    return {k: {s: c * x**power * jitter[s] for s in SEEDS} for k, x in X.items()}


def _scaling(pstar, exponent=1.0, rule=RULE_SLOPE, x=X):
    return interval_statistics.pstar_scaling(pstar, x, exponent, rule)


def test_planted_law_recovered_and_supported():
    out = _scaling(_planted(1.0))
    assert out["value"] == pytest.approx(0.0, abs=1e-9)  # per-seed factors cancel in a slope
    assert out["verdict"] == SUPPORTED
    assert out["depths_resolved"] == len(X)


@pytest.mark.parametrize("power", [0.4, 1.7])
def test_planted_other_exponent_not_supported(power):
    out = _scaling(_planted(power))
    assert out["value"] == pytest.approx(power - 1.0, abs=1e-9)
    assert out["verdict"] == NOT_SUPPORTED


def test_exponent_is_the_reference():
    out = _scaling(_planted(2.0), exponent=2.0)
    assert out["value"] == pytest.approx(0.0, abs=1e-9)
    assert out["verdict"] == SUPPORTED


def test_right_censored_largest_cell_is_a_lower_bound():
    # law x^2, but the largest cell (x = 64) is only known to exceed 4 * 27^2:
    # the slope is then at least that of the bound, still far above 1.33
    p = _planted(2.0, spread=0.0)
    p["m=4,L=3"] = {s: RIGHT(4 * 27**2 * 3.0) for s in SEEDS}
    out = _scaling(p)
    assert out["hi_censored"] and out["lo"] > 0.33
    assert out["verdict"] == NOT_SUPPORTED
    assert out["depths_bounded"] == 1 and out["depths_resolved"] == len(X) - 1


def test_left_censored_smallest_cell_is_a_bound_the_other_way():
    # law x^2 with the smallest cell (x = 8) reached at n_min = 8 < 3 * 8^2:
    # a smaller P* there can only steepen the slope, so it stays > 1.33
    p = _planted(2.0, spread=0.0)
    p["m=2,L=3"] = {s: LEFT(8) for s in SEEDS}
    out = _scaling(p)
    assert out["hi_censored"] and out["lo"] > 0.33
    assert out["verdict"] == NOT_SUPPORTED


def test_censoring_on_the_law_leaves_it_open():
    # the law holds, but the largest cell is censored: the slope's upper end is
    # open, so equivalence cannot be shown and nothing refutes it
    p = _planted(1.0, spread=0.0)
    p["m=4,L=3"] = {s: RIGHT(0.5 * 3.0 * 64) for s in SEEDS}
    out = _scaling(p)
    assert out["verdict"] == INCONCLUSIVE


def test_too_few_cells():
    p = _planted(1.0)
    x = {k: X[k] for k in ("m=2,L=3", "m=2,L=4")}
    assert _scaling(p, x=x)["verdict"] == TOO_FEW_DEPTHS


def _pair(ratio_of_seed, cells=X) -> tuple[dict, dict]:
    """A at n_c = 4 and B at n_c = 2 with P*(A) / P*(B) = ratio_of_seed(seed)."""
    b = {k: {s: 5.0 * x for s in SEEDS} for k, x in cells.items()}
    a = {k: {s: v * ratio_of_seed(s) for s, v in row.items()} for k, row in b.items()}
    return a, b


def test_ratio_planted_two_supported():
    a, b = _pair(lambda s: 2.0)
    out = interval_statistics.pstar_ratio(a, b, 1.0, RULE_RATIO)
    assert out["value"] == pytest.approx(0.0, abs=1e-9)
    assert out["verdict"] == SUPPORTED


def test_ratio_planted_eight_not_supported():
    a, b = _pair(lambda s: 8.0)
    out = interval_statistics.pstar_ratio(a, b, 1.0, RULE_RATIO)
    assert out["value"] == pytest.approx(2.0, abs=1e-9)  # log2 8 - 1
    assert out["verdict"] == NOT_SUPPORTED


def test_ratio_a_censored_above_is_a_lower_bound():
    # A (n_c = 4) never reached at n_max = 4 x P*(B) in every cell: ratio >= 4
    a, b = _pair(lambda s: 2.0)
    a = {k: {s: RIGHT(4 * b[k][s]) for s in SEEDS} for k in a}
    out = interval_statistics.pstar_ratio(a, b, 1.0, RULE_RATIO)
    assert out["hi_censored"] and out["lo"] == pytest.approx(1.0)  # log2 4 - 1
    assert out["verdict"] == NOT_SUPPORTED
    assert out["depths_bounded"] == len(X)


def test_ratio_b_censored_above_is_an_upper_bound():
    # B (n_c = 2) never reached at n_max = 4 x P*(A): ratio <= 1/4
    a, b = _pair(lambda s: 2.0)
    b = {k: {s: RIGHT(4 * a[k][s]) for s in SEEDS} for k in b}
    out = interval_statistics.pstar_ratio(a, b, 1.0, RULE_RATIO)
    assert out["lo_censored"] and out["hi"] == pytest.approx(-3.0)  # log2(1/4) - 1
    assert out["verdict"] == NOT_SUPPORTED


def test_ratio_both_censored_alike_is_unknown():
    a, b = _pair(lambda s: 2.0)
    a = {k: {s: RIGHT(100.0) for s in SEEDS} for k in a}
    b = {k: {s: RIGHT(100.0) for s in SEEDS} for k in b}
    out = interval_statistics.pstar_ratio(a, b, 1.0, RULE_RATIO)
    assert out["verdict"] == TOO_FEW_DEPTHS
    assert out["depths_resolved"] + out["depths_bounded"] == 0


def test_ratio_spread_seeds_inconclusive():
    # half the seeds at ratio 1, half at 4: the median's CI spans the margin
    a, b = _pair(lambda s: 1.0 if s % 2 else 4.0)
    out = interval_statistics.pstar_ratio(a, b, 1.0, RULE_RATIO)
    assert out["verdict"] == INCONCLUSIVE


# ------------------------------------------------- claims on planted stored searches
EXP = "planted_rhm"
NET = ["net_search", "tree:share=1,arity=2"]


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("NTKGAP_RESULTS", str(tmp_path))
    monkeypatch.delenv("NTKGAP_PROFILE", raising=False)  # every stored cell is read
    os.makedirs(tmp_path / EXP)

    def put(cell, result):
        with open(tmp_path / EXP / f"{runs_store.cell_key(cell)}.json", "w") as fh:
            json.dump({"cell": cell, "result": result}, fh)

    return put


def _put_cells(put, n_c, pstar_of_x, *, eps, error="classification"):
    for key, x in X.items():
        m, L = (int(v.split("=")[1]) for v in key.split(","))
        cell = {
            "method": "net_search",
            "target": f"rhm:v=8,n_c={n_c},m={m},s=2,L={L},seed=0",
            "arch": f"tree:share=1,arity=2,L={L}",
            "eps": eps,
            "seeds": list(SEEDS),
        }
        if error is not None:
            cell["target_error"] = error
        per_seed = [
            {"seed": s, "status": "resolved", "n_star": pstar_of_x(x), "bound": None} for s in SEEDS
        ]
        put(cell, {"per_seed": per_seed, "median": {}, "evaluations": []})


def _claim(stat, params, rule):
    # decided by the profile read (quick here), so evaluate runs its statistic
    c = rules.Claim("E9-P-x", "planted", "", stat, (), dict(params, a=NET), rule, "quick")
    return claims.evaluate(c, EXP)


def test_claims_read_classification_cells_at_their_own_threshold(store):
    # classification searches at the published thresholds (0.1 x (1 - 1/n_c)), every
    # cell inside the regime (m = 2, L = 3: 24 of 256 and 48 of 512 strings, below 10%)
    _put_cells(store, 2, lambda x: 3.0 * x, eps=0.05)
    _put_cells(store, 4, lambda x: 6.0 * x, eps=0.075)
    # decoys the claims must not read: regression searches, and classification
    # searches at another eps, both far off the law
    _put_cells(store, 2, lambda x: 4.0 * x**3, eps=0.05, error=None)
    _put_cells(store, 4, lambda x: 4.0 * x**3, eps=0.3)
    fam = {"name": "rhm", "v": 8}
    for n_c in (2, 4):
        out = _claim(
            "pstar_scaling",
            {"family": dict(fam, n_c=n_c), "x": "m^L", "exponent": 1, "eps": "pstar"},
            RULE_SLOPE,
        )
        assert out["value"] == pytest.approx(0.0, abs=1e-9) and out["verdict"] == SUPPORTED
        assert out["depths_resolved"] == len(X) and out["data"]["beyond_regime"] == {}
    out = _claim("pstar_ratio", {"family": fam, "n_c": [2, 4], "eps": "pstar"}, RULE_RATIO)
    assert out["value"] == pytest.approx(0.0, abs=1e-9)  # log2(6 / 3) - log2(4 / 2)
    assert out["verdict"] == SUPPORTED and out["data"]["beyond_regime"] == {}


def test_the_e9_config_claims_parse_with_the_depth_rule():
    cfg = config.load_config(
        os.path.join(os.path.dirname(__file__), "..", "experiments", "e9_rhm.toml")
    )
    ours = {c.id: c for c in claims.parse_claims(cfg, "e9") if c.id.startswith("E9-P-")}
    assert set(ours) == {"E9-P-nc2", "E9-P-nc4", "E9-P-nc-ratio"}
    assert all(c.rule["min_depths"] == 3 and c.profile == "paper" for c in ours.values())


def _put_one(put, n_c, m, L, per_seed, *, eps=0.05):
    cell = {"method": "net_search", "target": f"rhm:v=8,n_c={n_c},m={m},s=2,L={L},seed=0",
            "arch": f"tree:share=1,arity=2,L={L}", "eps": eps, "seeds": list(SEEDS),
            "target_error": "classification"}  # fmt: skip
    put(cell, {"per_seed": per_seed, "median": {}, "evaluations": []})


def _resolved(n):
    return [{"seed": s, "status": "resolved", "n_star": n, "bound": None} for s in SEEDS]


# (m = 2, L = 3) has 256 valid strings at n_c = 2, so the regime's edge is 25.6 (10%):
# (a seed's P* as stored, how the claims read it: (low, high) of P*, by hand)
EDGE = 25.6
REGIME = [
    ({"status": "resolved", "n_star": 25.0, "bound": None}, (25.0, 25.0)),  # inside
    ({"status": "resolved", "n_star": 26.0, "bound": None}, (EDGE, math.inf)),  # beyond
    ({"status": "resolved", "n_star": 200.0, "bound": None}, (EDGE, math.inf)),
    ({"status": "right", "n_star": None, "bound": 20.0}, (20.0, math.inf)),  # a bound already
    ({"status": "right", "n_star": None, "bound": 30.0}, (EDGE, math.inf)),
    ({"status": "resolved", "n_star": 25.0, "lo": 20.0, "hi": 30.0}, (20.0, math.inf)),  # across
    ({"status": "resolved", "n_star": 15.0, "lo": 10.0, "hi": 20.0}, (10.0, 20.0)),  # inside
    ({"status": "left", "n_star": None, "bound": 8.0}, (0.0, 8.0)),  # at most n_min
]


@pytest.mark.parametrize("item, expected", REGIME)
def test_a_seed_beyond_the_regime_edge_reads_as_a_bound_at_it(item, expected):
    cells = {"m=2,L=3": ("rhm:v=8,n_c=2,m=2,s=2,L=3,seed=0", [dict(item, seed=0)], (2, 3))}
    out, clipped = nstar_statistics._regime_clip(cells)
    lo, hi = intervals.log_interval(out["m=2,L=3"][1][0])
    want = tuple(math.log(v) if 0 < v < math.inf else -math.inf if v == 0 else v for v in expected)
    assert (lo, hi) == pytest.approx(want)
    read_so = expected[1] == math.inf and item["status"] not in ("left", "right")
    read_so |= item["status"] == "right" and item["bound"] > EDGE  # a bound beyond the edge
    assert clipped == ({"m=2,L=3": (1, 1, pytest.approx(EDGE))} if read_so else {})


def test_a_cell_far_beyond_the_edge_is_evidence_not_a_dropped_point(store):
    # the law holds exactly on four cells (P* = 4 m^L, inside the regime); at the fifth,
    # (m = 2, L = 3), P* = 200 at every seed, far above the law's 32 and the edge 25.6.
    # Dropped, the four cells would read "supported"; read as a bound (P* > 25.6), the
    # slope is open below and the claim cannot be supported
    for key, x in X.items():
        m, L = (int(v.split("=")[1]) for v in key.split(","))
        _put_one(store, 2, m, L, _resolved(200.0 if key == "m=2,L=3" else 4.0 * x))
    fam = {"name": "rhm", "v": 8, "n_c": 2}
    out = _claim(
        "pstar_scaling", {"family": fam, "x": "m^L", "exponent": 1, "eps": "pstar"}, RULE_SLOPE
    )
    assert out["data"]["beyond_regime"] == {"m=2,L=3": len(SEEDS)}
    assert "m=2,L=3: 9 of 9 (edge 25.6)" in out["detail"]
    assert out["verdict"] != SUPPORTED and out["lo"] is None  # open below
    # the ratio reads the same seeds as bounds at both n_c
    for key, x in X.items():
        m, L = (int(v.split("=")[1]) for v in key.split(","))
        _put_one(store, 4, m, L, _resolved(8.0 * x), eps=0.075)  # m = 2, L = 3: 64 > 51.2
    out = _claim(
        "pstar_ratio", {"family": {"name": "rhm", "v": 8}, "n_c": [2, 4], "eps": "pstar"},
        RULE_RATIO,
    )  # fmt: skip
    assert out["data"]["beyond_regime"] == {"n_c=4 m=2,L=3": 9, "n_c=2 m=2,L=3": 9}
    # both n_c bounds above at (m = 2, L = 3): an unbounded ratio, no information, so the
    # cell drops from each seed's mean (the raw 64 / 200 would be far off the law's 2);
    # the other four cells are the law exactly
    assert out["depths_resolved"] == len(X) - 1
    assert out["value"] == pytest.approx(0.0, abs=1e-9) and out["verdict"] == SUPPORTED
    assert out["detail"].count("beyond the regime") == 1  # one sentence for both n_c


# ------------------------------------- nstar_scaling: censoring as bounds
def _law_recs(per_m):
    """{m: search record} with 8 identical seeds; per_m: {m: per-seed item (no seed)}."""
    recs = {}
    for m, item in per_m.items():
        per = [dict(item, seed=s) for s in range(8)]
        cens = {"right": "right", "left": "left"}.get(item["status"])
        med = item["n_star"] if item["status"] == "resolved" else item["bound"]
        recs[m] = {"median": {"n_star": med, "censored": cens}, "per_seed": per}
    return recs


def _pt(n):
    return {"status": "resolved", "n_star": float(n), "bound": None}


# (n* per m, the verdict of "n* ~ c m^2" within +-0.5 in the exponent); hand values: the
# law is n* = 3 m^2 = 12, 27, 48 at m = 2, 3, 4
SCALING = [
    ({2: _pt(12), 3: _pt(27), 4: _pt(48)}, SUPPORTED),  # the law
    ({2: _pt(12), 3: _pt(108), 4: _pt(768)}, NOT_SUPPORTED),  # n* ~ 3 m^4
    # m = 4 never reached by 480 (10x the law): a bound that refutes; dropped, the two
    # resolved values would sit exactly on the law
    ({2: _pt(12), 3: _pt(27), 4: {"status": "right", "n_star": None, "bound": 480.0}},
     NOT_SUPPORTED),
    # m = 4 beyond 40, below the law's 48: consistent with the law and with steeper ones
    ({2: _pt(12), 3: _pt(27), 4: {"status": "right", "n_star": None, "bound": 40.0}},
     INCONCLUSIVE),
    # m = 2 at most 12 (n_min): the slope is 2 or more, unbounded above
    ({2: {"status": "left", "n_star": None, "bound": 12.0}, 3: _pt(27), 4: _pt(48)},
     INCONCLUSIVE),
    # m = 2 at most 0.5: far below the law, a steep slope whatever its value
    ({2: {"status": "left", "n_star": None, "bound": 0.5}, 3: _pt(27), 4: _pt(48)},
     NOT_SUPPORTED),
]  # fmt: skip


@pytest.mark.parametrize("per_m, verdict", SCALING)
def test_nstar_scaling_reads_censored_values_as_bounds(monkeypatch, per_m, verdict):
    monkeypatch.setattr(nstar_statistics, "nstar_by_key", lambda *a: _law_recs(per_m))
    p = {"a": ["net_search", "tree:share=1,arity=2"], "eps": 0.3, "family": {"name": "rhm"},
         "x": "m", "law": "power", "exponent": 2,
         "rule": {"kind": "equivalence", "margin": 0.5, "min_depths": 3}}  # fmt: skip
    m = nstar_statistics.nstar_scaling(p, "e9_rhm")
    assert m.verdict == verdict
    if verdict == SUPPORTED:
        assert m.value == pytest.approx(0.0, abs=1e-9)


def test_nstar_scaling_exp_law_per_level(monkeypatch):
    # n* = 5 x 3^L at L = 2, 3, 4 (45, 135, 405): log(g / 3) = 0 exactly
    recs = _law_recs({L: _pt(5 * 3**L) for L in (2, 3, 4)})
    monkeypatch.setattr(nstar_statistics, "nstar_by_key", lambda *a: recs)
    p = {"a": ["net_search", "tree:share=1,arity=2"], "eps": 0.3, "family": {"name": "rhm"},
         "x": "L", "law": "exp", "base": 3,
         "rule": {"kind": "equivalence", "margin": 0.405, "min_depths": 3}}  # fmt: skip
    m = nstar_statistics.nstar_scaling(p, "e9_rhm")
    assert m.value == pytest.approx(0.0, abs=1e-9) and m.verdict == SUPPORTED
    assert "prefactor c = 5 " in m.detail
