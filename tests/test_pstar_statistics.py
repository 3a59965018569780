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
from ntkgap.verdicts import claims, interval_statistics, rules
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
    # classification searches at the published thresholds (0.1 x (1 - 1/n_c))
    _put_cells(store, 2, lambda x: 4.0 * x, eps=0.05)
    _put_cells(store, 4, lambda x: 8.0 * x, eps=0.075)
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
        # (m = 2, L = 3): 4 x 8 = 32 of 256 strings (n_c = 2), 64 of 512 (n_c = 4): above
        # 10%, outside the regime, so left out
        assert out["depths_resolved"] == len(X) - 1
        assert out["data"]["outside_regime"] == ["m=2,L=3"]
    out = _claim("pstar_ratio", {"family": fam, "n_c": [2, 4], "eps": "pstar"}, RULE_RATIO)
    assert out["value"] == pytest.approx(0.0, abs=1e-9)  # log2(8 / 4) - log2(4 / 2)
    assert out["verdict"] == SUPPORTED
    assert out["data"]["outside_regime"] == ["n_c=2 m=2,L=3", "n_c=4 m=2,L=3"]
    assert out["depths_resolved"] == len(X) - 1


def test_the_ratio_leaves_a_cell_outside_the_regime_at_either_n_c(store):
    # n_c = 4 inside the regime everywhere (m = 2, L = 3: 40 of 512 strings), n_c = 2
    # outside at (m = 2, L = 3) only (200 of 256), where the ratio would be far off the law
    for key, x in X.items():
        m, L = (int(v.split("=")[1]) for v in key.split(","))
        _put_one(store, 4, m, L, _resolved(40.0 if key == "m=2,L=3" else 8.0 * x), eps=0.075)
        _put_one(store, 2, m, L, _resolved(200.0 if key == "m=2,L=3" else 4.0 * x))
    fam = {"name": "rhm", "v": 8}
    out = _claim("pstar_ratio", {"family": fam, "n_c": [2, 4], "eps": "pstar"}, RULE_RATIO)
    assert out["data"]["outside_regime"] == ["n_c=2 m=2,L=3"]
    assert out["depths_resolved"] == len(X) - 1
    assert out["value"] == pytest.approx(0.0, abs=1e-9) and out["verdict"] == SUPPORTED


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


def _above(bound):
    return [{"seed": s, "status": "right", "n_star": None, "bound": bound} for s in SEEDS]


# (m = 2, L = 3) has 256 valid strings at n_c = 2, so the regime's edge is 25.6:
# (its per-seed P*, whether the cell stays in the claim)
REGIME = [
    (_resolved(25.0), True),  # 9.8%: inside
    (_resolved(26.0), False),  # 10.2%: outside
    (_resolved(200.0), False),  # 78%: far outside
    (_above(20.0), True),  # censored above 20: may still lie inside
    (_above(30.0), False),  # censored above 30: outside whatever its value
]


@pytest.mark.parametrize("per_seed, inside", REGIME)
def test_a_cell_outside_the_regime_is_left_out_and_named(store, per_seed, inside):
    # the law holds exactly on the other cells (P* = 4 m^L, all inside the regime)
    for key, x in X.items():
        m, L = (int(v.split("=")[1]) for v in key.split(","))
        if key != "m=2,L=3":
            _put_one(store, 2, m, L, _resolved(4.0 * x))
    _put_one(store, 2, 2, 3, per_seed)
    fam = {"name": "rhm", "v": 8, "n_c": 2}
    out = _claim(
        "pstar_scaling", {"family": fam, "x": "m^L", "exponent": 1, "eps": "pstar"}, RULE_SLOPE
    )
    assert out["data"]["outside_regime"] == ([] if inside else ["m=2,L=3"])
    assert ("outside the regime" in out["detail"]) is not inside
    assert out["depths_resolved"] + out["depths_bounded"] == len(X) - (0 if inside else 1)
    if not inside:  # the law on the cells left: exactly supported
        assert out["value"] == pytest.approx(0.0, abs=1e-9) and out["verdict"] == SUPPORTED
