"""E10's claim statistics: the law's and the theory's predictions scored
leave-one-family-out on the stored results of E4, E8, E9 and E10.

E10 predicts each held-out point from the other families' points at that
point's eps (E10's params list the levels read). E10's claims count units,
never points. E10-kernel and E10-winner: one per (family, depth, eps), whose
architecture variants share targets, seeds and splits (their distances'
median is one value; their share predicted right one count). E10-net and
E10-coverage: one per family, since a held-out family's depths share one
fitted law, whose error there is one family-level offset (coverage is
counted per family for this reason); the kernel theory fits nothing, so its
depths stay separate units. E10-net's detail also scores each family by a
law fitted without its node function's every arity (``kin_of``), a
sensitivity check that decides nothing. The law, the intervals and
``predict`` are :mod:`ntkgap.verdicts.predictions`; the distances and
coverage :mod:`ntkgap.verdicts.sealing`.

References:
    Dichotomy of kernels and networks on compositional targets (arXiv
    2607.06382); Clopper & Pearson, Biometrika 26 (1934) 404-413.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ntkgap._infra import config
from ntkgap.errors import UsageError
from ntkgap.runs import store
from ntkgap.verdicts import intervals, proportions, rules, selection
from ntkgap.verdicts.predictions import (
    INF,
    NET_METHOD,
    PI_LEVEL,
    SOURCES,
    Point,
    collect,
    combine,
    eps_levels,
    family_label,
    fit_law,
    kernel_theory,
    kin_of,
    law_predict,
)
from ntkgap.verdicts.sealing import _winner_of, coverage_state, distance


def _loo_row(pt: Point, law: dict, eps: float, kernel_fn) -> dict:
    """One held-out point predicted by a law fitted without it (without its
    family, or its node function: ``leave_one_out``'s ``held``)."""
    net = law_predict(law, pt.C)
    row = {
        "group": pt.group,
        "family": pt.family,
        "target": pt.target,
        "arch": pt.arch,
        "eps": eps,
        "C": pt.C,
        "net": pt.net,
        "kernel": pt.kernel,
        "net_pred": net["n_star"],
        "net_interval": net["interval"],
        "kernel_pred": None,
        "kernel_valid": None,
        "winner_pred": None,
        "winner_measured": None,
    }
    if pt.kernel is not None:
        kern = kernel_fn(pt.target, pt.arch, eps)
        both = combine(kern, net, law)
        row.update(kernel_pred=kern["n_star"], kernel_valid=kern["theory_valid"])
        row.update(winner_pred=both["winner"], winner_measured=_winner_of(pt.kernel, pt.net))
    return row


def leave_one_out(points, kernel_fn=kernel_theory, fit=None, held=None) -> list[dict]:
    """Each family held out in turn (all its architecture variants): for
    each eps of it, the law fitted on the other families' points at that eps
    only, the held-out family's points predicted and compared.

    Args:
        points: ``collect``'s Points (each is read at its own eps; those
            without a net search are not predicted here).
        kernel_fn: (target, arch, eps) -> ``kernel_theory``'s dict.
        fit: the law fitter (default ``fit_law``; a test may watch it).
        held: Point -> the key held out together (default its family;
            ``kin_of`` holds out every arity of a node function at once).

    Returns:
        list of rows, one per predicted point: ``group``, ``family``,
        ``target``, ``arch``, ``eps``, ``C``, ``net`` / ``kernel`` (measured
        log intervals, kernel None where not stored), ``net_pred``,
        ``net_interval``, ``kernel_pred`` (None where not stored or the
        theory is absent), ``kernel_valid``, ``winner_pred``,
        ``winner_measured``. A (family, eps) whose law is refused (too few
        points elsewhere) has no row.
    """
    fit = fit or fit_law
    held = held or (lambda pt: pt.family)
    rows = []
    keyed = [(held(pt), pt) for pt in points if pt.net is not None]  # each key once
    for key, level in sorted({(k, pt.eps) for k, pt in keyed}):
        at = [(k, pt) for k, pt in keyed if abs(pt.eps - level) <= selection.EPS_TOL]
        try:
            law = fit([pt for k, pt in at if k != key])
        except UsageError:
            continue
        rows += [_loo_row(pt, law, level, kernel_fn) for k, pt in at if k == key]
    return rows


def kernel_rows(points, kernel_fn=kernel_theory) -> list[dict]:
    """Theory against measurement for the own-architecture kernel: every
    point with a kernel search, whether or not a net search is stored
    beside it (no law is fitted: the theory sees no measurement).

    Args:
        points: ``collect``'s Points.
        kernel_fn: (target, arch, eps) -> ``kernel_theory``'s dict.

    Returns:
        list of rows: ``group``, ``family``, ``target``, ``arch``, ``eps``,
        ``C``, ``kernel`` (measured log interval), ``kernel_pred`` (None
        where no exact spectrum exists), ``kernel_valid`` and
        ``kernel_n_max`` (the search's largest n).
    """
    rows = []
    for pt in points:
        if pt.kernel is None:
            continue
        kern = kernel_fn(pt.target, pt.arch, pt.eps)
        rows.append(
            {
                "group": pt.group,
                "family": pt.family,
                "target": pt.target,
                "arch": pt.arch,
                "eps": pt.eps,
                "C": pt.C,
                "kernel": pt.kernel,
                "kernel_pred": kern["n_star"],
                "kernel_valid": kern["theory_valid"],
                "kernel_n_max": pt.kernel_n_max,
            }
        )
    return rows


@functools.lru_cache(maxsize=8)
def e10_rows(sources: tuple, eps: tuple, profile: str | None, budget: str = "base") -> tuple:
    """E10's points and rows from the stored results, computed once for the
    four claims and the figure.

    Args:
        sources: experiment names (a tuple: the result is cached).
        eps: the levels (``eps_levels``).
        profile: as ``store.results`` (the claims pass ``config.profile()``).
        budget: which of a pair's stored net searches (``_preference``).

    Returns:
        (points, leave-one-out rows, kernel rows), each a tuple.
    """
    points = collect(sources, eps, profile=profile, budget=budget)
    memo: dict = {}

    def kern(*key):  # one theory per (target, arch, eps) for both row kinds
        if key not in memo:
            memo[key] = kernel_theory(*key)
        return memo[key]

    return tuple(points), tuple(leave_one_out(points, kern)), tuple(kernel_rows(points, kern))


def _no_theory(*_) -> dict:
    """A kernel prediction left out (the node-function hold-out scores nets only)."""
    return {"n_star": None, "censored": False, "theory_valid": False}


def e10_kin_rows(sources: tuple, eps: tuple, profile: str | None, budget: str = "base") -> tuple:
    """E10-net's sensitivity rows: leave-one-out holding out a node function
    with all its arities (``kin_of``), so that no sibling of another arity
    stays in the fit; net side only (not cached: the points are ``e10_rows``'s
    and the fits take milliseconds).

    Args:
        sources, eps, profile, budget: as ``e10_rows``.

    Returns:
        tuple of leave-one-out rows, scored as ``e10_net``'s (by family); no
        kernel theory (``kernel_pred`` and ``winner_pred`` None).
    """
    points = e10_rows(*_cache_key(sources, eps, profile, budget))[0]
    return tuple(leave_one_out(points, _no_theory, held=lambda pt: kin_of(pt.target)))


def _cache_key(sources: tuple, eps: tuple, profile: str | None, budget: str) -> tuple:
    """``e10_rows``'s arguments, the budget only where it is not ``"base"``:
    one cache entry for the claims, the sensitivity rows and the figure's
    three-argument call."""
    return (sources, eps, profile) + ((budget,) if budget != "base" else ())


def _read(params: dict) -> tuple:
    """The arguments of ``e10_rows`` a claim's rows are read with
    (``_cache_key``; the budget is ``"max"`` only in the claims' recheck)."""
    sources = tuple(params.get("sources", SOURCES))
    return _cache_key(sources, eps_levels(params["eps"]), config.profile(),
                      params.get("budget", "base"))  # fmt: skip


def larger_budgets(params: dict) -> list[str]:
    """The net pairs the claims' budget recheck may read differently: those
    with stored searches at more than one step budget (a source's robustness
    reruns), each as "experiment: target | arch".

    Args:
        params: a claim's params (``sources``, ``eps``).

    Returns:
        list of str, in source, level and storage order.
    """
    sources, levels, profile = _read(params)[:3]
    out = []
    for exp in sources:  # one read of a source's stored nets for all its levels
        steps: dict = {level: {} for level in levels}
        for cell, _res in store.results(exp, NET_METHOD, profile=profile):
            if family_label(cell["target"]) is None:
                continue
            for level in (e for e in levels if selection.at(cell, e)):
                pair = (cell["target"], cell["arch"])
                steps[level].setdefault(pair, set()).add(cell.get("steps", 0))
        out += [f"{exp}: {t} | {a}" for at in steps.values() for (t, a), ks in at.items()
                if len(ks) > 1]  # fmt: skip
    return out


def _rows(params: dict, which: int = 0) -> list[dict]:
    """E10's leave-one-out rows (``which`` 0) or kernel rows (1)."""
    return list(e10_rows(*_read(params))[1 + which])


def _kin_rows(params: dict) -> list[dict]:
    """E10-net's sensitivity rows (``e10_kin_rows``) for the claim's params."""
    return list(e10_kin_rows(*_read(params)))


def unit_of(row: dict) -> tuple:
    """A row's (family, depth) unit.

    Args:
        row: a leave-one-out or kernel row.

    Returns:
        (family, C, eps).
    """
    return row["family"], row["C"], row["eps"]


def family_of_row(row: dict) -> tuple:
    """A row's family unit.

    Args:
        row: a leave-one-out or kernel row.

    Returns:
        (family,).
    """
    return (row["family"],)


def _by_unit(rows, key=unit_of) -> dict:
    """{unit: [rows]} in sorted unit order."""
    out: dict = {}
    for r in sorted(rows, key=key):
        out.setdefault(key(r), []).append(r)
    return out


def _unit_shares(rows, key, hit) -> tuple[float, int]:
    """(the sum over units of the share of their rows for which ``hit``
    holds, the number of units)."""
    units = _by_unit(rows, key)
    return sum(sum(map(hit, us)) / len(us) for us in units.values()), len(units)


def _median_claim(name: str, rows: list, dist, rule: dict, key=unit_of) -> rules.Measured:
    """Median and order-statistic CI over units (``key``) of log10 distance
    intervals, a unit's interval the median of its rows' (``dist(row)``):
    the lower end from their lower ends, the upper from their upper ends (a
    censored row can only widen it)."""
    units = _by_unit(rows, key)
    what = "(family, depth) units" if key is unit_of else "families"
    if not units:
        return rules.Measured(None, detail=f"{name}: no scored point", verdict=rules.INCONCLUSIVE)
    sets = [
        intervals.median_ci([dist(r) for r in us], min_seeds=INF)["median"] for us in units.values()
    ]
    ci = intervals.median_ci(sets)
    lo, hi = ci["median"]
    verdict = rules.rule_verdict(rule, ci["lo"], ci["hi"])
    families = len({u[0] for u in units})
    return rules.Measured(
        lo if lo == hi else None,
        None if ci["lo"] in (None, -INF) else ci["lo"],
        None if ci["hi"] in (None, INF) else ci["hi"],
        seeds=len(sets),
        ci_method=ci["method"] and ci["method"].replace("seeds", what),
        detail=f"{name}: median in [{lo:.3g}, {hi:.3g}] over {len(sets)} {what}"
        + (f" of {families} families" if key is unit_of else "")
        + f" ({len(rows)} points: depths and architecture variants"
        + f"; {sum(b == INF for _, b in sets)} of the {len(sets)} open above: censored)"
        + (f" ({ci['reason'].replace('seeds', what)})" if ci["reason"] else ""),
        hi_censored=ci["hi"] == INF,
        verdict=verdict,
        data={"sets": sets, "units": [list(map(str, u)) for u in units]},
    )


def e10_kernel(params: dict, experiment: str) -> rules.Measured:
    """E10-kernel: median over (family, depth) units of |log10(theory n* /
    measured kernel n*)| where the theory is valid and its n* within the
    kernel search's n_max (``params``: ``eps``, ``sources``, ``rule``). The
    scope is decided by the prediction alone: beyond n_max the measurement
    can only be a bound the theory sits inside (distance [0, inf)).

    Args:
        params: the claim's params.
        experiment: unused (E10 reads ``sources``).

    Returns:
        Measured.
    """
    rows = [
        r
        for r in _rows(params, which=1)
        if r["kernel_valid"] and r["kernel_pred"] <= r["kernel_n_max"]
    ]
    return _median_claim(
        "|log10 kernel pred/measured|",
        rows,
        lambda r: distance(r["kernel_pred"], r["kernel"]),
        params["rule"],
    )


def e10_net(params: dict, experiment: str) -> rules.Measured:
    """E10-net: median over families of |log10(law n* / measured net n*)|
    (a family's value the median over its depths and variants), the law
    fitted without the family. The detail adds a sensitivity check that
    decides nothing: the same median over families, each predicted by a law
    fitted without its node function's every arity (``e10_kin_rows``), since
    a family is one arity and its siblings of other arities stay in its fit
    (a node function whose law is refused drops its families: the count
    says so).

    Args:
        params: the claim's params (``eps``, ``sources``, ``rule``).
        experiment: unused.

    Returns:
        Measured.
    """
    rule = params["rule"]
    out = _median_claim(
        "|log10 net pred/measured|", _rows(params), _net_distance, rule, family_of_row
    )
    check = _median_claim(
        "sensitivity, each node function held out with all its arities",
        _kin_rows(params), _net_distance, rule, family_of_row,
    )  # fmt: skip
    ci = _ci_text(check)
    out.detail += f"; {check.detail}" + (f", CI {ci}" if ci else "")
    return out


def _net_distance(row: dict) -> tuple:
    """A leave-one-out row's |log10 law / measured net n*| interval."""
    return distance(row["net_pred"], row["net"])


def _ci_text(m: rules.Measured) -> str:
    """A Measured's CI as [lo, hi] (open ends as -inf / inf), "" without one."""
    if m.lo is None and m.hi is None and not m.hi_censored:
        return ""
    lo = "-inf" if m.lo is None else f"{m.lo:.3g}"
    return f"[{lo}, {'inf' if m.hi is None else f'{m.hi:.3g}'}]"


def e10_winner(params: dict, experiment: str) -> rules.Measured:
    """E10-winner: the share of (family, depth) units whose measured winner
    (medians' ratio interval excludes 1) was predicted right; a unit with
    several architecture variants counts the share of its decided variants
    predicted right (variants without a kernel prediction are left out and
    counted in the detail).

    Args:
        params: the claim's params (``eps``, ``sources``, ``rule``).
        experiment: unused.

    Returns:
        Measured (value the share, Clopper-Pearson CI on the unit count).
    """
    decided = [r for r in _rows(params) if r["winner_measured"] is not None]
    rows = [r for r in decided if r["winner_pred"] is not None]
    k, m = _unit_shares(rows, unit_of, lambda r: r["winner_pred"] == r["winner_measured"])
    name = "(family, depth) units' winner predicted right"
    out = proportions.binomial(name, k, m, params["rule"])
    if len(rows) < len(decided):  # no exact kernel spectrum: no prediction to score
        out.detail += f" ({len(decided) - len(rows)} decided point(s) without kernel theory)"
    return out


def e10_coverage(params: dict, experiment: str) -> rules.Measured:
    """E10-coverage: prediction-interval coverage minus its nominal level,
    counted per family (each family's share of covered points, summed over
    families, over the number of families: its depths and architecture
    variants share the law's error). A censored point overlapping its
    interval is undetermined (``coverage_state``): the count is then a
    bound, [covered, covered + undetermined], and the CI runs from the
    lower count's lower end to the upper count's upper end.

    Args:
        params: the claim's params (``eps``, ``sources``, ``rule``).
        experiment: unused.

    Returns:
        Measured (value coverage - nominal; Clopper-Pearson CI on the
        per-family count).
    """
    rows = _rows(params)
    state = lambda r: coverage_state(r["net_interval"], r["net"])  # noqa: E731
    k, m = _unit_shares(rows, family_of_row, lambda r: state(r) is True)
    k_hi, _ = _unit_shares(rows, family_of_row, lambda r: state(r) is not False)
    out = proportions.binomial(
        "families' coverage", k, m, params["rule"], shift=PI_LEVEL, k_hi=k_hi
    )
    if rows:  # how much a covered point says: a wide interval covers cheaply
        width = float(np.median([math.log10(b / a) for a, b in (r["net_interval"] for r in rows)]))
        open_ = [r for r in rows if state(r) is None]
        out.detail += (
            f"; {len(open_)} of {len(rows)} points undetermined (a censored bound or a bracket"
            f" across an end of its interval), in {len({r['family'] for r in open_})}"
            f" families; the intervals' median width {width:.2f} decades (coverage <= 1:"
            " too wide an interval is never a miss; E10-net's distance says how near the"
            " law's point lies)"
        )
    return out


#: E10's claim statistics by name (``ntkgap.verdicts.claims.STATISTICS`` takes them from here)
CLAIM_STATISTICS = {
    "e10_kernel": e10_kernel,
    "e10_net": e10_net,
    "e10_winner": e10_winner,
    "e10_coverage": e10_coverage,
}
