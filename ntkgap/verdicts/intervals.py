"""Censoring as information: sample complexities as intervals, and the
interval building blocks the claim statistics
(``ntkgap.verdicts.interval_statistics``) are computed from.

A search that never reaches the error level below its largest n (n_max)
does not lose its seed: n* lies in (n_max, inf). One that passes already
at its smallest n (n_min) has n* in (0, n_min]. Every per-seed n* is such
an interval (a point when resolved), read by ``scaling.seed_interval``,
and every statistic works on log n*, where the intervals are
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
that seed's fit; a seed with too few informative depths is (-inf, inf).

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

The depth gate asks for max(rule ``min_depths``, what the statistic needs,
1) usable depths (resolved or bounded), so a rule with 0 usable depths
never passes (``depths_needed``).

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

INF = math.inf
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
        (lo, hi) of log n*: the search's final bracket (lo, hi] when a
        resolved seed carries it (n* is only known to that resolution: the
        error is above eps at lo and at most eps at hi), a point when a
        resolved value comes without one, (log n_max, inf) when censored
        above, (-inf, log n_min] when censored below.
    """
    if isinstance(item, dict) and item.get("status") == "resolved":
        if isinstance(item.get("lo"), (int, float)) and isinstance(item.get("hi"), (int, float)):
            return math.log(item["lo"]), math.log(item["hi"])
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


def mean_weights(x) -> np.ndarray:
    """The mean over the points as a linear functional of y.

    Args:
        x: the points (only their number is read).

    Returns:
        w = 1/k for each of the k points.
    """
    return np.full(len(x), 1.0 / len(x))


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
