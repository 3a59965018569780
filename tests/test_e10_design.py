"""E10's claims each name the smallest profile whose design holds the units
its rule needs before "supported" is possible, counted from the configs
(never from results), or full where no profile does: families with a net
point the family-held-out law can predict (E10-net, E10-coverage); (family,
depth, eps) units with a kernel point where the theory is valid and within
the search's n_max (E10-kernel), or with a net-and-kernel pair, a kernel
theory and a law (E10-winner). The minima are
the statistics' own (the order-statistic CI's seeds; the fewest units at
which a Clopper-Pearson proportion can read supported), recomputed here from
the binomial law."""

import collections
import functools
import os

import pytest
from conftest import ROOT
from scipy import stats

from ntkgap.runs import config as runs_config
from ntkgap.runs import scaling
from ntkgap.targets import constituents, parse_target
from ntkgap.verdicts import predictions, proportions, selection

PROFILES = ("quick", "paper", "full")
CONFIG = os.path.join(ROOT, "experiments", "e10_predict.toml")
CLAIMS = {c["id"]: c for c in runs_config.load_config(CONFIG)["claim"]}


def _searches(profile):
    """{(eps, experiment, target, arch): {method: cell}} of the sources'
    searches at the claims' levels (regression error only) in one profile
    (``predictions.collect`` pairs a net and a kernel search within one
    experiment)."""
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
                    out[(eps, exp, cell["target"], cell["arch"])][cell["method"]] = cell
    return out


def _count(target) -> int:
    return constituents.of_target(parse_target(target))


def _unit(eps, target) -> tuple:
    return predictions.family_label(target), _count(target), eps


def _law_units(found) -> set:
    """(family, C, eps) of each net point the law fitted without its family
    could predict by design: the other families at its level hold >=
    MIN_POINTS net points at >= 2 constituent counts."""
    net = [_unit(e, t) for (e, _, t, _), m in found.items() if "net_search" in m]
    out = set()
    for fam, C, e in net:
        others = [c for f2, c, e2 in net if e2 == e and f2 != fam]
        if len(others) >= predictions.MIN_POINTS and len(set(others)) >= 2:
            out.add((fam, C, e))
    return out


@functools.cache
def _theory(e, t, a):
    th = predictions.kernel_theory(t, a, e)
    return th if th["n_star"] is not None else None


def _units_where(found, ok) -> int:
    """The (family, C, eps) units holding a pair for which ``ok`` holds
    (checked until one does: the theory of a deep tree costs seconds)."""
    by_unit = collections.defaultdict(list)
    for (e, _, t, a), m in found.items():
        by_unit[_unit(e, t)].append((e, t, a, m))
    return sum(any(ok(*x) for x in xs) for xs in by_unit.values())


@functools.cache
def _units(profile: str, claim: str) -> int:
    """The most units ``claim`` could score in ``profile``."""
    found = _searches(profile)
    law = _law_units(found)
    if claim in ("E10-net", "E10-coverage"):  # both count families
        return len({fam for fam, _, _ in law})
    if claim == "E10-winner":
        return _units_where(
            found, lambda e, t, a, m: len(m) == 2 and _unit(e, t) in law and _theory(e, t, a)
        )

    def kernel_ok(e, t, a, m):
        th = _theory(e, t, a) if "ntk_search" in m else None
        return bool(th and th["theory_valid"] and th["n_star"] <= m["ntk_search"]["n_max"])

    return _units_where(found, kernel_ok)


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
    assert NEEDED["E10-winner"] == proportions.fewest_to_support(
        {"kind": "above", "threshold": 0.8}, 0.0
    )


@pytest.mark.parametrize("claim", sorted(CLAIMS))
def test_each_claim_names_the_smallest_profile_that_holds_its_units(claim):
    counts = {}
    for p in PROFILES:  # smallest first; stops at the first that holds
        counts[p] = _units(p, claim)
        if counts[p] >= NEEDED[claim]:
            break
    if counts[p] < NEEDED[claim]:  # no profile: full, the config saying so
        assert claim in SHORT_EVERYWHERE, (claim, counts)
        assert CLAIMS[claim]["profile"] == "full", (claim, counts)
    else:
        assert claim not in SHORT_EVERYWHERE, (claim, counts)
        assert CLAIMS[claim]["profile"] == p, (claim, counts)


#: claims no profile holds enough units for (experiments/e10_predict.toml would say so);
#: none since the config's one-depth families (E10-coverage: paper 19 families, full 24)
SHORT_EVERYWHERE: set = set()


@pytest.mark.parametrize(
    "profile,claim,count",
    [
        # experiments/e10_predict.toml's header states these
        ("paper", "E10-net", 19),
        ("paper", "E10-kernel", 13),
        ("paper", "E10-winner", 31),
        ("paper", "E10-coverage", 19),
        ("full", "E10-net", 24),
        ("full", "E10-coverage", 24),
        ("full", "E10-winner", 38),
    ],
)
def test_the_counts_the_config_states(profile, claim, count):
    assert _units(profile, claim) == count


def _data_of(cell) -> tuple:
    """What fixes a search's data and target: its method, predictor, target,
    level, seeds, search range and split (not a net's training budget,
    which full sets to E4's full one)."""
    return tuple(str(cell.get(k)) for k in DATA_KEYS)


DATA_KEYS = ("method", "arch", "target", "eps", "seeds", "n_min", "n_max", "n_test", "resolution")


BUDGET = ("width", "lr", "steps", "batch", "eval_every", "patience")


def _budget(cell) -> tuple:
    return tuple(str(cell.get(k)) for k in BUDGET)


def _expand(name: str, profile: str) -> list[dict]:
    cfg = runs_config.load_config(os.path.join(ROOT, "experiments", f"{name}.toml"))
    return runs_config.expand(cfg, profile, validate=False)


def _without_n_max(data: tuple) -> tuple:
    """``_data_of``'s tuple without the search's upper end."""
    at = DATA_KEYS.index("n_max")
    return data[:at] + data[at + 1 :]


def test_full_repeats_every_paper_cell_of_e10_but_those_e4_full_holds():
    # full does not include paper (a profile is its own grid): the copies must not drift;
    # full may search a paper cell farther (a larger n_max, the same seeds and test set)
    paper = {_data_of(c) for c in _expand("e10_predict", "paper")}
    cells = _expand("e10_predict", "full")
    full = {_data_of(c) for c in cells}
    reach = {_without_n_max(_data_of(c)): float(c["n_max"]) for c in cells}
    n_max = lambda m: float(m[DATA_KEYS.index("n_max")])  # noqa: E731
    farther = {m for m in paper - full if reach.get(_without_n_max(m), 0.0) > n_max(m)}
    missing = paper - full - farther
    assert len(farther) == 18  # the nine one-depth pairs
    assert missing and all("arity=2,node=linear-plus" in m[2] for m in missing)
    e4 = {
        (c["method"], c["arch"], c["target"], c["eps"])
        for c in _expand("e4_trees", "full")
        if c["method"] in ("net_search", "ntk_search")
    }
    assert all((m[0], m[1], m[2], float(m[3])) in e4 for m in missing)


def test_full_trains_e10_nets_at_e4_full_budget():
    # E4's full tree nets: one design budget (5,000 steps) and its reruns at another
    e4 = collections.Counter(
        _budget(c)
        for c in _expand("e4_trees", "full")
        if c["method"] == "net_search" and c["arch"].startswith("tree:arity")
    )
    e10 = {_budget(c) for c in _expand("e10_predict", "full") if c["method"] == "net_search"}
    design = e4.most_common(1)[0][0]
    assert e10 == {design} and design[BUDGET.index("steps")] == "5000"
