"""E10's claims each name the smallest profile whose design holds the units
its rule needs before any verdict but "inconclusive" is possible, counted
from the configs (never from results): net points for E10-net, kernel
points where the theory is valid and within the search's n_max for
E10-kernel, net-and-kernel pairs for E10-winner and groups for E10-coverage.
The minima are the statistics' own (the order-statistic CI's seeds; the
fewest units at which a Clopper-Pearson proportion can read supported),
recomputed here from the binomial law."""

import collections
import functools
import os

import pytest
from conftest import ROOT
from scipy import stats

from ntkgap.runs import config as runs_config
from ntkgap.runs import scaling
from ntkgap.targets import constituents, parse_target
from ntkgap.verdicts import predictions, selection

PROFILES = ("quick", "paper", "full")
CONFIG = os.path.join(ROOT, "experiments", "e10_predict.toml")
CLAIMS = {c["id"]: c for c in runs_config.load_config(CONFIG)["claim"]}


def _searches(profile):
    """{(eps, target, arch): {method: cell}} of the sources' searches at the
    claims' levels (regression error only) in one profile."""
    params = CLAIMS["E10-net"]["params"]
    out = collections.defaultdict(dict)
    for exp in params["sources"]:
        cfg = runs_config.load_config(os.path.join(ROOT, "experiments", f"{exp}.toml"))
        if not runs_config.has_profile(cfg, profile):
            continue
        for cell in runs_config.expand(cfg, profile, validate=False):
            if cell["method"] not in ("net_search", "ntk_search") or cell.get("target_error"):
                continue
            if predictions.family_label(cell["target"]) is None:
                continue
            for eps in params["eps"]:
                if selection.at(cell, eps):
                    out[(eps, cell["target"], cell["arch"])][cell["method"]] = cell
    return out


def _group(target, arch):
    return f"{predictions.family_label(target)} | {predictions.arch_variant(arch)}"


def _count(target) -> int:
    return constituents.of_target(parse_target(target))


def _law_points(found) -> list:
    """(eps, group) of each net point the leave-one-out law could predict by
    design: the other groups at its level hold >= MIN_POINTS net points at
    >= 2 constituent counts."""
    net = [(e, _group(t, a), _count(t)) for (e, t, a), m in found.items() if "net_search" in m]
    out = []
    for e, g, _ in net:
        others = [c for e2, g2, c in net if e2 == e and g2 != g]
        if len(others) >= predictions.MIN_POINTS and len(set(others)) >= 2:
            out.append((e, g))
    return out


@functools.cache
def _units(profile: str, claim: str) -> int:
    """The most units ``claim`` could score in ``profile``."""
    found = _searches(profile)
    if claim == "E10-net":
        return len(_law_points(found))
    if claim == "E10-coverage":
        return len(set(_law_points(found)))
    if claim == "E10-winner":
        return sum(len(m) == 2 for m in found.values())
    kernel = 0
    for (e, t, a), m in found.items():
        if "ntk_search" in m:
            th = predictions.kernel_theory(t, a, e)
            ok = th["theory_valid"] and th["n_star"] is not None
            kernel += bool(ok and th["n_star"] <= m["ntk_search"]["n_max"])
    return kernel


def _fewest_supportable(threshold: float, shift: float) -> int:
    """The fewest m at which all m of m has a Clopper-Pearson 0.95 lower end
    above ``threshold`` (after subtracting ``shift``)."""
    m = 1
    while stats.beta.ppf(0.025, m, 1) - shift <= threshold:
        m += 1
    return m


NEEDED = {
    "E10-net": scaling.MIN_SEEDS_FOR_CI,
    "E10-kernel": scaling.MIN_SEEDS_FOR_CI,
    "E10-winner": _fewest_supportable(0.8, 0.0),
    "E10-coverage": _fewest_supportable(-0.15, predictions.PI_LEVEL),
}


def test_the_binomial_minimum_by_hand():
    # 0.025 ** (1 / 17) = 0.805 > 0.8 and 0.025 ** (1 / 16) = 0.794
    assert NEEDED["E10-winner"] == NEEDED["E10-coverage"] == 17
    assert NEEDED["E10-winner"] == predictions._fewest_to_support(
        {"kind": "above", "threshold": 0.8}, 0.0
    )


@pytest.mark.parametrize("claim", sorted(CLAIMS))
def test_each_claim_names_the_smallest_profile_that_holds_its_units(claim):
    counts = {}
    for p in PROFILES:  # smallest first; stops at the first that holds
        counts[p] = _units(p, claim)
        if counts[p] >= NEEDED[claim]:
            break
    assert counts[p] >= NEEDED[claim], (claim, counts)
    assert CLAIMS[claim]["profile"] == p, (claim, counts)


@pytest.mark.parametrize(
    "profile,claim,count",
    [
        # experiments/e10_predict.toml's header states these
        ("paper", "E10-net", 14),
        ("paper", "E10-coverage", 6),
        ("paper", "E10-winner", 16),
        ("full", "E10-coverage", 28),
        ("full", "E10-winner", 69),
    ],
)
def test_the_counts_the_config_states(profile, claim, count):
    assert _units(profile, claim) == count
