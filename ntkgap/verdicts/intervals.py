"""Censoring as information: sample complexities as intervals, and the
statistics of the dichotomy's claims computed by interval arithmetic.

A search that never reaches the error level below its largest n (n_max)
does not lose its seed: n* lies in (n_max, inf). One that passes already
at its smallest n (n_min) has n* in (0, n_min]. Every per-seed n* is such
an interval (a point when resolved), read by ``scaling.seed_interval``,
and every statistic below works on log n*, where the intervals are
[log lo, log hi] with -inf / +inf for the open ends.

Per depth, the ratio A / B of two predictors of the same seed is the
interval [lo_A / hi_B, hi_A / lo_B]: A censored above with B resolved gives
a lower bound, B censored above with A resolved an upper bound, both
censored above (or both below) leaves it unknown (-inf, inf).

Growth statistics are linear functionals of a seed's per-depth log values
(a least-squares slope, a slope of consecutive slopes). Over the box of a
seed's per-depth intervals a linear functional sum_L w_L y_L ranges exactly
over [sum w_L (lo_L if w_L > 0 else hi_L), sum w_L (hi_L if w_L > 0 else
lo_L)]: that is the set of values consistent with the seed's data. A depth
whose interval is (-inf, inf) carries no information and is left out of
that seed's fit; a seed with too few informative depths is (-inf, inf). A
seed is decided when its whole set lies on one side of the rule.

Median and CI over seeds of interval data: the median lies between the
median of the lower ends and that of the upper ends (order statistics are
monotone in every value); it is a point only when the two agree. The CI is
the distribution-free order-statistic interval [X_(j), X_(m+1-j)] of the
median (``scaling.order_statistic_ci``: the largest j whose exact coverage
P(j <= B <= m - j), B ~ Binomial(m, 1/2), is >= the level; for 12 seeds at
0.95 that is [X_(3), X_(10)], coverage 0.9614; for 8 seeds [X_(1), X_(8)],
0.9922), with its lower end taken from the sorted lower ends and its upper
end from the sorted upper ends. If each seed's true value t_i lies in its
interval, lo_(j) <= t_(j) and hi_(m+1-j) >= t_(m+1-j), so the interval
contains the exact CI of the t_i and covers the median of their
distribution with probability >= the stated coverage (for continuous
distributions); censoring only widens it. Fewer than
``scaling.MIN_SEEDS_FOR_CI`` seeds give no CI (inconclusive).

Verdicts: a rule (``above`` / ``below`` a threshold, ``equivalence``
within +-margin) is decided on the CI with open ends as -inf / +inf: above
is supported when lo > t, not supported when hi <= t; below is supported
when hi < t, not supported when lo >= t; equivalence is supported when
-m < lo and hi < m, not supported when lo >= m or hi <= -m. The depth gate
asks for max(rule ``min_depths``, what the statistic needs, 1) usable depths
(resolved or bounded), so a rule with 0 usable depths never passes.

References:
    Conover, Practical Nonparametric Statistics (3rd ed., 1999), sec. 3.2
    (confidence interval for a quantile); Manski & Tamer, "Inference on
    regressions with interval data on a regressor or outcome",
    Econometrica 70 (2002) (identified sets of a linear functional of
    interval outcomes).
"""

from __future__ import annotations

import math

import numpy as np

from ntkgap.runs import scaling
from ntkgap.verdicts.rules import (
    INCONCLUSIVE,
    NOT_SUPPORTED,
    SUPPORTED,
    TOO_FEW_DEPTHS,
    rule_verdict,
)

INF = math.inf
LN10 = math.log(10.0)
# a weight this small against the largest is a rounding zero (middle depths)
_ZERO_WEIGHT = 1e-12


# ------------------------------------------------------------ intervals
def log_interval(item) -> tuple[float, float]:
    """The interval of log n* of one seed.

    Args:
        item: anything ``scaling.seed_interval`` reads: a number (``inf``:
            right-censored with no bound), a (low, high) pair, a
            ``search.seed_result`` dict (status resolved / left / right) or
            an ``n_star`` dict.

    Returns:
        (lo, hi) of log n*: a point when resolved, (log n_max, inf) when
        censored above, (-inf, log n_min] when censored below.
    """
    lo, hi = scaling.seed_interval(item)
    return (math.log(lo) if lo > 0 else -INF, math.log(hi) if hi < INF else INF)


def ratio_interval(a, b) -> tuple[float, float]:
    """The interval of log(n*_A / n*_B) of one seed at one depth.

    Args:
        a: predictor A's per-seed n* (any form ``log_interval`` reads).
        b: predictor B's per-seed n*, same seed.

    Returns:
        (lo, hi) of the natural-log ratio: (-inf, inf) when both are
        censored on the same side, half-open when one is censored.
    """
    (alo, ahi), (blo, bhi) = log_interval(a), log_interval(b)
    lo = -INF if alo == -INF or bhi == INF else alo - bhi
    hi = INF if ahi == INF or blo == -INF else ahi - blo
    return lo, hi


def interval_kind(iv) -> str:
    """What an interval says about its quantity.

    Args:
        iv: (lo, hi) with -inf / inf for open ends.

    Returns:
        ``"resolved"`` (a finite point), ``"lower bound"`` ([lo, inf)),
        ``"upper bound"`` ((-inf, hi]), ``"interval"`` (finite, lo < hi) or
        ``"unknown"`` ((-inf, inf)).
    """
    lo, hi = iv
    if lo == -INF and hi == INF:
        return "unknown"
    if hi == INF:
        return "lower bound"
    if lo == -INF:
        return "upper bound"
    return "resolved" if lo == hi else "interval"


def linear_range(weights, intervals) -> tuple[float, float]:
    """The exact range of sum_i w_i y_i over the box y_i in [lo_i, hi_i].

    Args:
        weights: the coefficients w_i (a rounding zero, below 1e-12 of the
            largest |w|, counts as 0, so a middle depth's open end is inert).
        intervals: (lo_i, hi_i) per term, -inf / inf for open ends.

    Returns:
        (low, high): each end is attained at a corner of the box (lo_i where
        w_i > 0 for the low end, hi_i there for the high end).

    References:
        Manski & Tamer, Econometrica 70 (2002) (linear functionals of
        interval data).
    """
    w = np.asarray(weights, float)
    tiny = _ZERO_WEIGHT * (float(np.max(np.abs(w))) if w.size else 0.0)
    low = high = 0.0
    for wi, (a, b) in zip(w, intervals):
        if abs(wi) <= tiny:
            continue
        low += wi * (a if wi > 0 else b)
        high += wi * (b if wi > 0 else a)
    return float(low), float(high)


def slope_weights(x) -> np.ndarray:
    """Least-squares slope of y on x as a linear functional of y.

    Args:
        x: the abscissae (>= 2 distinct values).

    Returns:
        w with slope = sum_i w_i y_i: (x_i - mean x) / sum_j (x_j - mean x)^2.

    References:
        Any regression text, e.g. Draper & Smith, Applied Regression
        Analysis (3rd ed., 1998), sec. 1.2.
    """
    x = np.asarray(x, float)
    c = x - x.mean()
    ss = float(c @ c)
    if not ss > 0:
        raise ValueError("slope_weights: give at least two distinct abscissae")
    return c / ss


def convexity_weights(depths) -> np.ndarray:
    """The change per level of the per-level log growth factor, as a
    linear functional of log n* at the depths.

    The per-level log factor between consecutive depths L_i < L_{i+1} is
    f_i = (y_{i+1} - y_i) / (L_{i+1} - L_i), placed at the midpoint; the
    statistic is the least-squares slope of f_i on the midpoints (for three
    equally spaced depths: (y_3 - 2 y_2 + y_1) / h^2, the second difference).
    It is > 0 when log n* is convex in L (the per-level factor grows) and
    < 0 when n* is a fixed power of a balanced tree's constituents
    (log n* = p log((a^L - 1) / (a - 1)): factors fall towards a^p).

    Args:
        depths: the depths, increasing, >= 3 of them.

    Returns:
        w with the statistic = sum_i w_i y_i.
    """
    L = np.asarray(depths, float)
    if L.size < 3 or np.any(np.diff(L) <= 0):
        raise ValueError("convexity_weights: give >= 3 increasing depths")
    g = np.diff(L)
    D = np.zeros((L.size - 1, L.size))
    idx = np.arange(L.size - 1)
    D[idx, idx], D[idx, idx + 1] = -1.0 / g, 1.0 / g
    return slope_weights(0.5 * (L[:-1] + L[1:])) @ D


def seed_range(x, intervals, weights_of, min_points: int) -> tuple[float, float]:
    """The set of values of a linear statistic consistent with one seed.

    Args:
        x: the abscissa of each depth (depth L, or log constituents).
        intervals: the seed's (lo, hi) per depth, aligned with ``x``.
        weights_of: x -> the statistic's weights (``slope_weights``,
            ``convexity_weights``).
        min_points: the fewest informative depths the statistic needs.

    Returns:
        (lo, hi): ``linear_range`` over the depths whose interval is not
        (-inf, inf); (-inf, inf) when fewer than ``min_points`` remain.
    """
    keep = [i for i, iv in enumerate(intervals) if interval_kind(iv) != "unknown"]
    if len(keep) < min_points:
        return -INF, INF
    w = weights_of(np.asarray(x, float)[keep])
    return linear_range(w, [intervals[i] for i in keep])


def _middle(sorted_vals) -> float:
    """The median of sorted values (mean of the middle pair for an even count)."""
    m = len(sorted_vals)
    if m % 2:
        return float(sorted_vals[m // 2])
    a, b = float(sorted_vals[m // 2 - 1]), float(sorted_vals[m // 2])
    return a if a == b else 0.5 * (a + b)


def median_ci(intervals, *, level: float = 0.95, min_seeds: int = scaling.MIN_SEEDS_FOR_CI) -> dict:
    """Median over seeds of interval data, with the order-statistic CI.

    Args:
        intervals: one (lo, hi) per seed on the real line, lo <= hi, -inf /
            inf for open ends.
        level: the least coverage asked of the CI.
        min_seeds: below this many seeds no CI is given.

    Returns:
        dict with ``median`` ((lo, hi): the median of the lower ends and of
        the upper ends; a point when they agree), ``lo``/``hi`` (the CI ends,
        -inf / inf when open; None when no CI), ``j`` (1-based order
        statistic), ``coverage`` (exact for continuous distributions),
        ``seeds``, ``method`` and ``reason`` (why no CI, else None).

    References:
        Conover, Practical Nonparametric Statistics (3rd ed., 1999), sec. 3.2.
    """
    iv = np.asarray(intervals, float).reshape(-1, 2)
    m = len(iv)
    if m == 0:
        raise ValueError("median_ci: no seeds")
    if np.any(iv[:, 0] > iv[:, 1]) or np.any(iv[:, 0] == INF) or np.any(iv[:, 1] == -INF):
        raise ValueError("median_ci: every interval needs lo <= hi, lo < inf, hi > -inf")
    lows, highs = np.sort(iv[:, 0]), np.sort(iv[:, 1])
    out = {
        "median": (_middle(lows), _middle(highs)),
        "lo": None,
        "hi": None,
        "j": None,
        "coverage": None,
        "seeds": m,
        "method": None,
        "reason": None,
    }
    j, cov = scaling.order_statistic_ci(m, level) if m >= min_seeds else (None, None)
    if m < min_seeds:
        out["reason"] = f"{m} seeds, no CI (a CI needs >= {min_seeds} seeds)"
    elif j is None:
        out["reason"] = f"{m} seeds, no CI: even [min, max] covers with {cov:.4f} < {level}"
    else:
        out.update(
            lo=float(lows[j - 1]),
            hi=float(highs[m - j]),
            j=j,
            coverage=cov,
            method=(
                f"distribution-free order-statistic interval [X_({j}), X_({m + 1 - j})] of "
                f"{m} seeds' intervals (lower end from the sorted lower ends, upper end from "
                f"the sorted upper ends), coverage >= {cov:.4f} (exact Binomial({m}, 1/2) "
                "coverage for resolved seeds; censoring only widens it)"
            ),
        )
    return out


def sign_test_p(rule: dict | None, sets) -> float | None:
    """One-sided p-value of "supported" by the sign test on interval data.

    A seed counts for the claim only when its whole set lies on the claimed
    side; under the null (the median on the other side, or on the
    threshold) each seed's true value lies on the claimed side with
    probability <= 1/2, so the count is stochastically below Binomial(m, 1/2)
    and P(B >= count) is a valid p-value. Equivalence: the larger of the two
    one-sided p-values (intersection-union test).

    Args:
        rule: the rule (``above`` / ``below`` / ``equivalence``); None: no p.
        sets: per seed (lo, hi) in the rule's scale, -inf / inf when open.

    Returns:
        float in (0, 1], or None without a rule or seeds.

    References:
        Conover, Practical Nonparametric Statistics (3rd ed., 1999), sec. 3.4
        (the sign test); Berger & Hsu, Statistical Science 11 (1996) 283
        (intersection-union tests).
    """
    m = len(sets)
    if rule is None or m == 0:
        return None

    def tail(k):
        return sum(math.comb(m, i) for i in range(k, m + 1)) / 2.0**m

    kind = rule["kind"]
    if kind == "above":
        return tail(sum(lo > rule["threshold"] for lo, _ in sets))
    if kind == "below":
        return tail(sum(hi < rule["threshold"] for _, hi in sets))
    mg = rule["margin"]
    return max(tail(sum(lo > -mg for lo, _ in sets)), tail(sum(hi < mg for _, hi in sets)))


def depths_needed(rule: dict | None, inherent: int) -> int:
    """How many usable depths a rule asks for (the depth gate).

    Args:
        rule: the claim's rule (its ``min_depths``, if any); None: no rule.
        inherent: the fewest depths the statistic is defined on.

    Returns:
        int >= 1: max(rule's min_depths, inherent, 1); 0 usable never passes.
    """
    return max(int((rule or {}).get("min_depths") or 0), int(inherent), 1)


# --------------------------------------------------------- data and output
def by_seed(items) -> dict:
    """One predictor's per-seed n* at one depth, keyed by seed.

    Args:
        items: a dict {seed: item} (kept), a list of dicts with a ``seed``
            key (a search record's ``per_seed``), or a plain list (seed =
            position).

    Returns:
        dict {seed: item}.
    """
    if isinstance(items, dict):
        return dict(items)
    items = list(items)
    if items and all(isinstance(x, dict) and "seed" in x for x in items):
        return {x["seed"]: x for x in items}
    return dict(enumerate(items))


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
    return "unknown" if kind == "unknown" else "resolved" if kind == "resolved" else "bounded"


def _num(v):
    """A float for JSON, None for an open (infinite) end or no value."""
    return None if v is None or not math.isfinite(v) else float(v)


def _fmt(v) -> str:
    return "open" if v is None else f"{v:.3g}"


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
    lo, hi = (ci["lo"], ci["hi"]) if ci else (None, None)

    def t(v):
        return None if v is None or not math.isfinite(v) else float(transform(v))

    out = {
        "statistic": name,
        "value": t(med[0]) if point else None,
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
        + ", ".join(f"L={L} {k}" for L, k in kinds.items())
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
