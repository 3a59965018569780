"""The statistics of the dichotomy's n* claims on censored data, computed by
interval arithmetic from the building blocks of ``ntkgap.verdicts.intervals``.

Every per-seed n* is an interval of log n* (``intervals.log_interval``); per
depth, the ratio of two predictors of the same seed is an interval
(``intervals.ratio_interval``). A growth statistic (``nstar_ratio_growth``,
``kernel_convexity``, ``net_power``, ``fourier_fit``) is a linear functional
of a seed's per-depth log values, which over the seed's box of intervals
ranges over an exact set (``intervals.seed_range``); ``nstar_ratio`` takes
the ratio depth by depth. Median and CI over seeds of these interval sets
come from ``intervals.median_ci`` (order statistics of the lower and upper
ends). A seed is decided when its whole set lies on one side of the rule.

Verdicts: a rule (``above`` / ``below`` a threshold, ``equivalence``
within +-margin) is decided on the CI with open ends as -inf / +inf: above
is supported when lo > t, not supported when hi <= t; below is supported
when hi < t, not supported when lo >= t; equivalence is supported when
-m < lo and hi < m, not supported when lo >= m or hi <= -m. The depth gate
asks for max(rule ``min_depths``, what the statistic needs, 1) usable depths
(resolved or bounded), so a rule with 0 usable depths never passes.

References:
    Conover, Practical Nonparametric Statistics (3rd ed., 1999), secs. 3.2
    and 3.4 (quantile CI, sign test); Manski & Tamer, "Inference on
    regressions with interval data on a regressor or outcome",
    Econometrica 70 (2002) (identified sets of a linear functional of
    interval outcomes).
"""

from __future__ import annotations

import math

import numpy as np

from ntkgap.verdicts.intervals import (
    INF,
    by_seed,
    convexity_weights,
    depths_needed,
    interval_kind,
    log_interval,
    mean_weights,
    median_ci,
    ratio_interval,
    seed_range,
    sign_test_p,
    slope_weights,
)
from ntkgap.verdicts.rules import (
    INCONCLUSIVE,
    NOT_SUPPORTED,
    SUPPORTED,
    TOO_FEW_DEPTHS,
    rule_verdict,
)

LN10 = math.log(10.0)


# --------------------------------------------------------- data and output
def _paired(*sides) -> tuple[list, list]:
    """Depths every side has, and the seeds every side has at all of them."""
    depths = sorted(set.intersection(*(set(s) for s in sides)))
    if not depths:
        return [], []
    seeds = set.intersection(*(set(by_seed(s[L])) for s in sides for L in depths))
    return depths, sorted(seeds)


def _depth_kind(ivs) -> str:
    """resolved / bounded / unknown: what the median seed says at one depth."""
    kind = interval_kind(median_ci(ivs, min_seeds=len(ivs) + 1)["median"])
    # a finite median interval is a resolved depth known to its search brackets
    if kind == "unknown":
        return "unknown"
    return "resolved" if kind in ("resolved", "interval") else "bounded"


def _num(v):
    """A float for JSON, None for an open (infinite) end or no value."""
    return None if v is None or not math.isfinite(v) else float(v)


def _fmt(v) -> str:
    return "open" if v is None else f"{v:.3g}"


def _key_text(key) -> str:
    """A depth L as ``L=3``; any other key (a cell label) as itself."""
    return f"L={key}" if isinstance(key, int) else str(key)


def _tr(transform, v):
    """``transform`` of a log-scale value, keeping open ends open."""
    return v if not math.isfinite(v) else transform(v)


def _seed_counts(rule, sets, transform) -> dict:
    """How many seeds' whole sets lie on each side of the rule."""
    verdicts = [rule_verdict(rule, transform(lo), transform(hi)) for lo, hi in sets]
    return {
        SUPPORTED: verdicts.count(SUPPORTED),
        NOT_SUPPORTED: verdicts.count(NOT_SUPPORTED),
        "undecided": verdicts.count(INCONCLUSIVE),
    }


def _gated_verdict(rule, usable, need, lo, hi, transform):
    """The depth gate, then the rule on the CI (None without a rule)."""
    if rule is None:
        return None
    if usable < need:
        return TOO_FEW_DEPTHS
    if lo is None:
        return INCONCLUSIVE
    return rule_verdict(rule, transform(lo), transform(hi))


def _report(name, rule, ci, kinds, need, sets, transform) -> dict:
    """The common output of a growth statistic (see ``nstar_ratio_growth``)."""
    usable = sum(k != "unknown" for k in kinds.values())
    resolved = sum(k == "resolved" for k in kinds.values())
    med = ci["median"] if ci else (-INF, INF)
    point = med[0] == med[1] and math.isfinite(med[0])
    finite = math.isfinite(med[0]) and math.isfinite(med[1])
    lo, hi = (ci["lo"], ci["hi"]) if ci else (None, None)

    def t(v):
        return None if v is None or not math.isfinite(v) else float(transform(v))

    out = {
        "statistic": name,
        # the median's interval midpoint where it is finite (brackets), else None
        "value": t(0.5 * (med[0] + med[1])) if finite else None,
        "lo": t(lo),
        "hi": t(hi),
        "lo_censored": lo == -INF,
        "hi_censored": hi == INF,
        "bound_lo": t(med[0]),
        "bound_hi": t(med[1]),
        "seeds": ci["seeds"] if ci else 0,
        "ci_method": ci["method"] if ci else None,
        "coverage": ci["coverage"] if ci else None,
        "verdict": _gated_verdict(rule, usable, need, lo, hi, transform),
        "depths_resolved": resolved,
        "depths_bounded": usable - resolved,
        "depths_needed": need,
        "depths": kinds,
        "per_seed": [[t(a), t(b)] for a, b in sets],
    }
    if rule is not None:
        out["seeds_decided"] = _seed_counts(rule, sets, transform)
        tsets = [(_tr(transform, lo), _tr(transform, hi)) for lo, hi in sets]
        out["p_value"] = sign_test_p(rule, tsets) if usable >= need else None
    span = f"in [{_fmt(out['bound_lo'])}, {_fmt(out['bound_hi'])}]"
    out["detail"] = (
        f"{name}: median "
        + (_fmt(out["value"]) if point else span)
        + f", CI [{_fmt(out['lo'])}, {_fmt(out['hi'])}] over {out['seeds']} seeds"
        + (f" ({ci['reason']})" if ci and ci["reason"] else "")
        + "; depths: "
        + ", ".join(f"{_key_text(L)} {k}" for L, k in kinds.items())
        + f" ({usable} usable of {need} needed)"
    )
    return out


def _growth(name, per_depth, x_of, weights_of, inherent, rule, transform, level) -> dict:
    """Per-seed interval sets of a linear statistic of per-depth log values,
    their median and CI, the depth gate and the verdict.

    Args:
        name: the statistic's name, for the detail.
        per_depth: {L: {seed: (lo, hi)}}, the same seeds at every depth.
        x_of: {L: abscissa} (L itself, or log constituents / complexity).
        weights_of: abscissae -> the statistic's weights.
        inherent: the fewest depths the statistic is defined on.
        rule: the rule in the reported scale, or None (reported, no verdict).
        transform: log scale -> reported scale (``math.exp`` or identity).
        level: the CI's least coverage.

    Returns:
        the ``_report`` dict.
    """
    depths = sorted(per_depth)
    seeds = sorted(set.intersection(*(set(per_depth[L]) for L in depths))) if depths else []
    need = depths_needed(rule, inherent)
    if not seeds:
        return _report(name, rule, None, {L: "unknown" for L in depths}, need, [], transform)
    kinds = {L: _depth_kind([per_depth[L][s] for s in seeds]) for L in depths}
    xs = [x_of[L] for L in depths]
    sets = [seed_range(xs, [per_depth[L][s] for L in depths], weights_of, inherent) for s in seeds]
    ci = median_ci(sets, level=level)
    return _report(name, rule, ci, kinds, need, sets, transform)


# ------------------------------------------------------------- statistics
def nstar_ratio_growth(a: dict, b: dict, rule: dict | None = None, *, level=0.95) -> dict:
    """Per-level growth factor of n*_A / n*_B, per seed with intervals.

    Per seed, the least-squares slope over L of log(n*_A / n*_B) ranges over
    the set consistent with its per-depth ratio intervals (``linear_range``);
    the reported factor is exp(slope) (the ratio's growth per level). The
    median and CI over seeds come from ``median_ci``. Needs >= 2 depths.

    Args:
        a: predictor A, {L: per-seed n*} (a dict {seed: item}, a search
            record's ``per_seed`` list, or a list; items as ``log_interval``).
        b: predictor B, same form; seeds are paired (those present at every
            common depth on both sides).
        rule: the claim's rule on the factor (e.g. above 1.5, min_depths 3);
            None: no verdict.
        level: the CI's least coverage.

    Returns:
        dict with ``statistic``, ``value`` (the median seed's factor; None
        when the median is not a point), ``lo``/``hi`` (CI; None when open
        or absent), ``lo_censored``/``hi_censored``, ``bound_lo``/``bound_hi``
        (the median's interval), ``seeds``, ``ci_method``, ``coverage``,
        ``verdict`` (None without a rule), ``depths_resolved``,
        ``depths_bounded``, ``depths_needed``, ``depths`` ({L: kind}),
        ``per_seed`` ([lo, hi] factor sets), ``seeds_decided`` and ``detail``.
    """
    depths, seeds = _paired(a, b)
    per_depth = {
        L: {s: ratio_interval(by_seed(a[L])[s], by_seed(b[L])[s]) for s in seeds} for L in depths
    }
    return _growth(
        "per-level growth factor of n*(A)/n*(B)",
        per_depth,
        {L: float(L) for L in depths},
        slope_weights,
        2,
        rule,
        math.exp,
        level,
    )


def kernel_convexity(kernel: dict, rule: dict | None = None, *, level=0.95) -> dict:
    """The kernel half: does the per-level factor of n* grow with depth?

    Per seed, the change per level of log(per-level factor) (the slope of
    consecutive log factors on their midpoints, ``convexity_weights``: the
    second difference of log n* for three depths) over its interval set;
    the reported value is exp of it: the factor by which the per-level
    factor is multiplied per level (> 1: log n* convex in L, faster than any
    fixed power of a balanced tree's constituents; <= 1: not). A test on
    consecutive factors, not a model choice. Needs >= 3 depths.

    Args:
        kernel: the own-architecture NTK's {L: per-seed n*} (forms as
            ``nstar_ratio_growth``).
        rule: the rule on the factor-of-factors (e.g. above 1.0,
            min_depths 3); None: no verdict.
        level: the CI's least coverage.

    Returns:
        the same fields as ``nstar_ratio_growth``.

    References:
        arXiv 2607.06382 (kernel n* governed by Fourier complexity,
        super-polynomial in the number of constituents).
    """
    depths = sorted(kernel)
    per_depth = {L: {s: log_interval(v) for s, v in by_seed(kernel[L]).items()} for L in depths}
    return _growth(
        "change per level of the kernel's per-level n* factor",
        per_depth,
        {L: float(L) for L in depths},
        convexity_weights,
        3,
        rule,
        math.exp,
        level,
    )


def net_power(net: dict, constituents: dict, rule: dict | None = None, *, level=0.95) -> dict:
    """The net half: the exponent p of n* ~ C^p in the number of constituents C.

    Per seed, the least-squares slope of log n* on log C over its interval
    set; median and CI over seeds. Needs >= 2 depths.

    Args:
        net: the trained net's {L: per-seed n*} (forms as
            ``nstar_ratio_growth``).
        constituents: {L: C}, from ``ntkgap.targets.constituents.of_target``.
        rule: the rule on p (e.g. below the config's pre-registered
            threshold); None: no verdict.
        level: the CI's least coverage.

    Returns:
        the same fields as ``nstar_ratio_growth``, the value being p.

    References:
        arXiv 2607.06382 (network n* governed by architectural complexity,
        polynomial in the number of constituents).
    """
    depths = sorted(set(net) & set(constituents))
    per_depth = {L: {s: log_interval(v) for s, v in by_seed(net[L]).items()} for L in depths}
    return _growth(
        "exponent of n* in the number of constituents",
        per_depth,
        {L: math.log(constituents[L]) for L in depths},
        slope_weights,
        2,
        rule,
        float,
        level,
    )


def pstar_scaling(pstar: dict, x: dict, exponent: float, rule: dict | None = None, *,
                  level=0.95) -> dict:  # fmt: skip
    """The exponent of a published law P* ~ x^exponent across cells, minus
    the law's exponent (0 is the law).

    Per seed, the least-squares slope of log P* on log x over the set its
    per-cell intervals allow (a censored P* is a bound); median and CI over
    seeds of these sets; the depth gate counts usable cells. Needs >= 2 cells.

    Args:
        pstar: {cell label: per-seed P*} (forms as ``nstar_ratio_growth``).
        x: {cell label: the law's abscissa} (e.g. m^L of a hierarchy model).
        exponent: the law's exponent.
        rule: the rule on slope - exponent (e.g. equivalence within a
            margin, min_depths 3); None: no verdict.
        level: the CI's least coverage.

    Returns:
        the same fields as ``nstar_ratio_growth``, the value being the
        slope minus ``exponent``.

    References:
        Cagnetta, Petrini, Tomasini, Favero & Wyart, Phys. Rev. X 14,
        031001 (2024) (P* ~ n_c m^L for the trained CNN).
    """
    keys = sorted(set(pstar) & set(x))
    t = {k: math.log(x[k]) for k in keys}
    return law_slope(pstar, t, exponent, f"exponent of P* in x, minus {exponent:g}", rule,
                     level=level)  # fmt: skip


def law_slope(nstar: dict, t: dict, expected: float, name: str, rule: dict | None = None, *,
              level=0.95) -> dict:  # fmt: skip
    """The slope of log n* against an abscissa t across cells, minus a law's
    ``expected`` slope (0 is the law).

    Per seed, the least-squares slope of log n* on t over the set its
    per-cell intervals allow (a censored n* is a bound); median and CI over
    seeds of these sets; the depth gate counts usable cells. Needs >= 2 cells.

    Args:
        nstar: {cell: per-seed n*} (forms as ``nstar_ratio_growth``).
        t: {cell: abscissa} (the depth L for n* ~ c g^L, log x for n* ~ c x^k).
        expected: the law's slope (log g, or k).
        name: the statistic's name, for the detail.
        rule: the rule on slope - expected; None: no verdict.
        level: the CI's least coverage.

    Returns:
        the same fields as ``nstar_ratio_growth``.
    """
    keys = sorted(set(nstar) & set(t))
    per_depth = {k: {s: log_interval(v) for s, v in by_seed(nstar[k]).items()} for k in keys}
    return _growth(name, per_depth, {k: t[k] for k in keys}, slope_weights, 2, rule,
                   lambda v: v - expected, level)  # fmt: skip


def pstar_ratio(a: dict, b: dict, expected: float, rule: dict | None = None, *,
                level=0.95) -> dict:  # fmt: skip
    """log2 of P*(A) / P*(B) averaged over cells, minus the law's ``expected``.

    Per seed, the mean over the cells of the log2 ratio ranges over the set
    its per-cell ratio intervals allow (``ratio_interval``: a side censored
    makes the cell's ratio a bound; both censored alike drop the cell for
    that seed); median and CI over seeds. Needs >= 1 cell.

    Args:
        a: predictor A, {cell label: per-seed P*}.
        b: predictor B, same labels; seeds paired per cell.
        expected: the law's log2 ratio (1 for P* linear in n_c, n_c 4 over 2).
        rule: the rule on the mean log2 ratio minus ``expected``; None: no verdict.
        level: the CI's least coverage.

    Returns:
        the same fields as ``nstar_ratio_growth``.

    References:
        Cagnetta et al., Phys. Rev. X 14, 031001 (2024) (P* ~ n_c m^L).
    """
    depths, seeds = _paired(a, b)
    per_depth = {
        L: {s: ratio_interval(by_seed(a[L])[s], by_seed(b[L])[s]) for s in seeds} for L in depths
    }
    return _growth(
        f"mean log2 P*(A)/P*(B), minus {expected:g}",
        per_depth,
        {L: 0.0 for L in depths},
        mean_weights,
        1,
        rule,
        lambda v: v / math.log(2.0) - expected,
        level,
    )


def fourier_fit(kernel: dict, complexity: dict, *, level=0.95) -> dict:
    """Kernel n* against the target's Fourier complexity: reported, no verdict.

    The fit log n* = log c + k log F over depths, F the given per-depth
    Fourier complexity (e.g. the Walsh degree profile's average degree, or
    q^L): per seed the slope k over its interval set, median and CI over
    seeds; and, where every depth's median seed is resolved, the
    least-squares fit of the median n* (k, c and R^2, descriptive).

    Args:
        kernel: the kernel's {L: per-seed n*} (forms as ``nstar_ratio_growth``).
        complexity: {L: F > 0}.
        level: the CI's least coverage.

    Returns:
        the fields of ``nstar_ratio_growth`` (``verdict`` None; the value is
        k), and ``fit_of_medians``: {"k", "c", "r2"} or None.

    References:
        arXiv 2607.06382 (kernel sample complexity set by Fourier complexity).
    """
    depths = sorted(set(kernel) & set(complexity))
    per_depth = {L: {s: log_interval(v) for s, v in by_seed(kernel[L]).items()} for L in depths}
    out = _growth(
        "exponent of kernel n* in the Fourier complexity",
        per_depth,
        {L: math.log(complexity[L]) for L in depths},
        slope_weights,
        2,
        None,
        float,
        level,
    )
    meds = [median_ci(list(per_depth[L].values()), min_seeds=INF)["median"] for L in depths]
    out["fit_of_medians"] = None
    if len(depths) >= 2 and all(a == b and math.isfinite(a) for a, b in meds):
        x = np.log([complexity[L] for L in depths])
        y = np.array([a for a, _ in meds])
        k, c = np.polyfit(x, y, 1)
        resid = y - (k * x + c)
        ss = float(np.sum((y - y.mean()) ** 2))
        r2 = 1.0 - float(resid @ resid) / ss if ss > 0 else 1.0
        out["fit_of_medians"] = {"k": float(k), "c": float(math.exp(c)), "r2": r2}
    return out


def _envelope(kind: str, rows: list[dict]) -> dict:
    """One value and CI for "the claim holds at every depth": the worst
    depth's value, and the CI ends that make ``rule_verdict`` give the
    all-depths verdict (-inf / inf for open ends; None: some depth has no CI)."""
    if not rows:
        return {"value": None, "lo": None, "hi": None}
    vals = [r["value"] for r in rows]
    los, his = [r["_lo"] for r in rows], [r["_hi"] for r in rows]
    if kind == "above":
        value = None if None in vals else min(vals)
        lo, hi = min(los, default=None), min(his, default=None)
    elif kind == "below":
        value = None if None in vals else max(vals)
        lo, hi = max(los, default=None), max(his, default=None)
    else:
        value = None if None in vals else max(vals, key=abs)
        lo, hi = min(los, default=None), max(his, default=None)
    if any(x is None for x in los + his):
        lo = hi = None
    return {"value": value, "lo": lo, "hi": hi}


def _ratio_row(L, sa: dict, sb: dict, rule: dict, level) -> dict:
    """One depth of ``nstar_ratio``: the median log10 ratio, its CI and kind."""
    seeds = sorted(set(sa) & set(sb))
    if not seeds:
        return {
            "L": L,
            "kind": "unknown",
            "verdict": INCONCLUSIVE,
            "seeds": 0,
            "value": None,
            "_lo": None,
            "_hi": None,
            "method": None,
        }
    sets = [ratio_interval(sa[s], sb[s]) for s in seeds]
    ci = median_ci(sets, level=level)
    med = tuple(v / LN10 for v in ci["median"])
    lo = None if ci["lo"] is None else ci["lo"] / LN10
    hi = None if ci["hi"] is None else ci["hi"] / LN10
    verdict = rule_verdict(rule, lo, hi)
    kind = interval_kind(med)
    if kind not in ("unknown", "resolved"):
        kind = "bounded" if verdict != INCONCLUSIVE else "undecided bound"
    return {
        "L": L,
        "kind": kind,
        "verdict": verdict,
        "seeds": len(seeds),
        "value": med[0] if kind == "resolved" else None,
        "bound_lo": _num(med[0]),
        "bound_hi": _num(med[1]),
        "lo": _num(lo),
        "hi": _num(hi),
        "lo_censored": lo == -INF,
        "hi_censored": hi == INF,
        "_lo": lo,
        "_hi": hi,
        "_p": sign_test_p(rule, [(a / LN10, b / LN10) for a, b in sets]),
        "method": ci["method"],
        "reason": ci["reason"],
    }


def _row_text(r: dict) -> str:
    """One depth of ``nstar_ratio`` in words."""
    if r["value"] is not None:
        med = f"{r['value']:.2f}"
    else:
        med = f"median in [{_fmt(r.get('bound_lo'))}, {_fmt(r.get('bound_hi'))}]"
    ci = f"CI [{_fmt(r.get('lo'))}, {_fmt(r.get('hi'))}]"
    if r.get("reason"):
        ci += f" ({r['reason']})"
    return f"L={r['L']}: {r['kind']}, {med}, {ci} -> {r['verdict']}"


def nstar_ratio(a: dict, b: dict, rule: dict, *, level=0.95) -> dict:
    """log10 of n*_A / n*_B at every depth, with censoring as bounds.

    Per depth, each paired seed's ratio is an interval (``ratio_interval``);
    the median over seeds and its CI come from ``median_ci`` (in log10). A
    depth is ``resolved`` when its median is a point, ``bounded`` when it is
    not but its CI already places it on one side of the rule, ``undecided
    bound`` otherwise, ``unknown`` when the median is (-inf, inf) (both
    sides censored alike): unknown depths are left out, like depths not
    searched. The claim is "at every depth": one usable depth decided
    against it makes it not supported whatever the depth count; otherwise
    fewer usable (resolved + bounded) depths than the gate asks give "too
    few depths", every other depth supported gives supported, and anything
    else inconclusive. Value and CI: the envelope over the depths (the
    worst depth's value; the CI ends that give the all-depths verdict).

    Args:
        a: predictor A, {L: per-seed n*} (forms as ``nstar_ratio_growth``;
            the keys may be any sortable labels, e.g. target specs).
        b: predictor B, same form; seeds paired per depth.
        rule: the rule on the log10 ratio (e.g. above 0, min_depths 3).
        level: the CI's least coverage.

    Returns:
        dict with ``statistic``, ``value``, ``lo``, ``hi`` (None when open
        or absent), ``lo_censored``/``hi_censored``, ``seeds`` (fewest over
        depths), ``ci_method``, ``verdict``, ``depths_resolved``,
        ``depths_bounded``, ``depths_needed``, ``rows`` (per depth: ``L``,
        ``kind``, ``verdict``, ``seeds``, ``value``, ``bound_lo``,
        ``bound_hi``, ``lo``, ``hi``, ``lo_censored``, ``hi_censored``,
        ``method``, ``reason``) and ``detail``.
    """
    depths = sorted(set(a) & set(b))
    rows = [_ratio_row(L, by_seed(a[L]), by_seed(b[L]), rule, level) for L in depths]
    known = [r for r in rows if r["kind"] != "unknown"]
    resolved = sum(r["kind"] == "resolved" for r in rows)
    bounded = sum(r["kind"] == "bounded" for r in rows)
    need = depths_needed(rule, 1)
    usable = resolved + bounded
    if any(r["verdict"] == NOT_SUPPORTED for r in known):
        verdict = NOT_SUPPORTED
    elif resolved + bounded < need:
        verdict = TOO_FEW_DEPTHS
    elif all(r["verdict"] == SUPPORTED for r in known):
        verdict = SUPPORTED
    else:
        verdict = INCONCLUSIVE
    env = _envelope(rule["kind"], known)
    method = next((r["method"] for r in known if r["method"]), None)
    detail = "log10 n*(A)/n*(B) by depth: " + "; ".join(_row_text(r) for r in rows)
    return {
        "statistic": "log10 n*(A)/n*(B) at every depth",
        "value": env["value"],
        "lo": _num(env["lo"]),
        "hi": _num(env["hi"]),
        "lo_censored": env["lo"] == -INF,
        "hi_censored": env["hi"] == INF,
        "seeds": min((r["seeds"] for r in known), default=0),
        "ci_method": None if method is None else method + "; envelope over the depths",
        "verdict": verdict,
        "depths_resolved": resolved,
        "depths_bounded": bounded,
        "depths_needed": need,
        # "at every depth": the intersection-union test's p is the largest depth's
        "p_value": max((r["_p"] for r in known), default=None) if usable >= need else None,
        "rows": [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows],
        "detail": detail + f" ({resolved + bounded} usable of {need} needed)",
    }
